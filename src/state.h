/* state.h: one session's state. Everything the interpreter keeps between
 * calls lives in a wg_State, a sub-struct per subsystem, each defined in
 * its subsystem's header (Tape in tape.h, EvalState in eval.h, ...), as
 * Lua keeps its state in lua_State/global_State and clox in its VM. The
 * running session's state is reached through the one pointer G; the wg_*
 * calls (wengert.c) point it at their session's state, so sessions can
 * take turns in one process. What is truly per process stays outside: the
 * Ctrl-C flag, the fuzzer's knobs, the colour switch, op tables.
 *
 * Hot loops take a local copy of the sub-struct's address (Tape *t =
 * &G->tape) so that the pointer is loaded once.
 *
 * A header's inline functions that read G come after its guard, in a
 * part compiled once the state is complete (WG_STATE_DONE): this file
 * includes those headers again at its end. Every .c file includes it. */
#ifndef WG_STATE_H
#define WG_STATE_H
#include "tape.h"
#include "num.h"
#include "value.h"
#include "gc.h"
#include "error.h"
#include "eval.h"
#include "ad.h"
#include "fwd.h"
#include "versions.h"
#include "rng.h"
#include "kinks.h"
#include "reclaim.h"
#include "sweep.h"
#include "tapeview.h"
#include "parse.h"
#include "cmd.h"
#include "io.h"
#include "help.h"

struct wg_State {
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
};
typedef struct wg_State wg_State;

extern wg_State *G;        /* the running session's state */

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

wg_State *state_open(void);              /* zeroed, with each subsystem's defaults */
void      state_close(wg_State *s);

/* The headers' parts that read the state: once it is complete. */
#define WG_STATE_DONE
#include "num.h"
#include "gc.h"
#include "tape.h"
#include "versions.h"
#include "arith.h"
#include "reclaim.h"
#include "fixpt.h"

#endif
