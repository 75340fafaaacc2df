/* eval.h: the tree-walking evaluator over resolved syntax trees.
 * Values are returned owned (+1 reference); variables hold one reference
 * each. Top-level variables are globals, indexed by the slot resolve.c
 * gave them; function frames (Env) hold parameters and locals. */
#ifndef WG_EVAL_H
#define WG_EVAL_H
#include <signal.h>
#include "value.h"
#include "versions.h"

typedef struct Global {
    const char *name;
    Value v;
    VerLog ver;
} Global;

/* Variables a running nograd block assigned (see exec_nograd in eval.c). */
typedef struct { Env *home; int slot; } NogradWrite;   /* home NULL: a global */
#ifdef __EMSCRIPTEN__
/* In a web page (`make web`) WebAssembly's calls run on the browser's own
 * stack, about 1 MB in Chromium's workers, which a page cannot enlarge:
 * some 250 nested wengert calls of `1 + f(n - 1)` fill it, and raising
 * the error at the limit takes room of its own, more the deeper it is (at
 * 230 it overflowed since the unboxed duals, at 200 not; to be found), so
 * the limit keeps a margin below that. */
#define MAX_CALL_DEPTH 180
#else
#define MAX_CALL_DEPTH 2000       /* nested calls before "recursion too deep" */
#endif
#define MAX_NESTED_RUNS 64

/* Where the running statement stands: what an error's recovery puts back
 * as it was when the chunk began (eval_chunk). */
typedef struct {
    Value ret_value;          /* set by `return`, taken by the call */
    int call_depth;
    int block_depth;          /* blocks being run (0: a top-level statement) */
    uint32_t nograd_block;    /* the running outermost nograd block's number */
    int nograd_frame;         /* the call depth of the running nograd block; -1: none */
    int top_loops;            /* loops running at the top level (limit_hint) */
    Env *frame;               /* the running call's frame (NULL: the top level) */
} EvalRun;

/* The evaluator's part of the session state (G->eval). */
typedef struct {
    Global *globals;
    int nglobals, capglobals;
    int *gslots;              /* names -> 1 + index in globals, open addressing */
    int ngslots;              /* a power of two, at least twice nglobals */
    int echo;                 /* REPL: echo bare expression values */
    /* The `:` commands are the front end's (cmd.c): it hands the evaluator a
     * runner for them, so the evaluator does not depend on the command layer.
     * A command that ends the session (:quit) sets quit. */
    void (*command)(const char *text);
    /* A front end that shows pictures (a notebook: wg_set_display) takes
     * plot's and `:tape dot`'s pictures here instead of the terminal text:
     * mime type, data, and the text shown where pictures cannot be. */
    void (*display)(const char *mime, const char *data, size_t len, const char *alt);
    int quit;
    int prelude_globals;      /* globals defined by the standard library */
    EvalRun run;
    int run_nesting;          /* chunks running inside chunks (:load, :time) */
    Chunk *nested_runs[MAX_NESTED_RUNS];
    NogradWrite *nograd_writes;
    int n_nograd_writes, cap_nograd_writes;
    uint32_t nograd_serial;   /* numbers blocks and settlings, for VerLog.nograd_mark */
    int ans_slot;             /* the global `ans`, -1 until known */
    /* The standard library's files that only define functions run when a
     * chunk first names one of them (wengert.c): globals lazy_lo ..
     * lazy_hi - 1 are their names. eval_global_index marks a name it is asked
     * for (the resolver's call), and a chunk calls lazy_load before it runs
     * if any mark is set. */
    int lazy_lo, lazy_hi;
    unsigned char *lazy_named;   /* [g - lazy_lo]: named since the last lazy_load */
    int lazy_pending;            /* some mark is set */
    void (*lazy_load)(void);
} EvalState;

