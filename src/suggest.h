/* suggest.h: the nearest known name to an unknown one, for error notes. */
#ifndef WG_SUGGEST_H
#define WG_SUGGEST_H
#include "value.h"

const char *suggest_name(const char *name, Env *env);   /* NULL if none is near */
/* The error for reading the undefined name n, with a "did you mean" note. */
_Noreturn void suggest_undefined(const Node *n, Env *env);

#endif
