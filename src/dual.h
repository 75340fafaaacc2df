/* dual.h: arithmetic on dual numbers (forward mode's values). */
#ifndef WG_DUAL_H
#define WG_DUAL_H
#include "value.h"

Value dual_op(int op, Value a, Value b);   /* an op with a dual operand; borrowed in, owned out */

#endif
