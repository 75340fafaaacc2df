/* cmd.c: `:` commands. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "cmd.h"
#include "eval.h"
#include "tape.h"
#include "parse.h"
#include "error.h"
#include "gc.h"
#include "ad.h"
#include "kinks.h"
#include "tapedot.h"
#include "help.h"

int wg_quit;
void (*wg_reset_hook)(void);

typedef struct { const char *name, *help; } HelpEntry;
static HelpEntry *lib_help;
static int nlib_help, cap_lib_help;

void cmd_add_help(const char *name, const char *help)
{
    if (nlib_help == cap_lib_help) {
        cap_lib_help = cap_lib_help ? 2 * cap_lib_help : 32;
        lib_help = wg_realloc(lib_help, sizeof(HelpEntry) * (size_t)cap_lib_help);
    }
    lib_help[nlib_help].name = strdup(name);
    lib_help[nlib_help].help = strdup(help);
    nlib_help++;
}

/* ------------------------------------------------------------- helpers */

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

/* The first word of s into buf; returns the rest. */
static const char *word(const char *s, char *buf, size_t size)
{
    s = skip_space(s);
    size_t n = 0;
    while (*s && !isspace((unsigned char)*s)) {
        if (n + 1 < size) buf[n++] = *s;
        s++;
    }
    buf[n] = 0;
    return skip_space(s);
}

static void fmt_bytes(size_t b, char *buf, size_t size)
{
    if (b >= (size_t)1 << 30) snprintf(buf, size, "%.1f GB", (double)b / (1 << 30));
    else if (b >= (size_t)1 << 20) snprintf(buf, size, "%.1f MB", (double)b / (1 << 20));
    else if (b >= 1024) snprintf(buf, size, "%.1f KB", (double)b / 1024);
    else snprintf(buf, size, "%zu B", b);
}

/* ------------------------------------------------------ tape labels */

/* The variable version an entry was assigned to, found by binary search
 * in each global's version log (logs are in tape order). */
/* Elements of top-level arrays, by entry: filled once per command. */
static uint32_t *elem_ids;
static int *elem_owner, *elem_index, nelems;

static int cmp_elem(const void *a, const void *b)
{
    uint32_t x = elem_ids[*(const int *)a], y = elem_ids[*(const int *)b];
    return x < y ? -1 : x > y;
}

static void forget_elements(void);

/* Elements of earlier versions of top-level arrays (a@k[i]), by entry,
 * then by k: the entry an element write made is labelled with the version
 * that made it. At most the latest HIST_VERSIONS versions of each array. */
#define HIST_VERSIONS 256
typedef struct { uint32_t id; int owner, index, k; } HistElem;
static HistElem *hist;
static int nhist;

static int cmp_hist(const void *a, const void *b)
{
    const HistElem *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

static void index_history(void)
{
    int cap = 0;
    for (int g = 0; g < nglobals; g++) {
        if (globals[g].v.t == V_NUM || globals[g].v.t == V_UNDEF) continue;
        int count = globals[g].ver.count;
        for (int k = count > HIST_VERSIONS ? count - HIST_VERSIONS + 1 : 1; k <= count; k++) {
            int n;
            uint32_t *ids = verlog_array(&globals[g].ver, k, &n);
            if (!ids) continue;
            if (nhist + n > cap) {
                cap = 2 * (nhist + n) + 64;
                hist = wg_realloc(hist, sizeof(HistElem) * (size_t)cap);
            }
            for (int i = 0; i < n; i++) hist[nhist++] = (HistElem){ids[i], g, i, k};
            free(ids);
        }
    }
    if (nhist) qsort(hist, (size_t)nhist, sizeof(HistElem), cmp_hist);
}

/* The earliest version whose element i is entry id, or NULL. */
static const HistElem *find_history(uint32_t id)
{
    int lo = 0, hi = nhist - 1, at = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (hist[mid].id >= id) { if (hist[mid].id == id) at = mid; hi = mid - 1; }
        else lo = mid + 1;
    }
    return at < 0 ? NULL : &hist[at];
}

