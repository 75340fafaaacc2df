/* ad.c: the reverse-mode operators d(y, place), grad(f) and hvp(f, x, v),
 * built on the sweeps of sweep.c. Inside forward mode (jvp) the values are
 * dual numbers: the derivative of a dual is a dual (derivatives_of), which
 * is how hvp and d inside jvp work. */
#include <string.h>
#include <stdlib.h>
#include "ad.h"
#include "arith.h"
#include "eval.h"
#include "error.h"
#include "fwd.h"
#include "sweep.h"
#include "kinks.h"
#include "state.h"
#include "jacobian.h"


/* Derivatives of a dual y = p + t·ε are p' + t'·ε, each taken with respect
 * to the place's innermost numbers (wrt) while the place's own tangents
 * (cuts) are held fixed: inside jvp, d(u, p) is the partial derivative of
 * u in p at the perturbed point, and its tangent is that partial's
 * derivative along ε: U_pp ṗ + U_po ȯ. The tangent parts of u read p's
 * tangent ṗ; going through ṗ back into p would count it twice. */
static void derivatives_of(Value y, const uint32_t *wrt, int n, Cuts cuts, Value *out)
{
    y = fwd_live_part(y);    /* a returned jvp's tangent is dead (fwd.h) */
    if (y.t == V_NUM) {
        sweep_derivatives(y, wrt, n, cuts, out);
        return;
    }
    if (y.t != V_DUAL) {
        for (int j = 0; j < n; j++) out[j] = num_val(0);
        return;
    }
    Dual *d = AS_DUAL(y);
    int k = d->k;
    Value *tp = err_scratch(sizeof(Value) * (size_t)(n ? (k + 1) * n : 1));
    derivatives_of(d->p, wrt, n, cuts, tp);
    for (int i = 0; i < k; i++) derivatives_of(dual_tan(d, i), wrt, n, cuts, tp + (size_t)(i + 1) * n);
    for (int j = 0; j < n; j++) {
        Dual *o = dual_alloc(d->tag, k);
        o->p = tp[j];
        for (int i = 0; i < k; i++) o->t[i] = tp[(size_t)(i + 1) * n + j];
        dual_finish(o);
        out[j] = obj_val(V_DUAL, o);
    }
    err_scratch_free(tp);
}

Value ad_derivative(Value y, uint32_t wrt)
{
    Value g;
    derivatives_of(y, &wrt, 1, (Cuts){0}, &g);
    return g;
}

/* The tape entries of every tangent part of a number or dual (all but its
 * innermost number), written to ids if given; returns how many. */
static uint32_t tangent_entries(Value v, int tangent, uint32_t *ids)
{
    if (v.t == V_DUAL) {
        if (fwd_tag_dead(AS_DUAL(v)->tag)) return tangent_entries(AS_DUAL(v)->p, tangent, ids);   /* (fwd.h) */
        uint32_t n = tangent_entries(AS_DUAL(v)->p, tangent, ids);
        for (int j = 0; j < AS_DUAL(v)->k; j++) n += tangent_entries(dual_tan(AS_DUAL(v), j), 1, ids ? ids + n : NULL);
        return n;
    }
    if (v.t != V_NUM || !tangent || !v.id || tape_opcode(v.id) == OP_CONST) return 0;
    if (ids) ids[0] = v.id;
    return 1;
}

static uint32_t place_entries(Value place, uint32_t *ids)
{
    if (!is_seq(place)) return tangent_entries(place, 0, ids);
    if (seq_noheap(place)) return 0;      /* numbers all: no duals */
    uint32_t n = 0;
    for (int i = 0; i < seq_len(place); i++)
        if (seq_at(place, i)->t == V_DUAL)     /* a plain number has no tangent parts */
            n += tangent_entries(*seq_at(place, i), 0, ids ? ids + n : NULL);
    return n;
}

static int cmp_desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The cuts for a place (a number, a dual, or an array of them): the
 * entries of its tangents, highest first, each once; scratch memory. */
