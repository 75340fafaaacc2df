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

/* Storage for n elements the caller fills at once (big blocks are
 * faulted in first, in one call: error.h). */
static Storage *storage_unfilled(int n)
{
    Storage *s = value_obj_new(V_ARR, sizeof(Storage));
    size_t bytes = sizeof(Value) * (size_t)(n ? n : 1);
    s->v = err_malloc(bytes);
    s->n = n;
    s->plain_n = n;
    if (bytes >= WG_PREFAULT_BYTES) err_prefault(s->v, bytes);
    return s;
}

Storage *value_storage_new(int n)
{
    Storage *s = storage_unfilled(n);
    for (int i = 0; i < n; i++) s->v[i] = num_val(0);
    return s;
}

Value value_arr_new(int n) { return obj_val(V_ARR, value_storage_new(n)); }

Value value_view_new(Storage *s, int start, int len, int stride)
{
    View *v = value_obj_new(V_VIEW, sizeof(View));
    s->h.rc++;
    s->aliased = 1;
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
    d->plain = (uint16_t)(dual_part_plain(p) & dual_part_plain(t));
    return obj_val(V_DUAL, d);
}

Dual *dual_alloc(uint32_t tag, int k)
{
    Dual *d = dual_alloc_spare(tag, k);
    if (d) return d;
    d = value_obj_new(V_DUAL, sizeof(Dual) + sizeof(Value) * (size_t)k);
    d->tag = tag;
    d->k = (uint16_t)k;
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

/* A freed dual waits for the next one of its k (dual_alloc). */
static void dual_spare(Dual *d)
{
    ValueState *vs = &G->value;
    if (d->k == 1) {
        if (vs->nspare_duals < DUAL_SPARE) {
            vs->spare_duals[vs->nspare_duals++] = d;
            return;
        }
    } else {
        if (vs->spare_chunk_k != d->k) {     /* another chunk size: the old ones go */
            while (vs->nspare_chunks) free(vs->spare_chunks[--vs->nspare_chunks]);
            vs->spare_chunk_k = d->k;
        }
        if (vs->nspare_chunks < DUAL_SPARE) {
            vs->spare_chunks[vs->nspare_chunks++] = d;
            return;
        }
    }
    free(d);
}

/* Release what o holds, then o itself. */
void value_obj_free(Obj *o)
{
    if (o->type == V_DUAL && ((Dual *)o)->plain) {    /* forward mode's common case: nothing to release */
        gc_unlink_inline(o);
        if (((Dual *)o)->k == 1 && G->value.nspare_duals < DUAL_SPARE) G->value.spare_duals[G->value.nspare_duals++] = (Dual *)o;
        else dual_spare((Dual *)o);
        return;
    }
    switch (o->type) {
    case V_ARR: {
        Storage *s = (Storage *)o;
        for (int i = 0; i < s->n; i++) v_release(s->v[i]);
        free(s->v);
        break;
    }
    case V_VIEW: {
        Storage *s = ((View *)o)->s;
        if (--s->h.rc == 0) value_obj_free(&s->h);
        value_envcell_release(((View *)o)->home);
        break;
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
        for (int j = 0; j < d->k; j++) v_release(d->t[j]);
        dual_spare(d);
        return;
    }
    case V_ENV: {
        Env *e = (Env *)o;
        if (e->cell) {
            e->cell->env = NULL;
            value_envcell_release(e->cell);
        }
        for (int i = 0; i < e->n; i++) v_release(e->slots[i]);
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

void value_seq_check_numbers(Value v, const char *what)
{
    int n = seq_len(v);
    for (int i = 0; i < n; i++)
        if (seq_at(v, i)->t == V_STR)
            err_raise("%s needs numbers, but element %d of the array is a string (num(s) reads one)", what, i);
}

Value value_arr_copy(Value v)
{
    int n = seq_len(v);
    Storage *s = storage_unfilled(n);
    for (int i = 0; i < n; i++) {
        s->v[i] = *seq_at(v, i);
        v_retain(s->v[i]);
    }
    if (v.t == V_ARR) storage_shape_like(s, AS_ARR(v));
    return obj_val(V_ARR, s);
}

Value value_bind_copy(Value v)
{
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
