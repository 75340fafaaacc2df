/* value.h: the representation of wengert values.
 * A Value is 16 bytes: a type tag, a tape identity and a payload. A number
 * carries its tape entry in `id` (0 = a constant, not on the tape), so
 * recording costs nothing for values that never meet the tape. The number
 * itself is a double holding exactly a value of the active backend's format
 * (every float32/16, bfloat16 and posit8/16/32 value is a double), so a
 * backend switch changes how results are rounded, not how they are stored.
 * Heap objects are reference counted; cycles through closures are broken by
 * the collector in valuegc.c at quiescent points. */
#ifndef WG_VALUE_H
#define WG_VALUE_H
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ast.h"

typedef enum {
    V_UNDEF,    /* an unassigned slot; never a user-visible value */
    V_NIL, V_BOOL, V_NUM, V_BUILTIN,
    /* heap types from here on */
    V_STR, V_ARR, V_VIEW, V_FN, V_DUAL, V_ENV
} VType;

typedef struct Obj {
    struct Obj *next, *prev;  /* every heap object, for the cycle collector */
    uint32_t rc;
    uint8_t  type;
    uint8_t  mark;
} Obj;

struct Builtin;

typedef struct Value {
    uint8_t  t;
    uint8_t  pad8;
    uint16_t pad16;
    uint32_t id;              /* tape entry of a number, 0 if constant */
    union {
        double n;
        int b;
        Obj *o;
        const struct Builtin *bi;
    } u;
} Value;

typedef struct Str {
    Obj h;
    int len;
    char s[];
} Str;

/* Element storage, shared copy-on-write by array values and aliased by
 * views. Once a view exists (aliased), copies of the array are made eagerly
 * when bound to a name, so writes through an array name never reach a view
 * of another array; a value that holds the storage alone (its views are
 * gone) is bound as it is and aliases nothing again (value_bind_copy). */
typedef struct Storage {
    Obj h;
    int n;
    int aliased;
    int views;        /* live views of it (value_view_new counts them, their
                       * free uncounts; a view the cycle collector frees
                       * stays counted: too many is only a copy too many) */
    int ndim;         /* 2: a matrix of rows x cols (n = rows * cols), stored
                       * row by row (matrix.h); anything else: an array */
    int rows, cols;
    int plain_n;      /* n for an array, 0 for a matrix (whose a[i] is a row):
                       * the evaluator's short paths for a[i] bound i by it,
                       * so they leave matrices to the general path for free */
    int known;        /* what every element is known to be (0: nothing):
                       * KNOWN_NOHEAP, a V_NUM (no heap object: freeing
                       * releases nothing, a copy is a memcpy), and
                       * KNOWN_CONSTS, a V_NUM of id 0 (recording nothing:
                       * the plain array paths need no scan). Set by the
                       * code that fills a new array (or a scan that found
                       * it so); every write into existing storage of what
                       * may be a dual or a recorded number (an id written
                       * or labelled) clears it first: storage_dirty */
    uint32_t fresh;   /* an array run's first id when the run made these
                       * elements, ids fresh .. fresh + n - 1 (entries of
                       * the run, none a constant), 0: nothing known.
                       * storage_dirty clears it; arrayrun.c's readers
                       * check it against the first and last elements (a
                       * renumbered or stripped id fails that) */
    Value *v;         /* the elements, in the same allocation, after the header */
} Storage;

typedef struct Env Env;
/* A frame as views of its arrays know it: a weak reference (the frame
 * sets env to NULL when it ends), so a view kept in the frame's own slot
 * makes no cycle. Reference counted by the frame and those views. */
typedef struct EnvCell {
    uint32_t rc;
    Env *env;
} EnvCell;
void value_envcell_release(EnvCell *c);

/* A view of a variable's array (view(a, ...), or a view of such a view)
 * names that variable, its owner: a write through the view makes a new
 * version of it while it still holds the storage (SPEC "Derivatives").
 * owner is the slot, in home's frame or among the globals (home NULL);
 * -1: a view of a value no name held. */

