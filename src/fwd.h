/* fwd.h: forward mode with dual numbers: jvp and forward gradients. */
#ifndef WG_FWD_H
#define WG_FWD_H
#include "value.h"
#include "dual.h"

typedef struct {
    uint32_t next_tag;         /* the latest jvp's tag */
    uint32_t top;              /* the innermost running jvp's tag, 0 if none (dual.h) */
    uint32_t *live;            /* the running jvp calls' tags, ascending */
    int nlive, caplive;
} FwdState;

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
/* Which tags are live, and the primal a dead one leaves: dual.h. */

#endif
