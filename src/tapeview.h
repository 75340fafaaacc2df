/* tapeview.h: the :tape command (see tapeview.c). */
#ifndef WG_TAPEVIEW_H
#define WG_TAPEVIEW_H
#include <stdint.h>

/* The :tape listings' part of the session state (G->tapeview). */
typedef struct {
    uint32_t *lab_ids;          /* the set, ascending (tapeview.c) */
    struct Label *lab_of;
    int nlab;
    uint32_t lab_lo, lab_hi;    /* lazy mode: the set is every labelled entry in [lo, hi) */
    int lab_lazy;               /* listings in tape order (all, dot): windows on demand */
    int dot_stopped;            /* tapedot.c */
} TapeviewState;

void tapeview_command(const char *args);
struct Global;
struct Global *tapeview_variable(const char *name);   /* a variable of numbers, else an error that says what NAME is */   /* "stats", "all", "dot x f.svg", ... */

#endif
