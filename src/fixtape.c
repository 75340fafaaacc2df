/* fixtape.c: the fixed-point entry kinds on the tape (see fixtape.h); their
 * rules are in sweep.c, the operator in fixedpoint.c. */
#include <math.h>
#include <stdlib.h>
#include "fixtape.h"
#include "error.h"
#include "state.h"

static void fix_each_id(TapeSide *s, void (*fn)(uint32_t *id, void *ud), void *ud)
{
    FixSide *f = (FixSide *)s;
    for (uint32_t k = 0; k < 2 * f->n; k++) fn(&f->ids[k], ud);
}

static void fix_release(TapeSide *s) { free(s); }

static const TapeSideKind fix_kind = { "fixedpoint", fix_each_id, NULL, fix_release };

uint32_t fixtape_standins(uint32_t n, const double *x, double tol, uint32_t maxiter)
{
    FixSide *s = err_calloc(1, sizeof(FixSide) + 2 * (size_t)n * sizeof(uint32_t));
    s->side.kind = &fix_kind;
    s->n = n;
    s->tol = tol;
    s->maxiter = maxiter;
    /* should the entry fail (the tape limit), the record goes with the
     * next truncate or clear, as records of entries taken back do */
    uint32_t k = tape_side_add(&s->side);
    uint32_t head = tape_push(OP_FIXIN, k, 0, n ? x[0] : 0);
    s->ids[0] = head;
    for (uint32_t j = 1; j < n; j++) s->ids[j] = tape_push(OP_FIXIN, k, head, x[j]);
    return head;
}

uint32_t fixtape_result(uint32_t head, uint32_t j, uint32_t y, double v)
{
    FixSide *s = fixtape_side(head);
    s->ids[s->n + j] = y;
    return tape_push(OP_FIXPT, tape_a(head), s->ids[j], v);
}

uint32_t fixtape_index(const FixSide *s, uint32_t standin)
{
    uint32_t lo = 0, hi = s->n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->ids[mid] <= standin) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* The distance from x > 0 to the next value of the active format. */
static double ulp_at(double x)
{
    const Format *f = &num_formats[G->num.backend];
    double next = f->from_bits(f->to_bits(x) + 1);
    return next > x && isfinite(next) ? next - x : 0;
}

int fixtape_converged(double change, double scale, double tol)
{
    if (!(change <= change) || !isfinite(scale)) return 0;   /* nan */
    if (change <= tol * scale) return 1;
    return scale > 0 && change <= 2 * ulp_at(num_round(scale));
}

int fixtape_step(FixProgress *p, double change, double scale, double tol)
{
    if (p->met) {
        if (change == 0 || !(change <= p->last) || ++p->polished >= FIXPT_POLISH) return 1;
        p->last = change;
        return 0;
    }
    if (!fixtape_converged(change, scale, tol)) return 0;
    p->met = 1;
    p->last = change;
    return change == 0;
}
