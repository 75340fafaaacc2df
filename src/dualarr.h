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

#endif
