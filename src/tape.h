/* tape.h: the session tape, a flat append-only record of every recorded
 * number operation, kept for the life of the session (SPEC "Derivatives").
 * Entries are stored as two parallel arrays: a 32-bit code (the op byte
 * and two 12-bit operand fields) and the value, 12 bytes an entry (the
 * encoding is below, at "the code"). An entry's value is the value the reverse rules
 * need later, and it never changes: a variable that is overwritten gets a new
 * entry, so reads of old values are never confused with new ones (this is
 * the single-assignment form the seeds describe, built as the program runs).
 * Entry 0 is reserved: id 0 means "a constant, not on the tape". */
#ifndef WG_TAPE_H
#define WG_TAPE_H
#include <stddef.h>
#include <stdint.h>
#include "num.h"
#include "value.h"

#define TAPE_LABELED 0x80   /* op byte flag: the entry is a variable version */
#define TAPE_WIDE    0x40   /* op byte flag: its operands are in the wide table */
#define TAPE_OPMASK  0x3f

/* The code. Bits 0-7 are the op byte, bits 8-19 and 20-31 the fields of the
 * first and second operand. A field f names entry i's operand as
 *   f = 0             id 0 (a constant);
 *   1 <= f < 2048     i - f (an operand recorded shortly before: most are);
 *   2048 <= f < 3072  slot f - 2048 of the far table of i's chunk (4096
 *                     entries), which lists the chunk's distant operands
 *                     once each (a loop's parameters, w and b in W2). A
 *                     chunk whose predecessor's table is short (at most
 *                     TAPE_FAR_INHERIT slots) inherits it: its table
 *                     starts where that one starts and goes on from its
 *                     end, so an operand read in every chunk (W2's w and
 *                     b) costs its far id once, not once a chunk;
 *   3072 <= f < 3584  i - D - (f - 3072), D the distance of window 0
 *                     of the chunk: the distance of its first distant
 *                     operand recorded alone. A loop over an array reads
 *                     each element's entry from the same distance back
 *                     (W4's a[i] = a[i] * a[i]);
 *   f >= 3584         small window k = 1 + (f - 3584) / 64 of the chunk,
 *                     one of 8, each 64 distances from its first one D_k:
 *                     the operand is i - D_k - (f - 3584 - 64 (k - 1)). An
 *                     array operation reads each operand from one distance
 *                     for all its elements, and runs read two distant
 *                     arrays at once (ba's a[i] - b[i]) or a chunk holds
 *                     several runs that read from several distances
 *                     (ode's stages): a window each. The chunk's table
 *                     keeps E_k = D_k - 3584 - 64 (k - 1), so that the
 *                     operand is i - f - E_k.
 * An entry whose operands fit neither way, and an entry whose fields are
 * not operands (a sum's pool offset and count, a deriv's call, a side
 * record), is wide: bits 8-31 index the chunk's part of the wide table,
 * which holds its two fields as they are. So W2 records 12 bytes a step
 * of its recurrence, and reading an operand is a shift and a subtraction.
 *
 * Windows are opened as distant operands need them (the small ones in
 * order): an operand recorded alone (tape_push) opens window 0, or a small
 * one once the chunk has no far slot left; an array run's operand
 * (tape_push_elems) of distinct ids takes a window that holds its
 * distance, else a new one, for all its elements in the chunk, and far
 * slots one an element only when no window is left.
 *
 * A deriv entry (its fields: the d call and which of the call's places) is
 * wide too, but packed when it can be: bit 31 set, bits 8-18 its call less
 * the call of its chunk's first deriv entry (the chunk's base, under 2048
 * calls on), bits 19-30 its place less the base's place if it is the
 * base's call, else its place (under 4096). The n entries of a gradient
 * over an array are recorded one after another, so they all pack, and
 * W4's million cost 12 bytes each. */
