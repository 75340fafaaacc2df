/* eval.h: the tree-walking evaluator over resolved syntax trees.
 * Values are returned owned (+1 reference); variables hold one reference
 * each. Top-level variables are globals, indexed by the slot resolve.c
 * gave them; function frames (Env) hold parameters and locals. */
#ifndef WG_EVAL_H
#define WG_EVAL_H
#include <signal.h>
#include "value.h"

typedef struct Global {
    const char *name;
    Value v;
    VerLog ver;
} Global;

extern Global *globals;
extern int nglobals;
extern volatile sig_atomic_t wg_interrupted;
extern int wg_echo;           /* REPL: echo bare expression values */
extern int prelude_globals;
extern long wg_step_budget;   /* > 0: "interrupted" after that many more loop steps and calls (the fuzzer) */

void  eval_init(void);
void  eval_reset(void);       /* a fresh session */
int   eval_chunk(Chunk *c);   /* runs it under protection; 0 ok, 1 error */
void  eval_run_chunk(Chunk *c);   /* unprotected: errors propagate; takes c */
void  eval_visit_roots(void (*visit)(Value));
Value call_value(Value f, int argc, Value *argv);   /* argv borrowed */
void  eval_check_interrupt(void);
int   eval_at_top_level(void);   /* not inside a block or a call */
Global *global_lookup(const char *name);           /* NULL if never named */
void  verlog_push(VerLog *log, uint32_t id);
uint32_t verlog_find(const VerLog *log, int k);         /* 0 if not kept */
uint32_t *verlog_array(const VerLog *log, int k, int *n); /* malloc'd element ids, or NULL */
int   verlog_version_of(const VerLog *log, uint32_t id); /* 0 if not there */
uint32_t label_number(Value *v);                    /* make v a variable version */

/* Places for d(y, place) and x@k (ad.c asks the evaluator). */
typedef struct {
    Value  *slot;      /* the variable's current value */
    VerLog *ver;       /* its versions, or NULL where none are kept */
    const char *name;
} Place;
int   eval_place(Node *n, Env *env, Place *out);   /* n is N_NAME/N_VERSION */
Value eval_expr(Node *n, Env *env);

/* Builtins (builtins.c) and special forms that see their argument nodes. */
typedef Value (*SpecialFn)(Node *call, Env *env);
void  builtins_register(void);
void  define_builtin(const Builtin *b);
void  define_special(const char *name, SpecialFn fn, const char *help);
SpecialFn special_for(const Builtin *b);
const Builtin *builtin_list(int i);     /* NULL after the last */
Value bi_dot_value(Value a, Value b);

#endif