static void index_elements(void)
{
    forget_elements();      /* a previous command may have stopped on an error */
    for (int g = 0; g < nglobals; g++)
        if (globals[g].v.t == V_ARR) nelems += AS_ARR(globals[g].v)->n;
    int *order = wg_malloc(sizeof(int) * (size_t)(nelems + 1));
    uint32_t *ids = wg_malloc(sizeof(uint32_t) * (size_t)(nelems + 1));
    int *owner = wg_malloc(sizeof(int) * (size_t)(nelems + 1)), *index = wg_malloc(sizeof(int) * (size_t)(nelems + 1));
    int k = 0;
    for (int g = 0; g < nglobals; g++) {
        if (globals[g].v.t != V_ARR) continue;
        Storage *s = AS_ARR(globals[g].v);
        for (int i = 0; i < s->n; i++, k++) {
            ids[k] = s->v[i].id;
            owner[k] = g;
            index[k] = i;
            order[k] = k;
        }
    }
    elem_ids = ids;
    qsort(order, (size_t)nelems, sizeof(int), cmp_elem);
    elem_ids = wg_malloc(sizeof(uint32_t) * (size_t)(nelems + 1));
    elem_owner = wg_malloc(sizeof(int) * (size_t)(nelems + 1));
    elem_index = wg_malloc(sizeof(int) * (size_t)(nelems + 1));
    for (int i = 0; i < nelems; i++) {
        elem_ids[i] = ids[order[i]];
        elem_owner[i] = owner[order[i]];
        elem_index[i] = index[order[i]];
    }
    free(ids);
    free(owner);
    free(index);
    free(order);
    index_history();
}

static void forget_elements(void)
{
    free(elem_ids);
    free(elem_owner);
    free(elem_index);
    elem_ids = NULL;
    elem_owner = elem_index = NULL;
    nelems = 0;
    free(hist);
    hist = NULL;
    nhist = 0;
}

/* The variable version (x@k), current array element (a[i]) or element of
 * an earlier array version (a@k[i]) an entry was assigned to; "(local)"
 * for a function's variables. */
static int entry_label(uint32_t id, char *buf, size_t size)
{
    if (!(tape.op[id] & TAPE_LABELED)) return 0;
    for (int g = 0; g < nglobals; g++) {
        int k = verlog_version_of(&globals[g].ver, id);
        if (k) {
            snprintf(buf, size, "%s@%d", globals[g].name, k);
            return 1;
        }
    }
    int lo = 0, hi = nelems - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (elem_ids[mid] == id) {
            snprintf(buf, size, "%s[%d]", globals[elem_owner[mid]].name, elem_index[mid]);
            return 1;
        }
        if (elem_ids[mid] < id) lo = mid + 1;
        else hi = mid - 1;
    }
    const HistElem *h = find_history(id);
    if (h) {
        snprintf(buf, size, "%s@%d[%d]", globals[h->owner].name, h->k, h->index);
        return 1;
    }
    snprintf(buf, size, "(local)");
    return 1;
}

static void print_entry(FILE *f, uint32_t i)
{
    char label[64] = "", args[64] = "", val[64];
    entry_label(i, label, sizeof label);
    int op = tape_opcode(i);
    TapeArgs g = tape.arg[i];
    if (op == OP_SUM || op == OP_DOT)
        snprintf(args, sizeof args, "%u operands", op == OP_DOT ? 2 * g.b : g.b);
    else if (op == OP_DERIV)
        snprintf(args, sizeof args, "d(#%u)", tape.derivs[g.a].y);
    else if (op_arity[op] >= 1) {
        /* operand 0 is a constant that the rule does not need */
        char a[16] = "const", b[16] = "const";
        if (g.a) snprintf(a, sizeof a, "#%u", g.a);
        if (g.b) snprintf(b, sizeof b, "#%u", g.b);
        snprintf(args, sizeof args, op_arity[op] == 2 ? "%s %s" : "%s", a, b);
    }
    num_format(tape.val[i], val, sizeof val);
    fprintf(f, "%8u  %-12s %-6s %-16s %s\n", i, label, op_names[op], args, val);
}

