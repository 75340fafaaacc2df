/* complete.h: tab completion's kinds and candidates (REPL and kernel). */
#ifndef WG_COMPLETE_H
#define WG_COMPLETE_H
#include <stddef.h>
#include "wengert.h"

/* What the word being completed can be, from the words before it:
 * a command after ':', a :tape subcommand, a backend, a help name, a file
 * (after :load, :save, :tape dot NAME), or else any name: keywords,
 * builtins, the library and variables. */
enum { C_NAMES, C_COMMANDS, C_TAPE, C_TAPE_DOT, C_BACKENDS, C_HELP, C_FILES };

/* The kind of the word that starts at byte `start` of `line`. */
int complete_kind(const char *line, int start);
/* The i-th candidate of a kind (C_FILES has none here), NULL after the last;
 * buf holds it when it must be built (":name"). */
const char *complete_candidate(wg_Session *s, int kind, int i, char *buf, size_t size);

#endif
