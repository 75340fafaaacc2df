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

struct wg_State {
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
};
typedef struct wg_State wg_State;

extern wg_State *G;        /* the running session's state */

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
