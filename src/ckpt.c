/* ckpt.c: checkpointed loops (SPEC "Long loops and long sessions").
 *
 * `checkpoint for ...` / `checkpoint while ...` runs the loop unrecorded
 * and keeps a few saved states of what it carries: the variables the body
 * assigns (plain, compound and element writes, and arrays given to view;
 * found in the syntax tree, also through the functions it calls by name
 * and the function literals in it), the arrays they hold (by content, one
 * copy per distinct storage, so views stay aliased), and the generator's
 * position. Values the body only reads (arrays by content too: a view made
 * inside may write them) are captured at loop start, since they may be
 * reassigned before anyone differentiates. The tape gets one OP_CKPT entry
 * (its side record, below, lists the input ids: the captured numbers and
 * the carried values at loop start) and one OP_CKOUT entry per number the
 * loop wrote; a number it never wrote keeps its entry.
 *
 * A body that takes d(...) or reads x@k itself runs recorded (a note says
 * so): such a derivative reaches back through the steps before, which a
 * recomputation from a saved state cannot replay. A body that calls grad,
 * hvp, jvp or fwdgrad records each unrecorded step on a scratch region.
 *
 * Schedule (online, the trip count of a while loop need not be known):
 * states are kept at multiples of a spacing d, starting at d = 1; when more
 * than k are kept, every other one is dropped and d doubles. So at most k
 * states, at least k/2 of them spread evenly over the loop.
 *
 * Reverse (the sweep's hook): segments between saved states are taken from
 * the last. A segment is run recorded on a scratch region at the tape's
 * top (its carried numbers at the start as fresh leaves), swept with the
 * adjoints at its end as seeds, and taken off the tape; the leaves'
 * adjoints are the seeds of the segment before. A segment whose recording
 * would not fit in half of what the tape's cap leaves (64 MB at most) is
 * cut into chunks that do: with enough free slots (k minus the states
 * still needed) one unrecorded pass saves every chunk's start state, else
 * the segment is halved revolve-style (the state at its middle saved in a
 * free slot, the upper half reversed, then the lower); with no free slot
 * the chunks are recomputed from the segment's start. The first segment starts
 * from the loop's own input entries, so its sweep hands their adjoints to
 * the sweep that reached the loop. Segments short enough to record
 * together (known from the steps recorded so far) are reversed as one
 * chunk (segments_merged): a chunk's cost in what the loop carries
 * (restore, leaves, seeds, the adjoints wanted) is paid once for them.
 *
 * Higher order (a recorded sweep reaches the loop): the whole loop is run
 * once more recorded from its input entries, and the recorded sweep goes
 * on through those entries (the loop costs its plain tape then).
 *
 * A loop whose inputs are all constants (nothing it carries or reads is
 * recorded) runs as the plain loop: no derivative reaches through it.
 *
 * Recomputation prints nothing, runs no `:` commands, draws the same random
 * numbers (the generator's position is part of a state) and runs in the
 * backend the loop ran in; the variables and arrays it uses are put back
 * afterwards, also when an error or Ctrl-C strikes (ckpt_abandon). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval.h"
#include "ckpt.h"
#include "tape.h"
#include "sweep.h"
#include "error.h"
#include "rng.h"
#include "num.h"
#include "tapegc.h"
#include "fwd.h"
#include "kinks.h"
#include "state.h"



#define MAX_CHUNK_BYTES ((size_t)64 << 20)
#define BRANCH_REGION_BYTES ((size_t)4 << 20)     /* a branch rerun's region (hook_branches) */
/* segments reversed as one chunk record at most this (segments_merged):
 * the sweep's working set stays in cache (gmm7 at d = 10: 2 steps a chunk
 * ran fastest, 1 and 5 or more slower, in CPU time over 40 runs) */
#define MERGE_BYTES ((size_t)4 << 20)

/* ------------------------------------------------------------ records */

enum { SV_UNDEF, SV_NUM, SV_SEQ, SV_OTHER };

typedef struct {
    uint8_t kind;
    int sidx;          /* SV_SEQ: its storage in the state */
    Value v;           /* SV_SEQ: the array or view; SV_OTHER: the value (retained) */
} SavedVar;

typedef struct State {
    uint64_t step;     /* steps run before it */
    rng_t rng;
    SavedVar *vars;
    Storage **st;      /* distinct storages, retained */
    int nst;
    Value *flat;       /* the carried numbers in flattening order (ids 0 but in the start state) */
    uint32_t nflat;
    int consts;        /* flat holds numbers of id 0 only (each state but the start state) */
} State;

typedef struct LoopRec {
    TapeSide side;
    Node *stmt, *loop, *body;
    Chunk *chunk;
    Env *env;
    int k, backend;
    Node **vars;       /* carried variables; vars[counter] is a for loop's own */
    int nvars, counter;
    uint8_t *dead;     /* by variable: each step assigns it before anything reads it
                        * (find_dead), so no state between steps holds it: it is
                        * carried only into the loop (the start state) and out of it */
    Node **capt;       /* variables the body only reads, and their values at loop start */
    Value *captv;
    int ncapt;
    int is_for;
    int taped;         /* the body takes derivatives itself: unrecorded steps record on scratch */
    double lo;
    Storage **cst;     /* storages of the arrays the body only reads (a view made */
    Value **cstv;      /* inside may write them), and their contents at start; */
    uint8_t *cstf;     /* those already aliased at start are carried too */
    uint8_t *cstk;     /* what is known of each one's contents at start (Storage.known:
                        * KNOWN_CONSTS, KNOWN_NOHEAP, or 0), set by recomp_begin */
    int ncst;
    Node **synth;      /* name nodes made for closures' upvalues (owned) */
    int nsynth;
    uint64_t T;        /* steps to recompute (a while loop's failing test is one) */
    State **states;    /* by step; states[0] is the start, with the input ids */
    int nstates, capstates;
    uint32_t nout;
    uint64_t chunk_steps;   /* steps known to fit one recorded chunk (0: unknown) */
    size_t step_bytes;      /* the most a recorded step took of the tape so far (0: unknown) */
    struct LoopRec *next;   /* G->ckpt.running now (not yet on the tape) */
    Storage **held;    /* storages a recorded step holds (run_step), until it ends */
    int nheld;
} LoopRec;


static void state_free(State *s, int nvars)
{
    if (!s) return;
    for (int i = 0; i < nvars; i++) v_release(s->vars[i].v);
    for (int i = 0; i < s->nst; i++) v_release(obj_val(V_ARR, s->st[i]));
    free(s->vars);
    free(s->st);
    free(s->flat);
    free(s);
}

/* What a step that an error interrupted held. */
static void held_drop(LoopRec *r)
{
    for (int i = 0; i < r->nheld; i++) v_release(obj_val(V_ARR, r->held[i]));
    free(r->held);
    r->held = NULL;
    r->nheld = 0;
}

static void rec_release(TapeSide *side)
{
    LoopRec *r = (LoopRec *)side;
    held_drop(r);
    for (int i = 0; i < r->nstates; i++) state_free(r->states[i], r->nvars);
    for (int i = 0; i < r->ncapt; i++) v_release(r->captv[i]);
    for (int i = 0; i < r->ncst; i++) {
        for (int j = 0; j < r->cst[i]->n; j++) v_release(r->cstv[i][j]);
        free(r->cstv[i]);
        v_release(obj_val(V_ARR, r->cst[i]));
    }
    free(r->cst);
    free(r->cstv);
    free(r->cstf);
    free(r->cstk);
    for (int i = 0; i < r->nsynth; i++) free(r->synth[i]);
    free(r->synth);
    if (r->env) v_release(obj_val(V_ENV, r->env));
    ast_chunk_release(r->chunk);
    free(r->states);
    free(r->vars);
    free(r->dead);
    free(r->capt);
    free(r->captv);
    free(r);
}

static void rec_each_id(TapeSide *side, void (*fn)(uint32_t *id, void *ud), void *ud)
{
    LoopRec *r = (LoopRec *)side;
    for (int i = 0; i < r->ncapt; i++)
        if (r->captv[i].t == V_NUM && r->captv[i].id) fn(&r->captv[i].id, ud);
    if (r->nstates)
        for (uint32_t j = 0; j < r->states[0]->nflat; j++)
            if (r->states[0]->flat[j].id) fn(&r->states[0]->flat[j].id, ud);
    for (int i = 0; i < r->ncst; i++)
        for (int j = 0; j < r->cst[i]->n; j++)
            if (r->cstv[i][j].t == V_NUM && r->cstv[i][j].id) fn(&r->cstv[i][j].id, ud);
}

static void rec_each_value(TapeSide *side, void (*visit)(Value))
{
    LoopRec *r = (LoopRec *)side;
    if (r->env) visit(obj_val(V_ENV, r->env));
    for (int i = 0; i < r->ncapt; i++) visit(r->captv[i]);
    for (int i = 0; i < r->ncst; i++) {
        visit(obj_val(V_ARR, r->cst[i]));
        for (int j = 0; j < r->cst[i]->n; j++) visit(r->cstv[i][j]);
    }
    for (int m = 0; m < r->nstates; m++) {
        State *s = r->states[m];
        for (int i = 0; i < r->nvars; i++) visit(s->vars[i].v);
        for (int i = 0; i < s->nst; i++) visit(obj_val(V_ARR, s->st[i]));
    }
}

static const TapeSideKind loop_kind = { "checkpointed loop", rec_each_id, rec_each_value, rec_release };

/* ------------------------------------------------- what the body carries */

static int same_var(const Node *a, const Node *b)
{
    return a->ref == b->ref && a->slot == b->slot && (a->ref != REF_UPVAL || a->depth == b->depth);
}

static int find_var(Node **list, int n, const Node *x)
{
    for (int i = 0; i < n; i++)
        if (same_var(list[i], x)) return i;
    return -1;
}

