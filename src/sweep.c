/* sweep.c: the reverse sweeps over the session tape.
 *
 * d(y, x) runs a plain sweep in doubles from y's entry down to the lowest
 * entry asked for, with adjoints in a buffer of the sweep's own, so sweeps
 * can run again and again and inside one another. Its results are recorded
 * as OP_DERIV entries that remember the call. Only if a later sweep reaches
 * a DERIV entry (a derivative of a derivative) is that call expanded: the
 * sweep is run once more in recorded values, appending the operations of
 * the reverse pass to the tape, and the outer sweep continues through them.
 * So first derivatives cost one plain sweep, and any order is available.
 *
 * The invariant the sweeps rest on: an expansion appended at [lo_k, ...)
 * reads only its own entries and entries below the DERIV entry k. A sweep
 * reaching k sweeps that range with a buffer of its own and hands what
 * falls below lo_k to its parent's buffer, which covers k and so every
 * entry below it down to the parent's own lo. deriv_expand keeps the
 * invariant: an expansion being recorded never reads the entries of an
 * expansion recorded before it began; it records that derivative afresh
 * inside itself instead (give_plain and give_val check it).
 *
 * Cut entries (the tangents of a place inside jvp, see ad.c) keep their
 * adjoints: the sweep does not go through them.
 *
 * A checkpointed loop is one OP_CKPT entry followed by its outputs
 * (OP_CKOUT). Each output hands the loop entry a token 1 (not its adjoint:
 * adjoints may cancel), so the sweep stops at the loop entry when any
 * output has an adjoint, and there reads the outputs' adjoints and calls
 * the evaluator's hook (sweep.h). A plain sweep gets back scratch regions
 * at the tape's top whose reads below the region land in its own buffers
 * (as an expansion's do); a recorded sweep gets the loop recorded once
 * more at the tape's end, reading only the loop's inputs (below the loop
 * entry), which keeps the invariant above; a sweep through that expansion
 * with respect to one of the loop's outputs hands what reaches the
 * re-run's entry for it to the output ("loops re-run by expansions").
 *
 * This file depends on the tape, the numbers, values and arithmetic, and
 * the rule table only: never on the evaluator. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sweep.h"
#include "arith.h"
#include "error.h"
#include "rules.h"
#include "kinks.h"
#include "arrayrun.h"
#include "fixtape.h"
#include "state.h"

/* The highest cut at or below i, advancing *at; 0 if none. */
static inline uint32_t next_cut(const Cuts *c, uint32_t *at, uint32_t i)
{
    while (*at < c->n && c->ids[*at] > i) (*at)++;
    return *at < c->n ? c->ids[*at] : 0;
}

static void broken_invariant(uint32_t id)
{
    err_raise("internal error: a sweep met entry #%u outside every buffer (please report)", id);
}

/* ------------------------------------------------------- plain sweeps */

typedef struct PlainBuf {
    uint32_t lo, top;
    Cuts cuts;
    double  *adj;          /* float64: adjoints */
    NumAcc  *acc;          /* other backends: exact (quire) or rounded sums */
    uint8_t *touched;
    struct PlainBuf *parent;   /* where contributions below lo go */
    Value   *sink;         /* float64: the adjoints of leaves sink_lo .. sink_lo + nsink - 1 */
    uint32_t sink_lo, nsink;   /* (below lo) go straight to sink[id - sink_lo].u.n */
    uint32_t so_done_lo, so_done_hi;   /* DERIV entries so_through_deriv took with one above them */
} PlainBuf;

static void plain_run(PlainBuf *b, uint32_t top, double seed);
static void plain_run_to(PlainBuf *b, uint32_t top, uint32_t stop);
static void plain_fixin(PlainBuf *b, uint32_t head);
/* The entries a loop's re-run gave its outputs, in an expansion (see
 * "loops re-run by expansions"), highest first. */
typedef struct { Alias *v; uint32_t n; } Aliases;
static uint32_t deriv_expand(uint32_t k, uint32_t *lo, Aliases *al);
static void plain_run_aliased(PlainBuf *b, uint32_t top, double seed, Aliases al);

static void give_plain_elsewhere(PlainBuf *b, uint32_t id, double a, double partial);

static inline void give_plain(PlainBuf *b, uint32_t id, double a, double partial)
{
    if (__builtin_expect(id >= b->lo && b->adj != NULL, 1)) {   /* float64, own buffer */
        if (tape_opcode(id) != OP_CONST) b->adj[id - b->lo] += a * partial;
        return;
    }
    if (id - b->sink_lo < b->nsink) {     /* a leaf of this sweep's sink (W4's a0) */
        b->sink[id - b->sink_lo].u.n += a * partial;
        return;
    }
    give_plain_elsewhere(b, id, a, partial);
}

/* give_plain where f64 (a constant) says the buffer is float64's own
 * (b->adj set): no test of it an operand (the plain loop's copy for it,
 * plain_run_to). */
static inline __attribute__((always_inline)) void give_plain_as(PlainBuf *b, uint32_t id, double a, double partial, const int f64)
{
    if (f64 && __builtin_expect(id >= b->lo, 1)) {
        if (tape_opcode(id) != OP_CONST) b->adj[id - b->lo] += a * partial;
        return;
    }
    give_plain(b, id, a, partial);
}

/* Below this buffer (a leaf sink, or an enclosing buffer), or into exact
 * sums in the other backends: out of line, so the common case inlines. */
static __attribute__((noinline)) void give_plain_elsewhere(PlainBuf *b, uint32_t id, double a, double partial)
{
    while (b && id < b->lo) {
        if (b->sink && id - b->sink_lo < b->nsink) {
            b->sink[id - b->sink_lo].u.n += a * partial;
            return;
        }
        b = b->parent;
    }
    if (!b || id == 0 || tape_opcode(id) == OP_CONST) return;
    if (id > b->top) broken_invariant(id);
    uint32_t k = id - b->lo;
    if (b->adj) b->adj[k] += a * partial;
    else {
        num_acc_fma(&b->acc[k], a, partial);
        b->touched[k] = 1;
    }
}

/* Strong zero (SPEC): a partial that is exactly 0 passes nothing on, even
 * to an adjoint that is inf or nan (NaR). Against a finite adjoint a zero
 * partial adds a zero, which changes nothing, so the plain sweeps test the
 * adjoint once an entry, in place of the test for 0 they make anyway, and
 * no partial: an adjoint that is finite and not 0 (nearly all) steps
 * untested; the first that is inf or nan sends the rest of that sweep to
 * a loop that skips zero partials (plain_run_as). */
static inline int finite_nonzero(double a)
{
    uint64_t u;
    memcpy(&u, &a, sizeof u);
    return (u << 1) - 1 < 0xffdfffffffffffffull;
}

static double take_plain(PlainBuf *b, uint32_t i)
{
    uint32_t k = i - b->lo;
    if (b->adj) return b->adj[k];
    return b->touched[k] ? num_acc_result(&b->acc[k]) : 0;
}

static void put_plain(PlainBuf *b, uint32_t i, double v)
{
    uint32_t k = i - b->lo;
    if (b->adj) b->adj[k] = v;
    else {
        num_acc_clear(&b->acc[k]);
        num_acc_add(&b->acc[k], v);
        b->touched[k] = 1;
    }
}

/* The lowest entry a sweep must reach to answer for wrt: an output of a
 * checkpointed loop is answered at the loop entry (its adjoint is whole
 * once the loop's steps after it were swept). */
static inline uint32_t sweep_floor(uint32_t wrt)
{
    return wrt && tape_opcode(wrt) == OP_CKOUT ? tape_a(wrt) : wrt;
}

static void plain_alloc(PlainBuf *b, uint32_t lo, uint32_t top, PlainBuf *parent, Cuts cuts)
{
    size_t n = (size_t)top - lo + 1;
    memset(b, 0, sizeof *b);
    b->lo = lo;
    b->top = top;
    b->cuts = cuts;
    b->parent = parent;
    if (G->num.backend == BK_F64) b->adj = err_scratch(n * sizeof(double));
    else {
        b->acc = err_scratch(n * sizeof(NumAcc));
        for (size_t i = 0; i < n; i++) num_acc_clear(&b->acc[i]);
        b->touched = err_scratch(n);
    }
}

static void plain_free(PlainBuf *b)
{
    err_scratch_free(b->adj);
    err_scratch_free(b->acc);
    err_scratch_free(b->touched);
}

static double plain_adjoint(void *ud, uint32_t id) { return take_plain(ud, id); }

/* ------------------------------------------- second order in doubles */

/* An outer sweep that reaches DERIV entry k (g = dy/dw, one result of a d
 * call) with adjoint a must hand on a times the derivative of g with
 * respect to everything g depends on. The general way is g's expansion:
 * y's sweep recorded as operations, swept in turn. When y's cone holds
 * only elementary operations (and sums and dots), the same is computed
 * here in doubles, recording nothing (reverse over reverse):
 *   1. the adjoints ā of y's own sweep, from y down to w (cone: the
 *      entries that sweep reaches, the call's cuts held);
 *   2. the outer adjoints τ of those ā, which run the other way, forward
 *      from w, seeded with a: τ_r = Σ_u ∂r/∂u τ_u over r's operands u;
 *   3. for each entry r of the cone, each operand v receives
 *      ā_r Σ_u τ_u ∂(∂r/∂u)/∂v, the partials' own derivatives, from the
 *      rule table in pairs of doubles (rules.h, rule_partials_dual).
 * The outer sweep then goes on below k as it would after an expansion.
 * The two ways agree to rounding (they add the same terms in another
 * order). Other backends keep the expansion, whose sums are those of the
 * quire; so do cones holding derivative entries (third order and up),
 * checkpointed loops and fixed points. A cone decides which way is taken,
 * not what else the session recorded. */

/* The ops of the kinds this way covers (the cone column of ops.def) that
 * are not UNARY or BINARY: the passes below name each of them. */
#define SO_NAMED() OPS_NAMED(OPS_CONE_STRUCTURAL, 5)

/* Whether i is a cut, for ascending i: *at walks the cut list (highest
 * first) from its end. */
static inline int so_is_cut(const Cuts *c, uint32_t *at, uint32_t i)
{
    while (*at > 0 && c->ids[*at - 1] < i) (*at)--;
    return *at > 0 && c->ids[*at - 1] == i;
}

static int so_reserve(size_t n)
{
    if (G->sweep.so.busy) return 0;
    if (G->sweep.so.cap < n) {
        free(G->sweep.so.abar), free(G->sweep.so.tau), free(G->sweep.so.in);
        G->sweep.so.abar = G->sweep.so.tau = NULL, G->sweep.so.in = NULL, G->sweep.so.cap = 0;
        G->sweep.so.abar = err_malloc(n * sizeof(double));
        G->sweep.so.tau = err_malloc(n * sizeof(double));
        G->sweep.so.in = err_malloc(n);
        G->sweep.so.cap = n;
    }
    memset(G->sweep.so.abar, 0, n * sizeof(double));
    memset(G->sweep.so.in, 0, n);
    return 1;
}

/* so_cone's step through a logsumexp entry i (adjoint a): its partials
 * (1 / s) e_j, the softmax; 0 if a * (1 / s) is inf or nan (the five
 * steps' own strong zeros decide then: the expansion). Out of line: the
 * loop stays small. */
static __attribute__((noinline)) int so_cone_lse(uint32_t lo, uint32_t i, double a)
{
    TapeLse l = tape_lse(i);
    double c = l.inv != 0 ? a * l.inv : 0;     /* a zero partial passes nothing */
    if (c != 0 && !finite_nonzero(c)) return 0;
    for (uint32_t j = 0; j < l.t.n; j++) {
        uint32_t x = tape_term(l.t, j);
        if (x >= lo && tape_opcode(x) != OP_CONST) {
            G->sweep.so.in[x - lo] = 1;
            if (c != 0 && l.e[j] != 0) G->sweep.so.abar[x - lo] += c * l.e[j];
        }
    }
    return 1;
}

/* Pass 1: the cone of y above lo and its adjoints; 0 if the cone holds an
 * entry this way does not cover. */
static int so_cone(uint32_t lo, uint32_t top, Cuts cuts)
{
    uint32_t at = 0, cut = next_cut(&cuts, &at, top), n;
    G->sweep.so.in[top - lo] = 1;
    G->sweep.so.abar[top - lo] = 1;
    for (uint32_t i = top; i >= lo && i > 0; i--) {
        if ((i & 0xfffff) == 0) err_check_interrupt();
        if (i == cut) {
            cut = next_cut(&cuts, &at, i - 1);
            continue;
        }
        if (!G->sweep.so.in[i - lo]) continue;
        int op = tape_opcode(i);
        if (!num_op_cone[op]) return 0;
        double a = G->sweep.so.abar[i - lo];
        SO_NAMED();
        switch (op) {
        case OP_CONST: case OP_LEAF:
            break;
        case OP_SUM: {
            TapeTerms t = tape_terms(i);
            for (uint32_t j = 0; j < t.n; j++) {
                uint32_t x = tape_term(t, j);
                if (x >= lo && tape_opcode(x) != OP_CONST) G->sweep.so.in[x - lo] = 1, G->sweep.so.abar[x - lo] += a;
            }
            break;
        }
        case OP_DOT: case OP_LSE: {     /* (one label: the dispatch stays as short) */
            if (op == OP_LSE) {
                if (!so_cone_lse(lo, i, a)) return 0;
                break;
            }
            const uint32_t *p = tape_pairs(i, &n);
            for (uint32_t j = 0; j < 2 * n; j++)
                if (p[j] >= lo && tape_opcode(p[j]) != OP_CONST) {
                    double pj = tape_val(p[j ^ 1]);
                    G->sweep.so.in[p[j] - lo] = 1;
                    if (pj != 0) G->sweep.so.abar[p[j] - lo] += a * pj;      /* strong zero */
                }
            break;
        }
        default: {
            double da = 0, db = 0;        /* a zero partial passes nothing (strong zero) */
            uint32_t x = tape_a(i), y = tape_b(i);
            int two = num_op_arity[op] == 2;
            if (a != 0) rule_partials_num(op, tape_val(x), tape_val(y), tape_val(i), &da, &db);
            if (x >= lo && tape_opcode(x) != OP_CONST) {
                G->sweep.so.in[x - lo] = 1;
                if (da != 0) G->sweep.so.abar[x - lo] += a * da;
            }
            if (two && y >= lo && tape_opcode(y) != OP_CONST) {
                G->sweep.so.in[y - lo] = 1;
                if (db != 0) G->sweep.so.abar[y - lo] += a * db;
            }
        }
        }
    }
    return 1;
}

static inline double so_tau(uint32_t lo, uint32_t id) { return id >= lo ? G->sweep.so.tau[id - lo] : 0; }

