/* ad.h: reverse mode as the language offers it: d(y, place), grad(f), hvp
 * (fixedpoint, whose derivatives are the implicit function theorem, is
 * fixedpoint.h's). */
#ifndef WG_AD_H
#define WG_AD_H
#include "value.h"
#include "eval.h"

typedef struct { int nesting; } AdState;   /* nesting: grad/hvp calls in progress (:tape clear waits for them) */
Value ad_derived_call(Closure *c, int argc, Value *argv);
Value ad_d(Node *call, Env *env);          /* the special form d(y, place) */
Value ad_grad(int argc, Value *argv);
Value ad_hvp(int argc, Value *argv);
Value ad_derivative(Value y, uint32_t wrt);   /* d(y, entry wrt): recorded, of a dual a dual */
/* What grad does in two halves (jacobian.c sweeps one recording m times):
 * fresh entries for the point x (copies, so outer derivatives flow
 * through them), and d(r, x) for every number of such a point. */
Value ad_fresh_point(Value x);
Value ad_gradient_at(Value r, Value x);

#endif
