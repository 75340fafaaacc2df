/* matrix.c: matrices as values (SPEC "Arrays and views", the matrices
 * paragraph), below the evaluator: shapes, printing, broadcasting, the
 * product, reductions along an axis (the language's side, literals,
 * indexing and the builtins, is matrix_lang.c).
 * A matrix is an array whose storage knows two dimensions (value.h), its
 * elements row by row, so every path that works on an array's elements
 * (element writes, versions x@k, views, the tape, checkpointed loops,
 * reclaiming) works on a matrix's unchanged. Here is what the shape adds:
 * broadcasting, the product a @ b, reductions along an axis.
 *
 * Numbers are recorded element by element, as array operations are: an
 * elementwise op records one entry an element, a reduction of a row or a
 * column one n-ary sum, an element of a product one dot entry. So d, grad,
 * jvp and hvp reach through matrices as through arrays. A product (and an
 * elementwise op) whose operands qualify is also recorded as an array run,
 * which the plain sweep takes whole (arrayrun.c). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "matrix.h"
#include "dual.h"
#include "dualarr.h"
#include "arith.h"
#include "arrayrun.h"
#include "tape.h"
#include "num.h"
#include "error.h"
#include "state.h"
#include "wmath.h"

/* ------------------------------------------------------------- basics */

static void set_shape(Storage *s, int rows, int cols) { storage_set_shape(s, 2, rows, cols); }

Value mat_new(int rows, int cols)
{
    if (rows < 0 || cols < 0 || (long long)rows * cols > INT_MAX)
        err_raise("a %dx%d matrix is too big (at most %d elements)", rows, cols, INT_MAX);
    Value r = value_arr_new(rows * cols);
    set_shape(AS_ARR(r), rows, cols);
    return r;
}

/* For messages, a few at a time (value_num_str's buffers: at most four of
 * theirs and ours in one message). */
const char *mat_describe(Value v)
{
    char *b = G->value.num_bufs[G->value.num_next++ & 3];
    size_t n = sizeof G->value.num_bufs[0];
    if (is_mat(v)) snprintf(b, n, "a %dx%d matrix", AS_ARR(v)->rows, AS_ARR(v)->cols);
    else if (v.t == V_ARR) snprintf(b, n, "an array of %d", AS_ARR(v)->n);
    else if (v.t == V_VIEW) snprintf(b, n, "a view of %d", AS_VIEW(v)->len);
    else snprintf(b, n, "a %s", value_type_name(v));
    return b;
}

/* At the prompt and in :vars a big matrix shows its first and last rows
 * (and of a long row its ends); print() writes every element. */
#define BRIEF_ENDS 3

static void print_row(FILE *f, const Value *e, int cols, int brief)
{
    fputc('[', f);
    for (int j = 0; j < cols; j++) {
        if (brief && cols > 4 * BRIEF_ENDS && j == BRIEF_ENDS) {
            fputs(", ...", f);
            j = cols - BRIEF_ENDS;
        }
        if (j) fputs(", ", f);
        value_print(e[j], f);
    }
    fputc(']', f);
}

void mat_print(Value v, void *file, int brief)
{
    FILE *f = file;
    const Storage *s = AS_ARR(v);
    fputc('[', f);
    for (int i = 0; i < s->rows; i++) {
        if (i) fputs(",\n ", f);
        if (brief && s->rows > 4 * BRIEF_ENDS && i == BRIEF_ENDS) {
            fputs("...,\n ", f);
            i = s->rows - BRIEF_ENDS;
        }
        print_row(f, s->v + (long)i * s->cols, s->cols, brief);
    }
    fputc(']', f);
    if (brief) fprintf(f, " (%dx%d matrix)", s->rows, s->cols);
}

/* A whole number in [0, len) as index `what` ("row", "column") of m. */
int mat_index_in(Value idx, int len, Node *at, const char *what, Value m)
{
    if (!IS_NUMBER(idx)) err_raise_at(at, "index must be a number, got %s", value_type_name(idx));
    double d = v_primal(idx);
    /* an index in range, whole (exact through int there; no call to
     * floor): the common case; anything else meets the tests below */
    if (d >= 0 && d < len && (double)(int)d == d) return (int)d;
    if (d != floor(d) || isnan(d)) err_raise_at(at, "index %s is not a whole number", value_num_str(d));
    if (d < 0 || d >= len) err_raise_at(at, "%s index %s out of range for %s", what, value_num_str(d), mat_describe(m));
    return (int)d;
}

Value mat_rows(Value a, int lo, int hi)
{
    const Storage *s = AS_ARR(a);
    Value r = mat_new(hi - lo, s->cols);
    for (long k = 0; k < (long)(hi - lo) * s->cols; k++) {
        Value e = s->v[(long)lo * s->cols + k];
        v_retain(e);
        AS_ARR(r)->v[k] = e;
    }
    AS_ARR(r)->known = s->known;     /* the same elements */
    return r;
}

/* -------------------------------------------------------- elementwise */

/* One dimension of two operands: equal, or 1 (broadcast along it). */
static int fit(int p, int q, int *out)
{
    if (p == q || q == 1) *out = p;
    else if (p == 1) *out = q;
    else return 0;
    return 1;
}

/* Matrix a as rows x cols elements (a fits), in storage order: a itself
 * when its shape is that, else a flat array repeating its row or column
 * (the same numbers, so the tape sees each element used several times). */
static Value expand(Value a, int rows, int cols)
{
    const Storage *s = AS_ARR(a);
    if (s->rows == rows && s->cols == cols) {
        v_retain(a);
        return a;
    }
    Storage *r = value_storage_unfilled(rows * cols);
    int nums = s->known & KNOWN_NOHEAP;    /* then no retains, and r knows what s does */
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            Value e = s->v[(long)(s->rows == 1 ? 0 : i) * s->cols + (s->cols == 1 ? 0 : j)];
            if (!nums) v_retain(e);
            r->v[(long)i * cols + j] = e;
        }
    r->known = s->known;
    return obj_val(V_ARR, r);
}

