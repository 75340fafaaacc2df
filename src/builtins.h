/* builtins.h: the builtin functions (builtins.c): the table of SPEC
 * "Builtins" and the special forms that see their argument nodes (d,
 * view), defined as globals of the session. */
#ifndef WG_BUILTINS_H
#define WG_BUILTINS_H
#include "value.h"

typedef Value (*SpecialFn)(Node *call, Env *env);
void  builtins_register(void);
void  define_builtin(const Builtin *b);
void  define_special(const char *name, SpecialFn fn, const char *help);
SpecialFn special_for(const Builtin *b);
int   builtin_math1_op(const Builtin *b);   /* OpCode of sin, exp, ...; -1 otherwise */
const char *builtin_op_example(const char *name);   /* :help's example of an op's builtin */
const Builtin *builtin_list(int i);     /* NULL after the last */

#endif