typedef struct View {
    Obj h;
    Storage *s;
    int start, len, stride;
    EnvCell *home;
    int owner;
} View;

/* A function value: user code (fn set), or a derived function such as
 * grad(f) (fn NULL, kind says which, target is f). */
typedef enum { FK_USER, FK_GRAD, FK_JAC, FK_HESS, FK_SPARSITY } FnKind;   /* FK_JAC ...: jacobian.c */
typedef struct Closure {
    Obj h;
    FnInfo *fn;
    Env *env;     /* the frame the function was made in; NULL at top level */
    int kind;
    Value target;
    const char *label;   /* name shown for derived functions */
    int argnum;          /* FK_GRAD: the argument differentiated (from 0), -1 for all; FK_JAC, FK_HESS: the mode */
} Closure;

struct VerLog;   /* versions.h */

struct Env {
    Obj h;
    Env *parent;
    FnInfo *fn;
    struct VerLog *vers;   /* one per slot when fn->records, else NULL */
    EnvCell *cell;         /* once a view of one of its arrays was made */
    int n;
    uint32_t born;         /* env_made when it was made (a checkpointed loop
                            * tells frames older than itself) */
    Value slots[];
};

/* Forward mode: a number with k tangents for the jvp level `tag`,
 * p + t[0]·ε_1 + ... + t[k-1]·ε_k (k is 1 for jvp(f, x, v); a chunked
 * jvp(f, x, V) carries several directions at once, fwd.c). The tangents
 * sit inline after the primal, one block, no object each. Primal and
 * tangents may themselves be duals of lower tags, or recorded, so jvp
 * nests: then the block holds k Values. When every tangent is a plain
 * number (no tape entry) the block holds just their k doubles, 8 bytes
 * each (`unboxed`, dual_td; dual_finish packs them), and when the primal
 * is plain too (`plain`) dual.c runs an operation as one loop over those
 * doubles. Read a tangent with dual_tan, whichever the form. */
typedef struct Dual {
    Obj h;
    uint32_t tag;
    uint16_t k;
    uint8_t plain;     /* p is a plain number and the tangents are unboxed */
    uint8_t form;      /* DUAL_UNBOXED, DUAL_WIDE */
    Value p;
    Value t[];    /* k Values; unboxed: k doubles in their place */
} Dual;
enum {
    DUAL_UNBOXED = 1,  /* t holds k doubles (dual_td) */
    DUAL_WIDE = 2,     /* the block has room for k Values (dual_alloc's), else k doubles */
    DUAL_SLAB = 4      /* carved from a slab (dual_slab_carve): never freed alone, always a spare */
};
static inline double *dual_td(const Dual *d) { return (double *)(void *)d->t; }

typedef Value (*BuiltinFn)(int argc, Value *argv);
typedef struct Builtin {
    const char *name;
    int minargs, maxargs;    /* maxargs -1: any number */
    BuiltinFn fn;
    const char *help;
} Builtin;

#define IS_HEAP(v)  ((v).t >= V_STR)
#define IS_NUM(v)   ((v).t == V_NUM)
#define IS_NUMBER(v) ((v).t == V_NUM || (v).t == V_DUAL)   /* a plain number or a dual (jvp) */
#define AS_STR(v)   ((Str *)(v).u.o)
#define AS_ARR(v)   ((Storage *)(v).u.o)
#define AS_VIEW(v)  ((View *)(v).u.o)
#define AS_FN(v)    ((Closure *)(v).u.o)
#define AS_DUAL(v)  ((Dual *)(v).u.o)

static inline Value num_val(double n) { Value v = {0}; v.t = V_NUM; v.u.n = n; return v; }
static inline Value num_rec(double n, uint32_t id) { Value v = {0}; v.t = V_NUM; v.id = id; v.u.n = n; return v; }
/* *to = num_rec(n, id) as one 16-byte store (t, the pads and id as one
 * word, n the other): the loops that write a long run of numbers (grad's
 * fresh point, a gradient's entries) store half as often as field by
 * field. */
_Static_assert(offsetof(Value, id) == 4 && offsetof(Value, u) == 8 && sizeof(Value) == 16
               && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "num_rec_store writes a number as two words");
