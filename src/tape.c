/* tape.c: storage for the session tape and its memory cap. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* mremap */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "tape.h"
#include "error.h"
#include "state.h"


#define ENTRY_BYTES (sizeof(uint32_t) + sizeof(double))   /* code and value */

/* ---- where the entry arrays live. Each array is a mapping of address
 * space reserved for as many entries as the memory cap allows (at most
 * RESERVE_MAX), backed by memory only where entries are written: the tape
 * grows without moving, so growing copies nothing and faults each page in
 * once, and the peak memory of a growing tape is the tape. A raised cap
 * moves the mappings (mremap, no copy). Where reserving fails (strict
 * overcommit, a small address-space limit) the arrays are malloc'd and
 * grown by realloc as before. */
#define RESERVE_MAX ((size_t)1 << 26)  /* entries: 1.1 GB of address space */
#if defined(__SANITIZE_ADDRESS__) || defined(__EMSCRIPTEN__)
#define RESERVE 0      /* under ASan the malloc'd arrays keep their bounds checked;
                        * WebAssembly has no address space to reserve */
#else
#define RESERVE 1
#endif

static size_t map_bytes(size_t n, size_t size)
{
    size_t b = n * size, page = 1 << 16;
    return (b + page - 1) / page * page;
}

static void *map_array(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void free_arrays(void)
{
    if (G->tape.reserved) {
        if (G->tape.code) munmap(G->tape.code, map_bytes(G->tape.reserved, sizeof(uint32_t)));
        if (G->tape.val) munmap(G->tape.val, map_bytes(G->tape.reserved, sizeof(double)));
    } else {
        free(G->tape.code);
        free(G->tape.val);
    }
    G->tape.code = NULL;
    G->tape.val = NULL;
    G->tape.reserved = 0;
    free(G->tape.tables.far);
    free(G->tape.tables.wide);
    free(G->tape.tables.chunk_far);
    free(G->tape.tables.chunk_far_inherited);
    free(G->tape.tables.chunk_wide);
    free(G->tape.tables.chunk_window);
    free(G->tape.tables.chunk_small);
    free(G->tape.tables.chunk_deriv);
    G->tape.tables.far = NULL;
    G->tape.tables.wide = NULL;
    G->tape.tables.chunk_far = G->tape.tables.chunk_wide = G->tape.tables.chunk_window = G->tape.tables.chunk_small = NULL;
    G->tape.tables.chunk_far_inherited = NULL;
    G->tape.tables.chunk_deriv = NULL;
}

/* Fresh arrays for n entries: reserved mappings, else NULL (the caller
 * mallocs). */
static int reserve_arrays(size_t n)
{
    uint32_t *code = map_array(map_bytes(n, sizeof(uint32_t)));
    double *val = code ? map_array(map_bytes(n, sizeof(double))) : NULL;
    if (!val) {
        if (code) munmap(code, map_bytes(n, sizeof(uint32_t)));
        return 0;
    }
    G->tape.code = code;
    G->tape.val = val;
    G->tape.reserved = n;
    G->tape.prefaulted = 0;
    return 1;
}

/* The capacity of the mappings for a tape of n entries, at most limit:
 * the mappings' pages are faulted in ahead of the tape, a stretch at a
 * time (a quarter of what is in, 4096 to 131072 entries, 1.5 MB at most
 * ahead of the last entry), so a growing tape takes one call per stretch
 * instead of a fault per page (err_prefault). */
static size_t prefault_to(size_t n, size_t limit)
{
    size_t from = G->tape.prefaulted > n ? G->tape.prefaulted : n, step = from / 4;
    if (step < 4096) step = 4096;
    if (step > 131072) step = 131072;
    size_t to = from + step < limit ? from + step : limit;
    if (to > G->tape.prefaulted) {
        err_prefault(G->tape.code + G->tape.prefaulted, (to - G->tape.prefaulted) * sizeof(uint32_t));
        err_prefault(G->tape.val + G->tape.prefaulted, (to - G->tape.prefaulted) * sizeof(double));
        G->tape.prefaulted = to;
    }
    return to;
}

/* A fresh tape's capacity in its mappings, at most limit: kept mappings
 * (a cleared tape reusing them) start with the pages they have, fresh
 * ones with a first stretch. Stretching past kept pages at every clear
 * made a driver that clears after each run prefault a further quarter
 * each time, until every clear gave back and faulted in again 1.5 MB
 * beyond TAPE_KEEP_ENTRIES (kmeans' dir: 0.3 ms of a 1.2 ms run). */
static size_t first_cap(size_t limit)
{
    if (G->tape.prefaulted) return G->tape.prefaulted < limit ? G->tape.prefaulted : limit;
    return prefault_to(0, limit);
}

/* The mappings moved to hold n entries; 0 if that failed (nothing changed). */
static int remap_arrays(size_t n)
{
    void *p[2] = { G->tape.code, G->tape.val };
    size_t size[2] = { sizeof(uint32_t), sizeof(double) };
    for (int k = 0; k < 2; k++) {
        void *q = mremap(p[k], map_bytes(G->tape.reserved, size[k]), map_bytes(n, size[k]), MREMAP_MAYMOVE);
        if (q == MAP_FAILED) {
            /* the ones already moved are bigger now: keep them, at the old count */
            G->tape.code = p[0];
            G->tape.val = p[1];
            for (int j = 0; j < k; j++) {
                void *back = mremap(p[j], map_bytes(n, size[j]), map_bytes(G->tape.reserved, size[j]), 0);
                if (back == MAP_FAILED) err_raise("out of memory growing the tape to %zu entries", n);
            }
            return 0;
        }
        p[k] = q;
    }
    G->tape.code = p[0];
    G->tape.val = p[1];
    G->tape.reserved = n;
    return 1;
}

static size_t max_entries(void)
{
    size_t maxn = G->tape.limit / ENTRY_BYTES;
    return maxn > 0xF0000000u ? 0xF0000000u : maxn;
}


/* ---- the code's far tables and wide entries (tape.h, "the code"). The
 * far table of the chunk being recorded is also hashed, id to slot. */
static void check_limit(size_t more);


/* The hash of a session that has not needed one yet: never written, and
 * empty (no stamp is `now`), so a tape that never reaches a far operand
 * keeps start-up from clearing 40 KB. far_hash_put makes the real one. */
static TapeFarHash far_hash_none = { .now = 1 };

static void far_hash_reset(void)
{
    G->tape.far_gen++;          /* the runs known in the table are forgotten */
    memset(G->tape.far_seen, 0, sizeof G->tape.far_seen);
    if (G->tape.far_hash == &far_hash_none) return;
    if (++G->tape.far_hash->now == 0) {
        memset(G->tape.far_hash->stamp, 0, sizeof G->tape.far_hash->stamp);
        G->tape.far_hash->now = 1;
    }
}

static inline uint32_t far_hash_at(uint32_t id) { return (id * 2654435761u) >> (32 - 12); }

static void far_hash_put(uint32_t id, uint32_t slot)
{
    if (G->tape.far_hash == &far_hash_none) {
        G->tape.far_hash = err_calloc(1, sizeof *G->tape.far_hash);
        G->tape.far_hash->now = 1;
    }
    uint32_t h = far_hash_at(id);
    while (G->tape.far_hash->stamp[h] == G->tape.far_hash->now) h = (h + 1) & (FAR_HASH - 1);
    G->tape.far_hash->stamp[h] = G->tape.far_hash->now;
    G->tape.far_hash->key[h] = id;
    G->tape.far_hash->slot[h] = (uint16_t)slot;
}

/* The chunk of entry i. */
static inline uint32_t chunk_of(uint32_t i) { return i >> TAPE_CHUNK_BITS; }

/* Room for `need` items of `size` bytes in a table (*cap items now); the
 * size is kept only once the memory is had. The tables may grow by more
 * than one at a time: tape_compact asks for its worst case up front. */
static void *reserve_table(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return p;
    size_t grown = *cap ? 2 * *cap : 1024;
    while (grown < need) grown *= 2;
    p = err_realloc(p, grown * size);
    *cap = grown;
    return p;
}

static void reserve_far(size_t need) { G->tape.tables.far = reserve_table(G->tape.tables.far, &G->tape.capfar, need, sizeof(uint32_t)); }
static void reserve_wide(size_t need) { G->tape.tables.wide = reserve_table(G->tape.tables.wide, &G->tape.capwide, need, sizeof(TapeArgs)); }

/* Chunk c's far table (c the chunk being begun, c - 1 the last one
 * recorded): the table of chunk c - 1 taken over whole if it is short
 * (tape.h: its slots keep their fields, and so do far_seen's, so a loop's
 * parameters cost no far id and no lookup again), else a table of its own
 * from the far ids' end. */
static void far_table_begin(uint32_t c)
{
    uint32_t prev = c ? G->tape.tables.chunk_far[c - 1] : (uint32_t)G->tape.nfar;
    uint32_t len = (uint32_t)G->tape.nfar - prev;
    if (!c || len > TAPE_FAR_INHERIT) {
        G->tape.tables.chunk_far[c] = (uint32_t)G->tape.nfar;
        G->tape.tables.chunk_far_inherited[c] = 0;
        far_hash_reset();
        return;
    }
    G->tape.tables.chunk_far[c] = prev;
    G->tape.tables.chunk_far_inherited[c] = len;
    uint32_t seen[TAPE_FAR_SEEN];
    memcpy(seen, G->tape.far_seen, sizeof seen);
    far_hash_reset();
    memcpy(G->tape.far_seen, seen, sizeof seen);
    for (uint32_t k = 0; k < len; k++) far_hash_put(G->tape.tables.far[prev + k], k);
}

void tape_chunk_begin(uint32_t i)
{
    uint32_t c = chunk_of(i);
    if (c >= G->tape.capchunks) {     /* both grown before either is kept */
        size_t grown = G->tape.capchunks ? 2 * G->tape.capchunks : 64;
        while (grown <= c) grown *= 2;
        uint32_t *f = realloc(G->tape.tables.chunk_far, grown * sizeof(uint32_t));
        if (f) G->tape.tables.chunk_far = f;
        uint32_t *h = realloc(G->tape.tables.chunk_far_inherited, grown * sizeof(uint32_t));
        if (h) G->tape.tables.chunk_far_inherited = h;
        uint32_t *w = realloc(G->tape.tables.chunk_wide, grown * sizeof(uint32_t));
        if (w) G->tape.tables.chunk_wide = w;
        uint32_t *d = realloc(G->tape.tables.chunk_window, grown * sizeof(uint32_t));
        if (d) G->tape.tables.chunk_window = d;
        uint32_t *s = realloc(G->tape.tables.chunk_small, grown * TAPE_SMALLS * sizeof(uint32_t));
        if (s) G->tape.tables.chunk_small = s;
        TapeDerivBase *b = realloc(G->tape.tables.chunk_deriv, grown * sizeof(TapeDerivBase));
        if (b) G->tape.tables.chunk_deriv = b;
        if (!f || !h || !w || !d || !s || !b) err_raise("out of memory growing the tape to %u entries", i);
        G->tape.capchunks = grown;
    }
    G->tape.tables.chunk_wide[c] = (uint32_t)G->tape.nwide;
    G->tape.tables.chunk_window[c] = G->tape.window = G->tape.nsmall = 0;
    G->tape.small_span = 0;
    G->tape.tables.chunk_deriv[c].call = TAPE_NO_BASE;
    far_table_begin(c);
}

/* ---- windows (tape.h): window k of the chunk being recorded holds
 * distances D_k .. D_k + len - 1 (win_d[0] is G->tape.window). */
static inline uint32_t window_len(uint32_t k) { return k ? TAPE_SMALL_LEN : TAPE_WINDOW_LEN; }
static inline uint32_t small_e(uint32_t k) { return G->tape.win_d[k] - (TAPE_SMALL + (k - 1) * TAPE_SMALL_LEN); }

/* The field of distance d in open window k. */
static inline uint32_t window_field(uint32_t k, uint32_t d)
{
    return k ? d - small_e(k) : TAPE_WINDOW + (d - G->tape.window);
}

/* The small windows' range (tape.h: small_lo, small_span) with window k's
 * distances in it. */
static inline void small_range_add(uint32_t k)
{
    uint32_t lo = G->tape.win_d[k], hi = lo + TAPE_SMALL_LEN;
    if (G->tape.small_span) {
        uint32_t top = G->tape.small_lo + G->tape.small_span;
        if (G->tape.small_lo < lo) lo = G->tape.small_lo;
        if (top > hi) hi = top;
    }
    G->tape.small_lo = lo;
    G->tape.small_span = hi - lo;
}

/* The chunk's open window that holds distance d, or TAPE_WINDOWS. A
 * distance outside every small window's (a distance that grows, as most
 * do) is told by one test, not a scan. */
static inline uint32_t window_find(uint32_t d)
{
    if (d - G->tape.window < TAPE_WINDOW_LEN) return 0;     /* (none: d - 0 >= TAPE_NEAR fails) */
    if (d - G->tape.small_lo >= G->tape.small_span) return TAPE_WINDOWS;
    for (uint32_t k = 1; k <= G->tape.nsmall; k++)
        if (d - G->tape.win_d[k] < TAPE_SMALL_LEN) return k;
    return TAPE_WINDOWS;
}

static inline int window_left(void) { return !G->tape.window || G->tape.nsmall < TAPE_SMALLS; }

/* A new window for distance d (one is left), its index: window 0 from d
 * on, else a small one, next to an open window that d has just left (a
 * stream whose distance drifts goes on in it), else with d in its middle. */
static uint32_t window_open(uint32_t d)
{
    if (!G->tape.window) {
        G->tape.tables.chunk_window[chunk_of(G->tape.n)] = G->tape.window = G->tape.win_d[0] = d;
        return 0;
    }
    uint32_t k = ++G->tape.nsmall, D = d - TAPE_SMALL_LEN / 2;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t dj = G->tape.win_d[j], top = dj + window_len(j);
        if (d - top < TAPE_SMALL_LEN) D = top;                                  /* drifting up */
        else if (dj - 1 - d < TAPE_SMALL_LEN && dj > TAPE_SMALL_LEN) D = dj - TAPE_SMALL_LEN;   /* down */
        else continue;
        break;
    }
    G->tape.win_d[k] = D;
    small_range_add(k);
    G->tape.tables.chunk_small[chunk_of(G->tape.n) * TAPE_SMALLS + k - 1] = small_e(k);
    return k;
}