/* The τ a logsumexp entry i gets from its operands: Σ_j p_j τ_j, p_j =
 * (1 / s) e_j. */
static double so_lse_tau(uint32_t lo, uint32_t i)
{
    TapeLse l = tape_lse(i);
    double t = 0;
    for (uint32_t j = 0; j < l.t.n; j++) {
        double tj = so_tau(lo, tape_term(l.t, j));
        if (tj != 0 && l.e[j] != 0) t += l.e[j] * tj;
    }
    return t != 0 && l.inv != 0 ? l.inv * t : 0;
}

/* Pass 2: τ forward from lo, seeded: tau holds each place's outer
 * adjoint a (0 elsewhere), and a place above lo adds the τ its operands
 * hand it, as the entry it is (the τ of one call's places are those of
 * each place alone, added up: τ is linear in the seeds). */
static void so_forward(uint32_t lo, uint32_t top, Cuts cuts)
{
    uint32_t n, at = cuts.n;
    for (uint32_t i = lo + 1; i <= top; i++) {
        /* a cut passes no adjoint to its operands in y's sweep: no τ reaches it */
        if (!G->sweep.so.in[i - lo] || so_is_cut(&cuts, &at, i)) continue;
        if ((i & 0xfffff) == 0) err_check_interrupt();
        int op = tape_opcode(i);
        double t = 0;
        SO_NAMED();
        switch (op) {
        case OP_CONST: case OP_LEAF:
            break;
        case OP_SUM: {
            TapeTerms terms = tape_terms(i);
            for (uint32_t j = 0; j < terms.n; j++) t += so_tau(lo, tape_term(terms, j));
            break;
        }
        case OP_DOT: case OP_LSE: {     /* (one label: the dispatch stays as short) */
            if (op == OP_LSE) {
                t = so_lse_tau(lo, i);
                break;
            }
            const uint32_t *p = tape_pairs(i, &n);
            for (uint32_t j = 0; j < 2 * n; j++) {
                double tj = so_tau(lo, p[j]), pj = tape_val(p[j ^ 1]);
                if (tj != 0 && pj != 0) t += pj * tj;
            }
            break;
        }
        default: {
            uint32_t x = tape_a(i), y = tape_b(i);
            double tx = so_tau(lo, x), ty = num_op_arity[op] == 2 ? so_tau(lo, y) : 0, da, db;
            if (tx == 0 && ty == 0) break;
            rule_partials_num(op, tape_val(x), tape_val(y), tape_val(i), &da, &db);
            t = (tx != 0 && da != 0 ? da * tx : 0) + (ty != 0 && db != 0 ? db * ty : 0);
        }
        }
        double seed = G->sweep.so.tau[i - lo];
        G->sweep.so.tau[i - lo] = seed != 0 ? seed + t : t;
    }
}

/* The second-order contributions of binary or unary entry i. A rule reads
 * up to three entries: its operands (values A, B) and its own result (V,
 * as tanh's 1 - V^2 does), and an expansion records those reads as they
 * are written: a place at i itself gets what V's reads give. So each read
 * entry v gets ā (tx ∂da/∂v + ty ∂db/∂v), each ∂/∂v one evaluation of the
 * rules in pairs seeded at v alone. */
static void so_give_rule(PlainBuf *b, uint32_t i, int op, double abar, double tx, double ty)
{
    uint32_t ids[3] = { tape_a(i), num_op_arity[op] == 2 ? tape_b(i) : 0, i };
    RuleDual in[3] = { { tape_val(ids[0]), 0 }, { tape_val(tape_b(i)), 0 }, { tape_val(i), 0 } };
    for (int v = 0; v < 3; v++) {
        if (!ids[v]) continue;
        RuleDual da, db;
        in[v].t = 1;
        rule_partials_dual(op, in[0], in[1], in[2], &da, &db);
        in[v].t = 0;
        double c = (tx != 0 && da.t != 0 ? tx * da.t : 0) + (ty != 0 && db.t != 0 ? ty * db.t : 0);
        if (c != 0) give_plain(b, ids[v], abar, c);
    }
}

/* Pass 3: what the partials' own derivatives hand to the outer sweep. */
static void so_give(PlainBuf *b, uint32_t lo, uint32_t top, Cuts cuts)
{
    uint32_t at = 0, cut = next_cut(&cuts, &at, top), n;
    for (uint32_t i = top; i >= lo && i > 0; i--) {
        if (i == cut) {
            cut = next_cut(&cuts, &at, i - 1);
            continue;
        }
        double a = G->sweep.so.abar[i - lo];
        if (!G->sweep.so.in[i - lo] || a == 0) continue;
        if ((i & 0xfffff) == 0) err_check_interrupt();
        int op = tape_opcode(i);
        SO_NAMED();
        switch (op) {
        case OP_CONST: case OP_LEAF: case OP_SUM:     /* linear: no second derivatives */
            break;
        case OP_LSE: {         /* d p_j / d x_k = p_j (δ_jk - p_k): x_k gets ā p_k (τ_k - Σ_j p_j τ_j) */
            TapeLse l = tape_lse(i);
            double tbar = so_lse_tau(lo, i);
            for (uint32_t j = 0; j < l.t.n; j++) {
                uint32_t x = tape_term(l.t, j);
                if (l.e[j] == 0 || l.inv == 0) continue;    /* a zero partial passes nothing */
                double tx = so_tau(lo, x), p = l.inv * l.e[j];    /* nor does a zero τ */
                double c = tx != 0 && tbar != 0 ? p * (tx - tbar) : tx != 0 ? p * tx : tbar != 0 ? -(p * tbar) : 0;
                if (c != 0) give_plain(b, x, a, c);
            }
            break;
        }
        case OP_DOT: {
            const uint32_t *p = tape_pairs(i, &n);
            for (uint32_t j = 0; j < 2 * n; j++) {
                double t = so_tau(lo, p[j ^ 1]);
                if (t != 0) give_plain(b, p[j], a, t);
            }
            break;
        }
        default: {
            if (num_op_flags[op] & OPF_LINEAR) break;
            uint32_t x = tape_a(i), y = tape_b(i);
            double tx = so_tau(lo, x), ty = num_op_arity[op] == 2 ? so_tau(lo, y) : 0;
            if (num_op_flags[op] & OPF_BILINEAR) {      /* mul: the partials are the operands */
                if (ty != 0) give_plain(b, x, a, ty);
                if (tx != 0) give_plain(b, y, a, tx);
            } else if (tx != 0 || ty != 0) so_give_rule(b, i, op, a, tx, ty);
        }
        }
    }
}

/* Steps 1-3 for the DERIV entries of one call at once: k (outer adjoint
 * a) and the entries right below it that are results of the same call
 * (a grad over an array of n makes n in a row). Their adjoints are whole
 * when the sweep reaches k: a DERIV entry has no operands, so all that
 * reads them lies above k. The cone of y is the same for each, and
 * passes 2 and 3 are linear in the seeds, so one pass from the lowest
 * place hands on what one pass a place would (to rounding: the same
 * terms added in another order), in place of n passes each as long as
 * y's cone: the sweep through an array's derivative stays linear in n.
 * The group stops at a result the plain way cannot take (a loop's output,
 * an adjoint inf or nan: its own step decides), at b's bottom, and at
 * once when the outer sweep holds cuts; b->so_done then names the
 * results taken with k, so their own steps pass nothing again (their
 * adjoints stay as they are, for whoever reads them). Returns 0 if the
 * expansion must do k. */
static int so_through_deriv(PlainBuf *b, uint32_t k, double a)
{
    if (G->num.backend != BK_F64 || !b->adj) return 0;
    uint32_t j, r = tape_deriv_call_of(k, &j);
    const DerivRec *rec = tape_deriv_call(r);
    uint32_t y = rec->y, w = tape_deriv_wrt(rec, j);
    if (!w || sweep_floor(w) > y) return 1;   /* g is the constant 0 */
    if (sweep_floor(w) != w) return 0;        /* a loop's output: the loop's steps after it count */
    Cuts cuts = { rec->ncut ? tape_pool_at(rec->cut_off) : NULL, rec->ncut };
    uint32_t lo = w, m = k;
    while (!b->cuts.n && m > b->lo && m - 1 > y && tape_opcode(m - 1) == OP_DERIV) {
        uint32_t jm, rm = tape_deriv_call_of(m - 1, &jm), wm = tape_deriv_wrt(rec, jm);
        double am = b->adj[m - 1 - b->lo];
        if (rm != r || (am != 0 && (!finite_nonzero(am) || (wm && sweep_floor(wm) != wm)))) break;
        m--;
        if (am != 0 && wm && wm < lo) lo = wm;
    }
    if (!so_reserve((size_t)y - lo + 1)) return 0;
    G->sweep.so.busy = 1;
    int ok = so_cone(lo, y, cuts);
    if (!ok && lo < w) {            /* the cone fails lower down: k alone, as it would */
        m = k, lo = w;
        G->sweep.so.busy = 0;       /* (so_reserve clears nothing for a busy caller) */
        so_reserve((size_t)y - lo + 1);
        G->sweep.so.busy = 1;
        ok = so_cone(lo, y, cuts);
    }
    if (ok) {
        memset(G->sweep.so.tau, 0, ((size_t)y - lo + 1) * sizeof(double));
        int any = 0;
        for (uint32_t e = m; e <= k; e++) {      /* the seeds: each place's outer adjoint */
            double ae = e == k ? a : b->adj[e - b->lo];
            uint32_t je, we;
            tape_deriv_call_of(e, &je);
            we = tape_deriv_wrt(rec, je);
            if (ae == 0 || !we || we > y || !G->sweep.so.in[we - lo]) continue;   /* 0, or w not in y's cone */
            G->sweep.so.tau[we - lo] += ae;
            any = 1;
        }
        if (any) {
            so_forward(lo, y, cuts);
            so_give(b, lo, y, cuts);
        }
        if (m < k) b->so_done_lo = m, b->so_done_hi = k - 1;
    }
    G->sweep.so.busy = 0;
    return ok;
}

/* A DERIV entry k with adjoint a: sweep its expansion into our buffers. */
static void plain_through_deriv(PlainBuf *b, uint32_t k, double a)
{
    if (k >= b->so_done_lo && k <= b->so_done_hi) return;   /* taken with a result above it */
    if (so_through_deriv(b, k, a)) return;
    Aliases al;
    uint32_t lo, e = deriv_expand(k, &lo, &al);
    if (e && e < lo)         /* the derivative is an entry that existed before */
        give_plain(b, e, a, 1);
    else if (e) {
        PlainBuf sub;
        plain_alloc(&sub, lo, e, b, b->cuts);
        plain_run_aliased(&sub, e, a, al);
        plain_free(&sub);
    }
    err_scratch_free(al.v);
}

/* A loop's outputs follow its entry, in order; reclaiming may drop dead
 * ones, so they are recognised rather than counted. */
static inline int is_output_of(uint32_t o, uint32_t loop, uint32_t n)
{
    return o < tape_size() && tape_opcode(o) == OP_CKOUT && tape_a(o) == loop && tape_b(o) < n;
}

/* A sum over a run of entries first .. first + n - 1 in the buffer's
 * range, its adjoint a: give_plain's a * 1 to each term that is not a
 * constant entry, in one loop the compiler vectorises (a select). */
static __attribute__((optimize("tree-vectorize", "vect-cost-model=cheap", "no-trapping-math")))
void sum_run_give(double *restrict adj, uint32_t first, uint32_t n, double a)
{
    const uint32_t *restrict code = tape_codes() + first;
    for (uint32_t j = 0; j < n; j++) adj[j] = (code[j] & TAPE_OPMASK) != OP_CONST ? adj[j] + a : adj[j];
}

/* A logsumexp over a run first .. first + n - 1 in the buffer's range:
 * give_plain's c * e_j to each term that is not a constant entry, as
 * sum_run_give does (c is the adjoint times 1 / s). */
static __attribute__((optimize("tree-vectorize", "vect-cost-model=cheap", "no-trapping-math")))
void lse_run_give(double *restrict adj, uint32_t first, uint32_t n, double c, const TapeF64 *restrict e)
{
    const uint32_t *restrict code = tape_codes() + first;
    for (uint32_t j = 0; j < n; j++) adj[j] = (code[j] & TAPE_OPMASK) != OP_CONST ? adj[j] + c * e[j] : adj[j];
}

/* A logsumexp entry's step: each operand gets (a * (1 / s)) * e_j, the
 * softmax, as the log, sum, exp and shift it replaces hand it on, strong
 * zeros too: log's partial 0 against an inf or nan adjoint passes nothing,
 * nor does a product c that is 0 (the sum's adjoint: the sweep skips it),
 * and a c that is inf or nan skips the e_j that are 0 (the exp steps'
 * adjoint would send the sweep on in its strong loop). */
static __attribute__((noinline)) void plain_lse(PlainBuf *b, uint32_t i, double a, int strong)
{
    TapeLse l = tape_lse(i);
    double c = a * l.inv;
    if (c == 0 || (strong && l.inv == 0)) return;
    strong = !finite_nonzero(c);
    if (!strong && !l.t.list && b->adj && l.t.first >= b->lo) lse_run_give(b->adj + (l.t.first - b->lo), l.t.first, l.t.n, c, l.e);
    else if (!strong && !l.t.list && b->sink && l.t.first >= b->sink_lo && l.t.first + l.t.n - b->sink_lo <= b->nsink) {
        Value *to = b->sink + (l.t.first - b->sink_lo);     /* leaves: none a constant */
        for (uint32_t j = 0; j < l.t.n; j++) to[j].u.n += c * l.e[j];
    } else
        for (uint32_t j = 0; j < l.t.n; j++)
            if (!strong || l.e[j] != 0) give_plain(b, tape_term(l.t, j), c, l.e[j]);
}

/* An elementary entry's step (op UNARY or BINARY): its partials by the
 * rule table, each to its operand. Inlined with op a constant for the
 * commonest ops (plain_step_as), so that their partials fold and their
 * arity is known: no second dispatch, no look-up (W4's and det's scalar
 * entries: ~10 instructions of ~100 an entry). */
static inline __attribute__((always_inline)) void plain_elementary_step(PlainBuf *b, uint32_t i, double a, const int strong, int op, int binary,
                                                                         const int f64)
{
    double da, db;
    uint32_t x = tape_a(i), y = tape_b(i);
    rule_partials_num(op, tape_val(x), tape_val(y), tape_val(i), &da, &db);
    if (!strong || da != 0) give_plain_as(b, x, a, da, f64);
    if (binary && (!strong || db != 0)) give_plain_as(b, y, a, db, f64);
}

/* One entry's step; strong (a constant): the adjoint is inf or nan, and
 * the partials that are 0 are skipped. */