#ifndef TAPE_CHUNK_BITS
#define TAPE_CHUNK_BITS 12
#endif
#define TAPE_NEAR       2048u
#ifndef TAPE_FAR_SLOTS
#define TAPE_FAR_SLOTS  1024u
#endif
#ifndef TAPE_FAR_INHERIT
#define TAPE_FAR_INHERIT 16u    /* a table this short is inherited (its ids hashed again: a few) */
#endif
#define TAPE_FAR_SEEN   64u   /* far slots remembered by id (Tape.far_seen) */
#define TAPE_FAR_RUNS   8u    /* far slot runs remembered (Tape.far_runs) */
#define TAPE_WINDOW     (TAPE_NEAR + TAPE_FAR_SLOTS)   /* window 0's first field */
#define TAPE_WINDOW_LEN 512u                          /* window 0's distances */
#define TAPE_SMALL      (TAPE_WINDOW + TAPE_WINDOW_LEN)   /* the small windows' first field */
#define TAPE_SMALL_BITS 6
#define TAPE_SMALL_LEN  (1u << TAPE_SMALL_BITS)       /* a small window's distances */
#define TAPE_SMALLS     ((4096u - TAPE_SMALL) >> TAPE_SMALL_BITS)   /* small windows a chunk */
#define TAPE_WINDOWS    (1 + TAPE_SMALLS)
#define TAPE_PACKED     0x80000000u   /* with TAPE_WIDE: a packed deriv entry */
#define TAPE_PACKED_CALLS  2048u
#define TAPE_PACKED_PLACES 4096u

typedef struct { uint32_t a, b; } TapeArgs;
/* A chunk's first deriv entry: its call (TAPE_NO_BASE: none yet) and place. */
typedef struct { uint32_t call, which; } TapeDerivBase;
#define TAPE_NO_BASE 0xFFFFFFFFu

/* What decoding a code needs besides the code (see "the code" below). */
typedef struct {
    uint32_t *far;              /* far tables, chunk after chunk */
    TapeArgs *wide;             /* wide entries' fields, chunk after chunk */
    uint32_t *chunk_far, *chunk_wide;   /* each chunk's first slot in them */
    uint32_t *chunk_far_inherited;      /* each chunk's far slots taken over from the chunk
                                         * before (its table begins with that one's whole table) */
    uint32_t *chunk_window;     /* each chunk's window 0: D (0: none yet) */
    uint32_t *chunk_small;      /* each chunk's TAPE_SMALLS small windows' E_k */
    TapeDerivBase *chunk_deriv; /* each chunk's base for packed deriv entries */
} TapeTables;

/* One d(y, ...) call, so its result entries (OP_DERIV) can be expanded into
 * recorded operations when something differentiates them again. Cut
 * entries are held fixed by the sweep (their adjoints go no further): the
 * tangents of a place inside jvp, so that d(u, p) is the partial with
 * respect to p and not also through p's own tangent. */
typedef struct {
    uint32_t y;
    uint32_t wrt_off, nwrt;     /* wrt entry ids in the pool, or (wrt_run) the first of them */
    uint32_t cut_off, ncut;     /* cut entry ids in the pool, highest first */
    uint32_t exp_lo;            /* first entry of the expansion, 0 = not yet */
    uint32_t exp_off;           /* expanded ids in the pool */
    uint16_t wrt_run;           /* the places are consecutive entries (d over an array): no list */
    uint16_t reruns;            /* its expansion re-ran checkpointed loops: 1 + the index of
                                 * what that re-run gave them in sweep.c's table (0: none) */
} DerivRec;

/* Side records: an entry kind that needs more than its two operand fields
 * and the pool (a checkpointed loop, a fixed point) hangs a record off its
 * entry (the entry's a field holds the record's index, see tape_side_add).
 * The record must say which tape ids and heap values it holds: the
 * reclaimer marks and renumbers the ids (each_id's fn may rewrite *id),
 * the cycle collector keeps the values; and it is released when its entry
 * goes (tape clear, truncate, or reclaiming). It holds no tape id anywhere
 * each_id does not show. */
typedef struct TapeSide TapeSide;
typedef struct TapeSideKind {
    const char *name;
    void (*each_id)(TapeSide *s, void (*fn)(uint32_t *id, void *ud), void *ud);
    void (*each_value)(TapeSide *s, void (*visit)(Value));
    void (*release)(TapeSide *s);   /* frees s itself and what it owns */
} TapeSideKind;
struct TapeSide { const TapeSideKind *kind; };

