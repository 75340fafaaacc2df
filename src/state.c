/* state.c: making and freeing a session's state (state.h). */
#include <stdlib.h>
#include <string.h>
#include "state.h"
#include "error.h"

wg_State state_running;

int eval_fast_paths = 1;   /* state.h */

static void read_process_knobs(void)
{
    const char *slow = getenv("WENGERT_SLOW");
    eval_fast_paths = !(slow && *slow && strcmp(slow, "0") != 0);
}

/* Each subsystem's defaults over a zeroed state. */
static void state_defaults(wg_State *s)
{
    read_process_knobs();
    s->gc.collect_at = 2 * 1024;
    s->eval.run.nograd_frame = -1;
    s->eval.ans_slot = -1;
    s->num.backend = s->num.start_backend = BK_F64;
    s->reclaim.next_pass_at = 1u << 16;
    s->reclaim.lowest_floor = UINT32_MAX;
}

/* When no session runs (the first one, or after the running one closed),
 * the new state is made where it runs: state_running is zero then, and the
 * session's own copy is only written when another session enters, so
 * start-up neither clears nor copies the struct. */
wg_State *state_open(void)
{
    if (!state_running.home) {
        wg_State *s = malloc(sizeof *s);      /* written before it is read (state_enter) */
        if (!s) return NULL;
        state_defaults(&state_running);
        state_running.home = s;
        return s;
    }
    wg_State *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->home = s;
    state_defaults(s);
    return s;
}

RunMode state_mode(void)
{
    return (RunMode){ G->ckpt.mode, G->ckpt.env, G->tape.recording, G->num.backend, G->rng, G->io.muted };
}

void state_set_mode(const RunMode *m)
{
    G->ckpt.mode = m->ckpt_mode;
    G->ckpt.env = m->ckpt_env;
    G->tape.recording = m->recording;
    G->num.backend = m->backend;
    G->rng = m->rng;
    G->io.muted = m->muted;
}

void state_enter(wg_State *s)
{
    if (state_running.home == s) return;
    if (state_running.home) memcpy(state_running.home, &state_running, sizeof state_running);
    memcpy(&state_running, s, sizeof state_running);
}

void state_close(wg_State *s)
{
    if (state_running.home == s) memset(&state_running, 0, sizeof state_running);   /* for the next state_open */
    free(s);
}