static _Noreturn void mismatch(const char *what, Value a, Value b)
{
    int arrays = (is_seq(a) && !is_mat(a)) || (is_seq(b) && !is_mat(b));
    err_raise("shape mismatch in '%s': %s and %s%s", what, mat_describe(a), mat_describe(b),
             arrays ? " (a matrix meets a number or a matrix; reshape(a, 1, n) makes an array a row,"
                      " reshape(a, n, 1) a column)" : "");
}

/* A matrix's elements are float64 numbers that record nothing (as arith.c's
 * plain path asks: known, or found so by a scan, which it remembers). */
static int plain_storage(Storage *s)
{
    int rec = G->tape.recording;
    value_known_check(s);
    if (s->known == KNOWN_CONSTS || (s->known && !rec)) return 1;
    uint32_t ids = 0;
    for (long p = 0; p < (long)s->n; p++) {
        if (s->v[p].t != V_NUM || (s->v[p].id && rec)) return 0;
        ids |= s->v[p].id;
    }
    s->known = ids ? KNOWN_NOHEAP : KNOWN_CONSTS;
    return 1;
}

/* x op y of two matrices of plain numbers where one or both are broadcast
 * (a row or a column; kmeans' distances |c|^2 - 2 p.c, its k x n
 * comparison of indices): one loop over the result, no expanded copies;
 * + - * / in float64, as arith.c's plain path computes them. 0 if it does
 * not apply. */
static int broadcast_plain(int op, const Storage *x, const Storage *y, int rows, int cols, Value *out)
{
    if (!eval_fast_paths || G->num.backend != BK_F64 || (op != OP_ADD && op != OP_SUB && op != OP_MUL && op != OP_DIV)) return 0;
    if (!plain_storage((Storage *)x) || !plain_storage((Storage *)y)) return 0;
    if ((long long)rows * cols > INT_MAX) return 0;     /* mat_new's error, on the general path */
    Storage *rs = value_storage_unfilled(rows * cols);     /* every element written below: no zeros first */
    storage_set_shape(rs, 2, rows, cols);
    Value r = obj_val(V_ARR, rs);
    rs->known = KNOWN_CONSTS;
    /* element (i, j) of a side: v[i * ri + j * cj] (ri 0 for a row, cj 0 for a column) */
    long xr = x->rows == 1 ? 0 : x->cols, xc = x->cols == 1 ? 0 : 1;
    long yr = y->rows == 1 ? 0 : y->cols, yc = y->cols == 1 ? 0 : 1;
    for (int i = 0; i < rows; i++) {
        const Value *xe = x->v + i * xr, *ye = y->v + i * yr;
        Value *o = rs->v + (long)i * cols;
#define BROADCAST_LOOP(expr) for (int j = 0; j < cols; j++) { double u = xe[j * xc].u.n, v = ye[j * yc].u.n; o[j] = num_val(expr); }
        switch (op) {
        case OP_ADD: BROADCAST_LOOP(u + v); break;
        case OP_SUB: BROADCAST_LOOP(u - v); break;
        case OP_MUL: BROADCAST_LOOP(u * v); break;
        default: BROADCAST_LOOP(u / v); break;
        }
#undef BROADCAST_LOOP
    }
    *out = r;
    return 1;
}

Value mat_elementwise(int op, Value a, Value b)
{
    if (num_op_arity[op] < 2) {
        Value r = arith_elementwise_flat(op, a, a);
        shape_like(r, a);
        return r;
    }
    int sa = IS_NUMBER(a), sb = IS_NUMBER(b);
    if ((!sa && !is_seq(a)) || (!sb && !is_seq(b)))
        err_raise("cannot apply '%s' to %s and %s", arith_op_symbol(op), value_type_name(a), value_type_name(b));
    if ((!sa && !is_mat(a)) || (!sb && !is_mat(b))) mismatch(arith_op_symbol(op), a, b);
    if (sa || sb) {
        Value r = arith_elementwise_flat(op, a, b);
        shape_like(r, sa ? b : a);
        return r;
    }
    const Storage *x = AS_ARR(a), *y = AS_ARR(b);
    int rows, cols;
    Value r0;
    if (!fit(x->rows, y->rows, &rows) || !fit(x->cols, y->cols, &cols)) mismatch(arith_op_symbol(op), a, b);
    if ((x->rows != y->rows || x->cols != y->cols)
        && (broadcast_plain(op, x, y, rows, cols, &r0) || arrayrun_broadcast(op, a, b, rows, cols, &r0))) return r0;
    Value ea = expand(a, rows, cols), eb = expand(b, rows, cols);
    Value r = arith_elementwise_flat(op, ea, eb);
    v_release(ea);
    v_release(eb);
    set_shape(AS_ARR(r), rows, cols);
    return r;
}

Value mat_compound_rhs(Node *at, int op, Value target, Value rhs)
{
    if (IS_NUMBER(rhs)) return rhs;
    char what[16];
    snprintf(what, sizeof what, "%s=", arith_op_symbol(op));
    G->err.where.node = at;
    if (!is_mat(target) || !is_mat(rhs)) mismatch(what, target, rhs);
    const Storage *t = AS_ARR(target), *r = AS_ARR(rhs);
    if ((r->rows != t->rows && r->rows != 1) || (r->cols != t->cols && r->cols != 1)) mismatch(what, target, rhs);
    Value e = expand(rhs, t->rows, t->cols);
    v_release(rhs);
    return e;
}

/* ------------------------------------------------------------- product */

/* An operand of a product: its elements in order p = 0, 1, ... are
 * v[p * stride]; consts[p] is the constant entry made for element p when
 * a recorded element of the result needs it (made once, used by every
 * element of the result that reads it). */
typedef struct {
    const Value *v;
    long stride;
    int n;
    uint32_t *consts;
} Operand;

static Operand operand(Value a)
{
    Operand o = { NULL, 1, seq_len(a), NULL };
    if (a.t == V_ARR) o.v = AS_ARR(a)->v;
    else {
        const View *w = AS_VIEW(a);
        o.v = w->s->v + w->start;
        o.stride = w->stride;
    }
    return o;
}

