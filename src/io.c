/* io.c: the session's output channel (io.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io.h"
#include "value.h"
#include "error.h"
#include "state.h"

static void capture(const char *s, size_t n)
{
    IoState *io = &G->io;
    if (io->ncap + n + 1 > io->capcap) {
        size_t cap = io->capcap ? io->capcap : 256;
        while (cap < io->ncap + n + 1) cap *= 2;
        char *grown = realloc(io->cap, cap);
        if (!grown) return;               /* the picture's text is cut short */
        io->cap = grown;
        io->capcap = cap;
    }
    memcpy(io->cap + io->ncap, s, n);
    io->ncap += n;
    io->cap[io->ncap] = 0;
}

void io_write(int stream, const char *s, size_t n)
{
    IoState *io = &G->io;
    if (stream == IO_OUT) {
        if (io->cap) { capture(s, n); return; }
        if (io->muted) return;
    }
    if (io->writer[stream]) {
        if (stream == IO_ERR && io->writer[IO_OUT] == NULL) fflush(stdout);
        io->writer[stream](io->ud, s, n);
    } else {
        if (stream == IO_ERR) fflush(stdout);
        fwrite(s, 1, n, stream == IO_OUT ? stdout : stderr);
    }
}

void io_puts(int stream, const char *s) { io_write(stream, s, strlen(s)); }

void io_putc(int stream, int c)
{
    char ch = (char)c;
    io_write(stream, &ch, 1);
}

int io_vprintf(int stream, const char *fmt, va_list ap)
{
    char buf[512];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    if (n < 0) {
        va_end(again);
        return n;
    }
    if ((size_t)n < sizeof buf) io_write(stream, buf, (size_t)n);
    else {
        char *big = malloc((size_t)n + 1);
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, again);
            io_write(stream, big, (size_t)n);
            free(big);
        }
    }
    va_end(again);
    return n;
}

int io_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = io_vprintf(IO_OUT, fmt, ap);
    va_end(ap);
    return n;
}

int io_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = io_vprintf(IO_ERR, fmt, ap);
    va_end(ap);
    return n;
}

void io_flush(void)
{
    if (!G->io.writer[IO_OUT]) fflush(stdout);
}

struct IoText {
    FILE *f;                 /* open_memstream's, NULL once closed */
    char *text;
    size_t n;
};
typedef struct IoText IoText;

static void text_drop(void)
{
    IoText *t = G->io.text;
    if (!t) return;
    G->io.text = NULL;
    if (t->f) fclose(t->f);
    free(t->text);
    free(t);
}

void io_value(int stream, Value v, int brief)
{
    IoState *io = &G->io;
    if (stream == IO_OUT && !io->cap && io->muted) return;
    if (!io->writer[stream] && !(stream == IO_OUT && io->cap)) {     /* straight to the stream */
        if (stream == IO_ERR) fflush(stdout);
        FILE *f = stream == IO_OUT ? stdout : stderr;
        if (brief) value_print_brief(v, f);
        else value_print(v, f);
        return;
    }
    /* the text is made first (printing polls for Ctrl-C, and the writer
     * may fail): the session holds it until it is written */
    text_drop();
    IoText *t = err_malloc(sizeof *t);
    *t = (IoText){ NULL, NULL, 0 };
    t->f = open_memstream(&t->text, &t->n);
    if (!t->f) {
        free(t);
        err_raise("out of memory");
    }
    io->text = t;
    if (brief) value_print_brief(v, t->f);
    else value_print(v, t->f);
    fclose(t->f);
    t->f = NULL;
    io_write(stream, t->text, t->n);
    text_drop();
}

void io_capture_begin(void)
{
    io_capture_drop();
    G->io.capcap = 256;
    G->io.cap = err_malloc(G->io.capcap);
    G->io.cap[0] = 0;
}

char *io_capture_end(size_t *n)
{
    char *text = G->io.cap;
    if (n) *n = G->io.ncap;
    G->io.cap = NULL;
    G->io.ncap = G->io.capcap = 0;
    return text;
}

void io_capture_drop(void)
{
    text_drop();
    free(io_capture_end(NULL));
}
