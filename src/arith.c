/* arith.c: scalar and elementwise arithmetic, and what it records. */
#include <stdio.h>
#include <string.h>
#include "arith.h"
#include "dual.h"
#include "error.h"
#include "kinks.h"
#include "matrix.h"
#include "arrayrun.h"
#include "dualarr.h"
#include "state.h"

uint32_t arith_const_id(double c) { return rec_const(c); }

/* Whether the reverse rule of op reads operand values (so a constant
 * operand must be on the tape). Linear ops (add, sub, neg, copy) only pass
 * adjoints through. */
static inline int needs_operand_values(int op) { return !(num_op_flags[op] & OPF_LINEAR); }

uint32_t arith_record(int op, Value a, Value b, double r)
{
    uint32_t ia = a.id, ib = 0;
    int arity = num_op_arity[op];
    if (arity == 2) ib = b.id;
    if (needs_operand_values(op)) {
        if (!ia) ia = arith_const_id(a.u.n);
        if (arity == 2 && !ib) ib = arith_const_id(b.u.n);
    }
    uint32_t id = rec_op(op, ia, ib, r);
    if ((KINK_OPS >> op) & 1) kink_note_op(op, a.u.n, b.u.n, id);
    return id;
}

__attribute__((flatten)) uint32_t arith_record_add(uint32_t ia, uint32_t ib, double x, double y, double r) { return arith_record_binary(OP_ADD, ia, ib, x, y, r); }
__attribute__((flatten)) uint32_t arith_record_sub(uint32_t ia, uint32_t ib, double x, double y, double r) { return arith_record_binary(OP_SUB, ia, ib, x, y, r); }
__attribute__((flatten)) uint32_t arith_record_mul(uint32_t ia, uint32_t ib, double x, double y, double r) { return arith_record_binary(OP_MUL, ia, ib, x, y, r); }
__attribute__((flatten)) uint32_t arith_record_div(uint32_t ia, uint32_t ib, double x, double y, double r) { return arith_record_binary(OP_DIV, ia, ib, x, y, r); }

Value arith_mul_strong(Value a, Value b)
{
    double x = v_primal(a), y = v_primal(b), r = x * y;
    return arith_num_op(r != r && (x == 0 || y == 0) ? OP_MUL0 : OP_MUL, a, b);
}

const char *arith_op_symbol(int op)
{
    switch (op) {
    case OP_ADD: return "+";
    case OP_SUB: return "-";
    case OP_MUL: return "*";
    case OP_DIV: return "/";
    case OP_POW: return "^";
    case OP_MOD: return "%";
    default: return num_op_names[op];
    }
}

/* An operand of plain_elementwise: e[i * stride], or one number (stride 0). */
typedef struct { const Value *e; long stride; } PlainElems;

/* Whether x (an array or view of n, or a number) is plain float64 numbers
 * that record nothing: every element a number, and none recorded while
 * recording is on (stops at the first recorded one). */
static inline int plain_operand(Value *x, int is_arr, int n, PlainElems *pe)
{
    if (!is_arr) {
        *pe = (PlainElems){ x, 0 };
        return x->t == V_NUM && !(x->id && G->tape.recording);
    }
    Storage *st = storage_of(*x);
    if (x->t == V_ARR) *pe = (PlainElems){ st->v, 1 };
    else {
        const View *w = AS_VIEW(*x);
        *pe = (PlainElems){ st->v + w->start, w->stride };
    }
    int rec = G->tape.recording;
    value_known_check(st);
    if (st->known == KNOWN_CONSTS || (st->known && !rec)) return 1;     /* numbers, and none records */
    /* one pass without branches on locals (pe's fields not read again an
     * element): a recorded operand mostly stopped above, at its first,
     * and an array of duals (forward mode) stops here at its first */
    const Value *e = pe->e;
    long stride = pe->stride;
    if (n > 0 && e->t != V_NUM) return 0;
    uint32_t ids = 0;
    unsigned others = 0;
    for (int i = 0; i < n; i++, e += stride) {
        others |= e->t ^ V_NUM;
        ids |= e->id;
    }
    if (others || (ids && rec)) return 0;
    if (x->t == V_ARR) st->known = ids ? KNOWN_NOHEAP : KNOWN_CONSTS;    /* learnt */
    return 1;
}

