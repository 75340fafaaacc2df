/* value.c: heap objects, copies with value semantics, and printing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "value.h"
#include "num.h"
#include "valuegc.h"
#include "error.h"
#include "versions.h"
#include "matrix.h"
#include "state.h"
#include "dual.h"

void *value_obj_new(VType t, size_t size)
{
    Obj *o = err_malloc(size);
    memset(o, 0, size);
    o->type = (uint8_t)t;
    o->rc = 1;
    gc_link(o);
    return o;
}

Value value_str_new(const char *s, int len)
{
    Str *o = value_obj_new(V_STR, sizeof(Str) + (size_t)len + 1);
    o->len = len;
    memcpy(o->s, s, (size_t)len);
    o->s[len] = 0;
    return obj_val(V_STR, o);
}

/* Storage for n elements the caller fills at once: the header and the
 * elements in one allocation (big blocks are faulted in first, in one
 * call: error.h). */
static size_t storage_bytes(int n) { return sizeof(Storage) + sizeof(Value) * (size_t)(n ? n : 1); }

/* A spare storage of n elements (the newest), taken off the list; NULL if none. */
static Storage *spare_storage(int n)
{
    ValueState *V = &G->value;
    for (int k = V->nspare_st - 1; k >= 0; k--) {
        Storage *s = V->spare_st[k];
        if (s->n != n) continue;
        V->spare_st[k] = V->spare_st[--V->nspare_st];
        V->spare_st_bytes -= storage_bytes(n);
        return s;
    }
    return NULL;
}

/* Frees the oldest spare storages until one of bytes more fits (the
 * list full, or its bytes): keep_spare_storage's rare case, apart so that
 * its common one saves no registers and calls nothing. */
static __attribute__((noinline, cold)) void make_room_for_spare(size_t bytes)
{
    ValueState *V = &G->value;
    while (V->nspare_st && (V->nspare_st == STORAGE_SPARE || V->spare_st_bytes + bytes > STORAGE_SPARE_BYTES)) {
        Storage *old = V->spare_st[0];     /* the oldest goes */
        V->spare_st_bytes -= storage_bytes(old->n);
        memmove(V->spare_st, V->spare_st + 1, sizeof(Storage *) * (size_t)--V->nspare_st);
        free(old);
    }
}

/* Keeps freed storage s (its elements released, unlinked) for the next
 * array of its size; 0 if it is not kept (the caller frees it). Inlined
 * in value_obj_free: an array op's result freed a step later (lstm's
 * rows of 7, a dozen a step) pays no call for it. */
static inline __attribute__((always_inline)) int keep_spare_storage(Storage *s)
{
    ValueState *V = &G->value;
    size_t bytes = storage_bytes(s->n);
    if (!STORAGE_SPARE || s->n < STORAGE_SPARE_MIN || bytes > STORAGE_SPARE_ONE) return 0;
    if (V->nspare_st == STORAGE_SPARE || V->spare_st_bytes + bytes > STORAGE_SPARE_BYTES) make_room_for_spare(bytes);
    V->spare_st[V->nspare_st++] = s;
    V->spare_st_bytes += bytes;
    return 1;
}

Storage *value_storage_unfilled(int n)
{
    size_t bytes = sizeof(Value) * (size_t)(n ? n : 1);
    Storage *s = n >= STORAGE_SPARE_MIN && G->value.nspare_st ? spare_storage(n) : NULL;
    int spare = s != NULL;     /* a spare's pages are in memory already */
    if (!s) s = err_malloc(sizeof(Storage) + bytes);
    memset(s, 0, sizeof(Storage));
    s->h.type = V_ARR;
    s->h.rc = 1;
    gc_link_inline(&s->h);
    s->v = (Value *)(s + 1);
    s->n = n;
    s->plain_n = n;
    if (!spare && bytes >= WG_PREFAULT_BYTES) err_prefault(s->v, bytes);
    return s;
}

/* n zeros, an element one 16-byte store (num_val(0)'s bytes; not two
 * 8-byte stores and a compare an element: mat_product's and zeros()'
 * results, a gmm jacobian makes a thousand of them) */
