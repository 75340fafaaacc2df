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
#include "sweep.h"
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
        if (s->known == KNOWN_CONSTS) break;     /* numbers of id 0 alone */
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

static inline void mark_root(Pass *p, uint32_t id)
{
    p->roots++;
    if (id >= p->lo && id < p->n) p->live[id - p->lo] = 1;
    else if (id >= p->n) err_raise("internal error: a number names tape entry #%u beyond the tape (please report)", id);
}

static void mark_id(uint32_t *id, void *pp) { mark_root(pp, *id); }

/* An array whose elements are a run of entries (Storage.fresh, as its
 * first and last ids still say: numbers all, ids fresh .. fresh + n - 1,
 * none 0; a gradient of 160000 numbers kept at the top level) marked as
 * the range of them, with no look at the elements between: 0 if s is
 * not known so. */
static int object_marks_run(const Storage *s, Pass *p)
{
    uint32_t n = (uint32_t)s->n, first = s->fresh;
    if (!eval_fast_paths || !first || n < 2 || !(s->known & KNOWN_NOHEAP) || s->v[0].id != first
        || s->v[n - 1].id != first + n - 1)
        return 0;
    value_known_check(s);      /* (SAN build: the ids between too) */
    if (first + n - 1 >= p->n) err_raise("internal error: a number names tape entry #%u beyond the tape (please report)", first + n - 1);
    uint32_t lo = first > p->lo ? first : p->lo, hi = first + n;     /* [lo, hi): the run's part in the pass */
    if (lo < hi) memset(p->live + (lo - p->lo), 1, hi - lo);
    p->roots += n;
    return 1;
}

/* The roots: every id held outside the tape. An array's elements are
 * marked in one loop, and an array known to hold constants alone
 * (Storage.known) holds no id to mark. */
static void object_marks(Obj *o, void *pp)
{
    if (o->type != V_ARR) {
        Walk w = { mark_id, pp };
        object_ids(o, &w);
        return;
    }
    Storage *s = (Storage *)o;
    if (s->known == KNOWN_CONSTS) {
        value_known_check(s);
        return;
    }
    Pass *p = pp;
    if (object_marks_run(s, p)) return;
    uint8_t *live = p->live;      /* (in locals: a byte stored may alias anything) */
    const Value *v = s->v;
    uint32_t lo = p->lo, span = p->n - lo, named = 0, n = (uint32_t)s->n;
    for (uint32_t i = 0; i < n; i++) {
        if (v[i].t != V_NUM) continue;
        uint32_t id = v[i].id;
        if (id - lo < span) {       /* (lo > 0: not id 0) */
            live[id - lo] = 1;
            named++;
        } else if (id) {
            named++;
            if (id >= p->n) err_raise("internal error: a number names tape entry #%u beyond the tape (please report)", id);
        }
    }
    p->roots += named;
}

static void mark_roots(Pass *p)
{
    if (G->reclaim.eval_roots) G->reclaim.eval_roots(mark_id, p);
    kink_each_root(mark_id, p);
    gc_each_object(object_marks, p);
}

/* live[]: 0 not reached, 1 marked, 2 visited (its operands marked). Almost
 * every operand lies below its reader, so one pass down the tape visits
 * each marked entry once. The exceptions point up (a d call's expansion, a
 * fixed point's g results): an id marked above where the pass is goes on a
 * stack and is visited at once, its own operands likewise. So nothing
 * below `at` has been visited, and marking an entry there, or a run of
 * them, is storing 1s: a run of operands is marked as a range, never id
 * by id. A run of constant entries (TAPE_RUN_CONSTS) is marked 2 at once
 * (a constant has no operands: nothing to visit), and the pass steps over
 * eight bytes at a time with nothing left to visit (bit 0 clear): below
 * `at` a byte is 0, 1 or 2, or 3 for a constant marked both ways. */
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

/* id lies below `at` (an operand of the entry at `at`, or of a run there). */
static inline void mark_below(Pass *p, uint32_t id)
{
    if (id >= p->lo) p->live[id - p->lo] = 1;
}

/* Entries first .. first + n - 1, all below `at`, marked `how`: 1, or 2
 * for constant entries. */
static void mark_range_below(Pass *p, uint32_t first, uint32_t n, int how)
{
    if (first < p->lo) {
        if (first + n <= p->lo) return;
        n -= p->lo - first;
        first = p->lo;
    }
    memset(p->live + (first - p->lo), how, n);
}

