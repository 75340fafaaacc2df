/* repl.h: the interactive loop. */
#ifndef WG_REPL_H
#define WG_REPL_H
int repl_run(void);
#endif
