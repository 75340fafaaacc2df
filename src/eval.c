/* eval.c: walks the resolved syntax tree.
 * Control flow returns a code (normal, break, continue, return) rather than
 * unwinding; only errors unwind (error.c). The session stays consistent on
 * error because every store into a variable or an element is a single
 * assignment of a finished value: an error leaves old values in place.
 * Temporaries an error skips past are reclaimed by gc_collect. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval.h"
#include "builtins.h"
#include "ckpt.h"
#include "fuse.h"
#include "arith.h"
#include "tape.h"
#include "parse.h"
#include "error.h"
#include "valuegc.h"
#include "ad.h"
#include "versions.h"
#include "sweep.h"
#include "fwd.h"
#include "kinks.h"
#include "suggest.h"
#include "tapegc.h"
#include "tapegc.h"
#include "state.h"
#include "matrix.h"
#include "matrix_lang.h"
#include "threaded.h"
#include "callsite.h"
#include "regvm.h"



static inline int exec(Node *n, Env *env) { return n->ex(n, env); }

/* ------------------------------------------------------------- globals */

/* The slot of name in the hash of global names: where it is, or the empty
 * slot where it would go. Start-up defines a few hundred names, and every
 * name of a parsed chunk is looked up once, so a scan would dominate it. */
static int *gslot_of(const char *name)
{
    uint32_t h = 2166136261u;
    for (const char *c = name; *c; c++) h = (h ^ (unsigned char)*c) * 16777619u;
    uint32_t mask = (uint32_t)G->eval.ngslots - 1;
    for (uint32_t k = h & mask;; k = (k + 1) & mask) {
        int *slot = &G->eval.gslots[k];
        if (!*slot || strcmp(G->eval.globals[*slot - 1].name, name) == 0) return slot;
    }
}

/* Makes room for one more name in the hash (rebuilt twice as big). */
static void gslots_room(void)
{
    if (2 * (G->eval.nglobals + 1) <= G->eval.ngslots) return;
    int n = G->eval.ngslots ? 2 * G->eval.ngslots : 512;
    int *slots = err_calloc((size_t)n, sizeof(int));
    free(G->eval.gslots);
    G->eval.gslots = slots;
    G->eval.ngslots = n;
    for (int i = 0; i < G->eval.nglobals; i++) *gslot_of(G->eval.globals[i].name) = i + 1;
}

int eval_global_index(const char *name)
{
    if (G->eval.ngslots) {
        int *slot = gslot_of(name);
        if (*slot) {
            int g = *slot - 1;
            if (g >= G->eval.lazy_lo && g < G->eval.lazy_hi) {   /* a library function not yet loaded? */
                G->eval.lazy_named[g - G->eval.lazy_lo] = 1;
                G->eval.lazy_pending = 1;
            }
            return g;
        }
    }
    if (G->eval.nglobals == G->eval.capglobals) {
        /* capglobals changes only once the bigger table exists: running out
         * of memory here is an error that leaves the table as it was */
        int cap = G->eval.capglobals ? 2 * G->eval.capglobals : 256;
        G->eval.globals = err_realloc(G->eval.globals, sizeof(Global) * (size_t)cap);
        G->eval.capglobals = cap;
    }
    gslots_room();
    size_t len = strlen(name);
    char *copy = err_malloc(len + 1);
    memcpy(copy, name, len + 1);
    Global *g = &G->eval.globals[G->eval.nglobals];
    memset(g, 0, sizeof *g);
    g->name = copy;
    *gslot_of(name) = G->eval.nglobals + 1;
    return G->eval.nglobals++;
}

/* Forgets the globals named after the first keep (the fuzzer's fresh
 * sessions): their names go, and the hash is built again. */
void eval_global_forget(int keep)
{
    if (keep >= G->eval.nglobals) return;
    if (keep < G->eval.lazy_hi) G->eval.lazy_lo = G->eval.lazy_hi = 0;   /* (never: the fuzzer loads its own) */
    for (int i = keep; i < G->eval.nglobals; i++) free((char *)G->eval.globals[i].name);
    G->eval.nglobals = keep;
    memset(G->eval.gslots, 0, sizeof(int) * (size_t)G->eval.ngslots);
    for (int i = 0; i < keep; i++) *gslot_of(G->eval.globals[i].name) = i + 1;
}

Global *eval_global_lookup(const char *name)
{
    if (!G->eval.ngslots) return NULL;
    int *slot = gslot_of(name);
    return *slot ? &G->eval.globals[*slot - 1] : NULL;
}

int eval_global_defined(int g)
{
    return G->eval.globals[g].v.t != V_UNDEF || (g >= G->eval.lazy_lo && g < G->eval.lazy_hi);
}

void eval_visit_roots(void (*visit)(Value))
{
    for (int i = 0; i < G->eval.nglobals; i++) {
        visit(G->eval.globals[i].v);
        version_log_visit(&G->eval.globals[i].ver, visit);
    }
    tape_each_side_value(visit);   /* what checkpointed loops and fixed points hold */
    for (int i = 0; i < G->eval.n_nograd_writes; i++)     /* frames a running nograd block will settle */
        if (G->eval.nograd_writes[i].home) visit(obj_val(V_ENV, G->eval.nograd_writes[i].home));
    ckpt_visit_roots(visit);       /* and checkpointed loops running or recomputed now */
}

/* The tape ids outside heap objects, for reclaiming: the globals and every
 * version of them (versions of top-level variables live for the session). */
static void eval_root_ids(IdFn fn, void *ud)
{
    for (int i = 0; i < G->eval.nglobals; i++) {
        if (G->eval.globals[i].v.t == V_NUM && G->eval.globals[i].v.id) fn(&G->eval.globals[i].v.id, ud);
        version_log_each_id(&G->eval.globals[i].ver, fn, ud);
    }
    regvm_each_root(fn, ud);   /* the locals of compiled calls recording (regvm.c) */
}


/* ------------------------------------------------------------ versions */

/* v as detach(v) gives it: the number without its tape entry or its
 * tangents (takes ownership; an array is one value_bind_copy made unaliased). */
static Value detached(Value v)
{
    if (v.t == V_NUM) v.id = 0;
    else if (v.t == V_DUAL) {
        Value p = num_val(v_primal(v));
        v_release(v);
        v = p;
    } else if (v.t == V_ARR) {
        arr_own(&v);
        if (AS_ARR(v)->known == KNOWN_CONSTS) return v;   /* no id to cut (W4's nograd { a0 = zeros(n) }) */
        for (int i = 0; i < AS_ARR(v)->n; i++) {
            Value *e = &AS_ARR(v)->v[i];
            if (e->t == V_NUM) e->id = 0;
            else if (e->t == V_DUAL) *e = detached(*e);
        }
    }
    return v;
}

#include "evalstore.h"

static void list_nograd_home(Env *home, int slot, VerLog *log);
static void ckpt_settle(Value *v);

void eval_list_nograd_write(Node *var, Env *env, VerLog *log)
{
    Env *home = NULL;
    if (var->ref == REF_LOCAL) home = env;
    else if (var->ref == REF_UPVAL) {
        home = env;
        for (int d = 0; d < var->depth; d++) home = home->parent;
    }
    list_nograd_home(home, var->slot, log);
}

/* The variable in slot of home (NULL: a global) is listed. */
static void list_nograd_home(Env *home, int slot, VerLog *log)
{
    log->nograd_mark = G->eval.run.nograd_block;
    if (G->eval.n_nograd_writes == G->eval.cap_nograd_writes) {
        G->eval.cap_nograd_writes = G->eval.cap_nograd_writes ? 2 * G->eval.cap_nograd_writes : 16;
        G->eval.nograd_writes = err_realloc(G->eval.nograd_writes, sizeof(NogradWrite) * (size_t)G->eval.cap_nograd_writes);
    }
    if (home) home->h.rc++;      /* a frame may end before the block does */
    G->eval.nograd_writes[G->eval.n_nograd_writes++] = (NogradWrite){ home, slot };
}

static void drop_nograd_writes(int from)
{
    while (G->eval.n_nograd_writes > from) {
        Env *home = G->eval.nograd_writes[--G->eval.n_nograd_writes].home;
        if (home) v_release(obj_val(V_ENV, home));
    }
}

/* Entries from `from` on (one block's) are settled, once per variable. */
static void settle_nograd_writes(int from)
{
    uint32_t done = ++G->eval.nograd_serial;
    for (int i = from; i < G->eval.n_nograd_writes; i++) {
        NogradWrite *w = &G->eval.nograd_writes[i];
        Value *slot = w->home ? &w->home->slots[w->slot] : &G->eval.globals[w->slot].v;
        VerLog *log = w->home ? &w->home->vers[w->slot] : &G->eval.globals[w->slot].ver;
        if (log->nograd_mark != done) {
            log->nograd_mark = done;
            if (G->ckpt.mode == 2) {       /* a recomputed step's: leaves, no versions */
                ckpt_settle(slot);
                continue;
            }
            uint64_t logged = G->versions.ids_logged;
            version_settle(log, slot);
            if (!w->home) G->reclaim.global_versions += G->versions.ids_logged - logged;
        }
    }
    drop_nograd_writes(from);
}

static void settle_protected(void *from) { settle_nograd_writes(*(int *)from); }

static __attribute__((noinline)) int exec_nograd(Node *n, Env *env)
{
    int outer_frame = G->eval.run.nograd_frame, code;
    G->eval.run.nograd_frame = G->eval.run.call_depth;
    if (!G->tape.recording) code = exec(n->a, env);    /* inside another (it settles), or forward-only */
    else {
        uint32_t outer = G->eval.run.nograd_block;
        int from = G->eval.n_nograd_writes;
        G->eval.run.nograd_block = ++G->eval.nograd_serial;
        rec_off();
        code = exec(n->a, env);
        rec_on();
        G->eval.run.nograd_block = outer;
        settle_nograd_writes(from);
    }
    G->eval.run.nograd_frame = outer_frame;
    if (code == EXEC_RETURN) G->eval.run.ret_value = detached(value_bind_copy(G->eval.run.ret_value));   /* returned from inside the block */
    return code;
}

/* ------------------------------------------------------------ variables */

static inline __attribute__((always_inline)) Value *var_slot(Node *n, Env *env, VerLog **ver)
{
    switch (n->ref) {
    case REF_LOCAL:
        if (ver) *ver = env->vers ? &env->vers[n->slot] : NULL;
        return &env->slots[n->slot];
    case REF_UPVAL: {
        Env *e = env;
        for (int d = 0; d < n->depth; d++) e = e->parent;
        if (ver) *ver = e->vers ? &e->vers[n->slot] : NULL;
        return &e->slots[n->slot];
    }
    default:
        if (ver) *ver = &G->eval.globals[n->slot].ver;
        return &G->eval.globals[n->slot].v;
    }
}

