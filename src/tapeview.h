/* tapeview.h: the :tape command (see tapeview.c). */
#ifndef WG_TAPEVIEW_H
#define WG_TAPEVIEW_H

void tapeview_command(const char *args);   /* "stats", "all", "dot x f.svg", ... */

#endif
