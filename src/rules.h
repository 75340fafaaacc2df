/* rules.h: the derivative rules of ops.def, instantiated twice:
 *   rule_partials_num  in doubles, rounded by the active backend (the plain
 *                      reverse sweeps);
 *   rule_partial_val   in values through arith_num_op, so a partial of a recorded
 *                      value is itself recorded (derivatives of derivatives)
 *                      and a partial of a dual carries its tangent (jvp);
 *   rule_partials_dual in pairs of doubles (value, derivative along one
 *                      direction): the partials' own derivatives, which the
 *                      second-order sweep in doubles needs (sweep.c).
 * Included by ad.c and fwd.c only. */
#ifndef WG_RULES_H
#define WG_RULES_H
#include "arith.h"
#include "state.h"

/* ---- doubles */
#define ONE        1.0
#define ZERO       0.0
#define HALF       0.5
#define N1(o, x)   num_apply(o, (x), 0)
#define N2(o, x, y) num_apply(o, (x), (y))
#include "rules_vocab.h"
#define LE(x, y)   (num_less((y), (x)) ? 0.0 : 1.0)
#define GE(x, y)   (num_less((x), (y)) ? 0.0 : 1.0)
#define POWDA(x, y) ((y) == 0 ? 0.0 : MUL(y, POW(x, SUB(y, ONE))))

/* Both partials in one dispatch: the plain reverse sweep's inner step,
 * always inlined there so the partials stay in registers. */
static inline __attribute__((always_inline)) void rule_partials_num(int op, double A, double B, double V, double *da_out, double *db_out)
{
    (void)A; (void)B; (void)V;
    switch (op) {
#define OP(e, name, kind, flags, f, da, db) case OP_##e: *da_out = (da); *db_out = (db); return;
#include "ops.def"
#undef OP
    default: *da_out = *db_out = 0; return;
    }
}

#include "rules_undef.h"

/* ---- float64 alone (the array runs' loops, sweep.c): rule_partials_num
 * with the backend known, so the same operations give the same bits and
 * a loop with the op fixed has no call left for the arithmetic ones. */
static inline __attribute__((always_inline)) double rule_f64(int op, double x, double y)
{
    switch (op) {
    case OP_ADD: return x + y;
    case OP_SUB: return x - y;
    case OP_MUL: return x * y;
    case OP_DIV: return x / y;
    case OP_NEG: return -x;
    default: return num_apply_f64(op, x, y);
    }
}
#define ONE        1.0
#define ZERO       0.0
#define HALF       0.5
#define N1(o, x)   rule_f64(o, (x), 0)
#define N2(o, x, y) rule_f64(o, (x), (y))
#include "rules_vocab.h"
#define LE(x, y)   (num_less((y), (x)) ? 0.0 : 1.0)
#define GE(x, y)   (num_less((x), (y)) ? 0.0 : 1.0)
#define POWDA(x, y) ((y) == 0 ? 0.0 : MUL(y, POW(x, SUB(y, ONE))))

static inline __attribute__((always_inline)) void rule_partials_f64(int op, double A, double B, double V, double *da_out, double *db_out)
{
    (void)A; (void)B; (void)V;
    switch (op) {
#define OP(e, name, kind, flags, f, da, db) case OP_##e: *da_out = (da); *db_out = (db); return;
#include "ops.def"
#undef OP
    default: *da_out = *db_out = 0; return;
    }
}

#include "rules_undef.h"

/* ---- values. Intermediate results are parked in a small stack and
 * released together once the caller has retained the partial. */
typedef struct { Value v[16]; int n; } RuleTemps;

static inline Value rule_keep(RuleTemps *ts, Value v)
{
    ts->v[ts->n++] = v;
    return v;
}

static inline void rule_temps_release(RuleTemps *ts)
{
    for (int i = 0; i < ts->n; i++) v_release(ts->v[i]);
    ts->n = 0;
}

#define ONE        num_val(1)
#define ZERO       num_val(0)
#define HALF       num_val(0.5)
#define N1(o, x)   rule_keep(ts, arith_num_op(o, (x), num_val(0)))
#define N2(o, x, y) rule_keep(ts, arith_num_op(o, (x), (y)))
#include "rules_vocab.h"
#define LE(x, y)   num_val(num_less(v_primal(y), v_primal(x)) ? 0.0 : 1.0)
#define GE(x, y)   num_val(num_less(v_primal(x), v_primal(y)) ? 0.0 : 1.0)
/* y * x^(y-1) is 0 at y = 0, but its derivatives with respect to y are
 * not (x^-1 at x != 0): a recorded or dual exponent keeps the product, and
 * only the 0 * inf of x = y = 0 is cut off. */
#define POWDA(x, y) (v_primal(y) == 0 && (v_primal(x) == 0 || ((y).t == V_NUM && (y).id == 0)) \
                     ? ZERO : MUL(y, POW(x, SUB(y, ONE))))

/* The partial is borrowed from ts (or a constant): retain it to keep it. */
static inline Value rule_partial_val(int op, int which, Value A, Value B, Value V, RuleTemps *ts)
{
    (void)A; (void)B; (void)V;
    switch (op) {
#define OP(e, name, kind, flags, f, da, db) case OP_##e: return which == 0 ? (da) : (db);
#include "ops.def"
#undef OP
    default: return num_val(0);
    }
}

#include "rules_undef.h"

/* ---- pairs of doubles. Each operation's derivative is its own rule above,
 * in doubles: no second table. A zero tangent contributes nothing, even
 * against an infinite partial (sqrt at 0), as in the recorded sweep, which
 * never records a constant's contribution; nor does a zero partial, even
 * against an infinite tangent (strong zero). */
typedef struct { double v, t; } RuleDual;

/* Always inlined: the rules below call it with constant ops, so the
 * switches of num_apply and rule_partials_num fold away (W3). */
static inline __attribute__((always_inline)) RuleDual rule_dual_apply(int op, RuleDual x, RuleDual y)
{
    RuleDual r;
    double da, db;
    r.v = num_apply(op, x.v, y.v);
    rule_partials_num(op, x.v, y.v, r.v, &da, &db);
    r.t = (x.t != 0 && da != 0 ? x.t * da : 0) + (num_op_arity[op] == 2 && y.t != 0 && db != 0 ? y.t * db : 0);
    return r;
}

#define ONE        ((RuleDual){ 1.0, 0.0 })
#define ZERO       ((RuleDual){ 0.0, 0.0 })
#define HALF       ((RuleDual){ 0.5, 0.0 })
#define N1(o, x)   rule_dual_apply(o, (x), ZERO)
#define N2(o, x, y) rule_dual_apply(o, (x), (y))
#include "rules_vocab.h"
#define LE(x, y)   ((RuleDual){ num_less((y).v, (x).v) ? 0.0 : 1.0, 0.0 })
#define GE(x, y)   ((RuleDual){ num_less((x).v, (y).v) ? 0.0 : 1.0, 0.0 })
/* as for values: the product is kept unless the exponent is a fixed 0 */
#define POWDA(x, y) ((y).v == 0 && ((x).v == 0 || (y).t == 0) ? ZERO : MUL(y, POW(x, SUB(y, ONE))))

static inline void rule_partials_dual(int op, RuleDual A, RuleDual B, RuleDual V, RuleDual *da_out, RuleDual *db_out)
{
    (void)A; (void)B; (void)V;
    switch (op) {
#define OP(e, name, kind, flags, f, da, db) case OP_##e: *da_out = (da); *db_out = (db); return;
#include "ops.def"
#undef OP
    default: *da_out = *db_out = ZERO; return;
    }
}

#include "rules_undef.h"

#endif
