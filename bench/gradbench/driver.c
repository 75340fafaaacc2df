/* driver.c: wengert as a GradBench tool (issue 16). GradBench's harness
 * sends one JSON message a line on stdin and reads one answer a line on
 * stdout (its CONTRIBUTING.md, "Protocol"). This driver links the
 * interpreter and does only the plumbing:
 *   define   runs EVALDIR/<module>.wg, which defines one wengert function
 *            per GradBench function (no arguments: it reads its inputs);
 *   evaluate binds the input's fields as unrecorded globals (a nested array
 *            becomes a flat row-major array NAME and its shape NAME_dims),
 *            calls the function min_runs times and until min_seconds have
 *            passed, timing each call, then shapes the result as a `#>`
 *            line of the module says (see README.md, "Output layouts").
 * Stdout carries protocol lines only; the interpreter's output (print,
 * errors, kink notes) goes to stderr, and an error's message is also the answer's
 * `error`. JSON is read and written with Debian's jansson. */
#include <jansson.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>
#include "wengert.h"
#include "eval.h"
#include "builtins.h"
#include "parse.h"
#include "num.h"
#include "tape.h"
#include "versions.h"
#include "valuegc.h"
#include "state.h"

#define TOOL_VERSION "0.1.0"

static const char *evaldir;     /* where the <module>.wg programs are */
static const char *stdlibdir;
static char *layouts;           /* the `#>` lines of the defined modules */
static Value kept;              /* what __wg_keep saw last */
static int real_stderr = -1;
static FILE *proto;             /* the protocol's stdout; fd 1 is stderr */

/* ---------------------------------------------------------- running code */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = 0;
    fclose(f);
    return buf;
}

/* Parses and runs src under the interpreter's protection; 0 on success. */
static int run_code(const char *name, const char *src, size_t len)
{
    Chunk *c = parse_chunk(name, src, len, 0, NULL);
    if (!c) return 1;
    int err = eval_chunk(c);
    ast_chunk_release(c);
    return err;
}


/* __wg_keep(v): the timed chunk hands the function's result to C. */
static Value bi_keep(int argc, Value *argv)
{
    (void)argc;
    v_release(kept);
    kept = argv[0];
    v_retain(kept);
    return nil_val();
}
static const Builtin keep_builtin = { "__wg_keep", 1, 1, bi_keep, "__wg_keep(v): (GradBench driver) keep v" };

/* The cycle collector frees what its roots do not reach, and kept lives
 * here, outside the interpreter: a collection between the run and the
 * answer (the `:tape clear` after it, or a later run when min_runs > 1)
 * would free the result (ht's 28 jvp passes made one: the answer read freed
 * memory). So the session's roots and kept. */
static void keep_roots(void (*visit)(Value))
{
    eval_visit_roots(visit);
    visit(kept);
}

/* While wengert code runs, fd 2 goes to a file, so that an error's message
 * can be sent back; afterwards the file is copied to the real stderr. */
static FILE *capture;

static void capture_begin(void)
{
    fflush(stderr);
    capture = tmpfile();
    if (capture) dup2(fileno(capture), 2);
}

/* Restores stderr; returns what was written (caller frees). */
static char *capture_end(void)
{
    fflush(stderr);
    if (!capture) return strdup("");
    dup2(real_stderr, 2);
    long n = ftell(capture);
    if (n < 0) n = 0;
    char *buf = calloc((size_t)n + 1, 1);
    rewind(capture);
    size_t got = fread(buf, 1, (size_t)n, capture);
    buf[got] = 0;
    fclose(capture);
    capture = NULL;
    fputs(buf, stderr);
    return buf;
}

/* ---------------------------------------------------------- input */

static void set_global(const char *name, Value v)
{
    Global *g = eval_global_lookup(name);
    if (!g) { v_release(v); return; }   /* the program never names it */
    v_release(g->v);
    g->v = v;
}

/* Shape of a rectangular nested JSON array: dims[0..*nd), element count. */
static size_t json_shape(json_t *a, int *dims, int *nd)
{
    size_t count = 1;
    *nd = 0;
    while (json_is_array(a) && *nd < 8) {
        dims[(*nd)++] = (int)json_array_size(a);
        count *= json_array_size(a);
        a = json_array_size(a) ? json_array_get(a, 0) : NULL;
    }
    return count;
}

