/* threaded.c: closure-threaded evaluation.
 *
 * Why: the tree walker dispatched every node through a switch on its kind,
 * then asked again, at run time, what was already known when the chunk was
 * resolved (is this name a local? a captured one? which operator?). On
 * scalar code (GradBench's det, the W benchmarks) that re-asking was most
 * of the work. Here each node gets, once, after resolution, the C function
 * that evaluates it (Node.ev) or runs it as a statement (Node.ex), picked
 * from its static facts: a local's read, a number literal, a sum of two
 * plain numbers, an element of a captured array, an assignment to a local.
 * Each special function handles only the values it expects (plain float64
 * numbers, nothing to record) and hands anything else to eval.c's general
 * path, which does what it always did: errors, duals, arrays, recording,
 * versions, checkpointed loops and nograd are all eval.c's, unchanged.
 *
 * A special function must therefore compute exactly what the general path
 * would for the values it accepts, and must evaluate each child at most
 * once before handing over (the general entry points take the evaluated
 * operands or index). */
#include "fuse.h"
#include "threaded.h"
#include "eval.h"
#include "arith.h"
#include "versions.h"
#include "error.h"
#include "state.h"
#include "valuegc.h"
#include "tapegc.h"
#include "evalstore.h"

#define EV(n, env) ((n)->ev((n), (env)))
#define EX(n, env) ((n)->ex((n), (env)))
#define LIKELY(x) __builtin_expect(!!(x), 1)

/* (whole_index, the test of an index of n plain elements: evalstore.h) */

/* Leaves a parent reads in place, without a call (Node.leaf): what
 * ev_local, ev_upval1 and ev_num do, inline (leaf_read). */
enum { LEAF_NONE, LEAF_LOCAL, LEAF_UPVAL1, LEAF_NUM, LEAF_GLOBAL };


/* ---------------------------------------------------------- expressions */

static Value ev_num(Node *n, Env *env)
{
    if (LIKELY(G->num.backend == BK_F64)) return num_val(n->num);
    return eval_expr_switch(n, env);
}

/* Names: a number is read in place; anything else (an array, a closure's
 * captured number that read_var must label) by the general path. */
/* read_var's whole work for a local or global that holds no number (an
 * array, forward mode's duals), without eval_expr_switch's way there; apart,
 * so that the number's path stays as short as it was */
static __attribute__((noinline)) Value ev_var_held(Node *n, Env *env, const Value *s)
{
    if (s->t == V_UNDEF) return eval_expr_switch(n, env);   /* its error */
    v_retain(*s);
    return *s;
}

static Value ev_local(Node *n, Env *env)
{
    const Value *s = &env->slots[n->slot];
    if (LIKELY(s->t == V_NUM)) return *s;
    return ev_var_held(n, env, s);
}

static Value ev_upval1(Node *n, Env *env)
{
    const Env *home = env->parent;
    const Value *s = &home->slots[n->slot];
    if (LIKELY(s->t == V_NUM) && (!s->id || home->vers)) return *s;
    return eval_expr_switch(n, env);
}

static Value ev_global(Node *n, Env *env)
{
    const Value *s = &G->eval.globals[n->slot].v;
    if (LIKELY(s->t == V_NUM)) return *s;
    return ev_var_held(n, env, s);
}

/* A leaf's number read in place (kind: the node's leaf): 0 if it holds
 * anything else, or is a literal of another backend, or a captured number
 * read_var must label. Nothing is evaluated then. */
static inline __attribute__((always_inline)) int leaf_read(const Node *c, Env *env, int kind, double *x, uint32_t *id)
{
    const Value *s;
    if (kind == LEAF_NUM) {
        if (!LIKELY(G->num.backend == BK_F64)) return 0;
        *x = c->num;
        *id = 0;
        return 1;
    }
    if (kind == LEAF_LOCAL) s = &env->slots[c->slot];
    else if (kind == LEAF_GLOBAL) s = &G->eval.globals[c->slot].v;
    else {
        const Env *home = env->parent;
        s = &home->slots[c->slot];
        if (s->id && !home->vers) return 0;
    }
    if (s->t != V_NUM) return 0;
    *x = s->u.n;
    *id = s->id;
    return 1;
}

static inline Value num_id(double x, uint32_t id)
{
    Value v = num_val(x);
    v.id = id;
    return v;
}

/* x op y of which one is recorded while recording, in float64: num_op's
 * work with the op known (arith_record_binary inline: one call per
 * recorded operation, not two); another backend: num_op. */
/* (flatten: the tape's push inline here whatever the compiler's budget;
 * another backend's num_op out of line, in recorded_other) */
static __attribute__((noinline)) Value recorded_other(int op, Value a, Value b) { return num_op(op, a, b); }
#define RECORDED(name, OPC, expr)                                                                    \
    static __attribute__((noinline, flatten)) Value name(Value a, Value b)                           \
    {                                                                                                \
        if (!LIKELY(G->num.backend == BK_F64) || !G->tape.recording) return recorded_other(OPC, a, b); \
        double x = a.u.n, y = b.u.n, r = expr;                                                       \
        return num_rec(r, arith_record_binary(OPC, a.id, b.id, x, y, r));                            \
    }
RECORDED(recorded_add, OP_ADD, x + y)
RECORDED(recorded_sub, OP_SUB, x - y)
RECORDED(recorded_mul, OP_MUL, x * y)
RECORDED(recorded_div, OP_DIV, x / y)

/* x op y of two numbers read or evaluated (ia, ib: their entries), as
 * binop_t makes it: plain float64 when nothing is to be recorded, else
 * recorded, or the general path's; returns from the function it is in. A
 * macro, not a function: as an inline function the compiler laid out
 * binop_t's instances worse (W1's x = sin(x) * 0.9 + 0.1, 5 instructions
 * more a step). */
#define BINOP_FINISH(n, op, x, ia, y, ib)                                                                               \
    do {                                                                                                                \
        if (LIKELY(G->num.backend == BK_F64) && !((ia | ib) && G->tape.recording) && (op < OP2_LT || G->ckpt.mode != 1)) { \
            switch (op) {                                                                                               \
            case OP2_ADD: return num_val(x + y);                                                                        \
            case OP2_SUB: return num_val(x - y);                                                                        \
            case OP2_MUL: return num_val(x * y);                                                                        \
            case OP2_DIV: return num_val(x / y);                                                                        \
            case OP2_LT: return bool_val(x < y);                                                                        \
            case OP2_LE: return bool_val(x <= y);                                                                       \
            case OP2_GT: return bool_val(x > y);                                                                        \
            case OP2_GE: return bool_val(x >= y);                                                                       \
            case OP2_EQ: return bool_val(x == y);                                                                       \
            case OP2_NE: return bool_val(x != y);                                                                       \
            }                                                                                                           \
        }                                                                                                               \
        switch (op) {                                                                                                   \
        case OP2_ADD: return recorded_add(num_id(x, ia), num_id(y, ib));                                                \
        case OP2_SUB: return recorded_sub(num_id(x, ia), num_id(y, ib));                                                \
        case OP2_MUL: return recorded_mul(num_id(x, ia), num_id(y, ib));                                                \
        case OP2_DIV: return recorded_div(num_id(x, ia), num_id(y, ib));                                                \
        }                                                                                                               \
        return eval_binop_done(n, num_id(x, ia), num_id(y, ib));                                                        \
    } while (0)


/* a op b: an operand that is a leaf (ka, kb: its LEAF_ kind, 0 for any
 * other expression) is read in place, the other evaluated, a before b;
 * two plain numbers give float64's value (a comparison: float64 order is
 * the backend's, and nothing recorded means no kink to note; a
 * checkpointed loop's run, mode 1, watches near ties: general path).
 * Anything else goes to eval_binop_done with what is evaluated, or to
 * eval_binop when nothing is yet. */
static inline __attribute__((always_inline)) Value binop_t(Node *n, Env *env, int op, int ka, int kb)
{
    double x, y;
    uint32_t ia, ib;
    if (ka) {
        if (!leaf_read(n->a, env, ka, &x, &ia))
            return kb || (n->b->kind != N_BINOP && n->b->kind != N_NEG) ? eval_binop(n, env) : eval_binop_tree(n, env);   /* (fuse.c) */
    } else {
        Value a = EV(n->a, env);
        if (a.t != V_NUM) {
            /* b no leaf (kb 0) and a an array: eval_binop_left may take a
             * tree b whole with a (fuse.c) */
            if (!kb && fuse_worth(a)) return eval_binop_left(n, a, env);
            return eval_binop_done(n, a, EV(n->b, env));
        }
        x = a.u.n;
        ia = a.id;
    }
    if (kb) {
        if (!leaf_read(n->b, env, kb, &y, &ib)) return eval_binop_done(n, num_id(x, ia), EV(n->b, env));
    } else {
        Value b = EV(n->b, env);
        if (b.t != V_NUM) return eval_binop_done(n, num_id(x, ia), b);
        y = b.u.n;
        ib = b.id;
    }
    BINOP_FINISH(n, op, x, ia, y, ib);
}

