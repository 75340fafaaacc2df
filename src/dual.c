/* dual.c: arithmetic on dual numbers x + t·ε_tag, the values forward mode
 * (fwd.c) runs a function on. An operation on duals of different tags
 * treats the lower tag as a constant of the higher one, so nested jvp
 * calls never confuse their perturbations (Siskind and Pearlmutter's fix,
 * as ForwardDiff.jl's tags do). The tangent of each operation comes from
 * the same rule table as the reverse sweep (rules.h), computed in values:
 * a primal or tangent that is recorded keeps recording. */
#include <math.h>
#include "dual.h"
#include "arith.h"
#include "rules.h"
#include "state.h"
#include "valuegc.h"

static uint32_t tag_of(Value v) { return v.t == V_DUAL ? AS_DUAL(v)->tag : 0; }

/* v's primal, and its dual if it is one of tag (NULL: v is a constant of
 * tag, its tangents 0); k is set from a dual of tag. */
static void split(Value v, uint32_t tag, Value *p, const Dual **d, int *k)
{
    if (v.t == V_DUAL && AS_DUAL(v)->tag == tag) {
        *p = AS_DUAL(v)->p;
        *d = AS_DUAL(v);
        *k = AS_DUAL(v)->k;
    } else {
        *p = v;
        *d = NULL;
    }
}

static int is_zero(Value v) { return v.t == V_NUM && v.id == 0 && v.u.n == 0; }

/* A number the double rules can stand in for: plain, and nothing records. */
static inline int plain_num(Value v) { return v.t == V_NUM && (v.id == 0 || !G->tape.recording); }

/* Whether d's tangents (d NULL: zeros) are numbers the double rules can
 * stand in for. */
static int tangents_plain(const Dual *d)
{
    if (!d || (d->form & DUAL_UNBOXED)) return 1;
    for (int j = 0; j < d->k; j++)
        if (!plain_num(d->t[j])) return 0;
    return 1;
}

/* d's tangents as doubles (NULL for NULL); buf holds k when they are boxed. */
static const double *tangent_doubles(const Dual *d, double *buf)
{
    if (!d) return NULL;
    if (d->form & DUAL_UNBOXED) return dual_td(d);
    for (int j = 0; j < d->k; j++) buf[j] = d->t[j].u.n;
    return buf;
}

/* d's tangents as Values (NULL for NULL); buf holds k when they are unboxed. */
static const Value *tangent_values(const Dual *d, Value *buf)
{
    if (!d) return NULL;
    if (!(d->form & DUAL_UNBOXED)) return d->t;
    for (int j = 0; j < d->k; j++) buf[j] = num_val(dual_td(d)[j]);
    return buf;
}

/* dual_alloc_unboxed with its common case inline: a spare dual of this k. */
static inline Dual *dual_alloc_fast(uint32_t tag, int k)
{
    Dual *d = dual_alloc_spare(tag, k, 0);
    return d ? d : dual_alloc_unboxed(tag, k);
}

/* The tangents of a result whose partials are da, db, in float64:
 * t = da·at + db·bt, term by term as the rule in values does it (a zero
 * tangent passes nothing: an exact 0 against an inf partial stays 0, the
 * strong zero; at, bt NULL: zeros). One loop over the k doubles each, of
 * selects (computed, then chosen), which vectorise. `0 + db·bt` needs no
 * select when db is finite: a zero tangent's product is a zero, and
 * `0 +` makes it +0 as skipping it would. da·at does: a product that
 * underflows keeps its -0 where a zero tangent gives +0. */
#define VECTORISE __attribute__((optimize("tree-vectorize", "vect-cost-model=cheap", "no-trapping-math")))
/* a * b with an exact 0 factor winning over inf and nan (arith_mul_strong
 * in doubles): 0 * -1 is -0, 0 * inf is +0. */
static inline double mul_strong_f64(double a, double b)
{
    double r = a * b;
    return r != r && (a == 0 || b == 0) ? 0 : r;
}

/* tangents_f64 when a partial is 0: the rule's terms as dual_op_general
 * sums them. A 0 partial against a nonzero tangent is still a term (a
 * signed zero: -t * 0 has the tangent 0 * -1 = -0), but against inf or
 * nan it is +0, where the plain loops would give nan. */