/* Array runs: an array operation over n numbers (elementwise, or a matrix
 * product) recorded as n consecutive entries, one an element, so that
 * element reads, writes, versions, views, reclaiming, checkpointing and
 * :tape see what per-element recording gives them, plus this record,
 * which lets the plain reverse sweep take all n elements in one tight loop
 * (sweep.c, "array runs"). The record is a summary, never the only truth:
 * dropping it loses speed, not derivatives (tape_rewind drops those it
 * cuts, tape_compact those whose elements it does not keep whole).
 * An operand is TAPE_RUN_NONE (a constant: no adjoint goes to it), ONE
 * (the id in a or b, every element: a broadcast scalar), RUN (element j
 * reads a + j), CONSTS (a run of constant entries: values only) or LIST
 * (any ids, a or b 0: an elementwise run's read from its elements' own
 * entries, none 0; a product's from its dot entries, A's row i from
 * element (i, 0)'s pairs, B's column j from element (0, j)'s). A block of
 * constant entries pushed at once has a record too: elementwise, op
 * OP_CONST, no operands (the plain sweep steps past it at once).
 * A ROWS run is an elementwise op over a rows x inner matrix one of
 * whose sides is broadcast (a row against every row: lstm's X * w), its
 * rows recorded one after another: element (i, j) is entry
 * base + i inner + j and reads, of a SEQ operand, a + i sa + j (sa the
 * operand's row step: 0 for a row read by every row, inner for a whole
 * matrix, anything else for rows spaced apart), of a ONE operand a; no
 * CONSTS or LIST operand (one record for what would be a record a row). */
enum { TAPE_RUN_NONE, TAPE_RUN_ONE, TAPE_RUN_SEQ, TAPE_RUN_CONSTS, TAPE_RUN_LIST };
enum { TAPE_RUN_ELEMWISE, TAPE_RUN_MATMUL, TAPE_RUN_ROWS };
typedef struct {
    uint32_t base, n;           /* the elements: entries base .. base + n - 1 */
    uint32_t a, b;              /* the operands (first id, or the one id) */
    uint8_t  kind, op, ka, kb;  /* TAPE_RUN_*, the op (elementwise), operand kinds */
    uint32_t rows, inner;       /* matmul: a is rows x inner, b inner x n / rows, both runs;
                                 * rows: rows x inner elements */
    uint32_t sa, sb;            /* rows: a SEQ operand's row step */
} TapeRun;

/* A place on the tape to take entries back to (tape_mark, below). */
typedef struct {
    uint32_t n, nderivs, nsides;
    size_t npool;
} TapeMark;

/* The far table of the chunk being recorded, hashed: id to slot. */
#define FAR_HASH 4096u          /* twice the slots: probes stay short */
typedef struct {
    uint32_t key[FAR_HASH], stamp[FAR_HASH];
    uint16_t slot[FAR_HASH];
    uint32_t now;               /* entries stamped otherwise are empty */
} TapeFarHash;

typedef struct {
    uint32_t *code;             /* op byte and operand fields (above) */
    double   *val;
    uint32_t  n, cap;
    TapeTables tables;
    uint32_t  window;           /* window 0 of the chunk being recorded (0: none yet) */
    uint32_t  win_d[TAPE_WINDOWS], nsmall;   /* its small windows' D (1 <= k <= nsmall: open) */
    uint32_t  small_lo, small_span;   /* the small windows' distances all lie in small_lo + [0, small_span) */
    size_t    nfar, capfar, nwide, capwide, capchunks;
    /* the chunk's far slots last found, by id mod TAPE_FAR_SEEN (0: none):
     * a loop's parameters (W2's w and b), a matrix read element by element
     * in every chunk (det's A), found inline without tape_far_field's probe */
    uint32_t  far_seen[TAPE_FAR_SEEN], far_seen_field[TAPE_FAR_SEEN];
    /* runs of far slots the chunk's table is known to hold (tape.c's
     * far_run_known: a loop's parameter arrays, read as runs every step,
     * found without a probe), valid while far_gen is theirs: bumped
     * whenever the chunk's table may lose slots (a new chunk, a rewind) */
    uint32_t  far_gen;
    struct { uint32_t id, s0, len, gen; } far_runs[TAPE_FAR_RUNS];
    uint32_t *pool;             /* operand lists of n-ary entries */
    size_t    npool, cappool;
    DerivRec *derivs;
    uint32_t  nderivs, capderivs;
    TapeSide **sides;           /* side records, by index */
    uint32_t  nsides, capsides;
    size_t    limit;            /* bytes */
    uint64_t  sweeps;           /* adjoint sweeps run */
    uint64_t  expansions;       /* derivative entries expanded for higher order */
    uint32_t  epoch;            /* bumped by clear and truncate: cached ids die */
    uint32_t  clears;           /* bumped by clear alone */
    uint64_t  reclaimed;        /* entries given back by reclaiming (tapegc.c) */
    uint64_t  reclaimed_bytes;
    uint64_t  reclaims;         /* reclaiming passes run */
    int       busy;             /* a sweep is running: ids are held in its buffers */
    int       recording;        /* 0 inside nograd and forward-only jvp */
    size_t    reserved;         /* entries the mappings hold; 0: malloc'd (tape.c) */
    size_t    prefaulted;       /* entries of the mappings faulted in */
    TapeFarHash *far_hash;      /* made when the first far slot is (start-up stays small) */
    TapeRun  *runs;             /* array runs, by base ascending (above; 36 bytes a run, a summary: not in tape_bytes) */
    uint32_t  nruns, capruns;
    const char *(*limit_hint)(void);   /* kept by tape_init (below) */
} Tape;