static Cuts place_cuts(Value place)
{
    uint32_t n = place_entries(place, NULL);
    if (!n) return (Cuts){0};
    uint32_t *ids = err_scratch(sizeof(uint32_t) * n);
    place_entries(place, ids);
    qsort(ids, n, sizeof(uint32_t), cmp_desc);
    uint32_t m = 1;
    for (uint32_t i = 1; i < n; i++)
        if (ids[i] != ids[m - 1]) ids[m++] = ids[i];
    return (Cuts){ ids, m };
}

static const char *place_help =
    "d: the second argument must be a place: a variable x, a version x@k, an array a or an element a[i]";

/* The tape entries a place names: one for a number, one per element. The
 * place is read like any expression (so a[i] checks its index as reads
 * do); returns an array of the place's shape for the results, or 0. */
static Value wrt_entries(Node *p, Env *env, uint32_t **ids, int *n, Cuts *cuts)
{
    if (p->kind != N_NAME && p->kind != N_VERSION && p->kind != N_INDEX)
        err_raise_at(p, "%s", place_help);
    Value v = eval_expr(p, env);
    Value shape = num_val(0);
    if (IS_NUMBER(v)) {
        *n = 1;
        *ids = err_scratch(sizeof(uint32_t));
        (*ids)[0] = v_innermost(&v)->id;
    } else if (is_seq(v)) {
        *n = seq_len(v);
        *ids = err_scratch(sizeof(uint32_t) * (size_t)(*n ? *n : 1));
        for (int i = 0; i < *n; i++) (*ids)[i] = v_innermost(seq_at(v, i))->id;
        shape = value_arr_new(*n);
        shape_like(shape, v);
    } else {
        const char *what = value_type_name(v);
        v_release(v);
        err_raise_at(p, "d: cannot differentiate with respect to %s", what);
    }
    *cuts = place_cuts(v);
    v_release(v);
    return shape;
}

Value ad_d(Node *call, Env *env)
{
    if (call->n != 2) err_raise("d expects 2 arguments, d(y, place), got %d", call->n);
    Value y = eval_expr(call->list[0], env);
    G->err.where.node = call;
    if (!IS_NUMBER(y)) {
        const char *what_type = value_type_name(y);   /* before the release: a matrix is read */
        v_release(y);
        err_raise("d: y must be a number, got %s (differentiate one element, or sum(...))", what_type);
    }
    uint32_t *ids;
    int n;
    Cuts cuts;
    Value shape = wrt_entries(call->list[1], env, &ids, &n, &cuts);
    G->err.where.node = call;
    /* an array's derivatives go straight into the result: its zeros hold
     * no references, and an error leaves it to the collector */
    Value one, *out = shape.t == V_ARR ? AS_ARR(shape)->v : &one;
    kink_begin();
    derivatives_of(y, ids, n, cuts, out);
    kink_branches(ids, n);
    kink_end();
    err_scratch_free(ids);
    err_scratch_free((void *)cuts.ids);
    v_release(y);
    return shape.t == V_ARR ? shape : one;
}

/* ---------------------------------------------------------------- grad */

/* A fresh entry for the point grad differentiates at: a copy of the
 * argument (so outer derivatives flow through it) or a leaf. */
static Value fresh_number(Value x)
{
    x = fwd_live_part(x);
    if (x.t == V_DUAL) {     /* forward over reverse: keep the tangent */
        Dual *d = AS_DUAL(x);
        Value p = fresh_number(d->p);
        Dual *c = dual_alloc(d->tag, d->k);
        c->p = p;
        for (int j = 0; j < d->k; j++) {
            c->t[j] = dual_tan(d, j);
            v_retain(c->t[j]);
        }
        dual_finish(c);
        return obj_val(V_DUAL, c);
    }
    return num_rec(x.u.n, x.id ? rec_copy(x.id, x.u.n) : rec_leaf(x.u.n));
}

/* fresh_number for each element of a plain array of numbers none of
 * which is recorded (leaves) or which are a run of entries (copies): the
 * same entries, at ids base + i, recorded in one go. 0 if x is not such. */
