/* main.c: the command line. It drives the interpreter through the
 * embedding API alone (wengert.h), as lua.c uses only lua.h. Everything
 * runs on a thread with a large stack, so deep (but bounded) recursion in
 * wengert code is an error message, never a crash. */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wengert.h"
#include "repl.h"
#include "kernel.h"
#include "state.h"



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
    "  --kernel           JSON lines on stdin/stdout, for the Jupyter kernel (src/kernel.c)\n"
    "  --help, --version\n"
    "environment: WENGERT_STDLIB=DIR loads the standard library from DIR;\n"
    "  NO_COLOR or TERM=dumb turn colour off\n"
    "more: man wengert (after make install), :help in the REPL\n";

typedef struct {
    int argc;
    char **argv;
    int status;
} Main;

/* What the command line asked for. */
typedef struct {
    const char **codes;      /* -e CODE, in order */
    int ncodes;
    const char *file;        /* FILE, "-" for standard input, or NULL */
    const char *backend;
    int interactive;         /* -i */
    const char *const *args; /* the script's ARGs */
    int nargs;
    int color;               /* 0 auto, 1 always, 2 never (wg_set_color) */
    int kernel;              /* --kernel */
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
        else if (!strcmp(a, "--kernel")) o->kernel = 1;
        else if (!strcmp(a, "--backend")) {
            if (i + 1 == m->argc) return bad_usage(m, "--backend needs a name", NULL);
            o->backend = m->argv[++i];
        } else if (!strncmp(a, "--backend=", 10)) o->backend = a + 10;
        else if (!strcmp(a, "--color") || !strcmp(a, "--colour")) o->color = 1;
        else if (!strncmp(a, "--color=", 8) || !strncmp(a, "--colour=", 9)) {
            const char *w = strchr(a, '=') + 1;
            if (!strcmp(w, "auto")) o->color = 0;
            else if (!strcmp(w, "always")) o->color = 1;
            else if (!strcmp(w, "never")) o->color = 2;
            else return bad_usage(m, "--color takes auto, always or never, not '%s'", w);
        } else if (a[0] == '-' && a[1]) return bad_usage(m, "unknown option '%s'", a);
        else { o->file = a; i++; break; }
    }
    o->args = (const char *const *)m->argv + i;
    o->nargs = m->argc - i;
    return 1;
}

static void *main_thread(void *ud)
{
    Main *m = ud;
    sigset_t sigint;
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    pthread_sigmask(SIG_UNBLOCK, &sigint, NULL);   /* Ctrl-C belongs to this thread */
    Options o = { .codes = calloc((size_t)m->argc, sizeof(char *)) };
    if (!parse_options(m, &o)) { free(o.codes); return NULL; }
    wg_set_color(o.color);
    wg_Options opt = { o.backend, o.args, o.nargs };
    wg_Session *s = wg_open(&opt);
    if (!s) { m->status = 2; free(o.codes); return NULL; }
    for (int i = 0; i < o.ncodes && !m->status && !wg_quitting(s); i++)
        m->status = wg_run(s, "<-e>", o.codes[i], strlen(o.codes[i]), NULL) != WG_OK;
    if (o.file && !m->status && !wg_quitting(s)) m->status = wg_run_file(s, o.file) != WG_OK;
    free(o.codes);
    if (o.kernel && !m->status) m->status = kernel_run(s);
    else if (o.interactive && !wg_quitting(s)) {
        fflush(stdout);
        repl_run(s);
    } else if (!o.ncodes && !o.file) {
        if (isatty(0)) m->status = repl_run(s);
        else m->status = wg_run_file(s, "-") != WG_OK;
    }
    wg_close(s);
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
