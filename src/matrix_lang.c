/* matrix_lang.c: matrices in the language (SPEC "Arrays and views"):
 * literals of rows, a[i, j] and a[i], and the builtins that make, view and
 * reshape matrices. The values' side (shapes, broadcasting, products,
 * reductions) is matrix.c, below the evaluator. */
#include <limits.h>
#include <stdio.h>
#include "matrix.h"
#include "matrix_lang.h"
#include "builtins.h"
#include "eval.h"
#include "num.h"
#include "error.h"
#include "state.h"

/* ----------------------------------------------------------- literals */

Value mat_literal(Node *n, Env *env, Value first)
{
    int rows = n->n, cols = seq_len(first);
    Value r = mat_new(rows, cols);
    Storage *s = AS_ARR(r);
    int known = KNOWN_CONSTS;     /* what every row is known to hold, so the matrix too */
    for (int i = 0; i < rows; i++) {
        Value row = i ? eval_expr(n->list[i], env) : first;
        if (!is_seq(row) || is_mat(row)) {
            const char *what = mat_describe(row);
            v_release(row);
            err_raise_at(n->list[i], "the rows of a matrix must be arrays of numbers, but row %d is %s", i, what);
        }
        int len = seq_len(row);
        if (len != cols) {
            v_release(row);
            err_raise_at(n->list[i], "the rows of a matrix must have equal lengths: row 0 has %d element%s, row %d has %d",
                        cols, cols == 1 ? "" : "s", i, len);
        }
        Value *out = s->v + (long)i * cols;
        if (seq_noheap(row)) {    /* numbers ([ex, ey] of two array results): no test, no retain */
            const Storage *from = storage_of(row);
            const Value *src = row.t == V_ARR ? from->v : from->v + AS_VIEW(row)->start;
            long stride = row.t == V_ARR ? 1 : AS_VIEW(row)->stride;
            for (int j = 0; j < cols; j++) out[j] = src[j * stride];
            known &= from->known;
            v_release(row);
            continue;
        }
        known = 0;
        for (int j = 0; j < cols; j++) {
            Value e = *seq_at(row, j);
            if (!IS_NUMBER(e)) {
                const char *what = value_type_name(e);
                v_release(row);
                err_raise_at(n->list[i], "matrix elements must be numbers, but element %d of row %d is %s", j, i, what);
            }
            v_retain(e);
            out[j] = e;
        }
        v_release(row);
    }
    s->known = known;
    return r;
}

/* ------------------------------------------------------------ indexing */

Value mat_index(Node *n, Value a, Env *env)
{
    if (!is_mat(a))
        err_raise_at(n, "a[i, j] needs a matrix, got %s (an array takes one index: a[i])", mat_describe(a));
    Value iv = eval_expr(n->b, env);
    const Storage *s = AS_ARR(a);
    int i = mat_index_in(iv, s->rows, n->b, "row", a);
    v_release(iv);
    const Value *row = s->v + (long)i * s->cols;
    if (!n->c) {         /* row i, a copy */
        Value r = value_arr_new(s->cols);
        for (int j = 0; j < s->cols; j++) {
            v_retain(row[j]);
            AS_ARR(r)->v[j] = row[j];
        }
        return r;
    }
    Value jv = eval_expr(n->c, env);
    int j = mat_index_in(jv, s->cols, n->c, "column", a);
    v_release(jv);
    v_retain(row[j]);
    return row[j];
}

int mat_store_index(Node *target, Value holder, Value iv, Value jv)
{
    if (!is_mat(holder))
        err_raise_at(target, "a[i, j] = x needs a matrix, got %s (an array takes one index: a[i])", mat_describe(holder));
    if (!target->c)
        err_raise_at(target, "a[i] of a matrix is row i, a copy, and cannot be assigned; write its elements "
                    "(a[i, j] = x), or write through the view row(a, i)");
    const Storage *s = AS_ARR(holder);
    int i = mat_index_in(iv, s->rows, target->b, "row", holder);
    int j = mat_index_in(jv, s->cols, target->c, "column", holder);
    return i * s->cols + j;
}

_Noreturn void mat_row_write_error(Node *target)
{
    err_raise_at(target, "a[i][j] = x would write into a copy (a[i] of a matrix is row i, a copy): write a[i, j] = x");
}


static Value bi_eye(int argc, Value *argv)
{
    (void)argc;
    int n = mat_dim_arg(argv, 0, "eye");
    if ((long long)n * n > INT_MAX) err_raise("eye: a %dx%d matrix is too big (at most %d elements)", n, n, INT_MAX);
    Value r = mat_new(n, n);
    for (int i = 0; i < n; i++) AS_ARR(r)->v[(long)i * n + i] = num_val(num_round(1));
    AS_ARR(r)->known = KNOWN_CONSTS;
    return r;
}

static Value bi_shape(int argc, Value *argv)
{
    (void)argc;
    Value a = argv[0];
    if (IS_NUMBER(a)) return value_arr_new(0);
    if (!is_seq(a)) err_raise("shape: argument 1 must be a number, an array or a matrix, got %s", value_type_name(a));
    Value r = value_arr_new(is_mat(a) ? 2 : 1);
    if (is_mat(a)) {
        AS_ARR(r)->v[0] = num_val(AS_ARR(a)->rows);
        AS_ARR(r)->v[1] = num_val(AS_ARR(a)->cols);
    } else AS_ARR(r)->v[0] = num_val(seq_len(a));
    return r;
}