static __attribute__((noinline)) void tangents_zero_partial(int k, double *t, double da, const double *at,
                                                            double db, const double *bt)
{
    for (int j = 0; j < k; j++) {
        double x = 0;
        if (at && at[j] != 0) x = mul_strong_f64(da, at[j]);
        if (bt && bt[j] != 0) x = x + mul_strong_f64(db, bt[j]);
        t[j] = x;
    }
}

/* the operation arith_mul_strong picks for a * b */
static inline int strong_op(double a, double b)
{
    double r = a * b;
    return r != r && (a == 0 || b == 0) ? OP_MUL0 : OP_MUL;
}

/* (the caller takes tangents_zero_partial when a partial is 0) */
static VECTORISE void tangents_f64(int k, double *restrict t, double da, const double *restrict at,
                                   double db, const double *restrict bt)
{
    if (at && bt)
        for (int j = 0; j < k; j++) {
            double x = da * at[j], y = db * bt[j];
            x = at[j] == 0 ? 0 : x;
            t[j] = bt[j] == 0 ? x : x + y;
        }
    else if (at)
        for (int j = 0; j < k; j++) {
            double x = da * at[j];
            t[j] = at[j] == 0 ? 0 : x;
        }
    else if (bt && isfinite(db))
        for (int j = 0; j < k; j++) t[j] = 0 + db * bt[j];
    else if (bt)
        for (int j = 0; j < k; j++) {
            double y = 0 + db * bt[j];
            t[j] = bt[j] == 0 ? 0 : y;
        }
    else
        for (int j = 0; j < k; j++) t[j] = 0;
}

/* dual_op on plain numbers (the common case inside a jvp): the same rule
 * table in doubles (rule_partials_num, rounded op by op in the backend as
 * rule_partial_val's values are), the same order of operations and the
 * same zero tangents skipped, so the result is identical; no temporaries.
 * One loop over the k unboxed tangents (at, bt NULL: zeros), so a chunk
 * of directions costs one dispatch, one rule and one allocation. */
static inline __attribute__((always_inline)) Value op_plain_body(int op, uint32_t tag, int k, double ap, const double *at, double bp, const double *bt)
{
    double p = num_apply(op, ap, bp), da, db;
    rule_partials_num(op, ap, bp, p, &da, &db);
    Dual *d = dual_alloc_fast(tag, k);
    d->p = num_val(p);
    double *t = dual_td(d);
    /* A 0 partial is a term like any other (dual_op_general's sum): its
     * product is a signed zero, or +0 against inf and nan (strong zero). */
    if (__builtin_expect(G->num.backend == BK_F64, 1)) {
        if (k == 1) {      /* jvp(f, x, v): no loop */
            double x = at && at[0] != 0 ? mul_strong_f64(da, at[0]) : 0;
            if (bt && bt[0] != 0) x = x + mul_strong_f64(db, bt[0]);
            t[0] = x;
        } else if (__builtin_expect((at && da == 0) || (bt && db == 0), 0))
            tangents_zero_partial(k, t, da, at, db, bt);
        else
            tangents_f64(k, t, da, at, db, bt);
    } else
        for (int j = 0; j < k; j++) {
            double x = 0;
            if (at && at[j] != 0) x = num_apply(strong_op(da, at[j]), da, at[j]);
            if (bt && bt[j] != 0) x = num_apply(OP_ADD, x, num_apply(strong_op(db, bt[j]), db, bt[j]));
            t[j] = x;
        }
    return obj_val(V_DUAL, d);
}

static __attribute__((noinline)) Value dual_op_plain(int op, uint32_t tag, int k, double ap, const double *at, double bp, const double *bt)
{
    return op_plain_body(op, tag, k, ap, at, bp, bt);
}

/* An operand carries the tangent of a jvp that has returned (fwd.h): the
 * operation on its primal. Without this each call of a jvp that reads
 * what the last one stored would nest one level deeper. */
static __attribute__((noinline)) Value dual_op_dead(int op, Value a, Value b)
{
    return arith_num_op(op, fwd_live_part(a), num_op_arity[op] == 2 ? fwd_live_part(b) : b);
}

/* Operands with parts that are recorded or duals of lower tags: the rules
 * in values, so what is recorded keeps recording and lower tags keep
 * their tangents. */
