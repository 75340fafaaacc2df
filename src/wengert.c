/* wengert.c: the embedding API (wengert.h) over the interpreter: opening
 * a session (builtins, the standard library, the backend), running source,
 * checking whether input is complete, output writers, interrupts. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "wengert.h"
#include "eval.h"
#include "parse.h"
#include "cmd.h"
#include "error.h"
#include "num.h"
#include "tape.h"
#include "help.h"
#include "state.h"

#ifndef WG_PREFIX
#define WG_PREFIX "/usr/local"
#endif

/* A file of the standard library. */
typedef struct {
    char *path;
    char **fns;                   /* the functions it defines (`fn NAME(` starting a line) */
    int nfns;
    int lazy;                     /* it only defines them: run when a chunk first names one */
    int loaded;
} LibFile;

struct wg_Session {
    wg_State *state;              /* everything the session keeps (state.h) */
    int echo;
    int docs_loaded;              /* the stdlib's help harvested */
    LibFile *lib;                 /* the stdlib's files in name order (lib_scan) */
    int nlib;
    int *lazy_file;               /* a lazy global g's file: lazy_file[g - lazy_lo] */
    const char **script_args;     /* the script's arguments, given to it as `args` */
    int nscript_args;
    wg_Display display_fn;
    void *display_ud;
};

/* Every call below first makes its session's state the running one. */
static void enter(wg_Session *s) { state_enter(s->state); }

/* ------------------------------------------------------------ start-up */

/* The whole file (or standard input for "-"), NUL-terminated so that C
 * string functions may scan it; NULL when it cannot be opened or read. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) return NULL;
    size_t cap = 8192, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *grown = realloc(buf, cap * 2);
            if (!grown) { free(buf); buf = NULL; break; }
            buf = grown;
            cap *= 2;
        }
    }
    if (f != stdin) fclose(f);
    if (buf) buf[n] = 0;
    *len = n;
    return buf;
}

/* Help for stdlib functions comes from `## name(args): text` comments. */
static void harvest_docs(const char *src)
{
    for (const char *p = src; (p = strstr(p, "## ")); p++) {
        if (p != src && p[-1] != '\n') continue;
        const char *q = p + 3, *end = strchr(q, '\n');
        size_t len = end ? (size_t)(end - q) : strlen(q);
        char line[512], name[64];
        snprintf(line, sizeof line, "%.*s", (int)len, q);
        size_t k = strcspn(line, "(: ");
        snprintf(name, sizeof name, "%.*s", (int)k, line);
        if (name[0]) cmd_add_help(name, line);
    }
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

#define DIR_MAX (PATH_MAX + 64)
static const char *stdlib_dir(char *dir)     /* dir: DIR_MAX bytes */
{
    const char *env = getenv("WENGERT_STDLIB");
    if (env && *env) return env;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        snprintf(dir, DIR_MAX, "%s/stdlib", exe);
        if (access(dir, R_OK) == 0) return dir;
        snprintf(dir, DIR_MAX, "%s/../share/wengert/stdlib", exe);   /* installed */
        if (access(dir, R_OK) == 0) return dir;
        /* a binary built inside the source tree, a folder or two down
         * (build/wengert-dyn, build/san/wengert): the tree's stdlib */
        static const char *const up[] = { "/..", "/../.." };
        for (int i = 0; i < 2; i++) {
            char marker[PATH_MAX + 64];
            snprintf(marker, sizeof marker, "%s%s/src/wengert.c", exe, up[i]);
            snprintf(dir, DIR_MAX, "%s%s/stdlib", exe, up[i]);
            if (access(marker, R_OK) == 0 && access(dir, R_OK) == 0) return dir;
        }
    }
    snprintf(dir, DIR_MAX, "%s/share/wengert/stdlib", WG_PREFIX);
    return dir;
}

/* The script's arguments, given to it as `args`, an array of strings. */
static void define_args(void)
{
    wg_Session *s = G->session;
    Value a = value_arr_new(s->nscript_args);
    for (int i = 0; i < s->nscript_args; i++)
        AS_ARR(a)->v[i] = value_str_new(s->script_args[i], (int)strlen(s->script_args[i]));
    Global *g = &G->eval.globals[eval_global_index("args")];
    v_release(g->v);
    g->v = a;
}

/* The functions a file defines at its top level, `fn NAME(` at the start
 * of a line, into f->fns; f->lazy when nothing else starts a line but a
 * comment, a blank or a closing brace, so that running the file later
 * only defines them. (A body's lines are indented; the files say so.) */
