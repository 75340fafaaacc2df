/* dual.c: arithmetic on dual numbers x + t·ε_tag, the values forward mode
 * (fwd.c) runs a function on. An operation on duals of different tags
 * treats the lower tag as a constant of the higher one, so nested jvp
 * calls never confuse their perturbations (Siskind and Pearlmutter's fix,
 * as ForwardDiff.jl's tags do). The tangent of each operation comes from
 * the same rule table as the reverse sweep (rules.h), computed in values:
 * a primal or tangent that is recorded keeps recording. */
#include "dual.h"
#include "arith.h"
#include "rules.h"
#include "state.h"
#include "valuegc.h"

static uint32_t tag_of(Value v) { return v.t == V_DUAL ? AS_DUAL(v)->tag : 0; }

/* v's primal and tangents for tag (NULL: v is a constant of tag, its
 * tangents 0); k is set from a dual of tag. */
static void split(Value v, uint32_t tag, Value *p, const Value **t, int *k)
{
    if (v.t == V_DUAL && AS_DUAL(v)->tag == tag) {
        *p = AS_DUAL(v)->p;
        *t = AS_DUAL(v)->t;
        *k = AS_DUAL(v)->k;
    } else {
        *p = v;
        *t = NULL;
    }
}

static int is_zero(Value v) { return v.t == V_NUM && v.id == 0 && v.u.n == 0; }

/* A number the double rules can stand in for: plain, and nothing records. */
static inline int plain_num(Value v) { return v.t == V_NUM && (v.id == 0 || !G->tape.recording); }
static inline int zero_tangent(Value v) { return v.id == 0 && v.u.n == 0; }

static int all_plain(const Value *t, int k)
{
    if (!t) return 1;
    for (int j = 0; j < k; j++)
        if (!plain_num(t[j])) return 0;
    return 1;
}

/* dual_alloc with its common case inline: a spare dual of this k. */
static inline Dual *dual_alloc_fast(uint32_t tag, int k)
{
    Dual *d = dual_alloc_spare(tag, k);
    return d ? d : dual_alloc(tag, k);
}

/* dual_op on plain numbers (the common case inside a jvp): the same rule
 * table in doubles (rule_partials_num, rounded op by op in the backend as
 * rule_partial_val's values are), the same order of operations and the
 * same zero tangents skipped, so the result is identical; no temporaries.
 * One loop over the k tangents (at, bt NULL: zeros), so a chunk of
 * directions costs one dispatch, one rule and one allocation. */
static inline __attribute__((always_inline)) Value op_plain_body(int op, uint32_t tag, int k, double ap, const Value *at, double bp, const Value *bt)
{
    double p = num_apply(op, ap, bp), da, db;
    rule_partials_num(op, ap, bp, p, &da, &db);
    Dual *d = dual_alloc_fast(tag, k);
    d->p = num_val(p);
    d->plain = 1;
    Value *t = d->t;
    if (da == 0) at = NULL;      /* strong zero: a 0 partial passes nothing */
    if (db == 0) bt = NULL;
    if (__builtin_expect(G->num.backend == BK_F64, 1)) {
        if (k == 1) {      /* jvp(f, x, v): no loop */
            double x = at && !zero_tangent(at[0]) ? da * at[0].u.n : 0;
            if (bt && !zero_tangent(bt[0])) x = x + db * bt[0].u.n;
            t[0] = num_val(x);
        } else if (at && bt)
            for (int j = 0; j < k; j++) {
                double x = zero_tangent(at[j]) ? 0 : da * at[j].u.n;
                t[j] = num_val(zero_tangent(bt[j]) ? x : x + db * bt[j].u.n);
            }
        else if (at)
            for (int j = 0; j < k; j++) t[j] = num_val(zero_tangent(at[j]) ? 0 : da * at[j].u.n);
        else if (bt)
            for (int j = 0; j < k; j++) t[j] = num_val(zero_tangent(bt[j]) ? 0 : 0 + db * bt[j].u.n);
        else
            for (int j = 0; j < k; j++) t[j] = num_val(0);
    } else
        for (int j = 0; j < k; j++) {
            double x = 0;
            if (at && !zero_tangent(at[j])) x = num_apply(OP_MUL, da, at[j].u.n);
            if (bt && !zero_tangent(bt[j])) x = num_apply(OP_ADD, x, num_apply(OP_MUL, db, bt[j].u.n));
            t[j] = num_val(x);
        }
    return obj_val(V_DUAL, d);
}

static __attribute__((noinline)) Value dual_op_plain(int op, uint32_t tag, int k, double ap, const Value *at, double bp, const Value *bt)
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
    const Value *at = NULL, *bt = NULL;
    int k;
    if (a.t == V_DUAL) {
        Dual *x = AS_DUAL(a);
        if (x->tag != top || !x->plain) goto mixed;
        ap = x->p.u.n;
        at = x->t;
        k = x->k;
        if (binary) {
            if (b.t == V_NUM && (b.id == 0 || !G->tape.recording)) bp = b.u.n;
            else if (b.t == V_DUAL && AS_DUAL(b)->tag == top && AS_DUAL(b)->plain) {
                bp = AS_DUAL(b)->p.u.n;
                bt = AS_DUAL(b)->t;
            } else goto mixed;
        }
    } else {
        if (!binary || b.t != V_DUAL || a.t != V_NUM || (a.id != 0 && G->tape.recording)) goto mixed;
        Dual *y = AS_DUAL(b);
        if (y->tag != top || !y->plain) goto mixed;
        ap = a.u.n;
        bp = y->p.u.n;
        bt = y->t;
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
    const Value *at, *bt = NULL;
    int k = 1;
    split(a, tag, &ap, &at, &k);
    if (binary) split(b, tag, &bp, &bt, &k);
    if (plain_num(ap) && plain_num(bp) && all_plain(at, k) && all_plain(bt, k))
        return dual_op_plain(op, tag, k, ap.u.n, at, bp.u.n, bt);
    uint32_t lo = ta < tb ? ta : tb;
    if (lo && lo != tag && fwd_tag_dead(lo)) return dual_op_dead(op, a, b);
    return dual_op_general(op, binary, tag, k, ap, at, bp, bt);
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
