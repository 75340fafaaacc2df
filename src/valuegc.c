/* valuegc.c: the cycle collector (see valuegc.h). Every heap object sits in one
 * doubly linked list. A collection marks from the roots, then recounts
 * every object's references from marked objects and roots, then frees what
 * was not marked. Recounting repairs counts left too high by temporaries an
 * error unwound past. */
#include <stdlib.h>
#include "valuegc.h"
#include "versions.h"
#include "state.h"


void gc_set_roots(void (*roots)(void (*visit)(Value))) { G->gc.visit_roots = roots; }

void gc_link(Obj *o)
{
    o->prev = NULL;
    o->next = G->gc.all;
    if (G->gc.all) G->gc.all->prev = o;
    G->gc.all = o;
    G->gc.live++;
}

void gc_unlink(Obj *o)
{
    if (o->prev) o->prev->next = o->next;
    else G->gc.all = o->next;
    if (o->next) o->next->prev = o->prev;
    G->gc.live--;
}

static void visit_value(Value v);

static void visit_obj(Obj *o)
{
    if (!o) return;
    o->rc++;
    if (o->mark) return;
    o->mark = 1;
    switch (o->type) {
    case V_ARR: {
        Storage *s = (Storage *)o;
        for (int i = 0; i < s->n; i++) visit_value(s->v[i]);
        break;
    }
    case V_VIEW: visit_obj(&((View *)o)->s->h); break;
    case V_FN: {
        Closure *c = (Closure *)o;
        visit_obj(c->env ? &c->env->h : NULL);
        visit_value(c->target);
        break;
    }
    case V_DUAL:
        visit_value(((Dual *)o)->p);
        if (!(((Dual *)o)->form & DUAL_UNBOXED))
            for (int j = 0; j < ((Dual *)o)->k; j++) visit_value(((Dual *)o)->t[j]);
        break;
    case V_ENV: {
        Env *e = (Env *)o;
        for (int i = 0; i < e->n; i++) visit_value(e->slots[i]);
        if (e->vers)
            for (int i = 0; i < e->n; i++) version_log_visit(&e->vers[i], visit_value);
        visit_obj(e->parent ? &e->parent->h : NULL);
        break;
    }
    default: break;
    }
}

static void visit_value(Value v)
{
    if (IS_HEAP(v)) visit_obj(v.u.o);
}

/* Frees unmarked objects without following their references: everything
 * they point to is either marked (and recounted) or being freed too. */
static void free_shallow(Obj *o)
{
    switch (o->type) {
    case V_ARR: break;      /* its elements share its allocation */
    case V_VIEW: value_envcell_release(((View *)o)->home); break;
    case V_FN:
        if (((Closure *)o)->fn) ast_chunk_release(((Closure *)o)->fn->chunk);
        break;
    case V_ENV: {
        Env *e = (Env *)o;
        if (e->cell) {
            e->cell->env = NULL;
            value_envcell_release(e->cell);
        }
        if (e->vers) {
            for (int i = 0; i < e->n; i++) version_log_free_shallow(&e->vers[i]);
            free(e->vers);
        }
        break;
    }
    case V_DUAL:
        if (((Dual *)o)->form & DUAL_SLAB) {    /* part of a slab (value.h): a spare again */
            dual_spare_put((Dual *)o);
            return;
        }
        break;
    default: break;
    }
    free(o);
}

void gc_collect(void)
{
    for (Obj *o = G->gc.all; o; o = o->next) {
        o->rc = 0;
        o->mark = 0;
    }
    if (G->gc.visit_roots) G->gc.visit_roots(visit_value);
    Obj *o = G->gc.all;
    G->gc.all = NULL;
    G->gc.live = 0;
    while (o) {
        Obj *next = o->next;
        if (o->mark) {
            o->mark = 0;
            gc_link(o);
        } else {
            free_shallow(o);
        }
        o = next;
    }
    G->gc.collect_at = 2 * (G->gc.live > 1024 ? G->gc.live : 1024);
}

void gc_each_object(void (*fn)(Obj *o, void *ud), void *ud)
{
    for (Obj *o = G->gc.all; o; o = o->next) fn(o, ud);
}

void gc_maybe_collect(void)
{
    if (gc_due()) gc_collect();
}


static void strip(Value *v)
{
    if (v->t == V_NUM && v->id >= G->gc.strip_from) v->id = 0;
}

/* After :tape clear no number held by a heap object may name an entry of
 * the old tape (the caller strips the roots). */
void gc_strip_ids(void) { gc_strip_ids_from(0); }

/* Entries from lo on are about to be dropped (plot takes back what it
 * recorded): numbers in heap objects that name them become constants (the
 * caller strips the roots). */
void gc_strip_ids_from(uint32_t lo)
{
    G->gc.strip_from = lo;
    for (Obj *o = G->gc.all; o; o = o->next) {
        if (o->type == V_ARR) {
            Storage *s = (Storage *)o;
            if (s->known == KNOWN_CONSTS) continue;    /* no ids */
            if (s->known & KNOWN_NOHEAP) {             /* numbers all: no type to look at */
                for (int i = 0; i < s->n; i++) s->v[i].id = s->v[i].id >= lo ? 0 : s->v[i].id;
                continue;
            }
            for (int i = 0; i < s->n; i++) strip(&s->v[i]);
        } else if (o->type == V_ENV) {
            Env *e = (Env *)o;
            for (int i = 0; i < e->n; i++) strip(&e->slots[i]);
        } else if (o->type == V_DUAL) {
            strip(&((Dual *)o)->p);
            if (!(((Dual *)o)->form & DUAL_UNBOXED))
                for (int j = 0; j < ((Dual *)o)->k; j++) strip(&((Dual *)o)->t[j]);
        }
    }
}