static int name_char(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

static void lib_fns(LibFile *f, const char *src)
{
    int only = 1, cap = 0;
    for (const char *p = src; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
        if (*p == '#' || *p == '}' || *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') continue;
        size_t k = 0;
        if (!strncmp(p, "fn ", 3))
            while (name_char(p[3 + k])) k++;
        if (!k || p[3 + k] != '(') { only = 0; continue; }
        if (f->nfns == cap) f->fns = realloc(f->fns, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *f->fns);
        f->fns[f->nfns++] = strndup(p + 3, k);
    }
    f->lazy = only && f->nfns > 0;
}

/* Whether another file of the library, or a builtin, has the name. */
static int lib_name_taken(const wg_Session *s, int file, const char *name)
{
    if (eval_global_lookup(name)) return 1;
    for (int i = 0; i < s->nlib; i++)
        for (int k = 0; i != file && k < s->lib[i].nfns; k++)
            if (!strcmp(s->lib[i].fns[k], name)) return 1;
    return 0;
}

/* Finds the stdlib's .wg files (name order), harvests their help, and
 * names the functions of the lazy ones: globals lazy_lo .. lazy_hi - 1.
 * A file sharing a function's name with another file or a builtin runs at
 * start-up, so that the order of definitions stays the files' order. */
static void lib_scan(void)
{
    wg_Session *s = G->session;
    char dirbuf[DIR_MAX];
    const char *dir = stdlib_dir(dirbuf);
    DIR *d = opendir(dir);
    if (!d) {
        io_err("wengert: warning: no standard library at %s (set WENGERT_STDLIB)\n", dir);
        return;
    }
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t len = strlen(e->d_name);
        if (len > 3 && !strcmp(e->d_name + len - 3, ".wg")) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_names);
    s->lib = calloc((size_t)n + 1, sizeof *s->lib);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        free(names[i]);
        size_t len;
        char *src = read_file(path, &len);
        if (!src || !s->lib) { free(src); continue; }
        LibFile *f = &s->lib[s->nlib++];
        f->path = strdup(path);
        if (!s->docs_loaded) harvest_docs(src);
        lib_fns(f, src);
        free(src);
    }
    s->docs_loaded = 1;
    for (int i = 0; i < s->nlib; i++)
        for (int k = 0; s->lib[i].lazy && k < s->lib[i].nfns; k++)
            if (lib_name_taken(s, i, s->lib[i].fns[k])) s->lib[i].lazy = 0;
    int lo = G->eval.nglobals, hi = lo;
    for (int i = 0; i < s->nlib; i++)
        for (int k = 0; s->lib[i].lazy && k < s->lib[i].nfns; k++) hi++;
    s->lazy_file = malloc(sizeof(int) * (size_t)(hi - lo + 1));
    G->eval.lazy_named = calloc((size_t)(hi - lo + 1), 1);
    if (!s->lazy_file || !G->eval.lazy_named) {        /* then every file runs at start-up */
        for (int i = 0; i < s->nlib; i++) s->lib[i].lazy = 0;
        return;
    }
    for (int i = 0; i < s->nlib; i++)
        for (int k = 0; s->lib[i].lazy && k < s->lib[i].nfns; k++)
            s->lazy_file[eval_global_index(s->lib[i].fns[k]) - lo] = i;
    G->eval.lazy_lo = lo;
    G->eval.lazy_hi = hi;
}

/* Runs a file of the library as a chunk of its own: at start-up (its
 * errors reported, and start-up goes on), or inside the chunk that named
 * it when lazy (its errors are that chunk's). */
static void lib_run(LibFile *f, int lazy)
{
    f->loaded = 1;
    size_t len;
    char *src = read_file(f->path, &len);
    if (!src) {
        if (lazy) err_raise("the standard library's %s cannot be read", f->path);
        return;
    }
    Chunk *c = parse_chunk(f->path, src, len, 0, NULL);
    free(src);
    if (!c) {
        if (lazy) err_raise("the standard library's %s did not load (above)", f->path);
        return;
    }
    if (lazy) eval_run_chunk(c);     /* takes c */
    else {
        eval_chunk(c);
        ast_chunk_release(c);
    }
}

static void lib_run_lazy(void *ud) { lib_run(ud, 1); }

/* The lazy files whose functions the chunk about to run names (G->eval's
 * lazy_load): run as the stdlib runs at start-up, on float64, recording
 * nothing, echoing nothing, outside any checkpointed loop; their names
 * keep no versions. */