void value_zeros(Value *to, int n)
{
    typedef uint64_t words __attribute__((vector_size(16), aligned(8), may_alias));
    Value zero = num_val(0);
    words w, *v = (words *)(void *)to;
    memcpy(&w, &zero, sizeof w);
    _Pragma("GCC unroll 4")
    for (int i = 0; i < n; i++) v[i] = w;
}

Storage *value_storage_new(int n)
{
    Storage *s = value_storage_unfilled(n);
    value_zeros(s->v, n);
    return s;
}

Value value_arr_new(int n) { return obj_val(V_ARR, value_storage_new(n)); }

/* A new view: a spare one (value_obj_free keeps them) made live again as
 * value_obj_new would make it, else value_obj_new's. */
static View *view_alloc(void)
{
    ValueState *V = &G->value;
    if (!V->nspare_views) return value_obj_new(V_VIEW, sizeof(View));
    View *v = V->spare_views[--V->nspare_views];
    memset(v, 0, sizeof(View));
    v->h.type = V_VIEW;
    v->h.rc = 1;
    gc_link_inline(&v->h);
    return v;
}

Value value_view_new(Storage *s, int start, int len, int stride)
{
    View *v = view_alloc();
    s->h.rc++;
    s->aliased = 1;
    s->views++;
    v->s = s;
    v->start = start;
    v->len = len;
    v->stride = stride;
    v->home = NULL;
    v->owner = -1;
    return obj_val(V_VIEW, v);
}

/* Forward mode makes and drops a dual per operation: freed duals wait in a
 * short list for the next one instead of going back to malloc. */

Value value_dual_new(uint32_t tag, Value p, Value t)
{
    Dual *d = dual_alloc(tag, 1);
    d->p = p;
    d->t[0] = t;
    dual_finish(d);
    return obj_val(V_DUAL, d);
}

Dual *dual_alloc(uint32_t tag, int k)
{
    Dual *d = dual_alloc_spare(tag, k, 1);
    if (d) return d;
    d = value_obj_new(V_DUAL, dual_bytes(k, 1));
    d->tag = tag;
    d->k = (uint16_t)k;
    d->form = DUAL_WIDE;
    return d;
}

/* No spare unboxed dual of k waits: a slab of them, all spares but the
 * one returned (0 when the slabs' budget is spent or k is beyond the
 * spare lists). */
static __attribute__((noinline)) Dual *dual_slab_carve(uint32_t tag, int k)
{
    ValueState *vs = &G->value;
    size_t one = dual_bytes(k, 0);          /* a multiple of 8: Dual is, and k doubles */
    size_t m = DUAL_SLAB_ONE / one;
    if (k > DUAL_KMAX || m < 2 || vs->slab_bytes + m * one > DUAL_SLAB_BYTES) return NULL;
    char *slab = err_malloc(m * one);
    vs->slab_bytes += m * one;
    for (size_t i = 0; i < m; i++) {
        Dual *d = (Dual *)(void *)(slab + i * one);
        memset(&d->h, 0, sizeof d->h);
        d->h.type = V_DUAL;
        d->k = (uint16_t)k;
        d->form = DUAL_SLAB | DUAL_UNBOXED;
        dual_spare_put(d);
    }
    return dual_alloc_spare(tag, k, 0);
}

Dual *dual_alloc_unboxed(uint32_t tag, int k)
{
    Dual *d = dual_alloc_spare(tag, k, 0);
    if (!d && eval_fast_paths) d = dual_slab_carve(tag, k);
    if (!d) {
        d = value_obj_new(V_DUAL, dual_bytes(k, 0));
        d->tag = tag;
        d->k = (uint16_t)k;
        d->form = DUAL_UNBOXED;
    }
    d->plain = 1;
    return d;
}

void value_envcell_release(EnvCell *c)
{
    if (c && --c->rc == 0) free(c);
}


Env *value_env_new(FnInfo *fn, Env *parent, int n)
{
    size_t size = sizeof(Env) + sizeof(Value) * (size_t)n;
    Env *e;
    if (n <= ENV_SPARE_SLOTS && G->value.nspare_envs[n]) {    /* a spare frame of n slots */
        e = G->value.spare_envs[n][--G->value.nspare_envs[n]];
        memset(e, 0, size);
        e->h.type = V_ENV;
        e->h.rc = 1;
        gc_link(&e->h);
    } else
        e = value_obj_new(V_ENV, size);
    e->fn = fn;
    e->parent = parent;
    if (parent) parent->h.rc++;
    e->n = n;
    e->born = ++G->value.env_made;
    return e;
}

