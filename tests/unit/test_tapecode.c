/* test_tapecode.c - the tape's operand fields (tape.h, "the code"), driven
 * by hand: operands near, in a chunk's far table, in one of its windows,
 * or wide. Every entry must decode (tape_a, tape_b) to the ids it was
 * pushed with, whichever way it was encoded: near ids and far ones, array
 * runs that read two and more distant streams at once (one window each,
 * 12 bytes an entry), runs and loops across chunk boundaries, a chunk with
 * more distant operands than its slots and windows hold (wide), and the
 * same after truncation inside a chunk and after compaction.
 * Prints "test_tapecode: N checks, M failed"; exit status non-zero on
 * failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/tape.h"
#include "../../src/error.h"
#include "../../src/state.h"

#include "checks.h"

#define CHUNK (1u << TAPE_CHUNK_BITS)

/* What was pushed, by id, to check the decoding against. */
typedef struct { int op; uint32_t a, b; } Pushed;
static Pushed *ref;
static uint32_t nref;

static void remember(uint32_t i, int op, uint32_t a, uint32_t b)
{
    if (i >= nref) {
        uint32_t n = nref ? nref : 1024;
        while (n <= i) n *= 2;
        ref = realloc(ref, n * sizeof *ref);
        memset(ref + nref, 0, (n - nref) * sizeof *ref);
        nref = n;
    }
    ref[i] = (Pushed){ op, a, b };
}

static uint32_t push(int op, uint32_t a, uint32_t b)
{
    uint32_t i = tape_push(op, a, b, 1.0);
    remember(i, op, a, b);
    return i;
}

static uint32_t leaves(uint32_t n)
{
    uint32_t first = tape_size();
    for (uint32_t k = 0; k < n; k++) push(OP_LEAF, 0, 0);
    return first;
}

/* n entries of op over a + k sa, b + k sb (as an array run records them). */
static uint32_t elems(int op, uint32_t a, uint32_t sa, uint32_t b, uint32_t sb, uint32_t n)
{
    if (!tape_reserve(n)) return 0;
    double *v = tape_reserved_vals();
    for (uint32_t k = 0; k < n; k++) v[k] = k;
    uint32_t first = tape_push_elems(op, a, sa, b, sb, n);
    for (uint32_t k = 0; k < n; k++) remember(first + k, op, a ? a + k * sa : 0, b ? b + k * sb : 0);
    return first;
}

/* Entries lo .. hi - 1 that do not decode to their push. */
static uint32_t misdecoded(uint32_t lo, uint32_t hi)
{
    uint32_t bad = 0;
    for (uint32_t i = lo; i < hi; i++) {
        const Pushed *p = &ref[i];
        if (tape_opcode(i) != p->op || tape_a(i) != p->a || (num_op_arity[p->op] == 2 && tape_b(i) != p->b)) {
            if (!bad) fprintf(stderr, "entry %u (chunk offset %u): op %d a %u b %u, pushed %d %u %u (code %08x)\n",
                              i, i & (CHUNK - 1), tape_opcode(i), tape_a(i), tape_b(i), p->op, p->a, p->b, tape_codes()[i]);
            bad++;
        }
    }
    return bad;
}

static uint32_t wide_between(uint32_t lo, uint32_t hi)
{
    uint32_t w = 0;
    for (uint32_t i = lo; i < hi; i++) w += tape_wide(i);
    return w;
}

/* How entries lo .. hi - 1 hold their operands: near, far slot, window. */
typedef struct { uint32_t near, far, window; } FieldKinds;
static FieldKinds kinds_between(uint32_t lo, uint32_t hi)
{
    FieldKinds k = { 0, 0, 0 };
    for (uint32_t i = lo; i < hi; i++) {
        uint32_t c = tape_codes()[i];
        if (c & TAPE_WIDE) continue;
        uint32_t f[2] = { (c >> 8) & 0xfff, c >> 20 };
        for (int j = 0; j < 2; j++) {
            if (!f[j]) continue;
            if (f[j] < TAPE_NEAR) k.near++;
            else if (f[j] < TAPE_WINDOW) k.far++;
            else k.window++;
        }
    }
    return k;
}