static void flatten(json_t *a, Value *out, size_t *k)
{
    if (json_is_array(a)) {
        for (size_t i = 0; i < json_array_size(a); i++) flatten(json_array_get(a, i), out, k);
        return;
    }
    double x = json_is_number(a) ? json_number_value(a) : json_is_true(a) ? 1 : 0;
    out[(*k)++] = num_val(x);   /* strings (ht's bone_names) only count */
}

/* Binds one input field: numbers, booleans and strings as themselves,
 * arrays flat with NAME_dims, objects field by field as NAME_FIELD. */
static void bind(const char *name, json_t *j)
{
    if (json_is_object(j)) {
        const char *key;
        json_t *val;
        json_object_foreach(j, key, val) {
            char sub[512];
            if (*name) snprintf(sub, sizeof sub, "%s_%s", name, key);
            else snprintf(sub, sizeof sub, "%s", key);
            bind(sub, val);
        }
    } else if (json_is_array(j)) {
        int dims[8], nd;
        size_t count = json_shape(j, dims, &nd), k = 0;
        Value a = value_arr_new((int)count);
        flatten(j, AS_ARR(a)->v, &k);
        if (k != count) fprintf(stderr, "wengert-gradbench: '%s' is not rectangular\n", name);
        AS_ARR(a)->known = KNOWN_CONSTS;     /* numbers that record nothing (reclaiming skips them) */
        set_global(name, a);
        Value dv = value_arr_new(nd);
        for (int i = 0; i < nd; i++) AS_ARR(dv)->v[i] = num_val(dims[i]);
        AS_ARR(dv)->known = KNOWN_CONSTS;
        char dn[512];
        snprintf(dn, sizeof dn, "%s_dims", name);
        set_global(dn, dv);
    } else if (json_is_number(j)) {
        set_global(name, num_val(json_number_value(j)));
    } else if (json_is_boolean(j)) {
        set_global(name, bool_val(json_is_true(j)));
    } else if (json_is_string(j)) {
        set_global(name, value_str_new(json_string_value(j), (int)json_string_length(j)));
    }
}

/* ---------------------------------------------------------- output */

/* A layout says how the flat result becomes JSON:
 *   #            one number            i   one number, written as an integer
 *   [D]L         a list of D items L    {k:L,...}  an object
 * D is a number, an input field's value (k), one dimension of an input
 * array (mu.1), a sum of those (theta.0+us.1), or * (as many as the rest
 * of the result holds). */
typedef struct {
    const char *p;
    const double *v;
    size_t n, k;
    json_t *input;
    const char *err;
} Lay;

/* One term of a dimension: a number, an input field's value (k), or one
 * dimension of an input array (mu.1; 0 when the array is empty). */