/* Eight live bytes at a time (bytes of 0, 1 and 2 never carry into each
 * other's bits by the shifts and ors below). */
#define BYTES_ONE 0x0101010101010101ull
static inline uint64_t load8(const uint8_t *b) { uint64_t w; memcpy(&w, b, 8); return w; }
static inline void store8(uint8_t *b, uint64_t w) { memcpy(b, &w, 8); }
/* The first `left` bytes of a word (all of it from 8 on): a run's last
 * word, whose other bytes (the entries above it, or the eight bytes of
 * padding after the last entry's) are stored back as they were. */
static inline uint64_t tail_mask(uint32_t left) { return left >= 8 ? ~0ull : (1ull << (8 * left)) - 1; }

/* A run's element j reads first + j: each operand of a visited element
 * (its byte 2) marked, 1 or (constants, shift 1) 2 ored in (the elements'
 * bytes are 0 or 2 by now; the operands lie below the run, 0 to 3). */
static inline __attribute__((always_inline)) void mark_run_operand(Pass *p, uint32_t first, const uint8_t *elems, uint32_t n, int shift)
{
    if (first < p->lo) {        /* the operands below the floor are not the pass's */
        if (first + n <= p->lo) return;
        elems += p->lo - first;
        n -= p->lo - first;
        first = p->lo;
    }
    uint8_t *to = p->live + (first - p->lo);
    for (uint32_t j = 0; j < n; j += 8)
        store8(to + j, load8(to + j) | (load8(elems + j) & tail_mask(n - j)) >> 1 << shift);
}

/* n ids from a list (a sum's terms, a dot's pairs), stored where they lie
 * below `at`. */
static void mark_list(Pass *p, const uint32_t *ids, uint32_t n, int below)
{
    if (!below) {
        for (uint32_t j = 0; j < n; j++) mark_operand(ids[j], p);
        return;
    }
    uint8_t *live = p->live;
    uint32_t lo = p->lo;
    for (uint32_t j = 0; j < n; j++)
        if (ids[j] >= lo) live[ids[j] - lo] = 1;
}

static inline int run_seq(uint8_t kind) { return kind == TAPE_RUN_SEQ || kind == TAPE_RUN_CONSTS; }
static inline int run_how(uint8_t kind) { return kind == TAPE_RUN_CONSTS ? 2 : 1; }

/* An operand of a run of at most 8 elements, those marked the bytes of 1
 * in e. */
static inline void mark_word(Pass *p, uint8_t kind, uint32_t first, uint64_t e)
{
    if (kind == TAPE_RUN_ONE) {
        mark_below(p, first);
        return;
    }
    if (!run_seq(kind)) return;
    e <<= run_how(kind) - 1;
    if (first < p->lo) {        /* the operands below the floor are not the pass's */
        if (p->lo - first >= 8) return;
        e >>= 8 * (p->lo - first);
        first = p->lo;
    }
    uint8_t *to = p->live + (first - p->lo);
    store8(to, load8(to) | e);
}

/* A live d call keeps its expansion's results. */
static void mark_expansion(Pass *p, uint32_t call)
{
    uint32_t n, first;
    const uint32_t *res = tape_call_expansion(call, &n, &first);
    if (first < p->lo) return;
    for (uint32_t w = 0; w < n; w++) mark_operand(res[w], p);
}

/* Entry i, marked: its operands marked. Below (i at `at`, where the pass
 * is) they are stored; above (an entry from the stack) an operand marked
 * above `at` is pushed. */