__attribute__((optimize("tree-vectorize", "vect-cost-model=cheap"))) static int fresh_run(Value x, Value *out)
{
    if (x.t != V_ARR || AS_ARR(x)->n < 2) return 0;
    const Value *e = AS_ARR(x)->v;
    int n = AS_ARR(x)->n, nums = 1;
    uint32_t first = e[0].id, ids = 0, off = 0;
    if (AS_ARR(x)->known != KNOWN_CONSTS) {       /* (numbers of id 0: leaves, no scan) */
        for (int i = 0; i < n; i++) {
            nums &= e[i].t == V_NUM;
            ids |= e[i].id;
            off |= e[i].id - (first + (uint32_t)i);
        }
        if (!nums || (ids && (off || !first))) return 0;
    }
    if (!tape_reserve((uint32_t)n)) return 0;
    Storage *s = value_storage_unfilled(n);
    s->known = KNOWN_NOHEAP;
    uint32_t base = tape_size();
    s->fresh = base;       /* an array run's elements (Storage.fresh): no scan proves them a run again */
    double *v = tape_reserved_vals();
    num_rec_run(s->v, v, e, base, (uint32_t)n);   /* the entries' values, and the numbers naming them */
    tape_push_elems(ids ? OP_COPY : OP_LEAF, ids ? first : 0, ids != 0, 0, 0, (uint32_t)n);
    *out = obj_val(V_ARR, s);
    return 1;
}

Value ad_fresh_point(Value x)
{
    if (IS_NUMBER(x)) return fresh_number(x);
    Value r;
    if (fresh_run(x, &r)) {
        shape_like(r, x);
        return r;
    }
    if (is_seq(x)) {
        int n = seq_len(x);
        Value r = value_arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(r)->v[i] = fresh_number(*seq_at(x, i));
        shape_like(r, x);
        return r;
    }
    err_raise("grad: the first argument must be a number or an array, got %s", value_type_name(x));
}

/* The entries of the places in array x: the innermost number's of each
 * element; a run's ids (Storage.fresh, grad's fresh point) with no look
 * at the elements past the first and last. */
__attribute__((optimize("tree-vectorize", "vect-cost-model=cheap"))) static void places_ids(const Storage *x, uint32_t *restrict ids)
{
    int n = x->n;
    const Value *e = x->v;
    uint32_t first = x->fresh;
    if (eval_fast_paths && (x->known & KNOWN_NOHEAP) && first && n && e[0].id == first && e[n - 1].id == first + (uint32_t)n - 1)
        for (int i = 0; i < n; i++) ids[i] = first + (uint32_t)i;
    else if (x->known & KNOWN_NOHEAP)      /* numbers all */
        for (int i = 0; i < n; i++) ids[i] = e[i].id;
    else
        for (int i = 0; i < n; i++) ids[i] = v_innermost(&x->v[i])->id;
}

/* What a gradient of numbers g (derivatives_of's of a number) is known to
 * hold: numbers all, and when their ids rise by one from the first to the
 * last (sweep_derivatives' run of OP_DERIV entries: every id one entry
 * pushed after the last, so first and last n - 1 apart means each is the
 * one before + 1), a run (Storage.fresh): the statement's end marks it
 * as a range (tapegc.c object_marks). */
static void gradient_known(Storage *g)
{
    g->known = KNOWN_NOHEAP;
    uint32_t first = g->n ? g->v[0].id : 0;
    if (g->n >= 2 && first && g->v[g->n - 1].id == first + (uint32_t)g->n - 1) g->fresh = first;
}

/* d(r, x) for every number in x (a number or an array of them). */
Value ad_gradient_at(Value r, Value x)
{
    Cuts cuts = place_cuts(x);
    Value g;
    if (!is_seq(x)) {
        uint32_t id = v_innermost(&x)->id;
        derivatives_of(r, &id, 1, cuts, &g);
        kink_branches(&id, 1);
    } else {
        int n = AS_ARR(x)->n;
        uint32_t *ids = err_scratch_uninit(sizeof(uint32_t) * (size_t)(n ? n : 1));   /* each written below */
        places_ids(AS_ARR(x), ids);
        /* a number's derivatives (sweep_derivatives) are written, every
         * one, before anything can raise: no zeros first (a dual's come
         * from duals made one by one: zeros until then) */
        int plain = fwd_live_part(r).t == V_NUM;
        g = plain ? obj_val(V_ARR, value_storage_unfilled(n)) : value_arr_new(n);
        shape_like(g, x);
        derivatives_of(r, ids, n, cuts, AS_ARR(g)->v);
        if (plain) gradient_known(AS_ARR(g));
        kink_branches(ids, n);
        err_scratch_free(ids);
    }
    err_scratch_free((void *)cuts.ids);
    return g;
}

