/* reclaim.h: giving back the tape entries that nothing can reach (SPEC
 * "Long loops and long sessions").
 *
 * An entry is live when a number somewhere names it (a variable, a version
 * x@k, an array element, a closure's frame, a dual, a side record) or a
 * live entry reads it; the rest is compacted away and the live entries
 * keep their order, so ids are renumbered: `:tape` shows positions in the
 * tape as it is now. Reclaiming runs where no number can hide in a C
 * local: between top-level statements (every entry may go), and between
 * the iterations of any loop (only entries recorded since the loop began
 * may go: whatever the enclosing expressions hold was made before it). */
#ifndef WG_RECLAIM_H
#define WG_RECLAIM_H
#include "tape.h"

typedef void (*IdFn)(uint32_t *id, void *ud);

/* The evaluator names the ids outside heap objects (its globals and their
 * versions) once, at start-up. */
void reclaim_set_roots(void (*roots)(IdFn fn, void *ud));

/* Reclaims entries recorded at or after floor if the tape grew enough
 * since the last pass (the cost of a pass is paid for by that growth). */
void reclaim_maybe(TapeMark floor);
/* A loop's floor: what was recorded before the loop began stays. A pass
 * over everything (between top-level statements inside a top-level loop)
 * moves entries below the floor, so the step takes a new one then. */
typedef struct { TapeMark floor; uint64_t full; } LoopFloor;
LoopFloor reclaim_loop_begin(void);
void      reclaim_loop_step(LoopFloor *f);

/* A top-level statement that began at mark `made` and recorded `recorded`
 * entries has ended: what it made and nothing holds goes now (left to the
 * next pass when it made little next to what a pass must walk). Call
 * reclaim_watch() when the statement begins. */
void reclaim_statement(TapeMark made, uint64_t recorded);
/* Whether a pass since reclaim_watch() moved entries below n (a mark
 * taken at n is stale then). */
void reclaim_watch(void);
int  reclaim_moved_below(uint32_t n);
/* Reclaims now (tests, `:tape reclaim`). Returns entries reclaimed. */
uint32_t reclaim_now(TapeMark floor);
/* The floor that lets every entry go. */
TapeMark reclaim_everything(void);
/* Start over: a fresh tape. */
void reclaim_reset(void);

#endif
