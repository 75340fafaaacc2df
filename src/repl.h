/* repl.h: the interactive loop. */
#ifndef WG_REPL_H
#define WG_REPL_H
#include "wengert.h"
int repl_run(wg_Session *s);
#endif