/* A new far slot for id in the chunk being recorded (one is free): its field. */
static uint32_t far_slot_new(uint32_t id)
{
    uint32_t used = (uint32_t)G->tape.nfar - G->tape.tables.chunk_far[chunk_of(G->tape.n)];
    check_limit(sizeof(uint32_t));
    reserve_far(G->tape.nfar + 1);
    G->tape.tables.far[G->tape.nfar++] = id;
    far_hash_put(id, used);
    return TAPE_NEAR + used;
}

static inline uint32_t far_slots_left(void)
{
    return TAPE_FAR_SLOTS - ((uint32_t)G->tape.nfar - G->tape.tables.chunk_far[chunk_of(G->tape.n)]);
}

/* The far slot of id in the chunk being recorded, or -1. */
static inline int32_t far_hash_find(uint32_t id)
{
    for (uint32_t h = far_hash_at(id); G->tape.far_hash->stamp[h] == G->tape.far_hash->now; h = (h + 1) & (FAR_HASH - 1))
        if (G->tape.far_hash->key[h] == id) return G->tape.far_hash->slot[h];
    return -1;
}

/* The field of id's far slot in the chunk being recorded, or TAPE_NOFIELD. */
static inline uint32_t far_slot_field(uint32_t id)
{
    int32_t s = far_hash_find(id);
    return s >= 0 ? TAPE_NEAR + (uint32_t)s : TAPE_NOFIELD;
}

/* The far slot of id in the chunk being recorded if it has one; else
 * -1, and id is hashed to `slot` unless that is TAPE_NOFIELD (one probe
 * for far_hash_find and far_hash_put both: the empty place the search
 * ends at is where the put goes). The hash exists. */
static inline int32_t far_hash_claim(uint32_t id, uint32_t slot)
{
    TapeFarHash *fh = G->tape.far_hash;
    uint32_t h = far_hash_at(id);
    for (; fh->stamp[h] == fh->now; h = (h + 1) & (FAR_HASH - 1))
        if (fh->key[h] == id) return fh->slot[h];
    if (slot != TAPE_NOFIELD) {
        fh->stamp[h] = fh->now;
        fh->key[h] = id;
        fh->slot[h] = (uint16_t)slot;
    }
    return -1;
}

/* A distant operand recorded alone (tape_field_of's inline tests
 * failed): its far slot, a small window that holds its distance, window 0
 * if the chunk has none yet (W4's loop), a new far slot, a new small
 * window (a loop over more distant arrays than one); TAPE_NOFIELD if
 * none. */
uint32_t tape_far_field(uint32_t id)
{
    int32_t s = far_hash_find(id);
    uint32_t f, d = G->tape.n - id, k;
    if (s >= 0) f = TAPE_NEAR + (uint32_t)s;
    else if ((k = window_find(d)) < TAPE_WINDOWS || (!G->tape.window && (k = window_open(d)) == 0)) return window_field(k, d);
    else if (far_slots_left()) f = far_slot_new(id);
    else if (window_left()) return window_field(window_open(d), d);
    else return TAPE_NOFIELD;
    G->tape.far_seen[id % TAPE_FAR_SEEN] = id;
    G->tape.far_seen_field[id % TAPE_FAR_SEEN] = f;
    return f;
}

/* Deriv entry i's fields packed against its chunk's base (the chunk's
 * first deriv entry sets it), or TAPE_NOFIELD. */
static inline uint32_t deriv_packed(uint32_t i, uint32_t call, uint32_t which)
{
    TapeDerivBase *base = &G->tape.tables.chunk_deriv[chunk_of(i)];
    if (base->call == TAPE_NO_BASE) *base = (TapeDerivBase){ call, which };
    uint32_t dc = call - base->call, w = dc ? which : which - base->which;
    if (dc >= TAPE_PACKED_CALLS || w >= TAPE_PACKED_PLACES) return TAPE_NOFIELD;
    return dc << 8 | w << 19;
}

/* Deriv entry i (the next one) packed, if its fields pack; 0 if not. */
static inline int push_packed_deriv(uint32_t opbyte, uint32_t i, uint32_t call, uint32_t which, double v)
{
    uint32_t f = deriv_packed(i, call, which);
    if (f == TAPE_NOFIELD) return 0;
    G->tape.code[i] = (opbyte & ~(uint32_t)TAPE_WIDE) | TAPE_WIDE | TAPE_PACKED | f;
    G->tape.val[i] = v;
    G->tape.n = i + 1;
    return 1;
}

uint32_t tape_push_wide(uint32_t opbyte, uint32_t a, uint32_t b, double v)
{
    uint32_t i = G->tape.n;
    if ((opbyte & TAPE_OPMASK) == OP_DERIV && push_packed_deriv(opbyte, i, a, b, v)) return i;
    check_limit(sizeof(TapeArgs));
    reserve_wide(G->tape.nwide + 1);
    uint32_t k = (uint32_t)G->tape.nwide - G->tape.tables.chunk_wide[chunk_of(i)];
    G->tape.tables.wide[G->tape.nwide++] = (TapeArgs){ a, b };
    G->tape.code[i] = (opbyte & ~(uint32_t)TAPE_WIDE) | TAPE_WIDE | k << 8;
    G->tape.val[i] = v;
    G->tape.n = i + 1;
    return i;
}

uint32_t tape_push_fields(uint32_t opbyte, uint32_t a, uint32_t b, double v)
{
    tape_next_slot();
    return tape_push_wide(opbyte, a, b, v);
}

/* tape_push_raw out of line (tape.h): room made, the chunk begun, the
 * operands' fields found (a far slot or window opened) or the entry wide. */
uint32_t tape_push_slow(uint32_t opbyte, uint32_t a, uint32_t b, double v)
{
    uint32_t i = tape_next_slot();
    if (num_op_ids[opbyte & TAPE_OPMASK]) {
        uint32_t fa = tape_field_of(i, a), fb = tape_field_of(i, b);
        if ((fa | fb) < (1u << 12)) {
            G->tape.code[i] = opbyte | fa << 8 | fb << 20;
            G->tape.val[i] = v;
            G->tape.n = i + 1;
            return i;
        }
    }
    return tape_push_wide(opbyte, a, b, v);
}

