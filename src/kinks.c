/* kinks.c: notes of kinks and near-switch branches (see kinks.h). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kinks.h"
#include "tape.h"
#include "error.h"
#include "state.h"


static void check_epoch(void)
{
    if (G->kinks.epoch != G->tape.epoch) {
        G->kinks.nnotes = G->kinks.npassed = G->kinks.nbranches = 0;
        G->kinks.epoch = G->tape.epoch;
        for (uint32_t i = 0; i < G->kinks.nchunks; i++) ast_chunk_release(G->kinks.chunks[i]);
        G->kinks.nchunks = 0;
        G->kinks.place_hash = 0;     /* (its node's chunk may go) */
    }
}

/* A note names its chunk's nodes when it is shown: the chunk stays until
 * the notes go (the latest one is checked first: notes come in runs). */
static void keep_chunk(const Chunk *c)
{
    if (!c) return;
    for (uint32_t i = G->kinks.nchunks; i-- > 0;)
        if (G->kinks.chunks[i] == c) return;
    if (G->kinks.nchunks == G->kinks.capchunks) {
        __typeof__(G->kinks.capchunks) grown = G->kinks.capchunks ? 2 * G->kinks.capchunks : 8;
        G->kinks.chunks = err_realloc(G->kinks.chunks, sizeof(Chunk *) * grown);
        G->kinks.capchunks = grown;
    }
    ast_chunk_retain((Chunk *)c);
    G->kinks.chunks[G->kinks.nchunks++] = (Chunk *)c;
}

static Note *new_note(void)
{
    check_epoch();
    if (G->kinks.nnotes == G->kinks.capnotes) {
        __typeof__(G->kinks.capnotes) grown = G->kinks.capnotes ? 2 * G->kinks.capnotes : 16;   /* the size is kept only once it is had */
        G->kinks.notes = err_realloc(G->kinks.notes, sizeof(Note) * grown);
        G->kinks.capnotes = grown;
    }
    Note *n = &G->kinks.notes[G->kinks.nnotes++];
    memset(n, 0, sizeof *n);
    return n;
}

/* file:line:col as errors show places (a call by its callee's first
 * character, columns as displayed). */
static const Node *place_node(const Node *n) { return n && n->kind == N_CALL && n->a ? n->a : n; }

static void locate(const Note *note, char *where, int size)
{
    const Node *n = place_node(note->node);
    const Chunk *c = note->chunk;
    if (n && c) snprintf(where, size, "%s:%d:%d", c->filename, n->line, err_display_col(c, n->line, n->col));
    else snprintf(where, size, "?");
}

/* Where a note is kept, from where it was made (the text waits). */
static void place(Note *note, int op, double a, double b, const Node *n, const Chunk *c)
{
    note->op = (uint8_t)op;
    note->backend = (uint8_t)G->num.backend;
    note->a = num_round(a);
    note->b = num_round(b);
    note->node = n;
    note->chunk = c;
    keep_chunk(c);
}

/* An operand as the source shows it: its variable's name, or else its
 * value. */
static void operand(const Node *n, double v, char *buf, int size)
{
    if (n && (n->kind == N_NAME || n->kind == N_VERSION)) snprintf(buf, size, "%s", n->name);
    else num_format(v, buf, size);
}

static int named(const Node *n) { return n && (n->kind == N_NAME || n->kind == N_VERSION); }

/* Whether op is at its kink (its flags, ops.def). */
static int at_kink(int op, double a, double b)
{
    unsigned f = num_op_flags[op];
    if (f & OPF_KINK_AT0) return a == 0;
    if (f & OPF_KINK_WHOLE) return a == floor(a);
    if (f & OPF_KINK_JUMP) { double q = a / b; return isfinite(q) && q == floor(q); }
    return 0;
}

/* An operand entry a branch note keeps: one that depends on something. */
static uint32_t compared(uint32_t id) { return id && tape_opcode(id) != OP_CONST ? id : 0; }