static void test_near_and_far(void)
{
    tape_clear();
    uint32_t p = leaves(2);                      /* a loop's parameters */
    uint32_t lo = tape_size(), h = push(OP_LEAF, 0, 0);
    for (int k = 0; k < 3 * (int)CHUNK; k++) {     /* W2's recurrence: h = tanh(w * h + b) */
        uint32_t t = push(OP_MUL, p, h);
        t = push(OP_ADD, t, p + 1);
        h = push(OP_TANH, t, 0);
    }
    uint32_t hi = tape_size();
    FieldKinds k = kinds_between(lo, hi);
    check(misdecoded(1, hi) == 0, "near and far: every entry decodes to its push");
    check(wide_between(lo, hi) == 0, "near and far: a loop's parameters need no wide entry");
    check(k.near > 0 && k.far + k.window > 0, "near and far: the recurrence reads near, the parameters far");
    check(tape_far_count() <= 2 * ((hi >> TAPE_CHUNK_BITS) + 1), "near and far: each parameter takes one far slot a chunk at most");
    /* every distance up to the near limit, and just past it */
    lo = tape_size();
    uint32_t base = leaves(TAPE_NEAR + 8);
    for (uint32_t d = 1; d <= TAPE_NEAR + 4; d++) {
        uint32_t i = tape_size();
        push(OP_ADD, i - d >= base ? i - d : base, base);
    }
    check(misdecoded(lo, tape_size()) == 0, "near and far: operands at every distance up to the near limit and past it decode");
}

/* Array runs that read two distant streams (ba's, ode's), each from its
 * own distance: one window each, no far slot an element, no wide entry;
 * 12 bytes an entry. */
static void test_two_streams(void)
{
    tape_clear();
    enum { N = 3 * CHUNK + 517 };
    uint32_t A = leaves(N), B = leaves(N);
    leaves(5000);                                /* both far behind */
    size_t bytes = tape_bytes();
    uint32_t lo = tape_size(), r = elems(OP_MUL, A, 1, B, 1, N);
    check(r == lo, "two streams: the run's entries start at the tape's end");
    uint32_t hi = tape_size();
    check(misdecoded(lo, hi) == 0, "two streams: every element decodes to its two operands (across chunks)");
    check(wide_between(lo, hi) == 0, "two streams: no wide entry");
    FieldKinds k = kinds_between(lo, hi);
    check(k.window == 2 * N && k.far == 0, "two streams: both operands of every element in a window");
    check(tape_bytes() - bytes == (size_t)N * 12, "two streams: 12 bytes an entry");
    /* a run of ode's step: four runs in a chunk, each reading a distant
     * array and a recent one, from four distances */
    uint32_t C = leaves(1000), D = leaves(1000);
    leaves(2500);
    lo = tape_size();
    uint32_t x = elems(OP_ADD, A, 1, C, 1, 1000);
    uint32_t y = elems(OP_MUL, B + 7, 1, x, 1, 1000);
    uint32_t z = elems(OP_SUB, D, 1, A + 1000, 1, 1000);
    elems(OP_MUL, C, 1, z, 1, 1000);
    elems(OP_ADD, y, 1, B + 2000, 1, 1000);
    hi = tape_size();
    check(misdecoded(lo, hi) == 0, "streams: runs from several distances in a chunk decode");
    check(wide_between(lo, hi) == 0, "streams: runs from several distances in a chunk need no wide entry");
    /* one distant number with a run (a broadcast: ode's x[0]) */
    lo = tape_size();
    elems(OP_MUL, A + 3, 0, B, 1, 2 * CHUNK + 100);
    hi = tape_size();
    check(misdecoded(lo, hi) == 0, "streams: a broadcast distant number beside a distant run decodes");
    check(wide_between(lo, hi) == 0, "streams: a broadcast distant number takes a far slot, not wide entries");
}

/* A scalar loop over two distant arrays (c[i] = a[i] * b[i] element by
 * element): each array's distance is a window. */
