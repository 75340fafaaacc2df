/* tapegc.c: marks the live tape entries and has tape.c compact the rest
 * away (see tapegc.h). Marking is one pass down the tape: every operand
 * of an entry comes before it, so once the roots are marked, visiting
 * entries from the top and marking what each live one reads marks the
 * whole cone. Renumbering the roots walks them a second time. */
#include <stdlib.h>
#include <string.h>
#include "tapegc.h"
#include "valuegc.h"
#include "versions.h"
#include "kinks.h"
#include "error.h"
#include "state.h"


LoopFloor reclaim_loop_begin(void) { return (LoopFloor){ tape_mark(), G->reclaim.full_passes, G->tape.epoch }; }

void reclaim_loop_pass(LoopFloor *f)
{
    if (f->full != G->reclaim.full_passes || f->epoch != G->tape.epoch) *f = reclaim_loop_begin();
    reclaim_maybe(f->floor);
}

static int reclaim_moved_below(uint32_t n) { return G->reclaim.lowest_floor < n; }


void reclaim_set_roots(void (*roots)(IdFn fn, void *ud))
{
    G->reclaim.eval_roots = roots;
    const char *s = getenv("WENGERT_RECLAIM_STRESS");
    G->reclaim.stress = s && *s && strcmp(s, "0") != 0;
    reclaim_reset();
}


/* The next pass runs at tape size `at`, or halfway from here to the cap if
 * that comes first: reaching the cap is an error, so passes come closer
 * together as the tape nears it. */
static void schedule(uint64_t at)
{
    uint64_t cap = G->tape.limit / 17, here = tape_size();   /* 17 bytes an entry */
    if (cap > here && here + (cap - here) / 2 < at) at = here + (cap - here) / 2;
    if (G->reclaim.stress) at = 0;
    G->reclaim.next_pass_at = at > 0xF0000000u ? 0xF0000000u : (uint32_t)at;
    G->reclaim.versions_at_schedule = G->reclaim.global_versions;
    G->reclaim.size_at_schedule = (uint32_t)here;
}

void reclaim_reset(void)
{
    G->reclaim.poor_passes = 0;
    schedule((uint64_t)tape_size() + (1u << 16));
}

TapeMark reclaim_everything(void) { return (TapeMark){ 1, 0, 0, 0 }; }

/* ---- every id held outside the tape */

static void value_ids(Value *v, IdFn fn, void *ud)
{
    if (v->t == V_NUM && v->id) fn(&v->id, ud);
}

typedef struct { IdFn fn; void *ud; } Walk;

static void object_ids(Obj *o, void *wp)
{
    Walk *w = wp;
    switch (o->type) {
    case V_ARR: {
        Storage *s = (Storage *)o;
        for (int i = 0; i < s->n; i++) value_ids(&s->v[i], w->fn, w->ud);
        break;
    }
    case V_FN: value_ids(&((Closure *)o)->target, w->fn, w->ud); break;
    case V_DUAL:
        value_ids(&((Dual *)o)->p, w->fn, w->ud);
        if (!(((Dual *)o)->form & DUAL_UNBOXED))     /* unboxed tangents name no entries */
            for (int j = 0; j < ((Dual *)o)->k; j++) value_ids(&((Dual *)o)->t[j], w->fn, w->ud);
        break;
    case V_ENV: {
        Env *e = (Env *)o;
        for (int i = 0; i < e->n; i++) value_ids(&e->slots[i], w->fn, w->ud);
        if (e->vers)
            for (int i = 0; i < e->n; i++) version_log_each_id(&e->vers[i], w->fn, w->ud);
        break;
    }
    default: break;
    }
}

static void each_root(IdFn fn, void *ud)
{
    if (G->reclaim.eval_roots) G->reclaim.eval_roots(fn, ud);
    kink_each_root(fn, ud);
    Walk w = { fn, ud };
    gc_each_object(object_ids, &w);
}

/* ---- marking */

typedef struct Pass {
    uint32_t lo, n;
    uint8_t *live;
    uint32_t *newpos;
    uint64_t roots;
    uint32_t at;        /* where the pass down the tape is: ids above it were passed already */
    uint32_t *stack;    /* marked ids above `at`, still to visit */
    size_t nstack, capstack;
    uint32_t calls_lo;  /* d calls made before the floor: all they read lies below it */
    uint8_t *call_seen; /* d calls from calls_lo on whose operands are marked */
} Pass;


static inline void mark_operand(uint32_t id, void *pp);

static void mark_id(uint32_t *id, void *pp)
{
    Pass *p = pp;
    p->roots++;
    if (*id >= p->lo && *id < p->n) p->live[*id - p->lo] = 1;
    else if (*id >= p->n) err_raise("internal error: a number names tape entry #%u beyond the tape (please report)", *id);
}