static void visit(Pass *p, uint32_t i)
{
    p->live[i - p->lo] = 2;
    int op = tape_opcode(i), below = i <= p->at;
    if (__builtin_expect(num_op_arity[op] >= 0 && !num_op_side[op], 1)) {   /* the common case, inline */
        if (num_op_arity[op] == 0) return;
        uint32_t a = tape_a(i);
        if (a >= p->lo && !p->live[a - p->lo]) p->live[a - p->lo] = 1;   /* below i: the pass comes to it */
        if (num_op_arity[op] == 2) {
            uint32_t b = tape_b(i);
            if (b >= p->lo && !p->live[b - p->lo]) p->live[b - p->lo] = 1;
        }
        if (__builtin_expect(!below, 0)) {    /* visited from the stack: operands may lie above `at` */
            if (a > p->at && p->live[a - p->lo] == 1) push_up(p, a);
            if (num_op_arity[op] == 2 && tape_b(i) > p->at && p->live[tape_b(i) - p->lo] == 1) push_up(p, tape_b(i));
        }
        return;
    }
    OPS_NAMED(OPS_STRUCTURAL, 10);    /* const, leaf, carry above; ckpt, fixin, fixpt by tape_each_operand */
    switch (op) {
    case OP_SUM: case OP_LSE: {
        TapeTerms t = op == OP_SUM ? tape_terms(i) : tape_lse(i).t;
        if (t.list) mark_list(p, t.list, t.n, below);
        else if (below) mark_range_below(p, t.first, t.n, 1);
        else
            for (uint32_t j = 0; j < t.n; j++) mark_operand(t.first + j, p);
        return;
    }
    case OP_DOT: {
        uint32_t n;
        const uint32_t *pairs = tape_pairs(i, &n);
        mark_list(p, pairs, 2 * n, below);
        return;
    }
    case OP_DERIV: {
        /* one d call with n places has n entries that all read its y and
         * its n places: mark them once a call, or n entries cost n^2 */
        uint32_t call = tape_deriv_call_of(i, NULL);
        if (call < p->calls_lo || p->call_seen[call - p->calls_lo]) return;
        p->call_seen[call - p->calls_lo] = 1;
        const DerivRec *r = tape_deriv_call(call);
        mark_operand(r->y, p);
        if (r->wrt_run && below) mark_range_below(p, r->wrt_off, r->nwrt, 1);
        else
            for (uint32_t j = 0; j < r->nwrt; j++) mark_operand(tape_deriv_wrt(r, j), p);
        tape_each_extra_id(i, mark_extra, p);
        mark_expansion(p, call);
        return;
    }
    default:
        tape_each_operand(i, mark_operand, p);
        tape_each_extra_id(i, mark_extra, p);
    }
}

/* An array run (tape.h) whose top the pass reached, whole above the
 * floor: its elements and operands are runs of live bytes, taken eight at
 * a time: an operand run is marked where the run's elements are (or
 * whole), never id by id. A product's elements read every element of
 * both factors between them: if one is live, both factors are kept whole
 * (a live product element is nearly always one of many). Returns 0 to
 * leave it to the per-entry visits. */
#ifdef __SANITIZE_ADDRESS__
/* The SAN build checks that a run's record says what its entries do (the
 * pass marks by the record): element j reads a + j, a, or nothing as its
 * operand's kind says, and a run of constants is constant entries. */
static void run_check(const Pass *p, const TapeRun *r)
{
    for (int s = 0; s < 2; s++) {
        uint8_t kind = s ? r->kb : r->ka;
        uint32_t first = s ? r->b : r->a, len = r->kind == TAPE_RUN_MATMUL ? (s ? r->inner * (r->n / r->rows) : r->rows * r->inner) : r->n;
        if (kind == TAPE_RUN_CONSTS)
            for (uint32_t j = 0; j < len; j++)
                if (first + j >= p->lo && tape_opcode(first + j) != OP_CONST)
                    err_raise("internal error: array run at #%u: its constants' #%u is no constant (please report)", r->base, first + j);
        if (r->kind == TAPE_RUN_MATMUL || kind == TAPE_RUN_LIST) continue;     /* a LIST's ids are its entries' */
        uint32_t cols = r->kind == TAPE_RUN_ROWS ? r->inner : r->n, step = s ? r->sb : r->sa;
        for (uint32_t j = 0; j < r->n; j++) {
            uint32_t at = r->kind == TAPE_RUN_ROWS ? (j / cols) * step + j % cols : j;     /* a ROWS run's element (i, c): i step + c */
            uint32_t want = kind == TAPE_RUN_SEQ || kind == TAPE_RUN_CONSTS ? first + at : kind == TAPE_RUN_ONE ? first : 0;
            if ((s ? tape_b(r->base + j) : tape_a(r->base + j)) != want)
                err_raise("internal error: array run at #%u: element %u does not read what its record says (please report)", r->base, j);
        }
    }
}
#endif

