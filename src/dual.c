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

Value dual_op(int op, Value a, Value b)
{
    int binary = op_arity[op] == 2;
    uint32_t ta = tag_of(a), tb = binary ? tag_of(b) : 0;
    uint32_t tag = ta > tb ? ta : tb;
    Value ap, at, bp = num_val(0), bt = num_val(0);
    split(a, tag, &ap, &at);
    if (binary) split(b, tag, &bp, &bt);
    if (plain_num(ap) && plain_num(at) && plain_num(bp) && plain_num(bt))
        return dual_op_plain(op, binary, tag, ap, at, bp, bt);
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
