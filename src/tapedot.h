/* tapedot.h: `:tape dot [NAME] [FILE]`, the tape as a Graphviz graph
 * (SPEC "Seeing it"). */
#ifndef WG_TAPEDOT_H
#define WG_TAPEDOT_H
#include <stddef.h>
#include <stdint.h>

/* Writes "x@2", "a[1]" or "(local)" for an entry assigned to a variable;
 * 0 (and nothing written) for other entries. cmd.c supplies it, so the
 * graph labels entries exactly as :tape does. */
typedef int (*EntryLabel)(uint32_t id, char *buf, size_t size);

void tapedot_command(const char *args, EntryLabel label);

#endif