static void add_var(Node ***list, int *n, Node *x)
{
    if (find_var(*list, *n, x) >= 0) return;
    *list = err_realloc(*list, sizeof(Node *) * (size_t)(*n + 1));
    (*list)[(*n)++] = x;
}

/* Where the analysis is: the loop's body (c NULL, not inner), the body of
 * a closure it calls (c), or a function literal inside either (inner). */
typedef struct { Closure *c; int inner; } Scope;

/* The variable a name node means, as a node relative to the loop's env;
 * NULL for a name the loop cannot reach (a local of some function). A
 * closure's upvalues in the loop's frame or the frames around it get a
 * node of their own. */
static Node *loop_name(LoopRec *r, Node *n, Scope s)
{
    if (n->ref == REF_GLOBAL) return n;
    if (!s.c && !s.inner) return n;
    if (n->ref != REF_UPVAL || n->depth == 255) return NULL;
    int k;
    if (!s.c) {                 /* a function literal in the body: its frames, then the loop's */
        if (n->depth < s.inner) return NULL;
        k = n->depth - s.inner;
    } else {                    /* a closure's body: its defining frame and those around it */
        if (n->depth <= s.inner) return NULL;
        Env *target = s.c->env;
        for (int d = 0; d < n->depth - s.inner - 1 && target; d++) target = target->parent;
        Env *e = r->env;
        k = 0;
        while (e && e != target) e = e->parent, k++;
        if (!e || !target) return NULL;
    }
    r->synth = err_realloc(r->synth, sizeof(Node *) * (size_t)(r->nsynth + 1));
    Node *m = err_calloc(1, sizeof(Node));
    *m = *n;
    m->ref = k == 0 ? REF_LOCAL : REF_UPVAL;
    m->depth = (uint8_t)k;
    r->synth[r->nsynth++] = m;
    return m;
}

/* Names assigned (plain, compound, element writes, for variables). */
static void find_assigned(LoopRec *r, Node *n, Scope s)
{
    if (!n) return;
    if (n->kind == N_FN) {      /* its element writes into the loop's arrays */
        Scope in = { s.c, s.inner + 1 };
        find_assigned(r, n->fn->body, in);
        return;
    }
    if (n->kind == N_ASSIGN || n->kind == N_COMPOUND) {
        Node *t = n->a;
        while (t->kind == N_INDEX) t = t->a;
        Node *m = t->kind == N_NAME ? loop_name(r, t, s) : NULL;
        if (m) add_var(&r->vars, &r->nvars, m);
    }
    if (n->kind == N_FOR) {
        Node *m = loop_name(r, n->c, s);
        if (m) add_var(&r->vars, &r->nvars, m);
    }
    /* view(a, ...), row(a, i) and col(a, j) may split a's storage off
     * (copy on write) and rebind a */
    if (n->kind == N_CALL && n->a->kind == N_NAME && (strcmp(n->a->name, "view") == 0
        || strcmp(n->a->name, "row") == 0 || strcmp(n->a->name, "col") == 0)
        && n->n >= 1 && n->list[0]->kind == N_NAME) {
        Node *m = loop_name(r, n->list[0], s);
        if (m) add_var(&r->vars, &r->nvars, m);
    }
    find_assigned(r, n->a, s);
    find_assigned(r, n->b, s);
    find_assigned(r, n->c, s);
    for (int i = 0; i < n->n; i++) find_assigned(r, n->list[i], s);
}

/* Names read (and not assigned). */
static void find_read(LoopRec *r, Node *n, Scope s)
{
    if (!n) return;
    if (n->kind == N_NAME || n->kind == N_VERSION) {
        Node *m = loop_name(r, n, s);
        if (m && find_var(r->vars, r->nvars, m) < 0) add_var(&r->capt, &r->ncapt, m);
        return;
    }
    if (n->kind == N_FN) {
        Scope in = { s.c, s.inner + 1 };
        find_read(r, n->fn->body, in);
        return;
    }
    find_read(r, n->a, s);
    find_read(r, n->b, s);
    find_read(r, n->c, s);
    for (int i = 0; i < n->n; i++) find_read(r, n->list[i], s);
}

static Value *var_at(LoopRec *r, int i) { return eval_var_slot(r->vars[i], r->env, NULL); }

/* ---------------------------------------------------------- flattening */

/* The carried numbers, in one order: each variable's number, or the
 * elements of its storage the first time that storage is met. */
typedef struct {
    Value **slot;
    uint32_t n, cap;
    Storage **seen;
    int nseen, capseen;
} Flat;

static void flat_push(Flat *f, Value *v)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 16;
        f->slot = err_realloc(f->slot, sizeof(Value *) * f->cap);
    }
    f->slot[f->n++] = v;
}

static Storage *seq_storage(Value v) { return v.t == V_ARR ? AS_ARR(v) : AS_VIEW(v)->s; }

/* Room for k more slots. */
static void flat_reserve(Flat *f, uint32_t k)
{
    if (f->n + k <= f->cap) return;
    f->cap = f->n + k > 2 * f->cap ? f->n + k : 2 * f->cap;
    f->slot = err_realloc(f->slot, sizeof(Value *) * f->cap);
}

static int flat_storage(Flat *f, Storage *s)
{
    for (int i = 0; i < f->nseen; i++)
        if (f->seen[i] == s) return i;
    if (f->nseen == f->capseen) {
        f->capseen = f->capseen ? 2 * f->capseen : 4;
        f->seen = err_realloc(f->seen, sizeof(Storage *) * (size_t)f->capseen);
    }
    f->seen[f->nseen] = s;
    storage_dirty(s);       /* its elements' ids are written through f->slot */
    flat_reserve(f, (uint32_t)s->n);
    Value **slot = f->slot + f->n, *v = s->v;     /* (v apart: a slot written is not s->v read again) */
    _Pragma("GCC unroll 4")
    for (int i = 0; i < s->n; i++) slot[i] = v + i;           /* no test of room an element */
    f->n += (uint32_t)s->n;
    return f->nseen++;
}

/* all: also the variables dead at a step's start (LoopRec.dead): what
 * the loop starts from and ends with; between steps they are left out. */
static void flatten_live(LoopRec *r, Flat *f, int all)
{
    memset(f, 0, sizeof *f);
    /* the slots' room at once, at most what is pushed (a storage two
     * variables share counted twice): no growth, no copy, while pushing */
    uint32_t most = 0;
    for (int i = 0; i < r->nvars; i++) {
        if (i == r->counter || (!all && r->dead && r->dead[i])) continue;
        Value *v = var_at(r, i);
        most += v->t == V_NUM ? 1 : v->t == V_ARR || v->t == V_VIEW ? (uint32_t)seq_storage(*v)->n : 0;
    }
    for (int i = 0; i < r->ncst; i++)
        if (r->cstf[i]) most += (uint32_t)r->cst[i]->n;
    flat_reserve(f, most);
    for (int i = 0; i < r->nvars; i++) {
        if (i == r->counter || (!all && r->dead && r->dead[i])) continue;
        Value *v = var_at(r, i);
        if (v->t == V_NUM) flat_push(f, v);
        else if (v->t == V_ARR || v->t == V_VIEW) flat_storage(f, seq_storage(*v));
    }
    /* arrays the body reads that a view may write into: carried as well */
    for (int i = 0; i < r->ncst; i++)
        if (r->cstf[i]) flat_storage(f, r->cst[i]);
}

static void flat_free(Flat *f)
{
    free(f->slot);
    free(f->seen);
}

/* --------------------------------------------------------------- states */

static uint32_t loop_entry(void);

/* A region a recomputation records and takes off again: where the tape
 * and the notes (kinks.h) were when it began. */
typedef struct {
    TapeMark m;
    uint32_t notes;
} Region;

static Region region_mark(void) { return (Region){ tape_mark(), kink_count() }; }

/* A recomputed region is taken off the tape; the kinks its sweep passed
 * stay noted for the derivative being taken, where the loop's entry is. */
static void region_drop(Region m)
{
    uint32_t epoch = G->tape.epoch;
    tape_truncate(m.m);
    kink_truncated(m.m.n, epoch, loop_entry(), m.notes);
}

static _Noreturn void no_tangents(LoopRec *r)
{
    err_raise_at(r->stmt, "a checkpointed loop cannot carry forward-mode tangents (jvp); "
                "drop 'checkpoint' here");
}

/* The state at step `step`; with_ids: the start state (the loop's
 * inputs, the dead variables too), else between steps (restore sets the
 * dead variables undefined: the step assigns them first). */
static State *snapshot(LoopRec *r, uint64_t step, int with_ids)
{
    State *s = err_calloc(1, sizeof(State));
    s->step = step;
    s->rng = G->rng;
    s->vars = err_calloc((size_t)(r->nvars ? r->nvars : 1), sizeof(SavedVar));
    Flat f;
    flatten_live(r, &f, with_ids);
    s->nflat = f.n;
    s->flat = err_malloc(sizeof(Value) * (f.n ? f.n : 1));
    /* copied and checked in one pass: what is not a number (a dual) ends it */
    int other = 0;
    if (with_ids)
        for (uint32_t j = 0; j < f.n; j++) other |= f.slot[j]->t != V_NUM, s->flat[j] = *f.slot[j];
    else
        for (uint32_t j = 0; j < f.n; j++) other |= f.slot[j]->t != V_NUM, s->flat[j] = num_val(f.slot[j]->u.n);    /* ids dropped */
    if (other) {
        flat_free(&f);
        state_free(s, r->nvars);
        no_tangents(r);
    }
    s->consts = !with_ids;
    s->nst = f.nseen;
    s->st = err_malloc(sizeof(Storage *) * (size_t)(f.nseen ? f.nseen : 1));
    for (int i = 0; i < f.nseen; i++) {
        s->st[i] = f.seen[i];
        s->st[i]->h.rc++;
    }
    for (int i = 0; i < r->nvars; i++) {
        if (i == r->counter || (!with_ids && r->dead && r->dead[i])) continue;     /* SV_UNDEF */
        Value v = *var_at(r, i);
        SavedVar *sv = &s->vars[i];
        if (v.t == V_UNDEF) sv->kind = SV_UNDEF;
        else if (v.t == V_NUM) sv->kind = SV_NUM;
        else if (v.t == V_ARR || v.t == V_VIEW) {
            sv->kind = SV_SEQ;
            for (int k = 0; k < f.nseen; k++)
                if (f.seen[k] == seq_storage(v)) sv->sidx = k;
            sv->v = v;
            v_retain(v);
        } else if (v.t == V_DUAL) {
            flat_free(&f);
            state_free(s, r->nvars);
            no_tangents(r);
        } else {
            sv->kind = SV_OTHER;
            sv->v = v;
            v_retain(v);
        }
    }
    flat_free(&f);
    return s;
}