static void test_scalar_streams(void)
{
    tape_clear();
    enum { N = 2 * CHUNK + 300 };
    uint32_t A = leaves(N), B = leaves(N);
    leaves(3000);
    uint32_t lo = tape_size();
    for (uint32_t k = 0; k < N; k++) push(OP_MUL, A + k, B + k);
    uint32_t hi = tape_size();
    check(misdecoded(lo, hi) == 0, "scalar streams: every entry decodes");
    check(wide_between(lo, hi) == 0, "scalar streams: a loop over two distant arrays needs no wide entry");
    check(kinds_between(lo, hi).window > N, "scalar streams: the arrays are read through windows");
    /* a loop whose reads drift (two entries an element read from an array
     * written one entry an element): the distance grows through windows */
    uint32_t E = leaves(N);
    leaves(3000);
    lo = tape_size();
    for (uint32_t k = 0; k < N; k++) push(OP_NEG, push(OP_MUL, E + k, E + k), 0);
    hi = tape_size();
    check(misdecoded(lo, hi) == 0, "scalar streams: a drifting distance decodes");
}

/* More distinct distant operands in a chunk than its far slots and
 * windows hold: the rest go wide, and still decode. */
static void test_wide_fallback(void)
{
    tape_clear();
    enum { FAR = 9000, N = 4 * CHUNK };
    uint32_t F = leaves(FAR);
    leaves(3000);
    srand(11);
    uint32_t lo = tape_size();
    for (uint32_t k = 0; k < N; k++) {
        uint32_t a = F + (uint32_t)rand() % FAR, b = F + (uint32_t)rand() % FAR;
        push(k % 3 ? OP_MUL : OP_ADD, a, b);
    }
    /* a run of two distant streams in a chunk whose slots and windows
     * those took: wide too */
    for (uint32_t k = 0; k < 2000; k++) push(OP_MUL, F + (uint32_t)rand() % FAR, F + (uint32_t)rand() % FAR);
    elems(OP_ADD, F + 100, 1, F + 3000, 1, 1500);
    uint32_t hi = tape_size();
    check(misdecoded(lo, hi) == 0, "wide: every entry decodes, wide or not");
    check(wide_between(lo, hi) > 0, "wide: a chunk with more distant operands than slots and windows goes wide");
    check(tape_far_count() <= ((hi >> TAPE_CHUNK_BITS) + 1) * TAPE_FAR_SLOTS, "wide: far tables hold at most their slots a chunk");
}

/* Truncation inside a chunk keeps what the entries below use (far slots,
 * windows) and recording goes on; compaction records entries again at
 * new places, with new fields. */
static void test_truncate_and_compact(void)
{
    tape_clear();
    enum { N = 2 * CHUNK + 900 };
    uint32_t A = leaves(N), B = leaves(N), P = leaves(4);
    leaves(4000);
    uint32_t lo = tape_size();
    elems(OP_MUL, A, 1, B, 1, N);
    for (uint32_t k = 0; k < 3000; k++) push(OP_ADD, P + k % 4, A + k);
    TapeMark m = tape_mark();
    m.n = tape_size() - 1700;                    /* inside a chunk */
    tape_truncate(m);
    elems(OP_SUB, B + 5, 1, A + 9, 1, 1500);     /* other distances, after the cut */
    for (uint32_t k = 0; k < 2000; k++) push(OP_MUL, P + k % 4, B + k);
    uint32_t hi = tape_size();
    check(misdecoded(1, hi) == 0, "truncate: truncated inside a chunk and recorded on, every entry decodes");
    check(wide_between(lo, hi) == 0, "truncate: and needs no wide entry");
    /* compaction: every third entry above a mark dropped; the kept ones
     * read only entries below it (leaves), so each keeps its operands */
    m = tape_mark();
    m.n = lo + 1000;
    uint8_t *live = calloc(hi - m.n + 1, 1);
    uint32_t *newpos = calloc(hi - m.n + 2, sizeof *newpos);
    for (uint32_t i = m.n; i < hi; i++) live[i - m.n] = i % 3 != 0;
    Pushed *before = malloc(hi * sizeof *before);
    memcpy(before, ref, hi * sizeof *before);
    tape_compact(m, live, newpos);
    uint32_t bad = 0, kept = 0;
    for (uint32_t i = m.n; i < hi; i++) {
        if (!live[i - m.n]) continue;
        uint32_t at = newpos[i - m.n];
        kept++;
        bad += tape_opcode(at) != before[i].op || tape_a(at) != before[i].a || tape_b(at) != before[i].b;
    }
    check(tape_size() == m.n + kept, "compact: the kept entries stay");
    check(bad == 0, "compact: compacted entries decode to their operands");
    check(misdecoded(1, m.n) == 0, "compact: entries below the mark are untouched");
    free(live);
    free(newpos);
    free(before);
}