static inline void num_rec_store(Value *to, double n, uint32_t id)
{
    typedef uint64_t words __attribute__((vector_size(16), aligned(8), may_alias));
    uint64_t bits;
    memcpy(&bits, &n, sizeof bits);
    words w = { V_NUM | (uint64_t)id << 32, bits };
    memcpy(to, &w, sizeof w);
}
/* dst[i] = num_rec(src[i].u.n, id + i) and val[i] = the same number,
 * for i < n (dst may be src: each pair is read before it is written):
 * two at a time, their vals in one 16-byte store (grad's fresh point
 * and a gradient's entries: 1.5 stores an element, not 3). */
static inline void num_rec_run(Value *dst, double *val, const Value *src, uint32_t id, uint32_t n)
{
    typedef double pair __attribute__((vector_size(16), aligned(8), may_alias));
    uint32_t i = 0;
    for (; i + 2 <= n; i += 2) {
        double a = src[i].u.n, b = src[i + 1].u.n;
        pair p = { a, b };
        memcpy(val + i, &p, sizeof p);
        num_rec_store(&dst[i], a, id + i);
        num_rec_store(&dst[i + 1], b, id + i + 1);
    }
    if (i < n) {
        double a = src[i].u.n;
        val[i] = a;
        num_rec_store(&dst[i], a, id + i);
    }
}
static inline Value bool_val(int b) { Value v = {0}; v.t = V_BOOL; v.u.b = !!b; return v; }
static inline Value nil_val(void) { Value v = {0}; v.t = V_NIL; return v; }
static inline Value obj_val(VType t, void *o) { Value v = {0}; v.t = (uint8_t)t; v.u.o = o; return v; }

/* The plain number inside a number or (nested) dual: its value, and the
 * slot that holds it (whose id is the tape entry). */
static inline double v_primal(Value v)
{
    while (v.t == V_DUAL) v = ((Dual *)v.u.o)->p;
    return v.u.n;
}

static inline Value *v_innermost(Value *v)
{
    while (v->t == V_DUAL) v = &((Dual *)v->u.o)->p;
    return v;
}

void value_obj_free(Obj *o);
static inline void v_retain(Value v) { if (IS_HEAP(v)) v.u.o->rc++; }
static inline void v_release(Value v) { if (IS_HEAP(v) && --v.u.o->rc == 0) value_obj_free(v.u.o); }

void   *value_obj_new(VType t, size_t size);
Value   value_str_new(const char *s, int len);
Storage *value_storage_new(int n);   /* n zeros (known not set: callers may write duals) */
void value_zeros(Value *to, int n);       /* n zeros at to (num_val(0)'s), an element one 16-byte store */
Storage *value_storage_unfilled(int n);   /* n elements the caller writes, all of them, before anything can raise */
Value   value_arr_new(int n);           /* n undefined-free zeros */
Value   value_view_new(Storage *s, int start, int len, int stride);
Value   value_dual_new(uint32_t tag, Value p, Value t);   /* k = 1; takes ownership of p, t */
/* A dual of k tangents whose p and t[] (k Values) the caller fills
 * (owned) before anything can raise, then calls dual_finish, which packs
 * plain tangents into doubles; obj_val(V_DUAL, d) is it. */
Dual   *dual_alloc(uint32_t tag, int k);
/* A dual of k unboxed tangents: the caller fills p (a plain number) and
 * dual_td(d)[0 .. k-1]; it is finished (plain) already. */
Dual   *dual_alloc_unboxed(uint32_t tag, int k);
static inline int dual_part_plain(Value v) { return v.t == V_NUM && v.id == 0; }
static inline void dual_finish(Dual *d)
{
    int plain = 1;
    for (int j = 0; j < d->k; j++) plain &= dual_part_plain(d->t[j]);
    if (plain && !(d->form & DUAL_UNBOXED)) {
        double *td = dual_td(d);      /* td[j] ends before t[j]'s number: in place, in order */
        for (int j = 0; j < d->k; j++) td[j] = d->t[j].u.n;
        d->form |= DUAL_UNBOXED;
    }
    d->plain = (uint8_t)((d->form & DUAL_UNBOXED) && dual_part_plain(d->p));
}
/* Tangent j of d as a Value (borrowed: a number, or the boxed part). */
static inline Value dual_tan(const Dual *d, int j)
{
    return d->form & DUAL_UNBOXED ? num_val(dual_td(d)[j]) : d->t[j];
}
Env    *value_env_new(FnInfo *fn, Env *parent, int n);
/* A call's frame ends (the call drops its reference), when the inline
 * value_frame_drop cannot take the short way: what else holds it. */