static int visit_run(Pass *p, const TapeRun *r)
{
    /* a block of constants (arrayrun.c) has no operand to mark, and its
     * entries may be visited already (a CONSTS operand's marks): the
     * per-entry visits pass them; so do an elementwise run's LIST
     * operand's ids, which are its entries' */
    if (r->base < p->lo || (r->kind == TAPE_RUN_ELEMWISE && r->op == OP_CONST)) return 0;
    if (r->kind == TAPE_RUN_ELEMWISE && (r->ka == TAPE_RUN_LIST || r->kb == TAPE_RUN_LIST)) return 0;
#ifdef __SANITIZE_ADDRESS__
    run_check(p, r);
#endif
    uint8_t *live = p->live + (r->base - p->lo);
    if (r->n <= 8 && r->kind == TAPE_RUN_ELEMWISE) {    /* one word (a short run: a row, a small array) */
        uint64_t w = load8(live), e = w & tail_mask(r->n);
        if (!e) return 1;
        store8(live, w + e);       /* marked (1): visited (2) */
        mark_word(p, r->ka, r->a, e);
        mark_word(p, r->kb, r->b, e);
        return 1;
    }
    uint64_t any = 0;
    for (uint32_t j = 0; j < r->n; j += 8) {    /* marked (1): visited (2) */
        uint64_t w = load8(live + j), m = tail_mask(r->n - j);
        any |= w & m;
        store8(live + j, (w & ~m) | (w & m) << 1);
    }
    if (!any) return 1;
    if (r->kind == TAPE_RUN_ROWS) {      /* row i's operands: a SEQ's from a + i sa on */
        for (uint32_t i = 0; i < r->rows; i++) {
            const uint8_t *row = live + i * r->inner;
            if (r->ka == TAPE_RUN_SEQ) mark_run_operand(p, r->a + i * r->sa, row, r->inner, 0);
            if (r->kb == TAPE_RUN_SEQ) mark_run_operand(p, r->b + i * r->sb, row, r->inner, 0);
        }
        if (r->ka == TAPE_RUN_ONE) mark_below(p, r->a);
        if (r->kb == TAPE_RUN_ONE) mark_below(p, r->b);
    } else if (r->kind == TAPE_RUN_MATMUL) {
        uint32_t cols = r->n / r->rows, k;
        const uint32_t *pairs;
        if (run_seq(r->ka)) mark_range_below(p, r->a, r->rows * r->inner, run_how(r->ka));
        else if (r->ka == TAPE_RUN_LIST)    /* A's row i: element (i, 0)'s pairs */
            for (uint32_t i = 0; i < r->rows; i++) {
                pairs = tape_pairs(r->base + i * cols, &k);
                for (uint32_t t = 0; t < k; t++) mark_below(p, pairs[2 * t]);
            }
        if (run_seq(r->kb)) mark_range_below(p, r->b, r->inner * cols, run_how(r->kb));
        else if (r->kb == TAPE_RUN_LIST)    /* B's column j: element (0, j)'s pairs */
            for (uint32_t c = 0; c < cols; c++) {
                pairs = tape_pairs(r->base + c, &k);
                for (uint32_t t = 0; t < k; t++) mark_below(p, pairs[2 * t + 1]);
            }
    } else {
        if (run_seq(r->ka)) mark_run_operand(p, r->a, live, r->n, run_how(r->ka) - 1);
        else if (r->ka == TAPE_RUN_ONE) mark_below(p, r->a);
        if (run_seq(r->kb)) mark_run_operand(p, r->b, live, r->n, run_how(r->kb) - 1);
        else if (r->kb == TAPE_RUN_ONE) mark_below(p, r->b);
    }
    return 1;
}

/* A packed deriv entry's code but for its place (tape.h): its op byte
 * without the label flag, and its call less its chunk's base. */
#define DERIV_CALL_BITS (TAPE_PACKED | ((TAPE_PACKED_CALLS - 1) << 8) | TAPE_OPMASK | TAPE_WIDE)

/* The code of an entry that reads no entry (a leaf, a constant: not
 * wide, both operand fields 0) has none of these bits. */
#define NULLARY_NOT (0xFFFFFF00u | TAPE_WIDE)

/* The entries of [seg, i) left to visit (bit 0), from the top: an entry
 * whose fields are its operands (no wide-table slot: nullary, unary,
 * binary) decoded here, and a d call's entry after its call's first
 * passed here; the rest visited with what they push. Eight bytes with
 * nothing to visit are passed at once, and so are the nullary entries
 * below a nullary one and the entries of a d call below one of its
 * entries once the call's operands are marked: visiting them does
 * nothing (their bytes stay 1 if marked: an entry pushed later for its
 * 1 is visited again, for nothing). */
