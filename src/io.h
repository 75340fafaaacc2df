/* io.h: the session's output channel. Every byte the interpreter prints
 * (results, print, listings, errors and notes) goes through here, as
 * Lua's goes through lua_writestring: to the front end's writers when it
 * set them (wg_set_output), else to the process's standard output and
 * error. Nothing assigns stdout or stderr. While muted (a checkpointed
 * loop's recomputation) output is dropped; errors and notes are not.
 * While capturing (plot's terminal picture as a notebook's text) output
 * goes to a buffer the session owns, which an error's recovery frees. */
#ifndef WG_IO_H
#define WG_IO_H
#include <stdarg.h>
#include <stddef.h>
#include "wengert.h"
#include "value.h"

enum { IO_OUT, IO_ERR };

typedef struct {
    wg_Writer writer[2];        /* IO_OUT, IO_ERR; NULL: stdout, stderr */
    void *ud;
    int muted;                  /* IO_OUT dropped */
    char *cap;                  /* capture of IO_OUT, NUL-terminated; NULL: none */
    size_t ncap, capcap;
    struct IoText *text;        /* a value being printed for a writer (io_value); an error leaves it */
} IoState;

void io_write(int stream, const char *s, size_t n);
/* printf's: the bytes written (negative for a bad format). */
void io_puts(int stream, const char *s);
void io_putc(int stream, int c);
int  io_vprintf(int stream, const char *fmt, va_list ap);
int  io_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int  io_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Standard output is flushed before anything goes to standard error (and
 * before a picture goes to the display), so they arrive in order. */
void io_flush(void);
/* A value as print (brief: as the REPL echoes it) shows it. */
void io_value(int stream, Value v, int brief);
/* Output goes to the capture until io_capture_end, which hands back its
 * text (the caller frees it); io_capture_drop forgets an unfinished one,
 * and a value's text an error stopped (Ctrl-C in a long listing). */
void  io_capture_begin(void);
char *io_capture_end(size_t *n);
void  io_capture_drop(void);

#endif
