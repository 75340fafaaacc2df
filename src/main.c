/* main.c: command line, start-up, and the standard library loader.
 * Everything runs on a thread with a large stack, so deep (but bounded)
 * recursion in wengert code is an error message, never a crash. */
#include <dirent.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
    "usage: wengert [options] [FILE.wg]\n"
    "  (no FILE)        the REPL on a terminal; a script from standard input otherwise\n"
    "  FILE.wg          run a script; exit status 0 on success, 1 on any error\n"
    "  -e CODE          run CODE as a script\n"
    "  --backend NAME   float64 (default), float32, float16, bfloat16, posit8, posit16, posit32\n"
    "  --help, --version\n"
    "environment: WENGERT_STDLIB=DIR loads the standard library from DIR\n";

/* The whole file (or standard input for "-"), NUL-terminated so that C
 * string functions may scan it; NULL when it cannot be opened or read. */
char *read_file(const char *path, size_t *len)
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
    docs_loaded = 1;
    wg_echo = echo;
    prelude_globals = nglobals;
    for (int i = 0; i < nglobals; i++) verlog_free(&globals[i].ver);   /* user versions start at 1 */
}

typedef struct {
    int argc;
    char **argv;
    int status;
} Main;

static int run_source(const char *name, const char *src, size_t len)
{
    Chunk *c = parse_chunk(name, src, len, 0, NULL);
    if (!c) return 1;
    int err = eval_chunk(c);
    chunk_release(c);
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

static void *main_thread(void *ud)
{
    Main *m = ud;
    sigset_t sigint;
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    pthread_sigmask(SIG_UNBLOCK, &sigint, NULL);   /* Ctrl-C belongs to this thread */
    const char *code = NULL, *file = NULL, *backend = NULL;
    for (int i = 1; i < m->argc; i++) {
        const char *a = m->argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(usage, stdout); m->status = 0; return NULL; }
        if (!strcmp(a, "--version")) { printf("wengert %s\n", WG_VERSION); m->status = 0; return NULL; }
        if (!strcmp(a, "-e") && i + 1 == m->argc) { fprintf(stderr, "wengert: -e needs code to run\n%s", usage); m->status = 2; return NULL; }
        if (!strcmp(a, "-e")) code = m->argv[++i];
        else if (!strcmp(a, "--backend") && i + 1 == m->argc) { fprintf(stderr, "wengert: --backend needs a name\n%s", usage); m->status = 2; return NULL; }
        else if (!strcmp(a, "--backend")) backend = m->argv[++i];
        else if (!strncmp(a, "--backend=", 10)) backend = a + 10;
        else if (a[0] == '-' && a[1]) { fprintf(stderr, "wengert: unknown option '%s'\n%s", a, usage); m->status = 2; return NULL; }
        else if (!file) file = a;
        else { fprintf(stderr, "wengert: one script at a time\n%s", usage); m->status = 2; return NULL; }
    }
    eval_init();
    wg_reset_hook = load_prelude;
    load_prelude();
    if (backend && !start_backend(backend)) { m->status = 2; return NULL; }
    if (code) {
        m->status = run_source("<-e>", code, strlen(code));
    } else if (file) {
        size_t len;
        char *src = read_file(file, &len);
        if (!src) {
            fprintf(stderr, "wengert: cannot open '%s'\n", file);
            m->status = 1;
            return NULL;
        }
        m->status = run_source(file, src, len);
        free(src);
    } else if (isatty(0)) {
        m->status = repl_run();
    } else {
        size_t len;
        char *src = read_file("-", &len);
        m->status = run_source("<stdin>", src ? src : "", src ? len : 0);
        free(src);
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