/* x % y (floor modulo) when both are whole numbers below 2^53, x >= 0
 * and y > 0: exact in integers, as fmod is exact (index arithmetic such
 * as range(n) % k); otherwise num_apply_f64's. */
static inline double plain_mod(double x, double y)
{
    if (x >= 0 && y > 0 && x < 9007199254740992.0 && y < 9007199254740992.0) {
        int64_t a = (int64_t)x, b = (int64_t)y;
        if ((double)a == x && (double)b == y) return (double)(a % b);
    }
    return num_apply_f64(OP_MOD, x, y);
}

/* r[i] = ea[i * sa] % y, i < n, for one whole y in (0, 2^53) (range(n)
 * % k, GradBench's index arithmetic): plain_mod's values, y's half of its
 * test taken once. */
static void plain_mod_by(const Value *ea, long sa, double y, Value *r, int n)
{
    int64_t b = (int64_t)y;
    for (int i = 0; i < n; i++) {
        double x = ea[i * sa].u.n;
        int whole = x >= 0 && x < 9007199254740992.0 && (double)(int64_t)x == x;
        r[i] = num_val(whole ? (double)((int64_t)x % b) : num_apply_f64(OP_MOD, x, y));
    }
}

/* r[i] = op(ea[i * sa], eb[i * sb]) of plain numbers, i < n, by
 * num_apply_f64_n: its switch taken once a chunk, not apply_double's once
 * an element, and exp and sigmoid two elements at a time (wm_exp_n; the
 * same bits as num_apply_f64's). The numbers go in and come out a chunk at
 * a time through buffers on the stack. */
static __attribute__((noinline)) void plain_apply_n(int op, const Value *ea, long sa, const Value *eb, long sb, Value *r, int n)
{
    enum { CHUNK = 256 };
    double x[CHUNK], y[CHUNK], z[CHUNK];
    int unary = num_op_arity[op] < 2;
    for (int c = 0; c < n; c += CHUNK) {
        int m = n - c < CHUNK ? n - c : CHUNK;
        const Value *pa = ea + c * sa, *pb = eb + c * sb;
        for (int j = 0; j < m; j++) x[j] = pa[j * sa].u.n;
        if (!unary)
            for (int j = 0; j < m; j++) y[j] = pb[j * sb].u.n;
        num_apply_f64_n(op, x, 1, unary ? x : y, 1, z, (uint32_t)m);
        for (int j = 0; j < m; j++) r[c + j] = num_val(z[j]);
    }
}

/* The storage of v, an operand of n elements, if the result may be
 * written over it in place: the caller drops v unread (arith_apply_last),
 * v is an array that alone holds its storage (rc 1: no variable, view,
 * version or saved state counts it), not a matrix (its shape would stay),
 * and its elements are plain numbers that record nothing (plain_operand
 * said so: KNOWN_CONSTS once it has looked). NULL otherwise. */
static Storage *temporary_to_reuse(Value v, int n)
{
    if (v.t != V_ARR) return NULL;
    Storage *s = AS_ARR(v);
    return s->h.rc == 1 && !s->aliased && s->ndim != 2 && s->n == n && s->known == KNOWN_CONSTS ? s : NULL;
}

/* The result's storage of plain numbers: the temporary taken over (one
 * more reference: the caller's release of the operand leaves the
 * result's; no longer fresh), or NULL: a new one, its elements unwritten. */
static Storage *result_storage(Storage *reused, int n)
{
    if (reused) {
        reused->h.rc++;
        reused->fresh = 0;
    } else
        reused = value_storage_unfilled(n);
    reused->known = KNOWN_CONSTS;
    return reused;
}

/* op over plain numbers (nothing recorded, nothing to record) in float64:
 * what the element loop below computes, num_apply's value for each pair,
 * in one tight loop (GradBench's primals are such array code on
 * constants). 0 if it does not apply. */