void     tape_init(void);
void     tape_clear(void);
void     tape_grow(void);
size_t   tape_bytes(void);
void     tape_set_limit(size_t bytes);
/* Tape.limit_hint, set by the evaluator: why the limit was reached and
 * what to do, when it knows better than "raise it" (a loop at the top
 * level); NULL if not. */
uint32_t tape_pool_push(const uint32_t *ids, uint32_t n);
uint32_t tape_side_add(TapeSide *s);            /* index for the entry's a field */
static inline TapeSide *tape_side_at(uint32_t k);
void     tape_each_side_value(void (*visit)(Value));   /* for the collector's roots */
void     tape_run_add(const TapeRun *r);      /* after its n entries */
/* The index of the highest run whose top is at or below i, or -1. */
int32_t  tape_run_below(uint32_t i);
uint32_t tape_deriv_rec(uint32_t y, const uint32_t *wrt, uint32_t nwrt,
                        const uint32_t *cuts, uint32_t ncut);
/* tape_deriv_rec for places known to be the run first .. first + nwrt - 1
 * (first not 0): no look at them (sweep_derivatives' run of leaves). */
uint32_t tape_deriv_rec_run(uint32_t y, uint32_t first, uint32_t nwrt, const uint32_t *cuts, uint32_t ncut);

/* Places for numbers bound at once (an array's elements, versions.c):
 * v[0], v[stride], ... for as long as they are plain numbers (V_NUM), at
 * most n, each as version labelling makes it a place one by one: id 0 (a
 * constant) gets a labelled leaf; an unlabelled entry is labelled in place;
 * a labelled one (some variable's version already) gets a labelled copy
 * if `copy`, else stays. The entries are the ones tape_push_raw would
 * record, field for field, with the tape's state in locals across a
 * chunk. Returns how many were taken; run says whether their ids go up by
 * one (run->next: the id the next must have, 0 at the first). */
typedef struct { uint32_t next; int consecutive; } TapeIdRun;
uint32_t tape_label_numbers(Value *v, uint32_t n, long stride, int copy, TapeIdRun *run);

/* Out of line: a chunk begins at entry i; a far slot for id (its field, or
 * TAPE_NOFIELD if the chunk's table is full); a wide entry. */
#define TAPE_NOFIELD 0xFFFFFFFFu
void     tape_chunk_begin(uint32_t i);
uint32_t tape_far_field(uint32_t id);
uint32_t tape_push_wide(uint32_t opbyte, uint32_t a, uint32_t b, double v);

#endif

/* Needs the session state (state.h includes this file again). */
#if defined(WG_STATE_DONE) && !defined(WG_TAPE_H_STATE)
#define WG_TAPE_H_STATE
static inline uint32_t tape_field_of(uint32_t i, uint32_t id)
{
    if (id == 0) return 0;
    uint32_t d = i - id;
    if (d < TAPE_NEAR) return d;
    if (G->tape.far_seen[id % TAPE_FAR_SEEN] == id) return G->tape.far_seen_field[id % TAPE_FAR_SEEN];   /* a loop's parameters */
    if (d - G->tape.window < TAPE_WINDOW_LEN) return TAPE_WINDOW + (d - G->tape.window);   /* no window: d - 0 >= TAPE_NEAR fails */
    return tape_far_field(id);
}

