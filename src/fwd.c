/* fwd.c: forward mode. jvp(f, x, v) runs f on dual numbers x + v·ε_tag,
 * where every jvp call gets a tag of its own (the arithmetic of duals is
 * in dual.c). Tangents travel with the values, so memory stays constant however long a
 * loop runs. jvp keeps the session's recording rule (SPEC "Derivatives"):
 * what it computes from recorded values (x, v or captured variables) is
 * recorded, so d(jvp(f, w, 1), w) is a second derivative; on unrecorded
 * numbers nothing reaches the tape. */
#include <stdlib.h>
#include "fwd.h"
#include "dual.h"
#include "arith.h"
#include "eval.h"
#include "error.h"
#include "rng.h"
#include "ad.h"
#include "tape.h"
#include "state.h"
#include "regvm.h"
#include "matrix.h"

/* ---------------------------------------------- recording functions */

/* A function that takes d or reads x@k works on the tape, and the tape
 * knows nothing of dual numbers: a derivative taken inside forward mode
 * would have to tell apart, on the tape, what depends on a variable from
 * what depends on its tangent, and an inner d expands both into one
 * expression. So such a function called on duals runs on numbers
 * perturbed on the tape instead: each tag in the arguments gets a leaf
 * E = 0, a dual p + t·ε becomes the recorded number p + E·t, and on return
 * the result's tangent for that tag is d(r, E). Inside, d, x@k and versions
 * are plain reverse mode, exact at any order. Views keep their aliasing:
 * they pass as they are (their duals meet d as duals, see ad.c). */
#define MAX_TAGS 16
typedef struct {
    uint32_t tag[MAX_TAGS];     /* ascending */
    int k[MAX_TAGS];            /* the tag's tangents: a leaf E for each */
    Value eps[MAX_TAGS][FWD_CHUNK];
    int n;
} Perturbations;

static int collect_tags(Value v, Perturbations *pt)
{
    if (v.t == V_ARR) {
        for (int i = 0; i < seq_len(v); i++)
            if (!collect_tags(*seq_at(v, i), pt)) return 0;
        return 1;
    }
    v = fwd_live_part(v);
    if (v.t != V_DUAL) return 1;
    Dual *d = AS_DUAL(v);
    int i = 0;
    while (i < pt->n && pt->tag[i] < d->tag) i++;
    if (i == pt->n || pt->tag[i] != d->tag) {
        if (pt->n == MAX_TAGS) return 0;
        for (int j = pt->n; j > i; j--) {
            pt->tag[j] = pt->tag[j - 1];
            pt->k[j] = pt->k[j - 1];
        }
        pt->tag[i] = d->tag;
        pt->k[i] = d->k;
        pt->n++;
    }
    if (!collect_tags(d->p, pt)) return 0;
    for (int j = 0; j < d->k; j++)
        if (!collect_tags(dual_tan(d, j), pt)) return 0;
    return 1;
}

static const Value *epsilon_of(const Perturbations *pt, uint32_t tag)
{
    for (int i = 0; i < pt->n; i++)
        if (pt->tag[i] == tag) return pt->eps[i];
    return NULL;
}

/* p + Σ t_j·ε_j as p + Σ E_j·t_j, all on the tape. */
static Value lower(Value v, const Perturbations *pt)
{
    if (v.t == V_ARR) {
        int n = seq_len(v);
        Value r = value_arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(r)->v[i] = lower(*seq_at(v, i), pt);
        shape_like(r, v);
        return r;
    }
    v = fwd_live_part(v);
    if (v.t != V_DUAL) {
        v_retain(v);
        return v;
    }
    Dual *d = AS_DUAL(v);
    const Value *eps = epsilon_of(pt, d->tag);
    Value s = lower(d->p, pt);
    for (int j = 0; j < d->k; j++) {
        Value t = lower(dual_tan(d, j), pt);
        Value m = arith_mul_strong(eps ? eps[j] : num_val(0), t);     /* E = 0 against inf: 0 */
        Value s2 = arith_num_op(OP_ADD, s, m);
        v_release(s);
        v_release(t);
        v_release(m);
        s = s2;
    }
    return s;
}