/* Marks every entry the given entries depend on. */
static uint8_t *cone_of(const uint32_t *ids, int n)
{
    uint8_t *mark = wg_calloc(tape.n, 1);
    uint32_t top = 0;
    for (int i = 0; i < n; i++) {
        if (ids[i] && ids[i] < tape.n) mark[ids[i]] = 1;
        if (ids[i] > top && ids[i] < tape.n) top = ids[i];
    }
    for (uint32_t i = top; i > 0; i--) {
        if (!mark[i]) continue;
        int op = tape_opcode(i);
        TapeArgs g = tape.arg[i];
        if (op == OP_SUM) for (uint32_t j = 0; j < g.b; j++) mark[tape.pool[g.a + j]] = 1;
        else if (op == OP_DOT) for (uint32_t j = 0; j < 2 * g.b; j++) mark[tape.pool[g.a + j]] = 1;
        else if (op == OP_DERIV) {
            DerivRec *r = &tape.derivs[g.a];
            mark[r->y] = 1;
        } else {
            if (op_arity[op] >= 1) mark[g.a] = 1;
            if (op_arity[op] == 2) mark[g.b] = 1;
        }
    }
    mark[0] = 0;
    return mark;
}

static int value_ids(Value v, uint32_t **ids)
{
    if (v.t == V_NUM) {
        *ids = wg_malloc(sizeof(uint32_t));
        (*ids)[0] = v.id;
        return 1;
    }
    if (is_seq(v)) {
        int n = seq_len(v);
        *ids = wg_malloc(sizeof(uint32_t) * (size_t)(n ? n : 1));
        for (int i = 0; i < n; i++) (*ids)[i] = seq_at(v, i)->id;
        return n;
    }
    *ids = NULL;
    return 0;
}

static void tape_header(void)
{
    printf("tape: %u entries, %zu bytes\n", tape.n - 1, tape_bytes());
}

static void tape_list(uint32_t from)
{
    tape_header();
    for (uint32_t i = from < 1 ? 1 : from; i < tape.n; i++) print_entry(stdout, i);
}

static void tape_depends(const char *name)
{
    Global *g = global_lookup(name);
    if (!g || g->v.t == V_UNDEF) wg_error("no variable named '%s'", name);
    uint32_t *ids;
    int n = value_ids(g->v, &ids);
    uint8_t *mark = cone_of(ids, n);
    free(ids);
    uint32_t count = 0;
    for (uint32_t i = 1; i < tape.n; i++) count += mark[i];
    printf("tape: %u entries that %s depends on\n", count, name);
    for (uint32_t i = 1; i < tape.n; i++)
        if (mark[i]) print_entry(stdout, i);
    free(mark);
}

static void tape_stats(void)
{
    uint64_t count[OP_COUNT] = {0};
    for (uint32_t i = 1; i < tape.n; i++) count[tape_opcode(i)]++;
    size_t per = sizeof(uint8_t) + sizeof(TapeArgs) + sizeof(double);
    tape_header();
    printf("  %-8s %12s %14s\n", "op", "entries", "bytes");
    for (int op = 0; op < OP_COUNT; op++) {
        if (!count[op]) continue;
        size_t bytes = count[op] * per;
        printf("  %-8s %12llu %14zu\n", op_names[op], (unsigned long long)count[op], bytes);
    }
    size_t versions = 0;
    for (int g = 0; g < nglobals; g++) versions += (size_t)globals[g].ver.n;
    printf("  bytes per entry: %zu (op 1, operands 8, saved value 8)", per);
    if (tape.n > 1) printf("; %.1f with operand lists", (double)tape_bytes() / (tape.n - 1));
    printf("\n");
    printf("  saved values: %u (each entry keeps the value its reverse rule reads; "
           "overwritten variables keep theirs in older entries)\n", tape.n - 1);
    printf("  operand lists (sum, dot, d): %zu ids\n", tape.npool);
    printf("  variable versions: %zu\n", versions);
    printf("  adjoint sweeps run: %llu; derivatives expanded for higher order: %llu\n",
           (unsigned long long)tape.sweeps, (unsigned long long)tape.expansions);
    if (backend_is_posit(num_backend))
        printf("  quire: %d bits, used by sum, dot and by reverse sweeps to add up adjoints\n",
               formats[num_backend].posit->quire_bits);
    char lim[32], used[32];
    fmt_bytes(tape.limit, lim, sizeof lim);
    fmt_bytes(tape_bytes(), used, sizeof used);
    printf("  in use: %s of a limit of %s\n", used, lim);
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0) || !isfinite(v)) return 0;
    while (*end == ' ') end++;
    double mul = 1;
    if (!strcasecmp(end, "KB") || !strcasecmp(end, "K")) mul = 1024;
    else if (!strcasecmp(end, "MB") || !strcasecmp(end, "M")) mul = 1024.0 * 1024;
    else if (!strcasecmp(end, "GB") || !strcasecmp(end, "G")) mul = 1024.0 * 1024 * 1024;
    else if (*end && strcasecmp(end, "B")) return 0;
    if (v * mul >= 9.2e18) return 0;    /* beyond any machine's memory */
    *out = (size_t)(v * mul);
    return 1;
}

