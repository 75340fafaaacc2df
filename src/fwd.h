/* fwd.h: forward mode with dual numbers: jvp and forward gradients. */
#ifndef WG_FWD_H
#define WG_FWD_H
#include "value.h"

Value fwd_jvp_builtin(int argc, Value *argv);   /* jvp(f, x, v) */
Value fwd_fwdgrad(int argc, Value *argv);       /* fwdgrad(f, x) */
Value fwd_jvp(Value f, Value x, Value v);
/* A function that takes d or reads x@k, called on duals, runs on numbers
 * perturbed on the tape (see fwd.c). */
int   fwd_needs_tape(int argc, const Value *argv);
Value fwd_call_on_tape(Value f, int argc, Value *argv);   /* f'(x)·v by dual numbers */
/* The newest tag handed out: a dual of a higher tag than this value had
 * before a call belongs to a jvp that began in the call; once the call
 * has returned, so has that jvp (checkpointed loops drop such tangents). */
uint32_t fwd_last_tag(void);

/* The tags of the jvp calls running now, ascending (a nested call's tag is
 * higher). A dual of any other tag belongs to a jvp that has returned: it
 * was stored where the call could write (a captured variable, an element,
 * a global, through a view) and outlived it. Its tangent is dead: every
 * reader takes the primal instead (fwd_live_part), so such tangents never
 * pile up level on level in a loop that calls jvp again and again. */
extern uint32_t fwd_top;     /* the innermost running jvp's tag, 0 if none */
int fwd_tag_dead_below(uint32_t tag);
static inline int fwd_tag_dead(uint32_t tag) { return tag != fwd_top && fwd_tag_dead_below(tag); }
/* v without the dead tangents around it (borrowed in, borrowed out). */
static inline Value fwd_live_part(Value v)
{
    while (v.t == V_DUAL && fwd_tag_dead(((Dual *)v.u.o)->tag)) v = ((Dual *)v.u.o)->p;
    return v;
}
/* After an error: the jvp calls beyond the first depth are gone. */
int fwd_depth(void);
void fwd_unwind(int depth);

#endif