/* A frame kept by closures in its own slots (a recursive local function,
 * det's minor: `minor = fn(m) { ... minor(m - 1) ... }`) is a cycle that
 * counting never frees: it waited for the collector, with all it held
 * (arrays, tape entries). When the call ends and nothing else holds the
 * frame (every reference but the call's is such a closure, held by that
 * slot alone), those slots are cleared, which ends the cycle, and the frame
 * goes now. Otherwise (a closure returned or stored elsewhere, a view,
 * a checkpointed loop's record) the call's reference is dropped as any. */
void value_frame_drop_slow(Env *e)
{
    if (e->h.rc > 1) {
        uint32_t own = 0;
        for (int i = 0; i < e->n; i++) {
            Value v = e->slots[i];
            own += v.t == V_FN && AS_FN(v)->env == e && AS_FN(v)->h.rc == 1;
        }
        if (own && own == e->h.rc - 1)
            for (int i = 0; i < e->n; i++) {
                Value v = e->slots[i];
                if (v.t == V_FN && AS_FN(v)->env == e && AS_FN(v)->h.rc == 1) {
                    e->slots[i] = (Value){ 0 };
                    v_release(v);       /* the closure goes, and its reference to e */
                }
            }
    }
    v_release(obj_val(V_ENV, e));
}

/* Release what o holds, then o itself. */
void value_obj_free(Obj *o)
{
    if (o->type == V_DUAL && ((Dual *)o)->plain) {    /* forward mode's common case: nothing to release */
        gc_unlink_inline(o);
        dual_spare_put((Dual *)o);
        return;
    }
    switch (o->type) {
    case V_ARR: {
        Storage *s = (Storage *)o;
        value_known_check(s);
        if (!(s->known & KNOWN_NOHEAP))
            for (int i = 0; i < s->n; i++) v_release(s->v[i]);
        gc_unlink_inline(o);
        if (!keep_spare_storage(s)) free(o);    /* the elements go with the header */
        return;
    }
    case V_VIEW: {
        Storage *s = ((View *)o)->s;
        s->views--;
        if (--s->h.rc == 0) value_obj_free(&s->h);
        value_envcell_release(((View *)o)->home);
        gc_unlink(o);
        if (G->value.nspare_views < VIEW_SPARE) G->value.spare_views[G->value.nspare_views++] = (View *)o;   /* view_alloc's */
        else free(o);
        return;
    }
    case V_FN: {
        Closure *c = (Closure *)o;
        if (c->env && --c->env->h.rc == 0) value_obj_free(&c->env->h);
        v_release(c->target);
        if (c->fn) ast_chunk_release(c->fn->chunk);
        break;
    }
    case V_DUAL: {
        Dual *d = (Dual *)o;
        gc_unlink_inline(o);
        v_release(d->p);
        if (!(d->form & DUAL_UNBOXED))
            for (int j = 0; j < d->k; j++) v_release(d->t[j]);
        dual_spare_put(d);
        return;
    }
    case V_ENV: {
        Env *e = (Env *)o;
        if (e->cell) {
            e->cell->env = NULL;
            value_envcell_release(e->cell);
        }
        for (int i = 0; i < e->n; i++) {     /* a spare frame's slots are cleared (value_frame_new) */
            Value v = e->slots[i];
            memset(&e->slots[i], 0, sizeof(Value));
            v_release(v);
        }
        if (e->vers) {
            for (int i = 0; i < e->n; i++) version_log_free(&e->vers[i]);
            free(e->vers);
        }
        Env *parent = e->parent;
        gc_unlink(o);
        if (e->n <= ENV_SPARE_SLOTS && G->value.nspare_envs[e->n] < ENV_SPARE)
            G->value.spare_envs[e->n][G->value.nspare_envs[e->n]++] = e;     /* for the next call */
        else
            free(o);
        if (parent && --parent->h.rc == 0) value_obj_free(&parent->h);
        return;
    }
    default:
        break;
    }
    gc_unlink(o);
    free(o);
}