/* W2's tape: two leaves (w and b) read in every chunk. A chunk inherits
 * the short far table of the chunk before, so each costs its far id once
 * for the whole tape, not once a chunk: 12 bytes an entry and 8 more.
 * Truncating at and inside an inheriting chunk, recording on, and
 * compacting keep both ids and every entry's operands. */
static void test_inherited_far(void)
{
    tape_clear();
    uint32_t p = leaves(2), h = push(OP_LEAF, 0, 0);
    for (uint32_t k = 0; k < 4 * CHUNK; k++) {      /* h = tanh(w * h + b), 12 chunks */
        uint32_t t = push(OP_MUL, p, h);
        h = push(OP_TANH, push(OP_ADD, t, p + 1), 0);
    }
    uint32_t hi = tape_size();
    check(misdecoded(1, hi) == 0, "inherited far: every entry decodes");
    check(tape_far_count() == 2, "inherited far: two leaves read in every chunk take two far ids in all");
    check(tape_bytes() == (size_t)hi * 12 + 2 * sizeof(uint32_t), "inherited far: 12 bytes an entry and two far ids");
    /* back to a chunk's start, then inside a chunk: recording on reads them
     * through the same two ids */
    TapeMark m = tape_mark();
    for (uint32_t to = (hi & ~(CHUNK - 1)) - 2 * CHUNK, r = 0; r < 2; r++, to += 1000) {
        m.n = to;
        tape_truncate(m);
        h = to - 1;
        for (uint32_t k = 0; k < CHUNK; k++) {
            uint32_t t = push(OP_MUL, p, h);
            h = push(OP_TANH, push(OP_ADD, t, p + 1), 0);
        }
        check(misdecoded(1, tape_size()) == 0, r ? "inherited far: truncated inside a chunk and recorded on, every entry decodes"
                                                 : "inherited far: truncated at a chunk's start and recorded on, every entry decodes");
        check(tape_far_count() == 2, r ? "inherited far: truncated inside a chunk, still two far ids"
                                       : "inherited far: truncated at a chunk's start, still two far ids");
    }
    /* compaction from inside the second chunk, dropping the last third
     * (entries nothing kept reads): the kept ones are recorded again, and
     * read w and b through the same two ids */
    hi = tape_size();
    m = tape_mark();
    m.n = CHUNK + 77;
    uint8_t *live = calloc(hi - m.n + 1, 1);
    uint32_t *newpos = calloc(hi - m.n + 2, sizeof *newpos);
    uint32_t cut = hi - (hi - m.n) / 3;
    for (uint32_t i = m.n; i < hi; i++) live[i - m.n] = i < cut;
    tape_compact(m, live, newpos);
    check(tape_size() == cut, "inherited far: compaction keeps the entries below the cut");
    check(misdecoded(1, cut) == 0, "inherited far: compacted, every entry decodes");
    check(tape_far_count() == 2, "inherited far: compacted, still two far ids");
    free(live);
    free(newpos);
}

/* lstm's pattern: 7-element runs that read the rows of a distant matrix
 * at a stride (a new distance every row) and a distant parameter row read
 * again every time. The windows run out after a few rows, then each row
 * takes 7 far slots that follow each other (far_run gives them at the
 * table's end), the parameter row reads its slots again; once the slots
 * run out too, rows go wide. Every entry decodes all the way. */