/* After :tape clear every live number is a constant again, and each
 * variable starts afresh from its current value. */
static void tape_forget(void)
{
    tape_clear();
    gc_strip_ids();
    for (int g = 0; g < nglobals; g++) {
        Global *gl = &globals[g];
        if (gl->v.t == V_NUM) gl->v.id = 0;
        int count = gl->ver.count;
        verlog_free(&gl->ver);
        gl->ver.count = count;
        if (gl->v.t == V_NUM && gl->ver.count) verlog_push(&gl->ver, label_number(&gl->v));
        if (gl->v.t == V_ARR && gl->ver.count)
            for (int i = 0; i < AS_ARR(gl->v)->n; i++) label_number(&AS_ARR(gl->v)->v[i]);
        /* (array versions before the clear are forgotten with the tape) */
    }
}

static void tape_subcommand(const char *args);

static void cmd_tape(const char *args)
{
    index_elements();
    tape_subcommand(args);
    forget_elements();
}

static void tape_subcommand(const char *args)
{
    char sub[64];
    const char *rest = word(args, sub, sizeof sub);
    if (!sub[0]) {
        uint32_t from = tape.n > 20 ? tape.n - 20 : 1;
        tape_list(from);
        if (from > 1) printf("  (%u earlier entries: ':tape all' shows them)\n", from - 1);
    } else if (!strcmp(sub, "all")) tape_list(1);
    else if (!strcmp(sub, "stats")) tape_stats();
    else if (!strcmp(sub, "kinks")) kink_list(stdout);
    else if (!strcmp(sub, "dot")) tapedot_command(rest, entry_label);
    else if (!strcmp(sub, "clear")) {
        if (ad_nesting) wg_error("':tape clear' cannot run while grad or hvp is differentiating");
        tape_forget();
    }
    else if (!strcmp(sub, "limit")) {
        char b[32];
        if (*rest) {
            size_t lim;
            if (!parse_size(rest, &lim)) wg_error("':tape limit' takes a size like 512KB, 64MB or 2GB");
            tape_set_limit(lim);
        }
        fmt_bytes(tape.limit, b, sizeof b);
        printf("tape limit: %s (in use: %zu bytes)\n", b, tape_bytes());
    } else tape_depends(sub);
}

/* ------------------------------------------------------------ others */

static void cmd_backend(const char *args)
{
    char name[64];
    word(args, name, sizeof name);
    if (name[0]) {
        int b = backend_lookup(name);
        if (b < 0) {
            char list[256] = "";
            for (int i = 0; i < BK_COUNT; i++) {
                strcat(list, i ? ", " : "");
                strcat(list, formats[i].name);
            }
            wg_error("unknown backend '%s' (one of %s)", name, list);
        }
        num_backend = b;
    }
    printf("backend: %s", formats[num_backend].name);
    if (backend_is_posit(num_backend))
        printf(" (posit<%d,2>; quire of %d bits for sum, dot and reverse sweeps)",
               formats[num_backend].width,
               formats[num_backend].posit->quire_bits);
    printf("\n");
}



static void cmd_vars(const char *args)
{
    (void)args;
    int shown = 0;
    for (int g = 0; g < nglobals; g++) {
        Global *gl = &globals[g];
        if (gl->v.t == V_UNDEF || gl->v.t == V_BUILTIN) continue;
        if (g < prelude_globals && gl->ver.count == 0) continue;   /* pi, the stdlib */
        printf("%s = ", gl->name);
        if (gl->v.t == V_STR) printf("\"");
        value_print(gl->v, stdout);
        if (gl->v.t == V_STR) printf("\"");
        if (gl->ver.count) {
            printf("    (%s@%d", gl->name, gl->ver.count);
            if (gl->v.t == V_NUM && gl->v.id) printf(", tape #%u", gl->v.id);
            printf(")");
        }
        printf("\n");
        shown++;
    }
    if (!shown) printf("(no variables yet)\n");
}

