/* wengert.h: the embedding API. A front end (the command line and the REPL
 * in main.c and repl.c, a notebook kernel, a benchmark driver) runs wengert
 * through these calls alone, as lua.c uses only lua.h.
 *
 * A session owns its state (state.h: variables, tape, generator, backend,
 * output writers): a process may open several and run them in turns, one
 * call at a time (not from two threads at once). */
#ifndef WENGERT_H
#define WENGERT_H
#include <stddef.h>

#define WG_VERSION "0.2.0"

typedef struct wg_Session wg_Session;

typedef enum {
    WG_OK = 0,
    WG_ERROR = 1,         /* a syntax or runtime error (reported on the error stream) */
    WG_INCOMPLETE = 2     /* the input ended inside an unfinished construct */
} wg_Status;

typedef struct {
    const char *backend;        /* NULL: float64 */
    const char *const *args;    /* the script's arguments, as `args` */
    int nargs;
} wg_Options;

/* What a run gave back; strings are owned by the result. */
typedef struct {
    wg_Status status;
    char *value;      /* the last top-level bare expression's value, as print shows it; NULL if none */
    char *message;    /* WG_ERROR: the message */
    char *file;       /* WG_ERROR: where (NULL when it has no place) */
    int line, col;    /* columns as displayed (UTF-8 characters) */
} wg_Result;

/* Opens the session: builtins, the standard library, the backend. NULL
 * (with a message on stderr) if the backend is unknown. */
wg_Session *wg_open(const wg_Options *opt);
/* Flushes s's output and detaches its output handlers; what the session
 * holds is not freed (a process opens a few sessions and ends with them). */
void        wg_close(wg_Session *s);

/* Runs source text as a chunk named `name` ("<repl>", a file name). With
 * echo on (the REPL), bare expressions print their values as they run.
 * r may be NULL; otherwise release it with wg_result_free. */
wg_Status   wg_run(wg_Session *s, const char *name, const char *src, size_t len, wg_Result *r);
void        wg_result_free(wg_Result *r);
/* Runs a script file ("-": standard input); errors, unreadable files too,
 * are reported on the error stream. */
wg_Status   wg_run_file(wg_Session *s, const char *path);
void        wg_set_echo(wg_Session *s, int on);

/* Parses without running or reporting: WG_OK when the input is complete,
 * WG_INCOMPLETE when more lines could finish it, WG_ERROR for a syntax
 * error. *open_if (may be NULL) tells whether it ends with an `if` that an
 * `else` on the next line could still continue. */
wg_Status   wg_check(wg_Session *s, const char *src, size_t len, int *open_if);

/* Output: stdout and stderr by default; writers receive every byte the
 * session prints (results and print to out, errors and notes to err),
 * through io.h; nothing reassigns stdout or stderr. */
typedef void (*wg_Writer)(void *ud, const char *text, size_t len);
void        wg_set_output(wg_Session *s, wg_Writer out, wg_Writer err, void *ud);

/* Pictures, for a front end that can show them (a notebook): with a
 * display set, plot(...) without a file name and `:tape dot` without a
 * file hand it an SVG picture (mime "image/svg+xml") and the text the
 * terminal would have shown, instead of printing that text. NULL: text. */
typedef void (*wg_Display)(void *ud, const char *mime, const char *data, size_t len, const char *alt);
void        wg_set_display(wg_Session *s, wg_Display fn, void *ud);

/* Stops a running computation with the error "interrupted" (safe to call
 * from a signal handler or another thread). */
void        wg_interrupt(wg_Session *s);
/* A fresh session: variables, tape, generator, backend as at start-up. */
void        wg_reset(wg_Session *s);
/* Whether :quit was given. */
int         wg_quitting(wg_Session *s);
/* Colour in error messages and notes: 0 auto, 1 always, 2 never. */
void        wg_set_color(int mode);

/* Names for completion, the i-th of a kind, NULL after the last. */
typedef enum { WG_NAMES_COMMANDS, WG_NAMES_BACKENDS, WG_NAMES_HELP, WG_NAMES_KEYWORDS,
               WG_NAMES_VARIABLES, WG_NAMES_DATA } wg_NameKind;   /* DATA: variables of numbers (for :tape NAME) */
const char *wg_name(wg_Session *s, wg_NameKind kind, int i);

#endif