void    value_frame_drop_slow(Env *e);

/* Arrays and views alike: length, element read (borrowed), element slot.
 * Inline: every element loop of the evaluator and the builtins runs here. */
static inline int is_seq(Value v) { return v.t == V_ARR || v.t == V_VIEW; }
static inline int seq_len(Value v) { return v.t == V_ARR ? AS_ARR(v)->n : AS_VIEW(v)->len; }
static inline Value *seq_at(Value v, int i)
{
    if (v.t == V_ARR) return &AS_ARR(v)->v[i];
    View *w = AS_VIEW(v);
    return &w->s->v[w->start + (long)i * w->stride];
}
/* A matrix is an array whose storage has two dimensions: every array
 * path (elements, versions, views, the tape) sees its n elements row by
 * row; matrix.c adds what the shape changes. A new array made from an
 * old one element for element takes its shape with shape_like. */
static inline int is_mat(Value v) { return v.t == V_ARR && AS_ARR(v)->ndim == 2; }
static inline void storage_set_shape(Storage *s, int ndim, int rows, int cols)
{
    s->ndim = ndim;
    s->rows = rows;
    s->cols = cols;
    s->plain_n = ndim == 2 ? 0 : s->n;
}
static inline void storage_shape_like(Storage *to, const Storage *from)
{
    storage_set_shape(to, from->ndim, from->rows, from->cols);
}
static inline void shape_like(Value to, Value from)
{
    if (to.t == V_ARR && is_mat(from)) storage_shape_like(AS_ARR(to), AS_ARR(from));
}

/* Storage.known */
#define KNOWN_NOHEAP 1
#define KNOWN_CONSTS 3     /* implies KNOWN_NOHEAP */
/* Existing storage about to receive elements that may be duals or
 * recorded numbers (or get ids written into its elements): what was
 * known of them ends. */
static inline void storage_dirty(Storage *s) { s->known = 0; s->fresh = 0; }
static inline Storage *storage_of(Value v) { return v.t == V_ARR ? AS_ARR(v) : AS_VIEW(v)->s; }
/* Whether every element of array or view v is known to be a V_NUM. */
static inline int seq_noheap(Value v) { return storage_of(v)->known & KNOWN_NOHEAP; }
#ifdef __SANITIZE_ADDRESS__
void value_known_check(const Storage *s);   /* SAN build: aborts when known claims too much */
#else
static inline void value_known_check(const Storage *s) { (void)s; }
#endif

/* Arrays of strings (args) exist; arithmetic needs numbers: an error otherwise. */
void    value_seq_check_numbers(Value v, const char *what);
Value   value_arr_copy(Value v);       /* a fresh unaliased array with v's elements */
Value   value_bind_copy(Value v);      /* what a name receives: copies aliased storage; takes ownership */

/* Before writing into an array's elements (values, or their tape ids):
 * storage shared by value with another array is split off first (copy on
 * write); aliased storage is written in place, through every view. */
static inline void arr_own(Value *v)
{
    if (v->t != V_ARR) return;
    Storage *s = AS_ARR(*v);
    if (s->h.rc > 1 && !s->aliased) {
        Value c = value_arr_copy(*v);
        v_release(*v);
        *v = c;
    }
}

const char *value_type_name(Value v);
void    value_print(Value v, void *file);   /* FILE *, as print() shows it */
void    value_print_brief(Value v, void *file);   /* long arrays as [1, 2, 3, ..., 9] (N elements) */
const char *value_num_str(double x);   /* for error messages */