/* The slot of name n and the frame holding it (*home: env for a global,
 * which has none). */
static inline __attribute__((always_inline)) Value *var_slot_home(const Node *n, Env *env, Env **home)
{
    if (n->ref == REF_LOCAL) {
        *home = env;
        return &env->slots[n->slot];
    }
    if (n->ref == REF_UPVAL) {
        Env *e = env->parent;
        for (int d = 1; d < n->depth; d++) e = e->parent;
        *home = e;
        return &e->slots[n->slot];
    }
    *home = env;                  /* a global (var_slot's default) */
    return &G->eval.globals[n->slot].v;
}

/* A leaf's number read in place, without eval_expr's call and dispatch:
 * a float64 literal, or a name holding a plain number (a closure's
 * captured one when read_var would not label it). 0: eval_expr has it. */
static inline __attribute__((always_inline)) int leaf_number(const Node *n, Env *env, Value *out)
{
    if (!eval_fast_paths) return 0;   /* WENGERT_SLOW: the general path */
    if (n->kind == N_NAME) {
        Env *home;
        const Value *slot = var_slot_home(n, env, &home);
        if (slot->t != V_NUM || (n->ref == REF_UPVAL && slot->id && !home->vers)) return 0;
        *out = *slot;
        return 1;
    }
    if (n->kind == N_NUM && G->num.backend == BK_F64) {
        *out = num_val(n->num);
        return 1;
    }
    return 0;
}

static Value read_var(Node *n, Env *env)
{
    VerLog *log = NULL;
    Value *slot = var_slot(n, env, n->ref == REF_UPVAL ? &log : NULL);
    if (slot->t == V_UNDEF) suggest_undefined(n, env);
    /* a closure reads a local of a frame that keeps no versions: the
     * entries it may hand back (the number, or an array's elements) are
     * held by that local, so a binding must copy them, not label them in
     * place (versions.c); a[i] marks only the element it reads
     * (eval_index_general) */
    if (n->ref == REF_UPVAL && !log && (IS_NUMBER(*slot) || is_seq(*slot))) version_label_held(slot);
    v_retain(*slot);
    return *slot;
}

int eval_place(Node *n, Env *env, Place *out)
{
    if (n->kind != N_NAME && n->kind != N_VERSION) return 0;
    out->slot = var_slot(n, env, &out->ver);
    out->name = n->name;
    out->home = NULL;
    if (n->ref == REF_LOCAL || n->ref == REF_UPVAL) {
        out->home = env;
        for (int d = 0; n->ref == REF_UPVAL && d < n->depth; d++) out->home = out->home->parent;
    }
    out->index = n->slot;
    return 1;
}

static Value read_version(Node *n, Env *env)
{
    VerLog *log;
    Value *slot = var_slot(n, env, &log);
    if (slot->t == V_UNDEF) suggest_undefined(n, env);
    if (!log) err_raise_at(n, "'%s' has no recorded versions here", n->name);
    if (n->num > log->count)
        err_raise_at(n, "'%s' has %d version%s; there is no %s@%s", n->name, log->count,
                    log->count == 1 ? "" : "s", n->name, value_num_str(n->num));
    int found;
    if (version_log_inner(log, (int)n->num))
        err_raise_at(n, "%s@%d was made inside a checkpointed loop, which keeps only the "
                    "value it ends with (%s@%d)", n->name, (int)n->num, n->name,
                    version_log_inner(log, (int)n->num));
    Value r = version_read(log, (int)n->num, &found);
    int view = found ? 0 : version_log_view(log, (int)n->num);
    if (view > 1 && view - 2 < G->eval.nglobals) {     /* (the array it viewed: a global) */
        const char *a = G->eval.globals[view - 2].name;
        err_raise_at(n, "%s@%d was a view of %s: a view keeps no versions of its own, its elements are %s's "
                    "(a write through it makes a new version of %s: read %s@k)", n->name, (int)n->num, a, a, a, a);
    }
    if (view)
        err_raise_at(n, "%s@%d was a view: a view keeps no versions of its own, its elements are its array's "
                    "(a write through it makes a new version of the variable holding that array)", n->name, (int)n->num);
    if (!found)
        err_raise_at(n, "%s@%d was not kept (versions made inside nograd, and before "
                    "':tape clear', are forgotten)", n->name, (int)n->num);
    return r;
}

/* A store into the variables of a checkpointed loop being run (1) or
 * recomputed (2), or into a global or a variable of the loop's frame or
 * the frames around it meanwhile (from a function the loop calls; the
 * loop carries them all): no versions (1 counts them). A version logged
 * there would name an entry of the step's scratch region, which is taken
 * back after the step. */
static __attribute__((noinline)) int ckpt_store_upval(Env *env, const Node *var)
{
    Env *home = env;
    for (int d = 0; d < var->depth && home; d++) home = home->parent;
    for (Env *e = G->ckpt.env; e; e = e->parent)
        if (e == home) return 1;
    /* a frame older than the loop that it does not carry (a closure made
     * elsewhere): recomputing a step from a saved state would see what
     * later steps wrote there, so the derivatives would silently differ */
    if (G->ckpt.mode == 1 && home && home->born <= G->ckpt.born)
        err_raise_at(var, "a checkpointed loop cannot carry '%s', a variable of a closure made "
                    "outside the loop that the loop writes; run the loop without checkpoint, "
                    "or pass the value in and out through the loop's own variables", var->name);
    return 0;
}

static int ckpt_store(Env *env, const Node *var)
{
    return G->ckpt.mode && (env == G->ckpt.env || (var && var->kind == N_NAME
                         && (var->ref == REF_GLOBAL || (var->ref == REF_UPVAL && ckpt_store_upval(env, var)))));
}

/* A number stored into a checkpointed loop's variables while its steps
 * are recomputed recorded becomes a place of its own, as a plain loop's
 * store makes it: an entry two names shared would hand one name's adjoint
 * the other's paths (d(y, s) after `u = s` in the loop). An entry the
 * region made and no name holds is labelled in place; one from below it,
 * or one a name holds, is copied. */
static void ckpt_place(Value *v)
{
    if (G->ckpt.mode != 2 || !G->tape.recording || !IS_NUMBER(*v)) return;
    Value *e = v_innermost(v);
    if (e->id >= G->ckpt.floor && !tape_labeled(e->id)) rec_label(e->id);
    else version_label_own(v);
}

/* The end of a nograd block in a recomputed step: what it assigned to the
 * loop's variables (id 0 there) becomes a leaf, as a plain loop's block
 * settles it. */
static void ckpt_settle(Value *v)
{
    if (IS_NUMBER(*v)) {
        if (!v_innermost(v)->id) version_label_own(v);
    } else if (v->t == V_ARR || v->t == V_VIEW) {
        int n = seq_len(*v);
        storage_dirty(storage_of(*v));
        for (int i = 0; i < n; i++) {
            Value *e = seq_at(*v, i);
            if (IS_NUMBER(*e) && !v_innermost(e)->id) version_label_own(e);
        }
    }
}

void eval_store_var(Node *target, Env *env, Value v)
{
    if (ckpt_store(env, target)) {
        VerLog *log;
        Value *slot = var_slot(target, env, &log);
        v = value_bind_copy(v);
        if (v.t == V_NUM) v.id = G->tape.recording ? v.id : 0;
        if (__builtin_expect(in_nograd(), 0)) v = detached(v);    /* tangents too, as below */
        if (log && G->ckpt.mode == 1) version_count(log);
        ckpt_place(&v);
        if (G->ckpt.mode == 2 && log && G->eval.run.nograd_block && (in_nograd() || !G->tape.recording))
            note_nograd_write(target, env, log);      /* also from a function the block calls */
        Value old = *slot;
        *slot = v;
        v_release(old);
        return;
    }
    if (__builtin_expect(in_nograd(), 0)) v = detached(value_bind_copy(v));
    if (target->ref == REF_LOCAL && !env->vers && v.t == V_NUM) {
        /* a number into a local of a function that keeps no versions */
        Value *slot = &env->slots[target->slot];
        Value old = *slot;
        *slot = v;
        v_release(old);
        return;
    }
    VerLog *log;
    Value *slot = var_slot(target, env, &log);
    v = value_bind_copy(v);
    uint64_t logged = G->versions.ids_logged;
    if (log && recording_scope(env)) version_bind(log, &v);
    else if (log && in_nograd()) {
        /* cut from its history above; the variable becomes a place again
         * when the block ends */
        version_count_as(log, &v);
        note_nograd_write(target, env, log);
    } else if (log) version_count_as(log, &v);
    if (target->ref == REF_GLOBAL) G->reclaim.global_versions += G->versions.ids_logged - logged;
    Value old = *slot;
    *slot = v;
    v_release(old);
}

/* ------------------------------------------------------------- indexing */

static int index_checked(Value idx, int len, Node *at);

/* The common case inline (a whole number in range); the rest, with its
 * errors, out of line: every a[i] in a loop comes through here. */
static inline int index_of(Value idx, int len, Node *at)
{
    if (__builtin_expect(idx.t == V_NUM && idx.u.n >= 0 && idx.u.n < len, 1)) {
        int i = (int)idx.u.n;
        if (__builtin_expect(i == idx.u.n, 1)) return i;
    }
    return index_checked(idx, len, at);
}

static int index_checked(Value idx, int len, Node *at)
{
    if (!IS_NUMBER(idx))
        err_raise_at(at, "index must be a number, got %s", value_type_name(idx));
    double d = v_primal(idx);
    if (d != floor(d) || isnan(d)) err_raise_at(at, "index %s is not a whole number", value_num_str(d));
    if (d < 0 || d >= len) {
        char buf[64];
        num_format(d, buf, sizeof buf);
        err_raise_at(at, "index %s out of range for %s of length %d", buf,
                    "array", len);
    }
    return (int)d;
}

/* The storage a write through `holder` lands in: arrays shared by value
 * (copy-on-write) are split first; views and aliased arrays write in place. */
static Value *writable_seq(Value *holder, Node *at)
{
    if (holder->t == V_ARR || holder->t == V_VIEW) {
        arr_own(holder);
        storage_dirty(storage_of(*holder));    /* a dual may land there */
        return holder;
    }
    err_raise_at(at, "cannot index into %s", value_type_name(*holder));
}

static void check_number(Value v, Node *at)
{
    if (!IS_NUMBER(v))
        err_raise_at(at, "array elements must be numbers, got %s", value_type_name(v));
}

/* For a[i] marked plain_names (both local or global names): a's storage
 * and the index, when a holds an array and i a whole number in range;
 * NULL otherwise (the general paths have it, with their errors). */