/* live[]: 0 not reached, 1 marked, 2 visited (its operands marked). Almost
 * every operand lies below its reader, so one pass down the tape visits
 * each marked entry once. The exceptions point up (a d call's expansion, a
 * fixed point's g results): an id marked above where the pass is goes on a
 * stack and is visited at once, its own operands likewise. */
static void push_up(Pass *p, uint32_t id)
{
    if (p->nstack == p->capstack) {
        size_t cap = p->capstack ? 2 * p->capstack : 256;
        uint32_t *s = err_scratch(sizeof(uint32_t) * cap);
        if (p->nstack) memcpy(s, p->stack, sizeof(uint32_t) * p->nstack);
        err_scratch_free(p->stack);
        p->stack = s;
        p->capstack = cap;
    }
    p->stack[p->nstack++] = id;
}

static inline void mark_operand(uint32_t id, void *pp)
{
    Pass *p = pp;
    if (id < p->lo || id >= p->n || p->live[id - p->lo]) return;
    p->live[id - p->lo] = 1;
    if (id > p->at) push_up(p, id);
}

static void mark_extra(uint32_t *id, void *pp) { mark_operand(*id, pp); }

/* A live d call keeps its expansion's results. */
static void mark_expansion(Pass *p, uint32_t call)
{
    uint32_t n, first;
    const uint32_t *res = tape_call_expansion(call, &n, &first);
    if (first < p->lo) return;
    for (uint32_t w = 0; w < n; w++) mark_operand(res[w], p);
}

static void visit(Pass *p, uint32_t i)
{
    p->live[i - p->lo] = 2;
    int op = tape_opcode(i);
    if (__builtin_expect(num_op_arity[op] > 0 && !num_op_side[op], 1)) {   /* the common case, inline */
        uint32_t a = tape_a(i);
        if (a >= p->lo && !p->live[a - p->lo]) p->live[a - p->lo] = 1;   /* below i: the pass comes to it */
        if (num_op_arity[op] == 2) {
            uint32_t b = tape_b(i);
            if (b >= p->lo && !p->live[b - p->lo]) p->live[b - p->lo] = 1;
        }
        if (__builtin_expect(i > p->at, 0)) {    /* visited from the stack: operands may lie above `at` */
            if (a > p->at && p->live[a - p->lo] == 1) push_up(p, a);
            if (num_op_arity[op] == 2 && tape_b(i) > p->at && p->live[tape_b(i) - p->lo] == 1) push_up(p, tape_b(i));
        }
        return;
    }
    if (op == OP_DERIV) {
        /* one d call with n places has n entries that all read its y and
         * its n places: mark them once a call, or n entries cost n^2 */
        uint32_t call = tape_deriv_call_of(i, NULL);
        if (call < p->calls_lo || p->call_seen[call - p->calls_lo]) return;
        p->call_seen[call - p->calls_lo] = 1;
        tape_each_operand(i, mark_operand, p);
        tape_each_extra_id(i, mark_extra, p);
        mark_expansion(p, call);
        return;
    }
    tape_each_operand(i, mark_operand, p);
    tape_each_extra_id(i, mark_extra, p);
}

/* An array run (tape.h) whose top the pass reached, whole above the
 * floor: its live elements are visited in one loop, their operands read
 * from the run's record instead of each element's code. A product's
 * elements read every element of both factors between them: if one is
 * live, both factors are kept whole (a live product element is nearly
 * always one of many). Returns 0 to leave it to the per-entry visits. */
