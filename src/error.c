/* error.c: error reporting and the protected-call boundary. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"

WgWhere wg_where;
static WgJmp *handler;
static void **scratch;
static size_t nscratch, capscratch;
static char message[1024];
static const Chunk *err_chunk;
static int err_line, err_col;

/* A message's first line is the error; lines after it are notes, shown
 * below the source line and caret. */
void wg_report(const Chunk *c, int line, int col, const char *msg)
{
    fflush(stdout);
    const char *notes = strchr(msg, '\n');
    int head = notes ? (int)(notes - msg) : (int)strlen(msg);
    if (!c) {
        fprintf(stderr, "error: %.*s\n%s%s", head, msg, notes ? notes + 1 : "", notes ? "\n" : "");
        return;
    }
    fprintf(stderr, "%s:%d:%d: error: %.*s\n", c->filename, line, col, head, msg);
    int len;
    const char *text = chunk_line(c, line, &len);
    if (len > 160) {            /* a huge line: show the part around the column */
        int from = col > 80 ? col - 80 : 1;
        if (from > len) from = len;
        text += from - 1;
        len -= from - 1;
        if (len > 160) len = 160;
        col -= from - 1;
    }
    if (len > 0 || line > 0) {
        fprintf(stderr, "    %.*s\n    ", len, text);
        for (int i = 1; i < col && i <= len; i++) fputc(text[i - 1] == '\t' ? '\t' : ' ', stderr);
        fputs("^\n", stderr);
    }
    if (notes) fprintf(stderr, "%s\n", notes + 1);
}

static _Noreturn void unwind(const Node *n, const char *fmt, va_list ap)
{
    vsnprintf(message, sizeof message, fmt, ap);
    err_chunk = wg_where.chunk;
    err_line = n ? n->line : 0;
    err_col = n ? n->col : 0;
    if (!handler) {
        wg_report(err_chunk, err_line, err_col, message);
        exit(1);
    }
    longjmp(handler->buf, 1);
}

void wg_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    unwind(wg_where.node, fmt, ap);
}

void wg_error_at(const Node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    unwind(n, fmt, ap);
}

void *wg_scratch(size_t n)
{
    if (nscratch == capscratch) {
        capscratch = capscratch ? 2 * capscratch : 16;
        scratch = wg_realloc(scratch, capscratch * sizeof(void *));
    }
    void *p = wg_calloc(n ? n : 1, 1);
    scratch[nscratch++] = p;
    return p;
}

void wg_scratch_free(void *p)
{
    if (!p) return;
    for (size_t i = nscratch; i-- > 0;)
        if (scratch[i] == p) {
            scratch[i] = scratch[--nscratch];
            break;
        }
    free(p);
}

/* Scratch taken since mark and not given back belongs to the abandoned
 * computation. */
static void free_scratch_since(size_t mark)
{
    while (nscratch > mark) free(scratch[--nscratch]);
}

int wg_pcall(void (*fn)(void *), void *ud)
{
    WgJmp j;
    WgWhere saved = wg_where;
    size_t mark = nscratch;
    j.prev = handler;
    handler = &j;
    if (setjmp(j.buf) == 0) {
        fn(ud);
        handler = j.prev;
        return 0;
    }
    handler = j.prev;
    wg_where = saved;
    free_scratch_since(mark);
    wg_report(err_chunk, err_line, err_col, message);
    return 1;
}

size_t wg_alloc_cap;

void *wg_malloc(size_t n)
{
    if (wg_alloc_cap && n > wg_alloc_cap) wg_error("out of memory (asked for %zu bytes)", n);
    void *p = malloc(n ? n : 1);
    if (!p) wg_error("out of memory (asked for %zu bytes)", n);
    return p;
}

void *wg_realloc(void *p, size_t n)
{
    if (wg_alloc_cap && n > wg_alloc_cap) wg_error("out of memory (asked for %zu bytes)", n);
    void *q = realloc(p, n ? n : 1);
    if (!q) wg_error("out of memory (asked for %zu bytes)", n);
    return q;
}

void *wg_calloc(size_t n, size_t size)
{
    if (wg_alloc_cap && size && n > wg_alloc_cap / size) wg_error("out of memory (asked for %zu x %zu bytes)", n, size);
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) wg_error("out of memory (asked for %zu x %zu bytes)", n, size);
    return p;
}