static int plain_elementwise(int op, Value a, Value b, int na, int nb, int n, Value *out, int reuse)
{
    int unary = num_op_arity[op] < 2;
    PlainElems pa, pb;
    if (!eval_fast_paths || G->num.backend != BK_F64 || num_op_arity[op] < 1 || n < 1) return 0;
    /* a recorded operand's first element is mostly recorded: no scan of
     * the other (a constant array meeting a recorded one) to find out */
    if (G->tape.recording && ((na >= 0 ? seq_at(a, 0) : &a)->id || (!unary && (nb >= 0 ? seq_at(b, 0) : &b)->id)))
        return 0;
    if (!plain_operand(&a, na >= 0, n, &pa)) return 0;
    if (unary) pb = pa;
    else if (!plain_operand(&b, nb >= 0, n, &pb)) return 0;
    /* a temporary operand takes the result (each element is read before
     * its own is written: in place is safe); the caller's release of it
     * leaves the result's reference */
    Storage *rs = reuse ? temporary_to_reuse(a, n) : NULL;
    if (!rs && reuse && !unary) rs = temporary_to_reuse(b, n);
    rs = result_storage(rs, n);
    *out = obj_val(V_ARR, rs);
    Value *r = rs->v;
    long sa = pa.stride, sb = pb.stride;
    const Value *ea = pa.e, *eb = pb.e;
    /* unit strides and a number on either side apart: the compiler makes
     * those loops tight */
#define PLAIN_LOOP(expr) \
    if (sa == 1 && sb == 1) PLAIN_STRIDED(1, 1, expr) \
    else if (sa == 1 && sb == 0) PLAIN_STRIDED(1, 0, expr) \
    else if (sa == 0 && sb == 1) PLAIN_STRIDED(0, 1, expr) \
    else PLAIN_STRIDED(sa, sb, expr)
#define PLAIN_STRIDED(SA, SB, expr) \
    _Pragma("GCC unroll 4") for (int i = 0; i < n; i++) { double x = ea[i * (SA)].u.n, y = eb[i * (SB)].u.n; (void)y; r[i] = num_val(expr); }
    switch (op) {
    case OP_ADD: PLAIN_LOOP(x + y); break;
    case OP_SUB: PLAIN_LOOP(x - y); break;
    case OP_MUL: PLAIN_LOOP(x * y); break;
    case OP_DIV: PLAIN_LOOP(x / y); break;
    case OP_NEG: PLAIN_LOOP(-x); break;
    case OP_MOD:
        if (sb == 0 && eb->u.n > 0 && eb->u.n < 9007199254740992.0 && eb->u.n == (double)(int64_t)eb->u.n)
            plain_mod_by(ea, sa, eb->u.n, r, n);
        else
            PLAIN_LOOP(plain_mod(x, y));
        break;
    default: plain_apply_n(op, ea, sa, eb, sb, r, n); break;
    }
#undef PLAIN_LOOP
#undef PLAIN_STRIDED
    return 1;
}

static Value elementwise_rest(int op, Value a, Value b, int na, int nb, int n);

/* Elements i of a and b (arrays, views, numbers; a matrix as its
 * elements row by row), in a new array, or (reuse) over a temporary
 * operand's storage: temporary_to_reuse. */
static Value elementwise_flat(int op, Value a, Value b, int reuse)
{
    int unary = num_op_arity[op] < 2;
    int na = is_seq(a) ? seq_len(a) : -1, nb = (!unary && is_seq(b)) ? seq_len(b) : -1;
    if (na >= 0 && nb >= 0 && na != nb)
        err_raise("length mismatch in '%s': %d and %d elements", arith_op_symbol(op), na, nb);
    int n = na >= 0 ? na : nb;
    Value r;
    if (plain_elementwise(op, a, b, na, nb, n, &r, reuse)) return r;
    if (!G->fwd.top && arrayrun_elementwise(op, a, b, na, nb, n, &r)) return r;    /* (forward mode: below, after its own) */
    return elementwise_rest(op, a, b, na, nb, n);
}