static inline __attribute__((always_inline)) void plain_step_as(PlainBuf *b, uint32_t i, double a, const int strong, const int f64)
{
    int op = tape_opcode(i);
    uint32_t n;
    OPS_NAMED(OPS_STRUCTURAL, 10);
    switch (op) {
    case OP_CONST: case OP_LEAF:
        return;
    case OP_SUM: case OP_LSE: {       /* (one label: the dispatch stays as short as it was) */
        if (__builtin_expect(op == OP_LSE, 0)) {
            plain_lse(b, i, a, strong);
            return;
        }
        TapeTerms t = tape_terms(i);
        if (!t.list && b->adj && t.first >= b->lo) sum_run_give(b->adj + (t.first - b->lo), t.first, t.n, a);
        else if (!t.list)
            for (uint32_t j = 0; j < t.n; j++) give_plain(b, t.first + j, a, 1);
        else
            for (uint32_t j = 0; j < t.n; j++) give_plain(b, t.list[j], a, 1);
        return;
    }
    case OP_DOT: {
        const uint32_t *p = tape_pairs(i, &n);
        for (uint32_t j = 0; j < n; j++) {
            double u = tape_val(p[2 * j]), v = tape_val(p[2 * j + 1]);
            if (!strong || v != 0) give_plain(b, p[2 * j], a, v);
            if (!strong || u != 0) give_plain(b, p[2 * j + 1], a, u);
        }
        return;
    }
    case OP_DERIV:
        plain_through_deriv(b, i, a);
        return;
    case OP_CKOUT:
        give_plain(b, tape_a(i), 1, 1);
        return;
    case OP_CKPT: {
        if (!G->sweep.loop_hooks.reverse) return;
        n = G->sweep.loop_hooks.outputs(i);
        double *lam = err_scratch(sizeof(double) * (n ? n : 1));
        double *total = err_scratch(sizeof(double) * (n ? n : 1));
        uint32_t end = i + 1;       /* past the last output */
        for (; end <= b->top && is_output_of(end, i, n); end++) lam[tape_b(end)] = take_plain(b, end);
        memcpy(total, lam, sizeof(double) * n);
        G->sweep.loop_hooks.reverse(i, lam, total, b);      /* (it records and sweeps above the tape's top alone) */
        /* an output's own adjoint becomes its whole one (for d with
         * respect to it); it was handed on already */
        for (uint32_t o = i + 1; o < end; o++) put_plain(b, o, total[tape_b(o)]);
        err_scratch_free(lam);
        err_scratch_free(total);
        return;
    }
    case OP_FIXIN:
        if (tape_b(i) == 0) plain_fixin(b, i);
        return;
    case OP_FIXPT:          /* to its stand-in */
        give_plain(b, tape_b(i), a, 1);
        return;
    case OP_MUL: plain_elementary_step(b, i, a, strong, OP_MUL, 1, f64); return;
    case OP_ADD: plain_elementary_step(b, i, a, strong, OP_ADD, 1, f64); return;
    case OP_SUB: plain_elementary_step(b, i, a, strong, OP_SUB, 1, f64); return;
    case OP_COPY: plain_elementary_step(b, i, a, strong, OP_COPY, 0, f64); return;     /* (a version's copy: W4's a = a0) */
    default:    /* (tanh, W2's recurrence, with its partial folded: tested here, not as a case, the
                 * loop's code for the common ops stays as it was: lstm1's sweep is unchanged) */
        if (__builtin_expect(op == OP_TANH, 0)) plain_elementary_step(b, i, a, strong, OP_TANH, 0, f64);
        else plain_elementary_step(b, i, a, strong, op, num_op_arity[op] == 2, f64);
        return;
    }
}


/* ------------------------------------------------------- array runs
 *
 * An array run (tape.h: an elementwise op or a matrix product over n
 * numbers, recorded as its n element entries and one record) is swept in
 * one tight loop per operand when the plain sweep reaches its top entry:
 * the partial of element j comes from the op's rule with the op fixed (the
 * switch folds away), times the element's adjoint, into the operand's
 * adjoint. What each element would give is what it gives: an adjoint of 0
 * gives nothing, a partial of 0 gives nothing (strong zero), so the loops
 * agree with the per-element sweep to rounding (a broadcast number's
 * adjoint adds the same terms; a product's are summed row by row). The run
 * is left to the per-element steps when it is not whole in the sweep's
 * range, holds a cut, or an operand's adjoint lives neither in the
 * sweep's buffer nor in its sink. */

/* Where an operand's adjoints go: p[j * stride] for element j (stride 0:
 * one number takes every element's). NULL p: no adjoint (a constant), or
 * not a place this loop can write (the per-element steps go instead). */
typedef struct { double *p; long stride; int ok; } RunTarget;

static __attribute__((noinline)) RunTarget run_target_outside(PlainBuf *b, uint8_t kind, uint32_t id, uint32_t n);

/* (the common cases inline: a run of operands, or one number, in the
 * sweep's buffer or its sink) */
static inline __attribute__((always_inline)) RunTarget run_target(PlainBuf *b, uint8_t kind, uint32_t id, uint32_t n)
{
    if (kind == TAPE_RUN_NONE || kind == TAPE_RUN_CONSTS || kind == TAPE_RUN_LIST) return (RunTarget){ NULL, 0, 1 };
    if (kind == TAPE_RUN_ONE && (id == 0 || tape_opcode(id) == OP_CONST)) return (RunTarget){ NULL, 0, 1 };
    uint32_t last = kind == TAPE_RUN_SEQ ? id + n - 1 : id;
    if (__builtin_expect(id >= b->lo && last <= b->top, 1)) return (RunTarget){ b->adj + (id - b->lo), kind == TAPE_RUN_SEQ, 1 };
    if (b->sink && id >= b->sink_lo && last - b->sink_lo < b->nsink)     /* the places (lstm's parameters) */
        return (RunTarget){ &b->sink[id - b->sink_lo].u.n, kind == TAPE_RUN_SEQ ? (long)(sizeof(Value) / sizeof(double)) : 0, 1 };
    return run_target_outside(b, kind, id, n);
}

/* An operand's adjoints outside the sweep's buffer, found as
 * give_plain_elsewhere finds each element's: down the buffers that hold
 * the sweep, each one's sink first, to the first buffer whose range
 * reaches the operand, or nowhere (below every buffer: nothing reaches
 * it). ok 0 if the elements would not all land in one place a loop can
 * write (a sink or a float64 buffer): the steps go then. A checkpointed
 * loop's re-run (sweep_region) reads the loop's inputs from its parent's
 * buffer: ode's x, a run of 999 a stage. */
static RunTarget run_target_outside(PlainBuf *b, uint8_t kind, uint32_t id, uint32_t n)
{
    RunTarget t = { NULL, kind == TAPE_RUN_SEQ, 1 };
    uint32_t last = kind == TAPE_RUN_SEQ ? id + n - 1 : id;
    for (const PlainBuf *p = b; p; p = p->parent) {
        if (p->sink && id >= p->sink_lo && last - p->sink_lo < p->nsink) {     /* in p's sink (the common case) */
            t.p = &p->sink[id - p->sink_lo].u.n;
            t.stride *= (long)(sizeof(Value) / sizeof(double));
            return t;
        }
        if (p->sink && last >= p->sink_lo && id < p->sink_lo + p->nsink) t.ok = 0;   /* partly */
        else if (last < p->lo) continue;
        else if (id >= p->lo && last <= p->top && p->adj) t.p = p->adj + (id - p->lo);
        else t.ok = 0;
        return t;
    }
    return t;           /* below every buffer, outside every sink: nothing reaches it (give_plain) */
}

/* One operand's adjoints from an elementwise run: which 0 (a) or 1 (b).
 * Element j gives g * p, its adjoint times the op's partial (the rule
 * table in float64, rules.h), unless g or p is 0: a select, so that the
 * loops over a run (operand strides 1, 1 and 1, 0 and 0, 1 into
 * consecutive adjoints) vectorise. One number's adjoint (stride 0) adds
 * the elements' terms from the top down, as the per-element steps do. */
#define RUN_VECTORISE __attribute__((optimize("tree-vectorize", "vect-cost-model=cheap", "no-trapping-math")))
/* A run of places in a sink (the parameters of ba's jacobian, whose
 * adjoints are the Values' numbers): its own loop, the stride a constant
 * (the general loop's strides cost twice the instructions). */
#define RUN_SINK_STRIDE ((long)(sizeof(Value) / sizeof(double)))
#define RUN_GIVE_TERM(OPC, j, SA, SB, T)                                            \
    double g = adj[j], da, db;                                                      \
    rule_partials_f64(OPC, A[(j) * (SA)], B[(j) * (SB)], V[j], &da, &db);          \
    double p = which ? db : da, q = g * p, *to = &(T);                             \
    *to = (g != 0) & (p != 0) ? *to + q : *to;
#define RUN_GIVE_LOOP(OPC)                                                          \
    if (t.stride == 1 && sa == 1 && sb == 1) {                                      \
        for (uint32_t j = 0; j < n; j++) { RUN_GIVE_TERM(OPC, j, 1, 1, T[j]) }      \
    } else if (t.stride == 1 && sa == 1 && sb == 0) {                               \
        for (uint32_t j = 0; j < n; j++) { RUN_GIVE_TERM(OPC, j, 1, 0, T[j]) }      \
    } else if (t.stride == 1 && sa == 0 && sb == 1) {                               \
        for (uint32_t j = 0; j < n; j++) { RUN_GIVE_TERM(OPC, j, 0, 1, T[j]) }      \
    } else if (t.stride == RUN_SINK_STRIDE && sa == 1 && sb == 1) {                 \
        for (uint32_t j = 0; j < n; j++) { RUN_GIVE_TERM(OPC, j, 1, 1, T[j * RUN_SINK_STRIDE]) } \
    } else                                                                          \
        for (uint32_t j = n; j-- > 0; ) { RUN_GIVE_TERM(OPC, j, sa, sb, T[j * t.stride]) }

static RUN_VECTORISE void run_give(int op, int which, uint32_t n, const double *restrict adj, const double *restrict A, long sa,
                                   const double *restrict B, long sb, const double *restrict V, RunTarget t)
{
    double *restrict T = t.p;
    switch (op) {
#define OP(e, name, kind, flags, f, da, db) case OP_##e: RUN_GIVE_LOOP(OP_##e) return;
#include "ops.def"
#undef OP
    default: return;
    }
}
#undef RUN_GIVE_LOOP
#undef RUN_GIVE_TERM

/* Both operands' adjoints from a short elementwise run in one scalar loop
 * (lstm's rows of 7: there the vectorised loops' set-up, one call an
 * operand and a scalar tail cost more than the elements). From the top
 * element down, each element's a then its b: the order of the
 * per-element steps, so an operand that both sides or several elements
 * name (stride 0) adds the same terms in the same order. The same
 * strong zeros as run_give: an adjoint or a partial of 0 gives nothing.
 * A target of NULL p (a constant) takes nothing: its terms go to a hole. */