/* The id the next entry gets, with room for it and its chunk begun. */
static inline uint32_t tape_next_slot(void)
{
    if (__builtin_expect(G->tape.n == G->tape.cap, 0)) tape_grow();
    uint32_t i = G->tape.n;
    if (__builtin_expect((i & ((1u << TAPE_CHUNK_BITS) - 1)) == 0, 0)) tape_chunk_begin(i);
    return i;
}

/* Whether op's fields are operand ids (num_op_ids), folded to a constant
 * when op is one (most recording sites name their op): from ops.def, as
 * num.c's table is. */
static inline __attribute__((always_inline)) int tape_op_has_ids(uint32_t op)
{
    if (!__builtin_constant_p(op)) return num_op_ids[op];
    switch (op) {
#define OP(e, name, kind, flags, f, da, db) case OP_##e: return OPK_IDS_##kind;
#include "ops.def"
#undef OP
    }
    return 0;
}

/* tape_field_of's tests that need no call: the field of id, or
 * TAPE_NOFIELD where tape_field_of would go out of line (a new far slot
 * or window may be wanted). */
static inline __attribute__((always_inline)) uint32_t tape_field_known(uint32_t i, uint32_t id)
{
    if (id == 0) return 0;
    uint32_t d = i - id;
    if (d < TAPE_NEAR) return d;
    if (G->tape.far_seen[id % TAPE_FAR_SEEN] == id) return G->tape.far_seen_field[id % TAPE_FAR_SEEN];
    if (d - G->tape.window < TAPE_WINDOW_LEN) return TAPE_WINDOW + (d - G->tape.window);
    return TAPE_NOFIELD;
}

/* Everything tape_push_raw's inline path declines (tape.c); an entry
 * whose op is known to have fields that are not operand ids (a sum's pool
 * offset, a side record: wide, or a packed deriv) goes to tape_push_fields
 * at once. */
uint32_t tape_push_slow(uint32_t opbyte, uint32_t a, uint32_t b, double v);
uint32_t tape_push_fields(uint32_t opbyte, uint32_t a, uint32_t b, double v);

/* opbyte: the op, with TAPE_LABELED if it is a version already. The
 * common case (room left, not a chunk's first entry, both operands' fields
 * known without a call) is recorded inline and calls nothing, so that a
 * recording function saves no registers for it; the rest, out of line,
 * records the same entry the same way. */
static inline __attribute__((always_inline)) uint32_t tape_push_raw(uint32_t opbyte, uint32_t a, uint32_t b, double v)
{
    if (__builtin_constant_p(opbyte) && !tape_op_has_ids(opbyte & TAPE_OPMASK)) return tape_push_fields(opbyte, a, b, v);
    uint32_t i = G->tape.n;
    if (__builtin_expect(tape_op_has_ids(opbyte & TAPE_OPMASK) && i < G->tape.cap
                         && (i & ((1u << TAPE_CHUNK_BITS) - 1)) != 0, 1)) {
        uint32_t fa = tape_field_known(i, a), fb = tape_field_known(i, b);
        if (__builtin_expect((fa | fb) < (1u << 12), 1)) {    /* both known (TAPE_NOFIELD is not) */
            G->tape.code[i] = opbyte | fa << 8 | fb << 20;
            G->tape.val[i] = v;
            G->tape.n = i + 1;
            return i;
        }
    }
    return tape_push_slow(opbyte, a, b, v);
}

static inline __attribute__((always_inline)) uint32_t tape_push(int op, uint32_t a, uint32_t b, double v)
{
    return tape_push_raw((uint32_t)op, a, b, v);
}

/* ---- reading entries. Nothing outside src/tape*.[ch] touches the
 * arrays: the layout can change here alone. */
