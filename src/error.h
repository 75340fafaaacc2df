/* error.h: one way to fail. Every runtime error unwinds with longjmp to the
 * innermost protected call (err_pcall), which prints
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

typedef struct ErrJmp {
    jmp_buf buf;
    struct ErrJmp *prev;
} ErrJmp;

/* Where the evaluator is: updated as it walks, read when an error strikes. */
typedef struct {
    const Chunk *chunk;
    const Node  *node;
} ErrWhere;

_Noreturn void err_raise(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void err_raise_at(const Node *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The column a user sees (UTF-8 characters, tabs to multiples of 8) of a
 * byte column of a chunk's line. */
int err_display_col(const Chunk *c, int line, int bytecol);
/* Print a located message now (for syntax errors, which do not unwind). */
void err_report(const Chunk *c, int line, int col, const char *msg);
/* The latest error reported: message, file (NULL if none), line and
 * column as displayed. Valid until the next report. */
typedef struct {
    const char *message, *file;
    int line, col;
} ErrInfo;
const ErrInfo *err_last(void);

/* Colour on standard error: "error:" red, "note:" cyan, the caret green.
 * AUTO colours only a terminal, and never with NO_COLOR set or TERM=dumb. */
enum { WG_COLOR_AUTO, WG_COLOR_ALWAYS, WG_COLOR_NEVER };
extern int err_color;                      /* colour is on */
void err_color_init(int mode);
/* "note: ..." on stderr, a line of its own. */
void err_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The calls being run, for the traceback an error prints: push before a
 * call (its site is err_where, the caller's node and chunk), pop after it.
 * An error snapshots them; the protected call drops those it unwound.
 * (The evaluator's calls push inline, eval.c's call_push: the site's node
 * is kept, and read only when an error prints it.) */
void err_call_push(const char *name);
void err_call_pop(void);
void err_call_grow(void);                  /* room for one more call */

/* Run fn(ud) under protection; returns 0 on success, 1 after an error
 * (already reported on stderr). */
int err_pcall(void (*fn)(void *), void *ud);

/* Scratch memory: buffers of a computation that an error may abandon (the
 * adjoint buffers of a sweep interrupted by Ctrl-C). err_pcall frees what
 * was taken inside it and not given back. Give back in any order. */
void *err_scratch(size_t n);               /* zeroed */
void *err_scratch_uninit(size_t n);        /* not: for what is written before it is read */
void *err_scratch_realloc(void *p, size_t n);   /* p (scratch, or NULL: a new block) grown or shrunk to n bytes, as realloc */
void  err_scratch_free(void *p);

/* Ctrl-C: the signal handler only sets the flag; long computations poll it
 * (loops, calls, sweeps) and stop with the error "interrupted". */
#include <signal.h>
extern volatile sig_atomic_t err_interrupted;
extern long err_step_budget;   /* > 0: "interrupted" after that many more polls (the fuzzer) */
void err_check_interrupt_now(void);
/* Polled by loops and calls: the flag test inline, the rest out of line. */
static inline void err_check_interrupt(void)
{
    if (__builtin_expect(err_interrupted || err_step_budget > 0, 0)) err_check_interrupt_now();
}

extern size_t err_alloc_cap;   /* non-zero: larger requests fail as out of memory (the fuzzer) */
void *err_malloc(size_t n);
void *err_realloc(void *p, size_t n);
void *err_calloc(size_t n, size_t size);
#define WG_PREFAULT_BYTES ((size_t)1 << 20)   /* err_calloc prefaults blocks this big */
void err_prefault(void *p, size_t n);      /* fault in the pages of memory about to be written */
/* n bytes of zeros straight from the kernel, faulted in (no clearing
 * pass of our own): for a big buffer kept a long time and grown rarely. */
void *err_zero_pages(size_t n);
void  err_zero_pages_free(void *p, size_t n);

/* The errors' part of the session state (G->err). */
typedef struct {
    const char *name;
    const Chunk *chunk;
    const Node *node;         /* the call's node, read when an error prints it; NULL: line and col given */
    int line, col;
} CallSite;
typedef struct {
    ErrWhere where;            /* where the evaluator is */
    ErrJmp *handler;           /* the innermost protected call */
    void **scratch;
    size_t nscratch, capscratch;
    char message[1024];
    const Chunk *chunk;       /* the error's place */
    int line, col;
    CallSite *calls;          /* the calls being run */
    int ncalls, capcalls;
    char trace[2048];         /* the calls at the latest error, one a line */
    ErrInfo last;
    char last_file[512], last_message[1024];
} ErrorState;

#endif
