/* dual.h: arithmetic on dual numbers (forward mode's values). */
#ifndef WG_DUAL_H
#define WG_DUAL_H
#include "value.h"

Value dual_op(int op, Value a, Value b);   /* an op with a dual operand; borrowed in, owned out */
/* sum over i < n of a[i * sa] * b[i * sb] as `acc = a0 * b0; acc = acc +
 * a1 * b1 ...` in duals gives it, bit for bit, in one pass over the
 * unboxed tangents and one result: when every element is a plain number
 * or a plain dual of the innermost jvp (one k), at least one a dual, in
 * float64. 0 if it does not apply. */
int dual_dot(const Value *a, long sa, const Value *b, long sb, int n, Value *out);
/* op over elements i of a and b (arrays or views of na, nb, or numbers:
 * -1) into a new array of n in *out, each what dual_op gives, in one loop:
 * when every element is a plain number or a plain dual of the innermost
 * jvp (one k), at least one a dual. 0 if it does not apply. */
int dual_elementwise(int op, Value a, Value b, int na, int nb, int n, Value *out);

/* Live tags (dual.c, below the evaluator, for dual_op; fwd.c pushes them).
 * The tags of the jvp calls running now, ascending (a nested call's tag is
 * higher). A dual of any other tag belongs to a jvp that has returned: it
 * was stored where the call could write (a captured variable, an element,
 * a global, through a view) and outlived it. Its tangent is dead: every
 * reader takes the primal instead (fwd_live_part), so such tangents never
 * pile up level on level in a loop that calls jvp again and again. */
int dual_tag_dead_below(uint32_t tag);
void dual_live_push(uint32_t tag, int k);   /* a jvp call of k tangents begins (fwd.c) */
int fwd_tag_k(uint32_t tag);        /* a live tag's k (1 for any other) */
int dual_depth(void);                /* jvp calls running */
void dual_unwind(int depth);         /* they returned, or an error left them, down to depth */

#endif

/* Needs the session state (state.h includes this file again). */
#if defined(WG_STATE_DONE) && !defined(WG_DUAL_H_STATE)
#define WG_DUAL_H_STATE
static inline int fwd_tag_dead(uint32_t tag) { return tag != G->fwd.top && dual_tag_dead_below(tag); }
/* v without the dead tangents around it (borrowed in, borrowed out). */
static inline Value fwd_live_part(Value v)
{
    while (v.t == V_DUAL && fwd_tag_dead(((Dual *)v.u.o)->tag)) v = ((Dual *)v.u.o)->p;
    return v;
}
#endif