static inline const Value *elem(const Operand *o, long p) { return &o->v[p * o->stride]; }

static uint32_t id_or_const(Operand *o, long p)
{
    const Value *e = elem(o, p);
    if (e->id) return e->id;
    if (!o->consts) o->consts = err_scratch(sizeof(uint32_t) * (size_t)(o->n ? o->n : 1));
    if (!o->consts[p]) o->consts[p] = arith_const_id(e->u.n);
    return o->consts[p];
}

/* sum over t < k of a[pa + t * da] * b[pb + t * db], recorded as dot
 * records it: one entry (the quire in posit backends), or, on dual
 * numbers, products and sums. */
static Value product_element(Operand *a, long pa, long da, Operand *b, long pb, long db, int k)
{
    int duals = 0;
    uint32_t ids = 0;
    for (int t = 0; t < k; t++) {
        const Value *x = elem(a, pa + t * da), *y = elem(b, pb + t * db);
        duals |= (x->t == V_DUAL) | (y->t == V_DUAL);
        ids |= x->id | y->id;
    }
    if (duals) {
        Value acc = num_val(0);
        if (dual_dot(elem(a, pa), da * a->stride, elem(b, pb), db * b->stride, k, &acc)) return acc;   /* one pass */
        if (fwd_quire_dot(elem(a, pa), da * a->stride, elem(b, pb), db * b->stride, k, &acc)) return acc;   /* posits */
        for (int t = 0; t < k; t++) {
            Value p = arith_num_op(OP_MUL, *elem(a, pa + t * da), *elem(b, pb + t * db));
            if (t == 0) {
                acc = p;
                continue;
            }
            Value s = arith_num_op(OP_ADD, acc, p);
            v_release(acc);
            v_release(p);
            acc = s;
        }
        return acc;
    }
    NumAcc q;
    double s = 0;
    if (G->num.backend != BK_F64) num_acc_clear(&q);
    for (int t = 0; t < k; t++) {
        double x = elem(a, pa + t * da)->u.n, y = elem(b, pb + t * db)->u.n;
        if (G->num.backend == BK_F64) s += x * y;
        else num_acc_fma(&q, x, y);
    }
    if (G->num.backend != BK_F64) s = num_acc_result(&q);
    if (!ids || !G->tape.recording) return num_val(s);
    for (int t = 0; t < k; t++) {        /* the constants first: they are entries of their own */
        id_or_const(a, pa + t * da);
        id_or_const(b, pb + t * db);
    }
    uint32_t off, *pairs = tape_rec_operands(2 * (uint32_t)k, &off);
    for (int t = 0; t < k; t++) {
        pairs[2 * t] = id_or_const(a, pa + t * da);
        pairs[2 * t + 1] = id_or_const(b, pb + t * db);
    }
    return num_rec(s, tape_rec_dot(off, (uint32_t)k, s));
}

/* Whether the n elements of o are plain numbers that record nothing. */
static int plain_operand(const Operand *o)
{
    int rec = G->tape.recording;
    for (long p = 0; p < o->n; p++) {
        const Value *e = elem(o, p);
        if (e->t != V_NUM || (e->id && rec)) return 0;
    }
    return 1;
}

/* a @ b into r when both are plain float64 numbers that record nothing:
 * each element the sum product_element makes, in the same order (from 0,
 * t = 0, 1, ...), in a loop over doubles. 0 if it does not apply. */
/* Two doubles side by side (GCC's and clang's vector extension: SSE2's
 * registers on x86-64; each lane's arithmetic is IEEE's, as a double's). */
typedef double v2d __attribute__((vector_size(16)));

/* The result's storage for plain_product: m x n (a matrix when both
 * factors are), every element written by the kernel, so no zeros first. */
static Value product_result(int mat, int m, int n)
{
    Storage *s = value_storage_unfilled(m * n);
    if (mat) storage_set_shape(s, 2, m, n);
    return obj_val(V_ARR, s);
}

/* Rows i .. i + 3 of the result, columns j .. j + 1 (their sums from 0 over
 * t in order, as one element at a time makes them): the columns left over
 * when n is not a multiple of 4, two at a time. x0: row i of a, its
 * element t at x0[t * as]; bt: b by rows. */
static inline void block_4x2(const double *x0, long as, long rowstep, const double *bt, int k, int n, int j, Value *o)
{
    const double *x1 = x0 + rowstep, *x2 = x1 + rowstep, *x3 = x2 + rowstep;
    v2d c0 = {0, 0}, c1 = {0, 0}, c2 = {0, 0}, c3 = {0, 0};
    const double *y = bt + j;
    for (int t = 0; t < k; t++, y += n) {
        v2d yv;
        memcpy(&yv, y, sizeof yv);
        long at = t * as;
        v2d a0 = {x0[at], x0[at]}, a1 = {x1[at], x1[at]}, a2 = {x2[at], x2[at]}, a3 = {x3[at], x3[at]};
        c0 += a0 * yv;
        c1 += a1 * yv;
        c2 += a2 * yv;
        c3 += a3 * yv;
    }
    v2d c[4] = { c0, c1, c2, c3 };
    for (int q = 0; q < 4; q++, o += n) {
        o[0] = num_val(c[q][0]);
        o[1] = num_val(c[q][1]);
    }
}

/* known_a, known_b: the factor's storage is known to hold constants (no scan: llsq's P).
 * a's numbers are read where they are (a Value's double, as doubles apart
 * from the next element: no copy of a, the big factor in gmm's X1 @ Q);
 * b's are copied by rows into doubles. *r: the result, made here. */