/* The values' part of the session state (G->value). */
#define DUAL_KMAX 32              /* spare lists for k = 1 .. DUAL_KMAX (fwd.h's FWD_CHUNK) */
#define DUAL_SPARE 8192           /* duals waiting in all (at most 560 bytes each: 4.4 MB) */
#ifdef __SANITIZE_ADDRESS__
#define DUAL_SLAB_BYTES 0         /* (under ASan every dual is its own block) */
#else
#define DUAL_SLAB_BYTES (4u << 20)   /* at most this much in dual slabs (kept for good) */
#endif
#define DUAL_SLAB_ONE (16u << 10) /* bytes a slab: the duals of one malloc */
#ifdef __SANITIZE_ADDRESS__
#define ENV_SPARE 0           /* (under ASan every frame is its own block: use after free stays visible) */
#else
#define ENV_SPARE 32
#endif
#define ENV_SPARE_SLOTS 12
#ifdef __SANITIZE_ADDRESS__
#define STORAGE_SPARE 0
#else
#define STORAGE_SPARE 16          /* freed array storages kept for the next of their size */
#endif
#define STORAGE_SPARE_MIN 2       /* elements: a number alone goes back to malloc. Short arrays
                                   * too (lstm's rows of 7, an array run's result a step) take
                                   * the list: malloc and free cost them more than its look-up */
