/* error.c: error reporting and the protected-call boundary. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "error.h"
#include "state.h"


void err_call_grow(void)
{
    __typeof__(G->err.capcalls) grown = G->err.capcalls ? 2 * G->err.capcalls : 64;   /* the size is kept only once it is had */
    G->err.calls = err_realloc(G->err.calls, sizeof(CallSite) * (size_t)grown);
    G->err.capcalls = grown;
}

void err_call_push(const char *name)
{
    if (G->err.ncalls == G->err.capcalls) err_call_grow();
    const Node *n = G->err.where.node;
    if (n && n->kind == N_CALL && n->a) n = n->a;     /* the callee's first character */
    G->err.calls[G->err.ncalls++] = (CallSite){ name, G->err.where.chunk, NULL, n ? n->line : 0, n ? n->col : 0 };
}

void err_call_pop(void)
{
    if (G->err.ncalls > 0) G->err.ncalls--;
}

static size_t trace_line(size_t at, const CallSite *c)
{
    if (at >= sizeof G->err.trace) return at;
    int line = c->line, col = c->col;
    const Node *n = c->node;
    if (n) {
        if (n->kind == N_CALL && n->a) n = n->a;     /* the callee's first character */
        line = n->line;
        col = n->col;
    }
    int k = snprintf(G->err.trace + at, sizeof G->err.trace - at, "  in %s, called at %s:%d:%d\n",
                     c->name ? c->name : "<fn>", c->chunk ? c->chunk->filename : "?", line,
                     err_display_col(c->chunk, line, col));
    return k < 0 ? at : at + (size_t)k;
}

/* Innermost call first; of a deep recursion the first and last few. */
static void snapshot_calls(void)
{
    enum { SHOWN = 4 };
    size_t at = 0;
    G->err.trace[0] = 0;
    for (int i = G->err.ncalls - 1; i >= 0; i--) {
        if (G->err.ncalls > 3 * SHOWN && i == G->err.ncalls - 1 - SHOWN) {
            int more = G->err.ncalls - 2 * SHOWN;
            if (at < sizeof G->err.trace) {
                int k = snprintf(G->err.trace + at, sizeof G->err.trace - at, "  ... %d more calls\n", more);
                if (k > 0) at += (size_t)k;
            }
            i = SHOWN - 1;
        }
        at = trace_line(at, &G->err.calls[i]);
    }
}

int err_color;

void err_color_init(int mode)
{
    const char *term = getenv("TERM"), *no = getenv("NO_COLOR");
    if (mode == WG_COLOR_AUTO)
        err_color = isatty(2) && !(no && *no) && !(term && !strcmp(term, "dumb"));
    else err_color = mode == WG_COLOR_ALWAYS;
}

#define RED   "\033[1;31m"
#define CYAN  "\033[1;36m"
#define GREEN "\033[1;32m"
#define PLAIN "\033[0m"
static const char *paint(const char *code) { return err_color ? code : ""; }

void err_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    io_flush();
    io_err("%snote:%s ", paint(CYAN), paint(PLAIN));
    io_vprintf(IO_ERR, fmt, ap);
    io_putc(IO_ERR, '\n');
    va_end(ap);
}

/* Columns as displayed: a UTF-8 character is one column, a tab advances
 * to the next multiple of 8. Nodes and tokens keep byte columns. */
static int display_col(const char *text, int len, int bytecol)
{
    int col = 1, i = 0;
    for (; i < bytecol - 1 && i < len; i++) {
        unsigned char ch = (unsigned char)text[i];
        if ((ch & 0xC0) == 0x80) continue;
        col = ch == '\t' ? (col - 1) / 8 * 8 + 9 : col + 1;
    }
    return col + (bytecol - 1 - i > 0 ? bytecol - 1 - i : 0);
}

int err_display_col(const Chunk *c, int line, int bytecol)
{
    if (!c || line <= 0) return bytecol;
    int len;
    const char *text = ast_chunk_line(c, line, &len);
    return display_col(text, len, bytecol);
}

/* The line as displayed (tabs as spaces), from display column `from`, at
 * most `width` columns. */