uint32_t tape_label_numbers(Value *v, uint32_t n, long stride, int copy, TapeIdRun *run)
{
    uint32_t i = G->tape.n, end = i;     /* entries i .. end - 1: room, in a begun chunk */
    uint32_t *code = G->tape.code;
    double *val = G->tape.val;
    uint32_t j = 0, next = run->next;
    int consecutive = run->consecutive;
    for (; j < n && v->t == V_NUM; j++, v += stride) {
        uint32_t id = v->id;
        if (id && !(code[id] & TAPE_LABELED)) code[id] |= TAPE_LABELED;
        else if (id && !copy) { /* a place already: stays */ }
        else {
            if (i == end) {                     /* (tape_next_slot: room, the chunk begun) */
                G->tape.n = i;
                i = tape_next_slot();
                end = (i | ((1u << TAPE_CHUNK_BITS) - 1)) + 1;
                if (end > G->tape.cap) end = G->tape.cap;
                code = G->tape.code, val = G->tape.val;
            }
            uint32_t f = tape_field_known(i, id);
            if (__builtin_expect(f < (1u << 12), 1)) {
                code[i] = (id ? OP_COPY : OP_LEAF) | TAPE_LABELED | f << 8;
                val[i] = v->u.n;
                id = i++;
            } else {                            /* a new far slot or window, or wide */
                G->tape.n = i;
                id = tape_push_slow(OP_COPY | TAPE_LABELED, id, 0, v->u.n);
                i = G->tape.n;
            }
            v->id = id;
        }
        consecutive &= (id == next) | (next == 0);
        next = id + 1;
    }
    G->tape.n = i;
    run->next = next, run->consecutive = consecutive;
    return j;
}

/* The tape goes back to its first `to` entries, and recording goes on from
 * there: the far and wide tables and the windows keep what the chunk's
 * entries below `to` use, and that chunk's far table is hashed again. (At
 * `to` = a chunk's start that is nothing: the next push begins the chunk
 * afresh.) */
static void tape_rewind(uint32_t to)
{
    if (to >= G->tape.n) return;
    /* what the chunk's entries below `to` use of its tables (at most a
     * chunk's worth to look at) */
    uint32_t c = chunk_of(to), nfar = 0, nwide = 0, packed = 0, nsmall = 0;
    for (uint32_t i = c << TAPE_CHUNK_BITS; i < to; i++) {
        uint32_t code = G->tape.code[i], fa = (code >> 8) & 0xfff, fb = code >> 20;
        if (code & TAPE_WIDE) {
            packed |= code & TAPE_PACKED;
            if (!(code & TAPE_PACKED) && (code >> 8) + 1 > nwide) nwide = (code >> 8) + 1;
            continue;
        }
        if (fa >= TAPE_NEAR && fa < TAPE_WINDOW && fa - TAPE_NEAR + 1 > nfar) nfar = fa - TAPE_NEAR + 1;
        if (fb >= TAPE_NEAR && fb < TAPE_WINDOW && fb - TAPE_NEAR + 1 > nfar) nfar = fb - TAPE_NEAR + 1;
        uint32_t f = fa > fb ? fa : fb;     /* small windows are opened in order: the highest one used */
        if (f >= TAPE_SMALL && ((f - TAPE_SMALL) >> TAPE_SMALL_BITS) + 1 > nsmall) nsmall = ((f - TAPE_SMALL) >> TAPE_SMALL_BITS) + 1;
    }
    if (nfar < G->tape.tables.chunk_far_inherited[c]) nfar = G->tape.tables.chunk_far_inherited[c];   /* the chunk before's table stays whole */
    G->tape.nfar = G->tape.tables.chunk_far[c] + nfar;
    G->tape.nwide = G->tape.tables.chunk_wide[c] + nwide;
    if (!packed && c < G->tape.capchunks) G->tape.tables.chunk_deriv[c].call = TAPE_NO_BASE;   /* the next deriv entry sets it */
    far_hash_reset();
    /* a chunk begun afresh has no window yet; else the chunk keeps its
     * window 0 and the small windows those entries use */
    G->tape.window = G->tape.win_d[0] = (to & ((1u << TAPE_CHUNK_BITS) - 1)) ? G->tape.tables.chunk_window[c] : 0;
    G->tape.nsmall = nsmall;
    G->tape.small_span = 0;
    for (uint32_t k = 1; k <= nsmall; k++) {
        G->tape.win_d[k] = G->tape.tables.chunk_small[c * TAPE_SMALLS + k - 1] + TAPE_SMALL + (k - 1) * TAPE_SMALL_LEN;
        small_range_add(k);
    }
    for (uint32_t k = 0; k < nfar; k++) far_hash_put(G->tape.tables.far[G->tape.tables.chunk_far[c] + k], k);
    G->tape.n = to;
    while (G->tape.nruns && G->tape.runs[G->tape.nruns - 1].base + G->tape.runs[G->tape.nruns - 1].n > to) G->tape.nruns--;
}

/* Side records from index `from` on are released (their entries go). */
static void release_sides(uint32_t from)
{
    for (uint32_t k = G->tape.nsides; k-- > from; ) {
        TapeSide *s = G->tape.sides[k];
        G->tape.sides[k] = NULL;
        if (s && s->kind->release) s->kind->release(s);
    }
    if (G->tape.nsides > from) G->tape.nsides = from;
}

/* The entry arrays' mappings outlive a clear when the next tape would
 * reserve as many entries: a session that clears its tape over and over
 * (GradBench's driver clears it after every run) then writes into pages it
 * has, not fresh ones each time (a fresh page costs a prefault, its zeroing
 * and a TLB miss: under a virtual machine most of a small evaluation's
 * time, llsq's gradient 0.55 -> 0.15 ms of CPU). Past the first
 * TAPE_KEEP_ENTRIES the pages go back to the system, so a big tape's
 * memory still does. */
#define TAPE_KEEP_ENTRIES ((size_t)1 << 20)     /* 12 MB; a multiple of 16384: whole 64 KB pages of both arrays */
typedef struct { uint32_t *code; double *val; size_t reserved, prefaulted; } KeptArrays;

static KeptArrays keep_arrays(void)
{
    KeptArrays k = { 0 };
    if (!G->tape.reserved) return k;
    k = (KeptArrays){ G->tape.code, G->tape.val, G->tape.reserved, G->tape.prefaulted };
    if (k.prefaulted > TAPE_KEEP_ENTRIES) {
        madvise(k.code + TAPE_KEEP_ENTRIES, (k.prefaulted - TAPE_KEEP_ENTRIES) * sizeof(uint32_t), MADV_DONTNEED);
        madvise(k.val + TAPE_KEEP_ENTRIES, (k.prefaulted - TAPE_KEEP_ENTRIES) * sizeof(double), MADV_DONTNEED);
        k.prefaulted = TAPE_KEEP_ENTRIES;
    }
    G->tape.code = NULL;          /* free_arrays leaves them */
    G->tape.val = NULL;
    G->tape.reserved = 0;
    return k;
}

/* Kept arrays k as the tape's if they hold n entries (n 0: none are
 * reserved), else unmapped. */
static int reuse_arrays(KeptArrays k, size_t n)
{
    if (!k.code) return 0;
    if (k.reserved != n) {
        munmap(k.code, map_bytes(k.reserved, sizeof(uint32_t)));
        munmap(k.val, map_bytes(k.reserved, sizeof(double)));
        return 0;
    }
    G->tape.code = k.code;
    G->tape.val = k.val;
    G->tape.reserved = n;
    G->tape.prefaulted = k.prefaulted;
    return 1;
}

enum { POOL_KEEP = (1 << 20) };   /* ids: 4 MB */
enum { RUNS_KEEP = (1 << 17) };   /* array runs' records: 3.7 MB */

/* A buffer of cap elements kept across tape_init when cap is at most
 * keep, else freed (and cap set to 0). */
static void *keep_if_small(void *buf, size_t *cap, size_t keep)
{
    if (*cap <= keep) return buf;
    free(buf);
    *cap = 0;
    return NULL;
}

void tape_init(void)
{
    size_t limit = G->tape.limit ? G->tape.limit : (size_t)1 << 30;   /* 1 GiB default */
    KeptArrays kept = keep_arrays();
    free_arrays();
    /* The operand pool is kept (up to 4 MB) for the next tape: a session
     * that clears after every run (GradBench's driver) would otherwise
     * regrow it by doubling each time, copying it at every step. */
    uint32_t *pool = G->tape.pool;
    size_t cappool = G->tape.cappool;
    pool = keep_if_small(pool, &cappool, POOL_KEEP);
    free(G->tape.derivs);
    release_sides(0);
    free(G->tape.sides);
    /* and so are the array runs' records (up to 3.7 MB): lstm's 37,000
     * runs a gradient regrew them by doubling, 1.3M instructions a run */
    size_t capruns = G->tape.capruns;
    TapeRun *runs = keep_if_small(G->tape.runs, &capruns, RUNS_KEEP);
    uint32_t epoch = G->tape.epoch, clears = G->tape.clears;
    const char *(*hint)(void) = G->tape.limit_hint;
    TapeFarHash *far_hash = G->tape.far_hash;     /* kept: its stamps go stale by themselves */
    memset(&G->tape, 0, sizeof G->tape);
    G->tape.pool = pool;
    G->tape.cappool = cappool;
    G->tape.runs = runs;
    G->tape.capruns = (uint32_t)capruns;
    G->tape.limit_hint = hint;
    G->tape.far_hash = far_hash ? far_hash : &far_hash_none;
    G->tape.limit = limit;
    G->tape.epoch = epoch + 1;
    G->tape.clears = clears + 1;
    rec_on();
    size_t maxn = max_entries();
    size_t want = RESERVE && maxn > 1 ? (maxn < RESERVE_MAX ? maxn : RESERVE_MAX) : 0;
    if (reuse_arrays(kept, want) || (want && reserve_arrays(want))) G->tape.cap = (uint32_t)first_cap(maxn < G->tape.reserved ? maxn : G->tape.reserved);
    else {
        G->tape.cap = 1 << 12;     /* grows by 4x; a small start keeps fresh sessions cheap */
        G->tape.code = err_malloc(G->tape.cap * sizeof(uint32_t));
        G->tape.val = err_malloc(G->tape.cap * sizeof(double));
    }
    tape_chunk_begin(0);
    G->tape.n = 1;                 /* entry 0: "constant" */
    G->tape.code[0] = OP_CONST;
    G->tape.val[0] = 0;
}

