/* jacobian.h: whole derivatives of vector functions (SPEC "Derivatives",
 * the `jacobian` bullet): jacobian(f), hessian(f), vjp(f, x, u),
 * sparsity(f), and the sparse Jacobians and Hessians found by colouring
 * the pattern (jacobian.c). */
#ifndef WG_JACOBIAN_H
#define WG_JACOBIAN_H
#include <stdint.h>
#include "value.h"

/* A comparison on recorded values that ran while a sparse request was
 * recording its function (the pattern may change with x). */
typedef struct {
    const Node *node;
    const Chunk *chunk;
    uint32_t ida, idb;
} JacBranch;

/* The part of the session state (G->jac). */
typedef struct {
    JacBranch *branches;          /* while watching: the comparisons seen */
    uint32_t nbranches, capbranches;
    int watching;                 /* sparse requests recording their function (nested: more than 1) */
    /* the latest sparse computations, for :tape stats (passes 0: none yet) */
    int jac_passes, jac_cols, jac_rows, jac_dense;     /* dense: fell back to dense passes */
    int jac_rev;                  /* the rows were coloured: reverse sweeps */
    int hess_passes, hess_cols, hess_dense;
    uint64_t sparse_runs;
    uint64_t recordings, fwd_passes, rev_sweeps;   /* run so far, for :time */
    uint64_t fwd_directions;                       /* columns the forward passes carried */
} JacState;

void  jac_register(void);                               /* the builtins */
Value jac_derived_call(Closure *c, int argc, Value *argv);   /* jacobian(f)(x), hessian(f)(x), sparsity(f)(x) */
void  jac_note_branch(const Node *n, const Chunk *c, uint32_t ida, uint32_t idb);   /* G->kinks.branch_hook while recording */
void  jac_stats(void);                                  /* :tape stats' lines */
void  jac_abandon(void);
void  jac_forget(void);                                   /* :reset: counts and sparse stats from zero */
void  jac_time_note(const uint64_t before[4]);           /* :time: the passes since before (jac_time_mark) */
void  jac_time_mark(uint64_t before[4]);                                /* an error unwound out of a recording */

#endif
