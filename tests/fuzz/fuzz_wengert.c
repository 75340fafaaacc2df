/* fuzz_wengert.c: a libFuzzer harness over the whole interpreter. Each input
 * is a script: parsed, resolved and run in a fresh session (the standard
 * library loaded as at start-up), within budgets that keep every run short
 * and small: a step budget (loop steps and calls, then "interrupted"), a cap
 * on any one allocation, and a tape limit. Inputs that could touch files
 * (:load, :save, :tape dot FILE) or raise the limits are skipped. `make fuzz`. */
#include <dirent.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval.h"
#include "parse.h"
#include "cmd.h"
#include "error.h"
#include "num.h"
#include "tape.h"
#include "state.h"

#ifndef FUZZ_STDLIB
#define FUZZ_STDLIB "stdlib"
#endif

#define STEP_BUDGET 20000
#define ALLOC_CAP   ((size_t)256 << 10)
#define TAPE_LIMIT  ((size_t)16 << 20)

static Chunk *prelude[64];
static int nprelude;
static int base_globals;     /* names known after the standard library parsed */

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    *len = buf ? fread(buf, 1, (size_t)n, f) : 0;
    if (buf) buf[*len] = 0;
    fclose(f);
    return buf;
}

/* Parses the standard library once; every run evaluates the chunks again. */
static void parse_prelude(void)
{
    const char *dir = getenv("WENGERT_STDLIB");
    if (!dir || !*dir) dir = FUZZ_STDLIB;
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "fuzz: no standard library at %s\n", dir);
        exit(1);
    }
    char *names[64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64) {
        size_t len = strlen(e->d_name);
        if (len > 3 && !strcmp(e->d_name + len - 3, ".wg")) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_names);
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t len;
        char *src = slurp(path, &len);
        Chunk *c = src ? parse_chunk(path, src, len, 0, NULL) : NULL;
        if (c) prelude[nprelude++] = c;
        free(src);
        free(names[i]);
    }
}

static void run_prelude(void)
{
    int recording = G->tape.recording;
    for (int i = 0; i < nprelude; i++) eval_chunk(prelude[i]);   /* the chunks stay ours */
    G->tape.recording = recording;
    G->eval.prelude_globals = G->eval.nglobals;
    for (int i = 0; i < G->eval.nglobals; i++) version_log_free(&G->eval.globals[i].ver);
    tape_set_limit(TAPE_LIMIT);   /* again after a :reset in the input */
}

/* A fresh session also forgets the names earlier inputs made global, so
 * that every input runs in the same state, whatever ran before it. */
static void fresh_session(void)
{
    eval_reset();
    eval_global_forget(base_globals);
    run_prelude();
    G->eval.quit = 0;
    err_interrupted = 0;
}

static int touches_outside(const char *s, size_t n)
{
    static const char *banned[] = { "load", "save", "limit", ".svg", ".png", ".dot", ".gv",
                                    "dot ", "dot\t" };   /* `:tape dot FILE` writes FILE */
    for (size_t i = 0; i < sizeof banned / sizeof banned[0]; i++)
        if (memmem(s, n, banned[i], strlen(banned[i]))) return 1;
    return 0;
}

typedef struct {
    const unsigned char *data;
    size_t size;
} Input;

typedef struct {
    const unsigned char *data;
    size_t size;
    Chunk *chunk;
} Parsed;

static void parse_input(void *ud)
{
    Parsed *p = ud;
    p->chunk = parse_chunk("<fuzz>", (const char *)p->data, p->size, 0, NULL);
}

static void *run_input(void *ud)
{
    const Input *in = ud;
    const unsigned char *data = in->data;
    size_t size = in->size;
    fresh_session();
    err_alloc_cap = ALLOC_CAP;
    err_step_budget = STEP_BUDGET;
    Parsed p = { data, size, NULL };
    err_pcall(parse_input, &p);      /* out of memory while parsing is an error too */
    Chunk *c = p.chunk;
    if (c) {
        eval_chunk(c);
        ast_chunk_release(c);
    }
    err_step_budget = 0;
    err_alloc_cap = 0;
    fflush(stdout);
    return NULL;
}

/* Inputs run on one long-lived thread with a big stack, as wengert itself
 * runs: deep (bounded) recursion is an error message there, never a crash. */
static Input current;
static sem_t go, done;

static void *worker(void *ud)
{
    (void)ud;
    for (;;) {
        sem_wait(&go);
        run_input(&current);
        sem_post(&done);
    }
    return NULL;
}

static void start_worker(void)
{
    pthread_attr_t attr;
    pthread_t th;
    sem_init(&go, 0, 0);
    sem_init(&done, 0, 0);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)512 << 20);
    if (pthread_create(&th, &attr, worker, NULL) != 0) abort();
    pthread_attr_destroy(&attr);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    state_enter(state_open());
    eval_init();
    G->eval.command = cmd_run;      /* as wg_open hands it (wengert.h) */
    parse_prelude();
    base_globals = G->eval.nglobals;
    G->cmd.reset_hook = run_prelude;
    G->eval.echo = 0;
    start_worker();
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size > 1 << 16 || touches_outside((const char *)data, size)) return -1;
    current = (Input){ data, size };
    sem_post(&go);
    while (sem_wait(&done) != 0) {}
    return 0;
}