#ifdef __SANITIZE_ADDRESS__
void value_known_check(const Storage *s)
{
    if (!s->known) return;
    for (int i = 0; i < s->n; i++)
        if (s->v[i].t != V_NUM || (s->known == KNOWN_CONSTS && s->v[i].id)) {
            fprintf(stderr, "internal error: storage known as %d holds a %s of id %u at %d\n", s->known,
                    value_type_name(s->v[i]), s->v[i].id, i);
            abort();
        }
    /* Storage.fresh, where the first and last ids vouch for it (its
     * readers' test): every id between is the run's */
    uint32_t f = s->fresh, n = (uint32_t)s->n;
    if (f && n && s->v[0].id == f && s->v[n - 1].id == f + n - 1)
        for (uint32_t i = 0; i < n; i++)
            if (s->v[i].id != f + i) {
                fprintf(stderr, "internal error: storage fresh from %u holds id %u at %u\n", f, s->v[i].id, i);
                abort();
            }
}
#endif

void value_seq_check_numbers(Value v, const char *what)
{
    Storage *st = storage_of(v);
    value_known_check(st);
    if (st->known & KNOWN_NOHEAP) return;      /* strings are heap objects */
    int n = seq_len(v), nums = 1;
    for (int i = 0; i < n; i++) {
        const Value *e = seq_at(v, i);
        if (e->t == V_STR)
            err_raise("%s needs numbers, but element %d of the array is a string (num(s) reads one)", what, i);
        nums &= e->t == V_NUM;
    }
    if (nums && v.t == V_ARR) st->known |= KNOWN_NOHEAP;   /* learnt: writers of duals clear it */
}

/* A fresh unaliased array with v's elements: a block copy when none is a
 * heap object. */
Value value_arr_copy(Value v)
{
    int n = seq_len(v);
    Storage *s = value_storage_unfilled(n), *from = storage_of(v);
    value_known_check(from);
    const Value *src = v.t == V_ARR ? from->v : from->v + AS_VIEW(v)->start;
    long stride = v.t == V_ARR ? 1 : AS_VIEW(v)->stride;
    if (from->known & KNOWN_NOHEAP) {
        if (stride == 1) memcpy(s->v, src, sizeof(Value) * (size_t)n);
        else for (int i = 0; i < n; i++) s->v[i] = src[i * stride];
        s->known = from->known;
    } else {
        /* copied first, then looked at in a loop without branches; the
         * heap objects among them (rarely any) retained after */
        if (stride == 1) memcpy(s->v, src, sizeof(Value) * (size_t)n);
        else for (int i = 0; i < n; i++) s->v[i] = src[i * stride];
        int other = 0;
        uint32_t ids = 0;
        for (int i = 0; i < n; i++) {
            other |= s->v[i].t != V_NUM;
            ids |= s->v[i].id;
        }
        if (other)
            for (int i = 0; i < n; i++) v_retain(s->v[i]);
        s->known = other ? 0 : ids ? KNOWN_NOHEAP : KNOWN_CONSTS;
        if (v.t == V_ARR) from->known = s->known;    /* learnt */
    }
    /* the same ids in the same places: an array run's elements are still
     * one (Storage.fresh), so arrayrun.c needs no scan to see it (lstm's
     * views of theta, copied by arr_own: 4 scans a step) */
    if (stride == 1 && from->fresh) s->fresh = from->fresh + (uint32_t)(src - from->v);
    if (v.t == V_ARR) storage_shape_like(s, AS_ARR(v));
    return obj_val(V_ARR, s);
}

/* Whether aliased storage s, no view of which is alive, may be bound as
 * it is, shared copy-on-write with its other holders (made unaliased):
 * those are values, which copy before they write (arr_own; version_bind
 * too before it labels the elements), and no view remains to write
 * through. Not while a checkpointed loop runs or is recomputed: its saved
 * states and read-only arrays are written back in place when aliased, and
 * its analysis read the flag. GradBench's ba: parameters() returns q, its
 * views gone, still held by the call's argument when it is bound. */