static int plain_product(const Operand *a, const Operand *b, int known_a, int known_b, int m, int k, int n, int mat, Value *rv)
{
    if (!eval_fast_paths || G->num.backend != BK_F64) return 0;
    if (G->tape.recording && ((a->n && elem(a, 0)->id) || (b->n && elem(b, 0)->id))) return 0;   /* no scan of the other */
    if ((!known_a && !plain_operand(a)) || (!known_b && !plain_operand(b))) return 0;
    if ((long long)m * n > INT_MAX) return 0;     /* mat_new's error, on the general path */
    double *bt = malloc(sizeof(double) * ((size_t)k * (size_t)n + 1));
    if (!bt) return 0;
    for (long p = 0; p < (long)k * n; p++) bt[p] = elem(b, p)->u.n;
    /* element p of a is the double ad[p * as] (a Value is two doubles' size) */
    const long as = a->stride * (long)(sizeof(Value) / sizeof(double)), rowstep = as * k;
    const double *ad = &a->v[0].u.n;
    Value r = product_result(mat, m, n);
    Value *out = AS_ARR(r)->v;
    /* 4 x 4 blocks of the result in registers, each element's sum from 0
     * over t in order (the same sums as one element at a time, to the bit) */
    int i = 0;
    for (; i + 4 <= m; i += 4) {
        const double *x0 = ad + i * rowstep, *x1 = x0 + rowstep, *x2 = x1 + rowstep, *x3 = x2 + rowstep;
        int j = 0;
        for (; j + 4 <= n; j += 4) {
            v2d c0l = {0, 0}, c0h = {0, 0}, c1l = {0, 0}, c1h = {0, 0};
            v2d c2l = {0, 0}, c2h = {0, 0}, c3l = {0, 0}, c3h = {0, 0};
            const double *y = bt + j;
            for (int t = 0; t < k; t++, y += n) {
                v2d yl, yh;
                memcpy(&yl, y, sizeof yl);
                memcpy(&yh, y + 2, sizeof yh);
                long at = t * as;
                v2d a0 = {x0[at], x0[at]}, a1 = {x1[at], x1[at]}, a2 = {x2[at], x2[at]}, a3 = {x3[at], x3[at]};
                c0l += a0 * yl; c0h += a0 * yh;
                c1l += a1 * yl; c1h += a1 * yh;
                c2l += a2 * yl; c2h += a2 * yh;
                c3l += a3 * yl; c3h += a3 * yh;
            }
            Value *o = out + (long)i * n + j;
            v2d *c[4][2] = { { &c0l, &c0h }, { &c1l, &c1h }, { &c2l, &c2h }, { &c3l, &c3h } };
            for (int q = 0; q < 4; q++, o += n) {
                o[0] = num_val((*c[q][0])[0]);
                o[1] = num_val((*c[q][0])[1]);
                o[2] = num_val((*c[q][1])[0]);
                o[3] = num_val((*c[q][1])[1]);
            }
        }
        for (; j + 2 <= n; j += 2) block_4x2(x0, as, rowstep, bt, k, n, j, out + (long)i * n + j);
        for (; j < n; j++) {           /* the last column, four rows at a time */
            double c0 = 0, c1 = 0, c2 = 0, c3 = 0;
            for (int t = 0; t < k; t++) {
                double v = bt[(long)t * n + j];
                long at = t * as;
                c0 += x0[at] * v;
                c1 += x1[at] * v;
                c2 += x2[at] * v;
                c3 += x3[at] * v;
            }
            out[(long)i * n + j] = num_val(c0);
            out[(long)(i + 1) * n + j] = num_val(c1);
            out[(long)(i + 2) * n + j] = num_val(c2);
            out[(long)(i + 3) * n + j] = num_val(c3);
        }
    }
    for (; i < m; i++) {               /* the last rows, one at a time: 4 columns, then each */
        const double *x = ad + i * rowstep;
        int j = 0;
        for (; j + 4 <= n; j += 4) {
            v2d cl = {0, 0}, ch = {0, 0};
            const double *y = bt + j;
            for (int t = 0; t < k; t++, y += n) {
                v2d yl, yh, a0 = {x[t * as], x[t * as]};
                memcpy(&yl, y, sizeof yl);
                memcpy(&yh, y + 2, sizeof yh);
                cl += a0 * yl;
                ch += a0 * yh;
            }
            Value *o = out + (long)i * n + j;
            o[0] = num_val(cl[0]);
            o[1] = num_val(cl[1]);
            o[2] = num_val(ch[0]);
            o[3] = num_val(ch[1]);
        }
        for (; j < n; j++) {
            double c = 0;
            for (int t = 0; t < k; t++) c += x[t * as] * bt[(long)t * n + j];
            out[(long)i * n + j] = num_val(c);
        }
    }
    free(bt);
    AS_ARR(r)->known = KNOWN_CONSTS;     /* plain numbers (their values set): no scan of them next */
    *rv = r;
    return 1;
}

/* a (m x k, or an array of k as a row) times b (k x n, or an array of k
 * as a column): a matrix, or an array when either side is one. */
Value mat_product(Value a, Value b)
{
    if (!is_seq(a) || !is_seq(b))
        err_raise("the matrix product '@' needs matrices or arrays, got %s and %s%s", mat_describe(a), mat_describe(b),
                 IS_NUMBER(b) && a.t != V_STR ? " (a version is written x@k, the k right after the '@')" : "");
    if (!is_mat(a) && !is_mat(b))
        err_raise("'@' of two arrays (%s and %s): dot(a, b) is their inner product; '@' needs a matrix on one side",
                 mat_describe(a), mat_describe(b));
    if (!is_mat(a)) value_seq_check_numbers(a, "'@'");
    if (!is_mat(b)) value_seq_check_numbers(b, "'@'");
    int m = is_mat(a) ? AS_ARR(a)->rows : 1, k = is_mat(a) ? AS_ARR(a)->cols : seq_len(a);
    int k2 = is_mat(b) ? AS_ARR(b)->rows : seq_len(b), n = is_mat(b) ? AS_ARR(b)->cols : 1;
    if (k != k2)
        err_raise("shape mismatch in '@': %s and %s (the left's columns must match the right's rows)",
                 mat_describe(a), mat_describe(b));
    Operand oa = operand(a), ob = operand(b);
    value_known_check(storage_of(a));
    value_known_check(storage_of(b));
    Value r;
    if (plain_product(&oa, &ob, storage_of(a)->known == KNOWN_CONSTS, storage_of(b)->known == KNOWN_CONSTS, m, k, n,
                      is_mat(a) && is_mat(b), &r))
        return r;
    r = is_mat(a) && is_mat(b) ? mat_new(m, n) : value_arr_new(is_mat(a) ? m : n);
    if (arrayrun_product(a, b, m, k, n, r)) return r;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            AS_ARR(r)->v[(long)i * n + j] = product_element(&oa, (long)i * k, 1, &ob, j, n, k);
    if (oa.consts) err_scratch_free(oa.consts);
    if (ob.consts) err_scratch_free(ob.consts);
    return r;
}

