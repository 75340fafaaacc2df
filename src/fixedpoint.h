/* fixedpoint.h: the operator fixedpoint(g, x0[, tol, maxiter])
 * (fixedpoint.c): iterates x = g(x) unrecorded and records x* as one group
 * of entries (fixtape.h) whose reverse rule is the implicit function theorem. */
#ifndef WG_FIXEDPOINT_H
#define WG_FIXEDPOINT_H
#include "value.h"

Value fixedpoint_builtin(int argc, Value *argv);

#endif