static inline __attribute__((always_inline)) uint32_t tape_field_in(const TapeTables *t, uint32_t i, uint32_t f)
{
    if (f < TAPE_NEAR) return f ? i - f : 0;
    if (f < TAPE_WINDOW) return t->far[t->chunk_far[i >> TAPE_CHUNK_BITS] + (f - TAPE_NEAR)];
    if (f < TAPE_SMALL) return i - t->chunk_window[i >> TAPE_CHUNK_BITS] - (f - TAPE_WINDOW);
    return i - f - t->chunk_small[(i >> TAPE_CHUNK_BITS) * TAPE_SMALLS + (f >> TAPE_SMALL_BITS) - TAPE_SMALL / TAPE_SMALL_LEN];
}
/* The fields of a wide entry i (packed or in the wide table). */
static inline TapeArgs tape_wide_in(const TapeTables *t, uint32_t i)
{
    uint32_t c = G->tape.code[i];
    if (c & TAPE_PACKED) {
        const TapeDerivBase *base = &t->chunk_deriv[i >> TAPE_CHUNK_BITS];
        uint32_t dc = (c >> 8) & (TAPE_PACKED_CALLS - 1), w = (c >> 19) & (TAPE_PACKED_PLACES - 1);
        return (TapeArgs){ base->call + dc, dc ? w : base->which + w };
    }
    return t->wide[t->chunk_wide[i >> TAPE_CHUNK_BITS] + (c >> 8)];
}
/* Both fields of entry i, decoded with tables t (tape_compact decodes with
 * the tables it is replacing). */
static inline TapeArgs tape_args_in(const TapeTables *t, uint32_t i)
{
    uint32_t c = G->tape.code[i];
    if (__builtin_expect(c & TAPE_WIDE, 0)) return tape_wide_in(t, i);
    return (TapeArgs){ tape_field_in(t, i, (c >> 8) & 0xfff), tape_field_in(t, i, c >> 20) };
}
/* The wide-table fields of a sum or dot (never packed). */
static inline const TapeArgs *tape_wide_at(uint32_t i)
{
    return &G->tape.tables.wide[G->tape.tables.chunk_wide[i >> TAPE_CHUNK_BITS] + (G->tape.code[i] >> 8)];
}
static inline int      tape_opcode(uint32_t i) { return G->tape.code[i] & TAPE_OPMASK; }
static inline double   tape_val(uint32_t i)    { return G->tape.val[i]; }
static inline const double *tape_vals(void)    { return G->tape.val; }   /* every value, by id (the array runs' loops) */
static inline const uint32_t *tape_codes(void) { return G->tape.code; }  /* every code, by id (the same; tape_opcode's byte) */
static inline __attribute__((always_inline)) uint32_t tape_a(uint32_t i)      /* first operand */
{
    uint32_t c = G->tape.code[i];
    return __builtin_expect(c & TAPE_WIDE, 0) ? tape_wide_in(&G->tape.tables, i).a : tape_field_in(&G->tape.tables, i, (c >> 8) & 0xfff);
}
static inline __attribute__((always_inline)) uint32_t tape_b(uint32_t i)      /* second operand */
{
    uint32_t c = G->tape.code[i];
    return __builtin_expect(c & TAPE_WIDE, 0) ? tape_wide_in(&G->tape.tables, i).b : tape_field_in(&G->tape.tables, i, c >> 20);
}
static inline int      tape_labeled(uint32_t i) { return (G->tape.code[i] & TAPE_LABELED) != 0; }
static inline int      tape_wide(uint32_t i)    { return (G->tape.code[i] & (TAPE_WIDE | TAPE_PACKED)) == TAPE_WIDE; }   /* has a wide-table slot */
static inline size_t   tape_far_count(void)     { return G->tape.nfar; }
static inline uint32_t tape_size(void)         { return G->tape.n; }          /* entries, #0 included */
static inline TapeArgs tape_args(uint32_t i)   { return (TapeArgs){ tape_a(i), tape_b(i) }; }   /* both fields */
static inline size_t   tape_pool_size(void)    { return G->tape.npool; }
static inline uint32_t tape_deriv_calls(void)  { return G->tape.nderivs; }

/* n-ary entries keep their operands in the pool: sum its terms, dot its
 * pairs (x0, y0, x1, y1, ...); a deriv entry names its d call and which
 * of the call's results it is. A sum over consecutive entries (an array
 * written by one loop or one vector op, a gradient) keeps no list: its
 * fields are the first entry and the count with TAPE_SUM_RUN set. Every
 * term of a live sum is live, and reclaiming keeps the order, so a run
 * stays a run. */