static void test_far_runs(void)
{
    tape_clear();
    enum { B = 7, ROWS = 400, STRIDE = 77 };
    uint32_t X = leaves(ROWS * STRIDE), P = leaves(B);
    leaves(3000);
    uint32_t lo = tape_size(), r = 0;
    for (; r < 100; r++) {                       /* 1400 entries: within one chunk's slots */
        uint32_t t = elems(OP_MUL, X + r * STRIDE, 1, P, 1, B);
        elems(OP_ADD, t, 1, P, 1, B);
    }
    uint32_t mid = tape_size();
    check(misdecoded(lo, mid) == 0, "far runs: rows at a stride beside a parameter row decode");
    check(wide_between(lo, mid) == 0, "far runs: while the chunk's slots last, no wide entry");
    check(kinds_between(lo, mid).far >= 2 * 90 * B, "far runs: the rows and the parameter row are read through far slots");
    for (; r < ROWS; r++) {                      /* past a chunk's slots, and into the next chunks */
        uint32_t t = elems(OP_MUL, X + r * STRIDE, 1, P, 1, B);
        elems(OP_ADD, t, 1, P, 1, B);
    }
    check(wide_between(mid, tape_size()) > 0, "far runs: a chunk out of slots and windows goes wide");
    check(misdecoded(lo, tape_size()) == 0, "far runs: past the slots (wide) and across chunks, every entry decodes");
}

/* Leaves up to the next chunk's first entry. */
static void to_chunk_start(void)
{
    while (tape_size() & (CHUNK - 1)) push(OP_LEAF, 0, 0);
}

/* Runs of far slots are remembered (tape.c's far_run_known) only while
 * the chunk's table keeps them: after a truncation that drops P's slots,
 * Q takes slots P had, and P, read again, gets new ones (a stale memory
 * would name Q's). */
static void test_far_runs_known_after_truncate(void)
{
    tape_clear();
    enum { B = 7, STREAMS = 1 + TAPE_SMALLS };
    uint32_t X = leaves(STREAMS * 1000), P = leaves(B), Q = leaves(B);
    leaves(3000);
    to_chunk_start();
    uint32_t lo = tape_size();
    for (uint32_t k = 0; k < STREAMS; k++) elems(OP_ADD, X + k * 1000, 1, 0, 0, 8);   /* every window taken */
    TapeMark m = tape_mark();
    for (int step = 0; step < 3; step++) elems(OP_MUL, P, 1, 0, 0, B);              /* P's slots, remembered */
    check(kinds_between(m.n, tape_size()).far == 3 * B, "far runs known: P is read through far slots");
    tape_truncate(m);
    elems(OP_MUL, Q, 1, 0, 0, B);                /* Q in the slots P had */
    for (int step = 0; step < 3; step++) elems(OP_MUL, P, 1, 0, 0, B);
    uint32_t hi = tape_size();
    check(hi >> TAPE_CHUNK_BITS == lo >> TAPE_CHUNK_BITS, "far runs known: all in one chunk");
    check(misdecoded(1, hi) == 0, "far runs known: after a truncation, P and Q decode to their own ids");
    check(kinds_between(m.n, hi).far == 4 * B, "far runs known: and through far slots");
}

/* A run operand with no field in a chunk out of slots and windows goes
 * wide an element, but an element of it that has a far slot (read before
 * in the chunk) keeps its slot's field: a row read again three entries
 * early, as a and as b. */