static void echo_line(const char *text, int len, int from, int width)
{
    int col = 1;
    for (int i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '\t') {
            int next = (col - 1) / 8 * 8 + 9;
            for (; col < next; col++)
                if (col >= from && col < from + width) io_putc(IO_ERR, ' ');
            continue;
        }
        if ((ch & 0xC0) == 0x80) {                /* the rest of a character */
            if (col - 1 >= from && col - 1 < from + width) io_putc(IO_ERR, ch);
            continue;
        }
        if (col >= from && col < from + width) io_putc(IO_ERR, ch);
        col++;
    }
}


const ErrInfo *err_last(void) { return &G->err.last; }

/* What the latest report said, for front ends that show errors their own
 * way (wengert.h). */
static void remember(const Chunk *c, int line, int dcol, const char *msg)
{
    snprintf(G->err.last_message, sizeof G->err.last_message, "%s", msg);
    snprintf(G->err.last_file, sizeof G->err.last_file, "%s", c ? c->filename : "");
    G->err.last = (ErrInfo){ G->err.last_message, c ? G->err.last_file : NULL, c ? line : 0, c ? dcol : 0 };
}

/* A message's first line is the error; lines after it are notes, shown
 * below the source line and caret. */
void err_report(const Chunk *c, int line, int col, const char *msg)
{
    io_flush();
    remember(c, line, c ? err_display_col(c, line, col) : 0, msg);
    const char *notes = strchr(msg, '\n');
    int head = notes ? (int)(notes - msg) : (int)strlen(msg);
    if (!c) {
        io_err("%serror:%s %.*s\n", paint(RED), paint(PLAIN), head, msg);
        if (notes) io_err("%s\n", notes + 1);
        return;
    }
    int len;
    const char *text = ast_chunk_line(c, line, &len);
    int dcol = display_col(text, len, col);
    io_err("%s:%d:%d: %serror:%s %.*s\n", c->filename, line, dcol, paint(RED), paint(PLAIN), head, msg);
    if (len > 0 || line > 0) {
        int from = dcol > 80 ? dcol - 80 : 1;     /* a huge line: the part around the column */
        io_puts(IO_ERR, "    ");
        echo_line(text, len, from, 160);
        io_puts(IO_ERR, "\n    ");
        for (int i = from; i < dcol; i++) io_putc(IO_ERR, ' ');
        io_err("%s^%s\n", paint(GREEN), paint(PLAIN));
    }
    if (notes) io_err("%s\n", notes + 1);
}

static _Noreturn void unwind(const Node *n, const char *fmt, va_list ap)
{
    vsnprintf(G->err.message, sizeof G->err.message, fmt, ap);
    G->err.chunk = G->err.where.chunk;
    G->err.line = n ? n->line : 0;
    G->err.col = n ? n->col : 0;
    snapshot_calls();
    if (!G->err.handler) {
        err_report(G->err.chunk, G->err.line, G->err.col, G->err.message);
        io_puts(IO_ERR, G->err.trace);
        exit(1);
    }
    longjmp(G->err.handler->buf, 1);
}

void err_raise(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    unwind(G->err.where.node, fmt, ap);
}

void err_raise_at(const Node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    unwind(n, fmt, ap);
}

static void reserve_scratch(void)
{
    if (G->err.nscratch == G->err.capscratch) {
        __typeof__(G->err.capscratch) grown = G->err.capscratch ? 2 * G->err.capscratch : 16;   /* the size is kept only once it is had */
        G->err.scratch = err_realloc(G->err.scratch, grown * sizeof(void *));
        G->err.capscratch = grown;
    }
}

void *err_scratch(size_t n)
{
    reserve_scratch();
    /* taken first, then listed: an allocation that fails (an error) must
     * not leave a slot counted that holds an old, freed pointer */
    void *p = err_calloc(n ? n : 1, 1);
    return G->err.scratch[G->err.nscratch++] = p;
}

void *err_scratch_uninit(size_t n)
{
    reserve_scratch();
    void *p = err_malloc(n ? n : 1);     /* (as err_scratch) */
    return G->err.scratch[G->err.nscratch++] = p;
}

/* The block keeps its slot in the list: an error frees the grown one, or
 * the old one if growing failed (err_realloc raises before it moves). */