void kink_note_op(int op, double a, double b, uint32_t id)
{
    int tie = (num_op_flags[op] & OPF_TIE) != 0;
    if (tie ? !kink_near(a, b) || !isfinite(a) || !isfinite(b) : !at_kink(op, a, b)) return;
    uint32_t ida = tie ? compared(tape_a(id)) : 0, idb = tie ? compared(tape_b(id)) : 0;
    if (tie && !(ida | idb)) return;
    Note *note = new_note();
    note->id = tie ? tape_size() : id;
    note->branch = note->tie = tie;
    G->kinks.nbranches += tie;
    note->ida = ida;
    note->idb = idb;
    place(note, op, a, b, G->err.where.node, G->err.where.chunk);
}

static const char *cmp_symbol(int op)
{
    static const char *const s[] = { [OP2_LT] = "<", [OP2_LE] = "<=", [OP2_GT] = ">",
                                     [OP2_GE] = ">=", [OP2_EQ] = "==", [OP2_NE] = "!=" };
    return op >= OP2_LT && op <= OP2_NE ? s[op] : "?";
}

void kink_note_branch(const Node *n, const Chunk *c, double x, double y, uint32_t ida, uint32_t idb)
{
    if (G->kinks.branch_hook) G->kinks.branch_hook(n, c, ida, idb);   /* a sparse request records (jacobian.c): any comparison counts */
    if (!kink_near(x, y) || !isfinite(x) || !isfinite(y)) return;
    ida = compared(ida);
    idb = compared(idb);
    if (!(ida | idb)) return;      /* constants: nothing can move it */
    Note *note = new_note();
    note->branch = 1;
    G->kinks.nbranches++;
    note->id = tape_size();
    note->ida = ida;
    note->idb = idb;
    place(note, n->op, x, y, n, c);
}

/* What note k says, made when it is shown: the call or operator that
 * made it, its operands as the source shows them and their values (in
 * the format they were noted in). */
static void describe(const Note *note, char *what, int size)
{
    int was = G->num.backend;
    G->num.backend = note->backend;
    const Node *n = note->node, *na = NULL, *nb = NULL;
    double a = note->a, b = note->b;
    if (note->branch && !note->tie) {
        na = n->a;
        nb = n->b;
    } else if (n && n->kind == N_CALL && n->n >= 1) {
        na = n->list[0];
        if (n->n >= 2) nb = n->list[1];
    } else if (n && n->kind == N_BINOP) {
        na = n->a;
        nb = n->b;
    }
    char xs[48], ys[48], va[40], vb[40];
    operand(na, a, xs, sizeof xs);
    operand(nb, b, ys, sizeof ys);
    num_format(a, va, sizeof va);
    num_format(b, vb, sizeof vb);
    int op = note->op;
    if (note->branch && !note->tie) {
        int len = snprintf(what, size, "a branch within 1e-9 of switching: %s %s %s", xs, cmp_symbol(op), ys);
        if (named(na) || named(nb))
            snprintf(what + len, size - (size_t)len, " with %s%s%s%s%s%s%s",
                     named(na) ? xs : "", named(na) ? " = " : "", named(na) ? va : "",
                     named(na) && named(nb) ? ", " : "",
                     named(nb) ? ys : "", named(nb) ? " = " : "", named(nb) ? vb : "");
    } else if (note->tie) {
        if (a == b) snprintf(what, size, "%s(%s, %s) at a tie, both %s", num_op_names[op], xs, ys, va);
        else snprintf(what, size, "%s(%s, %s) within 1e-9 of a tie, %s and %s", num_op_names[op], xs, ys, va, vb);
    } else if (num_op_flags[op] & OPF_KINK_JUMP)
        snprintf(what, size, "%s %% %s at a jump, %s / %s whole", xs, ys, va, vb);
    else if (named(na)) snprintf(what, size, "%s(%s) at %s = %s", num_op_names[op], xs, xs, va);
    else snprintf(what, size, "%s at %s", num_op_names[op], va);
    G->num.backend = was;
}

/* Whether a note's text shows b's value as well as a's. */
static int shows_b(const Note *n)
{
    if (n->tie) return n->a != n->b;
    return n->branch || (num_op_flags[n->op] & OPF_KINK_JUMP);
}

/* Whether two notes say the same at the same place, text for text. From
 * the same node in the same format the values they show decide (each
 * value prints as its own digits); else their places, then their texts. */