static __attribute__((noinline)) Value dual_op_general(int op, int binary, uint32_t tag, int k, Value ap, const Value *at, Value bp, const Value *bt)
{
    Value p = arith_num_op(op, ap, bp);
    RuleTemps ts;
    ts.n = 0;                /* the slots are written before they are read */
    Value small[8], *t = k <= 8 ? small : err_scratch(sizeof(Value) * (size_t)k);
    Value pa = num_val(0), pb = num_val(0);
    int have_pa = 0, have_pb = 0;
    for (int j = 0; j < k; j++) {
        Value x = num_val(0);
        /* partial times tangent: an exact 0 wins over inf and nan (strong zero) */
        if (at && !is_zero(at[j])) {
            if (!have_pa) pa = rule_partial_val(op, 0, ap, bp, p, &ts), have_pa = 1;
            x = arith_mul_strong(pa, at[j]);
        }
        if (binary && bt && !is_zero(bt[j])) {
            if (!have_pb) pb = rule_partial_val(op, 1, ap, bp, p, &ts), have_pb = 1;
            Value tb2 = arith_mul_strong(pb, bt[j]);
            Value sum = arith_num_op(OP_ADD, x, tb2);
            v_release(x);
            v_release(tb2);
            x = sum;
        }
        t[j] = x;
    }
    rule_temps_release(&ts);
    Dual *d = dual_alloc(tag, k);
    d->p = p;
    for (int j = 0; j < k; j++) d->t[j] = t[j];
    dual_finish(d);
    if (t != small) err_scratch_free(t);
    return obj_val(V_DUAL, d);
}

static Value dual_op_mixed(int op, Value a, Value b);

Value dual_op(int op, Value a, Value b)
{
    int binary = num_op_arity[op] == 2;
    uint32_t top = G->fwd.top;
    /* The common case first: duals of the innermost jvp whose parts are
     * plain numbers (the flag dual_finish keeps), and plain numbers. */
    double ap, bp = 0;
    const double *at = NULL, *bt = NULL;
    int k;
    if (!eval_fast_paths) goto mixed;   /* WENGERT_SLOW: the general rules */
    if (a.t == V_DUAL) {
        Dual *x = AS_DUAL(a);
        if (x->tag != top || !x->plain) goto mixed;
        ap = x->p.u.n;
        at = dual_td(x);
        k = x->k;
        if (binary) {
            if (b.t == V_NUM && (b.id == 0 || !G->tape.recording)) bp = b.u.n;
            else if (b.t == V_DUAL && AS_DUAL(b)->tag == top && AS_DUAL(b)->plain) {
                bp = AS_DUAL(b)->p.u.n;
                bt = dual_td(AS_DUAL(b));
            } else goto mixed;
        }
    } else {
        if (!binary || b.t != V_DUAL || a.t != V_NUM || (a.id != 0 && G->tape.recording)) goto mixed;
        Dual *y = AS_DUAL(b);
        if (y->tag != top || !y->plain) goto mixed;
        ap = a.u.n;
        bp = y->p.u.n;
        bt = dual_td(y);
        k = y->k;
    }
    return op_plain_body(op, top, k, ap, at, bp, bt);
mixed:
    return dual_op_mixed(op, a, b);
}

/* Any other operands: a dual of another tag, parts recorded or duals. */
static __attribute__((noinline)) Value dual_op_mixed(int op, Value a, Value b)
{
    int binary = num_op_arity[op] == 2;
    uint32_t top = G->fwd.top;
    uint32_t ta = tag_of(a), tb = binary ? tag_of(b) : 0;
    uint32_t tag = ta > tb ? ta : tb;
    /* the innermost jvp's tag is live; a dual of a lower tag than the
     * other operand's is a part that is not plain (checked below) */
    if (__builtin_expect(tag != top, 0) && dual_tag_dead_below(tag)) return dual_op_dead(op, a, b);
    Value ap, bp = num_val(0);
    const Dual *xa, *xb = NULL;
    int k = 1;
    split(a, tag, &ap, &xa, &k);
    if (binary) split(b, tag, &bp, &xb, &k);
    if (eval_fast_paths && plain_num(ap) && plain_num(bp) && tangents_plain(xa) && tangents_plain(xb)) {
        double small[2][DUAL_KMAX], *buf = k <= DUAL_KMAX ? small[0] : err_scratch_uninit(2 * sizeof(double) * (size_t)k);
        Value r = dual_op_plain(op, tag, k, ap.u.n, tangent_doubles(xa, buf), bp.u.n, tangent_doubles(xb, buf + k));
        if (buf != small[0]) err_scratch_free(buf);
        return r;
    }
    uint32_t lo = ta < tb ? ta : tb;
    if (lo && lo != tag && fwd_tag_dead(lo)) return dual_op_dead(op, a, b);
    Value small[2][DUAL_KMAX], *buf = k <= DUAL_KMAX ? small[0] : err_scratch_uninit(2 * sizeof(Value) * (size_t)k);
    Value r = dual_op_general(op, binary, tag, k, ap, tangent_values(xa, buf), bp, tangent_values(xb, buf + k));
    if (buf != small[0]) err_scratch_free(buf);
    return r;
}

