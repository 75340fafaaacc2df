/* ad.h: reverse mode over the session tape: d(y, place), grad(f), hvp. */
#ifndef WG_AD_H
#define WG_AD_H
#include "value.h"

extern int ad_nesting;      /* grad/hvp calls in progress (:tape clear waits for them) */
void  ad_register(void);
Value derived_call(Closure *c, int argc, Value *argv);
void  ad_abandon(void);     /* after an error unwound out of a sweep */
/* dy/d(entry) for each wrt entry, as recorded values (OP_DERIV entries when
 * recording), written to out[0..n). */
void  ad_derivatives(Value y, const uint32_t *wrt, int n, Value *out);
/* Adjoints of every entry in [lo, top] for seed 1 at top (tests, :tape). */
double *ad_sweep_plain(uint32_t top, uint32_t lo);

#endif