#define RUN_SHORT 16u
static inline __attribute__((always_inline)) void run_give_short(int op, uint32_t n, const double *adj, const double *A, long sa,
                                   const double *B, long sb, const double *V, RunTarget ta, RunTarget tb)
{
    double hole = 0;
    double *Ta = ta.p ? ta.p : &hole, *Tb = tb.p ? tb.p : &hole;
    long ra = ta.p ? ta.stride : 0, rb = tb.p ? tb.stride : 0;
    switch (op) {
#define OP(e, name, kind, flags, f, da, db) case OP_##e:                          \
        for (uint32_t j = n; j-- > 0; ) {                                          \
            double g = adj[j], pa, pb;                                             \
            if (g == 0) continue;                                                  \
            rule_partials_f64(OP_##e, A[j * sa], B[j * sb], V[j], &pa, &pb);      \
            if (pa != 0) Ta[j * ra] += g * pa;                                     \
            if (pb != 0) Tb[j * rb] += g * pb;                                     \
        }                                                                          \
        return;
#include "ops.def"
#undef OP
    default: return;
    }
}

/* A LIST operand (its ids, values, and adjoints summed apart: below). */
typedef struct { uint32_t *ids; double *v, *g; } RunList;

/* The LIST operand which (0: a, 1: b) of elementwise run r: element j's
 * id read from its entry and its value gathered; g is room for its
 * adjoints summed apart (list_apart zeroes what it uses). */
static RunList elem_list(const TapeRun *r, int which)
{
    uint32_t n = r->n, base = r->base;
    RunList l;
    l.v = err_scratch_uninit(sizeof(double) * 2 * n + sizeof(uint32_t) * n);
    l.g = l.v + n;
    l.ids = (uint32_t *)(l.g + n);
    uint32_t *restrict ids = l.ids;      /* (restrict: the stores leave the tape's arrays be) */
    double *restrict v = l.v;
    const double *restrict val = tape_vals();
    if (which)
        for (uint32_t j = 0; j < n; j++) ids[j] = tape_b(base + j);
    else
        for (uint32_t j = 0; j < n; j++) ids[j] = tape_a(base + j);
    for (uint32_t j = 0; j < n; j++) v[j] = val[ids[j]];
    return l;
}

/* An elementwise run's operands and values, for the LIST loops below. */
typedef struct { const TapeRun *r; const double *adj, *A, *B, *V; long sa, sb; } RunArgs;

/* Elements j0 .. j1 - 1 of LIST operand which: their adjoints summed
 * apart in g, then handed on one by one from the top down. */
static void list_apart(PlainBuf *b, const RunArgs *x, int which, RunList *l, uint32_t j0, uint32_t j1)
{
    if (j0 == j1) return;
    memset(l->g + j0, 0, sizeof(double) * (j1 - j0));
    run_give(x->r->op, which, j1 - j0, x->adj + j0, x->A + j0 * x->sa, x->sa, x->B + j0 * x->sb, x->sb, x->V + j0,
             (RunTarget){ l->g + j0, 1, 1 });
    for (uint32_t j = j1; j-- > j0; )
        if (l->g[j] != 0) give_plain(b, l->ids[j], l->g[j], 1);
}

#define LIST_DIRECT 8u       /* a stretch this long at least goes straight */
#define LIST_BREAKS 8u       /* more breaks than this: all summed apart */

/* How many of entries first .. first + n - 1 are constants. */
static RUN_VECTORISE uint32_t count_consts(uint32_t first, uint32_t n)
{
    const uint32_t *restrict code = tape_codes() + first;
    uint32_t k = 0;
    for (uint32_t j = 0; j < n; j++) k += (code[j] & TAPE_OPMASK) == OP_CONST;
    return k;
}

/* Where elements whose ids run on from first, n of them, may give their
 * adjoints straight, as a SEQ operand's do: inside b's buffer, none a
 * constant entry (give_plain passes those by). NULL if not. */
static double *list_direct(PlainBuf *b, uint32_t first, uint32_t n)
{
    if (n < LIST_DIRECT || first < b->lo || first + (n - 1) > b->top || count_consts(first, n)) return NULL;
    return b->adj + (first - b->lo);
}

/* LIST operand which's adjoints, from the top element down: when its ids
 * run on but at a few elements (ode's f: x[0], then a run's n - 1
 * entries), each stretch of at least LIST_DIRECT elements goes straight
 * into the buffer in one loop, and the elements between are summed apart
 * (list_apart); else all of them are. */
static void list_give(PlainBuf *b, const RunArgs *x, int which, RunList *l)
{
    uint32_t n = x->r->n, brk[LIST_BREAKS + 1], nbrk = 0;
    const uint32_t *ids = l->ids;
    for (uint32_t j = 1; j < n; j++)
        if (__builtin_expect(ids[j] != ids[j - 1] + 1, 0)) {
            if (nbrk == LIST_BREAKS) {
                list_apart(b, x, which, l, 0, n);
                return;
            }
            brk[nbrk++] = j;
        }
    uint32_t j1 = n, k1 = n;    /* [j1, k1): still to sum apart */
    for (uint32_t s = nbrk + 1; s-- > 0; ) {
        uint32_t j0 = s ? brk[s - 1] : 0;
        double *to = list_direct(b, ids[j0], j1 - j0);
        if (to) {
            list_apart(b, x, which, l, j1, k1);
            run_give(x->r->op, which, j1 - j0, x->adj + j0, x->A + j0 * x->sa, x->sa, x->B + j0 * x->sb, x->sb, x->V + j0,
                     (RunTarget){ to, 1, 1 });
            k1 = j0;
        }
        j1 = j0;
    }
    list_apart(b, x, which, l, 0, k1);
}

/* Elementwise run r, whole in b's range: 0 if it is left to the steps.
 * A LIST operand's terms are handed on from the top down, as the element
 * steps give them (list_give). */
static __attribute__((noinline)) int plain_elemwise_list_run(PlainBuf *b, const TapeRun *r);

static inline int plain_elemwise_run(PlainBuf *b, const TapeRun *r)
{
    if (__builtin_expect(r->ka == TAPE_RUN_LIST || r->kb == TAPE_RUN_LIST, 0)) return plain_elemwise_list_run(b, r);
    RunTarget ta = run_target(b, r->ka, r->a, r->n), tb = run_target(b, r->kb, r->b, r->n);
    if (!ta.ok || !tb.ok) return 0;
    const double *val = tape_vals(), *adj = b->adj + (r->base - b->lo);
    long sa = r->ka == TAPE_RUN_SEQ || r->ka == TAPE_RUN_CONSTS, sb = r->kb == TAPE_RUN_SEQ || r->kb == TAPE_RUN_CONSTS;
    if (r->n <= RUN_SHORT) {
        if (ta.p || tb.p) run_give_short(r->op, r->n, adj, val + r->a, sa, val + r->b, sb, val + r->base, ta, tb);
        return 1;
    }
    if (ta.p) run_give(r->op, 0, r->n, adj, val + r->a, sa, val + r->b, sb, val + r->base, ta);
    if (tb.p) run_give(r->op, 1, r->n, adj, val + r->a, sa, val + r->b, sb, val + r->base, tb);
    return 1;
}

/* A ROWS run r (tape.h: a broadcast's rows under one record), whole in
 * b's range: row by row from the top down, each as the elementwise run of
 * that row would be swept (the same terms in the same order), the
 * operands' targets found once for all the rows. 0 if it is left to the
 * steps (an operand's rows not all in one place a loop can write). */
static __attribute__((noinline)) int plain_rows_run(PlainBuf *b, const TapeRun *r)
{
    uint32_t cols = r->inner, rows = r->rows;
    uint32_t span_a = r->ka == TAPE_RUN_SEQ ? (rows - 1) * r->sa + cols : 1, span_b = r->kb == TAPE_RUN_SEQ ? (rows - 1) * r->sb + cols : 1;
    RunTarget ta = run_target(b, r->ka, r->a, span_a), tb = run_target(b, r->kb, r->b, span_b);
    if (!ta.ok || !tb.ok) return 0;
    if (!ta.p && !tb.p) return 1;
    const double *val = tape_vals();
    long sa = r->ka == TAPE_RUN_SEQ, sb = r->kb == TAPE_RUN_SEQ;
    /* a row's step in the values (the operand's row step, or 0) and in
     * the targets (that times the target's stride: 2 in a sink) */
    long va = sa ? (long)r->sa : 0, vb = sb ? (long)r->sb : 0, da = va * ta.stride, db = vb * tb.stride;
    for (uint32_t i = rows; i-- > 0; ) {
        const double *adj = b->adj + (r->base + i * cols - b->lo), *A = val + r->a + i * va, *B = val + r->b + i * vb, *V = val + r->base + i * cols;
        RunTarget ti = { ta.p ? ta.p + i * da : NULL, ta.stride, 1 }, tj = { tb.p ? tb.p + i * db : NULL, tb.stride, 1 };
        if (cols <= RUN_SHORT) run_give_short(r->op, cols, adj, A, sa, B, sb, V, ti, tj);
        else {
            if (ti.p) run_give(r->op, 0, cols, adj, A, sa, B, sb, V, ti);
            if (tj.p) run_give(r->op, 1, cols, adj, A, sa, B, sb, V, tj);
        }
    }
    return 1;
}

/* (the same, one operand or both a LIST) */
static int plain_elemwise_list_run(PlainBuf *b, const TapeRun *r)
{
    RunTarget ta = run_target(b, r->ka, r->a, r->n), tb = run_target(b, r->kb, r->b, r->n);
    if (!ta.ok || !tb.ok) return 0;
    const double *val = tape_vals();
    RunArgs x = { r, b->adj + (r->base - b->lo), val + r->a, val + r->b, val + r->base,
                  r->ka == TAPE_RUN_SEQ || r->ka == TAPE_RUN_CONSTS, r->kb == TAPE_RUN_SEQ || r->kb == TAPE_RUN_CONSTS };
    RunList l[2] = { { 0 }, { 0 } };
    if (r->ka == TAPE_RUN_LIST) l[0] = elem_list(r, 0), x.A = l[0].v, x.sa = 1;
    if (r->kb == TAPE_RUN_LIST) l[1] = elem_list(r, 1), x.B = l[1].v, x.sb = 1;
    if (!l[0].v && ta.p) run_give(r->op, 0, r->n, x.adj, x.A, x.sa, x.B, x.sb, x.V, ta);
    if (!l[1].v && tb.p) run_give(r->op, 1, r->n, x.adj, x.A, x.sa, x.B, x.sb, x.V, tb);
    for (int s = 0; s < 2; s++)
        if (l[s].v) list_give(b, &x, s, &l[s]);
    err_scratch_free(l[0].v);      /* (after both: each one's values are the other's partials) */
    err_scratch_free(l[1].v);
    return 1;
}

/* A LIST factor of product run r (tape.h), its ids and values row by
 * row into ids and v (A m x k from the dot entries of C's first column,
 * B k x n from those of its first row), its adjoints to be summed in g
 * (zeroed) and handed on by give_plain. */

static RunList run_list(const TapeRun *r, int which)
{
    uint32_t m = r->rows, k = r->inner, n = r->n / r->rows, len = which ? k * n : m * k, cnt;
    RunList l;
    l.v = err_scratch(sizeof(double) * 2 * len + sizeof(uint32_t) * len);
    l.g = l.v + len;
    l.ids = (uint32_t *)(l.g + len);
    const double *val = tape_vals();
    if (which == 0)
        for (uint32_t i = 0; i < m; i++) {
            const uint32_t *p = tape_pairs(r->base + i * n, &cnt);
            for (uint32_t t = 0; t < k; t++) l.ids[i * k + t] = p[2 * t];
        }
    else
        for (uint32_t j = 0; j < n; j++) {
            const uint32_t *p = tape_pairs(r->base + j, &cnt);
            for (uint32_t t = 0; t < k; t++) l.ids[t * n + j] = p[2 * t + 1];
        }
    for (uint32_t p = 0; p < len; p++) l.v[p] = val[l.ids[p]];
    return l;
}

/* Whether x[0 .. n - 1] are all finite, in one loop the compiler
 * vectorises: x - x is +0 (no bit set) for a finite x, nan for inf or
 * nan, and the bits are or-ed together. */
static RUN_VECTORISE int all_finite(const double *restrict x, uint32_t n)
{
    uint64_t bits = 0;
    for (uint32_t p = 0; p < n; p++) {
        double d = x[p] - x[p];
        uint64_t u;
        memcpy(&u, &d, sizeof u);
        bits |= u;
    }
    return bits == 0;
}

/* A matrix product run r (C = A B, A m x k, B k x n), whole in b's range:
 * dA += dC B^T, dB += A^T dC. Left to the dot entries' steps when an
 * adjoint or a factor is inf or nan (their zero rules are per term). A
 * LIST factor's values are gathered first and its adjoints summed apart,
 * then handed on one an element. */
static __attribute__((noinline)) RUN_VECTORISE int plain_matmul_run(PlainBuf *b, const TapeRun *r)
{
    uint32_t m = r->rows, k = r->inner, n = r->n / r->rows;
    RunTarget ta = run_target(b, r->ka, r->a, m * k), tb = run_target(b, r->kb, r->b, k * n);
    if (!ta.ok || !tb.ok) return 0;
    const double *val = tape_vals(), *dC = b->adj + (r->base - b->lo), *A = val + r->a, *B = val + r->b;
    RunList la = { 0 }, lb = { 0 };
    if (r->ka == TAPE_RUN_LIST) la = run_list(r, 0), A = la.v, ta = (RunTarget){ la.g, 1, 1 };
    if (r->kb == TAPE_RUN_LIST) lb = run_list(r, 1), B = lb.v, tb = (RunTarget){ lb.g, 1, 1 };
    /* finite values of C say its factors are finite (every A[i, t] and
     * B[t, j] meets a sum of C, and a term or sum with inf or nan in it
     * stays inf or nan): m n values to look at first when they are fewer
     * than the factors' m k + k n (llsq's x @ P: 256, not 32,896) */
    uint64_t nc = (uint64_t)m * n, nf = (uint64_t)m * k + (uint64_t)k * n;
    int ok = all_finite(dC, m * n) && ((nc < nf && all_finite(val + r->base, m * n)) || (all_finite(A, m * k) && all_finite(B, k * n)));
    if (ok && ta.p) {      /* dA[i, t] = dC's row i . B's row t */
        double *dots = err_scratch_uninit(sizeof(double) * (k ? k : 1));
        for (uint32_t i = 0; i < m; i++) {
            arrayrun_dot_rows(dC + (size_t)i * n, B, k, n, dots);
            double *to = ta.p + (size_t)i * k * ta.stride;
            for (uint32_t t = 0; t < k; t++) to[t * ta.stride] += dots[t];
        }
        err_scratch_free(dots);
    }
    if (ok && tb.p)        /* dB's row t += A[i, t] dC's row i, four rows i at a time */
        for (uint32_t t = 0; t < k; t++) {
            double *to = tb.p + (size_t)t * n * tb.stride;
            uint32_t i = 0;
            for (; i + 4 <= m; i += 4) {
                const double *g0 = dC + (size_t)i * n, *g1 = g0 + n, *g2 = g1 + n, *g3 = g2 + n;
                const double *a = A + (size_t)i * k + t;
                double x0 = a[0], x1 = a[k], x2 = a[2 * k], x3 = a[3 * k];
                if (tb.stride == 1)
                    for (uint32_t j = 0; j < n; j++) to[j] += (x0 * g0[j] + x1 * g1[j]) + (x2 * g2[j] + x3 * g3[j]);
                else
                    for (uint32_t j = 0; j < n; j++) to[j * tb.stride] += (x0 * g0[j] + x1 * g1[j]) + (x2 * g2[j] + x3 * g3[j]);
            }
            for (; i < m; i++) {
                const double *g = dC + (size_t)i * n;
                double x = A[(size_t)i * k + t];
                for (uint32_t j = 0; j < n; j++) to[j * tb.stride] += x * g[j];
            }
        }
    RunList *l[2] = { &la, &lb };
    uint32_t len[2] = { m * k, k * n };
    for (int s = 0; s < 2; s++) {
        if (!l[s]->v) continue;
        if (ok)
            for (uint32_t p = 0; p < len[s]; p++)
                if (l[s]->g[p] != 0) give_plain(b, l[s]->ids[p], l[s]->g[p], 1);
        err_scratch_free(l[s]->v);
    }
    return ok;
}

/* Run k if the sweep may take it whole here: its top is i, it lies in
 * [stop, i], no cut at or above its base (cut: the highest cut at or
 * below i). */
static int plain_try_run(PlainBuf *b, uint32_t k, uint32_t stop, uint32_t cut)
{
    const TapeRun *r = &G->tape.runs[k];
    if (!b->adj || r->base < stop || r->base < b->lo || (cut && cut >= r->base)) return 0;
    switch (r->kind) {
    case TAPE_RUN_ELEMWISE: return plain_elemwise_run(b, r);
    case TAPE_RUN_MATMUL: return plain_matmul_run(b, r);
    case TAPE_RUN_ROWS: return plain_rows_run(b, r);     /* (made only where arrayrun.c's fast path was taken) */
    default: return 0;
    }
}

static void plain_run_strong(PlainBuf *b, uint32_t top, uint32_t stop);

/* Sweeps entries top down to stop (at least b's lo). A fixed point's head
 * is visited even with no adjoint of its own: its group's may have some.
 * The first adjoint that is inf or nan hands the rest of the sweep to the
 * strong loop (finite_nonzero): the fast one never tests a partial. */
static inline __attribute__((always_inline)) void plain_run_as(PlainBuf *b, uint32_t top, uint32_t stop, const int strong, const int f64)
{
    uint32_t at = 0, cut = next_cut(&b->cuts, &at, top);
    if (stop < b->lo) stop = b->lo;
    /* the next array run down: its index and top entry (0: none); the
     * entries between runs take the loop below as if there were none */
    int32_t rk = G->tape.nruns ? tape_run_below(top) : -1;
    uint32_t rtop = rk >= 0 ? G->tape.runs[rk].base + G->tape.runs[rk].n - 1 : 0;
    uint32_t i = top;
    while (i >= stop && i > 0) {
        if (__builtin_expect(i == rtop, 0)) {
            uint32_t base = G->tape.runs[rk].base;
            int took = i != cut && plain_try_run(b, (uint32_t)rk, stop, cut);
            rk--;
            rtop = rk >= 0 ? G->tape.runs[rk].base + G->tape.runs[rk].n - 1 : 0;
            if (took) {
                i = base - 1;
                continue;
            }
        }
        uint32_t floor = rtop >= stop && rtop < i ? rtop + 1 : stop;
        for (; i >= floor && i > 0; i--) {
            if (__builtin_expect(i == cut, 0)) {
                cut = next_cut(&b->cuts, &at, i - 1);
                continue;
            }
            double a = f64 ? b->adj[i - b->lo] : take_plain(b, i);
            if (strong ? a != 0 : finite_nonzero(a)) plain_step_as(b, i, a, strong, f64);
            else if (!strong && a != 0) {
                plain_run_strong(b, i, stop);
                return;
            } else if (__builtin_expect(tape_opcode(i) == OP_FIXIN, 0) && tape_b(i) == 0) plain_fixin(b, i);
            if ((i & 0xfffff) == 0) err_check_interrupt();
        }
    }
}

/* (a copy for float64's own buffer, the common case: plain_step_as's
 * elementary steps test no buffer kind) */
static void plain_run_to(PlainBuf *b, uint32_t top, uint32_t stop)
{
    if (b->adj) plain_run_as(b, top, stop, 0, 1);
    else plain_run_as(b, top, stop, 0, 0);
}

static __attribute__((noinline)) void plain_run_strong(PlainBuf *b, uint32_t top, uint32_t stop)
{
    plain_run_as(b, top, stop, 1, 0);
}

static void plain_run(PlainBuf *b, uint32_t top, double seed)
{
    if (b->adj) b->adj[top - b->lo] = seed;
    else num_acc_add(&b->acc[top - b->lo], seed), b->touched[top - b->lo] = 1;
    plain_run_to(b, top, b->lo);
}

void sweep_region(void *ctx, uint32_t lo, uint32_t top, const uint32_t *seed_ids,
                  const double *seeds, uint32_t nseeds, const uint32_t *want,
                  uint32_t nwant, double *out)
{
    PlainBuf *parent = ctx;
    for (uint32_t j = 0; j < nwant; j++) out[j] = 0;
    if (top < lo) {          /* an empty region: the seeds go below */
        for (uint32_t j = 0; j < nseeds; j++)
            if (seeds[j] != 0) give_plain(parent, seed_ids[j], seeds[j], 1);
        return;
    }
    PlainBuf sub;
    plain_alloc(&sub, lo, top, parent, (Cuts){0});
    for (uint32_t j = 0; j < nseeds; j++)
        if (seeds[j] != 0 && seed_ids[j] <= top) give_plain(&sub, seed_ids[j], seeds[j], 1);
    plain_run_to(&sub, top, sub.lo);
    if (kink_watching()) kink_scan(lo, top, plain_adjoint, &sub);   /* the loop's kinks, as the plain loop's */
    for (uint32_t j = 0; j < nwant; j++)
        if (want[j] >= lo && want[j] <= top) out[j] = take_plain(&sub, want[j]);
    plain_free(&sub);
}

double *sweep_adjoints(uint32_t top, uint32_t lo)
{
    PlainBuf b;
    int saved = G->num.backend;
    G->num.backend = BK_F64;
    plain_alloc(&b, lo, top, NULL, (Cuts){0});
    plain_run(&b, top, 1);
    G->num.backend = saved;
    return b.adj;
}

/* ---------------------------------------------------- recorded sweeps */

/* In posit backends the recorded sweep keeps an adjoint's contributions as
 * (adjoint, partial) pairs and adds them up when the sweep reaches the
 * entry, in one dot entry: the quire's exact sum, rounded once, as the
 * plain sweep does. */
typedef struct {
    Value *a, *p;
    int n, cap;
} Pairs;

/* A max-heap of entry ids (the sparse sweeps take the highest waiting
 * entry next): heap holds *n ids. */
static void id_heap_push(uint32_t *heap, size_t *n, uint32_t id)
{
    size_t i = (*n)++;
    while (i > 0 && heap[(i - 1) / 2] < id) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = id;
}

static uint32_t id_heap_pop(uint32_t *heap, size_t *n)
{
    uint32_t top = heap[0], last = heap[--*n];
    size_t i = 0, m = *n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m) break;
        if (c + 1 < m && heap[c + 1] > heap[c]) c++;
        if (heap[c] <= last) break;
        heap[i] = heap[c];
        i = c;
    }
    if (m) heap[i] = last;
    return top;
}