void tape_clear(void)
{
    int recording = G->tape.recording;
    tape_init();
    rec_restore(recording);
}

size_t tape_bytes(void)
{
    return (size_t)G->tape.n * ENTRY_BYTES + G->tape.npool * sizeof(uint32_t)
         + (size_t)G->tape.nderivs * sizeof(DerivRec)
         + G->tape.nfar * sizeof(uint32_t) + G->tape.nwide * sizeof(TapeArgs);
}

static void check_limit(size_t more)
{
    if (tape_bytes() + more > G->tape.limit) {
        char lim[32];
        double b = (double)G->tape.limit;
        if (b >= 1 << 30) snprintf(lim, sizeof lim, "%.4gGB", b / (1 << 30));
        else if (b >= 1 << 20) snprintf(lim, sizeof lim, "%.4gMB", b / (1 << 20));
        else snprintf(lim, sizeof lim, "%.4gKB", b / 1024);
        const char *hint = G->tape.limit_hint ? G->tape.limit_hint() : NULL;
        if (hint) err_raise("tape limit of %s reached (%u entries) %s", lim, G->tape.n, hint);
        err_raise("tape limit of %s reached (%u entries); raise it with ':tape limit 4GB' "
                 "or forget the tape with ':tape clear'", lim, G->tape.n);
    }
}

/* Capacity never exceeds what the memory cap allows, so reaching the cap
 * is noticed at the entry that crosses it. */
void tape_grow(void)
{
    size_t maxn = max_entries();
    if (G->tape.n >= maxn) check_limit(G->tape.limit);
    size_t cap = (size_t)G->tape.cap * 4;   /* fewer copies of a growing tape */
    if (cap > maxn) cap = maxn;
    if (G->tape.reserved) {
        /* the next stretch of the mappings; a raised cap whose entries
         * the reservation does not hold moves it */
        size_t more = 2 * G->tape.reserved > RESERVE_MAX ? 2 * G->tape.reserved : RESERVE_MAX;
        if (G->tape.n >= G->tape.reserved && !remap_arrays(maxn < more ? maxn : more))
            err_raise("out of memory growing the tape to %zu entries", cap);
        G->tape.cap = (uint32_t)prefault_to(G->tape.n, maxn < G->tape.reserved ? maxn : G->tape.reserved);
        return;
    }
    uint32_t *code = realloc(G->tape.code, cap * sizeof(uint32_t));
    if (code) G->tape.code = code;
    double *val = realloc(G->tape.val, cap * sizeof(double));
    if (val) G->tape.val = val;
    if (!code || !val) err_raise("out of memory growing the tape to %zu entries", cap);
    G->tape.cap = (uint32_t)cap;
}

uint32_t tape_pool_push(const uint32_t *ids, uint32_t n)
{
    check_limit(n * sizeof(uint32_t));
    if (G->tape.npool + n > G->tape.cappool) {
        size_t cap = G->tape.cappool ? G->tape.cappool : 1024;
        while (cap < G->tape.npool + n) cap *= 2;
        G->tape.pool = err_realloc(G->tape.pool, cap * sizeof(uint32_t));
        G->tape.cappool = cap;
    }
    uint32_t off = (uint32_t)G->tape.npool;
    if (ids) memcpy(G->tape.pool + off, ids, n * sizeof(uint32_t));
    G->tape.npool += n;
    return off;
}

uint32_t tape_side_add(TapeSide *s)
{
    if (G->tape.nsides == G->tape.capsides) {
        __typeof__(G->tape.capsides) grown = G->tape.capsides ? 2 * G->tape.capsides : 16;   /* the size is kept only once it is had */
        G->tape.sides = err_realloc(G->tape.sides, grown * sizeof(TapeSide *));
        G->tape.capsides = grown;
    }
    G->tape.sides[G->tape.nsides] = s;
    return G->tape.nsides++;
}

void tape_each_side_value(void (*visit)(Value))
{
    for (uint32_t k = 0; k < G->tape.nsides; k++) {
        TapeSide *s = G->tape.sides[k];
        if (s && s->kind->each_value) s->kind->each_value(s, visit);
    }
}

void tape_run_add(const TapeRun *r)
{
    if (G->tape.nruns == G->tape.capruns) {
        /* 64x while under what a clear keeps (3.7 MB), then straight to
         * it: each regrowth copies the records (lstm's 37,000: 1.8 MB
         * copied at 2x, 0.6 at 4x; at l = 4, 75,000 copied 2.4 MB at 4x),
         * 115 KB this way. (The pages of a large block that no record
         * reaches are never touched.) Past it, 2x. */
        uint32_t cap = G->tape.capruns;
        uint32_t grown = !cap ? 64 : cap >= RUNS_KEEP ? 2 * cap : 64 * cap < RUNS_KEEP ? 64 * cap : RUNS_KEEP;   /* the size is kept only once it is had */
        G->tape.runs = err_realloc(G->tape.runs, grown * sizeof(TapeRun));
        G->tape.capruns = grown;
    }
    G->tape.runs[G->tape.nruns++] = *r;
}

int32_t tape_run_below(uint32_t i)
{
    int32_t lo = 0, hi = (int32_t)G->tape.nruns - 1, at = -1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (G->tape.runs[mid].base + G->tape.runs[mid].n - 1 <= i) at = mid, lo = mid + 1;
        else hi = mid - 1;
    }
    return at;
}

/* Whether wrt[0 .. n - 1] rise by one from wrt[0]: one pass with no
 * branch, vectorised (a grad over 160000 places: 0.09 ms a call as a
 * loop of scalars). */
static __attribute__((optimize("tree-vectorize", "vect-cost-model=cheap"))) int ids_rise_by_one(const uint32_t *wrt, uint32_t n)
{
    uint32_t off = 0, first = wrt[0];
    for (uint32_t j = 1; j < n; j++) off |= wrt[j] - (first + j);
    return off == 0;
}

/* A d call's record: its places a run from first (wrt NULL), else the
 * list at wrt, pushed to the pool. */
static uint32_t deriv_rec(uint32_t y, uint32_t first, const uint32_t *wrt, uint32_t nwrt,
                          const uint32_t *cuts, uint32_t ncut)
{
    if (G->tape.nderivs == G->tape.capderivs) {
        __typeof__(G->tape.capderivs) grown = G->tape.capderivs ? 2 * G->tape.capderivs : 16;   /* the size is kept only once it is had */
        G->tape.derivs = err_realloc(G->tape.derivs, grown * sizeof(DerivRec));
        G->tape.capderivs = grown;
    }
    DerivRec *r = &G->tape.derivs[G->tape.nderivs];
    r->y = y;
    r->wrt_run = (uint16_t)(wrt == NULL);
    r->reruns = 0;
    r->wrt_off = wrt ? tape_pool_push(wrt, nwrt) : first;
    r->nwrt = nwrt;
    r->cut_off = ncut ? tape_pool_push(cuts, ncut) : 0;
    r->ncut = ncut;
    r->exp_lo = 0;
    r->exp_off = 0;
    return G->tape.nderivs++;
}

uint32_t tape_deriv_rec(uint32_t y, const uint32_t *wrt, uint32_t nwrt,
                        const uint32_t *cuts, uint32_t ncut)
{
    int run = nwrt >= 1 && wrt[0] != 0 && ids_rise_by_one(wrt, nwrt);   /* one place is a run too: no pool entry */
    return deriv_rec(y, run ? wrt[0] : 0, run ? NULL : wrt, nwrt, cuts, ncut);
}

uint32_t tape_deriv_rec_run(uint32_t y, uint32_t first, uint32_t nwrt, const uint32_t *cuts, uint32_t ncut)
{
    return deriv_rec(y, first, NULL, nwrt, cuts, ncut);
}

/* A lower cap takes effect at the next entry: the logical capacity shrinks
 * (the arrays keep their size), so the next push reaches tape_grow. */
void tape_set_limit(size_t bytes)
{
    G->tape.limit = bytes;
    size_t maxn = bytes / ENTRY_BYTES;
    if (G->tape.cap > maxn) G->tape.cap = maxn > G->tape.n ? (uint32_t)maxn : G->tape.n;
}

uint32_t *tape_rec_operands(uint32_t count, uint32_t *off)
{
    *off = tape_pool_push(NULL, count);
    return G->tape.pool + *off;
}

uint32_t tape_rec_sum(uint32_t off, uint32_t n, double v) { return tape_push(OP_SUM, off, n, v); }
uint32_t tape_rec_sum_run(uint32_t first, uint32_t n, double v) { return tape_push(OP_SUM, first, n | TAPE_SUM_RUN, v); }
uint32_t tape_rec_dot(uint32_t off, uint32_t n, double v) { return tape_push(OP_DOT, off, n, v); }
uint32_t tape_rec_lse(uint32_t off, uint32_t n, int run, double v) { return tape_push(OP_LSE, off, run ? n | TAPE_SUM_RUN : n, v); }

uint32_t tape_rec_deriv(uint32_t call, uint32_t which, double v) { return tape_push(OP_DERIV, call, which, v); }

uint32_t tape_rec_dot_run(uint32_t off, uint32_t k, uint32_t n, const double *v)
{
    check_limit((size_t)n * sizeof(TapeArgs));
    reserve_wide(G->tape.nwide + n);
    uint32_t first = G->tape.n;
    /* tape_push_wide's, n times: a piece up to the next chunk's start at
     * a time (tape_next_slot begins it), the tables' places held in
     * locals (stores through G's arrays would make the compiler load
     * them again each entry) */
    for (uint32_t e = 0; e < n;) {
        uint32_t i = tape_next_slot();
        uint32_t piece = (1u << TAPE_CHUNK_BITS) - (i & ((1u << TAPE_CHUNK_BITS) - 1));
        if (piece > n - e) piece = n - e;
        if (piece > G->tape.cap - i) piece = G->tape.cap - i;    /* (tape_next_slot made room for one at least) */
        size_t nwide = G->tape.nwide;
        uint32_t w = (uint32_t)nwide - G->tape.tables.chunk_wide[chunk_of(i)];
        TapeArgs *wide = G->tape.tables.wide + nwide;
        uint32_t *code = G->tape.code + i;
        double *val = G->tape.val + i;
        for (uint32_t q = 0; q < piece; q++) {
            wide[q] = (TapeArgs){ off + 2 * k * (e + q), k };
            code[q] = OP_DOT | TAPE_WIDE | (w + q) << 8;
            val[q] = v[e + q];
        }
        G->tape.nwide = nwide + piece;
        G->tape.n = i + piece;
        e += piece;
    }
    return first;
}

