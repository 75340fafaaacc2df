/* sweep.h: reverse sweeps over the session tape (see sweep.c). */
#ifndef WG_SWEEP_H
#define WG_SWEEP_H
#include "value.h"

/* Entries a sweep holds fixed (their adjoints go no further), highest
 * first, each once. */
typedef struct {
    const uint32_t *ids;
    uint32_t n;
} Cuts;

/* dy/d(entry) for each wrt entry, as values written to out[0..n): DERIV
 * entries when recording (a later sweep expands them), plain numbers
 * otherwise. y is a number (not a dual). */
void    sweep_derivatives(Value y, const uint32_t *wrt, int n, Cuts cuts, Value *out);
/* Adjoints of every entry in [lo, top] for seed 1 at top, in float64
 * (tests, :tape); scratch memory, give back with err_scratch_free. */
double *sweep_adjoints(uint32_t top, uint32_t lo);
/* After an error unwound out of a sweep. */
void    sweep_abandon(void);
/* Gives back the adjoint buffer kept between d calls (:tape clear, reset). */
void    sweep_forget(void);

/* Checkpointed loops: the sweeps reach a loop entry (OP_CKPT) and ask the
 * evaluator, through these hooks, to run the loop again (this file never
 * calls the evaluator itself).
 *   reverse: a plain sweep reached loop entry `loop` with the adjoints of
 *     its outputs in out_adj[0..nout). The hook re-runs segments of the loop
 *     recorded at the tape's end and sweeps each with sweep_region(ctx, ...),
 *     which hands what falls below the region to the sweep that reached
 *     the loop (ctx); it takes the region off the tape again. In
 *     out_total[j] it leaves the whole adjoint of output j as the plain
 *     loop's entry for it would have it: out_adj[j] and what the loop's
 *     later steps computed from it (the outputs are not side by side:
 *     d(y, p) for p one of them sees those paths).
 *   rerun: a recorded sweep (an expansion, for higher order) reached the
 *     loop: the hook runs the whole loop again recorded at the tape's end,
 *     from the loop's own input entries, and writes the entry of each
 *     output in out_ids[0..nout) (0: a constant). The entries stay: the
 *     expansion reads them; the recorded sweep takes the whole adjoints
 *     of the outputs from those entries too. */
typedef struct {
    uint32_t (*outputs)(uint32_t loop);     /* how many (its side record knows) */
    void (*reverse)(uint32_t loop, const double *out_adj, double *out_total, void *ctx);
    void (*rerun)(uint32_t loop, uint32_t *out_ids);
} LoopHooks;
/* Sweeps entries [lo, top] in doubles, seeded with seeds[j] at seed_ids[j]
 * (an id below lo goes straight to ctx's buffers); adjoints of want[] in
 * out. ctx is what the reverse hook was given. */
void sweep_region(void *ctx, uint32_t lo, uint32_t top, const uint32_t *seed_ids,
                  const double *seeds, uint32_t nseeds, const uint32_t *want,
                  uint32_t nwant, double *out);

/* What the last outermost float64 sweep proves live (tapegc.c): if an
 * entry of [res_lo, res_hi) (the results of d call `call`) is live, so is
 * y's cone, and every entry that sweep gave an adjoint other than 0 lies
 * in it (an adjoint flows only from an entry to what it reads), as do its
 * places. 0 if no such sweep's adjoints are kept as the tape's ids still
 * name them. sweep_kept_unreached counts the entries from floor to top
 * that it does not prove live, up to `enough` (then at least that). */
typedef struct { uint32_t call, res_lo, res_hi, top; } SweepCover;
int      sweep_kept_cover(SweepCover *c);
uint64_t sweep_kept_unreached(uint32_t floor, uint64_t enough);

/* The entries a loop's re-run gave its outputs, in an expansion (sweep.c,
 * "loops re-run by expansions"). */
typedef struct { uint32_t from, to; } Alias;

/* The sweeps' part of the session state (G->sweep); see sweep.c. */
typedef struct {
    struct {                   /* the second-order buffers */
        double  *abar, *tau;
        uint8_t *in;
        size_t   cap;
        int      busy;
    } so;
    struct {                   /* the adjoints kept between d calls */
        double  *adj;
        size_t   cap;          /* doubles */
        uint32_t lo, top, epoch, size;
        uint64_t print;        /* the top entry's fingerprint */
        uint64_t reclaimed;    /* tape.reclaimed then: a pass that moved entries ends it */
        int      valid;
        int      ckout;    /* it asked about a loop's output (only such a sweep answers one) */
        /* what the reclaimer may learn from the buffer (sweep_kept_cover):
         * the d call that filled it, the entries of its results [res_lo,
         * res_hi), and its places below lo (a sink of leaves) from sink_lo */
        int      filled;       /* adj holds that sweep's adjoints, from lo to top */
        uint32_t call, res_lo, res_hi, sink_lo;
    } kept;
    int kept_busy;
    int ckout_wrt;
    uint32_t expansion_floor;  /* the first entry of the expansion being recorded, 0 if none */
    LoopHooks loop_hooks;
    struct {                   /* loops re-run by expansions (sweep.c) */
        Alias *v;                  /* collected for the expansions being recorded */
        uint32_t n, cap;
        int depth;                 /* expansions being recorded */
        struct { uint32_t call, off, n; } *lists;   /* kept expansions' pairs in pool */
        uint32_t nlists, caplists;
        Alias *pool;
        uint32_t npool, cappool;
        uint64_t reclaimed;        /* the tape's reclaimed and clears counts when */
        uint32_t clears;           /* the table was begun */
    } reruns;
} SweepState;

#endif