/* elementwise_flat past the plain loop and (outside forward mode) the
 * array runs: duals, then element by element. Apart (not inlined) so that
 * the common cases, lstm's many short arrays, set up no frame for this
 * one's locals. */
static __attribute__((noinline)) Value elementwise_rest(int op, Value a, Value b, int na, int nb, int n)
{
    int unary = num_op_arity[op] < 2;
    Value r;
    if (G->fwd.top && dual_elementwise(op, a, b, na, nb, n, &r)) return r;   /* forward mode's arrays */
    if (G->fwd.top && arrayrun_elementwise(op, a, b, na, nb, n, &r)) return r;
    if (fwd_add_sub(op, a, b, na, nb, n, &r)) return r;       /* constants and duals */
    char what[16];
    snprintf(what, sizeof what, unary ? "%s" : "'%s'", arith_op_symbol(op));
    if (na >= 0) value_seq_check_numbers(a, what);
    if (nb >= 0) value_seq_check_numbers(b, what);
    r = value_arr_new(n);
    Storage *s = AS_ARR(r);
    /* A constant scalar meeting recorded elements goes on the tape once,
     * not once per element. */
    Value scalar = na < 0 ? a : b;
    int const_scalar = !unary && (na < 0 || nb < 0) && scalar.t == V_NUM && scalar.id == 0
                       && needs_operand_values(op);
    int nums = 1;
    for (int i = 0; i < n; i++) {
        Value x = na >= 0 ? *seq_at(a, i) : a;
        Value y = unary ? b : nb >= 0 ? *seq_at(b, i) : b;
        Value *other = na >= 0 ? &x : &y;
        if (const_scalar && other->t == V_NUM && other->id && G->tape.recording) {
            if (!scalar.id) scalar.id = arith_const_id(scalar.u.n);
            if (na < 0) x = scalar;
            else y = scalar;
        }
        s->v[i] = arith_num_op(op, x, y);
        nums &= s->v[i].t == V_NUM;
    }
    s->known = nums ? KNOWN_NOHEAP : 0;
    return r;
}

Value arith_elementwise_flat(int op, Value a, Value b) { return elementwise_flat(op, a, b, 0); }

/* Matrices carry a shape that decides which elements meet (matrix.c). */
static Value elementwise(int op, Value a, Value b)
{
    if (is_mat(a) || (num_op_arity[op] >= 2 && is_mat(b))) return mat_elementwise(op, a, b);
    return arith_elementwise_flat(op, a, b);
}

Value arith_apply_last(int op, Value a, Value b)
{
    if (num_op_arity[op] >= 2 && is_seq(a) && !is_mat(a) && (is_seq(b) || IS_NUMBER(b)) && !is_mat(b))
        return elementwise_flat(op, a, b, 1);
    if (num_op_arity[op] >= 2 && IS_NUMBER(a) && is_seq(b) && !is_mat(b))
        return elementwise_flat(op, a, b, 1);
    return arith_apply(op, a, b);
}

Value arith_apply(int op, Value a, Value b)
{
    int unary = num_op_arity[op] < 2;
    if (IS_NUMBER(a) && (unary || IS_NUMBER(b))) return arith_num_op(op, a, b);
    if ((is_seq(a) || IS_NUMBER(a)) && (unary || is_seq(b) || IS_NUMBER(b)))
        return elementwise(op, a, b);
    if (unary) err_raise("%s expects a number or an array, got %s", num_op_names[op], value_type_name(a));
    err_raise("cannot apply '%s' to %s and %s", arith_op_symbol(op), value_type_name(a), value_type_name(b));
}

/* ---------------------------------------------------------- reductions */

/* sum and dot record one n-ary entry, not n - 1 additions; in posit
 * backends they accumulate in the quire and round once. */
static int any_dual(Value a)
{
    if (seq_noheap(a)) return 0;
    for (int i = 0, n = seq_len(a); i < n; i++)
        if (seq_at(a, i)->t == V_DUAL) return 1;
    return 0;
}