/* ---- many entries at once (array runs): loops over codes the compiler
 * vectorises */
#define TAPE_VECTORISE __attribute__((optimize("tree-vectorize", "vect-cost-model=cheap")))

int tape_reserve(uint32_t count)
{
    while (G->tape.cap - G->tape.n < count) {
        uint32_t cap = G->tape.cap;
        tape_grow();
        if (G->tape.cap <= cap) return 0;     /* at the memory cap: entry by entry */
    }
    return 1;
}

/* A run of distant operands id, id + 1, ... whose first has far slot
 * f - TAPE_NEAR: how many of them (at most m) have, or are now given if
 * `give`, the slots that follow it, so that their fields rise by one an
 * entry. Read off the chunk's far table itself (an id has one slot a
 * chunk, so id + k has slot s0 + k exactly when the table says so there):
 * no hash probe for the slots the run has, and new slots only at the
 * table's end, for ids that have none (one probe each, to find or give). */
static uint32_t far_run(uint32_t id, uint32_t m, uint32_t f, int give)
{
    uint32_t cb = G->tape.tables.chunk_far[chunk_of(G->tape.n)], s0 = f - TAPE_NEAR, k = 1;
    uint32_t have = (uint32_t)G->tape.nfar - cb - s0;      /* slots s0 .. the table's end */
    const uint32_t *slot = G->tape.tables.far + cb + s0;
    uint32_t lim = have < m ? have : m;
    while (k < lim && slot[k] == id + k) k++;
    if (k == m || k < have || !give) return k;
    if (tape_bytes() + (size_t)(m - k) * sizeof(uint32_t) > G->tape.limit) return k;   /* near the cap: one by one */
    reserve_far(G->tape.nfar + m - k);
    for (uint32_t used = s0 + k; k < m && used < TAPE_FAR_SLOTS; k++, used++) {
        if (far_hash_claim(id + k, used) >= 0) break;       /* id + k has a slot elsewhere */
        G->tape.tables.far[G->tape.nfar++] = id + k;     /* (hashed by the claim) */
    }
    return k;
}

/* Runs of far slots known (Tape.far_runs): that slots s0 .. s0 + len - 1
 * of the chunk's table hold ids id .. id + len - 1 (far_run found or gave
 * them). A chunk's table only grows until far_hash_reset bumps far_gen, so
 * what far_run said stays true until then: the next run of the same
 * operand (lstm's w1, b1, w3, b3, every step of the recurrence) takes its
 * fields from here, with no hash probe and no look at the slots. */
static inline uint32_t far_run_slot(uint32_t id) { return (id * 2654435761u) >> (32 - 3); }
_Static_assert(TAPE_FAR_RUNS == 8u, "far_run_slot gives 3 bits");

/* Slot s0 starts a run of at least m known slots for id .. id + m - 1: its
 * s0, or -1 if that is not known. */
static inline int32_t far_run_known(uint32_t id, uint32_t m)
{
    const __typeof__(G->tape.far_runs[0]) *k = &G->tape.far_runs[far_run_slot(id)];
    return k->id == id && k->gen == G->tape.far_gen && k->len >= m ? (int32_t)k->s0 : -1;
}

/* far_run's answer len for id from slot s0, remembered; returns len. */
static inline uint32_t far_run_note(uint32_t id, uint32_t s0, uint32_t len)
{
    __typeof__(G->tape.far_runs[0]) *k = &G->tape.far_runs[far_run_slot(id)];
    k->id = id, k->s0 = s0, k->len = len, k->gen = G->tape.far_gen;
    return len;
}

/* How entries i, i + 1, ... (G->tape.n is i) name the operand id + k * step
 * (step 1: a run of entries, 0: one entry) in their fields: f + k * inc,
 * for the returned count of them (at most m); 0 if entry i's field is
 * not so (no far slot or window left). Fields decode as tape_field_of's
 * do. A run's operands keep one distance: near, or in a window (one the
 * chunk has, or a new one), or they take far slots one after another
 * (far_run: those they have, then new ones once no window is left). One
 * id's distance grows by one an entry: near while it lasts, then one far
 * slot for the rest of the chunk, or (none left) a window while it holds
 * the distance. One entry is recorded as tape_push records it. */
static inline __attribute__((always_inline)) uint32_t field_span(uint32_t i, uint32_t id, uint32_t step, uint32_t m, uint32_t *f, uint32_t *inc)
{
    *inc = 0;
    *f = 0;
    if (!id) return m;
    uint32_t d = i - id, k;
    int32_t s;
    if (d < TAPE_NEAR) {
        *f = d;
        if (step) return m;
        *inc = 1;
        return TAPE_NEAR - d < m ? TAPE_NEAR - d : m;
    }
    if (m == 1) {
        *f = tape_field_of(i, id);
        return *f != TAPE_NOFIELD;
    }
    if (step) {
        if ((k = window_find(d)) < TAPE_WINDOWS) {
            *f = window_field(k, d);
            return m;
        }
        /* slots the run has already (a loop's parameter array, in an
         * inherited table), if all of it; else a window while one is left
         * (known to hold them: what the probe and far_run would say) */
        if ((s = far_run_known(id, m)) >= 0) {
            *f = TAPE_NEAR + (uint32_t)s;
            *inc = 1;
            return m;
        }
        if ((s = far_hash_find(id)) >= 0) {
            *f = TAPE_NEAR + (uint32_t)s;
            *inc = 1;
            if (!window_left()) return far_run_note(id, (uint32_t)s, far_run(id, m, *f, 1));
            if (far_run_note(id, (uint32_t)s, far_run(id, m, *f, 0)) == m) return m;
            *inc = 0;
        }
        if (window_left()) {
            *f = window_field(window_open(d), d);
            return m;
        }
        if (!far_slots_left()) return 0;
        *f = far_slot_new(id);
        *inc = 1;
        return far_run_note(id, *f - TAPE_NEAR, far_run(id, m, *f, 1));
    }
    if ((s = far_hash_find(id)) >= 0) {
        *f = TAPE_NEAR + (uint32_t)s;
        return m;
    }
    if (far_slots_left()) {
        *f = far_slot_new(id);
        return m;
    }
    if ((k = window_find(d)) == TAPE_WINDOWS) {
        if (!window_left()) return 0;
        k = window_open(d);
    }
    *f = window_field(k, d);
    *inc = 1;
    uint32_t room = G->tape.win_d[k] + window_len(k) - d;
    return room < m ? room : m;
}

/* code[e] = c0 + e * cinc for a piece of under 16 entries (lstm's rows
 * of 7): a plain loop, as the vectorised one's set-up and tail cost more
 * than the stores, two codes a store (a piece's fields stay in their 12
 * bits, so a code never carries into the next). */
static __attribute__((noinline, optimize("no-tree-vectorize"))) void write_codes_short(uint32_t *code, uint32_t c0, uint32_t cinc, uint32_t m)
{
    uint64_t two = (uint64_t)(c0 + cinc) << 32 | c0, step = (uint64_t)(2 * cinc) << 32 | 2 * cinc;
    uint32_t e = 0;
    for (; e + 2 <= m; e += 2, two += step) memcpy(code + e, &two, sizeof two);
    if (e < m) code[e] = (uint32_t)two;
}

/* code[e] = c0 + e * cinc for a longer piece: four codes a store, each
 * four the last four plus 4 cinc (the vectorised loop gcc makes of the
 * plain one multiplies, which SSE2 does in six instructions: ba's 2.5M
 * codes took 3.3 an entry). The same sums modulo 2^32. */
typedef uint32_t codes4 __attribute__((vector_size(16)));
static void write_codes_long(uint32_t *code, uint32_t c0, uint32_t cinc, uint32_t m)
{
    codes4 v = { c0, c0 + cinc, c0 + 2 * cinc, c0 + 3 * cinc }, step = { 4 * cinc, 4 * cinc, 4 * cinc, 4 * cinc };
    uint32_t e = 0;
    for (; e + 4 <= m; e += 4, v += step) memcpy(code + e, &v, sizeof v);
    for (; e < m; e++) code[e] = c0 + e * cinc;
}