static void add_state(LoopRec *r, State *s)
{
    if (r->nstates == r->capstates) {
        r->capstates = r->capstates ? 2 * r->capstates : 8;
        r->states = err_realloc(r->states, sizeof(State *) * (size_t)r->capstates);
    }
    r->states[r->nstates++] = s;
}

/* ------------------------------------------------------ recomputations */

/* A recomputation: the loop's variables (and captured ones) are swapped
 * for the states being recomputed and put back at the end. Aliased
 * storages are written in place (views must see the writes), so their
 * contents are kept and put back too. */
typedef struct {
    Storage *s;
    Value *v;
    int n;
} Dirty;

typedef struct Recomp {
    LoopRec *r;
    Value *vars, *capt;
    RunMode outer_mode;        /* the session's, put back by recomp_end */
    uint32_t outer_nograd_block;   /* the nograd block around the sweep, put back */
    int outer_nograd_frame;
    Dirty *dirty;
    int ndirty;
    Region mark;
    int have_mark;
    int backend;               /* the backend of the sweep that reached the loop */
    /* the outputs' whole adjoints (sweep.h): output j is found as the
     * carried number at[j] of the segment being reversed, until the
     * segment that wrote it last */
    double *total;
    uint32_t *at;
    uint8_t *found;
    uint32_t nout;
    /* the same, by position (outputs_by_position): the outputs not yet
     * found at carried number k are head[k], next[head[k]], ... (NO_OUT
     * ends a list); nhead positions, capacity caphead */
    uint32_t *head, *next, nhead, caphead;
    int by_position;
    uint32_t entry;    /* the loop's entry (0: none yet) */
    int kinks;         /* kink_quiet's, for kink_loud */
    State *tmp[64];    /* states saved in free slots meanwhile (an error frees them) */
    int ntmp;
    struct Recomp *outer;
} Recomp;

static State *tmp_keep(Recomp *S, State *s)
{
    if (S->ntmp < 64) S->tmp[S->ntmp++] = s;
    return s;
}

static void tmp_free(Recomp *S, State *s)
{
    for (int i = 0; i < S->ntmp; i++)
        if (S->tmp[i] == s) {
            S->tmp[i] = S->tmp[--S->ntmp];
            break;
        }
    state_free(s, S->r->nvars);
}


/* The entry of the loop being recomputed, or where the tape ends. */
static uint32_t loop_entry(void) { return G->ckpt.recomps && G->ckpt.recomps->entry ? G->ckpt.recomps->entry : tape_size(); }

static int is_cst(LoopRec *r, Storage *s)
{
    for (int i = 0; i < r->ncst; i++)
        if (r->cst[i] == s) return 1;
    return 0;
}

static void dirty_add(Recomp *S, Storage *s)
{
    if (!s->aliased && !is_cst(S->r, s)) return;
    for (int i = 0; i < S->ndirty; i++)
        if (S->dirty[i].s == s) return;
    S->dirty = err_realloc(S->dirty, sizeof(Dirty) * (size_t)(S->ndirty + 1));
    Dirty *d = &S->dirty[S->ndirty++];
    d->s = s;
    d->n = s->n;
    d->v = err_malloc(sizeof(Value) * (size_t)(s->n ? s->n : 1));
    for (int i = 0; i < s->n; i++) {
        d->v[i] = s->v[i];
        v_retain(d->v[i]);
    }
    s->h.rc++;
}

static void dirty_value(Recomp *S, Value v)
{
    if (v.t == V_ARR || v.t == V_VIEW) dirty_add(S, seq_storage(v));
}

/* On the heap: an error unwinds past the frame that began it, and
 * ckpt_abandon ends it afterwards. */
static Recomp *recomp_begin(LoopRec *r)
{
    Recomp *S = err_calloc(1, sizeof(Recomp));
    S->r = r;
    S->outer_mode = state_mode();
    S->backend = G->num.backend;
    /* The body runs again at the sweep's call depth, which may be the
     * depth of a nograd block around the derivative (nograd { grad(g)(v) }):
     * that block must not cut what the recomputed steps assign, as it did
     * not cut the loop's own run (tests/lang/ckpt_in_nograd.wg). */
    S->outer_nograd_block = G->eval.run.nograd_block;
    S->outer_nograd_frame = G->eval.run.nograd_frame;
    G->eval.run.nograd_block = 0;
    G->eval.run.nograd_frame = -1;
    S->vars = err_calloc((size_t)(r->nvars ? r->nvars : 1), sizeof(Value));
    S->capt = err_calloc((size_t)(r->ncapt ? r->ncapt : 1), sizeof(Value));
    S->outer = G->ckpt.recomps;
    G->ckpt.recomps = S;
    for (int i = 0; i < r->nvars; i++) {
        Value *v = var_at(r, i);
        dirty_value(S, *v);
        S->vars[i] = *v;      /* taken: the slot is refilled by restore */
        v->t = V_UNDEF;
    }
    for (int i = 0; i < r->ncapt; i++) {
        Value *v = eval_var_slot(r->capt[i], r->env, NULL);
        dirty_value(S, *v);
        dirty_value(S, r->captv[i]);
        S->capt[i] = *v;
        *v = r->captv[i];
        v_retain(*v);
    }
    for (int m = 0; m < r->nstates; m++)
        for (int i = 0; i < r->states[m]->nst; i++) dirty_add(S, r->states[m]->st[i]);
    for (int i = 0; i < r->ncst; i++) {     /* read-only arrays as they were */
        Storage *s = r->cst[i];
        dirty_add(S, s);
        storage_dirty(s);
        int other = 0, ids = 0;
        for (int j = 0; j < s->n; j++) {
            Value old = s->v[j];
            s->v[j] = r->cstv[i][j];
            other |= s->v[j].t != V_NUM;
            ids |= s->v[j].id != 0;
            v_retain(s->v[j]);
            v_release(old);
        }
        r->cstk[i] = other ? 0 : ids ? KNOWN_NOHEAP : KNOWN_CONSTS;
    }
    RunMode replay = S->outer_mode;
    replay.ckpt_mode = 2;
    replay.ckpt_env = r->env;
    replay.backend = r->backend;
    replay.muted = 1;
    io_flush();
    state_set_mode(&replay);
    S->kinks = kink_quiet();
    return S;
}

static void recomp_end(Recomp *S)
{
    LoopRec *r = S->r;
    held_drop(r);
    if (S->have_mark) region_drop(S->mark);
    for (int i = 0; i < r->nvars; i++) {
        Value *v = var_at(r, i);
        Value old = *v;
        *v = S->vars[i];
        v_release(old);
    }
    for (int i = 0; i < r->ncapt; i++) {
        Value *v = eval_var_slot(r->capt[i], r->env, NULL);
        Value old = *v;
        *v = S->capt[i];
        v_release(old);
    }
    for (int i = 0; i < S->ndirty; i++) {
        Dirty *d = &S->dirty[i];
        storage_dirty(d->s);
        for (int j = 0; j < d->n && j < d->s->n; j++) {
            Value old = d->s->v[j];
            d->s->v[j] = d->v[j];
            v_release(old);
        }
        free(d->v);
        v_release(obj_val(V_ARR, d->s));
    }
    free(S->dirty);
    free(S->at);
    free(S->found);
    free(S->head);
    free(S->next);
    free(S->vars);
    free(S->capt);
    state_set_mode(&S->outer_mode);
    G->eval.run.nograd_block = S->outer_nograd_block;
    G->eval.run.nograd_frame = S->outer_nograd_frame;
    kink_loud(S->kinks);
    for (int i = 0; i < S->ntmp; i++) state_free(S->tmp[i], r->nvars);
    G->ckpt.recomps = S->outer;
    free(S);
}

/* Sets the loop's variables to state s: numbers with their ids (the start
 * state, with_ids) or as constants. Unaliased arrays get fresh storage
 * (others may share the saved one); aliased ones are written in place. */
/* A saved array's elements back into its storage (ids dropped unless
 * with_ids), from flat[*pos] on. */
static void restore_elements(Storage *st, const Value *flat, uint32_t *pos, int with_ids, int flat_consts)
{
    /* the elements written over hold nothing to release: known so, or
     * found so in one pass without branches (flatten_live's ids written
     * into them ended what was known) */
    int numbers = eval_fast_paths && (st->known & KNOWN_NOHEAP);
    if (eval_fast_paths && !numbers) {
        int heap = 0;
        for (int j = 0; j < st->n; j++) heap |= IS_HEAP(st->v[j]);
        numbers = !heap;
    }
    storage_dirty(st);
    if (numbers) {
        /* a state's numbers are all V_NUM (snapshot): numbers again, and
         * constants without their ids */
        const Value *from = flat + *pos;
        if (with_ids) memcpy(st->v, from, sizeof(Value) * (size_t)st->n);
        else if (flat_consts)       /* constants already: a copy */
            for (int j = 0; j < st->n; j++) st->v[j] = from[j];
        else
            for (int j = 0; j < st->n; j++) st->v[j] = num_val(from[j].u.n);
        *pos += (uint32_t)st->n;
        st->known = with_ids ? KNOWN_NOHEAP : KNOWN_CONSTS;
        return;
    }
    for (int j = 0; j < st->n; j++) {
        Value e = flat[(*pos)++];
        if (!with_ids) e.id = 0;
        Value old = st->v[j];
        st->v[j] = e;
        v_release(old);
    }
}