static int same_note(const Note *x, const Note *y)
{
    if (x->node == y->node && x->chunk == y->chunk && x->op == y->op && x->branch == y->branch
        && x->tie == y->tie && x->backend == y->backend)
        return !memcmp(&x->a, &y->a, sizeof x->a) && shows_b(x) == shows_b(y)
               && (!shows_b(x) || !memcmp(&x->b, &y->b, sizeof x->b));
    char wx[128], wy[128];
    const Node *px = place_node(x->node), *py = place_node(y->node);
    if (x->chunk == y->chunk && px && py && (px->line != py->line || px->col != py->col)) return 0;
    locate(x, wx, sizeof wx);
    locate(y, wy, sizeof wy);
    if (strcmp(wx, wy)) return 0;
    char tx[256], ty[256];
    describe(x, tx, sizeof tx);
    describe(y, ty, sizeof ty);
    return !strcmp(tx, ty);
}

void kink_begin(void)
{
    check_epoch();
    if (G->kinks.depth++ == 0) G->kinks.npassed = 0;
}

int kink_watching(void) { return G->kinks.depth > 0; }

/* Whether two notes say the same by their first test in same_note (the
 * same node, operation and format, and the same values shown), and a hash
 * that agrees with it. */
static int same_fast(const Note *x, const Note *y)
{
    return x->node == y->node && x->chunk == y->chunk && x->op == y->op && x->branch == y->branch
           && x->tie == y->tie && x->backend == y->backend && !memcmp(&x->a, &y->a, sizeof x->a)
           && shows_b(x) == shows_b(y) && (!shows_b(x) || !memcmp(&x->b, &y->b, sizeof x->b));
}

static uint32_t mix(uint32_t h, uint64_t v)
{
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    return (h ^ (uint32_t)v ^ (uint32_t)(v >> 32)) * 0x9e3779b1u;
}

static uint32_t fast_hash(const Note *n)
{
    uint64_t a, b = 0;
    memcpy(&a, &n->a, sizeof a);
    if (shows_b(n)) memcpy(&b, &n->b, sizeof b);
    uint32_t h = mix(0x811c9dc5u, (uint64_t)(uintptr_t)n->node);
    h = mix(h, (uint64_t)(uintptr_t)n->chunk);
    h = mix(h, (uint64_t)n->op | (uint64_t)n->branch << 8 | (uint64_t)n->tie << 16 | (uint64_t)n->backend << 24
                   | (uint64_t)shows_b(n) << 32);
    return mix(mix(h, a), b);
}

static uint32_t fnv(uint32_t h, const char *p)
{
    for (; *p; p++) h = (h ^ (unsigned char)*p) * 0x01000193u;
    return (h ^ 0xff) * 0x01000193u;
}

/* Of its place and text (FNV-1a), as same_note's second test compares
 * them: made once a note, when it is first passed as a new one. The
 * place's part is kept for the latest node (finding its column reads the
 * source up to its line; notes come in runs from one node). */
static uint32_t text_hash(Note *n)
{
    if (n->text_hash) return n->text_hash;
    KinkState *ks = &G->kinks;
    if (!ks->place_hash || ks->place_node != n->node || ks->place_chunk != n->chunk) {
        char where[128];
        locate(n, where, sizeof where);
        ks->place_node = n->node;
        ks->place_chunk = n->chunk;
        ks->place_hash = fnv(0x811c9dc5u, where) | 1;
    }
    char what[256];
    describe(n, what, sizeof what);
    uint32_t h = fnv(ks->place_hash, what);
    return n->text_hash = h ? h : 1;
}

/* The same node, chunk, operation and format: the first test of
 * same_note decides between two such notes. */
static int same_group(const Note *x, const Note *y)
{
    return x->node == y->node && x->chunk == y->chunk && x->op == y->op && x->branch == y->branch
           && x->tie == y->tie && x->backend == y->backend;
}

static void text_add(uint32_t k)
{
    KinkState *ks = &G->kinks;
    uint32_t mask = ks->seen_size - 1, i;
    for (i = text_hash(&ks->notes[k]) & mask; ks->seen_text[i]; i = (i + 1) & mask) {}
    ks->seen_text[i] = k + 1;
}

