/* resolve.h: after parsing, binds every name of a chunk to its slot (a
 * local, an upvalue or a global) and fills in FnInfo (resolve.c). */
#ifndef WG_RESOLVE_H
#define WG_RESOLVE_H
#include "parse.h"

int resolve_chunk(Chunk *c, ParseState *ps);   /* 0 ok; 1 after a reported error */

#endif