static void restore(LoopRec *r, State *s, int with_ids)
{
    Storage **map = err_scratch(sizeof(Storage *) * (size_t)(s->nst ? s->nst : 1));
    uint8_t *done = err_scratch((size_t)(s->nst ? s->nst : 1));
    for (int i = 0; i < s->nst; i++) {
        Storage *st = s->st[i];
        map[i] = st->aliased || is_cst(r, st) ? st : value_storage_new(st->n);
        if (map[i] != st) {
            storage_shape_like(map[i], st);
            map[i]->known = KNOWN_CONSTS;      /* zeros, written over below */
        }
    }
    uint32_t pos = 0;
    for (int i = 0; i < r->nvars; i++) {
        if (i == r->counter) continue;
        SavedVar *sv = &s->vars[i];
        Value nv = {0};
        switch (sv->kind) {
        case SV_NUM:
            nv = s->flat[pos++];
            if (!with_ids) nv.id = 0;
            break;
        case SV_SEQ: {
            Storage *st = map[sv->sidx];
            if (!done[sv->sidx]) {
                done[sv->sidx] = 1;
                restore_elements(st, s->flat, &pos, with_ids, s->consts);
            }
            if (sv->v.t == V_ARR) {
                nv = obj_val(V_ARR, st);
                st->h.rc++;
            } else {
                nv = sv->v;
                v_retain(nv);
            }
            break;
        }
        case SV_OTHER:
            nv = sv->v;
            v_retain(nv);
            break;
        default:
            break;
        }
        Value *v = var_at(r, i);
        Value old = *v;
        *v = nv;
        v_release(old);
    }
    for (int i = 0; i < s->nst; i++) {      /* storages no variable holds now */
        if (done[i]) continue;
        restore_elements(map[i], s->flat, &pos, with_ids, s->consts);
    }
    for (int i = 0; i < r->ncst; i++) {     /* arrays read only, unless the state has them */
        int in_state = 0;
        for (int k = 0; k < s->nst; k++) in_state |= s->st[k] == r->cst[i];
        if (in_state) continue;
        Storage *st = r->cst[i];
        const Value *from = r->cstv[i];
        /* numbers over numbers (known so, as after the restore before:
         * the steps between only read it, or their writes told known):
         * a copy, nothing to retain or release, no scan */
        if (eval_fast_paths && r->cstk[i] && (st->known & KNOWN_NOHEAP)) {
            storage_dirty(st);
            Value *to = st->v;
            for (int j = 0; j < st->n; j++) to[j] = from[j];     /* (fewer instructions than memcpy's) */
            st->known = r->cstk[i];
            continue;
        }
        storage_dirty(st);
        /* numbers over numbers (found so in one pass without branches):
         * a copy, nothing to retain or release */
        int heap = !eval_fast_paths;
        for (int j = 0; j < st->n; j++) heap |= IS_HEAP(st->v[j]) | IS_HEAP(from[j]);
        if (!heap) {
            for (int j = 0; j < st->n; j++) st->v[j] = from[j];
            st->known = r->cstk[i];       /* what it was at start */
            continue;
        }
        for (int j = 0; j < st->n; j++) {
            Value old = st->v[j];
            st->v[j] = r->cstv[i][j];
            v_retain(st->v[j]);
            v_release(old);
        }
    }
    for (int i = 0; i < s->nst; i++)
        if (map[i] != s->st[i]) v_release(obj_val(V_ARR, map[i]));   /* the variables hold it */
    err_scratch_free(map);
    err_scratch_free(done);
    G->rng = s->rng;
}

/* ------------------------------------------------------------ stepping */

/* Step t: a for loop sets its variable, a while loop tests its condition
 * (-1: false, the loop is over), then the body. */
static int run_step_plain(LoopRec *r, uint64_t t);

/* A body that takes derivatives needs its numbers on the tape even when
 * the loop is not recorded: each step records on a scratch region from
 * fresh leaves, and the region is taken back after it. */
static int run_step(LoopRec *r, uint64_t t)
{
    if (!r->taped || G->tape.recording) return run_step_plain(r, t);
    Region m = region_mark();
    rec_on();
    Flat f;
    flatten_live(r, &f, 1);
    uint32_t nleaf = f.n, *orig = err_scratch(sizeof(uint32_t) * (nleaf ? nleaf : 1));
    for (uint32_t k = 0; k < f.n; k++) {     /* leaves m.n, m.n + 1, ... */
        orig[k] = f.slot[k]->id;
        f.slot[k]->id = rec_leaf(f.slot[k]->u.n);
    }
    /* The leaves went into the storages in place, which others may share
     * (a saved state, a version, another variable): held through the step
     * (so that a write copies them), they get their entries back after it
     * even if the loop's variables no longer hold them. */
    held_drop(r);
    r->nheld = f.nseen;
    r->held = err_malloc(sizeof(Storage *) * (size_t)(f.nseen ? f.nseen : 1));
    for (int i = 0; i < f.nseen; i++) {
        r->held[i] = f.seen[i];
        r->held[i]->h.rc++;
    }
    flat_free(&f);
    int code = run_step_plain(r, t);
    /* what the step did not write gets its entry back; what it computed is
     * a constant again (as in an unrecorded step) */
    for (int i = 0; i < r->nheld; i++) {
        Storage *st = r->held[i];
        storage_dirty(st);
        for (int j = 0; j < st->n; j++)
            if (st->v[j].t == V_NUM && st->v[j].id >= m.m.n)
                st->v[j].id = st->v[j].id < m.m.n + nleaf ? orig[st->v[j].id - m.m.n] : 0;
    }
    held_drop(r);
    flatten_live(r, &f, 1);
    for (uint32_t k = 0; k < f.n; k++) {
        uint32_t id = f.slot[k]->id;
        if (id >= m.m.n && id < m.m.n + nleaf) f.slot[k]->id = orig[id - m.m.n];
        else if (id >= m.m.n) f.slot[k]->id = 0;
    }
    flat_free(&f);
    err_scratch_free(orig);
    rec_off();
    region_drop(m);
    return code;
}

/* A dual of a tag above tag0 was made by a jvp that the step called and
 * that has returned: its perturbation is dead (jvp itself reads only the
 * primal of such a value), so what the loop carries is the primal. */
static Value dead_tangents_off(Value v, uint32_t tag0)
{
    while (v.t == V_DUAL && AS_DUAL(v)->tag > tag0) {
        Value p = AS_DUAL(v)->p;
        v_retain(p);
        v_release(v);
        v = p;
    }
    return v;
}

static void drop_dead_tangents(LoopRec *r, uint32_t tag0)
{
    for (int i = 0; i < r->nvars; i++)
        if (i != r->counter) {
            Value *v = var_at(r, i);
            *v = dead_tangents_off(*v, tag0);
        }
    Flat f;
    flatten_live(r, &f, 1);
    for (uint32_t k = 0; k < f.n; k++) *f.slot[k] = dead_tangents_off(*f.slot[k], tag0);
    flat_free(&f);
}

static int run_step_plain(LoopRec *r, uint64_t t)
{
    err_check_interrupt();
    uint32_t tag0 = fwd_last_tag();
    int code;
    if (r->is_for) {
        Value *slot = var_at(r, r->counter);
        Value old = *slot;
        *slot = num_val(r->lo + (double)t);
        v_release(old);
        code = eval_exec(r->body, r->env);
    } else if (!eval_condition(r->loop->a, r->env, "a while condition")) code = -1;
    else code = eval_exec(r->body, r->env);
    if (fwd_last_tag() != tag0) drop_dead_tangents(r, tag0);
    return code;
}

static void advance(LoopRec *r, uint64_t from, uint64_t to)
{
    rec_off();
    for (uint64_t t = from; t < to; t++) {
        run_step(r, t);
        G->ckpt.steps_recomputed++;
    }
}

/* The state at step m, recomputed from state B (at step b) into a new slot. */
static State *advance_save(LoopRec *r, State *B, uint64_t m)
{
    restore(r, B, 0);
    advance(r, B->step, m);
    return snapshot(r, m, 0);
}

static size_t chunk_budget(void)
{
    size_t used = tape_bytes(), lim = G->tape.limit;
    size_t avail = lim > used ? (lim - used) / 2 : 0;
    return avail < MAX_CHUNK_BYTES ? avail : MAX_CHUNK_BYTES;
}

#define NO_OUT UINT32_MAX

/* The outputs found in a chunk whose region starts at entry `base` with
 * nleaf leaves (carried number k at c is base + k), seeds[k] the carried
 * number k at j, changed[0..nchanged) the positions k < nlam whose
 * number is not leaf k (ascending): the outputs at a position the chunk
 * wrote are wanted (appended to want, their outputs to which, from nwant
 * on; returns the new nwant), those at a leaf move to its position, those
 * at a number from before the region (or past nlam) are lost track of.
 * The same outcome as chunk's walk over every output, in work
 * proportional to the positions that changed (a chunk that writes one
 * column of a large array touches that column); the wanted come in
 * another order, which sweep_region does not mind (it only reads). */