/* Note k in the sets (they have room): the text set only once a note of
 * another group asked for it. */
static void seen_add(uint32_t k)
{
    KinkState *ks = &G->kinks;
    uint32_t mask = ks->seen_size - 1, i;
    for (i = fast_hash(&ks->notes[k]) & mask; ks->seen_fast[i]; i = (i + 1) & mask) {}
    ks->seen_fast[i] = k + 1;
    if (ks->seen_n && !same_group(&ks->notes[k], &ks->notes[ks->seen_first])) ks->seen_mixed = 1;
    if (!ks->seen_n) ks->seen_first = k;
    if (ks->seen_texts) text_add(k);
    ks->seen_n++;
}

/* The sets made again from the passed list, with room for `room` more. */
static void seen_rebuild(uint32_t room)
{
    KinkState *ks = &G->kinks;
    uint32_t size = 16;
    while (size < 2 * (ks->npassed + room) + 2) size *= 2;
    if (size > ks->seen_cap) {
        ks->seen_fast = err_realloc(ks->seen_fast, sizeof(uint32_t) * size);
        ks->seen_text = err_realloc(ks->seen_text, sizeof(uint32_t) * size);
        ks->seen_cap = size;      /* (the size is kept only once both are had) */
    }
    int texts = ks->seen_texts && !ks->seen_stale && ks->npassed;    /* (kept on when it grows) */
    ks->seen_size = size;
    memset(ks->seen_fast, 0, sizeof(uint32_t) * size);
    memset(ks->seen_text, 0, sizeof(uint32_t) * size);
    ks->seen_n = 0;
    ks->seen_stale = ks->seen_mixed = 0;
    ks->seen_texts = texts;
    for (uint32_t i = 0; i < ks->npassed; i++) seen_add(ks->passed[i]);
}

/* A note already passed that says what note k says, text for text. */
static int seen_before(uint32_t k)
{
    KinkState *ks = &G->kinks;
    const Note *n = &ks->notes[k];
    uint32_t mask = ks->seen_size - 1;
    for (uint32_t i = fast_hash(n) & mask, j; (j = ks->seen_fast[i]); i = (i + 1) & mask)
        if (j - 1 == k || same_fast(&ks->notes[j - 1], n)) return 1;
    /* the same text from another group (a file loaded again, another
     * format): only where there are two groups (the texts are made then) */
    if (!ks->seen_n || (!ks->seen_mixed && same_group(n, &ks->notes[ks->seen_first]))) return 0;
    if (!ks->seen_texts) {
        ks->seen_texts = 1;
        for (uint32_t i = 0; i < ks->npassed; i++) text_add(ks->passed[i]);
    }
    uint32_t h = text_hash(&ks->notes[k]);
    for (uint32_t i = h & mask, j; (j = ks->seen_text[i]); i = (i + 1) & mask)
        if (ks->notes[j - 1].text_hash == h && same_note(&ks->notes[j - 1], n)) return 1;
    return 0;
}

/* The latest derivative passed note k: listed once, and once for what a
 * loop or repeated call noted again at the same place with the same
 * values. Two hash sets find an earlier note that says the same (a loop
 * of a million kinks at one place, or as many distinct ones, pays once a
 * note, not once a pair). */
static void pass(uint32_t k)
{
    KinkState *ks = &G->kinks;
    if (ks->quiet && ks->depth >= ks->quiet) return;
    /* (the first note needs no sets: a derivative that passes one, as
     * each of a loop's may, does not make them) */
    if (ks->npassed) {
        if (ks->seen_stale || ks->seen_n != ks->npassed || 2 * (ks->npassed + 1) + 2 > ks->seen_size) seen_rebuild(1);
        if (seen_before(k)) return;
    }
    if (ks->npassed == ks->cappassed) {
        __typeof__(ks->cappassed) grown = ks->cappassed ? 2 * ks->cappassed : 8;   /* the size is kept only once it is had */
        ks->passed = err_realloc(ks->passed, sizeof(uint32_t) * grown);
        ks->cappassed = grown;
    }
    ks->passed[ks->npassed++] = k;
    if (ks->npassed > 1) seen_add(k);
}