/* The dual of r for the first i tags: r + Σ_j ε_ij · d(r, E_ij) over the
 * i-th tag's k tangents, each part raised for the lower tags in turn. */
static Value raise_number(Value r, const Perturbations *pt, int i)
{
    if (i == 0) {
        v_retain(r);
        return r;
    }
    int k = pt->k[i - 1], plain = r.t == V_NUM;
    Value base = raise_number(r, pt, i - 1);
    Value t[FWD_CHUNK];
    for (int j = 0; j < k; j++) {
        Value g = ad_derivative(r, pt->eps[i - 1][j].id);
        plain &= g.t == V_NUM;
        t[j] = raise_number(g, pt, i - 1);
        v_release(g);
    }
    if (plain) {
        Dual *d = dual_alloc(pt->tag[i - 1], k);
        d->p = base;
        for (int j = 0; j < k; j++) d->t[j] = t[j];
        dual_finish(d);
        return obj_val(V_DUAL, d);
    }
    /* r carries duals of its own (captured from outside), maybe of
     * higher tags: base + Σ t_j·ε_j through the arithmetic of duals,
     * which keeps higher tags outermost */
    Value out = base;
    for (int j = 0; j < k; j++) {
        Dual *u = dual_alloc(pt->tag[i - 1], k);
        u->p = num_val(0);
        for (int l = 0; l < k; l++) u->t[l] = num_val(l == j);
        dual_finish(u);
        Value eps = obj_val(V_DUAL, u);
        Value e = arith_mul_strong(t[j], eps);
        Value s = arith_num_op(OP_ADD, out, e);
        v_release(out);
        v_release(e);
        v_release(eps);
        v_release(t[j]);
        out = s;
    }
    return out;
}

static Value raise_value(Value r, const Perturbations *pt)
{
    if (r.t == V_ARR) {
        int n = seq_len(r);
        Value out = value_arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(out)->v[i] = raise_value(*seq_at(r, i), pt);
        shape_like(out, r);
        return out;
    }
    if (!IS_NUMBER(r)) {
        v_retain(r);
        return r;
    }
    return raise_number(r, pt, pt->n);
}

int fwd_needs_tape(int argc, const Value *argv)
{
    for (int i = 0; i < argc; i++) {
        if (fwd_live_part(argv[i]).t == V_DUAL) return 1;
        if (argv[i].t == V_ARR)
            for (int j = 0; j < seq_len(argv[i]); j++)
                if (fwd_live_part(*seq_at(argv[i], j)).t == V_DUAL) return 1;
    }
    return 0;
}

Value fwd_call_on_tape(Value f, int argc, Value *argv)
{
    Perturbations pt = {0};
    for (int i = 0; i < argc; i++)
        if (!collect_tags(argv[i], &pt)) err_raise("jvp nested more than %d deep around a function that takes d", MAX_TAGS);
    int saved = rec_on();
    for (int i = 0; i < pt.n; i++)
        for (int j = 0; j < pt.k[i]; j++) pt.eps[i][j] = num_rec(0, rec_leaf(0));
    Value *lowered = err_scratch(sizeof(Value) * (size_t)(argc ? argc : 1));
    for (int i = 0; i < argc; i++) lowered[i] = lower(argv[i], &pt);
    Value r = eval_call_value(f, argc, lowered);
    for (int i = 0; i < argc; i++) v_release(lowered[i]);
    err_scratch_free(lowered);
    Value out = raise_value(r, &pt);
    v_release(r);
    rec_restore(saved);
    return out;
}

