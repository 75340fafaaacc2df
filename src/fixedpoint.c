/* fixedpoint.c: the operator fixedpoint(g, x0[, tol, maxiter]) (SPEC "Long
 * loops and long sessions"). It iterates x = g(x) without recording until
 * a step changes x by at most tol (relative), then records the fixed point
 * as one group of entries (fixtape.h) whose reverse rule is the implicit
 * function theorem (sweep.c): the tape holds x* and one application of g,
 * however many steps it took. Forward mode needs nothing of its own: the
 * iteration runs on dual numbers, and their tangents converge with x to
 * (I - J)^-1 (∂g/∂θ · θ̇); a dual x is recorded part by part. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ad.h"
#include "arith.h"
#include "error.h"
#include "eval.h"
#include "fixtape.h"
#include "fixedpoint.h"
#include "valuegc.h"
#include "fixtape.h"
#include "fwd.h"
#include "valuegc.h"
#include "state.h"

/* x as a list of plain numbers, its parts: a number is one part, a dual
 * its primal's parts then its tangent's. shape keeps, in the same order,
 * each dual's tag (0 for a plain number), so x can be rebuilt from other
 * parts. len is -1 for a number. */
typedef struct {
    int len;
    int ndim, rows, cols;    /* x0 a matrix: ndim 2 and its shape (x keeps it) */
    uint32_t *shape, nshape;
    double *val;
    uint32_t *id, nval;
} Flat;

static void count_parts(Value v, uint32_t *ns, uint32_t *nv)
{
    v = fwd_live_part(v);    /* a returned jvp's tangent is dead (fwd.h) */
    (*ns)++;
    if (v.t != V_DUAL) {
        (*nv)++;
        return;
    }
    count_parts(AS_DUAL(v)->p, ns, nv);
    for (int j = 0; j < AS_DUAL(v)->k; j++) count_parts(dual_tan(AS_DUAL(v), j), ns, nv);
}

static void put_parts(Value v, Flat *f)
{
    v = fwd_live_part(v);
    if (v.t != V_DUAL) {
        f->shape[f->nshape++] = 0;
        f->val[f->nval] = v.u.n;
        f->id[f->nval++] = v.id;
        return;
    }
    f->shape[f->nshape++] = AS_DUAL(v)->tag;
    put_parts(AS_DUAL(v)->p, f);
    for (int j = 0; j < AS_DUAL(v)->k; j++) put_parts(dual_tan(AS_DUAL(v), j), f);
}

static void flat_free(Flat *f)
{
    err_scratch_free(f->shape);
    err_scratch_free(f->val);
    err_scratch_free(f->id);
    memset(f, 0, sizeof *f);
}

/* The parts of x (a number, or an array or view of numbers). */
static void flat_of(Value x, Flat *f, const char *what)
{
    uint32_t ns = 0, nv = 0;
    if (IS_NUMBER(x)) {
        f->len = -1;
        count_parts(x, &ns, &nv);
    } else if (is_seq(x)) {
        f->len = seq_len(x);
        for (int i = 0; i < f->len; i++) {
            Value e = *seq_at(x, i);
            if (!IS_NUMBER(e))
                err_raise("fixedpoint: %s must be a number or an array of numbers, but element %d is %s",
                         what, i, value_type_name(e));
            count_parts(e, &ns, &nv);
        }
    } else {
        err_raise("fixedpoint: %s must be a number or an array of numbers, got %s", what, value_type_name(x));
    }
    f->ndim = is_mat(x) ? 2 : 0;
    f->rows = is_mat(x) ? AS_ARR(x)->rows : 0;
    f->cols = is_mat(x) ? AS_ARR(x)->cols : 0;
    f->shape = err_scratch(sizeof(uint32_t) * (ns + 1));
    f->val = err_scratch(sizeof(double) * (nv + 1));
    f->id = err_scratch(sizeof(uint32_t) * (nv + 1));
    f->nshape = f->nval = 0;
    if (f->len < 0) put_parts(x, f);
    else for (int i = 0; i < f->len; i++) put_parts(*seq_at(x, i), f);
}

static int same_shape(const Flat *a, const Flat *b)
{
    return a->len == b->len && a->nshape == b->nshape
        && !memcmp(a->shape, b->shape, sizeof(uint32_t) * a->nshape);
}

