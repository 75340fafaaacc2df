/* dualarr.h: whole-array operations on arrays of duals (dualarr.c). */
#ifndef WG_DUALARR_H
#define WG_DUALARR_H
#include "value.h"

/* dot(a, b) of n elements, some of them duals (arith_dot): the same dual
 * as the elementwise products folded by +, recorded as whole dots; 0 if
 * it does not apply (another backend, parts that are not finite numbers). */
int fwd_dot(Value a, Value b, int n, Value *out);
/* a + b, a - b of constants and an array of duals (arith_elementwise_flat,
 * na/nb: the lengths, -1 for a number): the same duals, the primals as one
 * array operation; 0 if it does not apply. */
int fwd_add_sub(int op, Value a, Value b, int na, int nb, int n, Value *out);
/* In posit backends: dot (b nil: sum) of n elements of the arrays or
 * views a, b (some duals, live or not) as the quire makes it, one
 * rounding for the primal and one for each tangent, at every level of
 * nested duals; 0 if it does not apply (another backend, a part that is
 * not a finite number). fwd_quire_dot: the elements a[i * sa], b[i * sb]
 * (b NULL: sum). */
int fwd_quire_seq(Value a, Value b, int n, Value *out);
int fwd_quire_dot(const Value *a, long sa, const Value *b, long sb, int n, Value *out);

#endif
