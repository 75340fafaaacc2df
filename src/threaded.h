/* threaded.h: closure-threaded evaluation of resolved syntax trees.
 * Every node gets, once, the C function that evaluates it (Node.ev) and
 * the one that runs it as a statement (Node.ex); eval.c's eval_expr and
 * exec call them. threaded.c says why. */
#ifndef WG_THREADED_H
#define WG_THREADED_H
#include "ast.h"
#include "value.h"

/* Chooses the functions of n and everything under it (function bodies
 * too); resolve.c calls it on a chunk it resolved. */
void threaded_compile(Node *n);

/* What eval.c offers the special functions: its general paths, which they
 * fall back to whenever a value is not the kind they expect. */
Value eval_expr_switch(Node *n, Env *env);     /* any expression */
int   eval_exec_switch(Node *n, Env *env);     /* any statement */
Value eval_binop(Node *n, Env *env);          /* a op b */
Value eval_binop_done(Node *n, Value a, Value b);   /* a op b, operands evaluated (taken over) */
Value eval_index(Node *n, Env *env);           /* a[...] */
Value eval_call(Node *n, Env *env);            /* f(...) */
Value eval_index_general(Node *n, Env *env, const Value *given);   /* given: the index evaluated, or NULL */
void  eval_store_var(Node *target, Env *env, Value v);
void  eval_store_element(Node *target, Env *env, Value v);
int   eval_store_named(Node *target, Env *env, Value v, const Value *given);   /* 0: declined */
void  eval_store_general(Node *target, Env *env, Value v, int compound_op, const Value *given);
int   eval_exec_block(Node *n, Env *env);
int   eval_as_bool(Value v, Node *at, const char *what);
void  eval_between_statements(void);
Value eval_call_closure(Closure *c, int argc, Value *argv);   /* c->fn set, not recording itself */           /* a statement outside any call ended: collector, reclaiming */

#endif
