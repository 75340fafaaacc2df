/* main.c: command line, start-up, and the standard library loader.
 * Everything runs on a thread with a large stack, so deep (but bounded)
 * recursion in wengert code is an error message, never a crash. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "eval.h"
#include "parse.h"
#include "cmd.h"
#include "error.h"
#include "num.h"
#include "repl.h"
#include "tape.h"

#ifndef WG_PREFIX
#define WG_PREFIX "/usr/local"
#endif
#define WG_VERSION "0.1.0"



static const char *usage =
    "usage: wengert [options] [FILE [ARG...]]\n"
    "  (no FILE)          the REPL on a terminal; a script from standard input otherwise\n"
    "  FILE [ARG...]      run a script (- reads it from standard input); the ARGs reach\n"
    "                     it as args, an array of strings; exit status 1 on any error\n"
    "  -e CODE            run CODE (may be repeated: in order, before FILE)\n"
    "  -i                 then the REPL, in the same session\n"
    "  --                 the rest are ARGs (for -e code without a FILE)\n"
    "  --backend NAME     float64 (default), float32, float16, bfloat16, posit8, posit16, posit32\n"
    "  --color=WHEN       auto (default: only on a terminal), always, never\n"
    "  --help, --version\n"
    "environment: WENGERT_STDLIB=DIR loads the standard library from DIR;\n"
    "  NO_COLOR or TERM=dumb turn colour off\n"
    "more: man wengert (after make install), :help in the REPL\n";

char *read_file(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) return NULL;
    size_t cap = 8192, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    if (f != stdin) fclose(f);
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

static const char *stdlib_dir(void)
{
    static char dir[PATH_MAX + 64];
    const char *env = getenv("WENGERT_STDLIB");
    if (env && *env) return env;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        snprintf(dir, sizeof dir, "%s/stdlib", exe);
        if (access(dir, R_OK) == 0) return dir;
        snprintf(dir, sizeof dir, "%s/../share/wengert/stdlib", exe);   /* installed */
        if (access(dir, R_OK) == 0) return dir;
    }
    snprintf(dir, sizeof dir, "%s/share/wengert/stdlib", WG_PREFIX);
    return dir;
}

static int docs_loaded;

typedef struct {
    int argc;
    char **argv;
    int status;
} Main;

/* The script's arguments, given to it as `args`, an array of strings. */
static const char **script_args;
static int nscript_args;

static void define_args(void)
{
    Value a = arr_new(nscript_args);
    for (int i = 0; i < nscript_args; i++)
        AS_ARR(a)->v[i] = str_new(script_args[i], (int)strlen(script_args[i]));
    Global *g = &globals[global_index("args")];
    v_release(g->v);
    g->v = a;
}

/* Loads every .wg file of the stdlib folder, in name order. */
static void load_prelude(void)
{
    const char *dir = stdlib_dir();
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "wengert: warning: no standard library at %s (set WENGERT_STDLIB)\n", dir);
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
    int echo = wg_echo;
    wg_echo = 0;
    int recording = tape.recording;
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t len;
        char *src = read_file(path, &len);
        if (src) {
            if (!docs_loaded) harvest_docs(src);
            Chunk *c = parse_chunk(path, src, len, 0, NULL);
            if (c) {
                eval_chunk(c);
                chunk_release(c);
            }
            free(src);
        }
        free(names[i]);
    }
    tape.recording = recording;
    define_args();
    docs_loaded = 1;
    wg_echo = echo;
    prelude_globals = nglobals;
    for (int i = 0; i < nglobals; i++) verlog_free(&globals[i].ver);   /* user versions start at 1 */
}


static int run_source(const char *name, const char *src, size_t len)
{
    Chunk *c = parse_chunk(name, src, len, 0, NULL);
    if (!c) return 1;
    int err = eval_chunk(c);
    chunk_release(c);
    if (!err) cmd_log_input(src, len);
    return err;
}

static int start_backend(const char *name)
{
    int b = backend_lookup(name);
    if (b < 0) {
        fprintf(stderr, "wengert: unknown backend '%s' (see --help)\n", name);
        return 0;
    }
    num_backend = wg_start_backend = b;
    return 1;
}

/* What the command line asked for. */
typedef struct {
    const char **codes;      /* -e CODE, in order */
    int ncodes;
    const char *file;        /* FILE, "-" for standard input, or NULL */
    const char *backend;
    int interactive;         /* -i */
    int color;               /* WG_COLOR_* */
} Options;

