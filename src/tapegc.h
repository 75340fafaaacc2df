/* tapegc.h: giving back the tape entries that nothing can reach (SPEC
 * "Long loops and long sessions").
 *
 * An entry is live when a number somewhere names it (a variable, a version
 * x@k, an array element, a closure's frame, a dual, a side record) or a
 * live entry reads it; the rest is compacted away and the live entries
 * keep their order, so ids are renumbered: `:tape` shows positions in the
 * tape as it is now. Reclaiming runs where no number can hide in a C
 * local: after a statement outside any call (what it made, or everything),
 * between statements inside a top-level loop (everything), and between
 * the iterations of any loop (only entries recorded since the loop began
 * may go: whatever an enclosing expression or a C builtin holds was made
 * before the loop began, since the frames holding it are suspended below
 * the loop). Never while a sweep holds ids in its buffers (tape.busy). */
#ifndef WG_TAPEGC_H
#define WG_TAPEGC_H
#include "tape.h"

typedef void (*IdFn)(uint32_t *id, void *ud);

/* The evaluator names the ids outside heap objects (its globals and their
 * versions) once, at start-up. */
void reclaim_set_roots(void (*roots)(IdFn fn, void *ud));

/* Reclaims entries recorded at or after floor if the tape grew enough
 * since the last pass (the cost of a pass is paid for by that growth).
 * reclaim_due() is the test alone, for hot paths. */
void reclaim_maybe(TapeMark floor);
/* The reclaimer's part of the session state (G->reclaim). */
typedef struct {
    void (*eval_roots)(IdFn fn, void *ud);
    uint32_t next_pass_at;        /* tape size that triggers a pass */
    uint32_t seen_epoch;          /* a cleared tape starts the count again */
    uint64_t last_roots;          /* ids the last pass found outside the tape */
    uint32_t lowest_floor;        /* of the passes in the statement running */
    uint64_t full_passes;         /* passes whose floor was the tape's start */
    /* WENGERT_RECLAIM_STRESS=1 runs a pass at every chance (tests: every
     * derivative and version must come out the same as without reclaiming). */
    int stress;
    int poor_passes;              /* passes running that gave back under a quarter of what they looked at */
    uint64_t versions_at_schedule;   /* global_versions when the next pass was set */
    uint32_t size_at_schedule;       /* and the tape's size then */
    struct Pass *current;         /* the pass whose renumbering kink_renumber asks about */
    uint32_t roots_clears;        /* version_roots' count, as of this clear */
    uint64_t roots_base;
    uint64_t global_versions;     /* ids the globals' version logs took */
} ReclaimState;

#endif

/* Needs the session state (state.h includes this file again). */
#if defined(WG_STATE_DONE) && !defined(WG_RECLAIM_H_STATE)
#define WG_RECLAIM_H_STATE
static inline int reclaim_due(void) { return tape_size() >= G->reclaim.next_pass_at; }
/* A loop's floor: what was recorded before the loop began stays. A pass
 * over everything (between top-level statements inside a top-level loop)
 * moves entries below the floor, and a cleared tape has none of it, so
 * the step takes a new one then. */
typedef struct { TapeMark floor; uint64_t full; uint32_t epoch; } LoopFloor;
LoopFloor reclaim_loop_begin(void);
void      reclaim_loop_pass(LoopFloor *f);   /* the step's pass, when one is due */
/* Every iteration: the test inline, the pass out of line. */
static inline void reclaim_loop_step(LoopFloor *f) { if (__builtin_expect(reclaim_due(), 0)) reclaim_loop_pass(f); }

/* A statement outside any call (at a chunk's top level: the session's, or
 * a :load or :time inside it) begins and ends: what it made and nothing
 * holds goes at its end (left to the next pass when it made little next to
 * what a pass must walk). Statements nest (a :load's inside the :load). */
typedef struct {
    TapeMark made;
    uint32_t epoch;
    uint64_t before;            /* entries recorded before it began */
    uint32_t outer_lowest;      /* the enclosing statement's lowest floor so far */
    uint64_t global_versions;   /* reclaim_global_versions when it began */
    uint64_t passes;            /* G->tape.reclaims when it began */
} StatementMark;
StatementMark reclaim_statement_begin(void);
void          reclaim_statement_end(const StatementMark *m);
/* Entries that became versions of global variables: a global's versions
 * stay live (x@k), so a statement whose entries nearly all went there
 * leaves a pass too little to give back and skips it. The evaluator
 * counts them. */

/* Reclaims now (tests, `:tape reclaim`). Returns entries reclaimed. */
uint32_t reclaim_now(TapeMark floor);
/* The floor that lets every entry go. */
TapeMark reclaim_everything(void);
/* Schedules the next pass from the tape as it is now (a new cap, a
 * cleared tape). */
void reclaim_reset(void);

#endif