static inline Storage *plain_element(const Node *n, Env *env, int *index)
{
    const Node *an = n->a, *in = n->b;
    const Value *av = an->ref == REF_LOCAL ? &env->slots[an->slot] : &G->eval.globals[an->slot].v;
    const Value *iv = in->ref == REF_LOCAL ? &env->slots[in->slot] : &G->eval.globals[in->slot].v;
    if (av->t != V_ARR || iv->t != V_NUM) return NULL;
    Storage *st = AS_ARR(*av);
    double x = iv->u.n;
    if (!(x >= 0 && x < st->plain_n) || (int)x != x) return NULL;   /* plain_n: 0 for a matrix, whose a[i] is a row */
    *index = (int)x;
    return st;
}

/* A write through view w wrote its elements i0 .. i0 + n - 1: one new
 * version of the variable whose storage it is (SPEC: a write through a
 * view of x's storage makes a new version of x), if that variable still
 * holds the storage. The elements are places already where recording. */
static void version_owner(const View *w, int i0, int n)
{
    Env *home = w->home ? w->home->env : NULL;
    Value *slot;
    VerLog *log;
    if (w->owner < 0 || (w->home && !home)) return;    /* no owner, or its frame ended */
    if (home) {
        slot = &home->slots[w->owner];
        log = home->vers ? &home->vers[w->owner] : NULL;
    } else {
        if (w->owner >= G->eval.nglobals) return;      /* a front end forgot the G->eval.globals */
        slot = &G->eval.globals[w->owner].v;
        log = &G->eval.globals[w->owner].ver;
    }
    if (!log || slot->t != V_ARR || AS_ARR(*slot) != w->s) return;
    if (G->ckpt.mode) {           /* counted as the loop's own stores are, none kept */
        if (G->ckpt.mode == 1) version_count(log);
        return;
    }
    version_count(log);
    if (G->tape.recording) {
        uint64_t logged = G->versions.ids_logged;
        for (int i = i0; i < i0 + n; i++) {
            long at = w->start + (long)i * w->stride;
            version_element_logged(log, (int)at, &w->s->v[at]);
        }
        if (!home) G->reclaim.global_versions += G->versions.ids_logged - logged;
    } else if (G->eval.run.nograd_block && log->nograd_mark != G->eval.run.nograd_block)
        list_nograd_home(home, w->owner, log);
}

static inline __attribute__((always_inline)) int store_element_plain(Node *target, Env *env, Value v)
{
    int i;
    Storage *st;
    if (v.t != V_NUM || G->ckpt.mode || !target->plain_names || !(st = plain_element(target, env, &i))) return 0;
    return store_plain_at(target, env, env, st, i, v, 0);
}

/* The same for a[e] with a any name (a closure's captured array too) and
 * the index e evaluated already. */
__attribute__((noinline)) int eval_store_named(Node *target, Env *env, Value v, const Value *given)
{
    if (target->a->ref == REF_GLOBAL) return given->t == V_NUM && store_global_at(target, env, v, given->u.n);
    Env *home;
    const Value *av = var_slot_home(target->a, env, &home);
    if (av->t != V_ARR || given->t != V_NUM) return 0;
    Storage *st = AS_ARR(*av);
    double x = given->u.n;
    if (!(x >= 0 && x < st->plain_n) || (int)x != x) return 0;
    return store_plain_at(target, env, home, st, (int)x, v, 0);
}

__attribute__((noinline)) void eval_store_general(Node *target, Env *env, Value v, int compound_op,
                                                            const Value *given);

/* Whether an unrecorded number (id 0) written into an element of *holder
 * must become a place (a leaf): when the variable keeps versions (log),
 * or the holder is a view of storage that a global or a frame keeping
 * versions may name. A local array of a frame that keeps none (a function
 * with no derivative operator, on constants) needs no leaf: nothing can
 * name its elements, and its primal then records nothing (SPEC). */
static int unrecorded_write_is_place(const Value *holder, const VerLog *log)
{
    if (log) return 1;
    if (holder->t != V_VIEW) return 0;
    const View *w = AS_VIEW(*holder);
    if (w->owner < 0) return 0;                     /* a view of a value no name held */
    if (!w->home || !w->home->env) return 1;        /* a global's storage, or its frame ended */
    return w->home->env->vers != NULL;
}

/* a[e] = v when the short path of eval_store_element declines: a[e] with a
 * any name and e a number, else the general path. A function of its own,
 * so that eval_store_element keeps the small frame of its short path (W4). */
static __attribute__((noinline)) void store_element_rest(Node *target, Env *env, Value v)
{
    if (eval_fast_paths && target->a->kind == N_NAME && !target->c && v.t == V_NUM && !G->ckpt.mode) {
        /* the index first, as the general path takes it, and once */
        Value iv;
        if (!leaf_number(target->b, env, &iv)) iv = eval_expr(target->b, env);
        if (!eval_store_named(target, env, v, &iv)) eval_store_general(target, env, v, -1, &iv);
        return;
    }
    eval_store_general(target, env, v, -1, NULL);
}

/* a[...] = v: the short path in a function of its own (no frame for the
 * other paths' locals), else store_element_rest. */
__attribute__((noinline)) void eval_store_element(Node *target, Env *env, Value v)
{
    if (store_element_plain(target, env, v)) return;
    store_element_rest(target, env, v);
}

/* a[...] = v, or a[...] op= v (compound_op >= 0); given: a[i]'s index i
 * evaluated already (taken over), or NULL. */
__attribute__((noinline)) void eval_store_general(Node *target, Env *env, Value v, int compound_op,
                                                            const Value *given)
{
    Node *cont = target->a;
    Value tmp = {0}, *holder;
    VerLog *log = NULL;
    /* The index first: evaluating it may run code (a :load) that moves the
     * globals, so the variable's slot is looked up only afterwards. */
    Value iv = given ? *given : eval_expr(target->b, env);
    Value jv = target->c ? eval_expr(target->c, env) : nil_val();   /* a[i, j] */
    if (cont->kind == N_NAME) {
        holder = var_slot(cont, env, &log);
        if (holder->t == V_UNDEF) suggest_undefined(cont, env);
    } else {
        tmp = eval_expr(cont, env);
        holder = &tmp;
    }
    holder = writable_seq(holder, cont);
    if (cont->kind == N_INDEX && tmp.t == V_ARR) mat_row_write_error(target);   /* a[i][j] = x: a[i] is a copy */
    int i = target->c || is_mat(*holder) ? mat_store_index(target, *holder, iv, jv)
          : index_of(iv, seq_len(*holder), target->b);
    v_release(iv);
    v_release(jv);
    Value *elem = seq_at(*holder, i);
    if (compound_op >= 0) {
        Value r = arith_apply(compound_op, *elem, v);
        v_release(v);
        v = r;
    }
    check_number(v, target);
    if (ckpt_store(env, cont)) {
        if (log && G->ckpt.mode == 1) version_count(log);
        if (in_nograd()) v = detached(v);         /* as eval_store_var cuts it */
        else ckpt_place(&v);
        if (G->ckpt.mode == 2 && log && G->eval.run.nograd_block && cont->kind == N_NAME && (in_nograd() || !G->tape.recording))
            note_nograd_write(cont, env, log);    /* also from a function the block calls */
    } else {
        if (log) version_count_as(log, holder);
        uint64_t logged = G->versions.ids_logged;
        if (recording_scope(env)) version_element(log, i, &v);    /* a[i] is a place too */
        else if (in_nograd()) {
            v = detached(v);                      /* as eval_store_var cuts it */
            if (cont->kind == N_NAME) note_nograd_write(cont, env, log);
        } else if (G->tape.recording && (log || holder->t == V_VIEW)
                   && (v.t != V_NUM || v.id || unrecorded_write_is_place(holder, log)))
            version_element_own(log, i, &v);      /* from a function that keeps no versions */
        else if (G->tape.recording && v.id)
            version_label_place(&v);                      /* a local array's: held by it alone */
        else if (G->eval.run.nograd_block && log && cont->kind == N_NAME)
            note_nograd_write(cont, env, log);    /* from a function a nograd block calls */
        if (cont->kind == N_NAME && cont->ref == REF_GLOBAL) G->reclaim.global_versions += G->versions.ids_logged - logged;
    }
    Value old = *elem;
    *elem = v;
    v_release(old);
    if (holder->t == V_VIEW) version_owner(AS_VIEW(*holder), i, 1);
    v_release(tmp);
}

__attribute__((noinline)) Value eval_index_general(Node *n, Env *env, const Value *given);
static __attribute__((noinline)) Value eval_index_named(Node *n, Env *env);

__attribute__((noinline)) Value eval_index(Node *n, Env *env)
{
    /* a[i] with both names local or global, a an array, i a whole number
     * in range, the element a number: no reference count and no calls
     * (every element loop reads through here); the rest is a function of
     * its own, so this one needs no frame */
    int i;
    const Storage *st = n->plain_names ? plain_element(n, env, &i) : NULL;
    if (st && st->v[i].t == V_NUM) return st->v[i];
    if (n->index_pure) return eval_index_named(n, env);
    return eval_index_general(n, env, NULL);
}

/* a[e] with a a name of any kind (a closure's captured array: det's
 * minors) and e an index that calls and assigns nothing (resolve.c), so
 * it cannot change what a holds: a number element without reference
 * counts, labelled as read_captured's rule asks; the rest goes to the
 * general path with the index evaluated (once). */
static __attribute__((noinline)) Value eval_index_named(Node *n, Env *env)
{
    Env *home;
    const Value *av = var_slot_home(n->a, env, &home);
    if (av->t != V_ARR || AS_ARR(*av)->ndim == 2) return eval_index_general(n, env, NULL);
    const Storage *st = AS_ARR(*av);
    /* (the index cannot rebind a, nor add a global that would move the
     * table: st stays a's storage) */
    Value iv;
    if (!leaf_number(n->b, env, &iv)) iv = eval_expr(n->b, env);
    if (iv.t == V_NUM) {
        double x = iv.u.n;
        if (x >= 0 && x < st->plain_n && (int)x == x) {
            const Value *e = &st->v[(int)x];
            if (e->t == V_NUM) {
                if (e->id && n->a->ref == REF_UPVAL && !home->vers) version_label_held(e);
                return *e;
            }
        }
    }
    return eval_index_general(n, env, &iv);
}

/* The array a[i] reads when a is a closure's captured local: whether its
 * frame keeps no versions, so that what a[i] hands back is held there
 * (read_var's rule, for the element read alone). */
static Value read_captured(Node *n, Env *env, int *held)
{
    VerLog *log = NULL;
    Value *slot = var_slot(n, env, &log);
    if (slot->t == V_UNDEF) suggest_undefined(n, env);
    *held = !log;
    v_retain(*slot);
    return *slot;
}

