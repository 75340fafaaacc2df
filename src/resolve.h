/* resolve.h: after parsing, binds every name of a chunk to its slot (a
 * local, an upvalue or a global) and fills in FnInfo (resolve.c). */
#ifndef WG_RESOLVE_H
#define WG_RESOLVE_H
#include "parse.h"

int resolve_chunk(Chunk *c, ParseState *ps);   /* 0 ok; 1 after a reported error */

/* The resolver's part of the session state (G->resolve): the first error
 * found; resolution goes on but the chunk will not run. */
typedef struct { const Node *error_at; char error_msg[160]; } ResolveState;

#endif