/* A wide buffer starts sparse: a derivative taken late in a long function
 * of places made at its start spans the whole tape between them, of which
 * its cone may be a sliver, and a nested derivative sweeps such a range
 * once per expansion (a third-order program that recorded little took
 * minutes in buffers it never used). Sparse, the adjoints live in a hash
 * table and the entries that have one wait in a max-heap, popped largest
 * first (a valid reverse order, as in the plain sparse sweep below). The
 * buffer turns dense, keeping what it has, when its cone passes an eighth
 * of its range, or at an entry whose rule reads neighbours' adjoints by
 * position (loops, fixed points); posit backends (pairs) stay dense. */
enum { VAL_SPARSE_MIN = 4096 };

typedef struct ValBuf {
    uint32_t lo, top;
    Cuts cuts;
    Value *adj;            /* dense: V_UNDEF: no contribution yet; NULL while sparse */
    Pairs *pairs;          /* posit backends only */
    struct ValBuf *parent;
    uint32_t *keys, *heap; /* sparse: ids (0: free slot), and those waiting */
    Value *vals;
    size_t nkeys, nheap, mask;
} ValBuf;

static void valbuf_init(ValBuf *b, uint32_t lo, uint32_t top, ValBuf *parent, Cuts cuts)
{
    size_t n = (size_t)top - lo + 1;
    b->lo = lo;
    b->top = top;
    b->cuts = cuts;
    b->parent = parent;
    b->keys = b->heap = NULL;
    b->vals = NULL;
    b->nkeys = b->nheap = b->mask = 0;
    b->pairs = num_backend_is_posit(G->num.backend) ? err_scratch(n * sizeof(Pairs)) : NULL;
    if (n >= VAL_SPARSE_MIN && !b->pairs) {
        b->adj = NULL;
        b->mask = 63;
        b->keys = err_scratch((b->mask + 1) * sizeof(uint32_t));
        b->vals = err_scratch((b->mask + 1) * sizeof(Value));
        b->heap = err_scratch((b->mask + 1) * sizeof(uint32_t));
    } else b->adj = err_scratch(n * sizeof(Value));
}

static void valbuf_free(ValBuf *b, uint32_t top)
{
    if (!b->adj) {
        for (size_t k = 0; k <= b->mask; k++) v_release(b->vals[k]);
        err_scratch_free(b->keys);
        err_scratch_free(b->vals);
        err_scratch_free(b->heap);
        return;
    }
    for (uint32_t i = 0; i <= top - b->lo; i++) {
        v_release(b->adj[i]);
        if (b->pairs) {
            free(b->pairs[i].a);
            free(b->pairs[i].p);
        }
    }
    err_scratch_free(b->adj);
    err_scratch_free(b->pairs);
}

static inline size_t vb_hash(const ValBuf *b, uint32_t id) { return (id * 2654435761u) & b->mask; }

/* The slot of id in a sparse buffer, or where it would go. */
static size_t vb_find(const ValBuf *b, uint32_t id)
{
    size_t k = vb_hash(b, id);
    while (b->keys[k] && b->keys[k] != id) k = (k + 1) & b->mask;
    return k;
}

/* Sparse to dense, everything kept (the heap is no longer needed: the
 * dense loop visits every entry below where the sparse one stopped). */
static void vb_densify(ValBuf *b)
{
    b->adj = err_scratch(((size_t)b->top - b->lo + 1) * sizeof(Value));
    for (size_t k = 0; k <= b->mask; k++)
        if (b->keys[k]) b->adj[b->keys[k] - b->lo] = b->vals[k];   /* moved, not copied */
    err_scratch_free(b->keys);
    err_scratch_free(b->vals);
    err_scratch_free(b->heap);
    b->keys = b->heap = NULL;
    b->vals = NULL;
}

/* The adjoint slot of id in b, made (V_UNDEF) if it has none: valid until
 * the next call (a sparse table may grow or turn dense). */
static Value *vb_slot(ValBuf *b, uint32_t id)
{
    if (b->adj) return &b->adj[id - b->lo];
    size_t k = vb_find(b, id);
    if (b->keys[k]) return &b->vals[k];
    if (8 * (b->nkeys + 1) > (size_t)b->top - b->lo + 1) {   /* a wide cone: dense is faster */
        vb_densify(b);
        return &b->adj[id - b->lo];
    }
    if (2 * (b->nkeys + 1) > b->mask + 1) {
        ValBuf old = *b;
        b->mask = 2 * old.mask + 1;
        b->keys = err_scratch((b->mask + 1) * sizeof(uint32_t));
        b->vals = err_scratch((b->mask + 1) * sizeof(Value));
        b->heap = err_scratch((b->mask + 1) * sizeof(uint32_t));
        memcpy(b->heap, old.heap, old.nheap * sizeof(uint32_t));
        for (size_t j = 0; j <= old.mask; j++)
            if (old.keys[j]) {
                size_t at = vb_find(b, old.keys[j]);
                b->keys[at] = old.keys[j];
                b->vals[at] = old.vals[j];
            }
        err_scratch_free(old.keys);
        err_scratch_free(old.vals);
        err_scratch_free(old.heap);
        k = vb_find(b, id);
    }
    b->keys[k] = id;
    b->nkeys++;
    id_heap_push(b->heap, &b->nheap, id);
    return &b->vals[k];
}

/* The adjoint of id in b (V_UNDEF: none); b covers id. */
static Value vb_get(const ValBuf *b, uint32_t id)
{
    if (b->adj) return b->adj[id - b->lo];
    size_t k = vb_find(b, id);
    return b->keys[k] ? b->vals[k] : (Value){0};
}

static void pairs_push(Pairs *q, Value a, Value p)
{
    if (q->n == q->cap) {
        __typeof__(q->cap) grown = q->cap ? 2 * q->cap : 4;   /* the size is kept only once it is had */
        q->a = err_realloc(q->a, sizeof(Value) * (size_t)grown);
        q->p = err_realloc(q->p, sizeof(Value) * (size_t)grown);
        q->cap = grown;
    }
    v_retain(a);
    v_retain(p);
    q->a[q->n] = a;
    q->p[q->n] = p;
    q->n++;
}

/* The adjoint of entry i from its pairs: sum of a_k * p_k in the quire. */
static void settle_pairs(ValBuf *b, uint32_t i)
{
    Pairs *q = &b->pairs[i - b->lo];
    if (!q->n) return;
    Value s;
    if (q->n == 1) s = arith_num_op(OP_MUL, q->a[0], q->p[0]);
    else {
        Value va = value_arr_new(q->n), vp = value_arr_new(q->n);
        for (int k = 0; k < q->n; k++) {
            AS_ARR(va)->v[k] = q->a[k];
            AS_ARR(vp)->v[k] = q->p[k];
        }
        q->n = 0;        /* the arrays own the values now */
        s = arith_dot(va, vp);
        v_release(va);
        v_release(vp);
    }
    for (int k = 0; k < q->n; k++) {
        v_release(q->a[k]);
        v_release(q->p[k]);
    }
    q->n = 0;
    Value *slot = vb_slot(b, i);
    if (slot->t != V_UNDEF) {       /* products with a zero factor (give_val) */
        Value t = arith_num_op(OP_ADD, s, *slot);
        v_release(s);
        v_release(*slot);
        s = t;
    }
    *slot = s;
}

static void val_run(ValBuf *b, uint32_t top, Value seed);
static void val_run_aliased(ValBuf *b, uint32_t top, Value seed, Aliases al);
static void reruns_collect(uint32_t from, uint32_t to);
static void val_run_to(ValBuf *b, uint32_t top, uint32_t stop);
static void val_fixin(ValBuf *b, uint32_t head);

static Value entry_value(uint32_t id)
{
    if (id == 0 || tape_opcode(id) == OP_CONST) return num_val(tape_val(id));
    return num_rec(tape_val(id), id);
}

static int is_zero_const(Value v) { return v.t == V_UNDEF || (v.t == V_NUM && v.id == 0 && v.u.n == 0); }

static int is_one(Value v) { return v.t == V_NUM && v.id == 0 && v.u.n == 1; }

/* Strong zero, recorded: a partial that is the constant 0 gives nothing;
 * one that is recorded and 0 (or an adjoint that is) against inf or nan
 * gives the product mul0 (arith_mul_strong), whose value is 0 and whose own
 * derivatives are those of the product. In posits the pairs' dot keeps
 * the quire's sum; a product with a zero factor is added beside it
 * (settle_pairs). */
static void give_val(ValBuf *b, uint32_t id, Value a, Value partial)
{
    if (is_zero_const(partial)) return;
    while (b && id < b->lo) b = b->parent;
    if (!b || id == 0 || tape_opcode(id) == OP_CONST) return;
    if (id > b->top) broken_invariant(id);
    if (b->pairs && v_primal(a) != 0 && v_primal(partial) != 0) {
        pairs_push(&b->pairs[id - b->lo], a, partial);
        return;
    }
    Value c;
    /* seeds and many partials are the constant 1: record no product */
    if (is_one(a)) c = partial, v_retain(c);
    else if (is_one(partial)) c = a, v_retain(c);
    else c = arith_mul_strong(a, partial);
    Value *slot = vb_slot(b, id);
    if (slot->t == V_UNDEF) {
        *slot = c;
        return;
    }
    Value s = arith_num_op(OP_ADD, *slot, c);
    v_release(*slot);
    v_release(c);
    *slot = s;
}

static void val_through_deriv(ValBuf *b, uint32_t k, Value a)
{
    Aliases al;
    uint32_t lo, e = deriv_expand(k, &lo, &al);
    if (e && e < lo) give_val(b, e, a, num_val(1));
    else if (e) {
        ValBuf sub;
        valbuf_init(&sub, lo, e, b, b->cuts);
        val_run_aliased(&sub, e, a, al);
        valbuf_free(&sub, e);
    }
    err_scratch_free(al.v);
}

/* A loop entry: the loop is recorded once more from its inputs, and the
 * outputs' adjoints are swept through those entries. */