/* ---------------------------------------------------------- reductions */

enum { R_SUM, R_MAX, R_MIN, R_MEAN, R_LSE };

/* mean and logsumexp of an array (stdlib's definitions, op for op) */
static Value mean_of(Value a)
{
    Value s = arith_sum(a);
    Value r = arith_num_op(OP_DIV, s, num_val(seq_len(a)));
    v_release(s);
    return r;
}

/* The five steps below in doubles, bit for bit: m the same max,
 * e_i = wm_exp(x_i - m) as the array's exp takes it (into e, if not
 * NULL), their sum from 0 in order, log, + m (num_apply_f64: each op's
 * float64 value); *s receives the sum. A block of LSE_BLOCK at a time:
 * its shift in a buffer on the stack, its exps, then its part of the
 * sum, whose chain of adds (3 or 4 cycles each, 0.2 ms over 160000
 * elements when it ran alone) runs while the next block's exps are
 * taken; no scratch array for the shift either. */
enum { LSE_BLOCK = 32 };
static inline __attribute__((always_inline)) double lse_block(const Value *xv, const double *xd, uint32_t k, double m, double *to, double sum)
{
    double shifted[LSE_BLOCK];
    for (uint32_t j = 0; j < k; j++) shifted[j] = (xd ? xd[j] : xv[j].u.n) - m;     /* OP_SUB's float64 value */
    return wm_exp_n_sum(shifted, to, k, sum);    /* (elementwise: a block's are the whole array's; the sum in order) */
}

/* The numbers: an array's elements xv, or doubles xd (the entries'
 * values, lse_elements); the other NULL (a constant where inlined). */
static inline __attribute__((always_inline)) double lse_f64_of(const Value *xv, const double *xd, uint32_t n, double m, double *e, double *s)
{
    double sum = 0, mine[LSE_BLOCK];
    uint32_t i = 0;
    for (; i + LSE_BLOCK <= n; i += LSE_BLOCK)      /* (k a constant: unrolled) */
        sum = lse_block(xd ? NULL : xv + i, xd ? xd + i : NULL, LSE_BLOCK, m, e ? e + i : mine, sum);
    if (i < n) sum = lse_block(xd ? NULL : xv + i, xd ? xd + i : NULL, n - i, m, e ? e + i : mine, sum);
    *s = sum;
    return num_apply_f64(OP_ADD, num_apply_f64(OP_LOG, sum, 0), m);
}

static double lse_f64(const Value *x, uint32_t n, double m, double *e, double *s) { return lse_f64_of(x, NULL, n, m, e, s); }
static double lse_f64_dense(const double *x, uint32_t n, double m, double *e, double *s) { return lse_f64_of(NULL, x, n, m, e, s); }

/* logsumexp of an array of float64 numbers with lse_f64's value: if some
 * are recorded, as one entry (OP_LSE) whose operands are a run when the
 * elements' entries are consecutive, else the list of them (a constant
 * element gets a constant entry); if none is (or nothing records), a
 * plain number. 0 if it does not apply (another backend, a view, a dual). */
static int lse_elements(const Value *x, uint32_t n, const Storage *whole, Value *out);
static int lse_one_entry(Value a, Value *out)
{
    if (a.t != V_ARR || G->num.backend != BK_F64) return 0;
    const Storage *st = AS_ARR(a);
    return lse_elements(st->v, (uint32_t)st->n, st, out);
}

/* Whether the n elements at x are the whole of storage st, and elements
 * an array run made (grad's fresh point too) that nothing wrote since
 * (Storage.fresh, as their first and last ids still say): numbers all,
 * ids first .. first + n - 1, none 0. */
static int lse_known_run(const Value *x, uint32_t n, const Storage *st)
{
    return eval_fast_paths && st && x == st->v && n == (uint32_t)st->n && (st->known & KNOWN_NOHEAP) && st->fresh
           && x[0].id == st->fresh && x[n - 1].id == st->fresh + n - 1;
}

/* m = x_0, then m = m < x_i ? x_i : m for each i in order (OP_MAX's
 * float64 value as the loop below takes it: a nan x_i is passed over, a
 * nan x_0 stays), in four chains at once: each chain keeps its first of
 * equal maxima, so the chains' maxima, taken in the same way, have the
 * in-order value, and its bits too unless that value is 0 (-0 and +0
 * compare equal: which comes first decides), where the loop in order
 * answers instead. */
static double max_in_order(const double *x, uint32_t n)
{
    double m0 = x[0], m1 = m0, m2 = m0, m3 = m0;
    uint32_t i = 1;
    for (; i + 4 <= n; i += 4) {
        m0 = m0 < x[i] ? x[i] : m0;
        m1 = m1 < x[i + 1] ? x[i + 1] : m1;
        m2 = m2 < x[i + 2] ? x[i + 2] : m2;
        m3 = m3 < x[i + 3] ? x[i + 3] : m3;
    }
    for (; i < n; i++) m0 = m0 < x[i] ? x[i] : m0;
    double m = m0;
    m = m < m1 ? m1 : m;
    m = m < m2 ? m2 : m;
    m = m < m3 ? m3 : m;
    if (m != 0) return m;
    m = x[0];
    for (i = 1; i < n; i++) m = m < x[i] ? x[i] : m;
    return m;
}

/* lse_one_entry's work on the n (> 0) elements at x: an array's (whole
 * its storage, or NULL), or a row of a matrix's (logsumexp(A, 2) with no
 * array made for the row). */