TAPE_VECTORISE uint32_t tape_push_elems(int op, uint32_t a, uint32_t sa, uint32_t b, uint32_t sb, uint32_t n)
{
    uint32_t base = G->tape.n, end = base + n, i = base;
    /* what a's span (fields fa_c + e * ia_c) has left when b's was shorter:
     * the next piece goes on from it (same chunk: m stops at its end)
     * rather than finding it again (far_run's probes, a chunk's worth a
     * piece: quadratic in a piece's length) */
    uint32_t carry = 0, fa_c = 0, ia_c = 0;
    while (i < end) {
        i = tape_next_slot();           /* reserved: begins a chunk at most */
        uint32_t k = i - base, left = end - i, chunk_left = (1u << TAPE_CHUNK_BITS) - (i & ((1u << TAPE_CHUNK_BITS) - 1));
        uint32_t m = left < chunk_left ? left : chunk_left, fa, ia, fb, ib;
        uint32_t ida = a ? a + k * sa : 0, idb = b ? b + k * sb : 0, ma;
        if (carry && (i & ((1u << TAPE_CHUNK_BITS) - 1))) {
            ma = carry < m ? carry : m;
            fa = fa_c, ia = ia_c;
        } else ma = field_span(i, ida, sa, m, &fa, &ia);
        uint32_t mb = ma ? field_span(i, idb, sb, ma, &fb, &ib) : 0, used = mb ? mb : 1;
        carry = ma > used ? ma - used : 0;      /* entries of a's span left after this piece */
        if (__builtin_expect(carry != 0, 0)) fa_c = fa + used * ia, ia_c = ia;
        if (!mb) {      /* an operand has no field (the chunk's far table is full): a wide entry, as tape_push_raw makes it */
            if (tape_bytes() + (size_t)m * (sizeof(TapeArgs) + ENTRY_BYTES) <= G->tape.limit) {   /* (else the cap is near: one by one) */
                /* and so is every entry left in the chunk's piece, one at
                 * a time: with no slot to give, an operand's field is its
                 * distance's, its slot's or none (as it is for
                 * field_span), and the wide ones' room is had at once */
                reserve_wide(G->tape.nwide + m);
                uint32_t kw = (uint32_t)G->tape.nwide - G->tape.tables.chunk_wide[chunk_of(i)], *code = G->tape.code;
                TapeArgs *wide = G->tape.tables.wide + G->tape.nwide;
                /* the run operand that had no field (field_span's 0: no
                 * window holds its one distance, and none can open, nor
                 * far slots be given, in this chunk): an element's field
                 * is its far slot's or none (lstm's layer-2 rows of X) */
                int a_slots = !ma && sa == 1 && ida && i - ida >= TAPE_NEAR, b_slots = ma && sb == 1 && idb && i - idb >= TAPE_NEAR;
                for (uint32_t e = 0; e < m; e++, i++, ida += ida ? sa : 0, idb += idb ? sb : 0) {
                    G->tape.n = i;              /* (tape_far_field's distances are from it) */
                    /* b's field only if a has one: a wide entry holds both
                     * ids as they are (lstm's X * w rows: X's row has none,
                     * w's would cost a probe an element for nothing) */
                    fa = a_slots ? far_slot_field(ida) : tape_field_of(i, ida);
                    fb = fa == TAPE_NOFIELD ? TAPE_NOFIELD : b_slots ? far_slot_field(idb) : tape_field_of(i, idb);
                    if ((fa | fb) < (1u << 12)) code[i] = (uint32_t)op | fa << 8 | fb << 20;
                    else {
                        *wide++ = (TapeArgs){ ida, idb };
                        code[i] = (uint32_t)op | TAPE_WIDE | kw++ << 8;
                    }
                }
                G->tape.nwide = (size_t)(wide - G->tape.tables.wide);
                G->tape.n = i;
                carry = 0;                      /* the piece is done: a's span with it */
            } else {                            /* this entry as tape_push_raw records it */
                fa = tape_field_of(i, ida), fb = tape_field_of(i, idb);
                if ((fa | fb) < (1u << 12)) {
                    G->tape.code[i] = (uint32_t)op | fa << 8 | fb << 20;
                    G->tape.n = ++i;
                } else i = tape_push_wide((uint32_t)op, ida, idb, G->tape.val[i]) + 1;
            }
            continue;
        }
        uint32_t c0 = (uint32_t)op | fa << 8 | fb << 20, cinc = ia << 8 | ib << 20, *code = G->tape.code + i;
        if (mb < 16) write_codes_short(code, c0, cinc, mb);
        else write_codes_long(code, c0, cinc, mb);
        G->tape.n = i += mb;
    }
    return base;
}

/* How many rows on field f of an entry still names its operand, read
 * again cols entries on each row in the same chunk with *delta added to
 * it (r: the operand's step a row; present: it is not id 0). A far slot
 * names an id: the operand must stay (r = 0), and the field does. A near
 * or window field names a distance: an operand that moves on with the
 * entry (r = cols) keeps it, one that stays (a broadcast row, r = 0) is
 * cols further each row, while its near range or window holds that. */
#define ROWS_ANY 0xFFFFFFFFu
static inline uint32_t field_rows(uint32_t f, uint32_t r, uint32_t cols, int present, uint32_t *delta)
{
    *delta = 0;
    if (!present) return f == 0 ? ROWS_ANY : 0;
    if (f == 0) return 0;
    int far = f >= TAPE_NEAR && f < TAPE_WINDOW;
    if (far || r == cols) return (far ? r == 0 : 1) ? ROWS_ANY : 0;
    if (r != 0) return 0;
    *delta = cols;
    uint32_t last = f < TAPE_NEAR ? TAPE_NEAR - 1 : f < TAPE_SMALL ? TAPE_SMALL - 1 : f | (TAPE_SMALL_LEN - 1);
    return (last - f) / cols;
}

/* How many rows after the row of cols entries at e may take its codes,
 * each row's the last's plus *step (tape_push_rows): none if a code is
 * wide or the row crosses into the next chunk, else as many as every
 * field allows (field_rows) and fit whole in e's chunk and the tape's room. */
static uint32_t rows_repeating(uint32_t e, uint32_t cols, uint32_t ra, uint32_t rb, int has_a, int has_b, uint32_t *step)
{
    /* (at once: an operand whose step a row is neither keeps no field,
     * nor does a wide row: lstm's X rows from a matrix written a row a
     * step, the chunks whose far table is full) */
    if ((has_a && ra != 0 && ra != cols) || (has_b && rb != 0 && rb != cols) || (G->tape.code[e] & TAPE_WIDE)) return 0;
    uint32_t chunk_end = (chunk_of(e) + 1) << TAPE_CHUNK_BITS, end = chunk_end < G->tape.cap ? chunk_end : G->tape.cap;
    if (e + cols > end) return 0;
    uint32_t k = (end - (e + cols)) / cols, da = 0, db = 0, first = 0;
    const uint32_t *code = G->tape.code + e;
    for (uint32_t j = 0; j < cols && k; j++) {
        if (code[j] & TAPE_WIDE) return 0;
        uint32_t ka = field_rows((code[j] >> 8) & 0xfff, ra, cols, has_a, &da), kb = field_rows(code[j] >> 20, rb, cols, has_b, &db);
        if (ka < k) k = ka;
        if (kb < k) k = kb;
        /* one step serves the whole row: columns whose fields step apart
         * (a far slot beside a near distance) copy nothing. No recording
         * makes such a row today (its fields' kinds follow one distance),
         * but the copy would name wrong operands if one did. */
        uint32_t s = da << 8 | db << 20;
        if (j == 0) first = s;
        else if (s != first) return 0;
    }
    *step = first;
    return k;
}

/* Whether a row of a ROWS run reads operand id (its ids id + j, sa 1)
 * where no field of its own will serve it: distant (past the near
 * range), from rows r apart while the entries go on cols a row, so that
 * its distance moves by at least a small window's length each row (no
 * window holds two rows, nor do the codes repeat: rows_repeating), and
 * each element is read once here (lstm's layer-2 X * w, X's rows a
 * recurrence step apart). Far slots given to such a row are used once. */
static inline int row_far_stepping(uint32_t i, uint32_t id, uint32_t sa, uint32_t r, uint32_t cols)
{
    uint32_t moves = r > cols ? r - cols : cols - r;
    return id && sa == 1 && r != 0 && moves >= TAPE_SMALL_LEN && i - id >= TAPE_NEAR;
}

/* The row of cols entries at the tape's end (its values written) as wide
 * entries, each holding its two ids as they are: what tape_push_elems
 * comes to for it once the chunk's far table is full, without the far
 * slots it gives first (one an element, each hashed) or the probes for
 * them after. 0 (nothing done) when the row would cross into the next
 * chunk or the tape's cap is near. */
static int push_row_wide(int op, uint32_t a, uint32_t sa, uint32_t b, uint32_t sb, uint32_t cols)
{
    uint32_t i = tape_next_slot(), at = i & ((1u << TAPE_CHUNK_BITS) - 1);
    if (at + cols > (1u << TAPE_CHUNK_BITS) || G->tape.cap - i < cols
        || tape_bytes() + (size_t)cols * (sizeof(TapeArgs) + ENTRY_BYTES) > G->tape.limit)
        return 0;
    reserve_wide(G->tape.nwide + cols);
    uint32_t kw = (uint32_t)G->tape.nwide - G->tape.tables.chunk_wide[chunk_of(i)], *code = G->tape.code + i;
    TapeArgs *wide = G->tape.tables.wide + G->tape.nwide;
    for (uint32_t e = 0; e < cols; e++) {
        wide[e] = (TapeArgs){ a ? a + e * sa : 0, b ? b + e * sb : 0 };
        code[e] = (uint32_t)op | TAPE_WIDE | (kw + e) << 8;
    }
    G->tape.nwide += cols;
    G->tape.n = i + cols;
    return 1;
}

uint32_t tape_push_rows(int op, uint32_t a, uint32_t sa, uint32_t ra, uint32_t b, uint32_t sb, uint32_t rb,
                        uint32_t rows, uint32_t cols)
{
    uint32_t base = G->tape.n;
    for (uint32_t i = 0; i < rows;) {
        uint32_t e = G->tape.n, step = 0, ia = a ? a + i * ra : 0, ib = b ? b + i * rb : 0;
        if (!((row_far_stepping(e, ia, sa, ra, cols) || row_far_stepping(e, ib, sb, rb, cols)) && push_row_wide(op, ia, sa, ib, sb, cols)))
            tape_push_elems(op, ia, sa, ib, sb, cols);
        i++;
        uint32_t k = i < rows ? rows_repeating(e, cols, ra, rb, a != 0, b != 0, &step) : 0;
        if (k > rows - i) k = rows - i;
        uint32_t *code = G->tape.code;
        for (uint32_t n = G->tape.n, end = n + k * cols; n < end; n += cols)
            for (uint32_t j = 0; j < cols; j++) code[n + j] = code[n - cols + j] + step;
        G->tape.n += k * cols;
        i += k;
    }
    return base;
}

_Static_assert(offsetof(Value, id) == 4 && sizeof(Value) == 16, "tape_rec_deriv_run writes a number's head as 8 bytes");
TAPE_VECTORISE void tape_rec_deriv_run(uint32_t call, uint32_t which, uint32_t n, Value *out)
{
    /* a chunk at a time: packed against the chunk's base, the places of
     * one call rise by one an entry, and so do their codes */
    if (tape_reserve(n))
        for (uint32_t j = 0; j < n;) {
            uint32_t i = tape_next_slot(), f = deriv_packed(i, call, which + j);
            if (f == TAPE_NOFIELD) {
                i = tape_push_wide(OP_DERIV, call, which + j, out[j].u.n);
                out[j] = num_rec(out[j].u.n, i);
                j++;
                continue;
            }
            uint32_t w = (f >> 19) & (TAPE_PACKED_PLACES - 1), m = n - j;
            uint32_t chunk_left = (1u << TAPE_CHUNK_BITS) - (i & ((1u << TAPE_CHUNK_BITS) - 1));
            if (m > chunk_left) m = chunk_left;
            if (m > TAPE_PACKED_PLACES - w) m = TAPE_PACKED_PLACES - w;
            write_codes_long(G->tape.code + i, OP_DERIV | TAPE_WIDE | TAPE_PACKED | f, 1u << 19, m);   /* the places rise by one */
            num_rec_run(out + j, G->tape.val + i, out + j, i, m);     /* out[j + e] becomes num_rec(its value, i + e) */
            G->tape.n = i + m;
            j += m;
        }
    else for (uint32_t j = 0; j < n; j++) {
        double g = out[j].u.n;
        uint32_t i = tape_next_slot();
        if (!push_packed_deriv(OP_DERIV, i, call, which + j, g)) i = tape_push_wide(OP_DERIV, call, which + j, g);
        out[j] = num_rec(g, i);
    }
}

