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
    Value eps[MAX_TAGS];
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
        for (int j = pt->n; j > i; j--) pt->tag[j] = pt->tag[j - 1];
        pt->tag[i] = d->tag;
        pt->n++;
    }
    return collect_tags(d->p, pt) && collect_tags(d->t, pt);
}

static Value epsilon_of(const Perturbations *pt, uint32_t tag)
{
    for (int i = 0; i < pt->n; i++)
        if (pt->tag[i] == tag) return pt->eps[i];
    return num_val(0);
}

/* p + t·ε as p + E·t, all on the tape. */
static Value lower(Value v, const Perturbations *pt)
{
    if (v.t == V_ARR) {
        int n = seq_len(v);
        Value r = arr_new(n);
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
    Value p = lower(d->p, pt), t = lower(d->t, pt);
    Value m = v_mul_strong(epsilon_of(pt, d->tag), t);     /* E = 0 against inf: 0 */
    Value s = v_num_op(OP_ADD, p, m);
    v_release(p);
    v_release(t);
    v_release(m);
    return s;
}

/* The dual of r for the first k tags: r + ε_k · d(r, E_k), each part
 * raised for the lower tags in turn. */
static Value raise_number(Value r, const Perturbations *pt, int k)
{
    if (k == 0) {
        v_retain(r);
        return r;
    }
    Value base = raise_number(r, pt, k - 1);
    Value g = ad_derivative(r, pt->eps[k - 1].id);
    Value t = raise_number(g, pt, k - 1);
    Value out;
    if (r.t == V_NUM && g.t == V_NUM) out = dual_new(pt->tag[k - 1], base, t);
    else {
        /* r carries duals of its own (captured from outside), maybe of
         * higher tags: base + t·ε through the arithmetic of duals, which
         * keeps higher tags outermost */
        Value eps = dual_new(pt->tag[k - 1], num_val(0), num_val(1));
        Value e = v_mul_strong(t, eps);
        out = v_num_op(OP_ADD, base, e);
        v_release(base);
        v_release(e);
        v_release(eps);
        v_release(t);
    }
    v_release(g);
    return out;
}

static Value raise_value(Value r, const Perturbations *pt)
{
    if (r.t == V_ARR) {
        int n = seq_len(r);
        Value out = arr_new(n);
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
    for (int i = 0; i < pt.n; i++) pt.eps[i] = num_rec(0, rec_leaf(0));
    Value *lowered = err_scratch(sizeof(Value) * (size_t)(argc ? argc : 1));
    for (int i = 0; i < argc; i++) lowered[i] = lower(argv[i], &pt);
    Value r = call_value(f, argc, lowered);
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
        return dual_new(tag, x, v);
    }
    if (is_seq(x) && is_seq(v)) {
        int n = seq_len(x);
        if (seq_len(v) != n) err_raise("jvp: x has %d elements but v has %d", n, seq_len(v));
        if (is_mat(x) != is_mat(v) || (is_mat(x) && AS_ARR(x)->rows != AS_ARR(v)->rows))
            err_raise("jvp: x is %s but v is %s: they must have the same shape", mat_describe(x), mat_describe(v));
        Value r = arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(r)->v[i] = seed_dual(tag, *seq_at(x, i), *seq_at(v, i));
        shape_like(r, x);
        return r;
    }
    err_raise("jvp: x and v must both be numbers or both arrays, got %s and %s", type_name(x), type_name(v));
}

static Value tangent_of(Value r, uint32_t tag)
{
    if (r.t == V_DUAL) {
        Dual *d = AS_DUAL(r);
        if (d->tag == tag) {
            v_retain(d->t);
            return d->t;
        }
        /* A higher tag belongs to a jvp that has returned: its perturbation
         * escaped in a stored value and is dead; only the primal counts. */
        if (d->tag > tag) return tangent_of(d->p, tag);
        return num_val(0);
    }
    if (r.t == V_NUM) return num_val(0);
    if (is_seq(r)) {
        int n = seq_len(r);
        Value out = arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(out)->v[i] = tangent_of(*seq_at(r, i), tag);
        shape_like(out, r);
        return out;
    }
    err_raise("jvp: the function must return a number or an array, got %s", type_name(r));
}

Value fwd_jvp(Value f, Value x, Value v)
{
    if (f.t != V_FN && f.t != V_BUILTIN) err_raise("jvp: expects a function, got %s", type_name(f));
    uint32_t tag = ++G->fwd.next_tag;
    int depth = fwd_depth();
    fwd_live_push(tag);
    Value xd = seed_dual(tag, x, v);
    Value r = call_value(f, 1, &xd);
    Value t = tangent_of(r, tag);
    fwd_unwind(depth);      /* what the call stored keeps a dead tangent */
    v_release(r);
    v_release(xd);
    return t;
}

uint32_t fwd_last_tag(void) { return G->fwd.next_tag; }

Value fwd_jvp_builtin(int argc, Value *argv)
{
    (void)argc;
    return fwd_jvp(argv[0], argv[1], argv[2]);
}

/* Baydin et al. (2022): (grad f(x) . v) v for v ~ N(0, I), one forward pass. */
Value fwd_fwdgrad(int argc, Value *argv)
{
    (void)argc;
    Value x = argv[1], v;
    if (IS_NUMBER(x)) v = num_val(num_round(rng_normal(&G->rng)));
    else if (is_seq(x)) {
        int n = seq_len(x);
        v = arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(v)->v[i] = num_val(num_round(rng_normal(&G->rng)));
        shape_like(v, x);
    } else err_raise("fwdgrad: x must be a number or an array, got %s", type_name(x));
    Value s = fwd_jvp(argv[0], x, v);
    if (!IS_NUMBER(s)) {
        v_release(s);
        v_release(v);
        err_raise("fwdgrad: the function must return a number");
    }
    Value r = v_arith(OP_MUL, s, v);
    v_release(s);
    v_release(v);
    return r;
}