/* A number's dual structure is not a function of its value alone: an
 * operation skips a tangent that is an unrecorded 0, so g may return a
 * plain tangent for a constant x and a dual one for recorded stand-ins
 * (or the other way round). A plain number p is the dual p + 0·ε of any
 * tag, so two numbers always share the union of their structures; higher
 * tags are outermost, as in dual.c. One number's parts from a (NULL: 0)
 * in the union of its structure and b's (NULL: plain) go to out; new
 * parts are unrecorded zeros. */
static void merge_number(const Flat *a, uint32_t *as, uint32_t *av, const Flat *b, uint32_t *bs, Flat *out)
{
    uint32_t ta = a ? a->shape[*as] : 0, tb = b ? b->shape[*bs] : 0;
    if (!ta && !tb) {
        out->shape[out->nshape++] = 0;
        out->val[out->nval] = a ? a->val[*av] : 0;
        out->id[out->nval++] = a ? a->id[(*av)++] : 0;
        if (a) (*as)++;
        if (b) (*bs)++;
        return;
    }
    uint32_t tag = ta > tb ? ta : tb;
    out->shape[out->nshape++] = tag;
    if (ta == tag) (*as)++;
    if (tb == tag) (*bs)++;
    /* the primal: a dual's own, or the whole of a number of a lower tag */
    merge_number(a, as, av, b, bs, out);
    /* the tangents (k of the tag's jvp, fwd_tag_k): that number's are 0 */
    for (int j = fwd_tag_k(tag); j > 0; j--) merge_number(ta == tag ? a : NULL, as, av, tb == tag ? b : NULL, bs, out);
}

/* a in the union of a's structure and b's (of the same length); whether
 * that added parts to a. */
static int widen(Flat *a, const Flat *b)
{
    Flat out = {.len = a->len, .ndim = a->ndim, .rows = a->rows, .cols = a->cols};
    out.shape = err_scratch(sizeof(uint32_t) * (a->nshape + b->nshape + 1));
    out.val = err_scratch(sizeof(double) * (a->nval + b->nval + 1));
    out.id = err_scratch(sizeof(uint32_t) * (a->nval + b->nval + 1));
    uint32_t as = 0, av = 0, bs = 0;
    int count = a->len < 0 ? 1 : a->len;
    for (int i = 0; i < count; i++) merge_number(a, &as, &av, b, &bs, &out);
    int grew = out.nshape != a->nshape;
    flat_free(a);
    *a = out;
    return grew;
}

static Value rebuild_number(const Flat *f, uint32_t *si, uint32_t *vi, const uint32_t *ids)
{
    uint32_t tag = f->shape[(*si)++];
    if (tag) {
        int k = fwd_tag_k(tag);
        Dual *d = dual_alloc(tag, k);
        d->p = rebuild_number(f, si, vi, ids);
        for (int j = 0; j < k; j++) d->t[j] = rebuild_number(f, si, vi, ids);
        dual_finish(d);
        return obj_val(V_DUAL, d);
    }
    uint32_t k = (*vi)++;
    return ids ? num_rec(f->val[k], ids[k]) : num_val(f->val[k]);
}

/* x from f's parts, each on entry ids[k] (constants if ids is NULL). */
static Value rebuild(const Flat *f, const uint32_t *ids)
{
    uint32_t si = 0, vi = 0;
    if (f->len < 0) return rebuild_number(f, &si, &vi, ids);
    Value r = value_arr_new(f->len);
    for (int i = 0; i < f->len; i++) AS_ARR(r)->v[i] = rebuild_number(f, &si, &vi, ids);
    if (f->ndim == 2) storage_set_shape(AS_ARR(r), 2, f->rows, f->cols);
    return r;
}

/* g(x), checked to be of x's kind; its parts in out. */
static void apply(Value g, Value x, const Flat *xf, Flat *out)
{
    Value y = eval_call_value(g, 1, &x);
    if (xf->len < 0 && !IS_NUMBER(y)) {
        const char *t = value_type_name(y);
        v_release(y);
        err_raise("fixedpoint: g must return a number for a number x, got %s", t);
    }
    if (xf->len >= 0 && (!is_seq(y) || seq_len(y) != xf->len)) {
        int n = is_seq(y) ? seq_len(y) : -1;
        const char *t = value_type_name(y);
        v_release(y);
        if (n < 0) err_raise("fixedpoint: g must return an array of %d numbers for an array x, got %s", xf->len, t);
        err_raise("fixedpoint: g must return an array of %d numbers, like x, got %d", xf->len, n);
    }
    flat_of(y, out, "g's result");
    out->ndim = xf->ndim;     /* x keeps x0's shape */
    out->rows = xf->rows;
    out->cols = xf->cols;
    v_release(y);
}

