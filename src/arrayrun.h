/* arrayrun.h: whole-array operations recorded as array runs (tape.h's
 * TapeRun; the design is at the top of arrayrun.c). Each returns 0, having
 * recorded nothing, when the operands do not qualify: the caller then goes
 * element by element. */
#ifndef WG_ARRAYRUN_H
#define WG_ARRAYRUN_H
#include "value.h"

/* op (unary or binary) over a and b, na and nb their lengths (-1: a
 * number), n the result's, into a new array *out (every element of a and
 * b is then a number: the caller's checks are not needed). */
int arrayrun_elementwise(int op, Value a, Value b, int na, int nb, int n, Value *out);
/* a op b of two matrices, one or both broadcast (a row or a column)
 * against rows x cols, as one run a row, into a new rows x cols matrix
 * *out. */
int arrayrun_broadcast(int op, Value a, Value b, int rows, int cols, Value *out);
/* a (m x k) @ b (k x n) into r's m * n elements. */
int arrayrun_product(Value a, Value b, int m, int k, int n, Value r);
/* out[r] = x . row r of Y (rows x len, row-major), each sum in order from 0 */
void arrayrun_dot_rows(const double *x, const double *Y, uint32_t rows, uint32_t len, double *out);

#endif