Value arith_fold(int op, Value a, const char *fname)
{
    int n = seq_len(a);
    if (n == 0) err_raise("%s of an empty array", fname);
    Value acc = *seq_at(a, 0);
    v_retain(acc);
    for (int i = 1; i < n; i++) {
        Value r = arith_num_op(op, acc, *seq_at(a, i));
        v_release(acc);
        acc = r;
    }
    return acc;
}

/* The recorded sum s of a's n elements: one entry over a run of
 * consecutive entries (an array one loop or one vector op wrote: no
 * list), else over the list of them. run: the caller knows (0 or 1), or
 * -1: look. */
static Value recorded_sum(Value a, int n, double s, int run)
{
    uint32_t first = seq_at(a, 0)->id;
    if (run < 0) {
        run = 1;
        for (int i = 1; i < n && run; i++) run = seq_at(a, i)->id == first + (uint32_t)i;
    }
    if (run && first != 0 && n >= 2) return num_rec(s, tape_rec_sum_run(first, (uint32_t)n, s));
    uint32_t off, *terms = tape_rec_operands((uint32_t)n, &off);
    for (int i = 0; i < n; i++) terms[i] = seq_at(a, i)->id;
    return num_rec(s, tape_rec_sum(off, (uint32_t)n, s));
}

int arith_sum_plain(Value a, Value *out)
{
    if (!eval_fast_paths || a.t != V_ARR || G->num.backend != BK_F64 || AS_ARR(a)->n == 0) return 0;
    const Storage *st = AS_ARR(a);
    const Value *e = st->v;
    int n = st->n;
    uint32_t first = e[0].id, ids = 0;
    int run = 1;
    double s = 0;
    for (int i = 0; i < n; i++) {
        if (e[i].t != V_NUM) return 0;
        s += e[i].u.n;
        ids |= e[i].id;
        run &= e[i].id == first + (uint32_t)i;
    }
    *out = !ids || !G->tape.recording ? num_val(s) : recorded_sum(a, n, s, run);
    return 1;
}

Value arith_sum(Value a)
{
    int n = seq_len(a);
    if (n == 0) return num_val(0);
    Value r;
    if (arith_sum_plain(a, &r)) return r;
    if (any_dual(a)) {
        if (fwd_quire_seq(a, nil_val(), n, &r)) return r;     /* posits: the quire, as below */
        return arith_fold(OP_ADD, a, "sum");
    }
    NumAcc q;
    num_acc_clear(&q);
    int recorded = 0;
    double s = 0;
    for (int i = 0; i < n; i++) {
        Value *e = seq_at(a, i);
        recorded |= e->id != 0;
        if (G->num.backend == BK_F64) s += e->u.n;
        else num_acc_add(&q, e->u.n);
    }
    if (G->num.backend != BK_F64) s = num_acc_result(&q);
    if (!recorded || !G->tape.recording) return num_val(s);
    return recorded_sum(a, n, s, -1);
}