static int visit_run(Pass *p, const TapeRun *r)
{
    if (r->base < p->lo) return 0;
    uint8_t *live = p->live + (r->base - p->lo);
    int any = 0;
    for (uint32_t j = 0; j < r->n; j++) any |= live[j] == 1;
    if (!any) return 1;
    uint32_t na = r->n, nb = r->n;
    if (r->kind == TAPE_RUN_MATMUL) {
        na = r->rows * r->inner;
        nb = r->inner * (r->n / r->rows);
        for (uint32_t j = 0; j < r->n; j++) live[j] = live[j] ? 2 : 0;
        uint32_t cols = r->n / r->rows, k;
        const uint32_t *pairs;
        if (r->ka != TAPE_RUN_LIST)
            for (uint32_t j = 0; j < na; j++) mark_operand(r->a + j, p);
        else            /* A's row i: element (i, 0)'s pairs */
            for (uint32_t i = 0; i < r->rows; i++) {
                pairs = tape_pairs(r->base + i * cols, &k);
                for (uint32_t t = 0; t < k; t++) mark_operand(pairs[2 * t], p);
            }
        if (r->kb != TAPE_RUN_LIST)
            for (uint32_t j = 0; j < nb; j++) mark_operand(r->b + j, p);
        else            /* B's column j: element (0, j)'s pairs */
            for (uint32_t j = 0; j < cols; j++) {
                pairs = tape_pairs(r->base + j, &k);
                for (uint32_t t = 0; t < k; t++) mark_operand(pairs[2 * t + 1], p);
            }
        return 1;
    }
    int seqa = r->ka == TAPE_RUN_SEQ || r->ka == TAPE_RUN_CONSTS, seqb = r->kb == TAPE_RUN_SEQ || r->kb == TAPE_RUN_CONSTS;
    for (uint32_t j = 0; j < r->n; j++) {
        if (live[j] != 1) continue;
        live[j] = 2;
        if (seqa) mark_operand(r->a + j, p);
        if (seqb) mark_operand(r->b + j, p);
    }
    if (r->ka == TAPE_RUN_ONE) mark_operand(r->a, p);
    if (r->kb == TAPE_RUN_ONE) mark_operand(r->b, p);
    return 1;
}

static void mark_from_roots(Pass *p, TapeMark floor)
{
    each_root(mark_id, p);
    p->at = p->n;
    p->calls_lo = floor.nderivs;
    for (uint32_t call = 0; call < floor.nderivs; call++)   /* entries below the floor count as live */
        mark_expansion(p, call);
    /* the next array run down; the entries between runs take the loop
     * below as if there were none */
    int32_t rk = G->tape.nruns ? tape_run_below(p->n - 1) : -1;
    uint32_t rtop = rk >= 0 ? G->tape.runs[rk].base + G->tape.runs[rk].n - 1 : 0;
    uint32_t i = p->n;       /* entries below i are still to pass */
    while (i > p->lo) {
        if (i - 1 == rtop) {
            const TapeRun *r = &G->tape.runs[rk--];
            rtop = rk >= 0 ? G->tape.runs[rk].base + G->tape.runs[rk].n - 1 : 0;
            p->at = i - 1;
            if (visit_run(p, r)) {
                i = p->at = r->base;     /* marked later, an element is pushed and visited alone */
                continue;
            }
        }
        uint32_t seg = rtop >= p->lo && rtop < i - 1 ? rtop + 1 : p->lo;
        for (; i-- > seg; ) {
            if (p->live[i - p->lo] != 1) continue;
            p->at = i;
            visit(p, i);
            while (p->nstack) {
                uint32_t j = p->stack[--p->nstack];
                if (p->live[j - p->lo] == 1) visit(p, j);
            }
        }
        i = seg;
    }
    err_scratch_free(p->stack);
    p->stack = NULL;
}

static void rewrite_id(uint32_t *id, void *pp)
{
    Pass *p = pp;
    if (*id >= p->lo) *id = p->newpos[*id - p->lo];
}

static uint32_t entry_moved(uint32_t id)
{
    Pass *p = G->reclaim.current;
    if (id < p->lo) return id;
    if (id >= p->n || !p->live[id - p->lo]) return 0;
    return p->newpos[id - p->lo];
}

static uint32_t position_moved(uint32_t pos)
{
    Pass *p = G->reclaim.current;
    if (pos < p->lo) return pos;
    return p->newpos[(pos > p->n ? p->n : pos) - p->lo];
}

