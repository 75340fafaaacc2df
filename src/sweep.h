/* sweep.h: reverse sweeps over the session tape (see sweep.c). */
#ifndef WG_SWEEP_H
#define WG_SWEEP_H
#include "value.h"

/* Entries a sweep holds fixed (their adjoints go no further), highest
 * first, each once. */
typedef struct {
    const uint32_t *ids;
    uint32_t n;
} Cuts;

/* dy/d(entry) for each wrt entry, as values written to out[0..n): DERIV
 * entries when recording (a later sweep expands them), plain numbers
 * otherwise. y is a number (not a dual). */
void    sweep_derivatives(Value y, const uint32_t *wrt, int n, Cuts cuts, Value *out);
/* Adjoints of every entry in [lo, top] for seed 1 at top, in float64
 * (tests, :tape); scratch memory, give back with wg_scratch_free. */
double *sweep_adjoints(uint32_t top, uint32_t lo);
/* After an error unwound out of a sweep. */
void    sweep_abandon(void);
/* Gives back the adjoint buffer kept between d calls (:tape clear, reset). */
void    sweep_forget(void);

#endif
