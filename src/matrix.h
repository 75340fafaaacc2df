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

/* (matrix_lang.c) [[1, 2], [3, 4]]: the literal n whose first item evaluated to first (an
 * array or view, owned). */
Value mat_literal(Node *n, Env *env, Value first);
/* a[i, j] (n->c set) or a[i] (row i, a copy) of a, borrowed. */
Value mat_index(Node *n, Value a, Env *env);
/* The element a write a[i, j] = x lands in (storage order); i, j are the
 * index values (jv nil for a[i], which is an error on a matrix). */
int   mat_store_index(Node *target, Value holder, Value iv, Value jv);
/* a[i][j] = x where a[i] is a row of a matrix: the row is a copy, so
 * this would change nothing; an error that says what to write. */
_Noreturn void mat_row_write_error(Node *target);

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

/* (matrix_lang.c) shape, reshape, eye, transpose, row, col, mean, logsumexp. */
void  matrix_register(void);

/* (builtins.c) The value view(a, ...), row and col view, taken as a place
 * when arg is a variable (home, owner: the variable a write through the
 * view makes a version of; owner -1: none), and the view of its elements
 * start, start + stride, ... (len of them), which takes base. */
Value view_base(Node *arg, Env *env, EnvCell **home, int *owner);
Value view_over(Value base, EnvCell *home, int owner, int start, int len, int stride);

#endif