#define TAPE_SUM_RUN 0x80000000u
typedef struct { const uint32_t *list; uint32_t first, n; } TapeTerms;
static inline TapeTerms tape_terms(uint32_t i)
{
    const TapeArgs *w = tape_wide_at(i);
    if (w->b & TAPE_SUM_RUN) return (TapeTerms){ NULL, w->a, w->b & ~TAPE_SUM_RUN };
    return (TapeTerms){ G->tape.pool + w->a, 0, w->b };
}
static inline uint32_t tape_term(TapeTerms t, uint32_t j) { return t.list ? t.list[j] : t.first + j; }
/* A logsumexp entry (OP_LSE): fields a, the pool offset of its operands
 * (the first id alone when b has TAPE_SUM_RUN, else the n ids), and b, n.
 * After them, at the next even offset (a pad slot is reserved, so that
 * the doubles stay 8-byte aligned wherever the pool puts them), m, 1 / s
 * and e_0 .. e_{n-1} as doubles (2 slots each): tape_lse_slots in all. */
typedef double __attribute__((may_alias)) TapeF64;
typedef struct { TapeTerms t; const TapeF64 *e; double m, inv; } TapeLse;
static inline uint32_t tape_lse_slots(uint32_t n, int run) { return (run ? 1 : n) + 1 + 2 * (2 + n); }
static inline uint32_t tape_lse_data(uint32_t off, uint32_t n, int run)
{
    uint32_t d = off + (run ? 1 : n);
    return d + (d & 1);
}
static inline TapeLse tape_lse(uint32_t i)
{
    const TapeArgs *w = tape_wide_at(i);
    int run = (w->b & TAPE_SUM_RUN) != 0;
    uint32_t n = w->b & ~TAPE_SUM_RUN;
    const TapeF64 *d = (const TapeF64 *)(G->tape.pool + tape_lse_data(w->a, n, run));
    TapeTerms t = run ? (TapeTerms){ NULL, G->tape.pool[w->a], n } : (TapeTerms){ G->tape.pool + w->a, 0, n };
    return (TapeLse){ t, d + 2, d[0], d[1] };
}
static inline const uint32_t *tape_pairs(uint32_t i, uint32_t *n) { const TapeArgs *w = tape_wide_at(i); *n = w->b; return G->tape.pool + w->a; }
static inline uint32_t tape_deriv_call_of(uint32_t i, uint32_t *which)
{
    TapeArgs w = tape_wide_in(&G->tape.tables, i);
    if (which) *which = w.b;
    return w.a;
}
static inline DerivRec *tape_deriv_call(uint32_t r) { return &G->tape.derivs[r]; }
/* Place j of a d call (a run stays a run when reclaiming: every place of
 * a live call is live, and the order is kept). */
static inline uint32_t tape_deriv_wrt(const DerivRec *r, uint32_t j) { return r->wrt_run ? r->wrt_off + j : G->tape.pool[r->wrt_off + j]; }
static inline uint32_t *tape_pool_at(uint32_t off) { return G->tape.pool + off; }
static inline TapeSide *tape_side_at(uint32_t k) { return G->tape.sides[k]; }
static inline uint32_t tape_side_count(void) { return G->tape.nsides; }

/* Every operand of entry i, n-ary ones included (a deriv entry: its y and
 * the places it was taken with respect to; a checkpointed loop: the ids its
 * side record lists). */
void tape_each_operand(uint32_t i, void (*fn)(uint32_t id, void *ud), void *ud);

/* ---- taking back: entries recorded since a mark are dropped (plot runs
 * functions that record anyway). The caller makes sure no live value names
 * them; derivative entries expanded meanwhile forget the expansion. */
TapeMark tape_mark(void);
int      tape_grew_since(TapeMark m);
void     tape_truncate(TapeMark m);

/* ---- reclaiming (tapegc.c decides what is live; this moves it). The
 * entries of [m.n, n) whose live[i - m.n] is set are kept, in order, and
 * moved down; newpos[k] receives where position m.n + k went (for a kept
 * entry, its new id; otherwise where the next kept one went), for k up to
 * and including n - m.n. Every id the tape holds itself (operands,
 * operand lists, derivative calls, side records) is rewritten; derivative
 * calls and side records that no kept entry names are dropped, and
 * expansions recorded at or above m.n are forgotten (they are recorded
 * again when needed). Entries below m.n do not move. */
void     tape_compact(TapeMark m, const uint8_t *live, uint32_t *newpos);
/* Whether entry i hangs a side record off its a field (its kind's side
 * column, ops.def). */