Value arith_dot(Value a, Value b)
{
    int n = seq_len(a);
    if (seq_len(b) != n) err_raise("dot: length mismatch: %d and %d elements", n, seq_len(b));
    if (any_dual(a) || any_dual(b)) {
        Value d;
        if (fwd_dot(a, b, n, &d)) return d;      /* whole dots, the same values */
        if (fwd_quire_seq(a, b, n, &d)) return d;     /* posits: the quire, as below */
        /* the products flat, pair by pair, as the numbers' loop below
         * pairs them (a 2x2 matrix against an array of 4 is a dot of 4:
         * a matrix's shape does not decide which elements meet here) */
        Value p = arith_elementwise_flat(OP_MUL, a, b);
        Value r = n ? arith_fold(OP_ADD, p, "dot") : num_val(0);
        v_release(p);
        return r;
    }
    NumAcc q;
    num_acc_clear(&q);
    int recorded = 0;
    double s = 0;
    if (G->num.backend == BK_F64 && n > 0) {
        /* the elements by pointer and stride (no seq_at an element): the
         * same sum in the same order */
        const Value *x = seq_at(a, 0), *y = seq_at(b, 0);
        long sx = a.t == V_ARR ? 1 : AS_VIEW(a)->stride, sy = b.t == V_ARR ? 1 : AS_VIEW(b)->stride;
        uint32_t ids = 0;
        for (int i = 0; i < n; i++, x += sx, y += sy) {
            ids |= x->id | y->id;
            s += x->u.n * y->u.n;
        }
        recorded = ids != 0;
    } else {
        for (int i = 0; i < n; i++) {
            Value *x = seq_at(a, i), *y = seq_at(b, i);
            recorded |= (x->id | y->id) != 0;
            if (G->num.backend == BK_F64) s += x->u.n * y->u.n;
            else num_acc_fma(&q, x->u.n, y->u.n);
        }
        if (G->num.backend != BK_F64) s = num_acc_result(&q);
    }
    if (!recorded || !G->tape.recording) return num_val(s);
    uint32_t off, *pairs = tape_rec_operands(2 * (uint32_t)n, &off);
    for (int i = 0; i < n; i++) {
        Value *x = seq_at(a, i), *y = seq_at(b, i);
        pairs[2 * i] = x->id ? x->id : arith_const_id(x->u.n);
        pairs[2 * i + 1] = y->id ? y->id : arith_const_id(y->u.n);
    }
    return num_rec(s, tape_rec_dot(off, (uint32_t)n, s));
}

/* ------------------------------------------- fused arithmetic over arrays */

/* An arithmetic tree (fuse.c finds it in the program: ode's
 * y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6) evaluated element by element
 * in one pass, a chunk of elements at a time, when every array among its
 * leaves is plain numbers that record nothing: each element's value the
 * same formula, in the same order, as the tree's operations one array at
 * a time would give it (each operation rounds the same two doubles), but
 * no array made, written and read back between them. Numbers (subtrees
 * of numbers only) are computed once, as the unfused tree computes them. */
enum { FUSE_DEPTH = 6, FUSE_CHUNK = 256 };

/* an operand while a chunk is computed: a number, an array's elements
 * (unit stride), or a chunk of doubles computed already */
enum { FK_NUM, FK_ELEMS, FK_BUF };
typedef struct { int kind; double num; const Value *e; double *buf; } FuseOperand;

/* Two doubles in one register: the loops below compute two elements an
 * instruction (each lane rounds as the scalar operation does: the same
 * bits), reading a chunk's doubles two at a time. */
typedef double fuse_v2 __attribute__((vector_size(16)));
static inline fuse_v2 fuse_load2(const double *p) { fuse_v2 v; memcpy(&v, p, sizeof v); return v; }
static inline void fuse_store2(double *p, fuse_v2 v) { memcpy(p, &v, sizeof v); }

/* z[j] (a chunk) or r[j] (the result's elements) = x op y, j < m: two
 * elements at a time, the last of an odd m alone */