/* The gradient of f at argv in argument k (from 0); k = -1: the
 * derivatives in every argument, numbers all, as one array. */
static Value grad_at(Value f, int k, int argc, Value *argv)
{
    if (argc < 1) err_raise("a gradient function needs at least one argument");
    if (k >= argc)
        err_raise("grad(f, %d) differentiates argument %d (counting from 0), but the call has %d argument%s",
                 k, k, argc, argc == 1 ? "" : "s");
    if (argc > 64) err_raise("grad: at most 64 arguments");
    if (k < 0)
        for (int i = 0; i < argc; i++)
            if (!IS_NUMBER(argv[i]))
                err_raise("grad(f, \"all\") needs number arguments, argument %d is %s\n"
                         "note: grad(f, k) gives the gradient in argument k (from 0), also an array", i, value_type_name(argv[i]));
    int saved = rec_on();
    G->ad.nesting++;
    Value args[64];
    for (int i = 0; i < argc; i++) {
        args[i] = (k < 0 || i == k) ? ad_fresh_point(argv[i]) : argv[i];
    }
    Value r = eval_call_value(f, argc, args);
    if (!IS_NUMBER(r)) {
        const char *what_type = value_type_name(r);   /* before the release: a matrix is read */
        v_release(r);
        for (int i = 0; i < argc; i++) if (k < 0 || i == k) v_release(args[i]);
        err_raise("grad: the function must return a number, got %s", what_type);
    }
    rec_restore(saved);
    G->ad.nesting--;
    kink_begin();
    Value g;
    if (k >= 0) {
        g = ad_gradient_at(r, args[k]);
    } else {
        /* the fresh arguments as one array of places */
        Value x = value_arr_new(argc);
        for (int i = 0; i < argc; i++) AS_ARR(x)->v[i] = args[i];
        g = ad_gradient_at(r, x);
        v_release(x);
    }
    kink_end();
    v_release(r);
    if (k >= 0) v_release(args[k]);
    return g;
}

Value ad_derived_call(Closure *c, int argc, Value *argv)
{
    switch (c->kind) {
    case FK_GRAD: return grad_at(c->target, c->argnum, argc, argv);
    default: return jac_derived_call(c, argc, argv);     /* jacobian(f), hessian(f), sparsity(f) */
    }
}

/* grad(f): in the first argument (SPEC); grad(f, k): in argument k
 * (from 0, as indices count); grad(f, "all"): every argument, an array. */
Value ad_grad(int argc, Value *argv)
{
    if (argv[0].t != V_FN && argv[0].t != V_BUILTIN)
        err_raise("grad: expects a function, got %s", value_type_name(argv[0]));
    int k = 0;
    if (argc > 1) {
        Value w = argv[1];
        if (w.t == V_STR && AS_STR(w)->len == 3 && !memcmp(AS_STR(w)->s, "all", 3)) k = -1;
        else if (w.t == V_NUM && w.u.n >= 0 && w.u.n <= 63 && w.u.n == (double)(int)w.u.n) k = (int)w.u.n;
        else err_raise("grad(f, k): k must be a whole argument number from 0, or \"all\"");
    }
    Closure *c = value_obj_new(V_FN, sizeof(Closure));
    c->kind = FK_GRAD;
    c->target = argv[0];
    v_retain(argv[0]);
    c->label = "grad";
    c->argnum = k;
    return obj_val(V_FN, c);
}

/* hvp(f, x, v): forward over reverse, jvp(grad(f), x, v). grad runs on
 * dual numbers: the tape records the primal and tangent parts, and the
 * derivative of a dual is a dual (derivatives_of), whose tangent is H v. */
Value ad_hvp(int argc, Value *argv)
{
    (void)argc;
    if (!IS_NUMBER(argv[1]) && !is_seq(argv[1]))
        err_raise("hvp: x must be a number or an array, got %s", value_type_name(argv[1]));
    Value gfn = ad_grad(1, &argv[0]);
    Value r = fwd_jvp(gfn, argv[1], argv[2]);
    v_release(gfn);
    return r;
}
