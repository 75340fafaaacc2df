/* callsite.h: a call's line of the traceback, pushed as a call begins and
 * popped as it ends, shared by the tree walker's call path (eval.c) and
 * the compiled scalar closures (regvm.c), so that both leave the same
 * traceback behind an error (with eval.h's eval_depth_error). Needs the
 * session state (state.h). */
#ifndef WG_CALLSITE_H
#define WG_CALLSITE_H
#include "error.h"
#include "state.h"

/* The site's node is kept as it is; its line and column are read only
 * when an error prints them. */
static inline void call_push(const char *name)
{
    if (__builtin_expect(G->err.ncalls == G->err.capcalls, 0)) err_call_grow();
    CallSite *s = &G->err.calls[G->err.ncalls++];
    s->name = name;
    s->chunk = G->err.where.chunk;
    s->node = G->err.where.node;
    s->line = s->col = 0;
}

static inline void call_pop(void) { G->err.ncalls--; }

#endif
