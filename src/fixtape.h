/* fixtape.h: the fixed-point entry kinds (SPEC "Long loops and long
 * sessions"): what fixedpoint(g, x0) leaves on the tape, and the two
 * helpers its reverse rule (sweep.c) and its operator (fixedpoint.c) share.
 *
 * One call to fixedpoint with an x of n numbers (a dual counts each of its
 * parts) records a group:
 *
 *   n stand-ins  (fixin)  holding x*; the first is the group's head;
 *   g(stand-ins)          one application of g, recorded as usual: it
 *                         reads the stand-ins and whatever g captured (θ);
 *   n results    (fixpt)  holding x*, what the program sees.
 *
 * Both kinds are side-record entries (tape.h): a = the group's record, b =
 * an operand: a stand-in's head (0 for the head itself), a result's own
 * stand-in. The record lists the stand-ins and g's results; for a result
 * all of them lie below, so whatever keeps a result keeps the group.
 *
 * The tape then says what is true: x* is a function of θ (the stand-ins'
 * rule, the implicit function theorem), and g's graph is a plain function
 * of x* and θ. A result hands its adjoint to its stand-in; the head, met
 * by a sweep, solves λ = x̄ + (∂g/∂x)ᵀ λ by iterating sweeps over g's graph
 * (no matrix) and sweeps λ through the graph once more into θ. A recorded
 * sweep records λ itself as a fixed point (of μ ↦ x̄ + (∂g/∂x)ᵀ μ, whose g
 * is the recorded sweep of the graph), so derivatives of any order nest.
 *
 * The one place where ids point up the tape: the record, as the head's,
 * lists g's results, above it (tapegc.c marks down from them again). */
#ifndef WG_FIXTAPE_H
#define WG_FIXTAPE_H
#include "tape.h"

typedef struct {
    TapeSide side;
    uint32_t n;             /* numbers in x */
    uint32_t maxiter;       /* for the adjoint iterations, as for x's */
    double tol;
    uint32_t ids[];         /* [0, n): the stand-ins; [n, 2n): g's results, 0 if constant */
} FixSide;

/* Records n stand-ins holding x[0..n) with a side record; returns the head. */
uint32_t fixtape_standins(uint32_t n, const double *x, double tol, uint32_t maxiter);
/* Records result j of head's group: g's result y (an entry or 0), value v. */
uint32_t fixtape_result(uint32_t head, uint32_t j, uint32_t y, double v);
/* The side record of a fixin or fixpt entry. */
#endif

/* Needs the session state (state.h includes this file again). */
#if defined(WG_STATE_DONE) && !defined(WG_FIXTAPE_H_STATE)
#define WG_FIXTAPE_H_STATE
static inline FixSide *fixtape_side(uint32_t i) { return (FixSide *)tape_side_at(tape_a(i)); }
/* Which number of its group the stand-in `standin` is (the ids ascend). */
uint32_t fixtape_index(const FixSide *s, uint32_t standin);
/* Whether a step that changed x by `change` (max norm) to a new x of size
 * `scale` (max norm) has converged: change <= tol * scale, or within two
 * units in the last place of the active format at scale (so narrow
 * backends, whose iterates may flip between neighbours, converge too). */
int fixtape_converged(double change, double scale, double tol);
/* An iteration's progress: once a step has converged, up to FIXPT_POLISH
 * further steps are taken while the change does not grow, until a step
 * changes nothing: a contraction gains its last digits this way (the
 * exact fixed point of g in the format, where there is one), at a bounded
 * cost. fixtape_step says whether to stop. */
#define FIXPT_POLISH 64
typedef struct {
    int met;            /* a step has converged */
    int polished;       /* steps taken since */
    double last;        /* the latest change */
} FixProgress;
int fixtape_step(FixProgress *p, double change, double scale, double tol);

#endif
