/* builtins.h: the builtin functions (builtins.c): the table of SPEC
 * "Builtins" and the special forms that see their argument nodes (d,
 * view), defined as globals of the session. */
#ifndef WG_BUILTINS_H
#define WG_BUILTINS_H
#include "value.h"

typedef Value (*SpecialFn)(Node *call, Env *env);
void  builtin_register(void);
void  builtin_define(const Builtin *b);
void  builtin_define_special(const char *name, SpecialFn fn, const char *help);
SpecialFn builtin_special(const Builtin *b);
int   builtin_math1_op(const Builtin *b);   /* OpCode of sin, exp, ...; -1 otherwise */
const char *builtin_op_example(const char *name);   /* :help's example of an op's builtin */
const Builtin *builtin_list(int i);     /* NULL after the last */
#define MAX_BUILTINS 96
typedef struct {
    const Builtin *table[MAX_BUILTINS];
    SpecialFn specials[MAX_BUILTINS];
    Builtin special_defs[MAX_BUILTINS];
    int n;
} BuiltinsState;

/* The value view(a, ...), row and col view, taken as a place
 * when arg is a variable (home, owner: the variable a write through the
 * view makes a version of; owner -1: none), and the view of its elements
 * start, start + stride, ... (len of them), which takes base. */
int builtin_is_take(const Builtin *b);
int builtin_take_plain(Value a, Value idx);
Value builtin_take(Value a, Value idx);
Value builtin_view_base(Node *arg, Env *env, EnvCell **home, int *owner, int readonly);
Value builtin_view_over(Value base, EnvCell *home, int owner, int start, int len, int stride, int readonly);

#endif