static Value seed_dual(uint32_t tag, Value x, Value v)
{
    if (IS_NUMBER(x) && IS_NUMBER(v)) {
        v_retain(x);
        v_retain(v);
        return value_dual_new(tag, x, v);
    }
    if (is_seq(x) && is_seq(v)) {
        int n = seq_len(x);
        if (seq_len(v) != n) err_raise("jvp: x has %d elements but v has %d", n, seq_len(v));
        if (is_mat(x) != is_mat(v) || (is_mat(x) && AS_ARR(x)->rows != AS_ARR(v)->rows))
            err_raise("jvp: x is %s but v is %s: they must have the same shape", mat_describe(x), mat_describe(v));
        Value r = value_arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(r)->v[i] = seed_dual(tag, *seq_at(x, i), *seq_at(v, i));
        shape_like(r, x);
        return r;
    }
    err_raise("jvp: x and v must both be numbers or both arrays, got %s and %s", value_type_name(x), value_type_name(v));
}

/* The j-th tangent of the number r for tag (owned). */
static Value tangent_j(Value r, uint32_t tag, int j)
{
    while (r.t == V_DUAL) {
        Dual *d = AS_DUAL(r);
        if (d->tag == tag) {
            Value t = dual_tan(d, j);
            v_retain(t);
            return t;
        }
        /* A higher tag belongs to a jvp that has returned: its perturbation
         * escaped in a stored value and is dead; only the primal counts. */
        if (d->tag < tag) break;
        r = d->p;
    }
    return num_val(0);
}

static Value tangent_of(Value r, uint32_t tag)
{
    if (IS_NUMBER(r)) return tangent_j(r, tag, 0);
    if (is_seq(r)) {
        int n = seq_len(r);
        Value out = value_arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(out)->v[i] = tangent_of(*seq_at(r, i), tag);
        shape_like(out, r);
        return out;
    }
    err_raise("jvp: the function must return a number or an array, got %s", value_type_name(r));
}

Value fwd_jvp(Value f, Value x, Value v)
{
    if (f.t != V_FN && f.t != V_BUILTIN) err_raise("jvp: expects a function, got %s", value_type_name(f));
    uint32_t tag = ++G->fwd.next_tag;
    int depth = dual_depth();
    dual_live_push(tag, 1);
    Value t;
    if (regvm_jvp(f, x, v, &t)) {   /* a compiled scalar closure, tangents beside its registers (regvm.c) */
        dual_unwind(depth);
        return t;
    }
    Value xd = seed_dual(tag, x, v);
    Value r = eval_call_value(f, 1, &xd);
    t = tangent_of(r, tag);
    dual_unwind(depth);      /* what the call stored keeps a dead tangent */
    v_release(r);
    v_release(xd);
    return t;
}

uint32_t fwd_last_tag(void) { return G->fwd.next_tag; }

/* ------------------------------------------------ many directions at once */

/* x's element i (x a number: itself) perturbed along columns c0 .. c0+k-1
 * of V's row i, one dual of k tangents. */
static Value seed_chunk(uint32_t tag, int k, Value xi, Value V, int i, int c0)
{
    if (!IS_NUMBER(xi)) err_raise("jvp: x must hold numbers, but element %d is %s", i, value_type_name(xi));
    int cols = AS_ARR(V)->cols;
    for (int j = 0; j < k; j++) {
        Value e = AS_ARR(V)->v[(long)i * cols + c0 + j];
        if (!IS_NUMBER(e)) err_raise("jvp: V must hold numbers, but V[%d, %d] is %s", i, c0 + j, value_type_name(e));
    }
    Dual *d = dual_alloc(tag, k);
    d->p = fwd_live_part(xi);
    v_retain(d->p);
    for (int j = 0; j < k; j++) {
        d->t[j] = fwd_live_part(AS_ARR(V)->v[(long)i * cols + c0 + j]);
        v_retain(d->t[j]);
    }
    dual_finish(d);
    return obj_val(V_DUAL, d);
}

/* J·V for x of n numbers and V n×k: f runs once for every FWD_CHUNK
 * columns, on duals that carry that many tangents (dual.c runs each
 * operation as one loop over them). The result is m×k for an f of m
 * numbers (a number: m = 1; a matrix: its elements row by row). Column j
 * is jvp(f, x, V[:, j]) exactly: the same operations in the same order. */