static uint32_t outputs_by_position(Recomp *S, const uint32_t *seeds, uint32_t nlam, uint32_t nleaf,
                                    const uint32_t *changed, uint32_t nchanged,
                                    uint32_t *want, uint32_t *which, uint32_t nwant)
{
    uint32_t base = S->mark.m.n, nw = 0;      /* which[nw] is want[nleaf + nw]'s output */
    uint32_t *moved = err_scratch_uninit(sizeof(uint32_t) * 2 * (nchanged + 1));   /* (list, to) pairs */
    uint32_t nmoved = 0;
    for (uint32_t c = 0; c < nchanged; c++) {
        uint32_t k = changed[c];
        if (k >= S->nhead) break;
        uint32_t o = S->head[k], id = seeds[k];
        if (o == NO_OUT) continue;
        S->head[k] = NO_OUT;
        if (id < base) continue;                           /* lost track, or no entry of this loop */
        if (id < base + nleaf) {                           /* not written here: at that leaf */
            moved[2 * nmoved] = o;
            moved[2 * nmoved++ + 1] = id - base;
            continue;
        }
        for (; o != NO_OUT; o = S->next[o]) {              /* written here */
            which[nw++] = o;
            want[nwant++] = id;
        }
    }
    for (uint32_t k = nlam; k < S->nhead; k++) S->head[k] = NO_OUT;    /* past what is carried: lost */
    if (nleaf > S->caphead) {
        S->head = err_realloc(S->head, sizeof(uint32_t) * nleaf);
        S->caphead = nleaf;
    }
    for (uint32_t k = S->nhead; k < nleaf; k++) S->head[k] = NO_OUT;
    S->nhead = nleaf;
    for (uint32_t m = 0; m < nmoved; m++) {     /* each list onto the front of its leaf's */
        uint32_t o = moved[2 * m], to = moved[2 * m + 1], last = o;
        while (S->next[last] != NO_OUT) last = S->next[last];
        S->next[last] = S->head[to];
        S->head[to] = o;
    }
    err_scratch_free(moved);
    return nwant;
}

/* From state B: unrecorded to step c, recorded to step j, then swept with
 * lam_j (the adjoints of the carried numbers at j); returns the adjoints
 * at c (scratch), or NULL with *fit steps if the recording outgrew the
 * budget. From the start state at its own step the inputs' entries are
 * read as they are, and the sweep hands their adjoints on. */
static double *chunk(Recomp *S, State *B, uint64_t c, uint64_t j, const double *lam_j,
                     uint32_t nlam, void *ctx, uint64_t *fit, uint32_t *nout)
{
    LoopRec *r = S->r;
    int from_inputs = B == r->states[0] && c == B->step;
    restore(r, B, from_inputs);
    advance(r, B->step, c);
    S->mark = region_mark();
    S->have_mark = 1;
    rec_on();
    Flat f;
    flatten_live(r, &f, 0);
    uint32_t nleaf = from_inputs ? 0 : f.n;
    *nout = nleaf;
    /* the adjoints wanted: the leaves', then those of the outputs' entries
     * this segment made (the numbers it carries at j that are no leaf) */
    uint32_t nwant = nleaf, *want = err_scratch_uninit(sizeof(uint32_t) * (nleaf + S->nout + 1));   /* written below nwant */
    for (uint32_t k = 0; k < nleaf; k++)     /* labelled: a name holds it (ckpt_place) */
        want[k] = f.slot[k]->id = tape_push(OP_LEAF | TAPE_LABELED, 0, 0, f.slot[k]->u.n);
    G->ckpt.floor = S->mark.m.n;
    flat_free(&f);
    size_t budget = chunk_budget(), start = tape_bytes();
    for (uint64_t t = c; t < j; t++) {
        run_step(r, t);
        G->ckpt.steps_recomputed++;
        size_t per = (tape_bytes() - start) / (t - c + 1) + 1;
        if (per > r->step_bytes) r->step_bytes = per;
        if (tape_bytes() - start > budget && t + 1 < j) {
            *fit = t - c + 1;
            region_drop(S->mark);
            S->have_mark = 0;
            err_scratch_free(want);
            return NULL;
        }
    }
    flatten_live(r, &f, j == r->T);
    if (f.n != nlam) {
        flat_free(&f);
        err_raise("internal error: a checkpointed loop recomputed differently (please report)");
    }
    uint32_t *seeds = err_scratch_uninit(sizeof(uint32_t) * (f.n ? f.n : 1));     /* each written next */
    /* by_position: the positions whose number is not their own leaf's */
    uint32_t *changed = S->by_position ? err_scratch_uninit(sizeof(uint32_t) * (f.n + 1)) : NULL, nchanged = 0;
    if (changed) {
        uint32_t base = S->mark.m.n, n = f.n < nleaf ? f.n : nleaf, other = 0;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t id = f.slot[k]->id;
            seeds[k] = id;
            other |= f.slot[k]->t != V_NUM;
            changed[nchanged] = k;             /* kept when changed (no branch) */
            nchanged += id != base + k;
        }
        for (uint32_t k = n; k < f.n; k++) {
            seeds[k] = f.slot[k]->id, changed[nchanged++] = k;
            other |= f.slot[k]->t != V_NUM;
        }
        /* every element of the storages carried is a number (the leaves'
         * ids ended what was known): the next restore need not look */
        if (!other)
            for (int i = 0; i < f.nseen; i++) f.seen[i]->known = KNOWN_NOHEAP;
    } else
        for (uint32_t k = 0; k < f.n; k++) seeds[k] = f.slot[k]->id;
    flat_free(&f);
    uint32_t *which = err_scratch_uninit(sizeof(uint32_t) * (S->nout + 1));     /* read only where written */
    if (S->by_position) nwant = outputs_by_position(S, seeds, nlam, nleaf, changed, nchanged, want, which, nwant);
    else for (uint32_t o = 0; o < S->nout; o++) {
        if (S->found[o]) continue;
        uint32_t at = S->at[o], id = at < nlam ? seeds[at] : 0;
        if (at >= nlam || id < S->mark.m.n) {       /* lost track, or no entry of this loop */
            S->found[o] = 1;
            continue;
        }
        if (id < S->mark.m.n + nleaf) {             /* not written here: earlier */
            S->at[o] = id - S->mark.m.n;
            continue;
        }
        S->found[o] = 1;
        which[nwant - nleaf] = o;
        want[nwant++] = id;
    }
    double *out = err_scratch_uninit(sizeof(double) * (nwant ? nwant : 1));    /* sweep_region sets each */
    uint32_t top = tape_size() - 1;
    G->num.backend = S->backend;     /* the sweep's own: its sums as the reaching sweep's */
    sweep_region(ctx, S->mark.m.n, top, seeds, lam_j, nlam, want, nwant, out);
    G->num.backend = r->backend;
    for (uint32_t w = nleaf; w < nwant; w++) S->total[which[w - nleaf]] = out[w];
    err_scratch_free(want);
    err_scratch_free(which);
    region_drop(S->mark);
    S->have_mark = 0;
    rec_off();
    err_scratch_free(seeds);
    err_scratch_free(changed);
    return out;
}

static uint32_t nflat_at(State *s) { return s->nflat; }

/* The variables dead at a step's start made undefined, as restore makes
 * them from a state between steps. */
static void forget_dead(LoopRec *r)
{
    for (int i = 0; r->dead && i < r->nvars; i++)
        if (r->dead[i]) {
            Value *v = var_at(r, i), old = *v;
            *v = (Value){ 0 };
            v_release(old);
        }
}

/* Reverses steps [B->step, j) given the adjoints at j; `slots` states may
 * be saved meanwhile. Returns the adjoints at B (scratch; lam_j is freed). */
static double *reverse_seg(Recomp *S, State *B, uint64_t j, double *lam_j, uint32_t nlam,
                           int slots, void *ctx)
{
    LoopRec *r = S->r;
    uint64_t b = B->step, len = j - b;
    if (r->chunk_steps == 0 || len <= r->chunk_steps) {
        uint64_t fit = 0;
        uint32_t nb;
        double *out = chunk(S, B, b, j, lam_j, nlam, ctx, &fit, &nb);
        if (out) {
            err_scratch_free(lam_j);
            return out;
        }
        r->chunk_steps = fit > 4 ? fit * 3 / 4 : 1;
    }
    uint64_t cs = r->chunk_steps, pieces = (len + cs - 1) / cs;
    if (pieces >= 2 && pieces <= 32 && (uint64_t)slots >= pieces - 1) {
        /* enough slots: one unrecorded pass saves the state at every
         * chunk's start, then the chunks are reversed from the last */
        State **P = err_scratch(sizeof(State *) * pieces);
        P[0] = B;
        restore(r, B, 0);
        for (uint64_t p = 1; p < pieces; p++) {
            advance(r, b + (p - 1) * cs, b + p * cs);
            P[p] = tmp_keep(S, snapshot(r, b + p * cs, 0));
        }
        double *lam = lam_j;
        uint32_t n = nlam;
        for (uint64_t p = pieces; p-- > 0; ) {
            uint64_t end = p + 1 == pieces ? j : b + (p + 1) * cs;
            lam = reverse_seg(S, P[p], end, lam, n, 0, ctx);
            n = nflat_at(P[p]);
            if (p) tmp_free(S, P[p]);
            P[p] = NULL;
        }
        err_scratch_free(P);
        return lam;
    }
    if (slots > 0) {
        uint64_t m = b + len / 2;
        State *M = tmp_keep(S, advance_save(r, B, m));
        double *lam_m = reverse_seg(S, M, j, lam_j, nlam, slots - 1, ctx);
        uint32_t nm = nflat_at(M);
        tmp_free(S, M);
        return reverse_seg(S, B, m, lam_m, nm, slots, ctx);
    }
    /* no slot free: each chunk from B, the last first */
    uint64_t hi = j;
    double *lam = lam_j;
    uint32_t n = nlam;
    while (hi > b) {
        uint64_t lo = hi - b > r->chunk_steps ? hi - r->chunk_steps : b, fit = 0;
        uint32_t nlo;
        double *out = chunk(S, B, lo, hi, lam, n, ctx, &fit, &nlo);
        if (!out) {
            r->chunk_steps = fit > 4 ? fit * 3 / 4 : 1;
            continue;
        }
        err_scratch_free(lam);
        lam = out;
        n = nlo;
        hi = lo;
    }
    return lam;
}

