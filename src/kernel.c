/* kernel.c: `wengert --kernel`, the machine-readable mode a notebook
 * kernel (jupyter/wengert_kernel.py) drives. One JSON object a line each
 * way, on the embedding API alone (wengert.h), with jansson:
 *
 *   {"op":"run","code":C,"name":"In[3]"}  runs C as REPL input (echo off):
 *        {"stream":"stdout"|"stderr","text":T}   as it is printed
 *        {"display":{"image/svg+xml":S,"text/plain":T}}   a picture
 *        {"done":"ok","value":V|null}  ("quit":true after :quit, then it ends) or
 *        {"done":"error","error":{"message","file","line","col","report"}}
 *   {"op":"check","code":C}      {"done":"complete"|"incomplete"|"invalid"}
 *   {"op":"complete","code":C,"cursor":B}   {"done":"ok","matches":[...],
 *        "start":B,"end":B}   (B: byte offsets)
 *   {"op":"inspect","code":C,"cursor":B}    {"done":"ok","found":0|1,"text":T}
 *   {"op":"reset"}               {"done":"ok"}
 *
 * The protocol has the process's real standard input and output to itself:
 * the interpreter's stdout and stderr are writers (wg_set_output), and file
 * descriptors 0 and 1 are pointed away (/dev/null, stderr) so that nothing
 * run from a cell, a child process included, can corrupt it. SIGINT (the
 * notebook's interrupt) stops the running cell with "interrupted". */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "kernel.h"
#include "complete.h"
#include "state.h"

/* The kernel's, one a process (the session's own state is in its
 * wg_State). pending: what stderr got since the last thing sent, sent as
 * a stream when more output follows; what is left when a run fails is its
 * error report. Standard output is gathered in outbuf and sent at most
 * every 50 ms (by the flusher thread), or before anything else is sent: a
 * loop that prints sends a few messages, not one a line, and still shows
 * as it runs. The lock guards the protocol's output and outbuf. */
static struct {
    wg_Session *session;
    FILE *proto;                /* the protocol's output */
    char *pending;
    size_t npending, cap_pending;
    int capturing;              /* run: streams go out; inspect: all kept */
    char *kept;
    size_t nkept, cap_kept;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    char *outbuf;
    size_t nout, cap_out;
    int stopping;
} K = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static void append(char **buf, size_t *n, size_t *cap, const char *text, size_t len)
{
    if (*n + len + 1 > *cap) {
        *cap = (*n + len + 1) * 2;
        *buf = realloc(*buf, *cap);
        if (!*buf) abort();
    }
    memcpy(*buf + *n, text, len);
    *n += len;
    (*buf)[*n] = 0;
}

/* Text as a JSON string: jansson takes only valid UTF-8, and printed
 * text need not be (a string's bytes, a write cut inside a character), so
 * each byte that does not begin a valid sequence becomes '?'. NULL: null. */
static json_t *text(const char *t, size_t n)
{
    if (!t) return json_null();
    char *c = malloc(n + 1);
    if (!c) abort();
    const unsigned char *u = (const unsigned char *)t;
    for (size_t i = 0; i < n;) {
        unsigned b = u[i];
        size_t k = b < 0x80 ? 1 : b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
        int ok = k && i + k <= n;
        for (size_t j = 1; ok && j < k; j++) ok = (u[i + j] & 0xC0) == 0x80;
        if (ok && k > 2) {      /* no overlong forms, surrogates or code points past U+10FFFF */
            unsigned b1 = u[i + 1];
            ok = !((b == 0xE0 && b1 < 0xA0) || (b == 0xED && b1 >= 0xA0) ||
                   (b == 0xF0 && b1 < 0x90) || (b == 0xF4 && b1 >= 0x90));
        }
        if (!ok) k = 1, c[i] = '?';
        else memcpy(c + i, t + i, k);
        i += k;
    }
    json_t *j = json_stringn(c, n);
    free(c);
    return j ? j : json_string("");
}

static void write_locked(json_t *msg)
{
    json_dumpf(msg, K.proto, JSON_COMPACT | JSON_ENSURE_ASCII);
    fputc('\n', K.proto);
    fflush(K.proto);
    json_decref(msg);
}

static void flush_out_locked(void)
{
    if (!K.nout) return;
    write_locked(json_pack("{s:s, s:o}", "stream", "stdout", "text", text(K.outbuf, K.nout)));
    K.nout = 0;
}

static void send(json_t *msg)
{
    pthread_mutex_lock(&K.lock);
    flush_out_locked();
    write_locked(msg);
    pthread_mutex_unlock(&K.lock);
}