/* given: the index evaluated already (taken over), for a 1-D array a. */
__attribute__((noinline)) Value eval_index_general(Node *n, Env *env, const Value *given)
{
    int held = 0;
    Value a = n->a->kind == N_NAME && n->a->ref == REF_UPVAL ? read_captured(n->a, env, &held)
                                                             : eval_expr(n->a, env);
    if (!is_seq(a)) {
        const char *what_type = value_type_name(a);   /* before the release: a matrix is read */
        v_release(a);
        err_raise_at(n, "cannot index into %s", what_type);
    }
    if (n->c || is_mat(a)) {
        Value r = mat_index(n, a, env);
        if (held) version_label_held(&r);
        v_release(a);
        return r;
    }
    Value iv = given ? *given : eval_expr(n->b, env);
    int i = index_of(iv, seq_len(a), n->b);
    Value r = *seq_at(a, i);
    if (held) version_label_held(&r);
    v_retain(r);
    v_release(iv);
    v_release(a);
    return r;
}

static int slice_bound(Node *e, Env *env, int dflt, int len)
{
    if (!e) return dflt;
    Value v = eval_expr(e, env);
    if (v.t != V_NUM) err_raise_at(e, "slice bound must be a number, got %s", value_type_name(v));
    double d = v.u.n;
    if (d != floor(d)) err_raise_at(e, "slice bound %s is not a whole number", value_num_str(d));
    if (d < 0 || d > len) err_raise_at(e, "slice bound %s out of range for length %d", value_num_str(d), len);
    return (int)d;
}

static Value eval_slice(Node *n, Env *env)
{
    Value a = eval_expr(n->a, env);
    if (!is_seq(a)) err_raise_at(n, "cannot slice %s", value_type_name(a));
    int len = seq_len(a);
    if (is_mat(a)) len = AS_ARR(a)->rows;
    int lo = slice_bound(n->b, env, 0, len), hi = slice_bound(n->c, env, len, len);
    if (hi < lo) hi = lo;
    if (is_mat(a)) {      /* rows lo .. hi - 1 */
        Value r = mat_rows(a, lo, hi);
        v_release(a);
        return r;
    }
    Value r = value_arr_new(hi - lo);
    for (int i = lo; i < hi; i++) {
        AS_ARR(r)->v[i - lo] = *seq_at(a, i);
        v_retain(AS_ARR(r)->v[i - lo]);
    }
    v_release(a);
    return r;
}

/* ---------------------------------------------------------------- calls */

static Value make_closure(Node *n, Env *env)
{
    Closure *c = value_obj_new(V_FN, sizeof(Closure));
    c->fn = n->fn;
    c->env = env;
    if (n->fn->reg_state == REG_RESTING) n->fn->reg_state = REG_COMPILED;   /* offered again (regvm.h) */
    if (env) env->h.rc++;
    ast_chunk_retain(n->fn->chunk);
    return obj_val(V_FN, c);
}

static __attribute__((noinline, noreturn)) void loop_exit_error(int code)
{
    err_raise("'%s' outside a loop", code == EXEC_BREAK ? "break" : "continue");
}

static inline __attribute__((always_inline)) Value run_body(Closure *c, Env *frame)
{
    FnInfo *f = c->fn;
    if (f->is_expr) return eval_expr(f->body, frame);
    int code = exec(f->body, frame);
    if (__builtin_expect(code == EXEC_RETURN, 1)) {
        Value r = G->eval.run.ret_value;
        G->eval.run.ret_value = nil_val();
        return r;
    }
    if (code == EXEC_BREAK || code == EXEC_CONTINUE) loop_exit_error(code);
    return nil_val();
}

/* A call's line of the traceback: call_push and call_pop (callsite.h). */

static __attribute__((noinline, noreturn)) void arity_error(FnInfo *f, int argc)
{
    char sig[200];
    int len = snprintf(sig, sizeof sig, "%s(", f->name ? f->name : "fn");
    for (int i = 0; i < f->nparams && len < (int)sizeof sig - 8; i++)
        len += snprintf(sig + len, sizeof sig - (size_t)len, "%s%s", i ? ", " : "", f->slotnames[i]);
    err_raise("%s) expects %d argument%s, got %d", sig, f->nparams, f->nparams == 1 ? "" : "s", argc);
}

__attribute__((noinline, noreturn)) void eval_depth_error(void)
{
    err_raise("recursion too deep (more than %d nested calls)", MAX_CALL_DEPTH);
}

/* A call's body in its frame, one level deeper, and back: the caller's
 * place, frame and recording switch restored, the frame dropped. */
static inline __attribute__((always_inline)) Value run_in_frame(Closure *c, Env *frame, Env *caller, int saved_recording)
{
    ErrWhere saved = G->err.where;
    G->err.where.chunk = c->fn->chunk;
    G->eval.run.call_depth++;
    G->eval.run.frame = frame;
    Value r = run_body(c, frame);
    G->eval.run.frame = caller;
    G->eval.run.call_depth--;
    G->err.where = saved;
    rec_restore(saved_recording);
    value_frame_drop(frame);
    return r;
}

/* A function's recording switch: a body that takes d(...) or x@k records
 * its own computation even inside nograd or a forward-only jvp. */
static Value call_closure(Closure *c, int argc, Value *argv)
{
    FnInfo *f = c->fn;
    if (argc != f->nparams) arity_error(f, argc);
    if (G->eval.run.call_depth >= MAX_CALL_DEPTH) eval_depth_error();
    err_check_interrupt();
    Env *frame = value_frame_new(f, c->env, f->nslots);
    /* a frame whose closures record keeps versions while recording: its
     * locals are labelled places, so a closure's parameter bound to one of
     * them is a place of its own (tests/lang/ad_d_param_bound_to_capture.wg) */
    if (f->records || (f->labels && G->tape.recording)) frame->vers = err_calloc((size_t)f->nslots, sizeof(VerLog));
    int saved_recording = G->tape.recording;
    if (f->records) G->tape.recording = 1;
    Env *caller = G->eval.run.frame;
    for (int i = 0; i < argc; i++) {
        Value v = argv[i];
        v_retain(v);
        if (v.t != V_NUM) v = value_bind_copy(v);
        if (frame->vers) {
            /* a caller that keeps no versions may hold the argument's
             * entry in a local: the parameter is a place of its own */
            if (caller && !caller->vers) version_label_held(&v);
            version_bind(&frame->vers[i], &v);
        }
        frame->slots[i] = v;
    }
    return run_in_frame(c, frame, caller, saved_recording);
}

Value eval_call_value(Value f, int argc, Value *argv)
{
    if (f.t == V_BUILTIN) {
        const Builtin *b = f.u.bi;
        if (argc < b->minargs || (b->maxargs >= 0 && argc > b->maxargs)) {
            /* name it as its help does: sqrt(x), atan2(y, x) */
            size_t nl = strlen(b->name);
            const char *close = b->help && !strncmp(b->help, b->name, nl) && b->help[nl] == '(' ? strchr(b->help, ')') : NULL;
            int siglen = close && close - b->help < 80 ? (int)(close - b->help + 1) : (int)nl;
            const char *sig = close ? b->help : b->name;
            if (b->minargs == b->maxargs)
                err_raise("%.*s expects %d argument%s, got %d", siglen, sig, b->minargs,
                         b->minargs == 1 ? "" : "s", argc);
            if (b->maxargs < 0)
                err_raise("%s expects at least %d argument%s, got %d", b->name, b->minargs,
                         b->minargs == 1 ? "" : "s", argc);
            err_raise("%s expects %d to %d arguments, got %d", b->name, b->minargs, b->maxargs, argc);
        }
        if (!b->fn) err_raise("%s cannot be called indirectly; call it by name", b->name);
        return b->fn(argc, argv);
    }
    if (f.t == V_FN) {
        Closure *c = AS_FN(f);
        if (!c->fn && argc > 0 && is_seq(argv[0])) value_seq_check_numbers(argv[0], c->label);
        call_push(c->fn ? c->fn->name : c->label);
        Value r;
        if (!c->fn) r = ad_derived_call(c, argc, argv);
        else if (c->fn->records && fwd_needs_tape(argc, argv)) r = fwd_call_on_tape(f, argc, argv);
        else r = call_closure(c, argc, argv);
        call_pop();
        return r;
    }
    err_raise("cannot call %s", value_type_name(f));
}

/* A call of closure c (a function the program wrote, c->fn, whose body
 * takes no d(...) or x@k) by threaded.c: eval_call_value's path for it. */
Value eval_call_closure(Closure *c, int argc, Value *argv)
{
    call_push(c->fn->name);
    Value r = call_closure(c, argc, argv);
    call_pop();
    return r;
}

/* f(args) by threaded.c (call_named), c the closure its name held (a
 * function the program wrote, whose body takes no d(...) or x@k, n->n at
 * most EVAL_CALL_ARGS): the callee held while the arguments are evaluated
 * and the body runs; a frame that keeps no versions gets the arguments as
 * they are, moved, not retained and released (call_closure's work for
 * them, nothing else); a call it would refuse, or that keeps versions,
 * goes the general way. One frame of C where there were three (a
 * recursive scalar function's calls, det's minor, spent a fifth of their
 * time getting in and out). */
static inline __attribute__((always_inline)) Value call_node(Closure *c, Node *n, Env *env, int argc)
{
    FnInfo *f = c->fn;
    Value args[EVAL_CALL_ARGS];
    c->h.rc++;
    Node **arg = n->list;          /* (in a register: an argument cannot change the list) */
    for (int i = 0; i < argc; i++) args[i] = arg[i]->ev(arg[i], env);
    G->err.where.node = n;
    Value r;
    if (__builtin_expect(argc != f->nparams || (f->labels && G->tape.recording) ||
                         G->eval.run.call_depth >= MAX_CALL_DEPTH, 0)) {
        r = eval_call_closure(c, argc, args);
        for (int i = 0; i < argc; i++) v_release(args[i]);
    } else {
        call_push(f->name);
        err_check_interrupt();
        Env *frame = value_frame_new(f, c->env, f->nslots);
        Value *slot = frame->slots;
        for (int i = 0; i < argc; i++) slot[i] = args[i].t == V_NUM ? args[i] : value_bind_copy(args[i]);
        r = run_in_frame(c, frame, G->eval.run.frame, G->tape.recording);
        call_pop();
    }
    if (--c->h.rc == 0) value_obj_free(&c->h);
    return r;
}

/* call_node for a closure that may have a compiled form (regvm.c): the
 * arguments evaluated as call_node evaluates them, then the compiled form
 * if it takes the call (its arguments are plain numbers then, which own
 * nothing), else the general call of them, eval_call_closure (what
 * call_node itself does with a call it declines). Apart, and without a
 * frame's code of its own: one more instance of run_in_frame made gcc
 * stop inlining value_frame_drop into call_node's (det5 +0.9M). */