/* The first of the segments reversed as one, the last of them the one
 * from state m to step j: as many before it as the steps recorded so far
 * say fit half a chunk's budget, MERGE_BYTES at most (and chunk_steps,
 * once known). A chunk restores, makes leaves of, seeds and sweeps
 * everything the loop carries (gmm's whole T while a step writes one
 * column of it): per chunk, not per step, so fewer chunks of the same
 * steps do less of it; the steps recomputed are the same, and the states
 * in between go unused (a failed chunk splits as reverse_seg does). Never the
 * start state's segment: its chunk reads the inputs' entries themselves,
 * the others' steps read leaves, and a step's recording (its array runs'
 * operands, so the order its sweep adds in) is kept as it was. */
static int segments_merged(LoopRec *r, int m, uint64_t j)
{
    if (!eval_fast_paths || !r->step_bytes) return m;
    size_t half = chunk_budget() / 2;
    if (half > MERGE_BYTES) half = MERGE_BYTES;
    int from = m;
    while (from > 1) {
        uint64_t len = j - r->states[from - 1]->step;
        if (len > half / r->step_bytes || (r->chunk_steps && len > r->chunk_steps)) break;
        from--;
    }
    return from;
}

static LoopRec *loop_of(uint32_t entry) { return (LoopRec *)tape_side_at(tape_a(entry)); }

static uint32_t hook_outputs(uint32_t entry) { return loop_of(entry)->nout; }

static void hook_reverse(uint32_t entry, const double *out_adj, double *out_total, void *ctx)
{
    LoopRec *r = loop_of(entry);
    Recomp *S = recomp_begin(r);
    S->entry = entry;
    uint32_t n = r->nout;
    S->total = out_total;
    S->nout = n;
    S->at = err_malloc(sizeof(uint32_t) * (n ? n : 1));
    S->found = err_calloc(n ? n : 1, 1);
    for (uint32_t o = 0; o < n; o++) S->at[o] = o;
    S->by_position = eval_fast_paths;
    if (S->by_position) {      /* output o at position o, alone */
        S->head = err_malloc(sizeof(uint32_t) * (n ? n : 1));
        S->next = err_malloc(sizeof(uint32_t) * (n ? n : 1));
        for (uint32_t o = 0; o < n; o++) S->head[o] = o, S->next[o] = NO_OUT;
        S->nhead = S->caphead = n;
    }
    double *lam = err_scratch(sizeof(double) * (n ? n : 1));
    memcpy(lam, out_adj, sizeof(double) * n);
    uint64_t j = r->T;
    for (int m = r->nstates - 1; m >= 0; ) {
        int slots = r->k - (m + 1), from = segments_merged(r, m, j);
        lam = reverse_seg(S, r->states[from], j, lam, n, slots > 0 ? slots : 0, ctx);
        n = nflat_at(r->states[from]);
        j = r->states[from]->step;
        m = from - 1;
    }
    err_scratch_free(lam);   /* the start state's: handed on by the first chunk */
    recomp_end(S);
}

static void hook_rerun(uint32_t entry, uint32_t *out_ids)
{
    LoopRec *r = loop_of(entry);
    Recomp *S = recomp_begin(r);
    S->entry = entry;
    S->mark = region_mark();
    S->have_mark = 1;
    restore(r, r->states[0], 1);
    rec_on();
    G->ckpt.floor = S->mark.m.n;
    for (uint64_t t = 0; t < r->T; t++) {
        run_step(r, t);
        G->ckpt.steps_recomputed++;
    }
    Flat f;
    flatten_live(r, &f, 1);
    for (uint32_t k = 0; k < r->nout; k++) out_ids[k] = k < f.n ? f.slot[k]->id : 0;
    flat_free(&f);
    S->have_mark = 0;        /* the entries stay: the expansion reads them */
    recomp_end(S);
}

/* A derivative asks which near switches of the loop's run depend on its
 * places (kinks.h, kink_note_loop): the loop runs again from its input
 * entries, its steps recorded on regions over fresh leaves (as many steps
 * as fit in 4 MB, one at least) each taken off the tape after it, so the
 * tape holds one region at a time; what depends on a place is carried
 * from region to region as one bit a number (it also tells which of the
 * loop's outputs depend on one: *out_dep, scratch). The
 * region's comparisons are noted as the plain loop's; those that depend
 * on a place are passed (and kept listed when their region goes). */
static void hook_branches(uint32_t entry, const Reach *outer, uint8_t **out_dep, uint32_t *nout)
{
    LoopRec *r = loop_of(entry);
    Recomp *S = recomp_begin(r);
    S->entry = entry;
    restore(r, r->states[0], 1);
    rec_on();
    uint8_t *dep = NULL;
    uint32_t ndep = 0;
    size_t budget = chunk_budget() < BRANCH_REGION_BYTES ? chunk_budget() : BRANCH_REGION_BYTES;
    int code = EXEC_NORMAL;
    for (uint64_t t = 0; t < r->T && code >= 0 && code != EXEC_BREAK; ) {
        /* a region of steps, as many as fit the budget (one at least) */
        S->mark = region_mark();
        S->have_mark = 1;
        G->ckpt.floor = S->mark.m.n;
        if (t > 0) forget_dead(r);      /* their entries were the region's before */
        Flat f;
        flatten_live(r, &f, t == 0);
        uint32_t nleaf = f.n;
        if (!dep) dep = err_scratch(nleaf ? nleaf : 1);
        for (uint32_t k = 0; k < nleaf; k++) {
            if (t == 0) dep[k] = (uint8_t)kink_reached(outer, f.slot[k]->id);
            f.slot[k]->id = rec_leaf(f.slot[k]->u.n);
            rec_label(f.slot[k]->id);          /* a name holds it (ckpt_place) */
        }
        flat_free(&f);
        uint32_t from = kink_count();
        size_t start = tape_bytes();
        do {
            code = run_step(r, t++);
            G->ckpt.steps_recomputed++;
        } while (t < r->T && code >= 0 && code != EXEC_BREAK && tape_bytes() - start < budget);
        Reach *step = kink_region(outer, S->mark.m.n, dep, nleaf, from);
        flatten_live(r, &f, t >= r->T);      /* what it carries now (a variable may begin in a step) */
        if (f.n > nleaf) {
            err_scratch_free(dep);
            dep = err_scratch(f.n);
        }
        ndep = f.n;
        for (uint32_t k = 0; k < f.n; k++) dep[k] = (uint8_t)kink_reached(step, f.slot[k]->id);
        flat_free(&f);
        kink_reach_free(step);
        region_drop(S->mark);
        S->have_mark = 0;
    }
    *out_dep = dep;      /* what it carries at the end: its outputs, in order */
    *nout = ndep;
    recomp_end(S);
}

void ckpt_near_minmax(int op, int argc, const Value *argv)
{
    if (argc == 2 && IS_NUMBER(argv[0]) && IS_NUMBER(argv[1])) {
        G->ckpt.near |= kink_near(v_primal(argv[0]), v_primal(argv[1]));
        return;
    }
    if (argc == 1 && is_seq(argv[0]) && !is_mat(argv[0])) {     /* a fold: each element against the best so far */
        int n = seq_len(argv[0]);
        double m = n ? v_primal(*seq_at(argv[0], 0)) : 0;
        for (int i = 1; i < n; i++) {     /* as arith_fold meets them */
            double x = v_primal(*seq_at(argv[0], i));
            G->ckpt.near |= kink_near(m, x);
            m = num_apply(op, m, x);
        }
        return;
    }
    if (argc == 2 && (is_seq(argv[0]) || IS_NUMBER(argv[0])) && (is_seq(argv[1]) || IS_NUMBER(argv[1]))
        && !is_mat(argv[0]) && !is_mat(argv[1])) {    /* elementwise, a number broadcast */
        int na = is_seq(argv[0]) ? seq_len(argv[0]) : -1, nb = is_seq(argv[1]) ? seq_len(argv[1]) : -1;
        int n = na > nb ? na : nb;
        for (int i = 0; i < n; i++) {
            double x = v_primal(na < 0 ? argv[0] : *seq_at(argv[0], i < na ? i : 0));
            double y = v_primal(nb < 0 ? argv[1] : *seq_at(argv[1], i < nb ? i : 0));
            G->ckpt.near |= kink_near(x, y);
        }
        return;
    }
    G->ckpt.near = 1;      /* matrices, axes: let the rerun tell */
}

/* --------------------------------------------------------- the forward run */

static int has_dual(Value v)
{
    if (v.t == V_DUAL) return 1;
    if (v.t == V_ARR || v.t == V_VIEW) {
        Storage *s = seq_storage(v);
        for (int i = 0; i < s->n; i++)
            if (s->v[i].t == V_DUAL) return 1;
    }
    return 0;
}

/* The body itself calls one of these names (functions it calls record
 * what they need on their own). */
static int calls_any(Node *n, const char *const *names, size_t nnames, int versions)
{
    if (!n || n->kind == N_FN) return 0;
    if (versions && n->kind == N_VERSION) return 1;
    if (n->kind == N_CALL && n->a->kind == N_NAME)
        for (size_t i = 0; i < nnames; i++)
            if (strcmp(n->a->name, names[i]) == 0) return 1;
    if (calls_any(n->a, names, nnames, versions) || calls_any(n->b, names, nnames, versions)
        || calls_any(n->c, names, nnames, versions)) return 1;
    for (int i = 0; i < n->n; i++)
        if (calls_any(n->list[i], names, nnames, versions)) return 1;
    return 0;
}

/* The first 'return' of the loop's own (not inside a function literal). */
static Node *first_return(Node *n)
{
    if (!n || n->kind == N_FN) return NULL;
    if (n->kind == N_RETURN) return n;
    Node *r = first_return(n->a);
    if (!r) r = first_return(n->b);
    if (!r) r = first_return(n->c);
    for (int i = 0; i < n->n && !r; i++) r = first_return(n->list[i]);
    return r;
}

