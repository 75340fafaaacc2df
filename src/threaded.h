/* threaded.h: closure-threaded evaluation of resolved syntax trees.
 * Every node gets, once, the C function that evaluates it (Node.ev) and
 * the one that runs it as a statement (Node.ex); eval.c's eval_expr and
 * exec call them. threaded.c says why. */
#ifndef WG_THREADED_H
#define WG_THREADED_H
#include "ast.h"

/* Chooses the functions of n and everything under it (function bodies
 * too); resolve.c calls it on a chunk it resolved. */
void threaded_compile(Node *n);

#endif
