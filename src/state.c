/* state.c: making and freeing a session's state (state.h). */
#include <stdlib.h>
#include "state.h"
#include "error.h"

wg_State *G;

wg_State *state_open(void)
{
    wg_State *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->gc.collect_at = 2 * 1024;
    s->eval.nograd_frame = -1;
    s->eval.ans_slot = -1;
    s->num.backend = s->num.start_backend = BK_F64;
    s->reclaim.next_pass_at = 1u << 16;
    s->reclaim.lowest_floor = UINT32_MAX;
    return s;
}

void state_close(wg_State *s)
{
    free(s);
}