/* The first note at or after entry lo (notes are in tape order). */
static uint32_t first_note(uint32_t lo)
{
    uint32_t a = 0, b = G->kinks.nnotes;
    while (a < b) {
        uint32_t m = (a + b) / 2;
        if (G->kinks.notes[m].id < lo) a = m + 1;
        else b = m;
    }
    return a;
}

/* A kink counts when its entry got an adjoint. */
void kink_scan(uint32_t lo, uint32_t top, double (*adjoint)(void *ud, uint32_t id), void *ud)
{
    check_epoch();
    for (uint32_t k = first_note(lo); k < G->kinks.nnotes && G->kinks.notes[k].id <= top; k++) {
        Note *n = &G->kinks.notes[k];
        if (!n->gone && !n->branch && !n->loop && adjoint(ud, n->id) != 0) pass(k);
    }
}

/* Which entries in [lo, hi] depend on a place: reach[i - lo] is set for
 * the places themselves and for every entry with an operand so marked.
 * Operands lie below their reader except in a few entries (a d call's
 * results, a fixed point's): a pass that met one marked anything runs
 * again until nothing changes. */
typedef struct {
    uint32_t entry, n;
    uint8_t *dep;         /* which of its outputs depend on a place */
} LoopDeps;

struct Reach {
    uint8_t *reach;
    uint32_t lo, hi, at;
    int hit, up;
    const Reach *outer;   /* entries below lo (a rerun's region: the tape below it) */
    LoopDeps *loops;      /* the checkpointed loops run again (the outermost's; scratch) */
    uint32_t nloops;
};

/* The loop of entry ran again for this pass (its branches passed), and
 * its outputs' dependencies known; NULL if it cannot be. */
static LoopDeps *loop_deps(Reach *r, uint32_t entry)
{
    for (uint32_t i = 0; i < r->nloops; i++)
        if (r->loops[i].entry == entry) return &r->loops[i];
    if (r->outer || !G->kinks.rerun) return NULL;      /* (no checkpointed loop records in a region) */
    r->loops = err_scratch_realloc(r->loops, sizeof(LoopDeps) * (r->nloops + 1));   /* a rerun may fail */
    LoopDeps *l = &r->loops[r->nloops++];
    *l = (LoopDeps){ entry, 0, NULL };
    G->kinks.rerun(entry, r, &l->dep, &l->n);
    return l;
}

/* A loop's output j: as its entry unless the loop runs again to tell. */
static int output_reached(Reach *r, uint32_t out)
{
    uint32_t entry = tape_a(out), j = tape_b(out);
    if (!kink_reached(r, entry)) return 0;
    int quiet = G->kinks.quiet && G->kinks.depth >= G->kinks.quiet;
    LoopDeps *l = quiet ? NULL : loop_deps(r, entry);
    if (!l) return 1;
    return j < l->n && l->dep[j];
}

int kink_reached(const Reach *r, uint32_t id)
{
    for (; r && id; r = r->outer)
        if (id >= r->lo) return id <= r->hi && r->reach[id - r->lo];
    return 0;
}

static void reach_operand(uint32_t id, void *ud)
{
    Reach *r = ud;
    if (id > r->at) r->up = 1;
    if (kink_reached(r, id)) r->hit = 1;
}

static void reach_extra(uint32_t *id, void *ud) { reach_operand(*id, ud); }

