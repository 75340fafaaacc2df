/* kernel.h: `wengert --kernel`, JSON lines for a notebook kernel. */
#ifndef WG_KERNEL_H
#define WG_KERNEL_H
#include "wengert.h"

/* Answers requests on standard input until it ends or :quit; 0 then. */
int kernel_run(wg_Session *s);

#endif
