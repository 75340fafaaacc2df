/* matrix.h: matrices, arrays with two dimensions (SPEC "Arrays and
 * views"). A matrix is a V_ARR whose Storage has ndim 2 and its rows x
 * cols elements row by row (value.h: is_mat, shape_like), so whatever
 * works on an array's elements (element writes, versions x@k, views, the
 * tape, checkpointed loops, reclaiming) works on a matrix's unchanged.
 * What the shape adds is here, called from a few hooks in the evaluator,
 * arith.c and the builtins. (Below the evaluator, arith.c reaches only the
 * value-level part: mat_elementwise, which calls back no evaluator.) */
#ifndef WG_MATRIX_H
#define WG_MATRIX_H
#include "value.h"

Value mat_new(int rows, int cols);                 /* zeros */
const char *mat_describe(Value v);                 /* "2x3 matrix", "array of 3", "number", ... */
void  mat_print(Value v, void *file, int brief);   /* nested lists, one row a line */

/* op on a and b where either is a matrix: equal shapes, a number, or a
 * dimension of 1 broadcast along the other's (arith.c's elementwise). */
Value mat_elementwise(int op, Value a, Value b);
/* The right side of `a op= rhs` where a or rhs is a matrix: rhs as the
 * elements to combine with a's, one for each (a flat array, or rhs
 * itself); takes rhs. */
Value mat_compound_rhs(Node *at, int op, Value target, Value rhs);
Value mat_product(Value a, Value b);               /* a @ b */
/* a[lo:hi] of a matrix: its rows lo .. hi - 1, a matrix. */
Value mat_rows(Value a, int lo, int hi);

/* The builtins' matrix forms: zeros(m, n), ones(m, n); sum, max and min
 * along axis argv[1]. */
Value mat_filled(Value *argv, double x, const char *fname);
void  mat_dims(Value *argv, const char *fname, int *rows, int *cols);
Value mat_reduce_axis(int op, Value *argv, const char *fname);

/* Helpers of the builtins: index `what` ("row", "column") of m, checked;
 * argument i as a whole count; mean and logsumexp (with an axis). */
int   mat_index_in(Value idx, int len, Node *at, const char *what, Value m);
int   mat_dim_arg(Value *argv, int i, const char *fname);
Value mat_mean(int argc, Value *argv);
Value mat_logsumexp(int argc, Value *argv);
Value mat_argmin(int argc, Value *argv);     /* argmin(a), argmin(a, axis) */
Value mat_argmax(int argc, Value *argv);

#endif