static void fuse_apply(int op, const FuseOperand *X, const FuseOperand *Y, int m, double *z, Value *r)
{
    /* (the operands by pointer, read a field at a time: a struct passed
     * by value was stored a field at a time and loaded 16 bytes at once,
     * a store-forwarding stall an operation) */
    const Value *xe = X->e, *ye = Y->e;
    const double *xb = X->buf, *yb = Y->buf;
    double xn = X->num, yn = Y->num;
    int kinds = X->kind * 3 + Y->kind;
    fuse_v2 xn2 = { xn, xn }, yn2 = { yn, yn };
#define FUSE_AT_N(p, j) p##n
#define FUSE_AT_E(p, j) p##e[j].u.n
#define FUSE_AT_B(p, j) p##b[j]
#define FUSE_AT2_N(p, j) p##n2
#define FUSE_AT2_E(p, j) ((fuse_v2){ p##e[j].u.n, p##e[(j) + 1].u.n })
#define FUSE_AT2_B(p, j) fuse_load2(p##b + (j))
#define FUSE_TO_BUF(j, v) z[j] = (v)
#define FUSE_TO_VAL(j, v) r[j] = num_val(v)
#define FUSE_TO_BUF2(j, v) fuse_store2(z + (j), (v))
#define FUSE_TO_VAL2(j, v) do { fuse_v2 w_ = (v); r[j] = num_val(w_[0]); r[(j) + 1] = num_val(w_[1]); } while (0)
#define FUSE_LOOP(KX, KY, EXPR, STORE)                                                              \
    do {                                                                                            \
        int j = 0, pairs = m / 2;                                                                   \
        _Pragma("GCC unroll 4") for (int k = 0; k < pairs; k++) {                                   \
            fuse_v2 x = FUSE_AT2_##KX(x, 2 * k), y = FUSE_AT2_##KY(y, 2 * k);                       \
            (void)y;                                                                                \
            STORE##2(2 * k, EXPR);                                                                  \
        }                                                                                           \
        j = 2 * pairs;                                                                              \
        if (j < m) {                                                                                \
            double x = FUSE_AT_##KX(x, j), y = FUSE_AT_##KY(y, j);                                  \
            (void)y;                                                                                \
            STORE(j, EXPR);                                                                         \
        }                                                                                           \
    } while (0)
#define FUSE_OPS(KX, KY, STORE)                                    \
    switch (op) {                                                  \
    case OP_ADD: FUSE_LOOP(KX, KY, x + y, STORE); break;          \
    case OP_SUB: FUSE_LOOP(KX, KY, x - y, STORE); break;          \
    case OP_MUL: FUSE_LOOP(KX, KY, x * y, STORE); break;          \
    case OP_DIV: FUSE_LOOP(KX, KY, x / y, STORE); break;          \
    default: FUSE_LOOP(KX, KY, -x, STORE); break;                 \
    }
#define FUSE_KINDS(STORE)                                                    \
    switch (kinds) {                                                         \
    case FK_NUM * 3 + FK_ELEMS: FUSE_OPS(N, E, STORE) break;                 \
    case FK_NUM * 3 + FK_BUF: FUSE_OPS(N, B, STORE) break;                   \
    case FK_ELEMS * 3 + FK_NUM: FUSE_OPS(E, N, STORE) break;                 \
    case FK_ELEMS * 3 + FK_ELEMS: FUSE_OPS(E, E, STORE) break;               \
    case FK_ELEMS * 3 + FK_BUF: FUSE_OPS(E, B, STORE) break;                 \
    case FK_BUF * 3 + FK_NUM: FUSE_OPS(B, N, STORE) break;                   \
    case FK_BUF * 3 + FK_ELEMS: FUSE_OPS(B, E, STORE) break;                 \
    default: FUSE_OPS(B, B, STORE) break;                                    \
    }
    if (z) FUSE_KINDS(FUSE_TO_BUF)
    else FUSE_KINDS(FUSE_TO_VAL)
#undef FUSE_AT_N
#undef FUSE_AT_E
#undef FUSE_AT_B
#undef FUSE_AT2_N
#undef FUSE_AT2_E
#undef FUSE_AT2_B
#undef FUSE_TO_BUF
#undef FUSE_TO_VAL
#undef FUSE_TO_BUF2
#undef FUSE_TO_VAL2
#undef FUSE_LOOP
#undef FUSE_OPS
#undef FUSE_KINDS
}

/* x op y of two numbers: the unfused tree's number (plain float64) */
static double fuse_num(int op, double x, double y)
{
    switch (op) {
    case OP_ADD: return x + y;
    case OP_SUB: return x - y;
    case OP_MUL: return x * y;
    case OP_DIV: return x / y;
    default: return -x;
    }
}

/* The leaves checked: arrays (no matrix) and views of n plain numbers,
 * at least one; numbers that record nothing. 0 otherwise. Every leaf's
 * kind, length and (recording) first element before any array's elements
 * are looked at: a recorded array's first is mostly recorded
 * (plain_elementwise's test), and a gradient's tree declines at once,
 * before scanning an array of constants beside it. */