static void visit_down(Pass *p, uint32_t seg, uint32_t i)
{
    const TapeTables *t = &G->tape.tables;
    const uint32_t *code = G->tape.code;
    uint8_t *live = p->live;      /* (in locals: a byte stored may alias anything) */
    uint32_t lo = p->lo;      /* seg >= lo */
    while (i > seg) {
        if (!(live[--i - lo] & 1)) {     /* to the next byte below with its bit 0 set */
            while (i - seg >= 8) {
                uint64_t w = load8(live + (i - 8 - lo)) & BYTES_ONE;
                if (w) {
                    i = i - 7 + ((63 - __builtin_clzll(w)) >> 3);
                    break;
                }
                i -= 8;
            }
            continue;
        }
        uint32_t c = code[i];
        if (__builtin_expect(!(c & TAPE_WIDE), 1)) {
            uint32_t fa = (c >> 8) & 0xfff, fb = c >> 20, a, b;
            live[i - lo] = 2;
            if (fa && (a = tape_field_in(t, i, fa)) >= lo) live[a - lo] = 1;
            if (fb && (b = tape_field_in(t, i, fb)) >= lo) live[b - lo] = 1;
            if (!(fa | fb)) {   /* it reads nothing: nor may those below it */
                while (i - seg >= 4 && !((code[i - 1] | code[i - 2] | code[i - 3] | code[i - 4]) & NULLARY_NOT)) i -= 4;
                while (i > seg && !(code[i - 1] & NULLARY_NOT)) i--;
            }
            continue;
        }
        if (c & TAPE_PACKED) {      /* a deriv entry */
            uint32_t call = tape_deriv_call_of(i, NULL);
            if (call >= p->calls_lo && p->call_seen[call - p->calls_lo]) {
                /* and the call's entries below it in its chunk, which
                 * differ from it in their place alone (a gradient's) */
                uint32_t chunk = i & ~((1u << TAPE_CHUNK_BITS) - 1);
                uint32_t stop = chunk > seg ? chunk : seg;
                live[i - lo] = 2;
                while (i - stop >= 4 && !(((code[i - 1] ^ c) | (code[i - 2] ^ c) | (code[i - 3] ^ c) | (code[i - 4] ^ c)) & DERIV_CALL_BITS)) i -= 4;
                while (i > stop && !((code[i - 1] ^ c) & DERIV_CALL_BITS)) i--;
                continue;
            }
        }
        p->at = i;
        visit(p, i);
        while (p->nstack) {
            uint32_t j = p->stack[--p->nstack];
            if (p->live[j - p->lo] == 1) visit(p, j);
        }
    }
}

static void mark_from_roots(Pass *p, TapeMark floor)
{
    p->at = p->n;
    p->calls_lo = floor.nderivs;
    for (uint32_t call = 0; call < floor.nderivs; call++)   /* entries below the floor count as live */
        mark_expansion(p, call);
    /* the next array run down; the entries between runs take the loop
     * below as if there were none */
    const TapeRun *runs = G->tape.runs;
    int32_t rk = G->tape.nruns ? tape_run_below(p->n - 1) : -1;
    uint32_t rtop = rk >= 0 ? runs[rk].base + runs[rk].n - 1 : 0;
    uint32_t i = p->n;       /* entries below i are still to pass */
    while (i > p->lo) {
        if (i - 1 == rtop) {
            const TapeRun *r = &runs[rk--];
            rtop = rk >= 0 ? runs[rk].base + runs[rk].n - 1 : 0;
            p->at = i - 1;
            if (visit_run(p, r)) {
                i = p->at = r->base;     /* marked later, an element is pushed and visited alone */
                continue;
            }
        }
        uint32_t seg = rtop >= p->lo && rtop < i - 1 ? rtop + 1 : p->lo;
        visit_down(p, seg, i);
        i = seg;
    }
    err_scratch_free(p->stack);
    p->stack = NULL;
}