static int unviewed_may_share(const Storage *s)
{
    return eval_fast_paths && s->views == 0 && !G->ckpt.running && !G->ckpt.recomps;
}

Value value_bind_copy(Value v)
{
    if (v.t == V_ARR && AS_ARR(v)->aliased && (AS_ARR(v)->h.rc == 1 || unviewed_may_share(AS_ARR(v)))) {
        /* v holds the storage alone: the views it had (each holds it) are
         * gone, so it aliases nothing any more (an array a function wrote
         * through a view of its own and returned); or its views are gone
         * and its other holders copy before they write */
        AS_ARR(v)->aliased = 0;
        return v;
    }
    if (v.t == V_ARR && AS_ARR(v)->aliased) {
        Value c = value_arr_copy(v);
        v_release(v);
        return c;
    }
    return v;
}

const char *value_type_name(Value v)
{
    switch (v.t) {
    case V_NIL: return "nil";
    case V_BOOL: return "boolean";
    case V_NUM: case V_DUAL: return "number";
    case V_STR: return "string";
    case V_ARR: return is_mat(v) ? "matrix" : "array";
    case V_VIEW: return "view";
    case V_FN: case V_BUILTIN: return "function";
    default: return "undefined";
    }
}

/* A number as print shows it, for error messages (a few at a time). */
const char *value_num_str(double x)
{
    char *b = G->value.num_bufs[G->value.num_next++ & 3];
    num_format(x, b, 64);
    return b;
}

void value_print(Value v, void *file)
{
    FILE *f = file;
    char buf[256];
    switch (v.t) {
    case V_NIL: fputs("nil", f); break;
    case V_BOOL: fputs(v.u.b ? "true" : "false", f); break;
    case V_NUM: case V_DUAL:
        err_check_interrupt();   /* a long listing stops on Ctrl-C (and counts as work for the fuzzer's step budget) */
        num_format(v_primal(v), buf, sizeof buf);
        fputs(buf, f);
        break;
    case V_STR: fwrite(AS_STR(v)->s, 1, (size_t)AS_STR(v)->len, f); break;
    case V_ARR: case V_VIEW: {
        if (is_mat(v)) {
            mat_print(v, f, 0);
            break;
        }
        int n = seq_len(v);
        fputc('[', f);
        for (int i = 0; i < n; i++) {
            if (i) fputs(", ", f);
            Value e = *seq_at(v, i);
            if (e.t == V_STR) fputc('"', f);     /* args: strings in an array are quoted */
            value_print(e, f);
            if (e.t == V_STR) fputc('"', f);
        }
        fputc(']', f);
        break;
    }
    case V_FN: {
        Closure *c = AS_FN(v);
        const char *name = c->fn ? c->fn->name : c->label;
        if (name) fprintf(f, "<fn %s>", name);
        else fputs("<fn>", f);
        break;
    }
    case V_BUILTIN: fprintf(f, "<fn %s>", v.u.bi->name); break;
    default: fputs("<undefined>", f); break;
    }
}

/* At the prompt and in :vars a long array shows its ends and its length;
 * print() writes every element. */
#define BRIEF_MAX 100
#define BRIEF_ENDS 3

void value_print_brief(Value v, void *file)
{
    FILE *f = file;
    int n = (v.t == V_ARR || v.t == V_VIEW) ? seq_len(v) : 0;
    if (n > BRIEF_MAX && is_mat(v)) {
        mat_print(v, f, 1);
        return;
    }
    if (n <= BRIEF_MAX) {
        value_print(v, f);
        return;
    }
    fputc('[', f);
    for (int i = 0; i < BRIEF_ENDS; i++) {
        value_print(*seq_at(v, i), f);
        fputs(", ", f);
    }
    fputs("...", f);
    for (int i = n - BRIEF_ENDS; i < n; i++) {
        fputs(", ", f);
        value_print(*seq_at(v, i), f);
    }
    fprintf(f, "] (%d elements)", n);
}

void value_frame_clear_slots(Value *s, int n)
{
    for (int i = 0; i < n; i++) {
        Value v = s[i];
        memset(&s[i], 0, sizeof *s);
        v_release(v);
    }
}