static int lse_elements(const Value *x, uint32_t n, const Storage *whole, Value *out)
{
    uint32_t first = x[0].id, ids = 0;
    int run = 1;
    double m = x[0].u.n, s;
    /* a run already: the max alone, and both passes over the entries'
     * values, dense (an array run's operands are read there too), not
     * over the elements, twice the bytes */
    int dense = lse_known_run(x, n, whole);
    if (dense) {
        ids = first;
#ifdef __SANITIZE_ADDRESS__
        for (uint32_t i = 0; i < n; i++)      /* (SAN build: the entries' values are the elements') */
            if (memcmp(&tape_vals()[first + i], &x[i].u.n, sizeof(double))) abort();
#endif
        m = max_in_order(tape_vals() + first, n);
    } else
        for (uint32_t i = 0; i < n; i++) {
            if (x[i].t != V_NUM) return 0;
            ids |= x[i].id;
            run &= x[i].id == first + i;
            m = m < x[i].u.n ? x[i].u.n : m;
        }
    if (!ids || !G->tape.recording) {
        *out = num_val(lse_f64(x, n, m, NULL, &s));
        return 1;
    }
    run &= first != 0;
    uint32_t off;
    tape_rec_operands(tape_lse_slots(n, run), &off);
    if (run) tape_pool_at(off)[0] = first;
    else
        for (uint32_t i = 0; i < n; i++) {
            uint32_t id = x[i].id ? x[i].id : arith_const_id(x[i].u.n);
            tape_pool_at(off)[i] = id;
        }
    double *d = (double *)(TapeF64 *)tape_pool_at(tape_lse_data(off, n, run));
    double v = dense ? lse_f64_dense(tape_vals() + first, n, m, d + 2, &s) : lse_f64(x, n, m, d + 2, &s);
    d[0] = m;
    d[1] = 1 / s;            /* log's partial, DIV(ONE, A) */
    *out = num_rec(v, tape_rec_lse(off, n, run, v));
    return 1;
}

/* log(sum(exp(a - m))) + m with m = max(a) as a constant: the shift
 * cancels, so the derivative is exact and passes no kink. */
static Value logsumexp_of(Value a)
{
    int n = seq_len(a);
    if (n == 0) err_raise("logsumexp of an empty array");
    Value fused;
    if (lse_one_entry(a, &fused)) return fused;
    double m = v_primal(*seq_at(a, 0));
    if (G->num.backend == BK_F64)       /* OP_MAX's value in float64, a compare an element */
        for (int i = 1; i < n; i++) {
            double x = v_primal(*seq_at(a, i));
            m = m < x ? x : m;
        }
    else
        for (int i = 1; i < n; i++) m = num_apply(OP_MAX, m, v_primal(*seq_at(a, i)));
    Value mv = num_val(m);
    Value shifted = arith_apply(OP_SUB, a, mv);
    Value e = arith_apply(OP_EXP, shifted, shifted);
    Value s = arith_sum(e);
    Value l = arith_apply(OP_LOG, s, s);
    Value r = arith_apply(OP_ADD, l, mv);
    v_release(shifted);
    v_release(e);
    v_release(s);
    v_release(l);
    return r;
}

static Value reduce_line(int kind, Value line, const char *fname)
{
    switch (kind) {
    case R_SUM: return arith_sum(line);
    case R_MAX: return arith_fold(OP_MAX, line, fname);
    case R_MIN: return arith_fold(OP_MIN, line, fname);
    case R_MEAN: return mean_of(line);
    default: return logsumexp_of(line);
    }
}

/* The sums of a float64 matrix of numbers along an axis into r, each as
 * arith_sum makes it for the line as an array (the same sum in the same
 * order, recorded as one entry over a run of consecutive entries or over
 * the list of its terms), without making the arrays. 0 if it does not
 * apply (another backend, a dual). */
/* sum_lines along the rows (axis 2) of numbers an array run made and
 * nothing wrote since (Storage.fresh, as its first and last ids still
 * say: ids fresh + p, none a constant): each row is a run of entries, so
 * only the sums are taken (the same sums, in the same order), and each
 * recorded over its run. 0 if s is not such a matrix (or nothing records). */
static int sum_rows_of_run(const Storage *s, Value r)
{
    long n = (long)s->rows * s->cols;
    if (!eval_fast_paths || !G->tape.recording || !s->fresh || n == 0 || s->v[0].id != s->fresh
        || s->v[n - 1].id != s->fresh + (uint32_t)(n - 1))
        return 0;
    int len = s->cols;
    for (int l = 0; l < s->rows; l++) {
        const Value *e = s->v + (long)l * len;
        double sum = 0;
        for (int t = 0; t < len; t++) sum += e[t].u.n;
        AS_ARR(r)->v[l] = num_rec(sum, tape_rec_sum_run(e[0].id, (uint32_t)len, sum));
    }
    return 1;
}

static int sum_lines(const Storage *s, int axis, Value r)
{
    if (G->num.backend != BK_F64) return 0;
    value_known_check(s);
    if (!(s->known & KNOWN_NOHEAP))      /* known numbers (an array run's result): no scan */
        for (long p = 0; p < (long)s->rows * s->cols; p++)
            if (s->v[p].t != V_NUM) return 0;
    int lines = axis == 1 ? s->cols : s->rows, len = axis == 1 ? s->rows : s->cols;
    long step = axis == 1 ? s->cols : 1, next = axis == 1 ? 1 : s->cols;
    if (axis == 2 && len >= 2 && sum_rows_of_run(s, r)) return 1;
    for (int l = 0; l < lines; l++) {
        const Value *e = s->v + l * next;
        double sum = 0;
        uint32_t first = len ? e[0].id : 0, ids = 0;
        int run = 1;
        for (int t = 0; t < len; t++) {
            sum += e[t * step].u.n;
            ids |= e[t * step].id;
            run &= e[t * step].id == first + (uint32_t)t;
        }
        Value out;
        if (!ids || !G->tape.recording) out = num_val(sum);
        else if (run && first != 0 && len >= 2) out = num_rec(sum, tape_rec_sum_run(first, (uint32_t)len, sum));
        else {
            uint32_t off, *terms = tape_rec_operands((uint32_t)len, &off);
            for (int t = 0; t < len; t++) terms[t] = e[t * step].id;
            out = num_rec(sum, tape_rec_sum(off, (uint32_t)len, sum));
        }
        AS_ARR(r)->v[l] = out;
    }
    return 1;
}