static __attribute__((noinline)) Value call_node_offered(Closure *c, Node *n, Env *env)
{
    int argc = n->n;
    Value args[EVAL_CALL_ARGS] = { 0 };   /* (gcc cannot see argc <= EVAL_CALL_ARGS) */
    c->h.rc++;
    for (int i = 0; i < argc; i++) args[i] = n->list[i]->ev(n->list[i], env);
    G->err.where.node = n;
    Value r;
    if (!regvm_call(c, argc, args, &r, 0)) {
        r = eval_call_closure(c, argc, args);
        for (int i = 0; i < argc; i++) v_release(args[i]);
    }
    if (--c->h.rc == 0) value_obj_free(&c->h);
    return r;
}

Value eval_call_closure_node(Closure *c, Node *n, Env *env)
{
    /* (unlikely only for gcc's layout: marked likely, it took the paths
     * below for cold and stopped inlining value_frame_drop there; resting
     * and declined closures are not offered: regvm.h) */
    if (__builtin_expect(c->fn->reg_state < REG_DECLINED, 0)) return call_node_offered(c, n, env);
    /* one argument (a recursive scalar function's usual call) with the
     * count known: the loops over arguments unrolled */
    if (n->n == 1) return call_node(c, n, env, 1);
    return call_node(c, n, env, n->n);
}

#define MAX_ARGS 64

/* A call of a global name that holds a builtin: what the builtin is (a
 * special form, a math function's op) is cached on the call node, keyed by
 * the builtin, so a name that is rebound is looked at afresh. */
static void cache_callee(Node *n, const Builtin *bi)
{
    n->cached_callee = bi;
    n->cached_op = builtin_math1_op(bi);
    n->cached_special = (void *)builtin_special(bi);
}

static Value eval_call_general(Node *n, Env *env);

/* f(args) by a global name or any other way call_named does not take (a
 * top-level function's call: W1's w1(n)): the compiled form, if f is a
 * closure that has one or may, and it takes the call (regvm.c); 1 with
 * *out then (the arguments were plain numbers, which own nothing). */
static inline int offer_compiled(Value f, int argc, const Value *args, Value *out)
{
    if (f.t != V_FN || !AS_FN(f)->fn) return 0;
    FnInfo *fi = AS_FN(f)->fn;
    if (fi->reg_state == REG_DECLINED) return 0;
    if (fi->reg_skip) {
        fi->reg_skip--;
        return 0;
    }
    return regvm_call(AS_FN(f), argc, args, out, 1);
}

__attribute__((noinline)) Value eval_call(Node *n, Env *env)
{
    Node *callee = n->a;
    if (callee->kind == N_NAME && callee->ref == REF_GLOBAL) {
        Value g = G->eval.globals[callee->slot].v;
        if (g.t == V_BUILTIN) {
            if (__builtin_expect(n->cached_callee != g.u.bi, 0)) cache_callee(n, g.u.bi);
            if (n->cached_special) {
                G->err.where.node = n;
                return ((SpecialFn)n->cached_special)(n, env);
            }
            if (n->cached_op >= 0 && n->n == 1) {
                /* sin(x) of a number: the op itself, as arith_apply would apply it */
                Value a;
                if (!leaf_number(n->list[0], env, &a)) a = eval_expr(n->list[0], env);
                G->err.where.node = n;
                if (a.t == V_NUM) return num_op(n->cached_op, a, a);
                Value r = a.t == V_DUAL ? arith_num_op(n->cached_op, a, a) : eval_call_value(g, 1, &a);
                v_release(a);
                return r;
            }
        }
    }
    return eval_call_general(n, env);
}

/* Any other call: the arguments' array stays out of the fast path's frame. */
static __attribute__((noinline)) Value eval_call_general(Node *n, Env *env)
{
    Value f = eval_expr(n->a, env);
    if (n->n > MAX_ARGS) err_raise_at(n, "too many arguments (at most %d)", MAX_ARGS);
    Value args[MAX_ARGS];
    for (int i = 0; i < n->n; i++) args[i] = eval_expr(n->list[i], env);
    G->err.where.node = n;
    Value r;
    if (!offer_compiled(f, n->n, args, &r)) {
        r = eval_call_value(f, n->n, args);
        for (int i = 0; i < n->n; i++) v_release(args[i]);
    }
    v_release(f);
    return r;
}

/* ---------------------------------------------------------- expressions */

static Value literal(Node *n)
{
    if (G->num.backend == BK_F64) return num_val(n->num);
    if (n->cached_backend != G->num.backend) {
        n->cached_num = num_literal(n->text);
        n->cached_backend = G->num.backend;
    }
    return num_val(n->cached_num);
}

int eval_as_bool(Value v, Node *at, const char *what)
{
    if (v.t != V_BOOL) {
        const char *what_type = value_type_name(v);   /* before the release: a matrix is read */
        v_release(v);
        err_raise_at(at, "%s must be true or false, got %s", what, what_type);
    }
    return v.u.b;
}

static int values_equal(Value a, Value b)
{
    if (IS_NUMBER(a) && IS_NUMBER(b))
        return num_equal(v_primal(a), v_primal(b));
    if (a.t != b.t) return 0;
    switch (a.t) {
    case V_NIL: return 1;
    case V_BOOL: return a.u.b == b.u.b;
    case V_STR: return AS_STR(a)->len == AS_STR(b)->len && memcmp(AS_STR(a)->s, AS_STR(b)->s, (size_t)AS_STR(a)->len) == 0;
    case V_BUILTIN: return a.u.bi == b.u.bi;
    default: return a.u.o == b.u.o;
    }
}

static Value compare(Node *n, Value a, Value b)
{
    int op = n->op;
    if (op == OP2_EQ || op == OP2_NE) {
        if (is_seq(a) || is_seq(b)) err_raise_at(n, "cannot compare arrays with '%s'", op == OP2_EQ ? "==" : "!=");
        if (IS_NUMBER(a) && IS_NUMBER(b) && __builtin_expect(G->ckpt.mode == 1, 0))
            G->ckpt.near |= kink_near(v_primal(a), v_primal(b));   /* a checkpointed loop's run: ckpt.c */
        if (IS_NUMBER(a) && IS_NUMBER(b) && (v_innermost(&a)->id | v_innermost(&b)->id) && G->tape.recording)
            kink_note_branch(n, G->err.where.chunk, v_primal(a), v_primal(b), v_innermost(&a)->id, v_innermost(&b)->id);
        int eq = values_equal(a, b);
        return bool_val(op == OP2_EQ ? eq : !eq);
    }
    if (!IS_NUMBER(a) || !IS_NUMBER(b))
        err_raise_at(n, "cannot order %s and %s", value_type_name(a), value_type_name(b));
    double x = v_primal(a), y = v_primal(b);
    uint32_t ida = v_innermost(&a)->id, idb = v_innermost(&b)->id;
    if (__builtin_expect(G->ckpt.mode == 1, 0)) G->ckpt.near |= kink_near(x, y);   /* a checkpointed loop's run: ckpt.c */
    if ((ida | idb) && G->tape.recording) kink_note_branch(n, G->err.where.chunk, x, y, ida, idb);
    switch (op) {
    case OP2_LT: return bool_val(num_less(x, y));
    case OP2_LE: return bool_val(num_less(x, y) || num_equal(x, y));
    case OP2_GT: return bool_val(num_less(y, x));
    default:     return bool_val(num_less(y, x) || num_equal(x, y));
    }
}

static const int binop_code[] = {
    [OP2_ADD] = OP_ADD, [OP2_SUB] = OP_SUB, [OP2_MUL] = OP_MUL,
    [OP2_DIV] = OP_DIV, [OP2_MOD] = OP_MOD, [OP2_POW] = OP_POW,
};

__attribute__((noinline)) Value eval_index(Node *n, Env *env);

/* Whether n may be a tree fuse_tree computes in one pass: + - * / with
 * an operation under it (a leaf's value that is not a number brings
 * binop_t here, before anything is evaluated) */
static inline int fusable_root(const Node *n)
{
    return n->op <= OP2_DIV && (n->a->kind == N_BINOP || n->a->kind == N_NEG || n->b->kind == N_BINOP || n->b->kind == N_NEG);
}

/* eval_binop where b is no leaf: a tree with an array on the left in
 * one pass (fuse.c: ode's y + h / 2 * k1), else eval_binop */
Value eval_binop_tree(Node *n, Env *env)
{
    Value r;
    if (eval_fast_paths && fusable_root(n) && fuse_tree(n, env, &r)) return r;
    return eval_binop(n, env);
}

__attribute__((noinline)) Value eval_binop(Node *n, Env *env)
{
    /* element reads (a[i] * a[i] in element loops) straight to eval_index */
    Value a = n->a->kind == N_INDEX ? eval_index(n->a, env) : eval_expr(n->a, env);
    Value b = n->b->kind == N_INDEX ? eval_index(n->b, env) : eval_expr(n->b, env);
    if (a.t == V_NUM && b.t == V_NUM && n->op <= OP2_POW) {
        /* the common case: no allocation, no call */
        if (n->op == OP2_MOD) G->err.where.node = n;   /* a kink note names it */
        return num_op(binop_code[n->op], a, b);
    }
    return eval_binop_done(n, a, b);
}

/* a op b with a evaluated, an array or view (a subtree's or a call's
 * value), and b not yet: a op b in one pass when b is a tree
 * fuse_tree_left takes whole (th2 = r0 * r0 + r1 * r1 + r2 * r2 gets
 * r0 * r0 here, then each + in one pass: fuse.c), else eval_binop_done. */
Value eval_binop_left(Node *n, Value a, Env *env)
{
    Value r;
    if (eval_fast_paths && n->op <= OP2_DIV && (n->b->kind == N_BINOP || n->b->kind == N_NEG) && fuse_worth(a) &&
        fuse_tree_left(n, env, a, &r))
        return r;
    return eval_binop_done(n, a, eval_expr(n->b, env));
}

/* a op b with the operands evaluated (taken over). */
Value eval_binop_done(Node *n, Value a, Value b)
{
    if (a.t == V_NUM && b.t == V_NUM && n->op <= OP2_POW) {
        if (n->op == OP2_MOD) G->err.where.node = n;   /* a kink note names it */
        return num_op(binop_code[n->op], a, b);
    }
    G->err.where.node = n;
    Value r;
    if (n->op >= OP2_LT) r = compare(n, a, b);
    else if (IS_NUMBER(a) && IS_NUMBER(b)) r = arith_num_op(binop_code[n->op], a, b);   /* as arith_apply would */
    else r = arith_apply_last(binop_code[n->op], a, b);   /* a and b go next, unread: a temporary may take r */
    v_release(a);
    v_release(b);
    return r;
}