static long lay_term(Lay *L, const char **pp)
{
    const char *p = *pp;
    if (*p >= '0' && *p <= '9') return strtol(p, (char **)pp, 10);
    char name[128];
    int i = 0;
    while ((p[i] == '_' || (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z')) && i < 127) { name[i] = p[i]; i++; }
    name[i] = 0;
    p += i;
    json_t *f = json_is_object(L->input) ? json_object_get(L->input, name) : NULL;
    if (*p == '.') {
        int d = (int)strtol(p + 1, (char **)&p, 10);
        while (f && d-- > 0) f = json_array_size(f) ? json_array_get(f, 0) : NULL;
        *pp = p;
        return json_is_array(f) ? (long)json_array_size(f) : 0;
    }
    *pp = p;
    return f ? (long)json_number_value(f) : 0;
}

/* A dimension: '*' (what the rest of the result holds, in items of
 * `inner` scalars) or terms added with '+' (ht: theta.0+us.1). */
static long lay_dim(Lay *L, const char **pp, size_t inner)
{
    if (**pp == '*') {
        (*pp)++;
        return inner ? (long)((L->n - L->k) / inner) : 0;
    }
    long d = lay_term(L, pp);
    while (**pp == '+') {
        (*pp)++;
        d += lay_term(L, pp);
    }
    return d;
}

/* Scalars one item of the layout at p takes (a '*' inside counts 1). */
static size_t lay_count(Lay *L, const char *p, const char **end)
{
    if (*p == '#' || *p == 'i') { *end = p + 1; return 1; }
    if (*p == '[') {
        p++;
        long d = *p == '*' ? 1 : lay_dim(L, &p, 0);
        while (*p && *p != ']') p++;
        size_t inner = lay_count(L, *p ? p + 1 : p, end);
        return (size_t)(d > 0 ? d : 0) * inner;
    }
    if (*p == '{') {
        size_t total = 0;
        p++;
        while (*p && *p != '}') {
            while (*p && *p != ':') p++;
            if (!*p) break;
            total += lay_count(L, p + 1, &p);
            if (*p == ',') p++;
        }
        *end = *p ? p + 1 : p;
        return total;
    }
    *end = p;
    return 0;
}

static json_t *lay_build(Lay *L)
{
    const char *p = L->p;
    if (*p == '#' || *p == 'i') {
        L->p = p + 1;
        if (L->k >= L->n) { L->err = "the result is shorter than its layout"; return json_null(); }
        double x = L->v[L->k++];
        if (*p == 'i') return json_integer((json_int_t)x);
        json_t *r = json_real(x);
        if (!r) { L->err = "the result holds nan or inf, which JSON cannot carry"; return json_null(); }
        return r;
    }
    if (*p == '[') {
        const char *q = p + 1, *close = strchr(q, ']'), *end;
        if (!close) { L->err = "bad layout"; return json_null(); }
        size_t inner = lay_count(L, close + 1, &end);
        long d = lay_dim(L, &q, inner);
        json_t *arr = json_array();
        L->p = close + 1;
        for (long i = 0; i < d && !L->err; i++) {
            L->p = close + 1;
            json_array_append_new(arr, lay_build(L));
        }
        if (d <= 0) lay_count(L, close + 1, &L->p);
        return arr;
    }
    if (*p == '{') {
        json_t *obj = json_object();
        p++;
        while (*p && *p != '}' && !L->err) {
            const char *colon = strchr(p, ':');
            if (!colon) { L->err = "bad layout"; break; }
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(colon - p), p);
            L->p = colon + 1;
            json_object_set_new(obj, key, lay_build(L));
            p = L->p;
            if (*p == ',') p++;
        }
        L->p = *p ? p + 1 : p;
        return obj;
    }
    L->err = "bad layout";
    return json_null();
}

/* The layout of module.function from its `#> function LAYOUT` line. */
static const char *find_layout(const char *module, const char *function, char *buf, size_t cap)
{
    char head[256];
    snprintf(head, sizeof head, "%s #> %s ", module, function);
    const char *p = layouts ? strstr(layouts, head) : NULL;
    if (!p) return NULL;
    p += strlen(head);
    size_t n = strcspn(p, " \n");
    snprintf(buf, cap, "%.*s", (int)n, p);
    return buf;
}

/* The function's result as JSON: a number as a number, an array flat,
 * unless the module gives a layout. NULL with *err set on failure. */
static json_t *to_json(Value r, const char *layout, json_t *input, const char **err)
{
    size_t n = 0;
    double *v;
    if (r.t == V_NUM || r.t == V_DUAL) {
        v = malloc(sizeof *v);
        v[n++] = v_primal(r);
        if (!layout) layout = "#";
    } else if (is_seq(r)) {
        int len = seq_len(r);
        v = malloc(sizeof *v * (size_t)(len ? len : 1));
        for (int i = 0; i < len; i++) v[n++] = v_primal(*seq_at(r, i));
        if (!layout) layout = "[*]#";
    } else {
        *err = "the function's result is neither a number nor an array";
        return NULL;
    }
    Lay L = { layout, v, n, 0, input, NULL };
    json_t *j = lay_build(&L);
    if (!L.err && L.k != n) L.err = "the result is longer than its layout";
    free(v);
    if (L.err) { json_decref(j); *err = L.err; return NULL; }
    return j;
}

/* ---------------------------------------------------------- messages */

static void reply(json_t *r)
{
    char *s = json_dumps(r, JSON_COMPACT);
    fputs(s, proto);
    fputc('\n', proto);
    fflush(proto);
    free(s);
    json_decref(r);
}

static json_t *fail(json_t *r, const char *msg)
{
    json_object_set_new(r, "success", json_false());
    json_object_set_new(r, "error", json_string(msg));
    return r;
}

static json_t *on_define(json_t *msg, json_t *r)
{
    const char *module = json_string_value(json_object_get(msg, "module"));
    char path[PATH_MAX + 300];
    size_t len;
    if (!module || strchr(module, '/')) return fail(r, "no module named");
    snprintf(path, sizeof path, "%s/%s.wg", evaldir, module);
    char *src = slurp(path, &len);
    if (!src) {
        char e[512];
        snprintf(e, sizeof e, "wengert has no program for the eval '%s' (not implemented)", module);
        return fail(r, e);
    }
    capture_begin();
    int err = run_code(path, src, len);
    char *out = capture_end();
    if (err) { fail(r, out); free(out); free(src); return r; }
    free(out);
    /* keep its `#> function LAYOUT` lines, prefixed with the module */
    for (char *p = src; (p = strstr(p, "\n#> ")); p++) {
        size_t n = strcspn(p + 1, "\n"), old = layouts ? strlen(layouts) : 0;
        layouts = realloc(layouts, old + strlen(module) + n + 3);
        sprintf(layouts + old, "%s %.*s\n", module, (int)n, p + 1);
    }
    free(src);
    json_object_set_new(r, "success", json_true());
    return r;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Tape entries recorded so far in the session: those on the tape and
 * those reclaimed (every statement's end reclaims what nothing reaches). */
static uint64_t recorded_so_far(void) { return tape_size() + G->tape.reclaimed; }

/* CPU time of this thread (the interpreter's): what a run cost, whatever
 * else the machine was running (the protocol's timings are wall time). */
static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static json_t *on_evaluate(json_t *msg, json_t *r)
{
    const char *module = json_string_value(json_object_get(msg, "module"));
    const char *function = json_string_value(json_object_get(msg, "function"));
    json_t *input = json_object_get(msg, "input");
    if (!module || !function) return fail(r, "evaluate needs a module and a function");
    Global *g = eval_global_lookup(function);
    if (!g || g->v.t != V_FN) {
        char e[512];
        snprintf(e, sizeof e, "the %s program defines no function '%s'", module, function);
        return fail(r, e);
    }
    long min_runs = 1;
    double min_seconds = 0;
    if (json_is_object(input)) {
        json_t *mr = json_object_get(input, "min_runs"), *ms = json_object_get(input, "min_seconds");
        if (json_is_number(mr)) min_runs = (long)json_number_value(mr);
        if (json_is_number(ms)) min_seconds = json_number_value(ms);
    }
    double t0 = now_ns();
    bind(json_is_object(input) ? "" : "input", input);
    double t1 = now_ns();
    char src[300];
    int n = snprintf(src, sizeof src, "__wg_keep(%s())\n", function);
    Chunk *call = parse_chunk("<gradbench>", src, (size_t)n, 0, NULL);
    Chunk *clear = parse_chunk("<gradbench>", ":tape clear\n", 12, 0, NULL);
    json_t *timings = json_array();
    json_t *prep = json_object();
    json_object_set_new(prep, "name", json_string("prepare"));
    json_object_set_new(prep, "nanoseconds", json_integer((json_int_t)(t1 - t0)));
    json_array_append_new(timings, prep);
    double total = 0, cpu_total = 0, cpu_min = 0;
    int err = !call || !clear;
    long runs = 0;
    /* entries recorded by the first run, also those reclaimed when its
     * statement ended (a primal on constants records none) */
    uint64_t before = recorded_so_far(), entries = 0;
    capture_begin();
    for (; !err && (runs < min_runs || total < min_seconds * 1e9); runs++) {
        double ca = cpu_ns(), a = now_ns();
        err = eval_chunk(call);
        double b = now_ns(), cb = cpu_ns();
        cpu_total += cb - ca;
        if (runs == 0 || cb - ca < cpu_min) cpu_min = cb - ca;
        if (runs == 0) entries = recorded_so_far() - before;
        total += b - a;
        json_t *t = json_object();
        json_object_set_new(t, "name", json_string("evaluate"));
        json_object_set_new(t, "nanoseconds", json_integer((json_int_t)(b - a)));
        json_array_append_new(timings, t);
        if (tape_size() > 1 && !err) err = eval_chunk(clear);   /* every run starts afresh */
    }
    char *out = capture_end();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(stderr, "wengert-gradbench: %s %s: %ld runs, mean %.3f ms, %llu tape entries recorded in one run, peak RSS %ld MB,"
            " CPU time a run mean %.3f ms min %.3f ms\n",
            module, function, runs, runs ? total / runs / 1e6 : 0.0, (unsigned long long)entries, ru.ru_maxrss / 1024,
            runs ? cpu_total / runs / 1e6 : 0.0, cpu_min / 1e6);
    if (call) ast_chunk_release(call);
    if (clear) ast_chunk_release(clear);
    json_object_set_new(r, "timings", timings);
    if (err) {
        fail(r, *out ? out : "the evaluation failed");
    } else {
        char lbuf[1024];
        const char *e = NULL;
        json_t *o = to_json(kept, find_layout(module, function, lbuf, sizeof lbuf), input, &e);
        if (o) {
            json_object_set_new(r, "success", json_true());
            json_object_set_new(r, "output", o);
        } else fail(r, e);
    }
    free(out);
    v_release(kept);
    kept = nil_val();
    return r;
}

static void serve(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        json_error_t jerr;
        json_t *msg = json_loadb(line, (size_t)len, 0, &jerr);
        if (!msg) {   /* still answered, so that the harness never waits */
            fprintf(stderr, "wengert-gradbench: bad message: %s\n", jerr.text);
            const char *id = strstr(line, "\"id\"");
            long long n = -1;
            if (id) sscanf(id + 4, " : %lld", &n);
            json_t *r = json_object();
            json_object_set_new(r, "id", n >= 0 ? json_integer(n) : json_null());
            reply(fail(r, jerr.text));
            continue;
        }
        json_t *r = json_object();
        json_object_set(r, "id", json_object_get(msg, "id"));
        const char *kind = json_string_value(json_object_get(msg, "kind"));
        if (!kind) kind = "";
        if (!strcmp(kind, "start")) {
            json_t *cfg = json_object();
            json_object_set_new(cfg, "version", json_string(TOOL_VERSION));
            json_object_set_new(cfg, "backend", json_string(num_formats[G->num.backend].name));
            json_object_set_new(r, "tool", json_string("wengert"));
            json_object_set_new(r, "config", cfg);
        } else if (!strcmp(kind, "define")) {
            r = on_define(msg, r);
        } else if (!strcmp(kind, "evaluate")) {
            r = on_evaluate(msg, r);
        }
        reply(r);
        json_decref(msg);
        gc_collect();
    }
    free(line);
}

/* ---------------------------------------------------------- start-up */

static void *main_thread(void *ud)
{
    (void)ud;
    /* a session as every front end opens one (wengert.h): builtins, the
     * standard library from stdlibdir, the ':' commands */
    setenv("WENGERT_STDLIB", stdlibdir, 1);
    if (!wg_open(NULL)) return NULL;
    builtin_define(&keep_builtin);
    gc_set_roots(keep_roots);
    serve();
    return NULL;
}

int main(int argc, char **argv)
{
    static char dir[PATH_MAX], lib[PATH_MAX + 16];
    if (argc > 1) evaldir = argv[1];
    else {   /* beside this program's source: <root>/bench/gradbench */
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        snprintf(dir, sizeof dir, "%.*s/../../bench/gradbench", (int)(sizeof dir - 32), exe);
        evaldir = dir;
    }
    const char *env = getenv("WENGERT_STDLIB");
    if (env && *env) stdlibdir = env;
    else {
        snprintf(lib, sizeof lib, "%s/../../stdlib", evaldir);
        stdlibdir = lib;
    }
    static char absdir[PATH_MAX], abslib[PATH_MAX];
    if (realpath(evaldir, absdir)) evaldir = absdir;
    if (realpath(stdlibdir, abslib)) stdlibdir = abslib;
    if (chdir(evaldir) != 0) perror(evaldir);   /* so that `:load solver.wg` finds its file */
    real_stderr = dup(2);
    /* Only protocol lines reach stdout: what wengert code prints (print,
     * :tape limit) goes to stderr with the interpreter's messages. */
    proto = fdopen(dup(1), "w");
    if (!proto) return 1;
    dup2(2, 1);
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    pthread_attr_t attr;
    pthread_t th;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)512 << 20);
    if (pthread_create(&th, &attr, main_thread, NULL) != 0) main_thread(NULL);
    else pthread_join(th, NULL);
    return 0;
}
