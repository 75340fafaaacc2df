/* ckpt.h: checkpointed loops (ckpt.c; SPEC "Long loops and long
 * sessions"): the loop runs unrecorded, keeping a few states, and the
 * sweeps recompute its steps from them (sweep.h, LoopHooks). */
#ifndef WG_CKPT_H
#define WG_CKPT_H
#include <stdint.h>
#include "value.h"

/* 0 normally; 1 while a checkpointed loop runs unrecorded (its
 * variables, in ckpt_env, count versions but keep none); 2 while one is
 * recomputed (no versions, no commands, no output). */
extern int ckpt_mode;
extern uint32_t ckpt_floor;   /* first entry of the region a recomputation records */
extern Env *ckpt_env;
extern uint32_t ckpt_born;    /* env_made when the running loop began */
int  exec_checkpoint(Node *n, Env *env);
void ckpt_abandon(void);      /* after an error unwound */
void ckpt_visit_roots(void (*visit)(Value));
void ckpt_init(void);
extern unsigned long long ckpt_steps_run, ckpt_steps_recomputed;

#endif