static void lib_load_named(void)
{
    wg_Session *s = G->session;
    G->eval.lazy_pending = 0;
    for (int i = 0; i < G->eval.lazy_hi - G->eval.lazy_lo; i++) {
        if (!G->eval.lazy_named[i]) continue;
        G->eval.lazy_named[i] = 0;
        int file = s->lazy_file[i];
        LibFile *f = &s->lib[file];
        if (f->loaded) continue;
        RunMode saved = state_mode(), m = saved;
        m.ckpt_mode = 0;
        m.ckpt_env = NULL;
        m.recording = 0;
        m.backend = BK_F64;
        state_set_mode(&m);
        int echo = G->eval.echo;
        G->eval.echo = 0;
        int err = err_pcall(lib_run_lazy, f);
        state_set_mode(&saved);
        G->eval.echo = echo;
        for (int k = 0; k < G->eval.lazy_hi - G->eval.lazy_lo; k++)
            if (s->lazy_file[k] == file) version_log_free(&G->eval.globals[G->eval.lazy_lo + k].ver);
        if (err) err_raise("the standard library's %s did not load (above)", f->path);
    }
}

/* The standard library. At start-up the files that only define functions
 * wait until a chunk names one (lib_load_named: the course's checks are
 * most of the library, and most programs never call them), the others run
 * now, in name order. After :reset every file runs now: the chunk that
 * reset goes on, and its names were looked up before. */
static void load_prelude(void)
{
    wg_Session *s = G->session;
    int start = !s->lib;
    if (start) lib_scan();
    int echo = G->eval.echo;
    G->eval.echo = 0;
    int recording = G->tape.recording;
    for (int i = 0; i < G->eval.lazy_hi - G->eval.lazy_lo; i++) G->eval.lazy_named[i] = 0;
    G->eval.lazy_pending = 0;
    for (int i = 0; i < s->nlib; i++) {
        s->lib[i].loaded = 0;
        if (!start || !s->lib[i].lazy) lib_run(&s->lib[i], 0);
    }
    rec_restore(recording);
    define_args();
    G->eval.echo = echo;
    G->eval.prelude_globals = G->eval.nglobals;
    for (int i = 0; i < G->eval.nglobals; i++) version_log_free(&G->eval.globals[i].ver);   /* user versions start at 1 */
}


/* ---------------------------------------------------------------- API */

wg_Session *wg_open(const wg_Options *opt)
{
    wg_Session *s = calloc(1, sizeof *s);
    if (!s || !(s->state = state_open())) {
        free(s);
        io_err("wengert: out of memory\n");
        return NULL;
    }
    enter(s);
    G->session = s;
    if (opt) {
        s->script_args = (const char **)opt->args;
        s->nscript_args = opt->nargs;
    }
    int b = BK_F64;
    if (opt && opt->backend && (b = num_backend_lookup(opt->backend)) < 0) {
        io_err("wengert: unknown backend '%s' (see --help)\n", opt->backend);
        state_close(s->state);
        free(s);
        return NULL;
    }
    eval_init();
    G->eval.command = cmd_run;
    G->cmd.reset_hook = load_prelude;
    G->eval.lazy_load = lib_load_named;
    load_prelude();
    G->num.backend = G->num.start_backend = b;
    return s;
}

void wg_close(wg_Session *s)
{
    enter(s);
    wg_set_output(s, NULL, NULL, NULL);
    io_flush();
}

void wg_set_echo(wg_Session *s, int on) { s->echo = on; }
int  wg_quitting(wg_Session *s) { enter(s); return G->eval.quit; }
void wg_interrupt(wg_Session *s) { (void)s; err_interrupted = 1; }
void wg_set_color(int mode) { err_color_init(mode); }

void wg_reset(wg_Session *s)
{
    enter(s);
    cmd_run("reset");
}

static char *dup_or_null(const char *t) { return t ? strdup(t) : NULL; }

/* The text print shows for v. */
static char *value_text(Value v)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) return NULL;
    value_print(v, f);
    fclose(f);
    return buf;
}

typedef struct {
    const char *name, *src;
    size_t len;
    Chunk *chunk;
} ParseJob;

static void parse_protected(void *ud)
{
    ParseJob *p = ud;
    p->chunk = parse_chunk(p->name, p->src, p->len, 0, NULL);
}