/* A loop whose inputs are all constants runs as the plain loop, but a
 * 'return' out of it is the same error as out of the checkpointed run. */
static int run_plain(Node *loop, Env *env)
{
    int code = eval_exec(loop, env);
    if (code == EXEC_RETURN) {
        Node *ret = first_return(loop);
        err_raise_at(ret ? ret : loop, "'return' inside a checkpointed loop: 'break' out of it, then return");
    }
    return code;
}

/* grad, hvp, jvp and fwdgrad differentiate at fresh points: a step that
 * calls them only needs its numbers on the tape. */
static int takes_derivatives(Node *n)
{
    static const char *const ad[] = { "grad", "hvp", "jvp", "fwdgrad" };
    return calls_any(n, ad, sizeof ad / sizeof *ad, 0);
}

/* d(y, x) and x@k in the body reach back through the steps before (d of a
 * value an earlier step computed from x): such a loop runs recorded. */
static int reaches_back(Node *loop)
{
    static const char *const dd[] = { "d" };
    return calls_any(loop->kind == N_FOR ? loop->list[0] : loop->b, dd, 1, 1)
        || (loop->kind == N_WHILE && calls_any(loop->a, dd, 1, 1));
}

static void note_recorded(Node *n)
{
    for (int i = 0; i < G->ckpt.nnoted; i++)
        if (G->ckpt.noted[i] == n) return;
    if (G->ckpt.nnoted < 64) G->ckpt.noted[G->ckpt.nnoted++] = n;
    err_note("%s:%d: this loop takes d(...) or reads x@k in its body: it runs recorded, "
            "not checkpointed", G->err.where.chunk ? G->err.where.chunk->filename : "?", n->line);
}

static void running_pop(LoopRec *r)
{
    for (LoopRec **p = &G->ckpt.running; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            return;
        }
}

/* checkpoint(k): its k, 32 without one. */
static int checkpoint_k(Node *n, Env *env)
{
    if (!n->b) return 32;
    Value kv = eval_expr(n->b, env);
    double kk = IS_NUMBER(kv) ? v_primal(kv) : 0;
    v_release(kv);
    if (!(kk >= 1 && kk <= 1e6) || kk != (double)(int)kk)
        err_raise_at(n->b, "checkpoint(k) needs a whole k from 1 to 1000000");
    return (int)kk;
}

/* The record of checkpointed loop statement n, on the running list (an
 * error from here on leaves it to ckpt_abandon). */
static LoopRec *rec_new(Node *n, Env *env, int k)
{
    Node *loop = n->a;
    LoopRec *r = err_calloc(1, sizeof(LoopRec));
    r->side.kind = &loop_kind;
    r->stmt = n;
    r->loop = loop;
    r->is_for = loop->kind == N_FOR;
    r->body = r->is_for ? loop->list[0] : loop->b;
    r->chunk = (Chunk *)G->err.where.chunk;
    ast_chunk_retain(r->chunk);
    r->env = env;
    if (env) env->h.rc++;
    r->k = k;
    r->backend = G->num.backend;
    r->counter = -1;
    r->next = G->ckpt.running;
    G->ckpt.running = r;
    if (r->is_for) {
        add_var(&r->vars, &r->nvars, loop->c);
        r->counter = 0;
    }
    return r;
}

/* What the loop carries and what it only reads, from the syntax tree: its
 * body and condition, and the functions they call by name. */
static void find_carried(LoopRec *r)
{
    Scope body = { NULL, 0 };
    find_assigned(r, r->body, body);
    find_read(r, r->body, body);
    if (!r->is_for) find_read(r, r->loop->a, body);
    /* and the globals and upvalues that the functions it calls (by name)
     * write into and read, transitively */
    for (int i = 0; i < r->ncapt; i++) {
        Value f = *eval_var_slot(r->capt[i], r->env, NULL);
        if (f.t == V_FN && AS_FN(f)->fn) {
            Scope in = { AS_FN(f), 0 };
            find_assigned(r, AS_FN(f)->fn->body, in);
            find_read(r, AS_FN(f)->fn->body, in);
        }
    }
    int w = 0;        /* a global found assigned late is carried, not captured */
    for (int i = 0; i < r->ncapt; i++)
        if (find_var(r->vars, r->nvars, r->capt[i]) < 0) r->capt[w++] = r->capt[i];
    r->ncapt = w;
}

/* Whether n holds a jump out of the step (break, continue, return) or a
 * function literal. */
static int jumps(const Node *n)
{
    if (!n) return 0;
    if (n->kind == N_BREAK || n->kind == N_CONTINUE || n->kind == N_RETURN || n->kind == N_FN) return 1;
    if (jumps(n->a) || jumps(n->b) || jumps(n->c)) return 1;
    for (int i = 0; i < n->n; i++)
        if (jumps(n->list[i])) return 1;
    return 0;
}

/* Every carried variable a name in n names (a read, or for all this
 * knows one: also targets, and the arrays view, row and col are given)
 * is live unless written already. */
static void note_reads(LoopRec *r, const Node *n, const uint8_t *written, uint8_t *live)
{
    if (!n) return;
    if (n->kind == N_NAME || n->kind == N_VERSION) {
        int i = find_var(r->vars, r->nvars, n);
        if (i >= 0 && !written[i]) live[i] = 1;
    }
    note_reads(r, n->a, written, live);
    note_reads(r, n->b, written, live);
    note_reads(r, n->c, written, live);
    for (int i = 0; i < n->n; i++) note_reads(r, n->list[i], written, live);
}

/* Whether a name in n is the array of a view, row or col. */
static int viewed(LoopRec *r, const Node *n, int i)
{
    if (!n) return 0;
    if (n->kind == N_CALL && n->a->kind == N_NAME && (strcmp(n->a->name, "view") == 0
        || strcmp(n->a->name, "row") == 0 || strcmp(n->a->name, "col") == 0)
        && n->n >= 1 && n->list[0]->kind == N_NAME && same_var(n->list[0], r->vars[i])) return 1;
    if (viewed(r, n->a, i) || viewed(r, n->b, i) || viewed(r, n->c, i)) return 1;
    for (int k = 0; k < n->n; k++)
        if (viewed(r, n->list[k], i)) return 1;
    return 0;
}

/* The carried variables each step assigns (`v = e`, a statement of the
 * body's own) before anything reads them: their values at a step's start
 * are never read, so the states between steps need not hold them, nor
 * the recomputed segments make leaves of them (ode's k1 ... k4). Only a
 * for loop's (a while loop's last step may be a failing test), only the
 * locals of a function that makes no closures (nothing else can read
 * them), and only up to the first statement that may leave the step
 * (after it the step may end with the variable unwritten) or makes a
 * function; a variable a view, row or col is given stays carried. */
static void find_dead(LoopRec *r)
{
    if (!r->is_for || !r->env || !r->env->fn || r->env->fn->captures || r->nvars < 2) return;
    Node *b = r->body, **stmts = b->kind == N_BLOCK ? b->list : &b;
    int ns = b->kind == N_BLOCK ? b->n : 1, any = 0;
    uint8_t *written = err_calloc((size_t)r->nvars, 1), *live = err_calloc((size_t)r->nvars, 1);
    for (int k = 0; k < ns; k++) {
        Node *st = stmts[k];
        if (jumps(st)) break;
        if (st->kind == N_ASSIGN && st->a->kind == N_NAME) {
            note_reads(r, st->b, written, live);
            int i = find_var(r->vars, r->nvars, st->a);
            if (i >= 0 && !live[i]) written[i] = 1;
            continue;
        }
        note_reads(r, st, written, live);
    }
    for (int i = 0; i < r->nvars; i++) {
        written[i] = written[i] && i != r->counter && r->vars[i]->ref == REF_LOCAL && !viewed(r, r->body, i);   /* in this order: viewed last */
        any |= written[i];
    }
    free(live);
    if (any) r->dead = written;
    else free(written);
}

/* An array the body only reads, kept by content (a view made inside may
 * write it), once a storage. */
static void capture_storage(LoopRec *r, Storage *s)
{
    for (int k = 0; k < r->ncst; k++)
        if (r->cst[k] == s) return;
    r->cst = err_realloc(r->cst, sizeof(Storage *) * (size_t)(r->ncst + 1));
    r->cstf = err_realloc(r->cstf, (size_t)(r->ncst + 1));
    r->cstf[r->ncst] = (uint8_t)s->aliased;
    r->cstv = err_realloc(r->cstv, sizeof(Value *) * (size_t)(r->ncst + 1));
    r->cstv[r->ncst] = err_malloc(sizeof(Value) * (size_t)(s->n ? s->n : 1));
    r->cstk = err_realloc(r->cstk, (size_t)(r->ncst + 1));
    r->cstk[r->ncst] = 0;         /* found by the first reversal (recomp_begin) */
    for (int j = 0; j < s->n; j++) {
        r->cstv[r->ncst][j] = s->v[j];
        v_retain(s->v[j]);
    }
    r->cst[r->ncst++] = s;
    s->h.rc++;
}

/* The values the body only reads, as they are at loop start; 1 (and no
 * arrays kept) if the loop meets forward-mode tangents. */
static int capture_reads(LoopRec *r)
{
    r->captv = err_calloc((size_t)(r->ncapt ? r->ncapt : 1), sizeof(Value));
    int duals = 0;
    for (int i = 0; i < r->ncapt; i++) {
        r->captv[i] = *eval_var_slot(r->capt[i], r->env, NULL);
        duals |= has_dual(r->captv[i]);
        v_retain(r->captv[i]);
    }
    for (int i = 0; i < r->nvars; i++) duals |= has_dual(*var_at(r, i));
    for (int i = 0; i < r->ncapt && !duals; i++) {
        Value c = r->captv[i];
        if (c.t == V_ARR || c.t == V_VIEW) capture_storage(r, seq_storage(c));
    }
    return duals;
}