static void val_through_loop(ValBuf *b, uint32_t i)
{
    if (!G->sweep.loop_hooks.rerun) return;
    uint32_t n = G->sweep.loop_hooks.outputs(i);
    Value *lam = err_scratch(sizeof(Value) * (n ? n : 1));
    uint32_t *ids = err_scratch(sizeof(uint32_t) * (n ? n : 1));
    for (uint32_t o = i + 1; o <= b->top && is_output_of(o, i, n); o++) {
        lam[tape_b(o)] = vb_get(b, o);
        v_retain(lam[tape_b(o)]);
    }
    uint32_t lo = tape_size();
    G->sweep.loop_hooks.rerun(i, ids);
    uint32_t top = tape_size() - 1;
    for (uint32_t o = i + 1; is_output_of(o, i, n); o++)
        if (ids[tape_b(o)] >= lo && ids[tape_b(o)] <= top) reruns_collect(ids[tape_b(o)], o);
    ValBuf sub, *into = b;
    if (top >= lo) {
        valbuf_init(&sub, lo, top, b, b->cuts);
        into = &sub;
    }
    for (uint32_t j = 0; j < n; j++)
        if (!is_zero_const(lam[j]) && ids[j]) give_val(into, ids[j], lam[j], num_val(1));
    if (into == &sub) {
        val_run_to(&sub, top, sub.lo);
        /* an output's adjoint becomes its entry's whole one (see sweep.h) */
        for (uint32_t o = i + 1; o <= b->top && is_output_of(o, i, n); o++) {
            uint32_t e = ids[tape_b(o)];
            if (e < sub.lo || e > top) continue;
            Value whole = vb_get(&sub, e);
            if (is_zero_const(whole)) continue;
            Value *slot = vb_slot(b, o);
            v_release(*slot);
            *slot = whole;
            v_retain(*slot);
        }
        valbuf_free(&sub, top);
    }
    for (uint32_t j = 0; j < n; j++) v_release(lam[j]);
    err_scratch_free(lam);
    err_scratch_free(ids);
}

/* A logsumexp entry, recorded: the five steps it stands for recorded
 * again from its operands (e_j = exp(x_j - m), m a constant; s their sum;
 * 1 / s), and each operand given (a * (1 / s)) * e_j, so that what reads
 * the softmax can be differentiated again. */
static void val_lse(ValBuf *b, uint32_t i, Value a)
{
    TapeLse l = tape_lse(i);
    uint32_t n = l.t.n, *ids = err_scratch_uninit(sizeof(uint32_t) * n);   /* the pool may move below */
    for (uint32_t j = 0; j < n; j++) ids[j] = tape_term(l.t, j);
    Value m = num_val(l.m), e = value_arr_new((int)n);
    for (uint32_t j = 0; j < n; j++) {
        Value d = arith_num_op(OP_SUB, entry_value(ids[j]), m);
        AS_ARR(e)->v[j] = arith_num_op(OP_EXP, d, d);
        v_release(d);
    }
    Value s = arith_sum(e);
    Value inv = arith_num_op(OP_DIV, num_val(1), s);
    Value c = is_one(a) ? inv : arith_mul_strong(a, inv);
    if (!is_one(a)) v_release(inv);
    for (uint32_t j = 0; j < n; j++) give_val(b, ids[j], c, AS_ARR(e)->v[j]);
    v_release(c);
    v_release(s);
    v_release(e);
    err_scratch_free(ids);
}

static void val_step(ValBuf *b, uint32_t i, Value a)
{
    int op = tape_opcode(i);
    uint32_t n;
    OPS_NAMED(OPS_STRUCTURAL, 10);
    switch (op) {
    case OP_CONST: case OP_LEAF:
        return;
    case OP_LSE:
        val_lse(b, i, a);
        return;
    case OP_SUM: {
        TapeTerms t = tape_terms(i);
        for (uint32_t j = 0; j < t.n; j++) give_val(b, tape_term(t, j), a, num_val(1));
        return;
    }
    case OP_DOT: {
        const uint32_t *p = tape_pairs(i, &n);
        for (uint32_t j = 0; j < n; j++) {
            uint32_t x = p[2 * j], y = p[2 * j + 1];
            give_val(b, x, a, entry_value(y));
            give_val(b, y, a, entry_value(x));
        }
        return;
    }
    case OP_DERIV:
        val_through_deriv(b, i, a);
        return;
    case OP_CKOUT:
        give_val(b, tape_a(i), num_val(1), num_val(1));
        return;
    case OP_CKPT:
        val_through_loop(b, i);
        return;
    case OP_FIXIN:
        if (tape_b(i) == 0) val_fixin(b, i);
        return;
    case OP_FIXPT:
        give_val(b, tape_b(i), a, num_val(1));
        return;
    default: {
        RuleTemps ts;
        ts.n = 0;            /* the slots are written before they are read */
        uint32_t x = tape_a(i), y = tape_b(i);
        Value A = entry_value(x), B = entry_value(y), V = entry_value(i);
        give_val(b, x, a, rule_partial_val(op, 0, A, B, V, &ts));
        if (num_op_arity[op] == 2) give_val(b, y, a, rule_partial_val(op, 1, A, B, V, &ts));
        rule_temps_release(&ts);
    }
    }
}



/* A sparse buffer's sweep: the waiting entries from top down to stop, until
 * the buffer turns dense; returns the entry below which the dense loop
 * goes on, or 0 when done. */
static uint32_t val_run_sparse(ValBuf *b, uint32_t top, uint32_t stop)
{
    uint32_t at = 0, n = 0;
    while (b->nheap && b->heap[0] >= stop) {
        uint32_t i = b->heap[0];
        if (i > top) {            /* above the range asked for: not swept, as dense */
            id_heap_pop(b->heap, &b->nheap);
            continue;
        }
        int op = tape_opcode(i);
        if (num_op_near[op]) {
            vb_densify(b);        /* these read their neighbours by position */
            return i + 1;
        }
        id_heap_pop(b->heap, &b->nheap);
        if (i == next_cut(&b->cuts, &at, i)) continue;
        Value a = vb_get(b, i);
        if (!is_zero_const(a)) val_step(b, i, a);
        if (b->adj) return i;     /* the cone grew wide */
        if ((++n & 0xffff) == 0) err_check_interrupt();
    }
    return 0;
}

static void val_run_to(ValBuf *b, uint32_t top, uint32_t stop)
{
    if (stop < b->lo) stop = b->lo;
    if (!b->adj) {
        uint32_t below = val_run_sparse(b, top, stop);
        if (!below || below - 1 < stop) return;
        top = below - 1;
    }
    uint32_t at = 0, cut = next_cut(&b->cuts, &at, top);
    for (uint32_t i = top; i >= stop && i > 0; i--) {
        if (b->pairs) settle_pairs(b, i);
        if (__builtin_expect(i == cut, 0)) {
            cut = next_cut(&b->cuts, &at, i - 1);
            continue;
        }
        Value a = b->adj[i - b->lo];
        if (!is_zero_const(a)) val_step(b, i, a);
        else if (__builtin_expect(tape_opcode(i) == OP_FIXIN, 0) && tape_b(i) == 0) val_fixin(b, i);
        if ((i & 0xffff) == 0) err_check_interrupt();
    }
}

static void val_seed(ValBuf *b, uint32_t top, Value seed)
{
    v_retain(seed);
    Value *slot = vb_slot(b, top);
    v_release(*slot);
    *slot = seed;
}

static void val_run(ValBuf *b, uint32_t top, Value seed)
{
    val_seed(b, top, seed);
    val_run_to(b, top, b->lo);
}


/* The first entry of the expansion being recorded, 0 if none. */

static Cuts deriv_cuts(const DerivRec *r)
{
    return (Cuts){ r->ncut ? tape_pool_at(r->cut_off) : NULL, r->ncut };
}

/* ------------------------------------------ loops re-run by expansions */

/* An expansion that reaches a checkpointed loop records the loop once more
 * from its inputs (val_through_loop). That re-run is the plain loop's
 * recording: its entry for output j is the plain loop's entry for the
 * number that the loop's OP_CKOUT entry o stands for, and d(..., o) must
 * see the paths through it. So a sweep through the expansion (a
 * derivative of that derivative, d(d(v, u), u) with u left by the loop)
 * hands what reaches the re-run's entry to o instead of going on through
 * the re-run: the loop entry hands it on to the loop's inputs, as the
 * re-run would have, and counts it in o's whole adjoint (sweep.h). The
 * pairs (the re-run's entry, o) of an expansion are collected while it is
 * recorded, those of the expansions recorded inside it too (they lie
 * inside it), and kept with it in a table here (the call's `reruns`:
 * 1 + its list's index). A reclaiming pass (which renumbers entries) or
 * :tape clear empties the table; an expansion whose list went is
 * recorded afresh when next needed. Only a question about a loop's output
 * (ckout_wrt: the d call being swept, or the expansion being recorded, has
 * one among its places) needs the hand-over: for the loop's inputs the
 * re-run's paths are as good, and no loop is run again for them. */

static void reruns_collect(uint32_t from, uint32_t to)
{
    if (!G->sweep.reruns.depth) return;
    if (G->sweep.reruns.n == G->sweep.reruns.cap) {
        uint32_t cap = G->sweep.reruns.cap ? 2 * G->sweep.reruns.cap : 16;
        G->sweep.reruns.v = err_realloc(G->sweep.reruns.v, sizeof(Alias) * cap);
        G->sweep.reruns.cap = cap;
    }
    G->sweep.reruns.v[G->sweep.reruns.n++] = (Alias){ from, to };
}

static void reruns_current(void)
{
    if (G->sweep.reruns.reclaimed == G->tape.reclaimed && G->sweep.reruns.clears == G->tape.clears) return;
    G->sweep.reruns.nlists = G->sweep.reruns.npool = 0;
    G->sweep.reruns.reclaimed = G->tape.reclaimed;
    G->sweep.reruns.clears = G->tape.clears;
}

static int alias_higher_first(const void *x, const void *y)
{
    uint32_t a = ((const Alias *)x)->from, b = ((const Alias *)y)->from;
    return a < b ? 1 : a > b ? -1 : 0;
}

/* A scratch copy of n pairs, highest re-run entry first. */
static Aliases aliases_copy(const Alias *v, uint32_t n)
{
    Aliases al = { NULL, n };
    if (!n) return al;
    al.v = err_scratch_uninit(sizeof(Alias) * n);
    memcpy(al.v, v, sizeof(Alias) * n);
    qsort(al.v, n, sizeof(Alias), alias_higher_first);
    return al;
}

/* The pairs of call r's kept expansion into *al; 0 if they are gone. */
static int reruns_of(uint32_t r, Aliases *al)
{
    uint16_t at = tape_deriv_call(r)->reruns;
    *al = (Aliases){ NULL, 0 };
    if (!at) return 1;
    reruns_current();
    if (at > G->sweep.reruns.nlists || G->sweep.reruns.lists[at - 1].call != r) return 0;
    *al = aliases_copy(G->sweep.reruns.pool + G->sweep.reruns.lists[at - 1].off, G->sweep.reruns.lists[at - 1].n);
    return 1;
}

/* Keeps the pairs of call r's expansion; 0 if the table is full. */
static int reruns_keep(uint32_t r, Aliases al)
{
    tape_deriv_call(r)->reruns = 0;
    if (!al.n) return 1;
    reruns_current();
    if (G->sweep.reruns.nlists == UINT16_MAX) return 0;
    if (G->sweep.reruns.nlists == G->sweep.reruns.caplists) {
        uint32_t cap = G->sweep.reruns.caplists ? 2 * G->sweep.reruns.caplists : 8;
        G->sweep.reruns.lists = err_realloc(G->sweep.reruns.lists, sizeof *G->sweep.reruns.lists * cap);
        G->sweep.reruns.caplists = cap;
    }
    while (G->sweep.reruns.npool + al.n > G->sweep.reruns.cappool) {
        uint32_t cap = G->sweep.reruns.cappool ? 2 * G->sweep.reruns.cappool : 64;
        G->sweep.reruns.pool = err_realloc(G->sweep.reruns.pool, sizeof(Alias) * cap);
        G->sweep.reruns.cappool = cap;
    }
    memcpy(G->sweep.reruns.pool + G->sweep.reruns.npool, al.v, sizeof(Alias) * al.n);
    G->sweep.reruns.lists[G->sweep.reruns.nlists].call = r;
    G->sweep.reruns.lists[G->sweep.reruns.nlists].off = G->sweep.reruns.npool;
    G->sweep.reruns.lists[G->sweep.reruns.nlists].n = al.n;
    G->sweep.reruns.npool += al.n;
    tape_deriv_call(r)->reruns = (uint16_t)++G->sweep.reruns.nlists;
    return 1;
}

static int is_cut(Cuts c, uint32_t id)
{
    for (uint32_t j = 0; j < c.n; j++)
        if (c.ids[j] == id) return 1;
    return 0;
}

/* Sweeps expansion b from its result top (seed): segment by segment
 * between the re-runs' entries in al, each of which hands its adjoint to
 * its loop's output. */
static void plain_run_aliased(PlainBuf *b, uint32_t top, double seed, Aliases al)
{
    if (!al.n || !G->sweep.ckout_wrt) {
        plain_run(b, top, seed);
        return;
    }
    put_plain(b, top, seed);
    uint32_t hi = top;
    for (uint32_t k = 0; k < al.n; k++) {
        uint32_t f = al.v[k].from;
        if (f > hi || f < b->lo) continue;
        plain_run_to(b, hi, f + 1);
        double a = take_plain(b, f);
        if (a != 0 && !is_cut(b->cuts, f)) give_plain(b, al.v[k].to, a, 1);
        if (f == b->lo) return;
        hi = f - 1;
    }
    plain_run_to(b, hi, b->lo);
}

static void val_run_aliased(ValBuf *b, uint32_t top, Value seed, Aliases al)
{
    if (!al.n || !G->sweep.ckout_wrt) {
        val_run(b, top, seed);
        return;
    }
    val_seed(b, top, seed);
    uint32_t hi = top;
    for (uint32_t k = 0; k < al.n; k++) {
        uint32_t f = al.v[k].from;
        if (f > hi || f < b->lo) continue;
        val_run_to(b, hi, f + 1);
        if (b->pairs) settle_pairs(b, f);
        Value a = vb_get(b, f);
        if (!is_zero_const(a) && !is_cut(b->cuts, f)) give_val(b, al.v[k].to, a, num_val(1));
        if (f == b->lo) return;
        hi = f - 1;
    }
    val_run_to(b, hi, b->lo);
}

/* Records the reverse sweep of d call r as operations from the tape's end on;
 * returns the pool offset of the entry each wrt got (0: a constant), and
 * in *al the pairs of the loops it re-ran (scratch). */