void  eval_init(void);
void  eval_reset(void);       /* a fresh session */
int   eval_chunk(Chunk *c);   /* runs it under protection; 0 ok, 1 error */
void  eval_run_chunk(Chunk *c);   /* unprotected: errors propagate; takes c */
void  eval_visit_roots(void (*visit)(Value));
Value eval_call_value(Value f, int argc, Value *argv);   /* argv borrowed */
int   eval_at_top_level(void);   /* not inside a block or a call */
int   eval_outside_calls(void);  /* no function call is running (nothing held in C locals) */
void eval_global_forget(int keep);                      /* forget the names after the first keep */
Global *eval_global_lookup(const char *name);           /* NULL if never named */
int  eval_global_defined(int g);   /* it has a value, or is a library function not yet loaded */

/* Places for d(y, place) and x@k (ad.c asks the evaluator). */
typedef struct {
    Value  *slot;      /* the variable's current value */
    VerLog *ver;       /* its versions, or NULL where none are kept */
    const char *name;
    Env    *home;      /* the frame that holds slot, NULL for a global */
    int     index;     /* slot's number there */
} Place;
int   eval_place(Node *n, Env *env, Place *out);   /* n is N_NAME/N_VERSION */
Value eval_expr(Node *n, Env *env);

/* For checkpointed loops (ckpt.c): statements and variables as the
 * evaluator runs them. */
enum { EXEC_NORMAL, EXEC_BREAK, EXEC_CONTINUE, EXEC_RETURN };
int    eval_exec(Node *n, Env *env);
Value *eval_var_slot(Node *n, Env *env, VerLog **ver);
double eval_range_bound(Node *e, Env *env);
int    eval_condition(Node *e, Env *env, const char *what);
int    eval_global_index(const char *name);   /* interns a global name (resolve.c) */

/* What the evaluator offers threaded.c's special functions: its general
 * paths, which they fall back to whenever a value is not the kind they
 * expect. */
Value eval_expr_switch(Node *n, Env *env);     /* any expression */
int   eval_exec_switch(Node *n, Env *env);     /* any statement */
Value eval_binop(Node *n, Env *env);          /* a op b */
Value eval_binop_done(Node *n, Value a, Value b);   /* a op b, operands evaluated (taken over) */
Value eval_binop_left(Node *n, Value a, Env *env);   /* a op b, a evaluated (taken over), b not yet */
Value eval_binop_tree(Node *n, Env *env);   /* eval_binop where b is no leaf: its tree whole when it can (fuse.c) */
Value eval_index(Node *n, Env *env);           /* a[...] */
Value eval_call(Node *n, Env *env);            /* f(...) */
Value eval_index_general(Node *n, Env *env, const Value *given);   /* given: the index evaluated, or NULL */
void  eval_store_var(Node *target, Env *env, Value v);
void  eval_store_element(Node *target, Env *env, Value v);
int   eval_store_named(Node *target, Env *env, Value v, const Value *given);   /* 0: declined */
/* A variable a nograd block assigned, listed for its settling when the
 * block ends (evalstore.h's note_nograd_write, once per variable and block). */
void  eval_list_nograd_write(Node *var, Env *env, VerLog *log);
void  eval_store_general(Node *target, Env *env, Value v, int compound_op, const Value *given);
int   eval_exec_block(Node *n, Env *env);
int   eval_as_bool(Value v, Node *at, const char *what);
void  eval_between_statements(void);          /* a statement outside any call ended: collector, reclaiming */
Value eval_call_closure(Closure *c, int argc, Value *argv);   /* c->fn set, not recording itself */
#define EVAL_CALL_ARGS 8
Value eval_call_closure_node(Closure *c, Node *n, Env *env);   /* c(n's arguments), evaluated in env */
_Noreturn void eval_depth_error(void);   /* "recursion too deep": a call one past MAX_CALL_DEPTH (regvm.c too) */

/* eval_fast_paths (WENGERT_SLOW): state.h, beside state.o, which defines it. */

#endif
