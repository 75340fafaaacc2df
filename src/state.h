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
 * The headers' type sections come before their `#include "state.h"`,
 * and their inline functions that reach G after it: this file includes
 * them all before its guard, so whichever comes first, the struct is
 * complete before any inline function reads it. */
#include "tape.h"

#ifndef WG_STATE_H
#define WG_STATE_H

struct wg_State {
    Tape tape;
};
typedef struct wg_State wg_State;

extern wg_State *G;        /* the running session's state */

wg_State *state_open(void);              /* zeroed, with each subsystem's defaults */
void      state_close(wg_State *s);

#endif