static uint32_t record_expansion(uint32_t r, uint32_t *first, Aliases *al)
{
    int saved = G->tape.recording;
    uint32_t saved_floor = G->sweep.expansion_floor, n0 = G->sweep.reruns.n;
    int saved_ckout = G->sweep.ckout_wrt;
    rec_on();
    *first = G->sweep.expansion_floor = tape_size();
    /* the pool and the call table may move while recording: re-read them */
    uint32_t y = tape_deriv_call(r)->y, nwrt = tape_deriv_call(r)->nwrt, lo = y, btop = y;
    G->sweep.ckout_wrt = 0;
    for (uint32_t w = 0; w < nwrt; w++) {
        uint32_t wid = tape_deriv_wrt(tape_deriv_call(r), w), id = sweep_floor(wid);
        if (id && id < lo) lo = id;
        if (id && id <= y && wid > btop) btop = wid;    /* a loop's output above y */
        G->sweep.ckout_wrt |= id && id <= y && id != wid;
    }
    G->sweep.reruns.depth++;
    ValBuf b;
    valbuf_init(&b, lo, btop, NULL, deriv_cuts(tape_deriv_call(r)));
    val_run(&b, y, num_val(1));
    uint32_t off, *results = tape_rec_operands(nwrt, &off);
    for (uint32_t w = 0; w < nwrt; w++) {
        uint32_t id = tape_deriv_wrt(tape_deriv_call(r), w);
        Value v = (id && id >= lo && id <= btop && sweep_floor(id) <= y) ? vb_get(&b, id) : nil_val();
        results[w] = (v.t == V_NUM) ? v.id : 0;
    }
    valbuf_free(&b, btop);
    /* (no pairs: the table may not exist yet, and NULL + 0 is undefined) */
    *al = G->sweep.reruns.n > n0 ? aliases_copy(G->sweep.reruns.v + n0, G->sweep.reruns.n - n0) : (Aliases){ NULL, 0 };
    if (!--G->sweep.reruns.depth) G->sweep.reruns.n = 0;      /* else they are the outer one's too */
    G->sweep.ckout_wrt = saved_ckout;
    G->sweep.expansion_floor = saved_floor;
    rec_restore(saved);
    return off;
}

/* Expand DERIV entry k: returns the entry holding the same derivative as
 * recorded operations (0 if it is a constant), the expansion's first
 * entry in *lo and the pairs of the loops it re-ran in *al (scratch).
 * Recorded once and kept, except inside another expansion that began
 * after it: that one records it afresh, so as to read only its own
 * entries (the invariant at the top of this file). */
static uint32_t deriv_expand(uint32_t k, uint32_t *lo, Aliases *al)
{
    uint32_t j, r = tape_deriv_call_of(k, &j);
    uint32_t kept = tape_deriv_call(r)->exp_lo;
    *al = (Aliases){ NULL, 0 };
    if (kept && !reruns_of(r, al)) kept = 0;       /* its pairs went: record it again */
    if (kept && (!G->sweep.expansion_floor || kept >= G->sweep.expansion_floor)) {
        *lo = kept;
        return tape_pool_at(tape_deriv_call(r)->exp_off)[j];
    }
    err_scratch_free(al->v);
    uint32_t first, off = record_expansion(r, &first, al);
    if (!kept) {
        int keep = reruns_keep(r, *al);      /* else it is recorded again when next needed */
        tape_deriv_call(r)->exp_off = keep ? off : 0;
        tape_deriv_call(r)->exp_lo = keep ? first : 0;
        G->tape.expansions++;
    }
    *lo = first;
    return tape_pool_at(off)[j];
}

void sweep_abandon(void)
{
    G->sweep.so.busy = 0;
    G->sweep.expansion_floor = 0;
    G->tape.busy = 0;
    G->sweep.kept_busy = 0;
    G->sweep.reruns.n = 0;
    G->sweep.reruns.depth = 0;
    G->sweep.ckout_wrt = 0;
}

/* --------------------------------------------------------- fixed points */

/* A fixed point x* = g(x*, θ) (fixtape.h): its stand-ins [lo, stop) are the
 * x that g's recorded graph (up to hi) reads. Given the adjoint x̄ of x*,
 * the implicit function theorem asks for λ = (I - Jᵀ)⁻¹ x̄, J = ∂g/∂x at
 * x*, then hands λᵀ ∂g/∂θ on. λ is found as the fixed point of
 * μ ↦ x̄ + Jᵀ μ: each step is one sweep over g's graph seeded with μ at
 * g's results, reading what reaches the stand-ins (no matrix is formed);
 * it converges where the iteration for x* did (the same J). */
typedef struct {
    const FixSide *s;
    uint32_t n, lo, stop, hi;
} FixGroup;

static FixGroup fix_group(uint32_t head)
{
    FixGroup g;
    g.s = fixtape_side(head);
    g.n = g.s->n;
    g.lo = g.s->ids[0];
    g.stop = g.s->ids[g.n - 1] + 1;
    g.hi = g.s->ids[g.n - 1];
    for (uint32_t j = 0; j < g.n; j++)
        if (g.s->ids[g.n + j] > g.hi) g.hi = g.s->ids[g.n + j];
    return g;
}

/* λ for x̄, by iteration in the active backend (the quire in posits);
 * scratch memory. Its sweeps are plain, so they record nothing that an
 * expansion being recorded reads: a derivative entry in g's graph may use
 * the expansion it has, wherever it lies, instead of recording one afresh
 * at every step (the floor is put back after, or by sweep_abandon). */
static double *fix_solve(const FixGroup *g, const double *xbar, Cuts cuts)
{
    uint32_t floor = G->sweep.expansion_floor;
    G->sweep.expansion_floor = 0;
    size_t bytes = sizeof(double) * g->n;
    double *lam = err_scratch(bytes), *next = err_scratch(bytes), change = 0;
    memcpy(lam, xbar, bytes);
    FixProgress prog = {0};
    for (uint32_t it = 0; it < g->s->maxiter; it++) {
        PlainBuf sub;
        plain_alloc(&sub, g->lo, g->hi, NULL, cuts);
        for (uint32_t j = 0; j < g->n; j++) give_plain(&sub, g->s->ids[g->n + j], lam[j], 1);
        plain_run_to(&sub, g->hi, g->stop);
        double scale = 0;
        change = 0;
        for (uint32_t j = 0; j < g->n; j++) {
            next[j] = num_apply(OP_ADD, xbar[j], take_plain(&sub, g->s->ids[j]));
            if (!isfinite(next[j]) && (next[j] == lam[j] || (next[j] != next[j] && lam[j] != lam[j])))
                continue;       /* a nan or infinite part that stays so has not changed (a nan x_bar: nan derivatives, as a plain loop gives) */
            double c = fabs(next[j] - lam[j]);
            if (c > change || c != c) change = c;
            if (isfinite(next[j]) && fabs(next[j]) > scale) scale = fabs(next[j]);
        }
        plain_free(&sub);
        double *t = lam;
        lam = next;
        next = t;
        if (fixtape_step(&prog, change, scale, g->s->tol)) break;
        err_check_interrupt();
    }
    err_scratch_free(next);
    G->sweep.expansion_floor = floor;
    if (prog.met) return lam;
    err_raise("fixedpoint: the adjoint iteration (I - J^T) lambda = x_bar did not converge within %u steps "
             "(last change %s)", g->s->maxiter, value_num_str(change));
}

/* The rule hands on only what falls below the stand-ins: a sweep that
 * stops at the head (d(y, x) inside g, with x the stand-in) skips it. */
static int plain_below(const PlainBuf *b, uint32_t id)
{
    for (; b; b = b->parent)
        if (b->lo < id || (b->sink && b->sink_lo < id)) return 1;
    return 0;
}

static int val_below(const ValBuf *b, uint32_t id)
{
    for (; b; b = b->parent)
        if (b->lo < id) return 1;
    return 0;
}

static void plain_fixin(PlainBuf *b, uint32_t head)
{
    if (!plain_below(b, head)) return;
    FixGroup g = fix_group(head);
    double *xbar = err_scratch(sizeof(double) * g.n);
    int any = 0;
    for (uint32_t j = 0; j < g.n; j++) {
        uint32_t x = g.s->ids[j];
        xbar[j] = x >= b->lo && x <= b->top ? take_plain(b, x) : 0;
        any |= xbar[j] != 0;
    }
    if (any) {
        double *lam = fix_solve(&g, xbar, b->cuts);
        PlainBuf sub;       /* λᵀ ∂g/∂θ: what falls below the stand-ins goes to b */
        plain_alloc(&sub, g.lo, g.hi, b, b->cuts);
        for (uint32_t j = 0; j < g.n; j++) give_plain(&sub, g.s->ids[g.n + j], lam[j], 1);
        plain_run_to(&sub, g.hi, g.stop);
        plain_free(&sub);
        err_scratch_free(lam);
    }
    err_scratch_free(xbar);
}

/* Recorded: λ becomes a fixed point of its own on the tape, stand-ins μ,
 * then the recorded sweep of g's graph seeded with μ (so h(μ) = x̄ + Jᵀ μ
 * as recorded operations of x̄, μ, x* and θ), then its results; λ's own
 * rule is this same one, so every order nests. Then λ goes through g's
 * graph into b as in the plain rule, recorded. Everything recorded reads
 * its own entries, g's graph, x* and θ: all below the deriv entry being
 * expanded, as the invariant at the top of this file asks. */
static void val_fixin(ValBuf *b, uint32_t head)
{
    if (!val_below(b, head)) return;
    FixGroup g = fix_group(head);
    Value *xbar = err_scratch(sizeof(Value) * g.n);
    double *xb = err_scratch(sizeof(double) * g.n);
    int any = 0;
    for (uint32_t j = 0; j < g.n; j++) {
        uint32_t x = g.s->ids[j];
        xbar[j] = num_val(0);
        if (x >= b->lo && x <= b->top) {
            if (b->pairs) settle_pairs(b, x);
            Value v = vb_get(b, x);
            if (!is_zero_const(v)) xbar[j] = v, any = 1;
        }
        xb[j] = v_primal(xbar[j]);
    }
    if (any) {
        double *lam = fix_solve(&g, xb, b->cuts);
        uint32_t mu = fixtape_standins(g.n, lam, g.s->tol, g.s->maxiter);
        ValBuf sub;
        valbuf_init(&sub, g.lo, g.hi, NULL, b->cuts);
        for (uint32_t j = 0; j < g.n; j++)
            give_val(&sub, g.s->ids[g.n + j], num_rec(lam[j], mu + j), num_val(1));
        val_run_to(&sub, g.hi, g.stop);
        Value *L = err_scratch(sizeof(Value) * g.n);
        for (uint32_t j = 0; j < g.n; j++) {
            uint32_t x = g.s->ids[j];
            if (sub.pairs) settle_pairs(&sub, x);
            Value v = vb_get(&sub, x), h;
            if (is_zero_const(v)) h = xbar[j], v_retain(h);
            else if (is_zero_const(xbar[j])) h = v, v_retain(h);
            else h = arith_num_op(OP_ADD, xbar[j], v);
            L[j] = num_rec(lam[j], fixtape_result(mu, j, h.t == V_NUM ? h.id : 0, lam[j]));
            v_release(h);
        }
        valbuf_free(&sub, g.hi);
        valbuf_init(&sub, g.lo, g.hi, b, b->cuts);
        for (uint32_t j = 0; j < g.n; j++) give_val(&sub, g.s->ids[g.n + j], L[j], num_val(1));
        val_run_to(&sub, g.hi, g.stop);
        valbuf_free(&sub, g.hi);
        err_scratch_free(L);
        err_scratch_free(lam);
    }
    err_scratch_free(xb);
    err_scratch_free(xbar);
}

/* --------------------------------------------------------- sparse sweep */

/* In a long session, d(y, x) with an old x spans a wide range of the tape
 * of which y depends on a few entries. This sweep visits only y's cone:
 * entries wait in a max-heap (an entry's consumers all have higher
 * indices, so popping the largest first is a valid reverse order) with
 * their adjoints in a hash table. It gives up, returning 0, when the cone
 * turns out big (the dense sweep is faster then) or holds a deriv entry. */
typedef struct {
    uint32_t *heap, *keys;
    double *vals;
    size_t nheap, cap, mask;
} Sparse;

static double *sparse_slot(Sparse *sp, uint32_t id, int *fresh)
{
    size_t h = (id * 2654435761u) & sp->mask;
    while (sp->keys[h] && sp->keys[h] != id) h = (h + 1) & sp->mask;
    *fresh = sp->keys[h] == 0;
    sp->keys[h] = id;
    return &sp->vals[h];
}

/* The adjoint of id, 0 if the sweep never reached it. Looking up must not
 * insert: a d call may ask for more places than the table has slots. */
static double sparse_find(const Sparse *sp, uint32_t id)
{
    size_t h = (id * 2654435761u) & sp->mask;
    while (sp->keys[h] && sp->keys[h] != id) h = (h + 1) & sp->mask;
    return sp->keys[h] ? sp->vals[h] : 0;
}

static void sparse_give(Sparse *sp, uint32_t lo, uint32_t id, double c)
{
    if (id < lo || id == 0 || tape_opcode(id) == OP_CONST) return;
    int fresh;
    double *slot = sparse_slot(sp, id, &fresh);
    if (fresh) {
        *slot = 0;
        id_heap_push(sp->heap, &sp->nheap, id);
    }
    *slot += c;
}

static double sparse_adjoint(void *ud, uint32_t id) { return sparse_find(ud, id); }

/* An entry whose adjoint is inf or nan: its zero partials give nothing
 * (strong zero; see finite_nonzero). */
static __attribute__((noinline)) void sparse_step_strong(Sparse *sp, uint32_t lo, uint32_t i, int op, double a)
{
    uint32_t x = tape_a(i), y = tape_b(i);
    double da, db;
    rule_partials_num(op, tape_val(x), tape_val(y), tape_val(i), &da, &db);
    if (da != 0) sparse_give(sp, lo, x, a * da);
    if (num_op_arity[op] == 2 && db != 0) sparse_give(sp, lo, y, a * db);
}

/* The entries the sparse sweep leaves to the dense one: all but those
 * whose fields are operand ids (the ids column of ops.def). */
static inline int sparse_gives_up(int op) { return !num_op_ids[op]; }