wg_Status wg_run(wg_Session *s, const char *name, const char *src, size_t len, wg_Result *r)
{
    if (r) memset(r, 0, sizeof *r);
    enter(s);
    err_interrupted = 0;          /* a Ctrl-C before the run does not carry into it */
    Global *ans = eval_global_lookup("ans");
    int before = ans ? ans->ver.count : 0;
    wg_Status st = WG_ERROR;
    /* parsing can fail by an error too (out of memory, nesting too deep):
     * under protection, so a host is never taken down */
    ParseJob p = { name, src, len, NULL };
    Chunk *c = err_pcall(parse_protected, &p) ? NULL : p.chunk;
    if (c) {
        int echo = G->eval.echo;
        G->eval.echo = s->echo;
        int err = eval_chunk(c);
        G->eval.echo = echo;
        ast_chunk_release(c);
        if (!err) cmd_log_input(src, len);
        st = err ? WG_ERROR : WG_OK;
    }
    if (r) {
        r->status = st;
        ans = eval_global_lookup("ans");
        if (st == WG_OK && ans && ans->ver.count != before && ans->v.t != V_UNDEF) r->value = value_text(ans->v);
        if (st == WG_ERROR) {
            const ErrInfo *e = err_last();
            r->message = dup_or_null(e->message);
            r->file = dup_or_null(e->file);
            r->line = e->line;
            r->col = e->col;
        }
    }
    io_flush();
    return st;
}

void wg_result_free(wg_Result *r)
{
    free(r->value);
    free(r->message);
    free(r->file);
    memset(r, 0, sizeof *r);
}

wg_Status wg_run_file(wg_Session *s, const char *path)
{
    size_t len;
    struct stat st;
    if (strcmp(path, "-") && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        io_err("wengert: cannot open '%s': %s\n", path, strerror(EISDIR));
        return WG_ERROR;
    }
    char *src = read_file(path, &len);
    if (!src) {
        io_err("wengert: cannot open '%s': %s\n", path, strerror(errno));
        return WG_ERROR;
    }
    wg_Status status = wg_run(s, strcmp(path, "-") ? path : "<stdin>", src, len, NULL);
    free(src);
    return status;
}

typedef struct {
    const char *src;
    size_t len;
    Chunk *chunk;
    int incomplete;
} Attempt;

static void try_parse(void *ud)
{
    Attempt *a = ud;
    a->chunk = parse_chunk("<repl>", a->src, a->len, 1, &a->incomplete);
}

/* A complete `if ... { }` whose next line may still be its `else`. */
static int ends_with_open_if(const Chunk *c)
{
    Node *root = c->root;
    if (root->n == 0) return 0;
    Node *last = root->list[root->n - 1];
    while (last->kind == N_IF && last->c && last->c->kind == N_IF) last = last->c;
    return last->kind == N_IF && !last->c;
}

wg_Status wg_check(wg_Session *s, const char *src, size_t len, int *open_if)
{
    enter(s);
    Attempt a = { src, len, NULL, 0 };
    if (open_if) *open_if = 0;
    if (err_pcall(try_parse, &a)) return WG_ERROR;
    if (!a.chunk) return a.incomplete ? WG_INCOMPLETE : WG_ERROR;
    if (open_if) *open_if = ends_with_open_if(a.chunk);
    ast_chunk_release(a.chunk);
    return WG_OK;
}

/* ------------------------------------------------------------- output */

/* The writers receive what the session prints (io.h). */
void wg_set_output(wg_Session *s, wg_Writer out, wg_Writer err, void *ud)
{
    enter(s);
    io_flush();
    fflush(stderr);
    G->io.writer[IO_OUT] = out;
    G->io.writer[IO_ERR] = err;
    G->io.ud = ud;
}

/* The interpreter's hook (eval.h) has no user data: this adds it, after
 * flushing the output so text and pictures arrive in the order made. */
static void display(const char *mime, const char *data, size_t len, const char *alt)
{
    io_flush();
    G->session->display_fn(G->session->display_ud, mime, data, len, alt);
}

void wg_set_display(wg_Session *s, wg_Display fn, void *ud)
{
    enter(s);
    s->display_fn = fn;
    s->display_ud = ud;
    G->eval.display = fn ? display : NULL;
}

/* ------------------------------------------------------------ names */

const char *wg_name(wg_Session *s, wg_NameKind kind, int i)
{
    enter(s);
    switch (kind) {
    case WG_NAMES_COMMANDS: return cmd_name(i);
    case WG_NAMES_BACKENDS: return i < BK_COUNT ? num_formats[i].name : NULL;
    case WG_NAMES_HELP: return help_word(i);
    case WG_NAMES_KEYWORDS: return help_keyword(i);
    case WG_NAMES_VARIABLES:
        for (int g = 0; g < G->eval.nglobals; g++)
            if (eval_global_defined(g) && i-- == 0) return G->eval.globals[g].name;
        return NULL;
    case WG_NAMES_DATA:
        for (int g = 0; g < G->eval.nglobals; g++)
            if ((IS_NUMBER(G->eval.globals[g].v) || is_seq(G->eval.globals[g].v)) && i-- == 0) return G->eval.globals[g].name;
        return NULL;
    }
    return NULL;
}