/* ------------------------------------------------ array-shaped operations */

/* Whether e can take part in dual_dot: a plain number, or a plain dual
 * of the innermost jvp (whose k is then *k). */
static inline int dot_part(const Value *e, int *k)
{
    if (e->t == V_NUM) return e->id == 0 || !G->tape.recording;
    if (e->t != V_DUAL) return 0;
    const Dual *d = AS_DUAL(*e);
    if (d->tag != G->fwd.top || !d->plain || (*k && *k != d->k)) return 0;
    *k = d->k;
    return 1;
}

/* T += X, where X is the tangents tangents_f64 gives for da, at, db, bt,
 * as `T + X` of two duals does it (dual_op's add: a zero term passes
 * nothing, so two zeros give +0): T + (X + 0), in one pass. With finite
 * partials no selects: X + 0 makes every zero +0, whichever its sign. */
static VECTORISE void tangents_add(int k, double *restrict T, double da, const double *restrict at,
                                   double db, const double *restrict bt)
{
    int finite = (!at || isfinite(da)) && (!bt || isfinite(db));
    if (at && bt) {
        if (finite)
            for (int j = 0; j < k; j++) T[j] = T[j] + (((da * at[j] + 0.0) + db * bt[j]) + 0.0);
        else
            for (int j = 0; j < k; j++) {
                double x = da * at[j], y = db * bt[j];
                x = at[j] == 0 ? 0 : x;
                x = bt[j] == 0 ? x : x + y;
                T[j] = T[j] + (x + 0.0);
            }
    } else if (at) {
        if (finite)
            for (int j = 0; j < k; j++) T[j] = T[j] + (da * at[j] + 0.0);
        else
            for (int j = 0; j < k; j++) {
                double x = da * at[j];
                T[j] = T[j] + ((at[j] == 0 ? 0 : x) + 0.0);
            }
    } else if (bt) {
        if (finite)
            for (int j = 0; j < k; j++) T[j] = T[j] + (0 + db * bt[j]);
        else
            for (int j = 0; j < k; j++) {
                double y = 0 + db * bt[j];
                T[j] = T[j] + ((bt[j] == 0 ? 0 : y) + 0.0);
            }
    } else
        for (int j = 0; j < k; j++) T[j] = T[j] + 0.0;
}

static VECTORISE void tangents_norm(int k, double *T)
{
    for (int j = 0; j < k; j++) T[j] = T[j] + 0.0;
}

int dual_dot(const Value *a, long sa, const Value *b, long sb, int n, Value *out)
{
    if (!eval_fast_paths || n < 1 || G->num.backend != BK_F64 || !G->fwd.top) return 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!dot_part(&a[i * sa], &k) || !dot_part(&b[i * sb], &k)) return 0;
    if (!k) return 0;
    Dual *d = dual_alloc_fast(G->fwd.top, k);
    d->p = num_val(0);
    double *T = dual_td(d);
    double s = 0;
    int have = 0;     /* the sum so far is a dual (T its tangents) */
    for (int i = 0; i < n; i++) {
        const Value *x = &a[i * sa], *y = &b[i * sb];
        double xp = x->t == V_DUAL ? AS_DUAL(*x)->p.u.n : x->u.n, yp = y->t == V_DUAL ? AS_DUAL(*y)->p.u.n : y->u.n;
        double p = xp * yp;
        s = i == 0 ? p : s + p;
        if (x->t != V_DUAL && y->t != V_DUAL) {      /* a number: the sum's tangents pass as they are */
            if (have) tangents_norm(k, T);
            continue;
        }
        /* the product's tangents (dual_op's mul: partials yp, xp) */
        const double *at = x->t == V_DUAL ? dual_td(AS_DUAL(*x)) : NULL;
        const double *bt = y->t == V_DUAL ? dual_td(AS_DUAL(*y)) : NULL;
        if (i == 0) {
            if ((at && yp == 0) || (bt && xp == 0)) tangents_zero_partial(k, T, yp, at, xp, bt);
            else tangents_f64(k, T, yp, at, xp, bt);
            have = 1;
            continue;
        }
        /* in a sum a 0 partial's term is a zero the add makes +0: skipped */
        if (yp == 0) at = NULL;
        if (xp == 0) bt = NULL;
        if (!have) {     /* a number plus a dual: 0 + X as dual_op's add */
            for (int j = 0; j < k; j++) T[j] = 0.0;
            have = 1;
        }
        tangents_add(k, T, yp, at, xp, bt);
    }
    if (!have) {
        value_obj_free(&d->h);
        *out = num_val(s);
        return 1;
    }
    d->p = num_val(s);
    *out = obj_val(V_DUAL, d);
    return 1;
}