/* A relative path is looked up beside the file that holds the :load (a
 * real file, not <repl> or <-e>), then in the current directory. */
static FILE *open_beside(const char *name, char *path, size_t size)
{
    const char *from = wg_where.chunk ? wg_where.chunk->filename : NULL;
    const char *slash = from && from[0] != '<' ? strrchr(from, '/') : NULL;
    if (name[0] != '/' && slash) {
        snprintf(path, size, "%.*s/%s", (int)(slash - from), from, name);
        FILE *f = fopen(path, "rb");
        if (f) return f;
    }
    snprintf(path, size, "%s", name);
    return fopen(path, "rb");
}

static void cmd_load(const char *args)
{
    if (!*args) wg_error("':load' needs a file name");
    char path[4096];
    FILE *f = open_beside(args, path, sizeof path);
    if (!f) wg_error("cannot open '%s': %s", args, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        wg_error("cannot load '%s': it is a directory", args);
    }
    args = path;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char tmp[8192];
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) {
        if (len + n > cap) {
            cap = (len + n) * 2;
            buf = wg_realloc(buf, cap);
        }
        memcpy(buf + len, tmp, n);
        len += n;
    }
    fclose(f);
    Chunk *c = parse_chunk(args, buf ? buf : "", len, 0, NULL);
    free(buf);
    if (!c) wg_error("'%s' not loaded: syntax error (above)", args);
    int echo = wg_echo;
    wg_echo = 0;
    wg_call_push(":load");
    eval_run_chunk(c);
    wg_call_pop();
    wg_echo = echo;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void cmd_time(const char *args)
{
    if (!*args) wg_error("':time' needs a statement to run");
    const char *file = wg_where.chunk ? wg_where.chunk->filename : "<time>";
    /* The statement keeps its place in the file: padded with the lines and
     * columns before it, its errors name the line and column of the :time. */
    const Node *at = wg_where.node;
    int line = 1, col = 1;
    if (at && at->kind == N_COMMAND && at->text && args >= at->text && args <= at->text + strlen(at->text)) {
        line = at->line;
        col = at->col + 1 + (int)(args - at->text);
    }
    size_t n = strlen(args), pad = (size_t)(line - 1) + (size_t)(col - 1);
    char *src = wg_malloc(pad + n + 1);
    memset(src, '\n', (size_t)(line - 1));
    memset(src + line - 1, ' ', (size_t)(col - 1));
    memcpy(src + pad, args, n + 1);
    Chunk *c = parse_chunk(file, src, pad + n, 0, NULL);
    free(src);
    if (!c) wg_error("':time': syntax error (above)");
    uint32_t before = tape.n;
    size_t bytes = tape_bytes();
    double t0 = now();
    wg_call_push(":time");
    eval_run_chunk(c);
    wg_call_pop();
    double dt = now() - t0;
    char b[32];
    fmt_bytes(tape_bytes() - bytes, b, sizeof b);
    if (dt >= 1) printf("time: %.3f s", dt);
    else printf("time: %.3f ms", dt * 1e3);
    printf(", tape: +%u entries (+%s)\n", tape.n - before, b);
}

static void forget_inputs(void);

static void cmd_reset(const char *args)
{
    (void)args;
    if (!eval_at_top_level())
        wg_error("':reset' works only at the top level, outside blocks and functions");
    eval_reset();
    forget_inputs();
    if (wg_reset_hook) wg_reset_hook();
    printf("session reset\n");
}

static void cmd_quit(const char *args)
{
    (void)args;
    wg_quit = 1;
}

/* ---------------------------------------------------------------- :save */

static char **inputs;
static int ninputs, capinputs;

static void forget_inputs(void)
{
    for (int i = 0; i < ninputs; i++) free(inputs[i]);
    ninputs = 0;
}

/* Commands that change nothing a script could rebuild are not kept. */
static int only_looks(const char *s)
{
    char name[64], sub[64];
    s = word(s + 1, name, sizeof name);
    if (!strcmp(name, "tape")) {
        word(s, sub, sizeof sub);
        return strcmp(sub, "clear") && strcmp(sub, "limit");
    }
    static const char *const looks[] = {"help", "vars", "save", "save!", "quit", "reset"};
    for (size_t i = 0; i < sizeof looks / sizeof looks[0]; i++)
        if (!strcmp(name, looks[i])) return 1;
    return 0;
}