/* Whether any number the loop starts from is recorded: what it carries and
 * what it only reads (numbers and arrays' contents), the OP_CKPT entry's
 * inputs. A loop whose inputs are all constants runs as the plain loop: no
 * derivative can reach through it, and its checkpoint would put leaves and
 * carries on the tape that the plain loop does not record (in a function
 * that keeps no versions, none at all), e.g. every primal of a program
 * written with checkpointed loops. The plain loop is the reference the
 * checkpointed one must match, so nothing changes but the tape's size. */
static int starts_recorded(LoopRec *r)
{
    Flat f;
    flatten_live(r, &f, 1);
    int rec = 0;
    for (uint32_t j = 0; j < f.n && !rec; j++) rec = f.slot[j]->id != 0;
    flat_free(&f);
    for (int i = 0; i < r->ncapt && !rec; i++) rec = r->captv[i].t == V_NUM && r->captv[i].id;
    for (int i = 0; i < r->ncst && !rec; i++)
        for (int j = 0; j < r->cst[i]->n && !rec; j++) rec = r->cstv[i][j].id != 0;
    return rec;
}

/* Each carried variable's count of versions before the loop (scratch). */
static int *version_counts(LoopRec *r)
{
    int *count0 = err_scratch(sizeof(int) * (size_t)(r->nvars ? r->nvars : 1));
    for (int i = 0; i < r->nvars; i++) {
        VerLog *log;
        eval_var_slot(r->vars[i], r->env, &log);
        count0[i] = log ? log->count : 0;
    }
    return count0;
}

/* The state before step t is kept when t is a multiple of the spacing;
 * past k states, every other one goes and the spacing doubles. */
static void keep_state(LoopRec *r, uint64_t t, uint64_t *spacing)
{
    if (t == 0 || t % *spacing != 0) return;
    add_state(r, snapshot(r, t, 0));
    if (r->nstates <= r->k) return;
    int w = 1;
    for (int m = 1; m < r->nstates; m++) {
        if (r->states[m]->step % (2 * *spacing) == 0) r->states[w++] = r->states[m];
        else state_free(r->states[m], r->nvars);
    }
    r->nstates = w;
    *spacing *= 2;
}

/* Runs the loop unrecorded (a for loop up to hi), keeping states; returns
 * the steps it ran, and in *last_test whether a while test ended it. */
static uint64_t run_forward(LoopRec *r, double hi, int *last_test)
{
    int saved_mode = G->ckpt.mode;
    Env *saved_env = G->ckpt.env;
    uint32_t saved_born = G->ckpt.born;
    G->ckpt.mode = 1;
    G->ckpt.env = r->env;
    G->ckpt.born = G->value.env_made;
    rec_off();
    uint64_t t = 0, spacing = 1;
    *last_test = 0;
    LoopFloor floor = reclaim_loop_begin();   /* what recording functions leave between steps */
    for (;;) {
        reclaim_loop_step(&floor);
        if (r->is_for && r->lo + (double)t >= hi) break;
        keep_state(r, t, &spacing);
        int code = run_step(r, t);
        if (code < 0) {     /* the test that ended it is a step too: it may */
            *last_test = 1; /* write or draw, so recomputation runs it */
            break;
        }
        t++;
        G->ckpt.steps_run++;
        if (code == EXEC_BREAK) break;
    }
    G->ckpt.mode = saved_mode;
    G->ckpt.env = saved_env;
    G->ckpt.born = saved_born;
    rec_on();
    return t;
}

/* The loop's entry (t steps) and its outputs on the tape, and one new
 * version for each variable it assigned (count0: their counts before). */
static void record_loop(LoopRec *r, int *count0, uint32_t n0, uint64_t t, int near)
{
    Flat f;
    flatten_live(r, &f, 1);
    for (uint32_t j = 0; j < f.n; j++)
        if (f.slot[j]->t != V_NUM) {     /* r stays G->ckpt.running: ckpt_abandon frees it */
            flat_free(&f);
            err_scratch_free(count0);
            no_tangents(r);
        }
    r->nout = f.n;
    running_pop(r);                      /* from here on the tape owns it */
    uint32_t side = tape_side_add(&r->side);
    uint32_t entry = tape_push(OP_CKPT, side, 0, (double)t);
    if (near) kink_note_loop(entry);
    /* a number the loop never wrote still names the entry it had (or one it
     * copied from before the loop): it stays that entry, as in the plain
     * loop; the others are the loop's outputs */
    for (uint32_t j = 0; j < f.n; j++)
        if (!f.slot[j]->id || f.slot[j]->id >= n0)
            f.slot[j]->id = tape_push(OP_CKOUT, entry, j, f.slot[j]->u.n);
    flat_free(&f);
    int scope = !r->env || r->env->vers;
    for (int i = 0; i < r->nvars; i++) {
        if (i == r->counter) continue;
        VerLog *log;
        Value *v = eval_var_slot(r->vars[i], r->env, &log);
        if (!log || !scope || v->t == V_UNDEF || log->count == count0[i]) continue;   /* not assigned */
        version_log_mark_inner(log, count0[i] + 1, log->count);
        /* a number becomes the variable's next version; an array's version
         * is counted, its written elements are places (labelled below), and
         * those it did not write stay the entries they were */
        if (v->t == V_NUM) version_bind(log, v);
        else version_count_as(log, v);
    }
    flatten_live(r, &f, 1);                 /* views' storages: every output is a place */
    for (uint32_t j = 0; j < f.n; j++)
        if (f.slot[j]->id > entry && !tape_labeled(f.slot[j]->id)) rec_label(f.slot[j]->id);
    flat_free(&f);
}

/* Phases: the record and what the loop carries (syntax tree), what it
 * reads (captured), the unrecorded run with its saved states, then the
 * loop's entries on the tape. */
int ckpt_exec(Node *n, Env *env)
{
    Node *loop = n->a;
    if (!G->tape.recording || G->ckpt.mode) return eval_exec(loop, env);   /* nothing to record */
    if (loop->kind == N_FOR && !loop->b)
        err_raise_at(loop, "checkpoint for needs a range: write for i in 0..len(%s) and read the element by index",
                    loop->a->kind == N_NAME ? loop->a->name : "a");
    if (reaches_back(loop)) {
        note_recorded(n);
        return eval_exec(loop, env);
    }
    LoopRec *r = rec_new(n, env, checkpoint_k(n, env));
    find_carried(r);
    if (capture_reads(r)) {     /* forward mode (jvp) carries tangents: run the loop as it is */
        running_pop(r);
        rec_release(&r->side);
        return eval_exec(loop, env);
    }
    if (!starts_recorded(r)) {  /* only constants go in */
        running_pop(r);
        rec_release(&r->side);
        return run_plain(loop, env);
    }
    /* (looked for only now: a loop over constants, run plain above, needs
     * no answer, and the walk's name tests cost ode's primal 3%) */
    r->taped = takes_derivatives(r->body) || (!r->is_for && takes_derivatives(r->loop->a));
    double hi = 0;
    if (r->is_for) {
        r->lo = eval_range_bound(loop->a, env);
        hi = eval_range_bound(loop->b, env);
    }
    find_dead(r);
    add_state(r, snapshot(r, 0, 1));
    int *count0 = version_counts(r);
    uint32_t clears = G->tape.clears, n0 = tape_size();
    int last_test, near = G->ckpt.near;
    G->ckpt.near = 0;
    uint64_t t = run_forward(r, hi, &last_test);
    r->T = t + (uint64_t)last_test;
    int met = G->ckpt.near;
    G->ckpt.near = near;
    if (G->tape.clears != clears) {       /* :tape clear inside: nothing to record */
        err_scratch_free(count0);
        running_pop(r);
        rec_release(&r->side);
        return EXEC_NORMAL;
    }
    record_loop(r, count0, n0, t, met);
    err_scratch_free(count0);
    return EXEC_NORMAL;
}

/* ------------------------------------------------------------- upkeep */

void ckpt_abandon(void)
{
    while (G->ckpt.recomps) recomp_end(G->ckpt.recomps);
    while (G->ckpt.running) {
        LoopRec *r = G->ckpt.running;
        G->ckpt.running = r->next;
        rec_release(&r->side);
    }
    G->ckpt.mode = 0;
    G->ckpt.env = NULL;
}

void ckpt_visit_roots(void (*visit)(Value))
{
    for (LoopRec *r = G->ckpt.running; r; r = r->next) {
        rec_each_value(&r->side, visit);
        for (int i = 0; i < r->nheld; i++) visit(obj_val(V_ARR, r->held[i]));
    }
    for (Recomp *S = G->ckpt.recomps; S; S = S->outer) {
        for (int i = 0; i < S->r->nheld; i++) visit(obj_val(V_ARR, S->r->held[i]));
        for (int i = 0; i < S->r->nvars; i++) visit(S->vars[i]);
        for (int i = 0; i < S->r->ncapt; i++) visit(S->capt[i]);
        for (int i = 0; i < S->ndirty; i++) {
            visit(obj_val(V_ARR, S->dirty[i].s));
            for (int j = 0; j < S->dirty[i].n; j++) visit(S->dirty[i].v[j]);
        }
        for (int m = 0; m < S->ntmp; m++) {
            for (int i = 0; i < S->r->nvars; i++) visit(S->tmp[m]->vars[i].v);
            for (int i = 0; i < S->tmp[m]->nst; i++) visit(obj_val(V_ARR, S->tmp[m]->st[i]));
        }
    }
}

void ckpt_init(void)
{
    G->sweep.loop_hooks.outputs = hook_outputs;
    G->sweep.loop_hooks.reverse = hook_reverse;
    G->sweep.loop_hooks.rerun = hook_rerun;
    G->kinks.rerun = hook_branches;
}