static inline int tape_has_side(uint32_t i) { return num_op_side[tape_opcode(i)]; }
/* Every id entry i holds beyond tape_each_operand: a derivative call's
 * cuts, a side record's ids. */
void     tape_each_extra_id(uint32_t i, void (*fn)(uint32_t *id, void *ud), void *ud);
/* A d call's expansion, if recorded: the entry each wrt got (0: a
 * constant), and its first entry. Reclaiming keeps the expansions of live
 * calls. */
const uint32_t *tape_call_expansion(uint32_t call, uint32_t *n, uint32_t *first);

/* ---- recording */
static inline uint32_t rec_op(int op, uint32_t a, uint32_t b, double v) { return tape_push(op, a, b, v); }
static inline uint32_t rec_leaf(double v) { return tape_push(OP_LEAF, 0, 0, v); }
static inline uint32_t rec_copy(uint32_t a, double v) { return tape_push(OP_COPY, a, 0, v); }
static inline uint32_t rec_const(double v) { return tape_push(OP_CONST, 0, 0, v); }
static inline void     rec_label(uint32_t i) { G->tape.code[i] |= TAPE_LABELED; }
/* An n-ary entry: reserve its operand list (n ids for a sum, 2n for a
 * dot), fill it (recording the operands' constants meanwhile, so that
 * every operand precedes the entry), then record the entry. The pointer
 * is valid until the next reservation. */
uint32_t *tape_rec_operands(uint32_t count, uint32_t *off);
uint32_t tape_rec_sum(uint32_t off, uint32_t n, double v);
uint32_t tape_rec_sum_run(uint32_t first, uint32_t n, double v);   /* terms first .. first + n - 1 */
uint32_t tape_rec_dot(uint32_t off, uint32_t n, double v);
/* logsumexp as one entry (OP_LSE): reserve tape_lse_slots(n, run) in the
 * pool (tape_rec_operands), write the first id (run) or the n ids (none
 * 0) at off and m, 1 / s, e_0 ... at tape_lse_data, then record it. */
uint32_t tape_rec_lse(uint32_t off, uint32_t n, int run, double v);
/* n dot entries in a row of k pairs each (a row of a matrix product):
 * entry e's pairs at pool offset off + 2 * k * e, its value v[e]. Returns
 * the first's id (the others follow it). */
uint32_t tape_rec_dot_run(uint32_t off, uint32_t k, uint32_t n, const double *v);
uint32_t tape_rec_deriv(uint32_t call, uint32_t which, double v);
/* tape_rec_deriv for places which .. which + n - 1 of the call, their values in
 * out[0 .. n - 1].u.n, each out[j] becoming its recorded number: the n
 * entries of a gradient over an array in one loop. */
void     tape_rec_deriv_run(uint32_t call, uint32_t which, uint32_t n, Value *out);
/* Many entries at once: room for count more entries, 0 if the memory cap
 * leaves none (the caller records entry by entry then, which says so). */
int      tape_reserve(uint32_t count);
/* n entries of op (unary or binary), reserved, their values already at
 * tape_vals()[tape_size() ...]: entry k's operands a + k * sa and
 * b + k * sb (sa, sb 1: a run of entries, 0: one id; id 0: a constant),
 * the codes written a chunk at a time. Returns the first's id. */
uint32_t tape_push_elems(int op, uint32_t a, uint32_t sa, uint32_t b, uint32_t sb, uint32_t n);
/* rows x cols entries of op, reserved, their values already there, row
 * by row as tape_push_elems records each row: entry (i, j)'s operands
 * a + i * ra + j * sa and b + i * rb + j * sb (a broadcast's rows: a
 * whole matrix's ra = cols, one row for all ra = 0). A row whose
 * fields would be the row before's (the same distances, or the same far
 * slots, in the same chunk) copies that row's codes. Returns the first's id. */
uint32_t tape_push_rows(int op, uint32_t a, uint32_t sa, uint32_t ra, uint32_t b, uint32_t sb, uint32_t rb,
                        uint32_t rows, uint32_t cols);
/* Where the values of the reserved entries go: tape_vals()[tape_size() ...]. */
static inline double *tape_reserved_vals(void) { return G->tape.val + G->tape.n; }

#endif
