/* ad.h: reverse mode as the language offers it: d(y, place), grad(f), hvp,
 * and fixedpoint (whose derivatives are the implicit function theorem). */
#ifndef WG_AD_H
#define WG_AD_H
#include "value.h"
#include "eval.h"

typedef struct { int nesting; } AdState;   /* nesting: grad/hvp calls in progress (:tape clear waits for them) */
Value derived_call(Closure *c, int argc, Value *argv);
Value ad_d(Node *call, Env *env);          /* the special form d(y, place) */
Value ad_grad(int argc, Value *argv);
Value ad_hvp(int argc, Value *argv);
Value ad_derivative(Value y, uint32_t wrt);   /* d(y, entry wrt): recorded, of a dual a dual */
Value fixedpoint_builtin(int argc, Value *argv);   /* fixedpoint(g, x0[, tol, maxiter]), fixedpoint.c */

#endif