/* The instances: one function per operator and leaf kinds of a and b. */
#define BINOP_KB(name, op, ka)                                                                  \
    static Value name##_##ka##0(Node *n, Env *env) { return binop_t(n, env, op, ka, 0); }          \
    static Value name##_##ka##1(Node *n, Env *env) { return binop_t(n, env, op, ka, LEAF_LOCAL); } \
    static Value name##_##ka##2(Node *n, Env *env) { return binop_t(n, env, op, ka, LEAF_UPVAL1); }\
    static Value name##_##ka##3(Node *n, Env *env) { return binop_t(n, env, op, ka, LEAF_NUM); }   \
    static Value name##_##ka##4(Node *n, Env *env) { return binop_t(n, env, op, ka, LEAF_GLOBAL); }
#define BINOP(name, op)                                                                         \
    BINOP_KB(name, op, 0) BINOP_KB(name, op, 1) BINOP_KB(name, op, 2) BINOP_KB(name, op, 3)        \
    BINOP_KB(name, op, 4)                                                                       \
    static Value (*const name[5][5])(Node *, Env *) = {                                         \
        { name##_00, name##_01, name##_02, name##_03, name##_04 },                              \
        { name##_10, name##_11, name##_12, name##_13, name##_14 },                              \
        { name##_20, name##_21, name##_22, name##_23, name##_24 },                              \
        { name##_30, name##_31, name##_32, name##_33, name##_34 },                              \
        { name##_40, name##_41, name##_42, name##_43, name##_44 } };
BINOP(ev_add, OP2_ADD)
BINOP(ev_sub, OP2_SUB)
BINOP(ev_mul, OP2_MUL)
BINOP(ev_div, OP2_DIV)
BINOP(ev_lt, OP2_LT)
BINOP(ev_le, OP2_LE)
BINOP(ev_gt, OP2_GT)
BINOP(ev_ge, OP2_GE)
BINOP(ev_eq, OP2_EQ)
BINOP(ev_ne, OP2_NE)

/* x op (a * y) recorded (pfirst: (a * y) + x), the product first, as
 * recorded_mul and then recorded_add or recorded_sub record them
 * (float64, recording, a or y recorded: the product is, so the sum is):
 * one call, not two, for a term of det's gradient and W2's w * h + b.
 * An instance for each op and order (flatten: the tape's push inline). */
static inline __attribute__((always_inline)) Value product_sum(int op, int pfirst, double x, uint32_t ix, double a,
                                                              uint32_t ia, double y, uint32_t iy)
{
    double p = a * y;
    uint32_t ip = arith_record_binary(OP_MUL, ia, iy, a, y, p);
    if (pfirst) {           /* (only a sum comes this way) */
        double r = p + x;
        return num_rec(r, arith_record_binary(OP_ADD, ip, ix, p, x, r));
    }
    if (op == OP2_ADD) {
        double r = x + p;
        return num_rec(r, arith_record_binary(OP_ADD, ix, ip, x, p, r));
    }
    double r = x - p;
    return num_rec(r, arith_record_binary(OP_SUB, ix, ip, x, p, r));
}
#define PRODUCT_SUM(name, op, pfirst)                                                              \
    static __attribute__((noinline, flatten)) Value name(double x, uint32_t ix, double a, uint32_t ia, double y, uint32_t iy) \
    {                                                                                              \
        return product_sum(op, pfirst, x, ix, a, ia, y, iy);                                       \
    }
PRODUCT_SUM(recorded_x_plus_product, OP2_ADD, 0)
PRODUCT_SUM(recorded_x_minus_product, OP2_SUB, 0)
PRODUCT_SUM(recorded_product_plus_x, OP2_ADD, 1)

/* x * y + z and z + x * y with x, y, z leaves (a row-major index,
 * i * n + j): when the three are plain numbers and nothing is to be
 * recorded, the value at once (what the two binop_t instances would make:
 * the product rounded, then the sum); else the sum's own instance from the
 * start (leaves are read, nothing evaluated). */
static inline __attribute__((always_inline)) int leaf_read_any(const Node *c, Env *env, double *x, uint32_t *id)
{
    switch (c->leaf) {
    case LEAF_LOCAL: return leaf_read(c, env, LEAF_LOCAL, x, id);
    case LEAF_UPVAL1: return leaf_read(c, env, LEAF_UPVAL1, x, id);
    case LEAF_NUM: return leaf_read(c, env, LEAF_NUM, x, id);
    default: return leaf_read(c, env, LEAF_GLOBAL, x, id);
    }
}

/* The value of x * y + z (zfirst: z + x * y), m the product's node: the
 * three leaves read in place, the product, then the sum, each plain or
 * recorded as binop_t would make it (so recorded in the same order); 0 when
 * a leaf holds anything else or the backend is not float64, nothing done. */
static inline __attribute__((always_inline)) int muladd_leaves(double x, uint32_t ix, double y, uint32_t iy, double w,
                                                              uint32_t iz, int zfirst, Value *out)
{
    if (LIKELY(!((ix | iy | iz) && G->tape.recording))) {
        double p = x * y;
        *out = num_val(zfirst ? w + p : p + w);
        return 1;
    }
    if ((ix | iy) && eval_fast_paths) {   /* the product recorded: one call records it and the sum */
        *out = zfirst ? recorded_x_plus_product(w, iz, x, ix, y, iy) : recorded_product_plus_x(w, iz, x, ix, y, iy);
        return 1;
    }
    Value p = (ix | iy) ? recorded_mul(num_id(x, ix), num_id(y, iy)) : num_val(x * y);
    if (!(p.id | iz)) *out = num_val(zfirst ? w + p.u.n : p.u.n + w);
    else *out = zfirst ? recorded_add(num_id(w, iz), p) : recorded_add(p, num_id(w, iz));
    return 1;
}

static inline __attribute__((always_inline)) int muladd_value(const Node *m, const Node *z, Env *env, int zfirst,
                                                             Value *out)
{
    double x, y, w;
    uint32_t ix, iy, iz;
    if (!leaf_read_any(m->a, env, &x, &ix) || !leaf_read_any(m->b, env, &y, &iy) || !leaf_read_any(z, env, &w, &iz) ||
        !LIKELY(G->num.backend == BK_F64))
        return 0;
    return muladd_leaves(x, ix, y, iy, w, iz, zfirst, out);
}

/* The same with the leaves' kinds known (kx, ky, kz: LEAF_ kinds) */
static inline __attribute__((always_inline)) int muladd_value_k(const Node *m, const Node *z, Env *env, int zfirst,
                                                               int kx, int ky, int kz, Value *out)
{
    double x, y, w;
    uint32_t ix, iy, iz;
    if (!leaf_read(m->a, env, kx, &x, &ix) || !leaf_read(m->b, env, ky, &y, &iy) || !leaf_read(z, env, kz, &w, &iz) ||
        !LIKELY(G->num.backend == BK_F64))
        return 0;
    return muladd_leaves(x, ix, y, iy, w, iz, zfirst, out);
}

/* Declined once (a leaf held a dual, another backend), the node keeps the
 * sum's own instance from then on: forward mode's w * h + b (W2F) pays
 * the attempt once, not every step. Either function computes the same. */
static __attribute__((noinline)) Value muladd_declined(Node *n, Env *env, Value (*plain)(Node *, Env *))
{
    n->ev = plain;
    return plain(n, env);
}

static Value ev_muladd(Node *n, Env *env)       /* (x * y) + z */
{
    Value r;
    if (muladd_value(n->a, n->b, env, 0, &r)) return r;
    return muladd_declined(n, env, ev_add[0][n->b->leaf]);
}

static Value ev_addmul(Node *n, Env *env)       /* z + (x * y) */
{
    Value r;
    if (muladd_value(n->b, n->a, env, 1, &r)) return r;
    return muladd_declined(n, env, ev_add[n->a->leaf][0]);
}

static int is_mul_of_leaves(const Node *m)
{
    return m->kind == N_BINOP && m->op == OP2_MUL && m->a->leaf && m->b->leaf;
}

/* ev_muladd and ev_addmul for each kind of the three leaves, their value
 * read with no test of a kind (W4's fill 1 + i * 1e-6, W2's w * h + b):
 * table [zfirst][kx - 1][ky - 1][kz - 1]; declined, the same as theirs. */
#define MULADD_I(zf, kx, ky, kz)                                                                   \
    static Value ev_muladd_##zf##kx##ky##kz(Node *n, Env *env)                                      \
    {                                                                                               \
        Value r;                                                                                    \
        if (muladd_value_k(zf ? n->b : n->a, zf ? n->a : n->b, env, zf, kx, ky, kz, &r)) return r;   \
        return muladd_declined(n, env, zf ? ev_add[n->a->leaf][0] : ev_add[0][n->b->leaf]);        \
    }
#define MULADD_Z(zf, kx, ky) MULADD_I(zf, kx, ky, 1) MULADD_I(zf, kx, ky, 2) MULADD_I(zf, kx, ky, 3) MULADD_I(zf, kx, ky, 4)
#define MULADD_Y(zf, kx) MULADD_Z(zf, kx, 1) MULADD_Z(zf, kx, 2) MULADD_Z(zf, kx, 3) MULADD_Z(zf, kx, 4)
#define MULADD_X(zf) MULADD_Y(zf, 1) MULADD_Y(zf, 2) MULADD_Y(zf, 3) MULADD_Y(zf, 4)
MULADD_X(0) MULADD_X(1)
#define MULADD_ROWZ(zf, kx, ky) { ev_muladd_##zf##kx##ky##1, ev_muladd_##zf##kx##ky##2, ev_muladd_##zf##kx##ky##3, ev_muladd_##zf##kx##ky##4 }
#define MULADD_ROWY(zf, kx) { MULADD_ROWZ(zf, kx, 1), MULADD_ROWZ(zf, kx, 2), MULADD_ROWZ(zf, kx, 3), MULADD_ROWZ(zf, kx, 4) }
#define MULADD_ROWX(zf) { MULADD_ROWY(zf, 1), MULADD_ROWY(zf, 2), MULADD_ROWY(zf, 3), MULADD_ROWY(zf, 4) }
static Value (*const ev_muladd_k[2][4][4][4])(Node *, Env *) = { MULADD_ROWX(0), MULADD_ROWX(1) };

/* Whether f is one of ev_muladd_k's (zfirst) instances, or ev_muladd (ev_addmul) */
static int is_muladd_fn(Value (*f)(Node *, Env *), int zfirst)
{
    if (f == (zfirst ? ev_addmul : ev_muladd)) return 1;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 4; c++)
                if (f == ev_muladd_k[zfirst][a][b][c]) return 1;
    return 0;
}

/* An element read's index kinds beyond the leaves' */
enum { IDX_MULADD = 5, IDX_ADDMUL = 6 };

static int index_kind(const Node *i)
{
    return is_muladd_fn(i->ev, 0) ? IDX_MULADD : is_muladd_fn(i->ev, 1) ? IDX_ADDMUL : i->leaf;
}

static Value ev_binop(Node *n, Env *env)       /* % and ^: num_op's dispatch */
{
    Value a = EV(n->a, env), b = EV(n->b, env);
    if (a.t == V_NUM && b.t == V_NUM) {
        if (n->op == OP2_MOD) G->err.where.node = n;   /* a kink note names it */
        return num_op(n->op == OP2_MOD ? OP_MOD : OP_POW, a, b);
    }
    return eval_binop_done(n, a, b);
}

static Value ev_neg(Node *n, Env *env)
{
    Value a = EV(n->a, env);
    if (LIKELY(a.t == V_NUM)) return num_op(OP_NEG, a, a);
    G->err.where.node = n;
    Value r = arith_apply(OP_NEG, a, a);
    v_release(a);
    return r;
}

/* a[i] of a name's array, the index an expression that calls and assigns
 * nothing (resolve.c's index_pure), so it cannot change what a holds: a
 * number element read in place, labelled as read_captured's rule asks (a
 * closure's captured array in a frame keeping no versions); the rest, a
 * matrix and every error, by eval.c's paths. */
static inline __attribute__((always_inline)) Value index_at(Node *n, Env *env, const Env *home, const Value *av,
                                                          int captured, int kb)
{
    if (av->t != V_ARR || AS_ARR(*av)->ndim == 2) return eval_index(n, env);
    const Storage *st = AS_ARR(*av);
    double x;
    uint32_t id;
    Value mv;
    if (kb == IDX_MULADD || kb == IDX_ADDMUL) {
        if (kb == IDX_MULADD ? muladd_value(n->b->a, n->b->b, env, 0, &mv) : muladd_value(n->b->b, n->b->a, env, 1, &mv)) {
            x = mv.u.n;
            id = mv.id;
        } else {
            Value iv = EV(n->b, env);
            if (iv.t != V_NUM) return eval_index_general(n, env, &iv);
            x = iv.u.n;
            id = iv.id;
        }
    } else if (!(kb && leaf_read(n->b, env, kb, &x, &id))) {
        Value iv = EV(n->b, env);
        if (iv.t != V_NUM) return eval_index_general(n, env, &iv);
        x = iv.u.n;
        id = iv.id;
    }
    int k;
    if (LIKELY(whole_index(x, st->plain_n, &k))) {
        const Value *e = &st->v[k];
        if (LIKELY(e->t == V_NUM)) {
            if (captured && e->id && !home->vers && !tape_labeled(e->id)) version_label_held(e);
            return *e;
        }
    }
    Value iv = num_id(x, id);
    return eval_index_general(n, env, &iv);
}

/* index_at's common case with the index a leaf (kb a LEAF_ kind): a
 * number element that needs no label, read with nothing called, so that
 * the instance saves no registers (W4's a[i], i a global); 0: declined,
 * nothing done (reading a leaf has no effect: index_at starts over). */
static inline __attribute__((always_inline)) int index_leaf_read(const Node *n, Env *env, const Env *home,
                                                                const Value *av, int captured, int kb, Value *out)
{
    double x;
    uint32_t id;
    int k;
    if (av->t != V_ARR || !leaf_read(n->b, env, kb, &x, &id)) return 0;
    const Storage *st = AS_ARR(*av);
    if (!whole_index(x, st->plain_n, &k)) return 0;      /* (a matrix's plain_n is 0: index_at's) */
    const Value *e = &st->v[k];
    if (e->t != V_NUM || (captured && e->id && !home->vers && !tape_labeled(e->id))) return 0;
    *out = *e;
    return 1;
}

/* The instances: a local's, a captured (one frame out) or a global's
 * array, each with the index any expression, a leaf of each kind
 * (index_leaf_read, else index_at out of line), or x * y + z, z + x * y
 * of leaves (ev_muladd's, ev_addmul's, IDX_ kinds). */
#define INDEX_LEAF(name, home, av, captured, k, kb)                                                \
    static __attribute__((noinline)) Value name##k##_rest(Node *n, Env *env) { return index_at(n, env, home, av, captured, kb); } \
    static Value name##k(Node *n, Env *env)                                                          \
    {                                                                                                \
        Value r;                                                                                     \
        if (LIKELY(index_leaf_read(n, env, home, av, captured, kb, &r))) return r;                   \
        return name##k##_rest(n, env);                                                               \
    }
#define INDEX_KB(name, home, av, captured)                                                         \
    static Value name##0(Node *n, Env *env) { return index_at(n, env, home, av, captured, 0); }           \
    INDEX_LEAF(name, home, av, captured, 1, LEAF_LOCAL) INDEX_LEAF(name, home, av, captured, 2, LEAF_UPVAL1) \
    INDEX_LEAF(name, home, av, captured, 3, LEAF_NUM) INDEX_LEAF(name, home, av, captured, 4, LEAF_GLOBAL) \
    static Value name##5(Node *n, Env *env) { return index_at(n, env, home, av, captured, IDX_MULADD); }  \
    static Value name##6(Node *n, Env *env) { return index_at(n, env, home, av, captured, IDX_ADDMUL); }  \
    static Value (*const name[7])(Node *, Env *) = { name##0, name##1, name##2, name##3, name##4, name##5, name##6 };
INDEX_KB(ev_index_local, env, &env->slots[n->a->slot], 0)
INDEX_KB(ev_index_upval1, env->parent, &env->parent->slots[n->a->slot], 1)
INDEX_KB(ev_index_global, NULL, &G->eval.globals[n->a->slot].v, 0)

/* The same with the index x * y + z or z + x * y of three locals or
 * captured names (det's A[R0 * l + Cj]), one instance for each of their
 * kinds: table [zfirst][kx - 1][ky - 1][kz - 1]. The common case (three
 * plain numbers, nothing to record, a whole index in range, a number
 * element) calls nothing, so it saves no registers; anything else is the
 * general instance's (gen) from the start: reading leaves has no effect,
 * so starting over is evaluating once. */
static __attribute__((noinline)) Value labelled_element(const Value *e)
{
    version_label_held(e);
    return *e;
}

/* lk: the three leaves' kinds, LK(kx, ky, kz), each LEAF_LOCAL or LEAF_UPVAL1 */
#define LK(kx, ky, kz) ((kx) | (ky) << 2 | (kz) << 4)
static inline __attribute__((always_inline)) Value index_ma(Node *n, Env *env, const Env *home, const Value *av,
                                                          int captured, int zf, int lk, Value (*gen)(Node *, Env *))
{
    const Node *i = n->b, *m = zf ? i->b : i->a, *z = zf ? i->a : i->b;
    double x, y, w;
    uint32_t ix, iy, iz;
    if (av->t != V_ARR || !leaf_read(m->a, env, lk & 3, &x, &ix) || !leaf_read(m->b, env, lk >> 2 & 3, &y, &iy) ||
        !leaf_read(z, env, lk >> 4 & 3, &w, &iz) || !LIKELY(G->num.backend == BK_F64) ||
        ((ix | iy | iz) && G->tape.recording))
        return gen(n, env);
    double p = x * y, k = zf ? w + p : p + w;
    const Storage *st = AS_ARR(*av);           /* a matrix's plain_n is 0: its rows are the general path's */
    int ki;
    if (!whole_index(k, st->plain_n, &ki)) return gen(n, env);
    const Value *e = &st->v[ki];
    if (e->t != V_NUM) return gen(n, env);
    /* (version_label_held's test, inline: det's gradient reads each element
     * of A many times, labelled at the first) */
    if (captured && e->id && !home->vers && !tape_labeled(e->id)) return labelled_element(e);
    return *e;
}

#define INDEX_MA1(name, home, av, captured, zf, kx, ky, kz, gen)                                     \
    static Value name##_##zf##kx##ky##kz(Node *n, Env *env)                                          \
    {                                                                                                \
        return index_ma(n, env, home, av, captured, zf, LK(kx, ky, kz), gen[zf ? IDX_ADDMUL : IDX_MULADD]); \
    }
#define INDEX_MA_Z(name, home, av, captured, zf, gen)                                                          \
    INDEX_MA1(name, home, av, captured, zf, 1, 1, 1, gen) INDEX_MA1(name, home, av, captured, zf, 1, 1, 2, gen) \
    INDEX_MA1(name, home, av, captured, zf, 1, 2, 1, gen) INDEX_MA1(name, home, av, captured, zf, 1, 2, 2, gen) \
    INDEX_MA1(name, home, av, captured, zf, 2, 1, 1, gen) INDEX_MA1(name, home, av, captured, zf, 2, 1, 2, gen) \
    INDEX_MA1(name, home, av, captured, zf, 2, 2, 1, gen) INDEX_MA1(name, home, av, captured, zf, 2, 2, 2, gen)
#define INDEX_MA_ROW(name, zf) \
    { { name##_##zf##111, name##_##zf##112 }, { name##_##zf##121, name##_##zf##122 } }, \
    { { name##_##zf##211, name##_##zf##212 }, { name##_##zf##221, name##_##zf##222 } }
#define INDEX_MA(name, home, av, captured, gen)                                                      \
    INDEX_MA_Z(name, home, av, captured, 0, gen) INDEX_MA_Z(name, home, av, captured, 1, gen)        \
    static Value (*const name[2][2][2][2])(Node *, Env *) = { { INDEX_MA_ROW(name, 0) }, { INDEX_MA_ROW(name, 1) } };
INDEX_MA(ev_index_local_ma, env, &env->slots[n->a->slot], 0, ev_index_local)
INDEX_MA(ev_index_upval1_ma, env->parent, &env->parent->slots[n->a->slot], 1, ev_index_upval1)

/* The instance for an element read of table (an INDEX_KB one) whose index
 * is i, with ma its INDEX_MA table: the leaves' own when i is x * y + z or
 * z + x * y of locals and captured names. */
static int is_local_or_upval1(const Node *c) { return c->leaf == LEAF_LOCAL || c->leaf == LEAF_UPVAL1; }

static Value (*index_instance(const Node *i, Value (*const table[7])(Node *, Env *),
                              Value (*const ma[2][2][2][2])(Node *, Env *)))(Node *, Env *)
{
    int kind = index_kind(i);
    if (kind == IDX_MULADD || kind == IDX_ADDMUL) {
        int zf = kind == IDX_ADDMUL;
        const Node *m = zf ? i->b : i->a, *z = zf ? i->a : i->b;
        if (is_local_or_upval1(m->a) && is_local_or_upval1(m->b) && is_local_or_upval1(z))
            return ma[zf][m->a->leaf - 1][m->b->leaf - 1][z->leaf - 1];
    }
    return table[kind];
}

/* What a statement's value is, when its parent can evaluate it in place,
 * without a call (Node.shape): a leaf (its LEAF_ kind), or an element read
 * that is one of the instances above (a captured or local array, its index
 * a local or a captured name). Picked only when the child's own function
 * is exactly the one the shape stands for, so that evaluating the shape in
 * place is running that function's code. */
enum { SH_NONE, SH_LEAF_LOCAL, SH_LEAF_UPVAL1, SH_LEAF_NUM, SH_LEAF_GLOBAL,
       SH_IDX_UPVAL1_LOCAL, SH_IDX_UPVAL1_UPVAL1, SH_IDX_LOCAL_LOCAL, SH_IDX_LOCAL_UPVAL1, SH_NEG_LOCAL, SH_COUNT };

/* The value of b, of shape sh: a leaf's number read in place (anything
 * else it holds by its own function), an element read inlined. */
static inline __attribute__((always_inline)) Value ev_shape(Node *b, Env *env, int sh)
{
    double x;
    uint32_t id;
    switch (sh) {
    case SH_LEAF_LOCAL: case SH_LEAF_UPVAL1: case SH_LEAF_NUM: case SH_LEAF_GLOBAL:
        if (leaf_read(b, env, sh, &x, &id)) return num_id(x, id);
        return EV(b, env);
    case SH_IDX_UPVAL1_LOCAL: return index_at(b, env, env->parent, &env->parent->slots[b->a->slot], 1, LEAF_LOCAL);
    case SH_IDX_UPVAL1_UPVAL1: return index_at(b, env, env->parent, &env->parent->slots[b->a->slot], 1, LEAF_UPVAL1);
    case SH_IDX_LOCAL_LOCAL: return index_at(b, env, env, &env->slots[b->a->slot], 0, LEAF_LOCAL);
    case SH_IDX_LOCAL_UPVAL1: return index_at(b, env, env, &env->slots[b->a->slot], 0, LEAF_UPVAL1);
    case SH_NEG_LOCAL:
        if (leaf_read(b->a, env, LEAF_LOCAL, &x, &id) && LIKELY(G->num.backend == BK_F64) && !(id && G->tape.recording))
            return num_val(-x);
        return EV(b, env);
    default: return EV(b, env);
    }
}

/* The same value read without evaluating anything that could have an
 * effect, and without a call: 1 with *v a plain number when it is one the
 * shape's function would return as it is (a leaf's number, a number
 * element that needs no label), 0 when declined, nothing done. A
 * statement built on it can then start over on its general path. */
static inline __attribute__((always_inline)) int read_shape(const Node *b, Env *env, int sh, Value *v)
{
    double x;
    uint32_t id;
    const Env *home;
    const Value *av;
    int kb;
    switch (sh) {
    case SH_LEAF_LOCAL: case SH_LEAF_UPVAL1: case SH_LEAF_NUM: case SH_LEAF_GLOBAL:
        if (!leaf_read(b, env, sh, &x, &id)) return 0;
        *v = num_id(x, id);
        return 1;
    case SH_IDX_UPVAL1_LOCAL: home = env->parent; av = &home->slots[b->a->slot]; kb = LEAF_LOCAL; break;
    case SH_IDX_UPVAL1_UPVAL1: home = env->parent; av = &home->slots[b->a->slot]; kb = LEAF_UPVAL1; break;
    case SH_IDX_LOCAL_LOCAL: home = NULL; av = &env->slots[b->a->slot]; kb = LEAF_LOCAL; break;
    case SH_IDX_LOCAL_UPVAL1: home = NULL; av = &env->slots[b->a->slot]; kb = LEAF_UPVAL1; break;
    case SH_NEG_LOCAL:         /* ev_neg's num_op(OP_NEG) of a plain number */
        if (!leaf_read(b->a, env, LEAF_LOCAL, &x, &id) || !LIKELY(G->num.backend == BK_F64) || (id && G->tape.recording))
            return 0;
        *v = num_val(-x);
        return 1;
    default: return 0;
    }
    if (av->t != V_ARR) return 0;
    const Storage *st = AS_ARR(*av);
    if (!leaf_read(b->b, env, kb, &x, &id)) return 0;   /* (a matrix's plain_n, 0, bounds every index out) */
    int k;
    if (!whole_index(x, st->plain_n, &k)) return 0;
    const Value *e = &st->v[k];
    if (e->t != V_NUM || (home && e->id && !home->vers)) return 0;
    *v = *e;
    return 1;
}

static int choose_shape(const Node *b)
{
    if (b->leaf) return b->leaf;
    if (b->ev == ev_index_upval1[LEAF_LOCAL]) return SH_IDX_UPVAL1_LOCAL;
    if (b->ev == ev_index_upval1[LEAF_UPVAL1]) return SH_IDX_UPVAL1_UPVAL1;
    if (b->ev == ev_index_local[LEAF_LOCAL]) return SH_IDX_LOCAL_LOCAL;
    if (b->ev == ev_index_local[LEAF_UPVAL1]) return SH_IDX_LOCAL_UPVAL1;
    if (b->ev == ev_neg && b->a->leaf == LEAF_LOCAL) return SH_NEG_LOCAL;
    return SH_NONE;
}

/* One instance of f per shape, as a table indexed by shape: f##_##k(n, env)
 * must be defined by DEF(k) for each. */
#define SHAPE_TABLE(f) { f##_0, f##_1, f##_2, f##_3, f##_4, f##_5, f##_6, f##_7, f##_8, f##_9 }

/* f(args) with f a local or captured name holding a function the
 * program wrote (det's recursive minor): the callee read in place, held
 * while it runs, the arguments evaluated after it as eval_call_general
 * does; a builtin, a derived function, a body that records itself (its
 * forward-mode path), many arguments: the general path. */
static inline __attribute__((always_inline)) Value call_named(Node *n, Env *env, const Value *fs)
{
    Closure *c;
    if (fs->t != V_FN || !(c = AS_FN(*fs))->fn || c->fn->records || n->n > EVAL_CALL_ARGS)
        return eval_expr_switch(n, env);
    return eval_call_closure_node(c, n, env);
}

static Value ev_call_local(Node *n, Env *env)
{
    return call_named(n, env, &env->slots[n->a->slot]);
}

static Value ev_call_upval1(Node *n, Env *env)
{
    return call_named(n, env, &env->parent->slots[n->a->slot]);
}

/* f(x) with f a global naming a one-argument math builtin (sin, exp,
 * ...), as eval_call caches it on the node: the op applied to a number
 * as eval_call applies it. Before the cache is set, and when the name
 * holds something else now: eval_call (through the general path). */
static Value ev_call_math1(Node *n, Env *env)
{
    Value g = G->eval.globals[n->a->slot].v;
    if (g.t != V_BUILTIN || n->cached_callee != g.u.bi || n->cached_op < 0 || n->cached_special)
        return eval_expr_switch(n, env);
    Value a = EV(n->list[0], env);
    G->err.where.node = n;
    if (LIKELY(a.t == V_NUM)) return num_op(n->cached_op, a, a);
    Value r = a.t == V_DUAL ? arith_num_op(n->cached_op, a, a) : eval_call_value(g, 1, &a);
    v_release(a);
    return r;
}

static Value (*choose_ev(const Node *n))(Node *, Env *)
{
    if (!eval_fast_paths) return eval_expr_switch;   /* WENGERT_SLOW: the general path */
    switch (n->kind) {
    case N_NUM: return ev_num;
    case N_NAME:
        if (n->ref == REF_LOCAL) return ev_local;
        if (n->ref == REF_UPVAL && n->depth == 1) return ev_upval1;
        if (n->ref == REF_GLOBAL) return ev_global;
        break;
    case N_BINOP:
        switch (n->op) {
        case OP2_ADD:
            if (is_mul_of_leaves(n->a) && n->b->leaf) {
                if (!eval_fast_paths) return ev_muladd;
                return ev_muladd_k[0][n->a->a->leaf - 1][n->a->b->leaf - 1][n->b->leaf - 1];
            }
            if (n->a->leaf && is_mul_of_leaves(n->b)) {
                if (!eval_fast_paths) return ev_addmul;
                return ev_muladd_k[1][n->b->a->leaf - 1][n->b->b->leaf - 1][n->a->leaf - 1];
            }
            return ev_add[n->a->leaf][n->b->leaf];
        case OP2_SUB: return ev_sub[n->a->leaf][n->b->leaf];
        case OP2_MUL: return ev_mul[n->a->leaf][n->b->leaf];
        case OP2_DIV: return ev_div[n->a->leaf][n->b->leaf];
        case OP2_MOD: case OP2_POW: return ev_binop;
        case OP2_LT: return ev_lt[n->a->leaf][n->b->leaf];
        case OP2_LE: return ev_le[n->a->leaf][n->b->leaf];
        case OP2_GT: return ev_gt[n->a->leaf][n->b->leaf];
        case OP2_GE: return ev_ge[n->a->leaf][n->b->leaf];
        case OP2_EQ: return ev_eq[n->a->leaf][n->b->leaf];
        case OP2_NE: return ev_ne[n->a->leaf][n->b->leaf];
        }
        break;
    case N_NEG: return ev_neg;
    case N_CALL:
        if (n->a->kind == N_NAME && n->a->ref == REF_LOCAL) return ev_call_local;
        if (n->a->kind == N_NAME && n->a->ref == REF_UPVAL && n->a->depth == 1) return ev_call_upval1;
        if (n->a->kind == N_NAME && n->a->ref == REF_GLOBAL && n->n == 1) return ev_call_math1;
        return eval_call;
    case N_INDEX:
        /* (a[i] of two names, plain_names, too: its instance reads what
         * eval_index's short path reads, without the call and the tests
         * of the names' kinds. None under WENGERT_SLOW, set before any
         * chunk is compiled: index_leaf_read tests nothing at run time) */
        if (!eval_fast_paths) return eval_index;
        if (n->index_pure) {
            if (n->a->ref == REF_LOCAL) return index_instance(n->b, ev_index_local, ev_index_local_ma);
            if (n->a->ref == REF_UPVAL && n->a->depth == 1) return index_instance(n->b, ev_index_upval1, ev_index_upval1_ma);
            if (n->a->ref == REF_GLOBAL) return ev_index_global[index_kind(n->b)];
        }
        return eval_index;
    default:
        break;
    }
    return eval_expr_switch;
}

/* ----------------------------------------------------------- statements */


/* x = e, x a local: a number (or a dual) into a frame that keeps no
 * versions, outside nograd, is stored in place (exec_assign's short path);
 * the rest by store_var. */
static inline __attribute__((always_inline)) int assign_local(Node *n, Env *env, int sh)
{
    G->err.where.node = n;
    Value v = ev_shape(n->b, env, sh);
    G->err.where.node = n;
    if (LIKELY(!env->vers && (v.t == V_NUM || v.t == V_DUAL) && !in_nograd())) {
        Value *slot = &env->slots[n->a->slot];
        Value old = *slot;
        *slot = v;
        v_release(old);
    } else
        eval_store_var(n->a, env, v);
    return EXEC_NORMAL;
}

static __attribute__((noinline)) int release_old(Value old)
{
    v_release(old);
    return EXEC_NORMAL;
}

/* x = e with e of a shape read_shape reads: the store with nothing called
 * on the way (no registers to save), else the general path from the start. */
static __attribute__((noinline)) int ex_assign_local_0(Node *n, Env *env) { return assign_local(n, env, SH_NONE); }

static inline __attribute__((always_inline)) int assign_local_fast(Node *n, Env *env, int sh)
{
    Value v;
    G->err.where.node = n;
    if (!read_shape(n->b, env, sh, &v) || env->vers || in_nograd()) return ex_assign_local_0(n, env);
    Value *slot = &env->slots[n->a->slot];
    Value old = *slot;
    *slot = v;
    if (IS_HEAP(old)) return release_old(old);
    return EXEC_NORMAL;
}

#define ASSIGN_LOCAL_SH(k) static int ex_assign_local_##k(Node *n, Env *env) { return assign_local_fast(n, env, k); }
ASSIGN_LOCAL_SH(1) ASSIGN_LOCAL_SH(2) ASSIGN_LOCAL_SH(3) ASSIGN_LOCAL_SH(4) ASSIGN_LOCAL_SH(5) ASSIGN_LOCAL_SH(6)
ASSIGN_LOCAL_SH(7) ASSIGN_LOCAL_SH(8) ASSIGN_LOCAL_SH(9)
static int (*const ex_assign_local[SH_COUNT])(Node *, Env *) = SHAPE_TABLE(ex_assign_local);

/* x = a op b (op +, - or *) with one of a, b a local and the other any
 * expression but a leaf (det's total = total + A[i] * sub), or b a
 * number literal (W1's x = sin(x) * 0.9 + 0.1), and x = f(...)
 * with f a local or captured name (sub = minor(m - 1)): the value's own
 * function (binop_t's instance, call_named) inlined into the store, one
 * call level less for a statement of every loop that sums or calls. */
#define ASSIGN_LOCAL_VALUE(name, value)                                                            \
    static int name(Node *n, Env *env)                                                             \
    {                                                                                              \
        G->err.where.node = n;                                                                     \
        Node *b = n->b;                                                                            \
        Value v = value;                                                                           \
        G->err.where.node = n;                                                                     \
        if (LIKELY(!env->vers && (v.t == V_NUM || v.t == V_DUAL) && !in_nograd())) {              \
            Value *slot = &env->slots[n->a->slot];                                                 \
            Value old = *slot;                                                                     \
            *slot = v;                                                                             \
            if (IS_HEAP(old)) return release_old(old);                                             \
        } else                                                                                     \
            eval_store_var(n->a, env, v);                                                          \
        return EXEC_NORMAL;                                                                        \
    }
/* x + e * y and x - e * y, x and y locals, e any expression but a leaf
 * (det's total + A[i] * sub, a dot product's sum), the product's node's
 * function being ev_mul[0][LEAF_LOCAL]: binop_t's sum with that function's
 * work (binop_t's product) inlined where it would call it, one call less.
 * x is read first, as binop_t reads it; a non-number product goes to
 * eval_binop_done with x, as binop_t would hand it. */
/* binop_t's product m of two numbers read (BINOP_FINISH's) */
static inline __attribute__((always_inline)) Value product_of(Node *m, double x, uint32_t ia, double y, uint32_t ib)
{
    BINOP_FINISH(m, OP2_MUL, x, ia, y, ib);
}

static inline __attribute__((always_inline)) Value sum_of_product(Node *n, Env *env, int op)
{
    double x, y;
    uint32_t ia, iy;
    if (!leaf_read(n->a, env, LEAF_LOCAL, &x, &ia)) return eval_binop(n, env);
    Node *m = n->b;
    Value a = EV(m->a, env), p;
    if (a.t != V_NUM) p = eval_binop_done(m, a, EV(m->b, env));
    else if (!leaf_read(m->b, env, LEAF_LOCAL, &y, &iy)) p = eval_binop_done(m, a, EV(m->b, env));
    else if ((a.id | iy) && G->tape.recording && LIKELY(G->num.backend == BK_F64) && eval_fast_paths)
        return op == OP2_ADD ? recorded_x_plus_product(x, ia, a.u.n, a.id, y, iy)
                            : recorded_x_minus_product(x, ia, a.u.n, a.id, y, iy);
    else
        p = product_of(m, a.u.n, a.id, y, iy);
    if (p.t != V_NUM) return eval_binop_done(n, num_id(x, ia), p);
    double py = p.u.n;
    uint32_t ib = p.id;
    BINOP_FINISH(n, op, x, ia, py, ib);
}

ASSIGN_LOCAL_VALUE(ex_assign_local_add_1mul, sum_of_product(b, env, OP2_ADD))
ASSIGN_LOCAL_VALUE(ex_assign_local_sub_1mul, sum_of_product(b, env, OP2_SUB))
ASSIGN_LOCAL_VALUE(ex_assign_local_add_10, binop_t(b, env, OP2_ADD, LEAF_LOCAL, 0))
ASSIGN_LOCAL_VALUE(ex_assign_local_add_01, binop_t(b, env, OP2_ADD, 0, LEAF_LOCAL))
ASSIGN_LOCAL_VALUE(ex_assign_local_sub_10, binop_t(b, env, OP2_SUB, LEAF_LOCAL, 0))
ASSIGN_LOCAL_VALUE(ex_assign_local_sub_01, binop_t(b, env, OP2_SUB, 0, LEAF_LOCAL))
ASSIGN_LOCAL_VALUE(ex_assign_local_mul_10, binop_t(b, env, OP2_MUL, LEAF_LOCAL, 0))
ASSIGN_LOCAL_VALUE(ex_assign_local_mul_01, binop_t(b, env, OP2_MUL, 0, LEAF_LOCAL))
ASSIGN_LOCAL_VALUE(ex_assign_local_add_03, binop_t(b, env, OP2_ADD, 0, LEAF_NUM))
ASSIGN_LOCAL_VALUE(ex_assign_local_sub_03, binop_t(b, env, OP2_SUB, 0, LEAF_NUM))
ASSIGN_LOCAL_VALUE(ex_assign_local_mul_03, binop_t(b, env, OP2_MUL, 0, LEAF_NUM))
ASSIGN_LOCAL_VALUE(ex_assign_local_call_local, call_named(b, env, &env->slots[b->a->slot]))
ASSIGN_LOCAL_VALUE(ex_assign_local_call_upval1, call_named(b, env, &env->parent->slots[b->a->slot]))

/* x = e, x a local: the instance for e (its function picked already) */
static int (*choose_assign_local(const Node *b))(Node *, Env *)
{
    int sh = choose_shape(b);
    if (sh != SH_NONE) return ex_assign_local[sh];
    if (b->ev == ev_add[LEAF_LOCAL][0] && b->b->ev == ev_mul[0][LEAF_LOCAL]) return ex_assign_local_add_1mul;
    if (b->ev == ev_sub[LEAF_LOCAL][0] && b->b->ev == ev_mul[0][LEAF_LOCAL]) return ex_assign_local_sub_1mul;
    if (b->ev == ev_add[LEAF_LOCAL][0]) return ex_assign_local_add_10;
    if (b->ev == ev_add[0][LEAF_LOCAL]) return ex_assign_local_add_01;
    if (b->ev == ev_sub[LEAF_LOCAL][0]) return ex_assign_local_sub_10;
    if (b->ev == ev_sub[0][LEAF_LOCAL]) return ex_assign_local_sub_01;
    if (b->ev == ev_mul[LEAF_LOCAL][0]) return ex_assign_local_mul_10;
    if (b->ev == ev_mul[0][LEAF_LOCAL]) return ex_assign_local_mul_01;
    if (b->ev == ev_add[0][LEAF_NUM]) return ex_assign_local_add_03;
    if (b->ev == ev_sub[0][LEAF_NUM]) return ex_assign_local_sub_03;
    if (b->ev == ev_mul[0][LEAF_NUM]) return ex_assign_local_mul_03;
    if (b->ev == ev_call_local) return ex_assign_local_call_local;
    if (b->ev == ev_call_upval1) return ex_assign_local_call_upval1;
    return ex_assign_local[SH_NONE];
}

static int ex_assign_name(Node *n, Env *env)
{
    G->err.where.node = n;
    Value v = EV(n->b, env);
    G->err.where.node = n;
    eval_store_var(n->a, env, v);
    return EXEC_NORMAL;
}

/* a[i] = v, v a number, into a number element of the array in *av that
 * this name may write (not shared by value), in a frame keeping no
 * versions, outside nograd, where nothing is to be recorded (v has no
 * entry, or nothing records): the write itself, all that store_plain_at
 * (eval.c) does then. 0: declined, nothing written. */
static inline __attribute__((always_inline)) int store_number(Env *env, const Env *home, Value *av, Value v, Value iv)
{
    if (av->t != V_ARR || iv.t != V_NUM) return 0;
    Storage *st = AS_ARR(*av);
    double x = iv.u.n;
    int k;
    if (!whole_index(x, st->plain_n, &k)) return 0;
    if (st->h.rc > 1 && !st->aliased) return 0;
    Value *e = &st->v[k];
    if (e->t != V_NUM || home->vers || in_nograd() || (G->tape.recording && (v.id || env->vers))) return 0;
    storage_dirty(st);
    e->id = v.id;
    e->u.n = v.u.n;
    return 1;
}

/* a[i] = e, a a name: the index is read once here (store_element_rest's
 * order: the value, then the index), and a number element written in
 * place when it can be (store_number, else eval_store_named). */
static inline __attribute__((always_inline)) int assign_element(Node *n, Env *env, const Env *home, Value *av, int kb, int sh)
{
    G->err.where.node = n;
    Value v = ev_shape(n->b, env, sh);
    G->err.where.node = n;
    Node *t = n->a;
    if (LIKELY(v.t == V_NUM && !G->ckpt.mode)) {
        double x;
        uint32_t id;
        Value iv = kb && leaf_read(t->b, env, kb, &x, &id) ? num_id(x, id) : EV(t->b, env);
        if (home && store_number(env, home, av, v, iv)) return EXEC_NORMAL;
        if (!eval_store_named(t, env, v, &iv)) eval_store_general(t, env, v, -1, &iv);
    } else
        eval_store_element(t, env, v);
    return EXEC_NORMAL;
}

/* The instances, as for element reads. (The slot of a local or a
 * captured array is where it was after the value and the index are
 * evaluated: a frame's slots do not move, and store_number reads the slot
 * only then.) */
/* a[i] = e with i a leaf and e of a shape read_shape reads: the number
 * written with nothing called on the way, else the general instance (gen)
 * from the start (what was read so far had no effect). */
static inline __attribute__((always_inline)) int assign_element_fast(Node *n, Env *env, const Env *home, Value *av,
                                                                    int kb, int sh, int (*gen)(Node *, Env *))
{
    Value v;
    double x;
    uint32_t id;
    G->err.where.node = n;
    if (!read_shape(n->b, env, sh, &v) || G->ckpt.mode || !leaf_read(n->a->b, env, kb, &x, &id) ||
        !store_number(env, home, av, v, num_id(x, id)))
        return gen(n, env);
    return EXEC_NORMAL;
}

#define ASSIGN_SH(name, home, av, kb, k)                                                          \
    static int name##kb##_##k(Node *n, Env *env)                                                    \
    {                                                                                               \
        return kb ? assign_element_fast(n, env, home, av, kb, k, name##kb##_0)                      \
                  : assign_element(n, env, home, av, kb, k);                                        \
    }
#define ASSIGN_KB1(name, home, av, kb)                                                              \
    static __attribute__((noinline)) int name##kb##_0(Node *n, Env *env)                            \
    {                                                                                               \
        return assign_element(n, env, home, av, kb, SH_NONE);                                       \
    }                                                                                               \
    ASSIGN_SH(name, home, av, kb, 1) ASSIGN_SH(name, home, av, kb, 2) \
    ASSIGN_SH(name, home, av, kb, 3) ASSIGN_SH(name, home, av, kb, 4) ASSIGN_SH(name, home, av, kb, 5) \
    ASSIGN_SH(name, home, av, kb, 6) ASSIGN_SH(name, home, av, kb, 7) ASSIGN_SH(name, home, av, kb, 8) \
    ASSIGN_SH(name, home, av, kb, 9)
#define ASSIGN_KB(name, home, av)                                                                  \
    ASSIGN_KB1(name, home, av, 0) ASSIGN_KB1(name, home, av, 1) ASSIGN_KB1(name, home, av, 2)        \
    ASSIGN_KB1(name, home, av, 3) ASSIGN_KB1(name, home, av, 4)                                     \
    static int (*const name[5][SH_COUNT])(Node *, Env *) = {                                        \
        SHAPE_TABLE(name##0), SHAPE_TABLE(name##1), SHAPE_TABLE(name##2), SHAPE_TABLE(name##3),       \
        SHAPE_TABLE(name##4) };
ASSIGN_KB(ex_assign_element_local, env, &env->slots[n->a->a->slot])
ASSIGN_KB(ex_assign_element_upval1, env->parent, &env->parent->slots[n->a->a->slot])

static int ex_assign_element(Node *n, Env *env)
{
    return assign_element(n, env, NULL, NULL, 0, SH_NONE);
}

/* a[i] = e with a a global (a top-level element loop: W4's fill under
 * nograd and its a[i] = a[i] * a[i], recording): the value, then the
 * index (a leaf read in place), then store_global_at (evalstore.h),
 * inline: what eval_store_named does for a global, with the variable's
 * kind known (its version log, the element's place while recording, the
 * nograd note); declined, eval_store_named and eval_store_general as
 * assign_element hands them over. */
/* assign_element's hand-over, apart: the index stays in registers on the
 * instance's own path (its address is taken here only) */
static __attribute__((noinline)) int store_named_or_general(Node *t, Env *env, Value v, Value iv)
{
    if (!eval_store_named(t, env, v, &iv)) eval_store_general(t, env, v, -1, &iv);
    return EXEC_NORMAL;
}

static inline __attribute__((always_inline)) int assign_global_element(Node *n, Env *env, int kb, int sh)
{
    G->err.where.node = n;
    Value v = ev_shape(n->b, env, sh);
    G->err.where.node = n;
    Node *t = n->a;
    if (LIKELY(v.t == V_NUM && !G->ckpt.mode && eval_fast_paths)) {
        double x;
        uint32_t id;
        Value iv = kb && leaf_read(t->b, env, kb, &x, &id) ? num_id(x, id) : EV(t->b, env);
        if (LIKELY(iv.t == V_NUM) && store_global_at(t, env, v, iv.u.n)) return EXEC_NORMAL;
        return store_named_or_general(t, env, v, iv);
    } else
        eval_store_element(t, env, v);
    return EXEC_NORMAL;
}

#define ASSIGN_GLOBAL_KB(kb)                                                                       \
    static int ex_assign_element_global_##kb##_0(Node *n, Env *env) { return assign_global_element(n, env, kb, SH_NONE); } \
    static int ex_assign_element_global_##kb##_g(Node *n, Env *env) { return assign_global_element(n, env, kb, SH_LEAF_GLOBAL); }
ASSIGN_GLOBAL_KB(0) ASSIGN_GLOBAL_KB(1) ASSIGN_GLOBAL_KB(2) ASSIGN_GLOBAL_KB(3) ASSIGN_GLOBAL_KB(4)
/* [index leaf kind][value a global's leaf] */
static int (*const ex_assign_element_global[5][2])(Node *, Env *) = {
    { ex_assign_element_global_0_0, ex_assign_element_global_0_g }, { ex_assign_element_global_1_0, ex_assign_element_global_1_g },
    { ex_assign_element_global_2_0, ex_assign_element_global_2_g }, { ex_assign_element_global_3_0, ex_assign_element_global_3_g },
    { ex_assign_element_global_4_0, ex_assign_element_global_4_g } };

/* A block's statements, as eval.c's exec_stmts runs them: between two
 * statements outside any call, the collector and reclaiming may run. */
static inline int run_stmts(Node *body, Env *env)
{
    for (int k = 0; k < body->n; k++) {
        Node *stmt = body->list[k];
        int code = EX(stmt, env);
        if (code != EXEC_NORMAL) return code;
        if (G->eval.run.call_depth == 0 && __builtin_expect(gc_due() || reclaim_due(), 0)) eval_between_statements();
    }
    return EXEC_NORMAL;
}

/* Inside a call (a frame, call depth above 0) neither the depth of blocks
 * (it tells a top-level statement from one in a block) nor the pause
 * between statements (outside calls only) applies: the statements alone. */
static inline int run_stmts_in_call(Node *body, Env *env)
{
    /* the list and its end held in registers: a statement cannot change
     * them, but the compiler cannot know it and read both again after each */
    if (!body->n) return EXEC_NORMAL;      /* an empty body's list is NULL: no p + 0 on it */
    for (Node **p = body->list, **end = p + body->n; p < end; p++) {
        int code = EX(*p, env);
        if (code != EXEC_NORMAL) return code;
    }
    return EXEC_NORMAL;
}

static int ex_block(Node *n, Env *env)
{
    G->err.where.node = n;
    if (env && G->eval.run.call_depth > 0) return run_stmts_in_call(n, env);
    G->eval.run.block_depth++;
    int code = run_stmts(n, env);
    G->eval.run.block_depth--;
    return code;
}

/* A block of one statement (an if's arm): inside a call, that statement
 * run by a tail call, nothing left to do after it. */
static int ex_block1(Node *n, Env *env)
{
    G->err.where.node = n;
    if (env && G->eval.run.call_depth > 0) return EX(n->list[0], env);
    return ex_block(n, env);
}

/* A range bound: a leaf holding a whole number read in place (det's
 * `0..m`), anything else (and every error) by eval_range_bound. A leaf
 * evaluates nothing, so reading it twice is reading it once. */
static inline __attribute__((always_inline)) double range_bound(Node *e, Env *env)
{
    double x;
    uint32_t id;
    if (e->leaf && leaf_read(e, env, e->leaf, &x, &id) && x > -2147483648.0 && x < 2147483648.0 && (double)(int)x == x)
        return x;
    return eval_range_bound(e, env);
}

/* for i in lo..hi { ... }, i a local: exec_for's loop, the counter
 * written straight into its slot. */
static int ex_for_local(Node *n, Env *env)
{
    G->err.where.node = n;
    double lo = range_bound(n->a, env), hi = range_bound(n->b, env);
    Node *body = n->list[0];
    int code = EXEC_NORMAL;
    Value *slots = env->slots;
    int k = n->c->slot, in_call = G->eval.run.call_depth > 0;
    LoopFloor floor = reclaim_loop_begin();
    G->eval.run.block_depth++;
    for (double i = lo; i < hi; i++) {
        err_check_interrupt();
        reclaim_loop_step(&floor);
        v_release(slots[k]);
        slots[k] = num_val(i);
        code = in_call ? run_stmts_in_call(body, env) : run_stmts(body, env);
        if (code == EXEC_BREAK || code == EXEC_RETURN) break;
    }
    G->eval.run.block_depth--;
    return code == EXEC_RETURN ? code : EXEC_NORMAL;
}

/* for i in lo..hi { ... }, i a global (a loop at the top level): exec_for's
 * loop, the counter written into its slot, read again at every step (the
 * body may add globals, moving the table), the loop counted as a top-level
 * one for the tape limit's hint. */
static int ex_for_global(Node *n, Env *env)
{
    if (!eval_fast_paths) return eval_exec_switch(n, env);
    G->err.where.node = n;
    double lo = range_bound(n->a, env), hi = range_bound(n->b, env);
    Node *body = n->list[0];
    int code = EXEC_NORMAL;
    int k = n->c->slot, in_call = G->eval.run.call_depth > 0, top = !env && !in_call;
    LoopFloor floor = reclaim_loop_begin();
    G->eval.run.top_loops += top;
    G->eval.run.block_depth++;
    for (double i = lo; i < hi; i++) {
        err_check_interrupt();
        reclaim_loop_step(&floor);
        Value *slot = &G->eval.globals[k].v;
        v_release(*slot);
        *slot = num_val(i);
        code = in_call ? run_stmts_in_call(body, env) : run_stmts(body, env);
        if (code == EXEC_BREAK || code == EXEC_RETURN) break;
    }
    G->eval.run.block_depth--;
    G->eval.run.top_loops -= top;
    return code == EXEC_RETURN ? code : EXEC_NORMAL;
}

/* return e from a function's own body (the errors are exec's) */
static int ex_return(Node *n, Env *env)
{
    if (!env || G->ckpt.mode) return eval_exec_switch(n, env);
    G->err.where.node = n;
    G->eval.run.ret_value = n->a ? EV(n->a, env) : nil_val();
    return EXEC_RETURN;
}

static __attribute__((noinline)) int ex_if(Node *n, Env *env)
{
    G->err.where.node = n;
    Value c = EV(n->a, env);
    Node *arm;
    if (LIKELY(c.t == V_BOOL)) arm = c.u.b ? n->b : n->c;
    else arm = eval_as_bool(c, n->a, "an if condition") ? n->b : n->c;
    if (!arm) return EXEC_NORMAL;
    return EX(arm, env);       /* a block's is ex_block or ex_block1 */
}

/* if a <op> b { ... } with a and b leaves (det's `if m == 1`, `if sgn > 0`):
 * the comparison binop_t would make of two plain numbers, taken at once;
 * anything else by the comparison's own function, as ex_if does. */
static inline __attribute__((always_inline)) int if_compare(Node *n, Env *env, int ka, int kb, int op)
{
    G->err.where.node = n;
    const Node *t = n->a;
    double x, y;
    uint32_t ia, ib;
    int c;
    if (leaf_read(t->a, env, ka, &x, &ia) && leaf_read(t->b, env, kb, &y, &ib) && LIKELY(G->num.backend == BK_F64) &&
        !((ia | ib) && G->tape.recording) && G->ckpt.mode != 1) {
        switch (op) {
        case OP2_LT: c = x < y; break;
        case OP2_LE: c = x <= y; break;
        case OP2_GT: c = x > y; break;
        case OP2_GE: c = x >= y; break;
        case OP2_EQ: c = x == y; break;
        default: c = x != y; break;
        }
    } else
        return ex_if(n, env);
    Node *arm = c ? n->b : n->c;
    if (!arm) return EXEC_NORMAL;
    return EX(arm, env);       /* a block's is ex_block or ex_block1 */
}

/* The instances: one per comparison and leaf kinds of a and b (the
 * comparison known, no switch on it at run time), as a table
 * [op - OP2_LT][ka][kb]. */
#define IF_KB(name, op, ka)                                                                            \
    static int name##_##ka##1(Node *n, Env *env) { return if_compare(n, env, ka, LEAF_LOCAL, op); }     \
    static int name##_##ka##2(Node *n, Env *env) { return if_compare(n, env, ka, LEAF_UPVAL1, op); }    \
    static int name##_##ka##3(Node *n, Env *env) { return if_compare(n, env, ka, LEAF_NUM, op); }       \
    static int name##_##ka##4(Node *n, Env *env) { return if_compare(n, env, ka, LEAF_GLOBAL, op); }
#define IF_OP(name, op) IF_KB(name, op, 1) IF_KB(name, op, 2) IF_KB(name, op, 3) IF_KB(name, op, 4)
#define IF_ROWS(name)                                                                                  \
    { { 0 },                                                                                           \
      { 0, name##_11, name##_12, name##_13, name##_14 },                                              \
      { 0, name##_21, name##_22, name##_23, name##_24 },                                              \
      { 0, name##_31, name##_32, name##_33, name##_34 },                                              \
      { 0, name##_41, name##_42, name##_43, name##_44 } }
IF_OP(ex_if_lt, OP2_LT) IF_OP(ex_if_le, OP2_LE) IF_OP(ex_if_gt, OP2_GT)
IF_OP(ex_if_ge, OP2_GE) IF_OP(ex_if_eq, OP2_EQ) IF_OP(ex_if_ne, OP2_NE)
static int (*const ex_if_cmp[6][5][5])(Node *, Env *) = {
    IF_ROWS(ex_if_lt), IF_ROWS(ex_if_le), IF_ROWS(ex_if_gt), IF_ROWS(ex_if_ge), IF_ROWS(ex_if_eq), IF_ROWS(ex_if_ne) };

static int (*choose_ex(const Node *n))(Node *, Env *)
{
    if (!eval_fast_paths) return eval_exec_switch;   /* WENGERT_SLOW: the general path */
    switch (n->kind) {
    case N_ASSIGN:
        if (n->a->kind == N_NAME && n->a->ref == REF_LOCAL) return choose_assign_local(n->b);
        if (n->a->kind == N_NAME) return ex_assign_name;
        if (n->a->kind == N_INDEX && n->a->a->kind == N_NAME && !n->a->c) {
            if (n->a->a->ref == REF_LOCAL) return ex_assign_element_local[n->a->b->leaf][choose_shape(n->b)];
            if (n->a->a->ref == REF_UPVAL && n->a->a->depth == 1)
                return ex_assign_element_upval1[n->a->b->leaf][choose_shape(n->b)];
            if (n->a->a->ref == REF_GLOBAL) return ex_assign_element_global[n->a->b->leaf][n->b->leaf == LEAF_GLOBAL];
            return ex_assign_element;
        }
        break;
    case N_IF:
        if (n->a->kind == N_BINOP && n->a->op >= OP2_LT && n->a->op <= OP2_NE && n->a->a->leaf && n->a->b->leaf)
            return ex_if_cmp[n->a->op - OP2_LT][n->a->a->leaf][n->a->b->leaf];
        return ex_if;
    case N_BLOCK: return n->n == 1 ? ex_block1 : ex_block;
    case N_RETURN: return ex_return;
    case N_FOR:
        if (n->b && n->c->ref == REF_LOCAL && n->list[0]->kind == N_BLOCK) return ex_for_local;
        if (n->b && n->c->ref == REF_GLOBAL && n->list[0]->kind == N_BLOCK) return ex_for_global;
        break;
    default:
        break;
    }
    return eval_exec_switch;
}

static int choose_leaf(const Node *n)
{
    if (n->kind == N_NUM) return LEAF_NUM;
    if (n->kind != N_NAME) return LEAF_NONE;
    if (n->ref == REF_LOCAL) return LEAF_LOCAL;
    if (n->ref == REF_UPVAL && n->depth == 1) return LEAF_UPVAL1;
    if (n->ref == REF_GLOBAL) return LEAF_GLOBAL;
    return LEAF_NONE;
}

void threaded_compile(Node *n)
{
    if (!n) return;
    threaded_compile(n->a);        /* the children first: a parent reads their leaf */
    threaded_compile(n->b);
    threaded_compile(n->c);
    for (int i = 0; i < n->n; i++) threaded_compile(n->list[i]);
    if (n->kind == N_FN) threaded_compile(n->fn->body);
    if (!eval_fast_paths) n->plain_names = n->index_pure = 0;   /* WENGERT_SLOW: eval.c's element short paths off */
    n->leaf = (uint8_t)choose_leaf(n);
    n->ev = choose_ev(n);
    n->ex = choose_ex(n);
}
