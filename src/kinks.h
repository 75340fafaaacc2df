/* kinks.h: where a derivative took a convention (SPEC "Derivatives"): the
 * kinks it passed (abs, sign, floor at their kink, % at a jump) and the
 * branches (comparisons, min/max) whose comparison, on
 * recorded values, was within a relative 1e-9 of going the other way.
 * Recording notes such events as they happen (rare: a cheap test on the op
 * or on the operands' values); d and grad ask which ones they passed, print
 * one note on standard error, and keep the list for `:tape kinks`. A kink
 * counts when the sweep gave its entry an adjoint; a branch when a compared
 * entry depends on a place differentiated (whichever side was taken). */
#ifndef WG_KINKS_H
#define WG_KINKS_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include "ast.h"
#include "num.h"

/* Ops with a kink somewhere (a kink or tie flag in ops.def): a bit each,
 * a constant the recording tests with one shift. */
static const uint64_t KINK_OPS = 0
#define OP(e, name, kind, flags, f, da, db) | ((flags) & OPF_KINKS ? 1ull << OP_##e : 0)
#include "ops.def"
#undef OP
    ;
_Static_assert(OP_COUNT <= 64, "KINK_OPS is a 64-bit mask");

/* Within a relative 1e-9 of switching: the only test a comparison on
 * recorded values pays before kink_note_branch. */
static inline int kink_near(double x, double y)
{
    double ax = fabs(x), ay = fabs(y);
    return fabs(x - y) <= 1e-9 * (ax > ay ? ax : ay);     /* NaN: no; inf: the caller asks */
}

/* Entry id was just recorded for op on operands a, b: note it if at a kink
 * (min and max: near a tie, as a branch on the operands' entries). */
void kink_note_op(int op, double a, double b, uint32_t id);
/* A comparison n on values x, y (entries ida, idb; 0 = constant) that is
 * kink_near: noted if an entry depends on something. */
void kink_note_branch(const Node *n, const Chunk *c, double x, double y, uint32_t ida, uint32_t idb);

/* A derivative operator (d, grad) brackets its sweeps with begin/end; the
 * sweep reports what it passed; the outermost end prints one note. */
void kink_begin(void);
void kink_end(void);
int  kink_watching(void);
/* After a sweep of [lo, top]: adjoint(ud, id) is the final adjoint of an
 * entry in that range. */
void kink_scan(uint32_t lo, uint32_t top, double (*adjoint)(void *ud, uint32_t id), void *ud);
/* The branches noted so far whose compared entries depend on one of the
 * places wrt (tape ids, 0 = none). */
void kink_branches(const uint32_t *wrt, int n);
/* A checkpointed loop (its entry) whose unrecorded run met a comparison
 * or a min/max within 1e-9 of switching: a derivative whose places its
 * inputs depend on runs it again recorded, step by step
 * (KinkState.rerun), to note the branches as the plain loop would. The
 * same rerun tells which of a loop's outputs depend on a place, when a
 * branch after the loop compares one (the loop's entry depends on all its
 * inputs; an output, only on some). */
void kink_note_loop(uint32_t entry);
/* Which entries depend on the places of the derivative being taken (the
 * dependency pass of kink_branches, and a rerun's regions above it). */
typedef struct Reach Reach;
int kink_reached(const Reach *r, uint32_t id);
/* A rerun's step: the region [lo, tape top] it recorded, over the leaves
 * lo .. lo + nleaf - 1 (dep[k]: whether leaf k depends on a place; other
 * entries below lo as outer says). The branch notes made from note `from`
 * on whose compared entries depend on a place are passed. Returns the
 * region's answer (kink_reach_free), for the carried numbers' next dep. */
Reach *kink_region(const Reach *outer, uint32_t lo, const uint8_t *dep, uint32_t nleaf, uint32_t from);
void kink_reach_free(Reach *r);
uint32_t kink_count(void);      /* notes so far (the next note's index) */
/* A branch note's compared entries are reclaim roots (a later derivative
 * asks what they depend on); fn may renumber them. */