static void reach_pass(Reach *r)
{
    int changed;
    do {
        changed = r->up = 0;
        /* the n entries of one d call read the same y and n places: their
         * answer is asked once a call, or a gradient would cost n^2 */
        uint32_t call = UINT32_MAX;
        int call_hit = 0;
        for (uint32_t i = r->lo + 1; i <= r->hi; i++) {
            if (r->reach[i - r->lo]) continue;
            int op = tape_opcode(i);
            if (op == OP_CONST || op == OP_LEAF) continue;
            if (op == OP_CKOUT) {
                r->hit = output_reached(r, i);
            } else if (num_op_arity[op] > 0 && !num_op_side[op]) {
                uint32_t a = tape_a(i), b = num_op_arity[op] == 2 ? tape_b(i) : 0;
                r->hit = kink_reached(r, a) || kink_reached(r, b);
                if (a > i || b > i) r->up = 1;
            } else if (op == OP_DERIV && tape_deriv_call_of(i, NULL) == call) {
                r->hit = call_hit;
            } else {
                r->hit = 0;
                r->at = i;
                tape_each_operand(i, reach_operand, r);
                tape_each_extra_id(i, reach_extra, r);
                if (op == OP_DERIV) call = tape_deriv_call_of(i, NULL), call_hit = r->hit;
            }
            if (r->hit) r->reach[i - r->lo] = changed = 1;
        }
    } while (changed && r->up);
}

/* A branch counts when one of its compared entries depends on one of the
 * places wrt (a dependency, whichever side was taken and whether or not
 * that side recorded anything). Only the rare notes pay: the pass over
 * the tape runs when a note compared an entry at or above the lowest
 * place. */
void kink_branches(const uint32_t *wrt, int n)
{
    check_epoch();
    if (!G->kinks.nbranches) return;     /* the common case: no place is looked at */
    uint32_t lo = UINT32_MAX, hi = 0;
    for (int j = 0; j < n; j++)
        if (wrt[j] && wrt[j] < lo) lo = wrt[j];
    if (lo == UINT32_MAX) return;
    uint32_t first = first_note(lo), nloops = 0;
    for (uint32_t k = first; k < G->kinks.nnotes; k++) {
        const Note *b = &G->kinks.notes[k];
        if (!b->branch && !b->loop) continue;
        nloops += b->loop;
        if (b->ida >= lo && b->ida > hi) hi = b->ida;
        if (b->idb >= lo && b->idb > hi) hi = b->idb;
    }
    if (hi < lo) return;
    Reach r = { err_scratch((size_t)(hi - lo) + 1), lo, hi, 0, 0, 0, NULL, NULL, 0 };
    for (int j = 0; j < n; j++)
        if (wrt[j] >= lo && wrt[j] <= hi) r.reach[wrt[j] - lo] = 1;
    reach_pass(&r);      /* (it runs again the loops whose outputs a later entry reads) */
    uint32_t *loops = nloops ? err_scratch(sizeof(uint32_t) * nloops) : NULL, nl = 0;
    for (uint32_t k = first; k < G->kinks.nnotes; k++) {
        const Note *b = &G->kinks.notes[k];
        if (b->loop) {
            /* a checkpointed loop whose inputs depend on a place: its own
             * run tells which of its near switches do */
            if (kink_reached(&r, b->ida)) loops[nl++] = b->ida;
        } else if (b->branch && !b->gone && (kink_reached(&r, b->ida) || kink_reached(&r, b->idb)))
            pass(k);
    }
    /* (the reruns add and drop notes: the loops were listed first) */
    int quiet = G->kinks.quiet && G->kinks.depth >= G->kinks.quiet;
    for (uint32_t i = 0; i < nl && !quiet; i++) loop_deps(&r, loops[i]);
    for (uint32_t i = 0; i < r.nloops; i++) err_scratch_free(r.loops[i].dep);
    err_scratch_free(r.loops);
    err_scratch_free(loops);
    err_scratch_free(r.reach);
}

void kink_note_loop(uint32_t entry)
{
    Note *note = new_note();
    note->loop = 1;
    note->id = entry;
    note->ida = entry;
    G->kinks.nbranches++;
}

uint32_t kink_count(void)
{
    check_epoch();
    return G->kinks.nnotes;
}

Reach *kink_region(const Reach *outer, uint32_t lo, const uint8_t *dep, uint32_t nleaf, uint32_t from)
{
    check_epoch();
    uint32_t top = tape_size() - 1;
    if (top < lo) top = lo;
    Reach *r = err_scratch(sizeof *r);
    *r = (Reach){ err_scratch((size_t)(top - lo) + 1), lo, top, 0, 0, 0, outer, NULL, 0 };
    for (uint32_t k = 0; k < nleaf && lo + k <= top; k++) r->reach[k] = dep[k];
    reach_pass(r);
    for (uint32_t k = from; k < G->kinks.nnotes; k++) {
        const Note *b = &G->kinks.notes[k];
        if (b->branch && !b->loop && (kink_reached(r, b->ida) || kink_reached(r, b->idb))) pass(k);
    }
    return r;
}

