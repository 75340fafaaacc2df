/* fwd.h: forward mode with dual numbers: jvp and forward gradients. */
#ifndef WG_FWD_H
#define WG_FWD_H
#include "value.h"
#include "dual.h"

typedef struct {
    uint32_t next_tag;         /* the latest jvp's tag */
    uint32_t top;              /* the innermost running jvp's tag, 0 if none (dual.h) */
    uint32_t *live;            /* the running jvp calls' tags, ascending */
    uint16_t *live_k;          /* and the tangents each carries (a chunk's k, or 1) */
    int nlive, caplive;
} FwdState;

Value fwd_jvp_builtin(int argc, Value *argv);   /* jvp(f, x, v) */
Value fwd_fwdgrad(int argc, Value *argv);       /* fwdgrad(f, x) */
Value fwd_jvp(Value f, Value x, Value v);
/* J·V in one forward pass per FWD_CHUNK columns of V: x a number or an
 * array (or matrix) of n numbers, V an n×k matrix; gives an m×k matrix
 * (m the numbers f returns: 1 for a number, a matrix's elements row by
 * row). V an array (or a number) is one direction: fwd_jvp. Arguments
 * borrowed, result owned; records by the SPEC's rule like jvp. */
#define FWD_CHUNK 32
Value fwd_jvp_chunk(Value f, Value x, Value V);
/* A function that takes d or reads x@k, called on duals, runs on numbers
 * perturbed on the tape (see fwd.c). */
int   fwd_needs_tape(int argc, const Value *argv);
Value fwd_call_on_tape(Value f, int argc, Value *argv);   /* f'(x)·v by dual numbers */
/* The newest tag handed out: a dual of a higher tag than this value had
 * before a call belongs to a jvp that began in the call; once the call
 * has returned, so has that jvp (checkpointed loops drop such tangents). */
uint32_t fwd_last_tag(void);
/* Which tags are live, and the primal a dead one leaves: dual.h. */

#endif
