/* evalstore.h: what eval.c's element writes and threaded.c's instances of
 * them share, inline in both: whether a write is cut by nograd or recorded,
 * and a number's store into a number element (store_plain_at), so that an
 * instance (a global's a[i] = e at the top level, W4) writes with no call
 * on the common path and still does exactly what eval.c's path does.
 * Included by eval.c, threaded.c and regvm.c (whole_index). */
#ifndef WG_EVALSTORE_H
#define WG_EVALSTORE_H
#include "eval.h"
#include "versions.h"
#include "state.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* x as an index of an array of n plain elements: 1 with *k when x is a
 * whole number in [0, n). With SSE2 the conversion's own answer for a NaN
 * or a number out of int's range (INT_MIN, out of [0, n) as unsigned) does
 * the range test, and one compare the bounds (what x >= 0 && x < n and
 * (int)x == x took a dozen instructions for, on every element access). */
static inline __attribute__((always_inline)) int whole_index(double x, int n, int *k)
{
#ifdef __SSE2__
    int i = _mm_cvttsd_si32(_mm_set_sd(x));
    if ((unsigned)i >= (unsigned)n || (double)i != x) return 0;
    *k = i;
    return 1;
#else
    if (!(x >= 0 && x < n) || (int)x != x) return 0;
    *k = (int)x;
    return 1;
#endif
}

/* The frame (call depth) running the innermost nograd block, -1 none.
 * What a nograd block assigns in its own frame, and what it returns, is
 * cut as detach cuts it: no tape history and no tangents, so reverse and
 * forward mode agree that nothing flows through it. Functions it calls run
 * as they would anywhere (a jvp or fwdgrad inside nograd still works). */
static inline int in_nograd(void) { return G->eval.run.nograd_frame == G->eval.run.call_depth; }

static inline int recording_scope(Env *env)
{
    return G->tape.recording && (!env || env->vers);
}

/* ------------------------------------------------------------- nograd */

/* Inside nograd nothing is recorded, yet a variable assigned there is
 * still a place d can differentiate against afterwards (SPEC "nograd";
 * tests/lang/ad_nograd_assign.wg). The block lists the variables it
 * assigns, by =, element write or compound assignment, and when the
 * outermost block ends each one's value becomes its latest version
 * (version_settle). Deferred, so a loop filling an array under nograd
 * records one leaf per element at the end, and nothing for the values it
 * overwrote on the way; versions made inside the block are forgotten. */
/* (eval_list_nograd_write, eval.h: the variable listed) */

/* The block's element loops come here at every write: the test inline. */
static inline void note_nograd_write(Node *var, Env *env, VerLog *log)
{
    /* no block: recording is off for a forward-only or plain run, which
     * settles nothing (the tests reach none with a log) */
    if (!log || !G->eval.run.nograd_block || log->nograd_mark == G->eval.run.nograd_block) return;
    eval_list_nograd_write(var, env, log);
}

/* a[i] = x with a and i names (local or global), a an array whose
 * storage this name may write (not shared by value), i a whole number in
 * range, x a plain number, no checkpointed loop running: what eval_store_element
 * does, without reference counts or calls. Every element loop writes
 * through here (W4). 0: eval_store_general has it. */
/* global: 1 when the caller knows a is a global (its log is there, the
 * test folded away), else 0 (cont->ref says). */
static inline __attribute__((always_inline)) int store_plain_at(Node *target, Env *env, Env *home, Storage *st, int i, Value v,
                                                                int global)
{
    const Node *cont = target->a;
    if (st->h.rc > 1 && !st->aliased) return 0;
    Value *elem = &st->v[i];
    if (elem->t != V_NUM) return 0;        /* a dual's release is eval_store_element's */
    storage_dirty(st);                     /* an id may be written or labelled */
    if (!global) global = cont->ref == REF_GLOBAL;
    VerLog *log = global ? &G->eval.globals[cont->slot].ver : home->vers ? &home->vers[cont->slot] : NULL;
    if (log) version_count(log);
    /* written field by field, while v is in registers, and labelled where
     * it lands: v itself never goes through memory (a copy through the
     * stack cost a stalled load per write) */
    elem->id = v.id;
    elem->u.n = v.u.n;
    if (recording_scope(env)) {
        uint64_t logged = G->versions.ids_logged;
        version_element_num(log, i, elem); /* a[i] is a place too */
        if (global) G->reclaim.global_versions += G->versions.ids_logged - logged;
    } else if (in_nograd()) {
        elem->id = 0;                      /* as eval_store_var cuts it */
        note_nograd_write((Node *)cont, env, log);
    } else if (G->tape.recording && elem->id) {
        /* from a function that keeps no versions: a place all the same */
        uint64_t logged = G->versions.ids_logged;
        if (log) version_element_own(log, i, elem);
        else version_label_place(elem);            /* a local array: held by it alone */
        if (global) G->reclaim.global_versions += G->versions.ids_logged - logged;
    } else if (G->tape.recording && log)
        version_element_own(log, i, elem);
    else if (G->eval.run.nograd_block && log)
        note_nograd_write((Node *)cont, env, log);   /* from a function a nograd block calls */
    return 1;
}

/* a[x] = v with a a global and x the index's number: store_plain_at
 * with the variable's kind known, the slot read here (after the value and
 * the index were evaluated: they may have added globals, moving the
 * table). 0: declined, nothing written. */
static inline __attribute__((always_inline)) int store_global_at(Node *target, Env *env, Value v, double x)
{
    const Value *av = &G->eval.globals[target->a->slot].v;
    if (av->t != V_ARR) return 0;
    Storage *st = AS_ARR(*av);
    int k;
    if (!whole_index(x, st->plain_n, &k)) return 0;
    return store_plain_at(target, env, NULL, st, k, v, 1);
}

#endif