typedef struct { void (*fn)(uint32_t id, void *ud); void *ud; } OperandVisit;
static void visit_operand(uint32_t *id, void *ud)
{
    OperandVisit *ov = ud;
    ov->fn(*id, ov->ud);
}

void tape_each_operand(uint32_t i, void (*fn)(uint32_t id, void *ud), void *ud)
{
    int op = tape_opcode(i);
    uint32_t n;
    OPS_NAMED(OPS_STRUCTURAL, 10);    /* carry, fixin and fixpt: by their columns below */
    switch (op) {
    case OP_CONST: case OP_LEAF:
        return;
    case OP_SUM: {
        TapeTerms t = tape_terms(i);
        for (uint32_t j = 0; j < t.n; j++) fn(tape_term(t, j), ud);
        return;
    }
    case OP_DOT: {
        const uint32_t *p = tape_pairs(i, &n);
        for (uint32_t j = 0; j < 2 * n; j++) fn(p[j], ud);
        return;
    }
    case OP_LSE: {
        TapeTerms t = tape_lse(i).t;
        for (uint32_t j = 0; j < t.n; j++) fn(tape_term(t, j), ud);
        return;
    }
    case OP_CKPT: {
        TapeSide *s = tape_side_at(tape_a(i));
        OperandVisit ov = { fn, ud };
        if (s && s->kind->each_id) s->kind->each_id(s, visit_operand, &ov);
        return;
    }
    case OP_DERIV: {
        const DerivRec *r = tape_deriv_call(tape_deriv_call_of(i, NULL));
        fn(r->y, ud);
        for (uint32_t j = 0; j < r->nwrt; j++) fn(tape_deriv_wrt(r, j), ud);
        return;
    }
    default:
        if (num_op_side[op]) {     /* a names the side record; b, if set, an operand */
            if (tape_b(i)) fn(tape_b(i), ud);
            return;
        }
        fn(tape_a(i), ud);
        if (num_op_arity[op] == 2) fn(tape_b(i), ud);
    }
}

/* ------------------------------------------------------------ reclaiming */

const uint32_t *tape_call_expansion(uint32_t call, uint32_t *n, uint32_t *first)
{
    DerivRec *r = &G->tape.derivs[call];
    *n = r->exp_lo ? r->nwrt : 0;
    if (first) *first = r->exp_lo;
    return r->exp_lo ? G->tape.pool + r->exp_off : NULL;
}

void tape_each_extra_id(uint32_t i, void (*fn)(uint32_t *id, void *ud), void *ud)
{
    if (tape_opcode(i) == OP_DERIV) {
        DerivRec *r = &G->tape.derivs[tape_a(i)];
        for (uint32_t j = 0; j < r->ncut; j++) fn(&G->tape.pool[r->cut_off + j], ud);
    } else if (num_op_side[tape_opcode(i)]) {
        TapeSide *s = G->tape.sides[tape_a(i)];
        if (s && s->kind->each_id) s->kind->each_id(s, fn, ud);
    }
}

typedef struct {
    uint32_t lo;
    const uint32_t *newpos;
} Renumber;

static inline uint32_t renumbered(const Renumber *r, uint32_t id)
{
    return id < r->lo ? id : r->newpos[id - r->lo];
}

static void renumber_id(uint32_t *id, void *ud) { *id = renumbered(ud, *id); }

/* Copies n ids from the pool at off to the new pool, renumbered. */
static uint32_t repool(uint32_t *out, size_t *nout, size_t base, uint32_t off, uint32_t n, const Renumber *r)
{
    uint32_t at = (uint32_t)(base + *nout);
    for (uint32_t j = 0; j < n; j++) out[(*nout)++] = renumbered(r, G->tape.pool[off + j]);
    return at;
}

static void tables_free(TapeTables *t)
{
    free(t->far);
    free(t->wide);
    free(t->chunk_far);
    free(t->chunk_far_inherited);
    free(t->chunk_wide);
    free(t->chunk_window);
    free(t->chunk_small);
    free(t->chunk_deriv);
}

/* Tables for recording `kept` entries again from lo on: the current ones'
 * part up to the end of lo's chunk, copied, and room for the worst case
 * (a far slot for each operand, up to a chunk's slots, and a wide entry
 * each), all had before anything moves; memory not written to is not
 * used. */
static TapeTables tables_for_compaction(uint32_t lo, uint32_t kept, size_t *capfar_out, size_t *capwide_out)
{
    TapeTables t = { 0 };
    uint32_t c = chunk_of(lo), last = chunk_of(G->tape.n - 1);
    size_t far_to = c < last ? G->tape.tables.chunk_far[c + 1] + G->tape.tables.chunk_far_inherited[c + 1] : G->tape.nfar;   /* chunk c's table's end */
    size_t wide_to = c < last ? G->tape.tables.chunk_wide[c + 1] : G->tape.nwide;
    size_t far_worst = 2 * (size_t)kept, chunks = (size_t)chunk_of(lo + kept) - c + 1;
    if (far_worst > chunks * TAPE_FAR_SLOTS) far_worst = chunks * TAPE_FAR_SLOTS;
    size_t capfar = far_to + far_worst + 1, capwide = wide_to + (size_t)kept + 1;
    size_t nchunks = G->tape.capchunks * sizeof(uint32_t);
    t.far = malloc(capfar * sizeof(uint32_t));
    t.wide = malloc(capwide * sizeof(TapeArgs));
    t.chunk_far = malloc(nchunks);
    t.chunk_far_inherited = malloc(nchunks);
    t.chunk_wide = malloc(nchunks);
    t.chunk_window = malloc(nchunks);
    t.chunk_small = malloc(nchunks * TAPE_SMALLS);
    t.chunk_deriv = malloc(G->tape.capchunks * sizeof(TapeDerivBase));
    if (!t.far || !t.wide || !t.chunk_far || !t.chunk_far_inherited || !t.chunk_wide || !t.chunk_window || !t.chunk_small || !t.chunk_deriv) {
        tables_free(&t);
        err_raise("out of memory reclaiming the tape");
    }
    if (far_to) memcpy(t.far, G->tape.tables.far, far_to * sizeof(uint32_t));       /* NULL while empty */
    if (wide_to) memcpy(t.wide, G->tape.tables.wide, wide_to * sizeof(TapeArgs));
    memcpy(t.chunk_far, G->tape.tables.chunk_far, nchunks);
    memcpy(t.chunk_far_inherited, G->tape.tables.chunk_far_inherited, nchunks);
    memcpy(t.chunk_wide, G->tape.tables.chunk_wide, nchunks);
    memcpy(t.chunk_window, G->tape.tables.chunk_window, nchunks);
    memcpy(t.chunk_small, G->tape.tables.chunk_small, nchunks * TAPE_SMALLS);
    memcpy(t.chunk_deriv, G->tape.tables.chunk_deriv, G->tape.capchunks * sizeof(TapeDerivBase));
    *capfar_out = capfar;
    *capwide_out = capwide;
    return t;
}

static void broken_compaction(void)
{
    err_raise("internal error: reclaiming misplaced an entry (please report)");
}

/* One compaction, shared by its phases: the kept entries' new positions,
 * which derivative calls (dmap) and side records (smap) made at or above
 * the mark are kept and where they go, and the pool above the mark as it
 * is rebuilt (out, nout ids from base). */
typedef struct {
    TapeMark m;
    const uint8_t *live;
    uint32_t *newpos;
    uint32_t lo, n, kept_end;
    Renumber rn;
    uint32_t nd, ns, *dmap, *smap, *out;
    size_t base, nout;
} Compaction;

/* The phases walk the region's live bytes eight at a time where they
 * are all 0: a pass that reclaims finds most of the region dead (ba's
 * jacobian: 2.5M entries, 6 instructions each to pass a dead one). */
static inline uint64_t live8(const Compaction *c, uint32_t i)
{
    uint64_t w;
    memcpy(&w, c->live + (i - c->lo), sizeof w);
    return w;
}

/* The first kept entry at or after i, or c->n. */
static inline uint32_t next_kept(const Compaction *c, uint32_t i)
{
    for (; i + 8 <= c->n; i += 8) {
        uint64_t w = live8(c, i);
        if (!w) continue;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        return i + (uint32_t)(__builtin_ctzll(w) >> 3);     /* the lowest byte is entry i's */
#else
        break;
#endif
    }
    while (i < c->n && !c->live[i - c->lo]) i++;
    return i;
}

/* Phase 1: where each kept entry goes (newpos), in order from lo; a
 * dead entry's is the next kept one's. */
static void compact_positions(Compaction *c)
{
    uint32_t j = c->lo, i = c->lo, *pos = c->newpos - c->lo;
    while (i < c->n) {
        if (i + 8 <= c->n && !live8(c, i)) {       /* eight dead entries: j eight times, two a store */
            uint64_t two = (uint64_t)j << 32 | j;
            for (uint32_t k = 0; k < 8; k += 2) memcpy(pos + i + k, &two, sizeof two);
            i += 8;
            continue;
        }
        pos[i] = j;
        j += c->live[i - c->lo] != 0;
        i++;
    }
    c->newpos[c->n - c->lo] = j;
    c->kept_end = j;
    c->rn = (Renumber){ c->lo, c->newpos };
}

/* Phase 2: which derivative calls and side records made at or above the
 * mark are still named; expansions recorded in the region are forgotten
 * unless every result of one was kept (tapegc.c keeps those of live
 * calls) and one of them lies inside it (its first entry moves to the
 * first kept entry, which is then still inside it). */
static void compact_mark_named(Compaction *c)
{
    for (uint32_t i = next_kept(c, c->lo); i < c->n; i = next_kept(c, i + 1)) {
        int op = tape_opcode(i);
        if (op == OP_DERIV && tape_a(i) >= c->m.nderivs) c->dmap[tape_a(i) - c->m.nderivs] = 1;
        else if (num_op_side[op] && tape_a(i) >= c->m.nsides) c->smap[tape_a(i) - c->m.nsides] = 1;
    }
    for (uint32_t k = 0; k < G->tape.nderivs; k++) {
        DerivRec *r = &G->tape.derivs[k];
        if (!r->exp_lo || r->exp_lo < c->lo) continue;
        int keep = 0;
        for (uint32_t w = 0; w < r->nwrt; w++) {
            uint32_t id = G->tape.pool[r->exp_off + w];
            if (id >= c->lo && !c->live[id - c->lo]) {
                keep = 0;
                break;
            }
            keep |= id >= r->exp_lo;
        }
        if (!keep) r->exp_lo = r->exp_off = 0;
    }
}