#define STORAGE_SPARE_BYTES (8u << 20)   /* at most this much kept in all */
#define STORAGE_SPARE_ONE (STORAGE_SPARE_BYTES * 3 / 8)   /* at most this much one storage: two of 3 MB
                                   * fit (grad over 160000 numbers makes and drops its point and
                                   * its gradient, 2.56 MB each, a call: as spares they skip
                                   * malloc, free and err_prefault's page walk, 0.15 ms a call) */
#ifdef __SANITIZE_ADDRESS__
#define VIEW_SPARE 0
#else
#define VIEW_SPARE 64             /* freed views kept for the next (row(F, t) a step) */
#endif
typedef struct {
    uint32_t env_made;        /* frames made so far (wraps) */
    /* Forward mode makes and drops a dual per operation: freed duals wait
     * for the next one of their k and width instead of going back to
     * malloc, a list each (through h.next), up to DUAL_SPARE in all. */
    Dual *spare[DUAL_KMAX + 1][2];    /* [k][0]: unboxed blocks, [k][1]: wide */
    int nspare;
    /* An array operation in a jvp makes a dual an element (hvp's
     * `points - take(C, at)`: 8000), each a malloc when no spare waits:
     * unboxed duals are carved instead from slabs of DUAL_SLAB_ONE bytes
     * (up to DUAL_SLAB_BYTES in all), their duals spares from the start
     * and spares again when freed, never back to malloc. */
    size_t slab_bytes;
    char num_bufs[4][64];     /* value_num_str's, a few at a time */
    int num_next;
    /* Every call makes and drops a frame: freed frames of up to
     * ENV_SPARE_SLOTS slots wait here, by slot count, for the next call. */
    Env *spare_envs[ENV_SPARE_SLOTS + 1][ENV_SPARE + 1];
    int nspare_envs[ENV_SPARE_SLOTS + 1];
    /* Array code makes and drops arrays of one size over and over (a loop
     * of whole-array operations): freed storages of at least
     * STORAGE_SPARE_MIN elements wait here, newest last, for the next
     * array of their n, which then lands in memory still in the cache
     * instead of going through malloc and free. */
    Storage *spare_st[STORAGE_SPARE + 1];
    int nspare_st;
    size_t spare_st_bytes;
    /* A loop over a matrix's rows makes and drops a view a step: freed
     * views wait here for the next instead of going through malloc. */
    View *spare_views[VIEW_SPARE + 1];
    int nspare_views;
} ValueState;

static inline size_t dual_bytes(int k, int wide)
{
    return sizeof(Dual) + (wide ? sizeof(Value) : sizeof(double)) * (size_t)k;
}

#endif

/* Needs the session state (state.h includes this file again). */
#if defined(WG_STATE_DONE) && !defined(WG_VALUE_H_STATE)
#define WG_VALUE_H_STATE
/* A spare dual of k tangents and width wide made live again (type, count,
 * the collector's list, tag, k, form), or NULL when none waits:
 * dual_alloc's first try, and dual.c's inline one per operation. */
static inline Dual *dual_alloc_spare(uint32_t tag, int k, int wide)
{
    ValueState *vs = &G->value;
    if (k > DUAL_KMAX) return NULL;
    Dual *d = vs->spare[k][wide];
    if (!d) return NULL;
    vs->spare[k][wide] = (Dual *)(void *)d->h.next;
    vs->nspare--;
    d->h.rc = 1;            /* type, mark (0 out of the collector's list) and k are as it left them */
    gc_link_inline(&d->h);
    d->tag = tag;
    d->form = (uint8_t)((d->form & DUAL_SLAB) | (wide ? DUAL_WIDE : DUAL_UNBOXED));
    d->plain = !wide;       /* unboxed: finished once the caller fills p and the doubles */
    return d;
}
/* A call's frame of n slots in parent, for fn: a spare one when one waits
 * (value_env_new's otherwise). Its slots are cleared: a frame's are as it
 * gives them back, before it waits as a spare. */
/* n slots of a dropped frame cleared, what they held released (apart:
 * value_frame_drop's inline loop calls nothing for numbers) */
void value_frame_clear_slots(Value *s, int n);
static inline Env *value_frame_new(FnInfo *fn, Env *parent, int n)
{
    ValueState *vs = &G->value;
    if (n > ENV_SPARE_SLOTS || !vs->nspare_envs[n]) return value_env_new(fn, parent, n);
    Env *e = vs->spare_envs[n][--vs->nspare_envs[n]];
    e->h.rc = 1;             /* type and n are as it left them, mark 0 */
    gc_link_inline(&e->h);
    e->parent = parent;
    if (parent) parent->h.rc++;
    e->fn = fn;
    e->vers = NULL;
    e->cell = NULL;
    e->born = ++vs->env_made;
    return e;
}
/* The call that made frame e ends: a frame nothing else holds (no
 * closure kept it, no view of its arrays, no versions) gives its slots
 * back and waits as a spare; the rest, value_frame_drop_slow. */
static inline void value_frame_drop(Env *e)
{
    ValueState *vs = &G->value;
    if (e->h.rc != 1 || e->vers || e->cell) {
        value_frame_drop_slow(e);
        return;
    }
    /* two slots a step: the tags alone read first (a number, most slots of
     * scalar code, needs its payload neither read nor released), one test
     * for the pair; the loop's own count and test were half of it */
    Value *s = e->slots, *end = s + e->n, *pairs_end = s + (e->n & ~1);
    for (; s < pairs_end; s += 2) {
        if (__builtin_expect(IS_HEAP(s[0]) || IS_HEAP(s[1]), 0)) {
            value_frame_clear_slots(s, 2);
            continue;
        }
        memset(s, 0, 2 * sizeof *s);   /* (plain stores; a compound literal took several) */
    }
    if (s < end) value_frame_clear_slots(s, 1);
    Env *parent = e->parent;
    gc_unlink_inline(&e->h);
    if (e->n <= ENV_SPARE_SLOTS && vs->nspare_envs[e->n] < ENV_SPARE)
        vs->spare_envs[e->n][vs->nspare_envs[e->n]++] = e;
    else
        free(e);
    if (parent && --parent->h.rc == 0) value_obj_free(&parent->h);
}
/* A dual (unlinked, released) waits as a spare, or goes back to malloc. */
static inline void dual_spare_put(Dual *d)
{
    ValueState *vs = &G->value;
    int k = d->k;
    if (!(d->form & DUAL_SLAB) && (k > DUAL_KMAX || vs->nspare >= DUAL_SPARE)) {
        free(d);
        return;
    }
    Dual **list = &vs->spare[k][(d->form & DUAL_WIDE) != 0];
    d->h.next = (Obj *)(void *)*list;
    *list = d;
    vs->nspare++;
}
#endif