void cmd_log_input(const char *src, size_t len)
{
    while (len > 0 && (src[len - 1] == '\n' || src[len - 1] == ' ' || src[len - 1] == '\t')) len--;
    const char *p = skip_space(src);
    while (*p == '\n') p = skip_space(p + 1);
    if (p >= src + len || (*p == ':' && !memchr(p, '\n', (size_t)(src + len - p)) && only_looks(p))) return;
    if (ninputs == capinputs) {
        capinputs = capinputs ? 2 * capinputs : 64;
        inputs = wg_realloc(inputs, sizeof(char *) * (size_t)capinputs);
    }
    char *copy = wg_malloc(len + 1);
    memcpy(copy, src, len);
    copy[len] = 0;
    inputs[ninputs++] = copy;
}

static void save(const char *file, int overwrite)
{
    if (!*file) wg_error("':save' needs a file name");
    struct stat st;
    if (!overwrite && stat(file, &st) == 0)
        wg_error("'%s' exists; ':save! %s' overwrites it", file, file);
    FILE *f = fopen(file, "w");
    if (!f) wg_error("cannot write '%s': %s", file, strerror(errno));
    fprintf(f, "# a wengert session, saved by :save (%d input%s)\n", ninputs, ninputs == 1 ? "" : "s");
    for (int i = 0; i < ninputs; i++) fprintf(f, "%s\n", inputs[i]);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) wg_error("could not write '%s'", file);
    printf("saved %d input%s to %s\n", ninputs, ninputs == 1 ? "" : "s", file);
}

static void cmd_save(const char *args) { save(args, 0); }

static void cmd_help(const char *args);

typedef struct {
    const char *name;
    void (*run)(const char *args);
    const char *help;
} Command;

static const Command commands[] = {
    {"help", cmd_help, ":help [NAME]      one screen of help; :help NAME for any keyword, operator, function, command or topic"},
    {"tape", cmd_tape, ":tape [all|NAME|stats|kinks|dot [NAME] [FILE]|clear|limit [SIZE]]   look inside the session tape (dot: Graphviz; FILE.svg/.png drawn by dot)"},
    {"backend", cmd_backend, ":backend [NAME]   show or switch: float64 float32 float16 bfloat16 posit8 posit16 posit32"},
    {"vars", cmd_vars, ":vars             variables with their values and versions"},
    {"load", cmd_load, ":load FILE        run a script into this session (FILE is looked up beside the loading file, then here)"},
    {"save", cmd_save, ":save FILE        write this session's inputs as a script (:save! FILE overwrites)"},
    {"time", cmd_time, ":time STATEMENT   run it, then print the time taken and tape entries added"},
    {"reset", cmd_reset, ":reset            a fresh session"},
    {"quit", cmd_quit, ":quit             leave"},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

const char *cmd_name(int i) { return i < NCOMMANDS ? commands[i].name : NULL; }

const char *cmd_lib_name(int i) { return i < nlib_help ? lib_help[i].name : NULL; }

const char *cmd_help_text(const char *name)
{
    const char *t = name[0] == ':' ? name + 1 : name;
    if (!strcmp(t, "save!")) t = "save";
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, t)) return commands[i].help;
    if (name[0] == ':') return NULL;
    if (!strcmp(name, "pi")) return "pi: the constant 3.141592653589793, rounded to the active backend when used";
    for (int i = 0; builtin_list(i); i++)
        if (!strcmp(builtin_list(i)->name, name)) return builtin_list(i)->help;
    for (int i = 0; i < nlib_help; i++)
        if (!strcmp(lib_help[i].name, name)) return lib_help[i].help;
    return NULL;
}

static void cmd_help(const char *args)
{
    char topic[64];
    word(args, topic, sizeof topic);
    help_show(topic);
}

void cmd_run(const char *text)
{
    char name[64];
    const char *args = word(text, name, sizeof name);
    if (!strcmp(name, "save!")) {
        save(args, 1);
        fflush(stdout);
        return;
    }
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name)) {
            commands[i].run(args);
            fflush(stdout);
            return;
        }
    wg_error("unknown command ':%s' (try :help)", name);
}
