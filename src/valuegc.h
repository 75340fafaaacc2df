/* valuegc.h: reference counting frees almost everything at once; this collector
 * frees what counting cannot: cycles (a closure stored in the frame it
 * captures) and the temporaries an error unwound past. It runs only at
 * quiescent points, between top-level statements, when every live object is
 * reachable from the globals, so it can recount every reference exactly. */
#ifndef WG_VALUEGC_H
#define WG_VALUEGC_H
#include "value.h"

/* The evaluator names the roots (its globals) once, at start-up. */
void   gc_set_roots(void (*roots)(void (*visit)(Value)));
void   gc_link(Obj *o);
void   gc_unlink(Obj *o);
void   gc_collect(void);          /* trace from the roots, recount, free the rest */
void   gc_maybe_collect(void);    /* collect when enough was allocated since last time */
/* Whether gc_maybe_collect would collect: heap objects alive now, and the
 * count (twice those the last collection kept) at which it does. */
typedef struct {
    Obj *all;                 /* every heap object */
    void (*visit_roots)(void (*visit)(Value));
    size_t live, collect_at;
    uint32_t strip_from;
} GcState;
#endif

/* Needs the session state (state.h includes this file again). */
#if defined(WG_STATE_DONE) && !defined(WG_GC_H_STATE)
#define WG_GC_H_STATE
static inline int gc_due(void) { return G->gc.live > G->gc.collect_at; }
/* gc_link and gc_unlink inline, for forward mode's dual per operation. */
static inline void gc_link_inline(Obj *o)
{
    o->prev = NULL;
    o->next = G->gc.all;
    if (G->gc.all) G->gc.all->prev = o;
    G->gc.all = o;
    G->gc.live++;
}
static inline void gc_unlink_inline(Obj *o)
{
    if (o->prev) o->prev->next = o->next;
    else G->gc.all = o->next;
    if (o->next) o->next->prev = o->prev;
    G->gc.live--;
}
void   gc_each_object(void (*fn)(Obj *o, void *ud), void *ud);   /* every heap object, live or not yet collected */
void   gc_strip_ids(void);        /* every number in a heap object becomes a constant */
void   gc_strip_ids_from(uint32_t lo);   /* ... every number naming entry lo or later */

#endif