static void test_wide_run_with_slots(void)
{
    tape_clear();
    enum { B = 7, ROWS = 400, STRIDE = 77 };
    uint32_t X = leaves(ROWS * STRIDE), P = leaves(B);
    leaves(3000);
    to_chunk_start();
    uint32_t lo = tape_size(), r = 0;
    for (; r < ROWS && !wide_between(lo, tape_size()); r++) {
        uint32_t t = elems(OP_MUL, X + r * STRIDE, 1, P, 1, B);
        elems(OP_ADD, t, 1, P, 1, B);
    }
    uint32_t slotted = X + (1 + TAPE_SMALLS) * STRIDE - 3, at = tape_size();
    elems(OP_MUL, slotted, 1, P, 1, B);
    elems(OP_MUL, P, 1, slotted, 1, B);
    uint32_t hi = tape_size();
    check(hi >> TAPE_CHUNK_BITS == lo >> TAPE_CHUNK_BITS, "wide run with slots: all in one chunk");
    check(misdecoded(lo, hi) == 0, "wide run with slots: every entry decodes");
    check(wide_between(at, hi) == 2 * 3, "wide run with slots: the elements with no slot go wide");
    check(kinds_between(at, hi).far >= 2 * 4, "wide run with slots: the ones with a slot keep it");
}

/* det's tape: a 7x7 matrix's entries (far behind) read one by one, over
 * and over, beside near operands, for several chunks; with more than
 * TAPE_FAR_INHERIT of them no chunk inherits its predecessor's table, so
 * each chunk gives them slots of its own, remembered inline by id
 * (Tape.far_seen) once found. A remembered slot must never outlive its
 * chunk or a truncation: entries read through it decode to their ids.
 * Ids TAPE_FAR_SEEN apart share a place in the memory: read in turn, each
 * still decodes to itself. */
static void test_far_seen(void)
{
    tape_clear();
    enum { N = 49 };
    uint32_t A = leaves(N), B = leaves(N + TAPE_FAR_SEEN);
    leaves(3000);
    uint32_t lo = tape_size(), h = push(OP_LEAF, 0, 0);
    for (uint32_t k = 0; k < 3 * CHUNK; k++) h = push(OP_ADD, h, A + (k * 5) % N);
    uint32_t hi = tape_size();
    check(misdecoded(1, hi) == 0, "far seen: a matrix read element by element in every chunk decodes");
    check(wide_between(lo, hi) == 0, "far seen: and needs no wide entry");
    FieldKinds k = kinds_between(lo, hi);
    check(k.far + k.window == hi - lo - 1 && k.far > hi - lo - CHUNK, "far seen: the elements read through far slots (window 0 aside)");
    check(tape_far_count() <= N * ((hi >> TAPE_CHUNK_BITS) - (lo >> TAPE_CHUNK_BITS) + 1), "far seen: one slot an element a chunk");
    /* truncated inside a chunk, below where some slots were made: the
     * entries recorded on read other ids at the same places in the memory */
    TapeMark m = tape_mark();
    m.n = (hi & ~(CHUNK - 1)) + 10;
    tape_truncate(m);
    h = m.n - 1;
    for (uint32_t k = 0; k < 2 * CHUNK; k++) h = push(OP_MUL, h, (k & 1 ? B : A) + (k * 3) % N);
    for (uint32_t k = 0; k < 500; k++) h = push(OP_SUB, h, B + (k & 1) * TAPE_FAR_SEEN);
    check(misdecoded(1, tape_size()) == 0, "far seen: truncated and recorded on, ids that share a place decode to themselves");
    check(wide_between(lo, tape_size()) == 0, "far seen: truncated and recorded on, no wide entry");
}

/* tape_label_numbers (an array's elements made places at once) records
 * what labelling them one by one records, code for code: leaves for
 * constants, labels in place, copies of versions near and far (window,
 * far slot, a chunk out of both: wide), across chunk starts and the
 * tape's growth, with a stride, stopping at the first element that is not
 * a plain number. The scenario is built twice from a cleared tape. */
enum { LN = 3 * CHUNK + 700 };
static Value ln_elems[LN + 1];