/* Phase 3: the kept derivative calls packed down, their ids into the new
 * pool, then the kept expansions' (dmap becomes old index to new). */
static void compact_derivs(Compaction *c)
{
    uint32_t kd = 0, mn = c->m.nderivs;
    for (uint32_t k = 0; k < c->nd; k++) {
        if (!c->dmap[k]) continue;
        DerivRec r = G->tape.derivs[mn + k];
        r.y = renumbered(&c->rn, r.y);
        r.wrt_off = r.wrt_run ? renumbered(&c->rn, r.wrt_off)
                              : repool(c->out, &c->nout, c->base, r.wrt_off, r.nwrt, &c->rn);
        r.cut_off = r.ncut ? repool(c->out, &c->nout, c->base, r.cut_off, r.ncut, &c->rn) : 0;
        c->dmap[k] = mn + kd;
        G->tape.derivs[mn + kd++] = r;
    }
    G->tape.nderivs = mn + kd;
    for (uint32_t k = 0; k < G->tape.nderivs; k++) {
        DerivRec *r = &G->tape.derivs[k];
        if (!r->exp_lo || r->exp_lo < c->lo) continue;
        r->exp_lo = c->newpos[r->exp_lo - c->lo];
        r->exp_off = repool(c->out, &c->nout, c->base, r->exp_off, r->nwrt, &c->rn);
    }
}

/* Phase 4: the kept side records packed down, their ids renumbered; the
 * others released (smap becomes old index to new). */
static void compact_sides(Compaction *c)
{
    uint32_t ks = 0, ms = c->m.nsides;
    for (uint32_t k = 0; k < c->ns; k++) {
        TapeSide *s = G->tape.sides[ms + k];
        G->tape.sides[ms + k] = NULL;
        if (!c->smap[k]) {
            if (s && s->kind->release) s->kind->release(s);
            continue;
        }
        if (s && s->kind->each_id) s->kind->each_id(s, renumber_id, &c->rn);
        c->smap[k] = ms + ks;
        G->tape.sides[ms + ks++] = s;
    }
    G->tape.nsides = ms + ks;
}

/* A logsumexp entry's pool part (operands at off, then its doubles)
 * copied to the new pool, the ids renumbered, the doubles as they are at
 * the next even offset: the pad slot it reserved leaves room. */
static uint32_t repool_lse(Compaction *c, uint32_t off, uint32_t b)
{
    int run = (b & TAPE_SUM_RUN) != 0;
    uint32_t n = b & ~TAPE_SUM_RUN, at = repool(c->out, &c->nout, c->base, off, run ? 1 : n, &c->rn);
    uint32_t from = tape_lse_data(off, n, run), to = tape_lse_data(at, n, run);
    memcpy(c->out + (to - c->base), G->tape.pool + from, sizeof(uint32_t) * 2 * (2 + n));
    c->nout = to - c->base + 2 * (2 + (size_t)n);
    return at;
}

/* Entry i's fields as they read after the compaction. */
static TapeArgs compact_args(Compaction *c, const TapeTables *old, uint32_t i)
{
    int op = tape_opcode(i);
    TapeArgs a = tape_args_in(old, i);
    OPS_NAMED(OPS_STRUCTURAL, 10);     /* ckpt, carry, fixin, fixpt: by their columns */
    if (op == OP_LSE)
        a.a = repool_lse(c, a.a, a.b);
    else if (op == OP_SUM && (a.b & TAPE_SUM_RUN))
        a.a = renumbered(&c->rn, a.a);     /* its terms all live: still consecutive */
    else if (op == OP_SUM || op == OP_DOT) {
        uint32_t cnt = op == OP_SUM ? a.b : 2 * a.b;
        a.a = repool(c->out, &c->nout, c->base, a.a, cnt, &c->rn);
    } else if (op == OP_DERIV) {
        if (a.a >= c->m.nderivs) a.a = c->dmap[a.a - c->m.nderivs];
    } else if (num_op_side[op]) {
        if (a.a >= c->m.nsides) a.a = c->smap[a.a - c->m.nsides];
        a.b = renumbered(&c->rn, a.b);
    } else if (num_op_arity[op] > 0) {
        a.a = renumbered(&c->rn, a.a);
        if (num_op_arity[op] == 2) a.b = renumbered(&c->rn, a.b);
    }
    return a;
}

/* Phase 5: the kept entries recorded again from lo on, into the fresh
 * tables; the old ones decode what has not moved yet. */
static void compact_entries(Compaction *c, const TapeTables *old)
{
    tape_rewind(c->lo);
    for (uint32_t i = next_kept(c, c->lo); i < c->n; i = next_kept(c, i + 1)) {
        uint32_t opbyte = G->tape.code[i] & (TAPE_OPMASK | TAPE_LABELED);
        double v = G->tape.val[i];
        TapeArgs a = compact_args(c, old, i);
        /* entries below i are rewritten already, i itself is read above */
        if (tape_push_raw(opbyte, a.a, a.b, v) != c->newpos[i - c->lo]) broken_compaction();
    }
}

/* A ROWS run's operand renumbered (its first id and row step): a row
 * keeps its ids consecutive (operands are kept, in order), but the rows
 * stay a fixed step apart only if as many entries went between each two;
 * 0 if they did not (the record goes: the steps sweep it). */
static int rows_renumbered(const Compaction *c, uint8_t kind, uint32_t *first, uint32_t *step, uint32_t rows)
{
    if (kind == TAPE_RUN_ONE) *first = renumbered(&c->rn, *first);
    if (kind != TAPE_RUN_SEQ) return 1;
    uint32_t a = renumbered(&c->rn, *first), d = renumbered(&c->rn, *first + *step) - a;
    for (uint32_t i = 2; i < rows; i++)
        if (renumbered(&c->rn, *first + i * *step) != a + i * d) return 0;
    *first = a, *step = d;
    return 1;
}

/* Runs with elements at or above the mark: kept, renumbered, if every
 * such element was kept (operands of kept entries are kept, and their
 * order too, so a run of operands stays a run); else dropped. */
static void compact_runs(const Compaction *c)
{
    uint32_t kept = 0;
    for (uint32_t k = 0; k < G->tape.nruns; k++) {
        TapeRun r = G->tape.runs[k];
        uint32_t top = r.base + r.n - 1, whole = 1;
        if (top >= c->lo) {
            for (uint32_t i = r.base > c->lo ? r.base : c->lo; i <= top && whole; i++) whole = c->live[i - c->lo] != 0;
            if (!whole) continue;
            if (r.kind == TAPE_RUN_ROWS && !(rows_renumbered(c, r.ka, &r.a, &r.sa, r.rows) && rows_renumbered(c, r.kb, &r.b, &r.sb, r.rows)))
                continue;
            r.base = renumbered(&c->rn, r.base);
            if (r.kind != TAPE_RUN_ROWS && r.ka != TAPE_RUN_NONE && r.ka != TAPE_RUN_LIST) r.a = renumbered(&c->rn, r.a);
            if (r.kind != TAPE_RUN_ROWS && r.kb != TAPE_RUN_NONE && r.kb != TAPE_RUN_LIST) r.b = renumbered(&c->rn, r.b);
        }
        G->tape.runs[kept++] = r;
    }
    G->tape.nruns = kept;
}

void tape_compact(TapeMark m, const uint8_t *live, uint32_t *newpos)
{
    Compaction c = { .m = m, .live = live, .newpos = newpos, .lo = m.n, .n = G->tape.n };
    size_t before = tape_bytes();
    compact_positions(&c);
    c.nd = G->tape.nderivs - m.nderivs;
    c.ns = G->tape.nsides - m.nsides;
    c.dmap = err_scratch(sizeof(uint32_t) * (c.nd + 1));
    c.smap = err_scratch(sizeof(uint32_t) * (c.ns + 1));
    c.out = err_scratch(sizeof(uint32_t) * (G->tape.npool - m.npool + 1));   /* before anything moves */
    c.base = m.npool;
    TapeTables old = G->tape.tables;
    size_t capfar, capwide;
    TapeTables fresh = tables_for_compaction(c.lo, c.kept_end - c.lo, &capfar, &capwide);   /* the last memory taken */
    compact_mark_named(&c);
    compact_derivs(&c);
    compact_sides(&c);
    G->tape.tables = fresh;
    G->tape.capfar = capfar;
    G->tape.capwide = capwide;
    TapeRun *runs = G->tape.runs;
    uint32_t nruns = G->tape.nruns;
    G->tape.nruns = 0;                /* (tape_rewind would drop those above lo) */
    compact_entries(&c, &old);
    G->tape.nruns = nruns;
    G->tape.runs = runs;
    compact_runs(&c);
    if (c.nout) memcpy(G->tape.pool + c.base, c.out, c.nout * sizeof(uint32_t));
    G->tape.npool = c.base + c.nout;
    G->tape.n = c.kept_end;
    G->tape.reclaimed += c.n - c.kept_end;
    G->tape.reclaimed_bytes += before - tape_bytes();
    tables_free(&old);
    err_scratch_free(c.out);
    err_scratch_free(c.dmap);
    err_scratch_free(c.smap);
}

TapeMark tape_mark(void) { return (TapeMark){ G->tape.n, G->tape.nderivs, G->tape.nsides, G->tape.npool }; }

int tape_grew_since(TapeMark m)
{
    return G->tape.n != m.n || G->tape.nderivs != m.nderivs || G->tape.npool != m.npool || G->tape.nsides != m.nsides;
}

void tape_truncate(TapeMark m)
{
    for (uint32_t i = 0; i < m.nderivs; i++)
        if (G->tape.derivs[i].exp_lo >= m.n) G->tape.derivs[i].exp_lo = G->tape.derivs[i].exp_off = 0;
    release_sides(m.nsides);
    tape_rewind(m.n);
    G->tape.nderivs = m.nderivs;
    G->tape.npool = m.npool;
    G->tape.epoch++;
}