void kink_each_root(void (*fn)(uint32_t *id, void *ud), void *ud);

/* Reclaiming moved the entries at or above lo: entry(id) is a kept
 * entry's new id (0: it was reclaimed), position(p) where tape position p
 * went. Notes of reclaimed kinks go (no live value can pass them); a
 * branch's entries were renumbered as roots. */
void kink_renumber(uint32_t lo, uint32_t (*entry)(uint32_t id), uint32_t (*position)(uint32_t p));

/* The tape was truncated to n entries (a checkpointed loop's recomputed
 * region), epoch being its epoch before, and `from` the notes' count when
 * the region began: the notes of the region go, except the kinks and
 * branches the latest derivative passed, kept for :tape kinks at entry at
 * (the loop's, so that they are listed in tape order). (A branch noted
 * just before the region has id n too: the count tells them apart.) */
void kink_truncated(uint32_t n, uint32_t epoch, uint32_t at, uint32_t from);

/* A checkpointed loop's recomputation begins: the derivatives its steps
 * take (grad in the body) pass nothing on to the one being taken, which
 * took them when the loop ran; kink_loud(what kink_quiet gave) ends it. */
int  kink_quiet(void);
void kink_loud(int was);

void kink_statement(void);          /* a top-level statement begins: notes may print again */
void kink_list(void);            /* :tape kinks */

/* The notes' part of the session state (G->kinks). */
typedef struct {
    uint32_t id;          /* kink: the entry; branch: the tape size when it ran */
    uint32_t ida, idb;    /* branch: the compared entries (0: not recorded); reclaim roots */
    uint8_t branch;
    uint8_t tie;          /* branch: a min/max near a tie (listed as a kink) */
    uint8_t loop;         /* a checkpointed loop that met a near switch: ida its entry (a root) */
    uint8_t gone;         /* kink: its entry was reclaimed: 1 kept for :tape kinks only, 2 dropped */
    uint8_t op;           /* kink, tie: the operation; branch: the comparison */
    uint8_t backend;      /* the format a and b print in */
    uint32_t text_hash;   /* of its place and text, once made (0: not yet; kinks.c's pass) */
    double a, b;          /* the operands' values (rounded into that format) */
    /* what it says is made from these only when it is shown (kink_list,
     * kink_end): "abs(x) at x = 0", "x < y with x = 1, y = 1" at
     * "demo.wg:4:9" (the chunk is kept while a note may name it) */
    const Node *node;
    const Chunk *chunk;
} Note;
typedef struct {
    Note *notes;              /* in tape order */
    uint32_t nnotes, capnotes, epoch, nbranches;   /* nbranches: branch notes among them */
    uint32_t *passed, npassed, cappassed;          /* the latest derivative's notes */
    /* the same as two hash sets of note index + 1 (open addressing, size
     * seen_size, a power of 2): by the note's node, operation and values,
     * and (seen_texts, once notes of two groups were passed: seen_mixed)
     * by its text's hash; made again from passed when seen_n differs from
     * npassed or seen_stale is set (notes renumbered or moved) */
    uint32_t *seen_fast, *seen_text, seen_size, seen_cap, seen_n, seen_first;
    int seen_stale, seen_mixed, seen_texts;
    const Node *place_node;    /* the latest note's place hashed (text_hash), 0: none */
    const Chunk *place_chunk;
    uint32_t place_hash;
    Chunk **chunks;                                /* the chunks notes name, retained until the epoch ends */
    uint32_t nchunks, capchunks;
    int depth, noted;
    int quiet;                /* kink_quiet: derivatives nested at depth >= quiet pass nothing (0: none) */
    /* ckpt.c's: a checkpointed loop run again for the branches it met
     * and for which of its outputs (*dep, n of them, scratch) depend on a
     * place */
    void (*rerun)(uint32_t entry, const Reach *outer, uint8_t **dep, uint32_t *n);
    /* while set, every comparison on recorded values is told to it, near or not (jacobian.c's sparse requests) */
    void (*branch_hook)(const Node *n, const Chunk *c, uint32_t ida, uint32_t idb);
} KinkState;

#endif
