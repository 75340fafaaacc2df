/* state.h: one session's state. Everything the interpreter keeps between
 * calls lives in a wg_State, a sub-struct per subsystem, each defined in
 * its subsystem's header (Tape in tape.h, EvalState in eval.h, ...), as
 * Lua keeps its state in lua_State/global_State and clox in its VM.
 *
 * The running session's state is reached through G, the address of one
 * static object: each session owns a wg_State of its own, and the wg_*
 * calls (wengert.c) swap their session's into the running one when
 * another session ran last (state_enter: two copies of the struct), so
 * sessions take turns in one process (a state opened while none runs is
 * made in place: a lone session never copies it). A constant address costs the hot
 * paths (the evaluator, the recorder, the sweeps) nothing over the
 * globals it replaced; a pointer variable cost them 3-4% in instructions
 * (a load of the pointer after every call). Nothing may keep the address
 * of a member of G across a swap: only the running session's is valid.
 * What is truly per process stays outside: the Ctrl-C flag, the fuzzer's
 * knobs, the colour switch, op tables.
 *
 * A header's inline functions that read G come after its guard, in a
 * part compiled once the state is complete (WG_STATE_DONE): this file
 * includes those headers again at its end. Every .c file includes it. */
#ifndef WG_STATE_H
#define WG_STATE_H
#include "tape.h"
#include "num.h"
#include "value.h"
#include "valuegc.h"
#include "error.h"
#include "eval.h"
#include "builtins.h"
#include "ckpt.h"
#include "ad.h"
#include "fwd.h"
#include "versions.h"
#include "rng.h"
#include "kinks.h"
#include "tapegc.h"
#include "sweep.h"
#include "tapeview.h"
#include "parse.h"
#include "resolve.h"
#include "cmd.h"
#include "io.h"
#include "help.h"
#include "jacobian.h"

struct wg_State {
    struct wg_State *home;        /* the session's own copy (state_enter) */
    struct wg_Session *session;   /* the handle that owns this state (wengert.c) */
    Tape tape;
    NumState num;
    ValueState value;
    GcState gc;
    ErrorState err;
    EvalState eval;
    CkptState ckpt;
    BuiltinsState builtins;
    AdState ad;
    FwdState fwd;
    VersionsState versions;
    rng_t rng;                /* the generator (rng.h) */
    KinkState kinks;
    ReclaimState reclaim;
    SweepState sweep;
    TapeviewState tapeview;
    ResolveState resolve;
    CmdState cmd;
    IoState io;
    HelpState help;
    JacState jac;
};
typedef struct wg_State wg_State;

extern wg_State state_running;
#define G (&state_running)  /* the running session's state */

/* How the session runs, as one value: a checkpointed loop's recomputation
 * (ckpt.c) saves it, runs with its own, and puts it back whole. The fields
 * stay where the hot paths read them (G->tape.recording, G->num.backend). */
typedef struct {
    int ckpt_mode;
    Env *ckpt_env;
    int recording;
    int backend;
    rng_t rng;
    int muted;                /* output dropped (io.h) */
} RunMode;
RunMode state_mode(void);
void    state_set_mode(const RunMode *m);

/* Recording off (or on) for a while: int saved = rec_off(); ...
 * rec_restore(saved). An error between them is put right by eval_chunk. */
static inline int  rec_set(int on) { int was = G->tape.recording; G->tape.recording = on; return was; }
static inline int  rec_off(void) { return rec_set(0); }
static inline int  rec_on(void) { return rec_set(1); }
static inline void rec_restore(int saved) { G->tape.recording = saved; }

/* Per process: WENGERT_SLOW set (not "0") turns every fast path off, so
 * that the same program run both ways must print the same values (routes.py
 * --slow compares them: route agreement alone cannot see a wrong primal,
 * since every route runs the same fast path). A fast path tests
 * eval_fast_paths before it accepts a case; the general path is the
 * reference. state_open reads the variable. (Here, not in eval.h: the
 * layers below the evaluator have fast paths too, and state.o defines it.) */
extern int eval_fast_paths;

wg_State *state_open(void);              /* zeroed, with each subsystem's defaults (G->session unset) */
void      state_enter(wg_State *s);      /* s runs now; the one running goes back to its copy */
void      state_close(wg_State *s);      /* frees the copy (not what it holds) */

/* The headers' parts that read the state: once it is complete. */
#define WG_STATE_DONE
#include "num.h"
#include "valuegc.h"
#include "value.h"
#include "tape.h"
#include "versions.h"
#include "arith.h"
#include "tapegc.h"
#include "fixtape.h"
#include "dual.h"

#endif