static Value eval_array(Node *n, Env *env)
{
    Value r = value_arr_new(n->n);
    for (int i = 0; i < n->n; i++) {
        Value v = eval_expr(n->list[i], env);
        if (!IS_NUMBER(v)) {
            if (i == 0 && is_seq(v)) {      /* [[1, 2], [3, 4]]: rows of a matrix */
                v_release(r);
                return mat_literal(n, env, v);
            }
            const char *what_type = value_type_name(v);   /* before the release: a matrix is read */
            v_release(v);
            v_release(r);
            err_raise_at(n->list[i], "array elements must be numbers, got %s", what_type);
        }
        AS_ARR(r)->v[i] = v;
    }
    return r;
}

/* The hot kinds are dispatched by eval_expr, which keeps its frame small
 * (every node goes through it); the rest are here. */
static __attribute__((noinline)) Value eval_expr_rest(Node *n, Env *env)
{
    switch (n->kind) {
    case N_NUM: return literal(n);
    case N_STR: return value_str_new(n->text, n->textlen);
    case N_TRUE: return bool_val(1);
    case N_FALSE: return bool_val(0);
    case N_NIL: return nil_val();
    case N_NAME: return read_var(n, env);
    case N_VERSION: return read_version(n, env);
    case N_BINOP: return eval_binop(n, env);
    case N_NEG: {
        Value a = eval_expr(n->a, env);
        if (a.t == V_NUM) return num_op(OP_NEG, a, a);
        G->err.where.node = n;
        Value r = arith_apply(OP_NEG, a, a);
        v_release(a);
        return r;
    }
    case N_NOT: return bool_val(!eval_as_bool(eval_expr(n->a, env), n->a, "the operand of 'not'"));
    case N_AND:
        if (!eval_as_bool(eval_expr(n->a, env), n->a, "the left operand of 'and'")) return bool_val(0);
        return bool_val(eval_as_bool(eval_expr(n->b, env), n->b, "the right operand of 'and'"));
    case N_OR:
        if (eval_as_bool(eval_expr(n->a, env), n->a, "the left operand of 'or'")) return bool_val(1);
        return bool_val(eval_as_bool(eval_expr(n->b, env), n->b, "the right operand of 'or'"));
    case N_CALL: return eval_call(n, env);
    case N_INDEX: return eval_index(n, env);
    case N_SLICE: return eval_slice(n, env);
    case N_ARRAY: return eval_array(n, env);
    case N_FN: return make_closure(n, env);
    case N_MATMUL: {
        Value a = eval_expr(n->a, env);
        Value b = eval_expr(n->b, env);
        G->err.where.node = n;
        Value r = mat_product(a, b);
        v_release(a);
        v_release(b);
        return r;
    }
    default:
        err_raise_at(n, "not an expression");
    }
}

/* The node's own evaluator, chosen once (threaded.c); the general one,
 * below, for every node it has no special one for. */
Value eval_expr(Node *n, Env *env) { return n->ev(n, env); }

Value eval_expr_switch(Node *n, Env *env)
{
    switch (n->kind) {
    case N_NUM:
        if (G->num.backend == BK_F64) return num_val(n->num);
        break;
    case N_NAME: {
        /* (a closure's captured number: read_var labels it only when it
         * is recorded and its frame keeps no versions) */
        Value v;
        if (leaf_number(n, env, &v)) return v;
        break;
    }
    case N_BINOP: return eval_binop(n, env);
    case N_CALL: return eval_call(n, env);
    case N_INDEX: return eval_index(n, env);
    case N_NEG: {
        Value a;
        if (leaf_number(n->a, env, &a)) return num_op(OP_NEG, a, a);
        break;
    }
    default: break;
    }
    return eval_expr_rest(n, env);
}

/* ----------------------------------------------------------- statements */

/* Between two statements outside any call, when the collector or
 * reclaiming is due (exec_stmts tests that inline, at every statement of
 * a top-level loop). */
__attribute__((noinline)) void eval_between_statements(void)
{
    if (G->eval.run_nesting == 0 && G->ckpt.mode != 2) gc_maybe_collect();
    /* not while a checkpointed loop runs or is recomputed: it holds ids
     * in C locals and in records not yet on the tape */
    if (!G->ckpt.mode && reclaim_due()) reclaim_maybe(reclaim_everything());
}

static void exec_assign(Node *n, Env *env);

/* A block's statements. Between two statements outside any call nothing
 * but the globals holds a value, so a top-level loop can let the collector
 * and reclaiming run as it goes (a loop runs its block body through this
 * directly, holding block_depth up for it). */
static inline int exec_stmts(Node *body, Env *env)
{
    for (int k = 0; k < body->n; k++) {
        Node *stmt = body->list[k];
        int code = exec(stmt, env);
        if (code != EXEC_NORMAL) return code;
        if (G->eval.run.call_depth == 0 && __builtin_expect(gc_due() || reclaim_due(), 0)) eval_between_statements();
    }
    return EXEC_NORMAL;
}

int eval_exec_block(Node *n, Env *env)
{
    G->eval.run.block_depth++;
    int code = exec_stmts(n, env);
    G->eval.run.block_depth--;
    return code;
}

int eval_at_top_level(void) { return G->eval.run.block_depth == 0 && G->eval.run.call_depth == 0; }
int eval_outside_calls(void) { return G->eval.run.call_depth == 0; }

/* Between iterations, entries recorded since the loop began that nothing
 * holds go (tapegc.h: anything an enclosing expression holds in a C local
 * was recorded before the loop began). */
/* Loops at the top level being run: each step's assignments to globals
 * stay on the tape as versions, so the tape limit's error says so. */

static const char *limit_hint(void)
{
    if (!G->eval.run.top_loops) return NULL;
    return "in a loop at the top level, which records every step: each value it assigns to a variable "
           "stays on the tape as a version (x@2, x@3, ...); run the loop inside a function, count with "
           "'for k in 0..n' (its counter is not recorded), put it in 'nograd { }' if no derivative of it "
           "is needed, or write 'checkpoint while' or 'checkpoint for'; or raise the limit with ':tape limit 4GB'";
}

static int while_steps(Node *n, Env *env);

static int exec_while(Node *n, Env *env)
{
    int top = !env && G->eval.run.call_depth == 0;
    G->eval.run.top_loops += top;
    int code = while_steps(n, env);
    G->eval.run.top_loops -= top;
    return code;
}

static int while_steps(Node *n, Env *env)
{
    LoopFloor floor = reclaim_loop_begin();
    for (;;) {
        err_check_interrupt();
        reclaim_loop_step(&floor);
        if (!eval_as_bool(eval_expr(n->a, env), n->a, "a while condition")) return EXEC_NORMAL;
        int code = exec(n->b, env);
        if (code == EXEC_BREAK) return EXEC_NORMAL;
        if (code == EXEC_RETURN) return code;
    }
}

double eval_range_bound(Node *e, Env *env);
static double range_bound(Node *e, Env *env) { return eval_range_bound(e, env); }

double eval_range_bound(Node *e, Env *env)
{
    Value v = eval_expr(e, env);
    if (!IS_NUMBER(v)) err_raise_at(e, "a range bound must be a number, got %s", value_type_name(v));
    double d = v_primal(v);
    v_release(v);
    if (d != floor(d)) err_raise_at(e, "a range bound must be a whole number, got %s", value_num_str(d));
    return d;
}

/* The loop variable is a plain counter: it is not a tape version. */
/* for v in a { }: v takes each element of a snapshot of a (writes to a
 * inside do not change what v sees), bound as `v = a[i]` would bind it. */
static __attribute__((noinline)) int exec_for_each(Node *n, Env *env)
{
    Value a = eval_expr(n->a, env);
    if (!is_seq(a)) {
        const char *what_type = value_type_name(a);   /* before the release: a matrix is read */
        v_release(a);
        err_raise_at(n->a, "for %s in ... needs an array, got %s\nnote: a range of numbers is written for %s in 0..n",
                    n->name, what_type, n->name);
    }
    Value snap = value_arr_copy(a);
    v_release(a);
    Node *body = n->list[0];
    int block = body->kind == N_BLOCK, code = EXEC_NORMAL, len = seq_len(snap);
    LoopFloor floor = reclaim_loop_begin();
    int top = !env && G->eval.run.call_depth == 0;
    G->eval.run.top_loops += top;
    if (block) G->eval.run.block_depth++;
    for (int i = 0; i < len; i++) {
        err_check_interrupt();
        reclaim_loop_step(&floor);
        Value e = *seq_at(snap, i);
        v_retain(e);
        G->err.where.node = n;
        eval_store_var(n->c, env, e);
        code = block ? exec_stmts(body, env) : exec(body, env);
        if (code == EXEC_BREAK || code == EXEC_RETURN) break;
    }
    if (block) G->eval.run.block_depth--;
    G->eval.run.top_loops -= top;
    v_release(snap);
    return code == EXEC_RETURN ? code : EXEC_NORMAL;
}

static int exec_for(Node *n, Env *env)
{
    if (!n->b) return exec_for_each(n, env);
    double lo = range_bound(n->a, env), hi = range_bound(n->b, env);
    Node *body = n->list[0];
    int block = body->kind == N_BLOCK, code = EXEC_NORMAL;
    Value *slot = var_slot(n->c, env, NULL);
    LoopFloor floor = reclaim_loop_begin();
    int top = !env && G->eval.run.call_depth == 0;
    G->eval.run.top_loops += top;
    if (block) G->eval.run.block_depth++;
    for (double i = lo; i < hi; i++) {
        err_check_interrupt();
        reclaim_loop_step(&floor);
        v_release(*slot);
        *slot = num_val(i);
        code = block ? exec_stmts(body, env) : exec(body, env);
        if (code == EXEC_BREAK || code == EXEC_RETURN) break;
        slot = var_slot(n->c, env, NULL);
    }
    if (block) G->eval.run.block_depth--;
    G->eval.run.top_loops -= top;
    return code == EXEC_RETURN ? code : EXEC_NORMAL;
}

static __attribute__((noinline)) void exec_assign(Node *n, Env *env)
{
    Value v = eval_expr(n->b, env);
    G->err.where.node = n;
    Node *t = n->a;
    if (eval_fast_paths && t->kind == N_NAME && t->ref == REF_LOCAL && !env->vers && (v.t == V_NUM || v.t == V_DUAL) && !in_nograd()) {
        /* eval_store_var's path for a number (or a dual: value_bind_copy keeps both as
         * they are) into a local without versions, here where v is still
         * in registers */
        Value *slot = &env->slots[t->slot];
        Value old = *slot;
        slot->t = v.t;
        slot->id = v.id;
        slot->u = v.u;
        v_release(old);
        return;
    }
    if (t->kind == N_NAME) eval_store_var(t, env, v);
    else eval_store_element(n->a, env, v);
}