static void *flusher(void *ud)
{
    (void)ud;
    pthread_mutex_lock(&K.lock);
    while (!K.stopping) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 50 * 1000000L;
        if (t.tv_nsec >= 1000000000L) { t.tv_sec++; t.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&K.wake, &K.lock, &t);
        flush_out_locked();
    }
    pthread_mutex_unlock(&K.lock);
    return NULL;
}

static void flush_pending(void)
{
    if (K.npending) send(json_pack("{s:s, s:o}", "stream", "stderr", "text", text(K.pending, K.npending)));
    K.npending = 0;
}

static void on_out(void *ud, const char *text, size_t len)
{
    (void)ud;
    if (!K.capturing) { append(&K.kept, &K.nkept, &K.cap_kept, text, len); return; }
    flush_pending();
    pthread_mutex_lock(&K.lock);
    append(&K.outbuf, &K.nout, &K.cap_out, text, len);
    if (K.nout > 65536) flush_out_locked();
    pthread_mutex_unlock(&K.lock);
}

static void on_err(void *ud, const char *text, size_t len)
{
    (void)ud;
    if (!K.capturing) { append(&K.kept, &K.nkept, &K.cap_kept, text, len); return; }
    fflush(stdout);      /* what was printed before the error comes first */
    append(&K.pending, &K.npending, &K.cap_pending, text, len);
}

static void on_display(void *ud, const char *mime, const char *data, size_t len, const char *alt)
{
    (void)ud;
    flush_pending();
    send(json_pack("{s:{s:o, s:o}}", "display", mime, text(data, len), "text/plain", text(alt, strlen(alt))));
}

static void on_sigint(int sig)
{
    (void)sig;
    wg_interrupt(K.session);
}

/* ------------------------------------------------------------ requests */

static void do_run(json_t *req)
{
    const char *code = json_string_value(json_object_get(req, "code"));
    const char *name = json_string_value(json_object_get(req, "name"));
    if (!code) code = "";
    wg_Result r;
    K.npending = 0;
    K.capturing = 1;
    wg_run(K.session, name ? name : "<cell>", code, strlen(code), &r);
    fflush(stdout);
    fflush(stderr);
    json_t *done;
    if (r.status == WG_OK) {
        flush_pending();
        done = json_pack("{s:s, s:o}", "done", "ok", "value", text(r.value, r.value ? strlen(r.value) : 0));
        if (wg_quitting(K.session)) json_object_set_new(done, "quit", json_true());   /* and it ends */
    } else {
        done = json_pack("{s:s, s:{s:o, s:o, s:i, s:i, s:o}}", "done", "error", "error",
                         "message", text(r.message, r.message ? strlen(r.message) : 0),
                         "file", text(r.file, r.file ? strlen(r.file) : 0), "line", r.line, "col", r.col,
                         "report", text(K.pending ? K.pending : "", K.npending));
        K.npending = 0;
    }
    wg_result_free(&r);
    send(done);
}

static void do_check(json_t *req)
{
    const char *code = json_string_value(json_object_get(req, "code"));
    if (!code) code = "";
    wg_Status st = wg_check(K.session, code, strlen(code), NULL);
    const char *what = st == WG_OK ? "complete" : st == WG_INCOMPLETE ? "incomplete" : "invalid";
    send(json_pack("{s:s}", "done", what));
}

static int word_char(int c) { return isalnum(c) || c == '_'; }

/* The request's code and cursor (a byte offset, clamped). */
static const char *code_cursor(json_t *req, size_t *cursor)
{
    const char *code = json_string_value(json_object_get(req, "code"));
    if (!code) code = "";
    json_int_t c = json_integer_value(json_object_get(req, "cursor"));
    size_t n = strlen(code);
    *cursor = c < 0 || (size_t)c > n ? n : (size_t)c;
    return code;
}

/* Files in the directory of `prefix` whose names start as it does. */
static void complete_files(json_t *matches, const char *prefix)
{
    const char *slash = strrchr(prefix, '/');
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - prefix) + 1 : 1, slash ? prefix : ".");
    const char *base = slash ? slash + 1 : prefix;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' && base[0] != '.') continue;
        if (strncmp(e->d_name, base, strlen(base))) continue;
        char full[8192];
        snprintf(full, sizeof full, "%.*s%s%s", slash ? (int)(base - prefix) : 0, prefix, e->d_name,
                 e->d_type == DT_DIR ? "/" : "");
        json_array_append_new(matches, text(full, strlen(full)));
    }
    closedir(d);
}