static int sparse_sweep(uint32_t top, uint32_t lo, const uint32_t *wrt, int n, Value *out)
{
    /* y itself may be one (sum(a): W4): then no table is worth clearing */
    if (sparse_gives_up(tape_opcode(top))) return 0;
    size_t budget = ((size_t)top - lo) / 16;
    Sparse sp;
    sp.cap = 64;
    while (sp.cap < 2 * budget + 2) sp.cap *= 2;
    sp.mask = sp.cap - 1;
    sp.keys = err_scratch(sp.cap * sizeof(uint32_t));          /* 0: an empty slot */
    sp.vals = err_scratch_uninit(sp.cap * sizeof(double));     /* set when a key is */
    sp.heap = err_scratch_uninit(sp.cap * sizeof(uint32_t));
    sp.nheap = 0;
    int ok = 1;
    size_t visited = 0;
    sparse_give(&sp, lo, top, 1);
    while (sp.nheap) {
        uint32_t i = id_heap_pop(sp.heap, &sp.nheap);
        int fresh;
        double a = *sparse_slot(&sp, i, &fresh);
        int op = tape_opcode(i);
        if (sparse_gives_up(op) || ++visited > budget) { ok = 0; break; }
        if (__builtin_expect(!finite_nonzero(a), 0)) {    /* 0, or inf or nan */
            if (a != 0 && op != OP_LEAF) sparse_step_strong(&sp, lo, i, op, a);
            continue;
        }
        if (op == OP_LEAF) continue;
        uint32_t x = tape_a(i), y = tape_b(i);
        double da, db;
        rule_partials_num(op, tape_val(x), tape_val(y), tape_val(i), &da, &db);
        sparse_give(&sp, lo, x, a * da);
        if (num_op_arity[op] == 2) sparse_give(&sp, lo, y, a * db);
    }
    if (ok && kink_watching()) kink_scan(lo, top, sparse_adjoint, &sp);
    if (ok)
        for (int j = 0; j < n; j++)
            out[j].u.n = wrt[j] >= lo && wrt[j] <= top ? sparse_find(&sp, wrt[j]) : 0;
    err_scratch_free(sp.keys);
    err_scratch_free(sp.vals);
    err_scratch_free(sp.heap);
    return ok;
}

/* ------------------------------------------------------- derivatives */

/* The outermost float64 sweep's adjoints live in one buffer kept between
 * d calls: grown when a sweep needs more (each page is faulted in once per
 * session, not once per sweep), zeroed over the range a sweep uses, and
 * remembered: every entry's adjoint depends only on the entries above it,
 * so the next d(y, x') with the same y (d(h, w) then d(h, b)) reads its
 * answer from the last sweep if that swept y from its top down to x' or
 * lower, and the tape is as that d call left it: the same epoch (clear and
 * truncate bump it), the same size (nothing recorded since), no entry
 * reclaimed since (a pass renumbers), and the same entry at y's id. */

static uint64_t entry_print(uint32_t i)
{
    union { double d; uint64_t u; } v = { tape_val(i) };
    TapeArgs a = tape_args(i);
    return v.u ^ ((uint64_t)a.a << 32 | a.b) * 0x9E3779B97F4A7C15u ^ (uint64_t)tape_opcode(i) << 56;
}

static int kept_covers(uint32_t lo, uint32_t top, int ckout)
{
    return G->sweep.kept.valid && (G->sweep.kept.ckout || !ckout) && G->sweep.kept.epoch == G->tape.epoch && G->sweep.kept.size == tape_size() && G->sweep.kept.top == top
        && G->sweep.kept.reclaimed == G->tape.reclaimed     /* reclaiming moved nothing since */
        && G->sweep.kept.lo <= lo && G->sweep.kept.print == entry_print(top);
}

/* The kept buffer is the kernel's zero pages, mapped (a small one with
 * room to spare: a later sweep a few entries longer fits) and cleared over
 * the range each later sweep uses. One of at most KEPT_SMALL doubles (8 MB)
 * is kept across :tape clear: GradBench's driver clears the tape after
 * every run, and each run mapped (MAP_POPULATE) and unmapped its 64 KB
 * again, twice when a second sweep needed two entries more (kmeans' dir),
 * and lstm's jacobian its 2.7 MB: 4.9 -> 4.0 ms of CPU a run, as mapping
 * with MAP_POPULATE and unmapping cost more than clearing the pages kept.
 * A bigger one goes back at a clear, so a big tape's adjoints do not stay.
 * The bound is the tape's own (TAPE_KEEP_ENTRIES, tape.c: its first 1M
 * entries' pages stay across a clear), 8 MB: at half that, lstm's l = 4
 * jacobian (548,000 entries a layer at a time, 577,000 in waves) mapped
 * and zeroed its 4.4-4.6 MB of adjoints afresh every run: 7.76 ms of CPU
 * a run against 9.86 once kept (docs/bench.md, h51l). */
#define KEPT_SMALL ((size_t)1 << 20)

static void kept_give_back(void)
{
    err_zero_pages_free(G->sweep.kept.adj, G->sweep.kept.cap * sizeof(double));
    G->sweep.kept.adj = NULL;
    G->sweep.kept.cap = 0;
}

/* Room for n adjoints, zeros: kept_alloc's buffer when it has too little. */
static void kept_grow(size_t n)
{
    kept_give_back();
    /* room to spare only in a buffer that is kept: a bigger one is the
     * sweep's size, and the next bigger sweep takes fresh zeros, which
     * cost no clearing (ba's jacobian, a sweep a row, each a little longer) */
    size_t want = n <= KEPT_SMALL ? n + n / 8 + 512 : n;
    if (n <= KEPT_SMALL && want > KEPT_SMALL) want = KEPT_SMALL;
    G->sweep.kept.adj = err_zero_pages(want * sizeof(double));
    G->sweep.kept.cap = want;
}

/* A plain buffer over [lo, top] in the kept memory, zeroed; NULL adj if
 * the kept buffer is in use by a sweep further out. */
static void kept_alloc(PlainBuf *b, uint32_t lo, uint32_t top, Cuts cuts)
{
    size_t n = (size_t)top - lo + 1;
    memset(b, 0, sizeof *b);
    b->lo = lo;
    b->top = top;
    b->cuts = cuts;
    G->sweep.kept.valid = 0;
    G->sweep.kept.filled = 0;
    G->sweep.kept.res_lo = G->sweep.kept.res_hi = 0;
    if (G->sweep.kept.cap < n) kept_grow(n);
    else memset(G->sweep.kept.adj, 0, n * sizeof(double));
    b->adj = G->sweep.kept.adj;
    G->sweep.kept_busy = 1;
}

void sweep_forget(void)
{
    if (G->sweep.kept_busy || G->sweep.so.busy) return;
    if (G->sweep.kept.cap > KEPT_SMALL) kept_give_back();
    double *adj = G->sweep.kept.adj;          /* small: kept (above) */
    size_t cap = G->sweep.kept.cap;
    memset(&G->sweep.kept, 0, sizeof G->sweep.kept);
    G->sweep.kept.adj = adj;
    G->sweep.kept.cap = cap;
    free(G->sweep.so.abar), free(G->sweep.so.tau), free(G->sweep.so.in);
    memset(&G->sweep.so, 0, sizeof G->sweep.so);
}

/* How many of x[0 .. n - 1] are 0, eight at a time in lanes of two (a
 * lane that compares equal to 0 is -1, summed apart); past `enough`, a
 * count at least that (the rest is not looked at). */
static uint64_t count_zeros(const double *x, size_t n, uint64_t enough)
{
    typedef double V2 __attribute__((vector_size(16)));
    typedef long long M2 __attribute__((vector_size(16)));
    const V2 zero = { 0, 0 };
    uint64_t k = 0;
    size_t j = 0;
    while (j + 8 <= n && k < enough) {
        M2 z0 = { 0, 0 }, z1 = { 0, 0 }, z2 = { 0, 0 }, z3 = { 0, 0 };
        for (size_t end = j + 1024 < n ? j + 1024 : n; j + 8 <= end; j += 8) {
            V2 a, b, c, d;
            memcpy(&a, x + j, sizeof a);
            memcpy(&b, x + j + 2, sizeof b);
            memcpy(&c, x + j + 4, sizeof c);
            memcpy(&d, x + j + 6, sizeof d);
            z0 += (M2)(a == zero);
            z1 += (M2)(b == zero);
            z2 += (M2)(c == zero);
            z3 += (M2)(d == zero);
        }
        M2 z = (z0 + z1) + (z2 + z3);
        k -= (uint64_t)(z[0] + z[1]);
    }
    for (; j < n && k < enough; j++) k += x[j] == 0;
    return k;
}

int sweep_kept_cover(SweepCover *c)
{
    const __typeof__(G->sweep.kept) *k = &G->sweep.kept;
    if (!k->filled || !k->adj || G->sweep.kept_busy || k->res_hi <= k->res_lo || k->epoch != G->tape.epoch
        || k->reclaimed != G->tape.reclaimed || k->res_hi > tape_size())
        return 0;
    *c = (SweepCover){ k->call, k->res_lo, k->res_hi, k->top };
    return 1;
}

uint64_t sweep_kept_unreached(uint32_t floor, uint64_t enough)
{
    const __typeof__(G->sweep.kept) *k = &G->sweep.kept;
    uint64_t n = floor < k->sink_lo ? k->sink_lo - floor : 0;    /* below the places */
    if (floor <= k->top && n < enough) {
        uint32_t from = floor > k->lo ? floor : k->lo;
        n += count_zeros(k->adj + (from - k->lo), (size_t)k->top - from + 1, enough - n);
    }
    return n;
}

static void kept_done(uint32_t lo, uint32_t top, int cut)
{
    G->sweep.kept_busy = 0;
    G->sweep.kept.lo = lo;
    G->sweep.kept.top = top;
    G->sweep.kept.epoch = G->tape.epoch;
    G->sweep.kept.reclaimed = G->tape.reclaimed;
    G->sweep.kept.print = entry_print(top);
    G->sweep.kept.valid = !cut;         /* a sweep with cuts answers its own question only */
    G->sweep.kept.filled = !cut;
    G->sweep.kept.sink_lo = lo;
}

/* The places are entries first .. first + n - 1, all leaves, below top. */
static RUN_VECTORISE int leaf_run(const uint32_t *wrt, int n, uint32_t top)
{
    if (n < 2 || !wrt[0] || wrt[0] + (uint32_t)n > top) return 0;
    uint32_t off = 0, other = 0, first = wrt[0];
    const uint32_t *code = tape_codes() + first;
    for (int j = 0; j < n; j++) off |= wrt[j] - (first + (uint32_t)j);
    if (off) return 0;
    for (int j = 0; j < n; j++) other |= (code[j] & TAPE_OPMASK) ^ OP_LEAF;
    return !other;
}

void sweep_derivatives(Value y, const uint32_t *wrt, int n, Cuts cuts, Value *out)
{
    uint32_t top = y.id, lo = top, btop = top;
    int any = 0, ck = 0;
    /* places that are a run of leaves below y (grad over an array): each
     * its own floor, all reached, none above y */
    int leaves = top && leaf_run(wrt, n, top);
    if (leaves) {
        value_zeros(out, n);
        any = 1;
        lo = wrt[0];
    }
    else for (int j = 0; j < n; j++) {
        out[j] = num_val(0);
        if (!wrt[j]) continue;
        uint32_t f = sweep_floor(wrt[j]);
        if (f <= top) {      /* a loop's output above y (written before y was) too */
            any = 1;
            ck |= f != wrt[j];
            if (f < lo) lo = f;
            if (wrt[j] > btop) btop = wrt[j];
        }
    }
    if (!top || !any) return;
    /* wrt entries answered: those in [lo, top], and loops' outputs above */
#define REACHED(w) ((w) && (w) >= lo && ((w) <= top || (ck && (w) <= btop && sweep_floor(w) <= top)))
    int above = btop > top, saved_ckout = G->sweep.ckout_wrt;
    G->sweep.ckout_wrt = ck;
    G->tape.busy++;    /* no reclaiming while ids sit in the sweep's buffers */
    /* each derivative is taken into its own out[j].u.n, then recorded:
     * a gradient of a million places needs no second buffer */
    int f64 = G->num.backend == BK_F64, hit = eval_fast_paths && !above && f64 && !cuts.n && kept_covers(lo, top, ck), kept_here = hit;
    int done = eval_fast_paths && !above && !hit && f64 && !cuts.n && top - lo > 65536 && sparse_sweep(top, lo, wrt, n, out);
    if (!done) {
        PlainBuf b;
        int keep = f64 && !G->sweep.kept_busy && !above;
        /* places that are a run of leaves at the bottom of the range (d
         * over an array of independents) need no room in the buffer:
         * nothing is swept below them, so their adjoints go straight into
         * out (W4: 8 MB less) */
        uint32_t sink = !hit && f64 && !cuts.n && leaves ? (uint32_t)n : 0, blo = lo + sink;
        if (hit) {
            memset(&b, 0, sizeof b);
            b.lo = G->sweep.kept.lo;
            b.top = top;
            b.adj = G->sweep.kept.adj;
        } else if (keep) {
            kept_here = 1;
            kept_alloc(&b, blo, top, cuts);
            if (sink) b.sink = out, b.sink_lo = lo, b.nsink = sink;
            plain_run(&b, top, num_round(1));
            kept_done(blo, top, cuts.n != 0);
            G->sweep.kept.ckout = ck;
            if (sink) G->sweep.kept.sink_lo = lo;
        } else {
            plain_alloc(&b, blo, btop, NULL, cuts);
            if (sink) b.sink = out, b.sink_lo = lo, b.nsink = sink;
            plain_run(&b, top, num_round(1));
        }
        if (kink_watching()) kink_scan(b.lo, top, plain_adjoint, &b);
        if (!sink)
            for (int j = 0; j < n; j++)
                out[j].u.n = REACHED(wrt[j]) ? take_plain(&b, wrt[j]) : 0;
        if (!hit && !keep) plain_free(&b);
    }
    G->tape.sweeps++;
    uint32_t rec = !G->tape.recording ? 0
                   : leaves ? tape_deriv_rec_run(top, wrt[0], (uint32_t)n, cuts.ids, cuts.n)    /* (leaf_run: a run) */
                   : tape_deriv_rec(top, wrt, (uint32_t)n, cuts.ids, cuts.n);
    uint32_t res_lo = tape_size();
    if (leaves) {         /* every place reached: one run */
        if (G->tape.recording) tape_rec_deriv_run(rec, 0, (uint32_t)n, out);
        else
            for (int k = 0; k < n; k++) out[k] = num_val(out[k].u.n);
    } else for (int j = 0; j < n;) {
        if (!REACHED(wrt[j])) {
            out[j++] = num_val(0);
            continue;
        }
        int run = j + 1;        /* places answered one after another: one call */
        while (run < n && REACHED(wrt[run])) run++;
        if (G->tape.recording) tape_rec_deriv_run(rec, (uint32_t)j, (uint32_t)(run - j), out + j);
        else
            for (int k = j; k < run; k++) out[k] = num_val(out[k].u.n);
        j = run;
    }
    if (kept_here && !hit && G->tape.recording) {    /* its results: what keeps y's cone live */
        G->sweep.kept.call = rec;
        G->sweep.kept.res_lo = res_lo;
        G->sweep.kept.res_hi = tape_size();
    }
    if (kept_here) G->sweep.kept.size = tape_size();    /* the tape as this call leaves it */
    else if (!G->sweep.kept_busy) G->sweep.kept.valid = 0;      /* another question came between */
    G->tape.busy--;
    G->sweep.ckout_wrt = saved_ckout;
#undef REACHED
}