/* Entries of the pass not marked, eight bytes at a time. */
static uint32_t count_dead(const uint8_t *live, uint32_t n)
{
    uint32_t k = 0, kept = 0;
    while (k + 32 <= n) {
        uint64_t acc = 0;       /* each byte counts its lane's marked entries, up to 252 */
        for (uint32_t w = 0; w < 63 && k + 32 <= n; w++, k += 32) {
            uint64_t x0 = load8(live + k), x1 = load8(live + k + 8), x2 = load8(live + k + 16), x3 = load8(live + k + 24);
            acc += ((x0 | x0 >> 1) & BYTES_ONE) + ((x1 | x1 >> 1) & BYTES_ONE)
                 + ((x2 | x2 >> 1) & BYTES_ONE) + ((x3 | x3 >> 1) & BYTES_ONE);
        }
        acc = (acc & 0x00FF00FF00FF00FFull) + (acc >> 8 & 0x00FF00FF00FF00FFull);
        kept += (uint32_t)((acc * 0x0001000100010001ull) >> 48);
    }
    for (; k < n; k++) kept += live[k] != 0;
    return n - kept;
}

/* Whether the pass would move nothing, known without walking the tape: a
 * root that is a result of the d call whose adjoints the sweep keeps makes
 * that call's y and its cone live, and the sweep gave an adjoint only to
 * entries of that cone (sweep_kept_cover). If they and the roots above the
 * sweep (its results) leave under a sixteenth of the pass that could be
 * dead, the pass would find too little to move anything. Only the roots
 * above the sweep are marked for it, in a table of their own. (GradBench's
 * timed grad(f)(x), kept at the top level: the statement's end walked the
 * whole tape to give nothing back.) p->roots: the roots counted. */
static int pass_futile(Pass *p)
{
    SweepCover c;
    if (G->reclaim.stress || !sweep_kept_cover(&c) || c.res_hi <= p->lo || c.res_lo >= p->n) return 0;
    uint64_t budget = (p->n - p->lo) / 16, unreached = sweep_kept_unreached(p->lo, budget);   /* a pass moves nothing under the budget */
    if (unreached >= budget) return 0;          /* (before any walk: llsq's constant factors) */
    uint32_t above = c.top + 1 > p->lo ? c.top + 1 : p->lo;      /* (the results are above the sweep) */
    Pass q = { above, p->n, NULL, NULL, 0, 0, NULL, 0, 0, 0, NULL };
    q.live = err_scratch(p->n - above + 8);
    mark_roots(&q);
    p->roots = q.roots;
    uint32_t id = c.res_lo > above ? c.res_lo : above, to = c.res_hi < p->n ? c.res_hi : p->n;
    while (id < to && !q.live[id - above]) id++;
    int futile = id < to && tape_opcode(id) == OP_DERIV && tape_deriv_call_of(id, NULL) == c.call
                 && unreached + count_dead(q.live, p->n - above) < budget;
    err_scratch_free(q.live);
    return futile;
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
    uint32_t dead = 0;
    if (!pass_futile(&p)) {
        /* everything a pass needs is taken before anything moves, as scratch
         * memory (an error frees it): a pass that fails changes nothing */
        p.live = err_scratch(p.n - p.lo + 8);     /* 8: a run's last word may reach past the last entry */
        p.call_seen = err_scratch(tape_deriv_calls() - floor.nderivs + 1);
        p.roots = 0;
        mark_roots(&p);
        mark_from_roots(&p, floor);
        dead = count_dead(p.live, p.n - p.lo);
    }
    /* moving every entry after a few dead ones would cost more than they
     * hold: under a sixteenth of what the pass looked at waits for a later
     * pass (none dead: nothing moves, no renumbering either) */
    if (dead && (dead >= (p.n - p.lo) / 16 || G->reclaim.stress)) {
        p.newpos = err_scratch_uninit(sizeof(uint32_t) * ((size_t)(p.n - p.lo) + 1));   /* tape_compact fills it */
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
                        G->reclaim.global_versions, G->tape.reclaims };
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
        /* the statement's own passes, the last two running, found little,
         * and an eighth of its entries at least became globals' versions,
         * which keep their cones: a top-level recurrence, whose every step
         * the next one reads (W2's loop: its end walked 3M entries and 1M
         * versions, 14% of its instructions, to give nothing back). The
         * schedule those passes set spaces the next one. (A statement that
         * leaves no versions, a call whose loops found little, still has
         * its end's pass: its frames' entries die there, :time grad(f)(x).) */
        int judged = G->tape.reclaims > m->passes && G->reclaim.poor_passes >= 2 && kept >= above / 8;
        if ((cost > 8 * recorded + 4096 || futile || judged) && !G->reclaim.stress) reclaim_maybe(floor);   /* a small statement in a big session */
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