static int bad_usage(Main *m, const char *fmt, const char *arg)
{
    fprintf(stderr, "wengert: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage);
    m->status = 2;
    return 0;
}

/* Reads the options; 0 when main should stop (help, version, a mistake).
 * FILE ends the options: what follows it is the script's ARGs, as after --. */
static int parse_options(Main *m, Options *o)
{
    int i = 1;
    for (; i < m->argc; i++) {
        const char *a = m->argv[i];
        if (!strcmp(a, "--")) { i++; break; }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(usage, stdout); m->status = 0; return 0; }
        if (!strcmp(a, "--version")) { printf("wengert %s\n", WG_VERSION); m->status = 0; return 0; }
        if (!strcmp(a, "-e")) {
            if (i + 1 == m->argc) return bad_usage(m, "-e needs code to run", NULL);
            o->codes[o->ncodes++] = m->argv[++i];
        } else if (!strcmp(a, "-i")) o->interactive = 1;
        else if (!strcmp(a, "--backend")) {
            if (i + 1 == m->argc) return bad_usage(m, "--backend needs a name", NULL);
            o->backend = m->argv[++i];
        } else if (!strncmp(a, "--backend=", 10)) o->backend = a + 10;
        else if (!strcmp(a, "--color") || !strcmp(a, "--colour")) o->color = WG_COLOR_ALWAYS;
        else if (!strncmp(a, "--color=", 8) || !strncmp(a, "--colour=", 9)) {
            const char *w = strchr(a, '=') + 1;
            if (!strcmp(w, "auto")) o->color = WG_COLOR_AUTO;
            else if (!strcmp(w, "always")) o->color = WG_COLOR_ALWAYS;
            else if (!strcmp(w, "never")) o->color = WG_COLOR_NEVER;
            else return bad_usage(m, "--color takes auto, always or never, not '%s'", w);
        } else if (a[0] == '-' && a[1]) return bad_usage(m, "unknown option '%s'", a);
        else { o->file = a; i++; break; }
    }
    script_args = (const char **)m->argv + i;
    nscript_args = m->argc - i;
    return 1;
}

static int run_file(const char *file)
{
    size_t len;
    struct stat st;
    if (strcmp(file, "-") && stat(file, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "wengert: cannot open '%s': %s\n", file, strerror(EISDIR));
        return 1;
    }
    char *src = read_file(file, &len);
    if (!src) {
        fprintf(stderr, "wengert: cannot open '%s': %s\n", file, strerror(errno));
        return 1;
    }
    int status = run_source(strcmp(file, "-") ? file : "<stdin>", src, len);
    free(src);
    return status;
}

static void *main_thread(void *ud)
{
    Main *m = ud;
    sigset_t sigint;
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    pthread_sigmask(SIG_UNBLOCK, &sigint, NULL);   /* Ctrl-C belongs to this thread */
    Options o = { .codes = calloc((size_t)m->argc, sizeof(char *)), .color = WG_COLOR_AUTO };
    if (!parse_options(m, &o)) { free(o.codes); return NULL; }
    wg_color_init(o.color);
    eval_init();
    wg_reset_hook = load_prelude;
    load_prelude();
    if (o.backend && !start_backend(o.backend)) { m->status = 2; free(o.codes); return NULL; }
    for (int i = 0; i < o.ncodes && !m->status && !wg_quit; i++)
        m->status = run_source("<-e>", o.codes[i], strlen(o.codes[i]));
    if (o.file && !m->status && !wg_quit) m->status = run_file(o.file);
    free(o.codes);
    if (o.interactive && !wg_quit) {
        fflush(stdout);
        repl_run();
    } else if (!o.ncodes && !o.file) {
        if (isatty(0)) m->status = repl_run();
        else m->status = run_file("-");
    }
    fflush(stdout);
    return NULL;
}

int main(int argc, char **argv)
{
    Main m = { argc, argv, 0 };
    /* Big arrays and adjoint buffers come and go; keeping freed memory in
     * the heap instead of returning it to the kernel saves refaulting it. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    pthread_attr_t attr;
    pthread_t th;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)512 << 20);
    sigset_t sigint;
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigint, NULL);
    if (pthread_create(&th, &attr, main_thread, &m) != 0) main_thread(&m);
    else pthread_join(th, NULL);
    fflush(stdout);
    return m.status;
}