/* a op= rhs over the len elements of the array or view *holder, when all
 * of them and rhs (a number or len of them) are plain float64 numbers that
 * record nothing: what the element loop of exec_compound computes (each
 * element num_apply's value, unrecorded), in a loop over doubles, one loop
 * an op. 0 if it does not apply (nothing written then). */
static inline int known_plain(int known, int rec) { return known == KNOWN_CONSTS || (known && !rec); }

/* rhs is a number or an array or view of len; with ix (the indices of a
 * gather, builtin_take_plain's) rhs is the array gathered from, and the
 * right side's element i is rhs's element ix[i]: take(rhs, ix) read where
 * it lies, without the temporary. */
static inline __attribute__((always_inline)) int compound_plain_at(int op, Value *holder, int holder_known, Value rhs, const Value *ix, int len)
{
    if (G->num.backend != BK_F64 || num_op_arity[op] != 2) return 0;
    int rec = G->tape.recording;
    Value *e = holder->t == V_ARR ? AS_ARR(*holder)->v : AS_VIEW(*holder)->s->v + AS_VIEW(*holder)->start;
    long se = holder->t == V_ARR ? 1 : AS_VIEW(*holder)->stride, sr = 0;
    const Value *r = &rhs;
    if (is_seq(rhs)) {
        r = rhs.t == V_ARR ? AS_ARR(rhs)->v : AS_VIEW(rhs)->s->v + AS_VIEW(rhs)->start;
        sr = rhs.t == V_ARR ? 1 : AS_VIEW(rhs)->stride;
    }
#define RHS_AT(i) (ix ? r[(long)ix[i].u.n] : r[(i) * sr])
    /* a recorded side's first element is mostly recorded: no scan to
     * find out (compound_whole's case) */
    if (rec && len > 0 && (e[0].id || RHS_AT(0).id)) return 0;
    /* numbers that record nothing on both sides: known of the storage
     * (before this write), or looked at */
    int other = 0;
    uint32_t ids = 0;
    if (!known_plain(holder_known, rec))
        for (int i = 0; i < len; i++) {
            other |= e[i * se].t != V_NUM;
            ids |= e[i * se].id;
        }
    if (sr == 0) {
        other |= r->t != V_NUM;
        ids |= r->id;
    } else if (!known_plain(storage_of(rhs)->known, rec))
        for (int i = 0; i < len; i++) {
            other |= RHS_AT(i).t != V_NUM;
            ids |= RHS_AT(i).id;
        }
#undef RHS_AT
    if (other || (ids && rec)) return 0;
    /* the loops for unit strides (and a number on the right) apart: the
     * compiler makes those tight. Ids already 0 (the target's storage
     * known constants, or recording, where any id turned it down above)
     * are not written again: a store an element less where the target is
     * a row being filled (ba's observations, ode's f) */
    int ids_zero = rec || holder_known == KNOWN_CONSTS;
#define COMPOUND_LOOP(expr) \
    if (ix && se == 1 && ids_zero) COMPOUND_GATHER(1, , expr) \
    else if (ix) COMPOUND_GATHER(se, x->id = 0;, expr) \
    else if (se == 1 && sr == 1 && ids_zero) COMPOUND_STRIDED(1, 1, , expr) \
    else if (se == 1 && sr == 1) COMPOUND_STRIDED(1, 1, x->id = 0;, expr) \
    else if (se == 1 && sr == 0) COMPOUND_STRIDED(1, 0, x->id = 0;, expr) \
    else COMPOUND_STRIDED(se, sr, x->id = 0;, expr)
#define COMPOUND_STRIDED(SE, SR, ZERO_ID, expr) \
    _Pragma("GCC unroll 4") for (int i = 0; i < len; i++) { Value *x = &e[i * (SE)]; double a = x->u.n, b = r[i * (SR)].u.n; x->u.n = (expr); ZERO_ID }
#define COMPOUND_GATHER(SE, ZERO_ID, expr) \
    _Pragma("GCC unroll 4") for (int i = 0; i < len; i++) { Value *x = &e[i * (SE)]; double a = x->u.n, b = r[(long)ix[i].u.n].u.n; x->u.n = (expr); ZERO_ID }
    switch (op) {
    case OP_ADD: COMPOUND_LOOP(a + b); break;
    case OP_SUB: COMPOUND_LOOP(a - b); break;
    case OP_MUL: COMPOUND_LOOP(a * b); break;
    case OP_DIV: COMPOUND_LOOP(a / b); break;
    default: COMPOUND_LOOP(num_apply_f64(op, a, b)); break;
    }
#undef COMPOUND_LOOP
#undef COMPOUND_STRIDED
#undef COMPOUND_GATHER
    return 1;
}

/* compound_plain_at without a gather (inlined: none of its tests of ix),
 * and with one (its own function: the loops over a gather apart) */
static inline int compound_plain(int op, Value *holder, int holder_known, Value rhs, int len)
{
    return compound_plain_at(op, holder, holder_known, rhs, NULL, len);
}
static __attribute__((noinline)) int compound_gather(int op, Value *holder, int holder_known, Value from, const Value *ix, int len)
{
    return compound_plain_at(op, holder, holder_known, from, ix, len);
}

/* The right side of `x op= take(a, idx)` when that take is a plain gather
 * (builtin_take_plain: it cannot fail): a and idx evaluated into g, 1;
 * exec_compound reads the gathered elements where they lie when it can,
 * or takes them (compound_taken). Any other right side, or a take that
 * is not plain (it may raise), evaluated into *rhs as eval_expr would
 * (the call's arguments in order, then the builtin): 0. */
static int compound_take_args(Node *b, Env *env, Value g[2], Value *rhs)
{
    Node *callee = b->a;
    if (!eval_fast_paths || b->kind != N_CALL || b->n != 2 || callee->kind != N_NAME || callee->ref != REF_GLOBAL ||
        G->eval.globals[callee->slot].v.t != V_BUILTIN || !builtin_is_take(G->eval.globals[callee->slot].v.u.bi)) {
        *rhs = eval_expr(b, env);
        return 0;
    }
    const Builtin *take = G->eval.globals[callee->slot].v.u.bi;   /* the callee before the arguments, as a call has it */
    g[0] = eval_expr(b->list[0], env);
    g[1] = eval_expr(b->list[1], env);
    if (builtin_take_plain(g[0], g[1])) return 1;
    G->err.where.node = b;
    *rhs = eval_call_value((Value){ .t = V_BUILTIN, .u.bi = take }, 2, g);
    v_release(g[0]);
    v_release(g[1]);
    return 0;
}

/* take(g[0], g[1]) of compound_take_args, taken now (it cannot fail);
 * g released. */
static Value compound_taken(Value g[2])
{
    Value r = builtin_take(g[0], g[1]);
    v_release(g[0]);
    v_release(g[1]);
    return r;
}

/* holder op rhs as one array operation (recorded as an array run where
 * its operands qualify: arrayrun.c), when recording and every element on
 * both sides is a plain number: the values the element loop of
 * exec_compound computes. A number (nothing made) otherwise. */
static Value compound_whole(int op, Value holder, Value rhs, int len)
{
    if (!eval_fast_paths || !G->tape.recording || in_nograd() || len < 2 || num_op_arity[op] != 2) return nil_val();
    Value sides[2] = { holder, rhs };
    for (int k = 0; k < 2; k++) {
        Value v = sides[k];
        if (!is_seq(v)) {
            if (v.t != V_NUM) return nil_val();
            continue;
        }
        if (seq_noheap(v)) continue;
        const Value *e = v.t == V_ARR ? AS_ARR(v)->v : AS_VIEW(v)->s->v + AS_VIEW(v)->start;
        long se = v.t == V_ARR ? 1 : AS_VIEW(v)->stride;
        int other = 0;
        for (int i = 0; i < len; i++) other |= e[i * se].t != V_NUM;
        if (other) return nil_val();
    }
    return arith_elementwise_flat(op, holder, rhs);
}

/* x op= e: on arrays and views it writes in place (through every alias);
 * on numbers it is x = x op e. */
static __attribute__((noinline)) void exec_compound(Node *n, Env *env)
{
    int op = binop_code[n->op];
    Value gather[2], rhs = nil_val();
    int gathering = compound_take_args(n->b, env, gather, &rhs);   /* rhs is take(gather[0], gather[1]) when it is */
    G->err.where.node = n;
    if (n->a->kind == N_INDEX) {
        if (gathering) rhs = compound_taken(gather);
        eval_store_general(n->a, env, rhs, op, NULL);
        return;
    }
    VerLog *log;
    Value *slot = var_slot(n->a, env, &log);
    if (slot->t == V_UNDEF) suggest_undefined(n->a, env);
    /* the gathered elements are read where they lie only when neither
     * they nor the indices are the target's (which the loop writes: a
     * reversed view of the indices would read indices it had overwritten),
     * the target is no matrix (an error or a row at a time), and they are
     * as many */
    if (gathering && (!is_seq(*slot) || storage_of(*slot) == AS_ARR(gather[0]) || storage_of(*slot) == AS_ARR(gather[1]) ||
                      is_mat(*slot) || seq_len(*slot) != AS_ARR(gather[1])->n)) {
        rhs = compound_taken(gather);
        gathering = 0;
    }
    if (is_seq(*slot)) {
        /* writable_seq, keeping what was known of the storage's elements
         * for the plain path below, which writes plain numbers only */
        arr_own(slot);
        Value *holder = slot;
        Storage *hs = storage_of(*holder);
        int known = hs->known;
        storage_dirty(hs);    /* a dual may land there */
        /* the right side is read as it was before the statement, even when
         * it aliases the target through a view (the same storage) */
        if (is_seq(rhs) && storage_of(rhs) == storage_of(*holder)) {
            Value c = value_arr_copy(rhs);
            v_release(rhs);
            rhs = c;
        }
        int len = seq_len(*holder);
        if (is_mat(*holder) || is_mat(rhs)) rhs = mat_compound_rhs(n, op, *holder, rhs);
        if (is_seq(rhs) && seq_len(rhs) != len)
            err_raise_at(n, "length mismatch: %d and %d elements", len, seq_len(rhs));
        /* every element written is a place, also through a view; an
         * array's own snapshot below labels its elements itself */
        int places = G->tape.recording && !ckpt_store(env, n->a), snap = places && log && holder->t == V_ARR;
        int const_places = places && !snap && unrecorded_write_is_place(holder, log);
        int plain = !const_places && __builtin_expect(eval_fast_paths, 1) && (gathering ? compound_gather(op, holder, known, gather[0], AS_ARR(gather[1])->v, len)
                                                : compound_plain(op, holder, known, rhs, len));
        if (gathering) {
            if (!plain) rhs = builtin_take(gather[0], gather[1]);
            v_release(gather[0]);
            v_release(gather[1]);
        }
        if (plain) hs->known = holder->t == V_ARR ? KNOWN_CONSTS : known == KNOWN_CONSTS ? known : 0;
        Value whole = plain ? nil_val() : compound_whole(op, *holder, rhs, len);
        int from = 0;       /* the loop below's first element */
        if (whole.t == V_ARR && !in_nograd()) {
            /* the whole operation's numbers (compound_whole: numbers on
             * both sides, so numbers in and out) moved into the holder's
             * elements, each a place as below: the loop below's work
             * without its per-element tests */
            Value *w = AS_ARR(whole)->v, *e = holder->t == V_ARR ? AS_ARR(*holder)->v : AS_VIEW(*holder)->s->v + AS_VIEW(*holder)->start;
            long se = holder->t == V_ARR ? 1 : AS_VIEW(*holder)->stride;
            int label = places && !snap;
            for (; from < len && w[from].t == V_NUM && e[from * se].t == V_NUM; from++) {
                Value r = w[from];
                w[from] = num_val(0);
                if (label && r.id && !tape_labeled(r.id)) rec_label(r.id);
                else if (label && (r.id || const_places)) version_label_number(&r);
                e[from * se] = r;
            }
        }
        for (int i = from; i < len && !plain; i++) {
            Value *e = seq_at(*holder, i);
            Value r;
            if (whole.t == V_ARR) {
                r = AS_ARR(whole)->v[i];      /* moved out: whole's storage is freed without them */
                AS_ARR(whole)->v[i] = num_val(0);
            } else
                r = arith_apply(op, *e, is_seq(rhs) ? *seq_at(rhs, i) : rhs);
            check_number(r, n);
            if (in_nograd()) r = detached(r);
            if (places && !snap && (r.t != V_NUM || r.id || const_places)) version_label_place(&r);
            v_release(*e);
            *e = r;
        }
        if (log && (!ckpt_store(env, n->a) || G->ckpt.mode == 1)) version_count_as(log, holder);
        if (in_nograd() && !ckpt_store(env, n->a)) note_nograd_write(n->a, env, log);
        uint64_t logged = G->versions.ids_logged;
        if (snap) version_array(log, AS_ARR(*holder));
        if (n->a->ref == REF_GLOBAL) G->reclaim.global_versions += G->versions.ids_logged - logged;
        if (holder->t == V_VIEW) version_owner(AS_VIEW(*holder), 0, len);
        v_release(whole);
        v_release(rhs);
        return;
    }
    Value r = arith_apply(op, *slot, rhs);
    v_release(rhs);
    eval_store_var(n->a, env, r);
}