/* Element i of an operand of dual_elementwise: e[i * stride] (a number:
 * stride 0). */
static const Value *operand_elems(Value *x, int is_seq_x, long *stride)
{
    if (!is_seq_x) {
        *stride = 0;
        return x;
    }
    if (x->t == V_ARR) {
        *stride = 1;
        return AS_ARR(*x)->v;
    }
    const View *w = AS_VIEW(*x);
    *stride = w->stride;
    return w->s->v + w->start;
}

int dual_elementwise(int op, Value a, Value b, int na, int nb, int n, Value *out)
{
    uint32_t top = G->fwd.top;
    int binary = num_op_arity[op] == 2;
    if (!eval_fast_paths || !top || n < 1 || num_op_arity[op] < 1) return 0;
    long sa, sb = 0;
    const Value *ea = operand_elems(&a, na >= 0, &sa), *eb = binary ? operand_elems(&b, nb >= 0, &sb) : NULL;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!dot_part(&ea[i * sa], &k) || (binary && !dot_part(&eb[i * sb], &k))) return 0;
    if (!k) return 0;
    *out = value_arr_new(n);
    Value *r = AS_ARR(*out)->v;
    for (int i = 0; i < n; i++) {
        const Value *x = &ea[i * sa], *y = binary ? &eb[i * sb] : NULL;
        double ap = x->u.n, bp = 0;
        const double *at = NULL, *bt = NULL;
        if (x->t == V_DUAL) {
            ap = AS_DUAL(*x)->p.u.n;
            at = dual_td(AS_DUAL(*x));
        }
        if (y) {
            bp = y->u.n;
            if (y->t == V_DUAL) {
                bp = AS_DUAL(*y)->p.u.n;
                bt = dual_td(AS_DUAL(*y));
            }
        }
        r[i] = at || bt ? op_plain_body(op, top, k, ap, at, bp, bt) : num_val(num_apply(op, ap, bp));
    }
    return 1;
}

/* ---------------------------------------- forward mode's live tags (dual.h) */

/* tag is not the top (fwd_tag_dead looked): a binary search below it. */
int dual_tag_dead_below(uint32_t tag)
{
    int lo = 0, hi = G->fwd.nlive - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (G->fwd.live[mid] < tag) lo = mid + 1;
        else hi = mid;
    }
    return !(lo < G->fwd.nlive && G->fwd.live[lo] == tag);
}

void dual_live_push(uint32_t tag, int k)
{
    if (G->fwd.nlive == G->fwd.caplive) {
        int grown = G->fwd.caplive ? 2 * G->fwd.caplive : 16;
        G->fwd.live = err_realloc(G->fwd.live, sizeof(uint32_t) * (size_t)grown);
        G->fwd.live_k = err_realloc(G->fwd.live_k, sizeof(uint16_t) * (size_t)grown);
        G->fwd.caplive = grown;
    }
    G->fwd.live_k[G->fwd.nlive] = (uint16_t)k;
    G->fwd.live[G->fwd.nlive++] = tag;
    G->fwd.top = tag;
}

int fwd_tag_k(uint32_t tag)
{
    int lo = 0, hi = G->fwd.nlive - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (G->fwd.live[mid] < tag) lo = mid + 1;
        else hi = mid;
    }
    return lo < G->fwd.nlive && G->fwd.live[lo] == tag ? G->fwd.live_k[lo] : 1;
}

int dual_depth(void) { return G->fwd.nlive; }

void dual_unwind(int depth)
{
    if (G->fwd.nlive > depth) G->fwd.nlive = depth;
    G->fwd.top = G->fwd.nlive ? G->fwd.live[G->fwd.nlive - 1] : 0;
}
