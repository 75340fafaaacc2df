/* ckpt.h: checkpointed loops (ckpt.c; SPEC "Long loops and long
 * sessions"): the loop runs unrecorded, keeping a few states, and the
 * sweeps recompute its steps from them (sweep.h, LoopHooks). */
#ifndef WG_CKPT_H
#define WG_CKPT_H
#include <stdint.h>
#include "value.h"

/* The session's checkpointing state (G->ckpt). mode: 0 normally; 1
 * while a checkpointed loop runs unrecorded (its variables, in env, count
 * versions but keep none); 2 while one is recomputed (no versions, no
 * commands, no output). */
typedef struct {
    int mode;
    uint32_t floor;           /* first entry of the region a recomputation records */
    Env *env;
    uint32_t born;            /* env_made when the running loop began */
    unsigned long long steps_run, steps_recomputed;
    struct LoopRec *running;  /* the loops running, innermost first (ckpt.c) */
    struct Recomp *recomps;   /* recomputations running, innermost first */
    const Node *noted[64];    /* loops already noted as running recorded */
    int nnoted;
    int near;                 /* the unrecorded run met a comparison or min/max
                               * within 1e-9 of switching (kink_note_loop) */
} CkptState;
int  ckpt_exec(Node *n, Env *env);
void ckpt_abandon(void);      /* after an error unwound */
void ckpt_visit_roots(void (*visit)(Value));
void ckpt_init(void);
/* min or max (op) of argv in an unrecorded run (mode 1): notes a near tie
 * (G->ckpt.near), at least where one may be */
void ckpt_near_minmax(int op, int argc, const Value *argv);

#endif