static int any_recorded(const Flat *f)
{
    for (uint32_t k = 0; k < f->nval; k++)
        if (f->id[k] && tape_opcode(f->id[k]) != OP_CONST) return 1;
    return 0;
}

/* The change and size (max norms) over the primal parts of x and next (of
 * one shape): the first part of each number, its primal's primal. */
static void primal_change(const Flat *x, const Flat *next, uint32_t *si, uint32_t *vi, int primal,
                          double *change, double *scale)
{
    uint32_t tag = next->shape[(*si)++];
    if (tag) {
        primal_change(x, next, si, vi, primal, change, scale);
        for (int j = fwd_tag_k(tag); j > 0; j--) primal_change(x, next, si, vi, 0, change, scale);
        return;
    }
    uint32_t k = (*vi)++;
    if (!primal) return;
    double c = fabs(next->val[k] - x->val[k]);
    if (c > *change || c != c) *change = c;
    if (fabs(next->val[k]) > *scale) *scale = fabs(next->val[k]);
}

/* Whether a dual x has settled although its change is over the rule: its
 * primals meet the rule and x is back at one of its latest FIXPT_CYCLE
 * iterates (n of them in hist, hcap parts apart). A primal flipping between
 * neighbours of a narrow format drives its tangents round a cycle as wide
 * as their sensitivity to it (jvp at posit32: 40 units of the tangent's own
 * last place for one of the primal's); a cycle of the whole state is as
 * far as the format's iteration gets. */
#define FIXPT_CYCLE 4
static int dual_settled(const Flat *x, const Flat *next, const double *hist, uint32_t hcap, int n, double tol)
{
    int back = 0;
    for (int h = 0; h < n && !back; h++)
        back = !memcmp(hist + (size_t)h * hcap, next->val, sizeof(double) * next->nval);
    if (!back) return 0;
    double change = 0, scale = 0;
    uint32_t si = 0, vi = 0;
    int count = next->len < 0 ? 1 : next->len;
    for (int i = 0; i < count; i++) primal_change(x, next, &si, &vi, 1, &change, &scale);
    return fixtape_converged(change, scale, tol);
}

/* Iterates from x0 to the fixed point, recording nothing: its parts in x.
 * x* does not depend on x0, so x0's tangents (a dual x0) are dropped; the
 * duals g makes from what it captures are kept. Whatever g records anyway
 * (a body that takes d) is taken back. */
static void iterate(Value g, Value x0, double tol, int maxiter, Flat *x)
{
    Flat start;
    flat_of(x0, &start, "x0");
    x->len = start.len;
    x->ndim = start.ndim;
    x->rows = start.rows;
    x->cols = start.cols;
    x->nshape = x->nval = start.len < 0 ? 1 : (uint32_t)start.len;
    x->shape = err_scratch(sizeof(uint32_t) * (x->nshape + 1));
    x->val = err_scratch(sizeof(double) * (x->nval + 1));
    x->id = err_scratch(sizeof(uint32_t) * (x->nval + 1));
    for (uint32_t k = 0; k < x->nval; k++)
        x->val[k] = v_primal(start.len < 0 ? x0 : *seq_at(x0, (int)k));
    flat_free(&start);
    TapeMark mark = tape_mark();
    int recording = rec_off();
    Value cur = rebuild(x, NULL);
    double change = NAN;
    int done = 0;
    FixProgress prog = {0};
    double *hist = NULL;    /* a dual x's latest FIXPT_CYCLE iterates, a ring */
    uint32_t hcap = 0;
    int nhist = 0, hnext = 0, settled = 0;
    for (int k = 0; k < maxiter && !done; k++) {
        Flat next;
        apply(g, cur, x, &next);
        if (!same_shape(x, &next)) {    /* compared, and kept, in the union */
            widen(x, &next);
            widen(&next, x);
            nhist = 0;
        }
        double scale = 0;
        change = 0;
        for (uint32_t j = 0; j < next.nval; j++) {
            double c = fabs(next.val[j] - x->val[j]);
            if (c > change || c != c) change = c;
            if (fabs(next.val[j]) > scale) scale = fabs(next.val[j]);
        }
        if (!prog.met && x->nshape != x->nval && !fixtape_converged(change, scale, tol)) {
            settled = dual_settled(x, &next, hist, hcap, nhist, tol);
            if (hcap < x->nval) {
                err_scratch_free(hist);
                hcap = x->nval;
                hist = err_scratch(sizeof(double) * FIXPT_CYCLE * (size_t)hcap);
                nhist = 0;
            }
            memcpy(hist + (size_t)hnext * hcap, x->val, sizeof(double) * x->nval);
            hnext = (hnext + 1) % FIXPT_CYCLE;
            if (nhist < FIXPT_CYCLE) nhist++;
        }
        done = fixtape_step(&prog, change, scale, tol);
        if (settled) prog.met = done = 1;   /* the cycle's steps polish nothing */
        flat_free(x);
        *x = next;
        v_release(cur);
        cur = rebuild(x, NULL);
        err_check_interrupt();
    }
    err_scratch_free(hist);
    v_release(cur);
    rec_restore(recording);
    if (tape_grew_since(mark)) {
        gc_strip_ids_from(mark.n);
        tape_truncate(mark);
    }
    if (!prog.met) {
        char tolbuf[40];
        snprintf(tolbuf, sizeof tolbuf, "%s", value_num_str(tol));
        err_raise("fixedpoint: no fixed point within %d steps (last change %s, tol %s)", maxiter,
                 value_num_str(change), tolbuf);
    }
}