void kink_reach_free(Reach *r)
{
    if (!r) return;
    err_scratch_free(r->reach);
    err_scratch_free(r);
}

void kink_each_root(void (*fn)(uint32_t *id, void *ud), void *ud)
{
    check_epoch();
    for (uint32_t k = 0; G->kinks.nbranches && k < G->kinks.nnotes; k++)
        if (G->kinks.notes[k].branch || G->kinks.notes[k].loop) {
            if (G->kinks.notes[k].ida) fn(&G->kinks.notes[k].ida, ud);
            if (G->kinks.notes[k].idb) fn(&G->kinks.notes[k].idb, ud);
        }
}

/* The kinks passed in tape order, then the branches: as one sweep and the
 * branch test after it list them (a checkpointed loop's recomputation
 * passes its kinks before the sweep that reached it gets to the rest). */
static void passed_in_order(void)
{
    for (uint32_t i = 1; i < G->kinks.npassed; i++) {
        uint32_t k = G->kinks.passed[i], j = i;
        for (; j > 0; j--) {
            uint32_t p = G->kinks.passed[j - 1];
            if (G->kinks.notes[p].branch < G->kinks.notes[k].branch || (G->kinks.notes[p].branch == G->kinks.notes[k].branch && p < k)) break;
            G->kinks.passed[j] = p;
        }
        G->kinks.passed[j] = k;
    }
}

void kink_end(void)
{
    if (--G->kinks.depth > 0) return;
    passed_in_order();
    if (!G->kinks.npassed || G->kinks.noted) return;
    G->kinks.noted = 1;
    const Note *n = &G->kinks.notes[G->kinks.passed[0]];
    char what[256], where[128];
    describe(n, what, sizeof what);
    locate(n, where, sizeof where);
    err_note("this derivative passed %s%s (%s); :tape kinks for all",
            n->branch && !n->tie ? "" : "a kink: ", what, where);
}

int kink_quiet(void)
{
    int was = G->kinks.quiet;
    G->kinks.quiet = G->kinks.depth + 1;
    return was;
}

void kink_loud(int was) { G->kinks.quiet = was; }

void kink_statement(void)
{
    G->kinks.noted = 0;
    G->kinks.depth = 0;     /* an error may have unwound out of a derivative */
    G->kinks.quiet = 0;
}

void kink_renumber(uint32_t lo, uint32_t (*entry)(uint32_t id), uint32_t (*position)(uint32_t p))
{
    check_epoch();
    G->kinks.seen_stale = 1;     /* notes move: pass's sets are made again */
    /* in place, without allocating (it runs after the tape has moved):
     * renumber each note, marking those that go; then renumber the latest
     * derivative's list, which names notes by index; then close the gaps.
     * The notes' text_hash (a cache) is the scratch: first whether the
     * list names the note, then its index after the gaps close. */
    for (uint32_t k = 0; k < G->kinks.nnotes; k++) G->kinks.notes[k].text_hash = 0;
    for (uint32_t i = 0; i < G->kinks.npassed; i++) G->kinks.notes[G->kinks.passed[i]].text_hash = 1;
    for (uint32_t k = 0; k < G->kinks.nnotes; k++) {
        Note *n = &G->kinks.notes[k];
        if (n->branch || n->loop) {     /* its entries are roots: the pass renumbered them */
            if (n->id >= lo) n->id = position(n->id);
        } else if (n->id >= lo) {
            uint32_t id = entry(n->id);
            if (!id) {
                int listed = n->text_hash != 0;     /* the latest derivative's list keeps it */
                n->gone = listed ? 1 : 2;     /* 2: no live value can pass it again */
                id = position(n->id);
            }
            n->id = id;
        }
    }
    uint32_t before = 0;
    for (uint32_t k = 0; k < G->kinks.nnotes; k++) {
        G->kinks.notes[k].text_hash = before;
        before += G->kinks.notes[k].gone != 2;
    }
    for (uint32_t i = 0; i < G->kinks.npassed; i++) G->kinks.passed[i] = G->kinks.notes[G->kinks.passed[i]].text_hash;
    for (uint32_t k = 0; k < G->kinks.nnotes; k++) G->kinks.notes[k].text_hash = 0;
    uint32_t kept = 0;
    for (uint32_t k = 0; k < G->kinks.nnotes; k++)
        if (G->kinks.notes[k].gone != 2) G->kinks.notes[kept++] = G->kinks.notes[k];
    G->kinks.nnotes = kept;
}