Value fwd_jvp_chunk(Value f, Value x, Value V)
{
    if (f.t != V_FN && f.t != V_BUILTIN) err_raise("jvp: expects a function, got %s", value_type_name(f));
    if (!is_mat(V)) return fwd_jvp(f, x, V);
    int n;
    if (IS_NUMBER(x)) n = 1;
    else if (is_seq(x)) n = seq_len(x);
    else err_raise("jvp: x must be a number or an array, got %s", value_type_name(x));
    Storage *vs = AS_ARR(V);
    if (vs->rows != n)
        err_raise("jvp: V must have a row for each of x's %d numbers, got %s", n, mat_describe(V));
    int k = vs->cols;
    if (k < 1) err_raise("jvp: V has no columns");
    Value out = nil_val();
    int m = -1;
    for (int c0 = 0; c0 < k; c0 += FWD_CHUNK) {
        int kc = k - c0 < FWD_CHUNK ? k - c0 : FWD_CHUNK;
        uint32_t tag = ++G->fwd.next_tag;
        int depth = dual_depth();
        dual_live_push(tag, kc);
        Value xd;
        if (IS_NUMBER(x)) xd = seed_chunk(tag, kc, x, V, 0, c0);
        else {
            xd = value_arr_new(n);
            for (int i = 0; i < n; i++) AS_ARR(xd)->v[i] = seed_chunk(tag, kc, *seq_at(x, i), V, i, c0);
            shape_like(xd, x);
        }
        Value r = eval_call_value(f, 1, &xd);
        int mr = IS_NUMBER(r) ? 1 : is_seq(r) ? seq_len(r) : -1;
        if (mr < 0) err_raise("jvp: the function must return a number or an array, got %s", value_type_name(r));
        if (m < 0) {
            m = mr;
            out = mat_new(m, k);
        } else if (mr != m) err_raise("jvp: the function returned %d numbers for one chunk of V's columns and %d for another", m, mr);
        for (int i = 0; i < m; i++) {
            Value ri = IS_NUMBER(r) ? r : *seq_at(r, i);
            if (!IS_NUMBER(ri)) err_raise("jvp: the function must return numbers, but element %d is %s", i, value_type_name(ri));
            for (int j = 0; j < kc; j++) AS_ARR(out)->v[(long)i * k + c0 + j] = tangent_j(ri, tag, j);
        }
        dual_unwind(depth);      /* what the call stored keeps a dead tangent */
        v_release(r);
        v_release(xd);
    }
    return out;
}

/* jvp(f, x, v), and jvp(f, x, V) with V an n×k matrix: J·V (m×k). A
 * matrix x with a v of its own shape is one direction, as before. */
Value fwd_jvp_builtin(int argc, Value *argv)
{
    (void)argc;
    Value x = argv[1], v = argv[2];
    if (is_mat(v) && !(is_mat(x) && AS_ARR(x)->rows == AS_ARR(v)->rows && AS_ARR(x)->cols == AS_ARR(v)->cols))
        return fwd_jvp_chunk(argv[0], x, v);
    return fwd_jvp(argv[0], x, v);
}

/* Baydin et al. (2022): (grad f(x) . v) v for v ~ N(0, I), one forward pass. */
Value fwd_fwdgrad(int argc, Value *argv)
{
    (void)argc;
    Value x = argv[1], v;
    if (IS_NUMBER(x)) v = num_val(num_round(rng_normal(&G->rng)));
    else if (is_seq(x)) {
        int n = seq_len(x);
        v = value_arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(v)->v[i] = num_val(num_round(rng_normal(&G->rng)));
        shape_like(v, x);
    } else err_raise("fwdgrad: x must be a number or an array, got %s", value_type_name(x));
    Value s = fwd_jvp(argv[0], x, v);
    if (!IS_NUMBER(s)) {
        v_release(s);
        v_release(v);
        err_raise("fwdgrad: the function must return a number");
    }
    Value r = arith_apply(OP_MUL, s, v);
    v_release(s);
    v_release(v);
    return r;
}