static int fuse_leaves_plain(Value *vals, int nl, PlainElems *pe, int *n)
{
    int rec = G->tape.recording, arrays = 0;
    *n = -1;
    for (int i = 0; i < nl; i++) {
        Value *v = &vals[i];
        if (v->t == V_NUM) {
            if (v->id && rec) return 0;
            pe[i] = (PlainElems){ v, 0 };
            continue;
        }
        if (!is_seq(*v) || is_mat(*v)) return 0;
        int len = seq_len(*v);
        if ((*n >= 0 && len != *n) || len < 1) return 0;     /* the general path's error */
        if (rec && seq_at(*v, 0)->id) return 0;
        *n = len;
        arrays++;
    }
    if (!arrays) return 0;
    for (int i = 0; i < nl; i++)
        if (vals[i].t != V_NUM && !plain_operand(&vals[i], 1, *n, &pe[i])) return 0;
    return 1;
}

/* The chunk c .. c + m - 1 of a leaf's elements as an operand: in place
 * (unit stride), else gathered into buf */
static FuseOperand fuse_leaf_chunk(const Value *v, const PlainElems *pe, int c, int m, double *buf)
{
    if (v->t == V_NUM) return (FuseOperand){ FK_NUM, v->u.n, NULL, NULL };
    if (pe->stride == 1) return (FuseOperand){ FK_ELEMS, 0, pe->e + c, NULL };
    const Value *e = pe->e + c * pe->stride;
    for (int j = 0; j < m; j++) buf[j] = e[j * pe->stride].u.n;
    return (FuseOperand){ FK_BUF, 0, NULL, buf };
}

int arith_fused(const ArithFuseItem *prog, int np, Value *vals, int nl, int reuse_first, Value *out)
{
    PlainElems pe[ARITH_FUSE_LEAVES];
    int n;
    if (!eval_fast_paths || G->num.backend != BK_F64 || np > ARITH_FUSE_ITEMS || nl > ARITH_FUSE_LEAVES) return 0;
    if (!fuse_leaves_plain(vals, nl, pe, &n)) return 0;
    /* the stack's depth, and each operation's operands: numbers folded
     * once here, as the unfused tree computes them before their array */
    int depth = 0, maxd = 0;
    for (int i = 0; i < np; i++) {
        depth += prog[i].leaf ? 1 : prog[i].op == OP_NEG ? 0 : -1;
        if (depth > maxd) maxd = depth;
    }
    if (maxd > FUSE_DEPTH || depth != 1) return 0;
    /* the first leaf, a temporary, takes the result (each element is read
     * before its own is written); else a new array */
    Storage *rs = result_storage(reuse_first ? temporary_to_reuse(vals[0], n) : NULL, n);
    double bufs[FUSE_DEPTH][FUSE_CHUNK];   /* an operation's chunk at its place on the stack (in place over x's) */
    for (int c = 0; c < n; c += FUSE_CHUNK) {
        int m = n - c < FUSE_CHUNK ? n - c : FUSE_CHUNK;
        FuseOperand st[FUSE_DEPTH];
        int sp = 0;
        for (int i = 0; i < np; i++) {
            const ArithFuseItem *it = &prog[i];
            if (it->leaf) {
                st[sp] = fuse_leaf_chunk(&vals[it->index], &pe[it->index], c, m, bufs[sp]);
                sp++;
                continue;
            }
            int unary = it->op == OP_NEG;
            FuseOperand X = st[sp - (unary ? 1 : 2)], Y = unary ? X : st[sp - 1];
            sp -= unary ? 1 : 2;
            if (X.kind == FK_NUM && Y.kind == FK_NUM) {
                st[sp++] = (FuseOperand){ FK_NUM, fuse_num(it->op, X.num, Y.num), NULL, NULL };
                continue;
            }
            int last = i == np - 1;
            double *z = last ? NULL : bufs[sp];
            fuse_apply(it->op, &X, &Y, m, z, last ? rs->v + c : NULL);
            st[sp++] = (FuseOperand){ FK_BUF, 0, NULL, z };
        }
    }
    *out = obj_val(V_ARR, rs);
    return 1;
}
