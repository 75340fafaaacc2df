/* error.h: one way to fail. Every runtime error unwinds with longjmp to the
 * innermost protected call (wg_pcall), which prints
 *     FILE:LINE:COL: error: message
 *         source line
 *         ^
 * and returns. Nothing above it is left half-done: see eval.c for how the
 * session stays consistent. */
#ifndef WG_ERROR_H
#define WG_ERROR_H
#include <setjmp.h>
#include <stddef.h>
#include "ast.h"

typedef struct WgJmp {
    jmp_buf buf;
    struct WgJmp *prev;
} WgJmp;

/* Where the evaluator is: updated as it walks, read when an error strikes. */
typedef struct {
    const Chunk *chunk;
    const Node  *node;
} WgWhere;
extern WgWhere wg_where;

_Noreturn void wg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void wg_error_at(const Node *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print a located message now (for syntax errors, which do not unwind). */
void wg_report(const Chunk *c, int line, int col, const char *msg);

/* Run fn(ud) under protection; returns 0 on success, 1 after an error
 * (already reported on stderr). */
int wg_pcall(void (*fn)(void *), void *ud);

/* Scratch memory: buffers of a computation that an error may abandon (the
 * adjoint buffers of a sweep interrupted by Ctrl-C). wg_pcall frees what
 * was taken inside it and not given back. Give back in any order. */
void *wg_scratch(size_t n);               /* zeroed */
void  wg_scratch_free(void *p);

extern size_t wg_alloc_cap;   /* non-zero: larger requests fail as out of memory (the fuzzer) */
void *wg_malloc(size_t n);
void *wg_realloc(void *p, size_t n);
void *wg_calloc(size_t n, size_t size);

#endif