/* sum, max or min along an axis of a matrix of plain float64 numbers that
 * record nothing, into r: in doubles, each line in the order and with the
 * comparisons the general path makes (arith_sum from 0, arith_fold's
 * min/max keeping the earlier element on a tie); no array per line.
 * 0 if it does not apply (r untouched). */
static int along_plain(int kind, const Storage *s, int axis, Value r)
{
    if (!eval_fast_paths || G->num.backend != BK_F64 || (kind != R_SUM && kind != R_MAX && kind != R_MIN)) return 0;
    int rec = G->tape.recording;
    value_known_check(s);
    if (!(s->known == KNOWN_CONSTS || (s->known && !rec)))   /* known: numbers none of which records */
        for (long p = 0; p < (long)s->n; p++)
            if (s->v[p].t != V_NUM || (s->v[p].id && rec)) return 0;
    int rows = s->rows, cols = s->cols;
    int lines = axis == 1 ? cols : rows, len = axis == 1 ? rows : cols;
    long step = axis == 1 ? cols : 1, next = axis == 1 ? 1 : cols;
    if (len == 0 && kind != R_SUM) return 0;     /* the general path's error */
    for (int l = 0; l < lines; l++) {
        const Value *e = s->v + l * next;
        double acc;
        if (kind == R_SUM) {
            acc = 0;
            for (int t = 0; t < len; t++) acc += e[t * step].u.n;
        } else {
            acc = e[0].u.n;
            if (kind == R_MIN)
                for (int t = 1; t < len; t++) {
                    double x = e[t * step].u.n;
                    if (x < acc) acc = x;
                }
            else
                for (int t = 1; t < len; t++) {
                    double x = e[t * step].u.n;
                    if (acc < x) acc = x;
                }
        }
        AS_ARR(r)->v[l] = num_val(acc);
    }
    return 1;
}

/* Along axis 1 (down each column: a 1 x n row) or 2 (along each row: an
 * m x 1 column), as Julia's dims keep them, so the result broadcasts
 * back against a (a - max(a, 2)). */
static Value along(int kind, Value a, int axis, const char *fname)
{
    const Storage *s = AS_ARR(a);
    int rows = s->rows, cols = s->cols;
    int lines = axis == 1 ? cols : rows, len = axis == 1 ? rows : cols;
    Value r = axis == 1 ? mat_new(1, cols) : mat_new(rows, 1);
    if (along_plain(kind, s, axis, r)) {
        AS_ARR(r)->known = KNOWN_CONSTS;      /* numbers that record nothing */
        return r;
    }
    if (kind == R_SUM && sum_lines(s, axis, r)) return r;
    for (int l = 0; l < lines; l++) {
        /* a row's logsumexp where the row is, when it is plain float64 numbers */
        if (kind == R_LSE && axis == 2 && len > 0 && eval_fast_paths && G->num.backend == BK_F64
            && lse_elements(s->v + (long)l * cols, (uint32_t)len, NULL, &AS_ARR(r)->v[l]))
            continue;
        Value line = value_arr_new(len);
        for (int t = 0; t < len; t++) {
            Value e = s->v[axis == 1 ? (long)t * cols + l : (long)l * cols + t];
            v_retain(e);
            AS_ARR(line)->v[t] = e;
        }
        Value x = reduce_line(kind, line, fname);
        v_release(line);
        AS_ARR(r)->v[l] = x;
    }
    return r;
}

static int axis_of(Value v, const char *fname, const char *hint)
{
    double d = IS_NUMBER(v) ? v_primal(v) : 0;
    if (d != 1 && d != 2)
        err_raise("%s: the axis must be 1 (down the columns) or 2 (along the rows), got %s%s", fname,
                 IS_NUMBER(v) ? value_num_str(d) : value_type_name(v), hint);
    return (int)d;
}

static int reduction(int kind, int argc, Value *argv, const char *fname)
{
    (void)kind;
    if (argc == 2 && !is_mat(argv[0]))
        err_raise("%s(a, axis) needs a matrix a, got %s", fname, mat_describe(argv[0]));
    if (!is_seq(argv[0]))
        err_raise("%s: argument 1 must be an array or a matrix, got %s", fname, value_type_name(argv[0]));
    value_seq_check_numbers(argv[0], fname);
    return argc == 2 ? axis_of(argv[1], fname, "") : 0;
}

Value mat_reduce_axis(int op, Value *argv, const char *fname)
{
    int kind = op == OP_ADD ? R_SUM : op == OP_MAX ? R_MAX : R_MIN;
    char hint[96] = "";
    if (kind != R_SUM && IS_NUMBER(argv[1]))
        snprintf(hint, sizeof hint, " (for the elementwise %s of a matrix and a number write %s(%s, a))",
                 fname, fname, value_num_str(v_primal(argv[1])));
    if (!is_mat(argv[0])) err_raise("%s(a, axis) needs a matrix a, got %s", fname, mat_describe(argv[0]));
    return along(kind, argv[0], axis_of(argv[1], fname, hint), fname);
}

Value mat_mean(int argc, Value *argv)
{
    int axis = reduction(R_MEAN, argc, argv, "mean");
    return axis ? along(R_MEAN, argv[0], axis, "mean") : mean_of(argv[0]);
}

Value mat_logsumexp(int argc, Value *argv)
{
    int axis = reduction(R_LSE, argc, argv, "logsumexp");
    return axis ? along(R_LSE, argv[0], axis, "logsumexp") : logsumexp_of(argv[0]);
}

/* argmin and argmax: the index (from 0) of the element min or max
 * returns (arith_fold's comparisons: a later element wins only when it is
 * strictly smaller, or larger, so a tie keeps the first), one per line
 * along an axis. An index is a constant: primal values are compared and
 * nothing is recorded, as a comparison's true or false is not. */
static int better(int op, double x, double best)
{
    if (G->num.backend == BK_F64) return op == OP_MIN ? x < best : best < x;
    return op == OP_MIN ? num_less(x, best) : num_less(best, x);
}