static void echo_value(Value v)
{
    if (v.t == V_NIL || v.t == V_UNDEF) return;
    io_value(IO_OUT, v, 1);
    io_putc(IO_OUT, '\n');
}

/* A top-level expression's value (not nil) is assigned to `ans`, as
 * `ans = value` would be: a new version, so d(ans, x) works. */
static void store_ans(Value v)
{
    int slot = G->eval.ans_slot;
    if (v.t == V_NIL || v.t == V_UNDEF) return;
    /* the cached slot is checked: a front end may forget globals (the fuzzer) */
    if (slot < 0 || slot >= G->eval.nglobals || strcmp(G->eval.globals[slot].name, "ans") != 0) slot = G->eval.ans_slot = eval_global_index("ans");
    Node target = { .kind = N_NAME, .ref = REF_GLOBAL, .slot = slot, .name = "ans" };
    v_retain(v);
    eval_store_var(&target, NULL, v);
}

/* The general statement runner: threaded.c's default. */
int eval_exec_switch(Node *n, Env *env)
{
    G->err.where.node = n;
    switch (n->kind) {
    case N_EXPR: {
        Value v = eval_expr(n->a, env);
        if (!env && G->eval.run.block_depth == 0) {
            if (G->eval.echo) echo_value(v);
            if (G->eval.run_nesting == 0) store_ans(v);     /* not in :load or :time */
        }
        v_release(v);
        return EXEC_NORMAL;
    }
    case N_ASSIGN: exec_assign(n, env); return EXEC_NORMAL;
    case N_COMPOUND: exec_compound(n, env); return EXEC_NORMAL;
    case N_IF: {
        /* an arm that is a block runs here, not through another exec */
        Node *arm = eval_as_bool(eval_expr(n->a, env), n->a, "an if condition") ? n->b : n->c;
        if (!arm) return EXEC_NORMAL;
        if (arm->kind == N_BLOCK) {
            G->err.where.node = arm;
            return eval_exec_block(arm, env);
        }
        return exec(arm, env);
    }
    case N_WHILE: return exec_while(n, env);
    case N_FOR: return exec_for(n, env);
    case N_BREAK: return EXEC_BREAK;
    case N_CONTINUE: return EXEC_CONTINUE;
    case N_RETURN:
        if (!env) err_raise_at(n, "'return' outside a function");
        if (G->ckpt.mode && env == G->ckpt.env)
            err_raise_at(n, "'return' inside a checkpointed loop: 'break' out of it, then return");
        G->eval.run.ret_value = n->a ? eval_expr(n->a, env) : nil_val();
        return EXEC_RETURN;
    case N_BLOCK: return eval_exec_block(n, env);
    case N_NOGRAD: return exec_nograd(n, env);
    case N_CKPT: return ckpt_exec(n, env);
    case N_COMMAND:
        if (G->ckpt.mode == 2) return EXEC_NORMAL;      /* recomputation runs no commands */
        if (!G->eval.command) err_raise_at(n, "':' commands are not available here");
        G->eval.command(n->text);
        return EXEC_NORMAL;
    default:
        return EXEC_NORMAL;
    }
}

/* ------------------------------------------------------------ top level */


/* The collector may run between the outermost chunk's statements only:
 * there, nothing but the globals holds a value. */
static void run_top(void *ud)
{
    Chunk *c = ud;
    Node *root = c->root;
    if (G->eval.lazy_pending) G->eval.lazy_load();     /* the library functions it names */
    for (int i = 0; i < root->n; i++) {
        G->err.where.chunk = c;
        if (G->eval.run_nesting == 0 && G->eval.run.call_depth == 0) kink_statement();
        StatementMark made = reclaim_statement_begin();
        int code = exec(root->list[i], NULL);
        if (code == EXEC_BREAK || code == EXEC_CONTINUE)
            err_raise_at(root->list[i], "'%s' outside a loop", code == EXEC_BREAK ? "break" : "continue");
        if (G->eval.run_nesting == 0 && G->eval.run.call_depth == 0) gc_maybe_collect();
        /* reclaiming needs only that no call holds numbers in C variables:
         * a :load or :time inside a block at the top level is fine */
        if (G->eval.run.call_depth == 0 && !G->ckpt.mode) {     /* (see eval_exec_block) */
            reclaim_statement_end(&made);
            reclaim_maybe(reclaim_everything());
        }
        if (G->eval.quit) return;
    }
}

/* Chunks run inside a running chunk (:load, :time). They are owned here
 * so that an error unwinding past them still frees them. */

void eval_run_chunk(Chunk *c)
{
    if (G->eval.run_nesting >= MAX_NESTED_RUNS) {
        ast_chunk_release(c);
        err_raise("':load' and ':time' nested too deeply (files loading each other?)");
    }
    ErrWhere where = G->err.where;
    G->eval.nested_runs[G->eval.run_nesting++] = c;
    run_top(c);
    G->eval.nested_runs[--G->eval.run_nesting] = NULL;
    ast_chunk_release(c);
    G->err.where = where;
}

static void release_nested_runs(void)
{
    while (G->eval.run_nesting > 0) {
        ast_chunk_release(G->eval.nested_runs[--G->eval.run_nesting]);
        G->eval.nested_runs[G->eval.run_nesting] = NULL;
    }
}

/* After an error or Ctrl-C, what the abandoned statement recorded and
 * nothing holds goes at once: nothing else would reach it (the next
 * statement's passes stop at their floors), and an interrupted grad of a
 * long function left hundreds of MB that made the next one reach the
 * limit. */
static void reclaim_abandoned(void *ud)
{
    (void)ud;
    reclaim_now(reclaim_everything());
}

/* What each subsystem left unfinished when an error unwound: grad calls,
 * checkpointed loops (their variables put back), sweeps, a capture. */
static void abandon_all(void)
{
    G->ad.nesting = 0;
    jac_abandon();
    ckpt_abandon();
    sweep_abandon();
    io_capture_drop();
    release_nested_runs();
}

int eval_chunk(Chunk *c)
{
    uint64_t recorded = tape_size() + G->tape.reclaimed;
    EvalRun run = G->eval.run;        /* put back whole after an error */
    int recording = G->tape.recording, nograds = G->eval.n_nograd_writes, depth = run.call_depth;
    ErrWhere where = G->err.where;
    int jvps = dual_depth();
    int err = err_pcall(run_top, c);
    G->err.where = where;
    if (err) {
        dual_unwind(jvps);
        abandon_all();
        G->eval.run = run;
        G->eval.run.top_loops = 0;
        G->eval.run.ret_value = nil_val();
        rec_restore(recording);
        /* a nograd block the error left ends here: what it had assigned
         * becomes places, unless this chunk runs inside a block that goes on */
        if (recording && G->eval.n_nograd_writes > nograds && err_pcall(settle_protected, &nograds))
            drop_nograd_writes(nograds);
        gc_collect();
        /* (not after running out of memory: a pass needs some) */
        const char *why = err_last()->message;
        if (depth == 0 && tape_size() + G->tape.reclaimed > recorded && !G->tape.busy && !(why && strstr(why, "out of memory")))
            err_pcall(reclaim_abandoned, NULL);
    }
    return err;
}

int eval_exec(Node *n, Env *env) { return exec(n, env); }
Value *eval_var_slot(Node *n, Env *env, VerLog **ver) { return var_slot(n, env, ver); }
int eval_condition(Node *e, Env *env, const char *what) { return eval_as_bool(eval_expr(e, env), e, what); }

void eval_init(void)
{
    ckpt_init();
    gc_set_roots(eval_visit_roots);
    reclaim_set_roots(eval_root_ids);
    G->tape.limit_hint = limit_hint;
    tape_init();
    builtin_register();
}

void eval_reset(void)
{
    for (int i = 0; i < G->eval.nglobals; i++) {
        Value old = G->eval.globals[i].v;
        G->eval.globals[i].v.t = V_UNDEF;
        v_release(old);
        version_log_free(&G->eval.globals[i].ver);
        memset(&G->eval.globals[i].ver, 0, sizeof(VerLog));
    }
    gc_collect();
    G->tape.limit = 0;
    tape_init();
    sweep_forget();
    G->ckpt.steps_run = G->ckpt.steps_recomputed = 0;     /* :tape stats counts from here */
    jac_forget();                                         /* and so do the sparse passes */
    G->num.backend = G->num.start_backend;
    builtin_register();
}