void kink_truncated(uint32_t n, uint32_t before, uint32_t at, uint32_t from)
{
    if (G->kinks.epoch != before) return;     /* out of step already: check_epoch forgets them all */
    G->kinks.epoch = G->tape.epoch;
    G->kinks.seen_stale = 1;
    if (at > n) at = n;
    /* in place: the notes below the region stay, the region's kinks that
     * were passed move to just after the notes at or below `at` */
    uint32_t moved = 0, first = G->kinks.nnotes;
    for (uint32_t k = 0; k < G->kinks.nnotes; k++)
        if (k >= from || G->kinks.notes[k].id > n) {
            first = k;
            break;
        }
    /* where the list names each of the region's notes (+ 1; 0: it does
     * not), in their text_hash, a cache, for the while */
    for (uint32_t k = first; k < G->kinks.nnotes; k++) G->kinks.notes[k].text_hash = 0;
    for (uint32_t i = 0; i < G->kinks.npassed; i++)
        if (G->kinks.passed[i] >= first) G->kinks.notes[G->kinks.passed[i]].text_hash = i + 1;
    for (uint32_t k = first; k < G->kinks.nnotes; k++) {
        int listed = (int)G->kinks.notes[k].text_hash - 1;
        if (listed < 0 || G->kinks.notes[k].loop) {
            G->kinks.nbranches -= G->kinks.notes[k].branch || G->kinks.notes[k].loop;
            if (listed >= 0) G->kinks.passed[listed] = UINT32_MAX;
            continue;
        }
        /* a kink or branch the derivative passed (a rerun's, for a
         * checkpointed loop): listed, never passed again */
        Note note = G->kinks.notes[k];
        note.gone = 1;           /* its entry went: listed, never passed again */
        note.id = at;
        note.ida = note.idb = 0;
        note.text_hash = 0;
        G->kinks.passed[listed] = first + moved;
        G->kinks.notes[first + moved++] = note;
    }
    /* rotate the moved ones into place: after the notes with id <= at */
    uint32_t place = 0;
    while (place < first && G->kinks.notes[place].id <= at) place++;
    for (uint32_t m = 0; m < moved; m++) {
        Note t = G->kinks.notes[first + m];
        for (uint32_t k = first + m; k > place + m; k--) G->kinks.notes[k] = G->kinks.notes[k - 1];
        G->kinks.notes[place + m] = t;
    }
    for (uint32_t i = 0; i < G->kinks.npassed; i++) {
        uint32_t k = G->kinks.passed[i];
        if (k >= place && k < first) G->kinks.passed[i] = k + moved;
        else if (k >= first && k < first + moved) G->kinks.passed[i] = place + (k - first);
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < G->kinks.npassed; i++)
        if (G->kinks.passed[i] != UINT32_MAX) G->kinks.passed[kept++] = G->kinks.passed[i];
    G->kinks.npassed = kept;
    G->kinks.nnotes = first + moved;
}

void kink_list(void)
{
    check_epoch();
    if (!G->kinks.npassed) {
        io_out("kinks: none in the latest derivative\n");
        return;
    }
    io_out("kinks: %u in the latest derivative\n", G->kinks.npassed);
    for (uint32_t i = 0; i < G->kinks.npassed; i++) {
        const Note *n = &G->kinks.notes[G->kinks.passed[i]];
        char what[256], where[128];
        describe(n, what, sizeof what);
        locate(n, where, sizeof where);
        io_out("  %s%s (%s)\n", n->branch && !n->tie ? "" : "kink: ", what, where);
    }
}