/* argmin or argmax of every element of a (an array or a view), all plain
 * numbers, in float64: the general loop's comparisons in one pass by
 * pointer and stride, the check for numbers folded in (ht's plan calls it
 * on a row view a vertex, whose storage is not known as numbers: the
 * check alone was ~440 instructions for 22 elements, the seq_at loop
 * ~670). 0 (nothing done) if an element is not a number: the general
 * path then checks and raises, or takes the primal values. */
static int arg_extreme_plain(int op, Value a, int *out)
{
    int n = seq_len(a);
    if (!eval_fast_paths || G->num.backend != BK_F64 || n == 0) return 0;
    const Value *e;
    long stride;
    if (a.t == V_ARR) {
        e = AS_ARR(a)->v;
        stride = 1;
    } else {
        const View *w = AS_VIEW(a);
        e = w->s->v + w->start;
        stride = w->stride;
    }
    int other = e[0].t != V_NUM, best = 0;
    double bv = e[0].u.n;
    for (int i = 1; i < n; i++) {
        const Value *x = &e[i * stride];
        other |= x->t != V_NUM;
        if (op == OP_MIN ? x->u.n < bv : bv < x->u.n) best = i, bv = x->u.n;
    }
    if (other) return 0;
    *out = best;
    return 1;
}

static Value arg_extreme(int op, int argc, Value *argv, const char *fname)
{
    Value a = argv[0];
    if (!is_seq(a)) err_raise("%s: argument 1 must be an array or a matrix, got %s", fname, value_type_name(a));
    int plain_best;
    if (argc == 1 && arg_extreme_plain(op, a, &plain_best)) return num_val(num_round(plain_best));
    value_seq_check_numbers(a, fname);
    if (argc == 1) {
        int n = seq_len(a), best = 0;
        if (n == 0) err_raise("%s of an empty array", fname);
        double bv = v_primal(*seq_at(a, 0));
        for (int i = 1; i < n; i++) {
            double x = v_primal(*seq_at(a, i));
            if (better(op, x, bv)) best = i, bv = x;
        }
        return num_val(num_round(best));
    }
    if (!is_mat(a)) err_raise("%s(a, axis) needs a matrix a, got %s", fname, mat_describe(a));
    int axis = axis_of(argv[1], fname, "");
    const Storage *s = AS_ARR(a);
    int rows = s->rows, cols = s->cols;
    int lines = axis == 1 ? cols : rows, len = axis == 1 ? rows : cols;
    long step = axis == 1 ? cols : 1, next = axis == 1 ? 1 : cols;
    if (len == 0 && lines > 0) err_raise("%s of an empty array", fname);
    Value r = axis == 1 ? mat_new(1, cols) : mat_new(rows, 1);
    if (eval_fast_paths && (s->known & KNOWN_NOHEAP) && G->num.backend == BK_F64 && len > 0) {
        /* numbers in doubles (kmeans' nearest centroids): better's
         * comparisons, the first of equal ones kept, one loop a line */
        for (int l = 0; l < lines; l++) {
            const Value *e = s->v + l * next;
            int best = 0;
            double bv = e[0].u.n;
            if (op == OP_MIN) {
                for (int t = 1; t < len; t++)
                    if (e[t * step].u.n < bv) best = t, bv = e[t * step].u.n;
            } else {
                for (int t = 1; t < len; t++)
                    if (bv < e[t * step].u.n) best = t, bv = e[t * step].u.n;
            }
            AS_ARR(r)->v[l] = num_val(num_round(best));
        }
        AS_ARR(r)->known = KNOWN_CONSTS;     /* indices, recording nothing */
        return r;
    }
    for (int l = 0; l < lines; l++) {
        const Value *e = s->v + l * next;
        int best = 0;
        double bv = v_primal(e[0]);
        for (int t = 1; t < len; t++) {
            double x = v_primal(e[t * step]);
            if (better(op, x, bv)) best = t, bv = x;
        }
        AS_ARR(r)->v[l] = num_val(num_round(best));
    }
    AS_ARR(r)->known = KNOWN_CONSTS;
    return r;
}

Value mat_argmin(int argc, Value *argv) { return arg_extreme(OP_MIN, argc, argv, "argmin"); }
Value mat_argmax(int argc, Value *argv) { return arg_extreme(OP_MAX, argc, argv, "argmax"); }

/* ------------------------------------------------------------ builtins */

int mat_dim_arg(Value *argv, int i, const char *fname)
{
    double d = IS_NUMBER(argv[i]) ? v_primal(argv[i]) : -1;
    if (!IS_NUMBER(argv[i]) || d != floor(d) || d < 0 || d > 1e9)
        err_raise("%s: argument %d must be a whole number from 0 to 1e9, got %s", fname, i + 1,
                 IS_NUMBER(argv[i]) ? value_num_str(d) : value_type_name(argv[i]));
    return (int)d;
}

void mat_dims(Value *argv, const char *fname, int *rows, int *cols)
{
    *rows = mat_dim_arg(argv, 0, fname);
    *cols = mat_dim_arg(argv, 1, fname);
    if ((long long)*rows * *cols > INT_MAX)
        err_raise("%s: a %dx%d matrix is too big (at most %d elements)", fname, *rows, *cols, INT_MAX);
}

Value mat_filled(Value *argv, double x, const char *fname)
{
    int rows, cols;
    mat_dims(argv, fname, &rows, &cols);
    /* written once (no zeros first), an element a 16-byte store */
    Storage *s = value_storage_unfilled(rows * cols);
    Value e = num_val(x);
    typedef uint64_t words __attribute__((vector_size(16), aligned(8), may_alias));
    words w, *v = (words *)(void *)s->v;
    memcpy(&w, &e, sizeof w);
    _Pragma("GCC unroll 4")
    for (int i = 0, n = rows * cols; i < n; i++) v[i] = w;
    s->known = KNOWN_CONSTS;
    storage_set_shape(s, 2, rows, cols);
    return obj_val(V_ARR, s);
}