/* As the REPL's tab: the word before the cursor, completed by its kind. */
static void do_complete(json_t *req)
{
    size_t cur;
    const char *code = code_cursor(req, &cur);
    size_t line = cur;
    while (line > 0 && code[line - 1] != '\n') line--;
    size_t start = cur;
    while (start > line && word_char((unsigned char)code[start - 1])) start--;
    char *upto = strndup(code + line, cur - line);   /* the line, to the cursor */
    int kind = complete_kind(upto, (int)(start - line));
    if (kind == C_COMMANDS && start > line && code[start - 1] == ':') start--;
    json_t *matches = json_array();
    if (kind == C_FILES || kind == C_TAPE_DOT) {
        size_t fs = cur;
        while (fs > line && code[fs - 1] != ' ' && code[fs - 1] != '\t') fs--;
        char *prefix = strndup(code + fs, cur - fs);
        if (kind == C_FILES) start = fs;
        if (kind == C_FILES) complete_files(matches, prefix);
        free(prefix);
    }
    if (kind != C_FILES) {
        char buf[64];
        const char *name;
        size_t len = cur - start;
        for (int i = 0; (name = complete_candidate(K.session, kind, i, buf, sizeof buf)); i++)
            if (!strncmp(name, code + start, len)) json_array_append_new(matches, text(name, strlen(name)));
    }
    free(upto);
    send(json_pack("{s:s, s:o, s:I, s:I}", "done", "ok", "matches", matches,
                   "start", (json_int_t)start, "end", (json_int_t)cur));
}

/* Shift-Tab: `:help NAME` for the word at the cursor. */
static void do_inspect(json_t *req)
{
    size_t cur;
    const char *code = code_cursor(req, &cur);
    size_t start = cur, end = cur;
    while (start > 0 && word_char((unsigned char)code[start - 1])) start--;
    while (code[end] && word_char((unsigned char)code[end])) end++;
    char word[128];
    snprintf(word, sizeof word, "%.*s", (int)(end - start), code + start);
    int found = 0;
    const char *h;
    for (int i = 0; word[0] && (h = wg_name(K.session, WG_NAMES_HELP, i)); i++)
        if (!strcmp(h, word)) found = 1;
    K.nkept = 0;
    if (found) {
        char cmd[160];
        snprintf(cmd, sizeof cmd, ":help %s\n", word);
        K.capturing = 0;
        wg_run(K.session, "<inspect>", cmd, strlen(cmd), NULL);
        fflush(stdout);
        fflush(stderr);
        K.capturing = 1;
    }
    send(json_pack("{s:s, s:b, s:o}", "done", "ok", "found", found, "text", text(K.kept ? K.kept : "", K.nkept)));
}

static void handle(json_t *req)
{
    const char *op = json_string_value(json_object_get(req, "op"));
    if (!op) op = "";
    if (!strcmp(op, "run")) do_run(req);
    else if (!strcmp(op, "check")) do_check(req);
    else if (!strcmp(op, "complete")) do_complete(req);
    else if (!strcmp(op, "inspect")) do_inspect(req);
    else if (!strcmp(op, "reset")) {
        wg_reset(K.session);
        send(json_pack("{s:s}", "done", "ok"));
    } else send(json_pack("{s:s, s:{s:s}}", "done", "error", "error", "message", "unknown request"));
}

/* --------------------------------------------------------------- loop */

int kernel_run(wg_Session *s)
{
    K.session = s;
    /* the protocol's own descriptors; 0 and 1 go elsewhere */
    int in = dup(0), out = dup(1);
    FILE *requests = in >= 0 ? fdopen(in, "r") : NULL;
    K.proto = out >= 0 ? fdopen(out, "w") : NULL;
    if (!requests || !K.proto) return 2;
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) { dup2(null, 0); close(null); }
    fflush(stdout);
    dup2(2, 1);
    wg_set_color(2);
    wg_set_echo(s, 0);
    wg_set_output(s, on_out, on_err, NULL);
    wg_set_display(s, on_display, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    K.capturing = 1;
    pthread_t th;
    sigset_t sigint, was;
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigint, &was);     /* SIGINT stays this thread's */
    int have_flusher = pthread_create(&th, NULL, flusher, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    send(json_pack("{s:s, s:s}", "ready", "wengert", "version", WG_VERSION));
    char *line = NULL;
    size_t cap = 0;
    while (!wg_quitting(s) && getline(&line, &cap, requests) > 0) {
        json_error_t e;
        json_t *req = json_loads(line, 0, &e);
        if (!req) send(json_pack("{s:s, s:{s:o}}", "done", "error", "error", "message", text(e.text, strlen(e.text))));
        else {
            handle(req);
            json_decref(req);
        }
    }
    free(line);
    wg_set_display(s, NULL, NULL);
    wg_set_output(s, NULL, NULL, NULL);
    if (have_flusher) {
        pthread_mutex_lock(&K.lock);
        K.stopping = 1;
        pthread_cond_signal(&K.wake);
        pthread_mutex_unlock(&K.lock);
        pthread_join(th, NULL);
    }
    free(K.outbuf);
    free(K.pending);
    free(K.kept);
    fclose(requests);
    fclose(K.proto);
    return 0;
}
