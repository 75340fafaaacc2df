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

static uint32_t tag_of(Value v) { return v.t == V_DUAL ? AS_DUAL(v)->tag : 0; }

static void split(Value v, uint32_t tag, Value *p, Value *t)
{
    if (v.t == V_DUAL && AS_DUAL(v)->tag == tag) {
        *p = AS_DUAL(v)->p;
        *t = AS_DUAL(v)->t;
    } else {
        *p = v;
        *t = num_val(0);
    }
}

static int is_zero(Value v) { return v.t == V_NUM && v.id == 0 && v.u.n == 0; }

/* A number the double rules can stand in for: plain, and nothing records. */
static inline int plain_num(Value v) { return v.t == V_NUM && (v.id == 0 || !G->tape.recording); }
static inline int zero_tangent(Value v) { return v.id == 0 && v.u.n == 0; }

/* dual_op on plain numbers (the common case inside a jvp): the same rule
 * table in doubles (rule_partials_num, rounded op by op in the backend as
 * rule_partial_val's values are), the same order of operations and the
 * same zero tangents skipped, so the result is identical; no temporaries. */
static Value dual_op_plain(int op, int binary, uint32_t tag, Value ap, Value at, Value bp, Value bt)
{
    double p = num_apply(op, ap.u.n, bp.u.n), da, db, t = 0;
    rule_partials_num(op, ap.u.n, bp.u.n, p, &da, &db);
    if (!zero_tangent(at) && da != 0) t = num_apply(OP_MUL, da, at.u.n);   /* strong zero */
    if (binary && !zero_tangent(bt) && db != 0) t = num_apply(OP_ADD, t, num_apply(OP_MUL, db, bt.u.n));
    return dual_new(tag, num_val(p), num_val(t));
}

/* An operand carries the tangent of a jvp that has returned (fwd.h): the
 * operation on its primal. Without this each call of a jvp that reads
 * what the last one stored would nest one level deeper. */
static __attribute__((noinline)) Value dual_op_dead(int op, Value a, Value b)
{
    return v_num_op(op, fwd_live_part(a), op_arity[op] == 2 ? fwd_live_part(b) : b);
}

/* dual_op's other cases: parts that are duals or arrays (apart from the
 * plain case, so that its test of the lower tag stays off the plain path). */
static __attribute__((noinline)) Value dual_op_parts(int op, int binary, uint32_t lo, uint32_t tag, Value a, Value b,
                                                     Value ap, Value at, Value bp, Value bt)
{
    if (lo && lo != tag && fwd_tag_dead(lo)) return dual_op_dead(op, a, b);
    Value p = v_num_op(op, ap, bp);
    RuleTemps ts;
    ts.n = 0;                /* the slots are written before they are read */
    Value t = num_val(0);
    /* partial times tangent: an exact 0 wins over inf and nan (strong zero) */
    if (!is_zero(at)) t = v_mul_strong(rule_partial_val(op, 0, ap, bp, p, &ts), at);
    if (binary && !is_zero(bt)) {
        Value tb2 = v_mul_strong(rule_partial_val(op, 1, ap, bp, p, &ts), bt);
        Value sum = v_num_op(OP_ADD, t, tb2);
        v_release(t);
        v_release(tb2);
        t = sum;
    }
    rule_temps_release(&ts);
    return dual_new(tag, p, t);
}

Value dual_op(int op, Value a, Value b)
{
    int binary = op_arity[op] == 2;
    uint32_t ta = tag_of(a), tb = binary ? tag_of(b) : 0;
    uint32_t tag = ta > tb ? ta : tb;
    /* the innermost jvp's tag is live; a dual of a lower tag than the
     * other operand's is a part that is not plain (dual_op_parts) */
    if (__builtin_expect(tag != G->fwd.top, 0) && fwd_tag_dead_below(tag)) return dual_op_dead(op, a, b);
    Value ap, at, bp = num_val(0), bt = num_val(0);
    split(a, tag, &ap, &at);
    if (binary) split(b, tag, &bp, &bt);
    if (__builtin_expect(plain_num(ap) && plain_num(at) && plain_num(bp) && plain_num(bt), 1))
        return dual_op_plain(op, binary, tag, ap, at, bp, bt);
    return dual_op_parts(op, binary, ta < tb ? ta : tb, tag, a, b, ap, at, bp, bt);
}

/* ---------------------------------------- forward mode's live tags (dual.h) */

/* tag is not the top (fwd_tag_dead looked): a binary search below it. */
int fwd_tag_dead_below(uint32_t tag)
{
    int lo = 0, hi = G->fwd.nlive - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (G->fwd.live[mid] < tag) lo = mid + 1;
        else hi = mid;
    }
    return !(lo < G->fwd.nlive && G->fwd.live[lo] == tag);
}

void fwd_live_push(uint32_t tag)
{
    if (G->fwd.nlive == G->fwd.caplive) {
        int grown = G->fwd.caplive ? 2 * G->fwd.caplive : 16;
        G->fwd.live = err_realloc(G->fwd.live, sizeof(uint32_t) * (size_t)grown);
        G->fwd.caplive = grown;
    }
    G->fwd.live[G->fwd.nlive++] = tag;
    G->fwd.top = tag;
}

int fwd_depth(void) { return G->fwd.nlive; }

void fwd_unwind(int depth)
{
    if (G->fwd.nlive > depth) G->fwd.nlive = depth;
    G->fwd.top = G->fwd.nlive ? G->fwd.live[G->fwd.nlive - 1] : 0;
}