void *err_scratch_realloc(void *p, size_t n)
{
    if (!p) return err_scratch_uninit(n);
    size_t i = G->err.nscratch;
    while (i > 0 && G->err.scratch[i - 1] != p) i--;
    void *q = err_realloc(p, n ? n : 1);
    if (i > 0) G->err.scratch[i - 1] = q;
    return q;
}

void err_scratch_free(void *p)
{
    if (!p) return;
    for (size_t i = G->err.nscratch; i-- > 0;)
        if (G->err.scratch[i] == p) {
            G->err.scratch[i] = G->err.scratch[--G->err.nscratch];
            break;
        }
    free(p);
}

/* Scratch taken since mark and not given back belongs to the abandoned
 * computation. */
static void free_scratch_since(size_t mark)
{
    while (G->err.nscratch > mark) free(G->err.scratch[--G->err.nscratch]);
}

int err_pcall(void (*fn)(void *), void *ud)
{
    ErrJmp j;
    ErrWhere saved = G->err.where;
    size_t mark = G->err.nscratch;
    int depth = G->err.ncalls;
    j.prev = G->err.handler;
    G->err.handler = &j;
    if (setjmp(j.buf) == 0) {
        fn(ud);
        G->err.handler = j.prev;
        return 0;
    }
    G->err.handler = j.prev;
    G->err.where = saved;
    G->err.ncalls = depth;
    free_scratch_since(mark);
    err_report(G->err.chunk, G->err.line, G->err.col, G->err.message);
    io_puts(IO_ERR, G->err.trace);
    G->err.trace[0] = 0;
    return 1;
}

size_t err_alloc_cap;

/* Faults in the pages of [p, p + n) with one call, as the kernel allows
 * (MADV_POPULATE_WRITE, Linux 5.14): for memory about to be written
 * whole. A page first touched costs a fault of its own otherwise, and on
 * W4 (a hundred megabytes written once) the faults were a third of the
 * time; in one call each costs about 30% less (docs/bench.md). Where the
 * kernel says no, the pages fault in as they are touched, as before. */
void err_prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)p & ~(page - 1), hi = ((uintptr_t)p + n + page - 1) & ~(page - 1);
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)p, (void)n;
#endif
}

#if defined(__SANITIZE_ADDRESS__)
#define ZERO_PAGES 0    /* under ASan calloc, so the bounds stay checked */
#else
#define ZERO_PAGES 1
#endif

void *err_zero_pages(size_t n)
{
    if (err_alloc_cap && n > err_alloc_cap) err_raise("out of memory (asked for %zu bytes)", n);
    if (!ZERO_PAGES) return err_calloc(n ? n : 1, 1);
    void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) err_raise("out of memory (asked for %zu bytes)", n);
    return p;
}

void err_zero_pages_free(void *p, size_t n)
{
    if (!p) return;
    if (ZERO_PAGES) munmap(p, n ? n : 1);
    else free(p);
}

void *err_malloc(size_t n)
{
    if (err_alloc_cap && n > err_alloc_cap) err_raise("out of memory (asked for %zu bytes)", n);
    void *p = malloc(n ? n : 1);
    if (!p) err_raise("out of memory (asked for %zu bytes)", n);
    return p;
}

void *err_realloc(void *p, size_t n)
{
    if (err_alloc_cap && n > err_alloc_cap) err_raise("out of memory (asked for %zu bytes)", n);
    void *q = realloc(p, n ? n : 1);
    if (!q) err_raise("out of memory (asked for %zu bytes)", n);
    return q;
}

void *err_calloc(size_t n, size_t size)
{
    if (err_alloc_cap && size && n > err_alloc_cap / size) err_raise("out of memory (asked for %zu x %zu bytes)", n, size);
    if (n && size && n <= SIZE_MAX / size && n * size >= WG_PREFAULT_BYTES) {
        /* clearing touches every page: fault them in first, all at once */
        void *p = err_malloc(n * size);
        err_prefault(p, n * size);
        memset(p, 0, n * size);
        return p;
    }
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) err_raise("out of memory (asked for %zu x %zu bytes)", n, size);
    return p;
}

volatile sig_atomic_t err_interrupted;

long err_step_budget;

void err_check_interrupt_now(void)
{
    if (err_step_budget > 0 && --err_step_budget == 0) err_interrupted = 1;
    if (err_interrupted) {
        err_interrupted = 0;
        err_raise("interrupted");
    }
}
