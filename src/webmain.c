/* webmain.c: wengert in a web page (web/, `make web`), the entry points
 * the page's Web Worker (web/worker.js) calls. Built by emscripten only,
 * in place of main.c, repl.c and kernel.c; like them it drives the
 * interpreter through the embedding API (wengert.h) and complete.h.
 *
 * One session a page. What it prints reaches the worker through the
 * session's writers and display (io.h), as calls of the functions below
 * written in JavaScript (EM_JS): Module.wgOutput(stream, text) and
 * Module.wgDisplay(mime, data, alt). A run's end is Module.wgDone(...).
 *
 * Stop: the page writes 1 into err_interrupted, the flag Ctrl-C raises in
 * the terminal, which the evaluator polls. The build's memory is shared
 * (-pthread, though no thread is made), so the page, on another thread,
 * writes it while a run holds the worker: web_interrupt_flag() is its
 * address. The standard library, examples and course are files in the
 * module's file system under /wengert (--preload-file). */
#include <emscripten.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wengert.h"
#include "complete.h"
#include "error.h"

EM_JS(void, js_output, (int stream, const char *text, size_t len), {
    Module.wgOutput(stream, UTF8ToString(text, len));
});

EM_JS(void, js_display, (const char *mime, const char *data, size_t len, const char *alt), {
    Module.wgDisplay(UTF8ToString(mime), UTF8ToString(data, len), UTF8ToString(alt));
});

EM_JS(void, js_done, (int status, const char *value, const char *message, const char *file, int line, int col), {
    Module.wgDone(status, value ? UTF8ToString(value) : null, message ? UTF8ToString(message) : null,
                  file ? UTF8ToString(file) : null, line, col);
});

EM_JS(void, js_match, (const char *name), {
    Module.wgMatch(UTF8ToString(name));
});

static wg_Session *session;

static void on_out(void *ud, const char *text, size_t len) { (void)ud; js_output(0, text, len); }
static void on_err(void *ud, const char *text, size_t len) { (void)ud; js_output(1, text, len); }

static void on_display(void *ud, const char *mime, const char *data, size_t len, const char *alt)
{
    (void)ud;
    js_display(mime, data, len, alt ? alt : "");
}

/* A fresh session in `backend` (NULL or "": float64); 0 when unknown. */
EMSCRIPTEN_KEEPALIVE int web_open(const char *backend)
{
    if (session) wg_close(session);
    setenv("WENGERT_STDLIB", "/wengert/stdlib", 1);
    if (chdir("/wengert") != 0) { /* :load examples/... then does not find them */ }
    wg_set_color(2);
    wg_Options opt = { backend && *backend ? backend : NULL, NULL, 0 };
    session = wg_open(&opt);
    if (!session) return 0;
    wg_set_output(session, on_out, on_err, NULL);
    wg_set_display(session, on_display, NULL);
    return 1;
}

/* Runs code as the chunk `name`; echo 1 is REPL input (bare expressions
 * print as they run), 0 a program (as a script). Ends with js_done. */
EMSCRIPTEN_KEEPALIVE int web_run(const char *name, const char *code, int echo)
{
    wg_Result r;
    wg_set_echo(session, echo);
    wg_run(session, name, code, strlen(code), &r);
    js_done(r.status, r.value, r.message, r.file, r.line, r.col);
    int st = r.status;
    wg_result_free(&r);
    return st;
}

/* 0 complete, 1 a syntax error, 2 incomplete (more lines could finish it),
 * 3 complete but an `else` on the next line could still continue it. */
EMSCRIPTEN_KEEPALIVE int web_check(const char *code)
{
    int open_if = 0;
    wg_Status st = wg_check(session, code, strlen(code), &open_if);
    return st == WG_OK && open_if ? 3 : (int)st;
}

static int word_char(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* As the REPL's Tab: the candidates for the word that ends at byte
 * `cursor` of `code`, each by js_match; returns the word's first byte. */
EMSCRIPTEN_KEEPALIVE int web_complete(const char *code, int cursor)
{
    int line = cursor;
    while (line > 0 && code[line - 1] != '\n') line--;
    int start = cursor;
    while (start > line && word_char((unsigned char)code[start - 1])) start--;
    char *upto = strndup(code + line, (size_t)(cursor - line));
    if (!upto) return cursor;
    int kind = complete_kind(upto, start - line);
    free(upto);
    if (kind == C_COMMANDS && start > line && code[start - 1] == ':') start--;
    if (kind == C_FILES) return start;      /* the page has no files to offer */
    char buf[64];
    const char *name;
    for (int i = 0; (name = complete_candidate(session, kind, i, buf, sizeof buf)); i++)
        if (!strncmp(name, code + start, (size_t)(cursor - start))) js_match(name);
    return start;
}

static void drop(void *ud, const char *text, size_t len) { (void)ud, (void)text, (void)len; }

/* A fresh session (as :reset), saying nothing: before a program's run. */
EMSCRIPTEN_KEEPALIVE void web_reset(void)
{
    wg_set_output(session, drop, on_err, NULL);
    wg_reset(session);
    wg_set_output(session, on_out, on_err, NULL);
}
EMSCRIPTEN_KEEPALIVE int web_quitting(void) { return wg_quitting(session); }
EMSCRIPTEN_KEEPALIVE int web_interrupt_flag(void) { return (int)(size_t)&err_interrupted; }

int main(void) { return 0; }
