/* matrix_lang.h: the language's side of matrices (matrix_lang.c): the
 * evaluator's hooks for matrix literals and a[i, j], and the matrix
 * builtins; the values' side is matrix.h. */
#ifndef WG_MATRIX_LANG_H
#define WG_MATRIX_LANG_H
#include "matrix.h"

/* [[1, 2], [3, 4]]: the literal n whose first item evaluated to first (an
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

/* The builtins shape, reshape, eye, transpose, row, col, mean, logsumexp. */
void  mat_register(void);

#endif
