/* tapeview.h: the :tape command (see tapeview.c). */
#ifndef WG_TAPEVIEW_H
#define WG_TAPEVIEW_H

void tapeview_command(const char *args);
struct Global;
struct Global *tape_variable(const char *name);   /* a variable of numbers, else an error that says what NAME is */   /* "stats", "all", "dot x f.svg", ... */

#endif