static Value bi_reshape(int argc, Value *argv)
{
    Value a = argv[0];
    if (!is_seq(a)) err_raise("reshape: argument 1 must be an array or a matrix, got %s", value_type_name(a));
    value_seq_check_numbers(a, "reshape");
    int n = seq_len(a), rows, cols = 0;
    if (argc == 2) rows = mat_dim_arg(argv, 1, "reshape");
    else mat_dims(argv + 1, "reshape", &rows, &cols);
    long long want = argc == 2 ? rows : (long long)rows * cols;
    if (want != n) {
        if (argc == 2) err_raise("reshape: %s has %d element%s, not %d", mat_describe(a), n, n == 1 ? "" : "s", rows);
        err_raise("reshape: %s has %d element%s, not %dx%d = %lld", mat_describe(a), n, n == 1 ? "" : "s", rows, cols, want);
    }
    if (seq_noheap(a)) {      /* numbers: copied in one loop, and the result knows what a's storage knows */
        Storage *s = value_storage_unfilled(n);
        const Storage *from = storage_of(a);
        const Value *src = a.t == V_ARR ? from->v : from->v + AS_VIEW(a)->start;
        long stride = a.t == V_ARR ? 1 : AS_VIEW(a)->stride;
        for (int i = 0; i < n; i++) s->v[i] = src[i * stride];
        s->known = from->known;
        if (argc == 3) storage_set_shape(s, 2, rows, cols);
        return obj_val(V_ARR, s);
    }
    Value r = argc == 2 ? value_arr_new(n) : mat_new(rows, cols);
    for (int i = 0; i < n; i++) {
        Value e = *seq_at(a, i);
        v_retain(e);
        AS_ARR(r)->v[i] = e;
    }
    return r;
}

static Value bi_transpose(int argc, Value *argv)
{
    (void)argc;
    Value a = argv[0];
    if (!is_mat(a))
        err_raise("transpose: argument 1 must be a matrix, got %s (reshape(a, 1, n) makes an array a row, "
                 "reshape(a, n, 1) a column)", mat_describe(a));
    const Storage *s = AS_ARR(a);
    Value r = mat_new(s->cols, s->rows);
    for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++) {
            Value e = s->v[(long)i * s->cols + j];
            v_retain(e);
            AS_ARR(r)->v[(long)j * s->rows + i] = e;
        }
    AS_ARR(r)->known = s->known;     /* the same elements */
    return r;
}

/* row(a, i) and col(a, j): views of a matrix's storage, aliases as view
 * gives them (a write through one is a write to a, a new version of it). */
static Value row_or_col(Node *call, Env *env, int is_row)
{
    const char *fname = is_row ? "row" : "col";
    if (call->n != 2) err_raise("%s(a, %s) expects 2 arguments, got %d", fname, is_row ? "i" : "j", call->n);
    EnvCell *home;
    int owner;
    Value base = builtin_view_base(call->list[0], env, &home, &owner, call->view_read);
    if (!is_mat(base)) {
        const char *what = mat_describe(base);
        v_release(base);
        G->err.where.node = call;
        err_raise("%s: argument 1 must be a matrix, got %s", fname, what);
    }
    Value iv = eval_expr(call->list[1], env);
    G->err.where.node = call;
    const Storage *s = AS_ARR(base);
    int rows = s->rows, cols = s->cols;
    int k = mat_index_in(iv, is_row ? rows : cols, call->list[1], is_row ? "row" : "column", base);
    v_release(iv);
    if (is_row) return builtin_view_over(base, home, owner, k * cols, cols, 1, call->view_read);
    return builtin_view_over(base, home, owner, k, rows, cols ? cols : 1, call->view_read);
}

static Value sp_row(Node *call, Env *env) { return row_or_col(call, env, 1); }
static Value sp_col(Node *call, Env *env) { return row_or_col(call, env, 0); }

static const Builtin matrix_builtins[] = {
    {"shape", 1, 1, bi_shape, "shape(a): [m, n] for an m x n matrix, [n] for an array of n, [] for a number"},
    {"reshape", 2, 3, bi_reshape, "reshape(a, m, n): a's elements, row by row, as an m x n matrix (a copy); reshape(a, n): as an array"},
    {"eye", 1, 1, bi_eye, "eye(n): the n x n identity matrix"},
    {"transpose", 1, 1, bi_transpose, "transpose(a): the matrix a with rows and columns swapped (a copy)"},
    {"mean", 1, 2, mat_mean, "mean(a): the average of the elements of a; mean(a, 1) / mean(a, 2) of a matrix: down the columns / along the rows"},
    {"argmin", 1, 2, mat_argmin, "argmin(a): the index (from 0) of the element min(a) gives, the first of equal ones; argmin(a, 1) / argmin(a, 2) of a matrix: in each column (1 x n) / in each row (m x 1); indices are constants"},
    {"argmax", 1, 2, mat_argmax, "argmax(a): the index (from 0) of the element max(a) gives, the first of equal ones; argmax(a, 1) / argmax(a, 2) of a matrix: in each column (1 x n) / in each row (m x 1); indices are constants"},
    {"logsumexp", 1, 2, mat_logsumexp, "logsumexp(a): log(sum(exp(a))), computed without overflow by shifting by max(a); logsumexp(a, 1) / logsumexp(a, 2) of a matrix: down the columns / along the rows"},
};

void mat_register(void)
{
    for (size_t i = 0; i < sizeof matrix_builtins / sizeof matrix_builtins[0]; i++) builtin_define(&matrix_builtins[i]);
    builtin_define_special("row", sp_row, "row(a, i): row i of the matrix a as a view (an alias: writing it writes a)");
    builtin_define_special("col", sp_col, "col(a, j): column j of the matrix a as a view (an alias, strided: writing it writes a)");
}