static uint32_t label_scenario(uint32_t *lo)
{
    tape_clear();
    uint32_t far = leaves(2 * CHUNK + 300);
    for (uint32_t k = far; k < far + 2 * CHUNK + 300; k++) rec_label(k);   /* versions: copied */
    uint32_t unl = push(OP_ADD, far, far + 1);                            /* not a version: labelled */
    leaves(1000);
    for (uint32_t k = 0; k < LN; k++) {
        uint32_t kind = k < 2 * CHUNK + 200 ? 0 : (k * 7) % 5;     /* (constants first: leaves across a chunk start) */
        ln_elems[k] = kind == 0 ? num_val(k) : kind == 4 && k < 50 ? num_rec(k, unl + 0)
                    : num_rec(k, kind == 3 ? tape_size() - 1 - k % 9 : far + (k * 13) % (2 * CHUNK + 300));
    }
    ln_elems[LN] = (Value){ 0 };        /* not a number: the stretch ends */
    *lo = tape_size();
    return far;
}

static void test_label_numbers(void)
{
    static uint32_t codes[2][4 * LN];
    static double vals[2][4 * LN];
    static uint32_t ids[2][LN];
    uint32_t size[2], lo, took[2] = { 0, 0 };
    int consecutive[2];
    for (int way = 0; way < 2; way++) {
        label_scenario(&lo);
        TapeIdRun run = { 0, 1 };
        for (int pass = 0; pass < 2; pass++) {          /* stride 2, then all of them: copy=1, then copy=0 */
            long stride = pass ? 1 : 2;
            uint32_t n = pass ? LN : LN / 2;
            if (way) took[pass] = tape_label_numbers(ln_elems, n + (pass ? 1 : 0), stride, !pass, &run);
            else
                for (uint32_t k = 0; k < n; k++) {
                    Value *v = &ln_elems[k * stride];
                    if (!v->id) v->id = tape_push_raw(OP_LEAF | TAPE_LABELED, 0, 0, v->u.n);
                    else if (!tape_labeled(v->id)) rec_label(v->id);
                    else if (!pass) v->id = tape_push_raw(OP_COPY | TAPE_LABELED, v->id, 0, v->u.n);
                }
            if (!pass) consecutive[way] = way ? run.consecutive : 0;
        }
        size[way] = tape_size();
        for (uint32_t i = lo; i < size[way] && i - lo < 4 * LN; i++) {
            codes[way][i - lo] = tape_codes()[i];
            vals[way][i - lo] = tape_val(i);
        }
        for (uint32_t k = 0; k < LN; k++) ids[way][k] = ln_elems[k].id;
    }
    check(took[0] == LN / 2 && took[1] == LN, "label numbers: every plain number taken, the stretch ends at the first that is not");
    check(size[0] == size[1] && size[0] > lo + LN / 2, "label numbers: as many entries as one by one");
    check(memcmp(codes[0], codes[1], sizeof(uint32_t) * (size[0] - lo)) == 0, "label numbers: the same codes as one by one");
    check(memcmp(vals[0], vals[1], sizeof(double) * (size[0] - lo)) == 0, "label numbers: the same values");
    check(memcmp(ids[0], ids[1], sizeof ids[0]) == 0, "label numbers: the elements get the same ids");
    check(misdecoded(1, lo) == 0, "label numbers: the entries below decode");
    check(consecutive[1] == 0, "label numbers: mixed ids are not consecutive");
    /* a fresh array of constants: leaves one after another, consecutive */
    tape_clear();
    for (uint32_t k = 0; k < LN; k++) ln_elems[k] = num_val(k);
    TapeIdRun run = { 0, 1 };
    uint32_t first = tape_size();
    tape_label_numbers(ln_elems, LN, 1, 1, &run);
    check(run.consecutive && ln_elems[0].id == first && ln_elems[LN - 1].id == first + LN - 1,
          "label numbers: constants become consecutive leaves");
}

static void body(void *ud)
{
    (void)ud;
    test_near_and_far();
    test_two_streams();
    test_scalar_streams();
    test_wide_fallback();
    test_truncate_and_compact();
    test_inherited_far();
    test_far_runs();
    test_far_runs_known_after_truncate();
    test_wide_run_with_slots();
    test_far_seen();
    test_label_numbers();
}

int main(void)
{
    int rc = run_tape_checks("test_tapecode", body);
    free(ref);
    return rc;
}