uint32_t reclaim_now(TapeMark floor)
{
    Pass p = { floor.n, tape_size(), NULL, NULL, 0, 0, NULL, 0, 0, 0, NULL };
    if (G->tape.busy || p.lo >= p.n) return 0;
    if (p.lo < G->reclaim.lowest_floor) G->reclaim.lowest_floor = p.lo;
    if (p.lo <= 1) G->reclaim.full_passes++;
    /* everything a pass needs is taken before anything moves, as scratch
     * memory (an error frees it): a pass that fails changes nothing */
    p.live = err_scratch(p.n - p.lo);
    p.newpos = err_scratch(sizeof(uint32_t) * ((size_t)(p.n - p.lo) + 1));
    p.call_seen = err_scratch(tape_deriv_calls() - floor.nderivs + 1);
    mark_from_roots(&p, floor);
    uint32_t dead = 0;
    for (uint32_t k = 0; k < p.n - p.lo; k++) dead += !p.live[k];
    /* moving every entry after a few dead ones would cost more than they
     * hold: under a sixteenth of what the pass looked at waits for a later
     * pass (none dead: nothing moves, no renumbering either) */
    if (dead && (dead >= (p.n - p.lo) / 16 || G->reclaim.stress)) {
        tape_compact(floor, p.live, p.newpos);
        each_root(rewrite_id, &p);
        G->reclaim.current = &p;
        kink_renumber(p.lo, entry_moved, position_moved);
        G->reclaim.current = NULL;
    }
    uint32_t gone = p.n - tape_size();
    G->tape.reclaims++;
    G->reclaim.last_roots = p.roots;
    /* the next pass waits until the tape has grown by what this one cost,
     * and by eight times that after two passes running that found little
     * to give back: a loop whose garbage only its next iterations make
     * (c = b * 2 over a big array in a function) finds little on its
     * first pass, and waiting 8x after that one let it grow to 530 MB
     * (tests/lang/reclaim_backoff.wg) */
    uint64_t cost = (uint64_t)(tape_size() - p.lo) + p.roots;
    G->reclaim.poor_passes = gone < (p.n - p.lo) / 4 ? G->reclaim.poor_passes + 1 : 0;
    uint64_t gap = G->reclaim.poor_passes >= 2 ? 8 * cost : cost;
    if (gap < (1u << 16)) gap = 1u << 16;
    schedule((uint64_t)tape_size() + gap);
    err_scratch_free(p.live);
    err_scratch_free(p.newpos);
    err_scratch_free(p.call_seen);
    return gone;
}


/* Ids the global variables' versions hold (since the last :tape clear,
 * which forgets them): a pass walks at least these, so a statement-end
 * pass is priced with them before any pass has counted its roots. */
static uint64_t version_roots(void)
{
    if (G->reclaim.roots_clears != G->tape.clears) {
        G->reclaim.roots_clears = G->tape.clears;
        G->reclaim.roots_base = G->reclaim.global_versions;
    }
    return G->reclaim.global_versions - G->reclaim.roots_base;
}

StatementMark reclaim_statement_begin(void)
{
    StatementMark m = { tape_mark(), G->tape.epoch, tape_size() + G->tape.reclaimed, G->reclaim.lowest_floor,
                        G->reclaim.global_versions };
    G->reclaim.lowest_floor = UINT32_MAX;
    return m;
}

void reclaim_statement_end(const StatementMark *m)
{
    uint64_t recorded = tape_size() + G->tape.reclaimed - m->before;
    int moved = reclaim_moved_below(m->made.n);   /* a pass from its own mark moved only its own entries */
    if (m->epoch == G->tape.epoch && recorded && !G->tape.busy) {   /* (not after a :tape clear) */
        /* a pass inside the statement moved what came before it: the
         * statement's own entries are no longer above its mark */
        TapeMark floor = moved ? reclaim_everything() : m->made;
        uint64_t versions = version_roots(), roots = G->reclaim.last_roots > versions ? G->reclaim.last_roots : versions;
        uint64_t above = tape_size() > floor.n ? tape_size() - floor.n : 0, cost = roots + above;
        /* what became a global's version stays: if the rest is under the
         * sixteenth a pass needs before it moves anything, the pass would
         * walk every root to give nothing back (a loop filling an array) */
        uint64_t kept = G->reclaim.global_versions - m->global_versions;
        int futile = !moved && (above > kept ? above - kept : 0) < above / 16;
        if ((cost > 8 * recorded + 4096 || futile) && !G->reclaim.stress) reclaim_maybe(floor);   /* a small statement in a big session */
        else reclaim_now(floor);
    }
    if (m->outer_lowest < G->reclaim.lowest_floor) G->reclaim.lowest_floor = m->outer_lowest;   /* the enclosing statement's view */
}

void reclaim_maybe(TapeMark floor)
{
    if (__builtin_expect(tape_size() < G->reclaim.next_pass_at, 1)) return;
    if (G->reclaim.seen_epoch != G->tape.epoch) {
        G->reclaim.seen_epoch = G->tape.epoch;
        reclaim_reset();
        return;
    }
    if (G->tape.busy) return;
    /* the tape grew by versions of global variables alone (nearly), which
     * x@k keeps live: a pass would find what the last one left, so it
     * waits for as much growth again (filling and copying arrays at the
     * top level runs no pass that finds nothing) */
    uint64_t grown = tape_size() > G->reclaim.size_at_schedule ? tape_size() - G->reclaim.size_at_schedule : 0;
    uint64_t held = G->reclaim.global_versions - G->reclaim.versions_at_schedule;
    if (!G->reclaim.stress && held > grown - grown / 16) {
        schedule((uint64_t)tape_size() + (G->reclaim.next_pass_at - G->reclaim.size_at_schedule));
        return;
    }
    reclaim_now(floor);
}