static double tol_arg(Value v)
{
    if (v.t != V_NUM) err_raise("fixedpoint: tol (argument 3) must be a number, got %s", value_type_name(v));
    if (!(v.u.n >= 0) || isinf(v.u.n)) err_raise("fixedpoint: tol (argument 3) must be a number >= 0, got %s", value_num_str(v.u.n));
    return v.u.n;
}

static int maxiter_arg(Value v)
{
    if (v.t != V_NUM) err_raise("fixedpoint: maxiter (argument 4) must be a number, got %s", value_type_name(v));
    if (v.u.n != floor(v.u.n) || v.u.n < 1 || v.u.n > 1e9)
        err_raise("fixedpoint: maxiter (argument 4) must be a whole number from 1 to 1e9, got %s", value_num_str(v.u.n));
    return (int)v.u.n;
}

Value fixedpoint_builtin(int argc, Value *argv)
{
    Value g = argv[0];
    if (g.t != V_FN && g.t != V_BUILTIN)
        err_raise("fixedpoint: g (argument 1) must be a function, got %s", value_type_name(g));
    double tol = argc > 2 ? tol_arg(argv[2]) : 1e-12;
    int maxiter = argc > 3 ? maxiter_arg(argv[3]) : 1000;
    Flat x;
    iterate(g, argv[1], tol, maxiter, &x);
    Value r;
    if (!G->tape.recording || x.nval == 0) {
        r = rebuild(&x, NULL);
        flat_free(&x);
        return r;
    }
    /* Does x* depend on anything recorded? g at x* as constants tells:
     * if not, nothing is recorded (a function called on unrecorded numbers
     * stays as fast as ever). */
    Value c = rebuild(&x, NULL);
    Flat probe;
    apply(g, c, &x, &probe);
    v_release(c);
    int recorded = any_recorded(&probe);
    flat_free(&probe);
    if (!recorded) {
        r = rebuild(&x, NULL);
        flat_free(&x);
        return r;
    }
    /* The stand-ins, g applied to them once, the results. On stand-ins,
     * which are recorded, g may give a tangent structure that constants
     * did not (see widen): then x takes the union and this is redone. */
    uint32_t n, head, *ids;
    Flat y;
    for (int tries = 0;; tries++) {
        TapeMark mark = tape_mark();
        n = x.nval;
        head = fixtape_standins(n, x.val, tol, (uint32_t)maxiter);
        ids = err_scratch(sizeof(uint32_t) * n);
        for (uint32_t j = 0; j < n; j++) ids[j] = head + j;
        Value xh = rebuild(&x, ids);
        apply(g, xh, &x, &y);
        v_release(xh);
        widen(&y, &x);
        if (!widen(&x, &y)) break;
        flat_free(&y);
        err_scratch_free(ids);
        gc_strip_ids_from(mark.n);
        tape_truncate(mark);
        if (tries == 16)
            err_raise("fixedpoint: g's result at the fixed point carries other dual numbers (forward-mode "
                     "perturbations) than x does");
    }
    for (uint32_t j = 0; j < n; j++) ids[j] = fixtape_result(head, j, y.id[j], x.val[j]);
    r = rebuild(&x, ids);
    err_scratch_free(ids);
    flat_free(&y);
    flat_free(&x);
    return r;
}
