/* cmd.c: `:` commands. */
#include <ctype.h>
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
}

static void forget_elements(void)
{
    free(elem_ids);
    free(elem_owner);
    free(elem_index);
    elem_ids = NULL;
    elem_owner = elem_index = NULL;
    nelems = 0;
}

/* The variable version (x@k) or current array element (a[i]) an entry
 * was assigned to; "(local)" for a function's variables. */
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
    uint32_t skip = count > 20 ? count - 20 : 0, seen = 0;   /* the latest 20, as :tape */
    for (uint32_t i = 1; i < tape.n; i++)
        if (mark[i] && seen++ >= skip) print_entry(stdout, i);
    if (skip) printf("  (%u earlier entries that %s depends on; ':tape all' lists every entry)\n", skip, name);
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
               num_backend == BK_P8 ? 128 : num_backend == BK_P16 ? 256 : 512);
    char lim[32], used[32];
    fmt_bytes(tape.limit, lim, sizeof lim);
    fmt_bytes(tape_bytes(), used, sizeof used);
    printf("  in use: %s of a limit of %s\n", used, lim);
}

static void tape_dot(const char *file)
{
    FILE *f = stdout;
    if (*file) {
        f = fopen(file, "w");
        if (!f) wg_error("cannot write '%s'", file);
    }
    fprintf(f, "digraph tape {\n  rankdir=BT;\n  node [shape=box, fontname=\"monospace\"];\n");
    for (uint32_t i = 1; i < tape.n; i++) {
        char label[64] = "", val[64];
        entry_label(i, label, sizeof label);
        num_format(tape.val[i], val, sizeof val);
        int op = tape_opcode(i);
        fprintf(f, "  n%u [label=\"#%u %s\\n%s%s%s\"%s];\n", i, i, op_names[op], label,
                label[0] ? " = " : "", val, label[0] ? ", style=bold" : "");
        TapeArgs g = tape.arg[i];
        if (op == OP_SUM) for (uint32_t j = 0; j < g.b; j++) { if (tape.pool[g.a + j]) fprintf(f, "  n%u -> n%u;\n", tape.pool[g.a + j], i); }
        else if (op == OP_DOT) for (uint32_t j = 0; j < 2 * g.b; j++) fprintf(f, "  n%u -> n%u;\n", tape.pool[g.a + j], i);
        else if (op == OP_DERIV) fprintf(f, "  n%u -> n%u [style=dashed];\n", tape.derivs[g.a].y, i);
        else {
            if (op_arity[op] >= 1 && g.a) fprintf(f, "  n%u -> n%u;\n", g.a, i);
            if (op_arity[op] == 2 && g.b) fprintf(f, "  n%u -> n%u;\n", g.b, i);
        }
    }
    fprintf(f, "}\n");
    if (f != stdout) {
        int bad = ferror(f);
        if (fclose(f) != 0 || bad) wg_error("could not write '%s'", file);
        printf("wrote %s (%u entries)\n", file, tape.n - 1);
    }
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
    else if (!strcmp(sub, "dot")) tape_dot(rest);
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
                strcat(list, backend_names[i]);
            }
            wg_error("unknown backend '%s' (one of %s)", name, list);
        }
        num_backend = b;
    }
    printf("backend: %s", backend_names[num_backend]);
    if (backend_is_posit(num_backend))
        printf(" (posit<%d,2>; quire of %d bits for sum, dot and reverse sweeps)",
               num_backend == BK_P8 ? 8 : num_backend == BK_P16 ? 16 : 32,
               num_backend == BK_P8 ? 128 : num_backend == BK_P16 ? 256 : 512);
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
        value_print_brief(gl->v, stdout);
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

static void cmd_load(const char *args)
{
    if (!*args) wg_error("':load' needs a file name");
    struct stat st;
    if (stat(args, &st) == 0 && S_ISDIR(st.st_mode)) wg_error("cannot load '%s': it is a directory", args);
    FILE *f = fopen(args, "rb");
    if (!f) wg_error("cannot open '%s'", args);
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
    eval_run_chunk(c);
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
    Chunk *c = parse_chunk(file, args, strlen(args), 0, NULL);
    if (!c) wg_error("':time': syntax error (above)");
    uint32_t before = tape.n;
    size_t bytes = tape_bytes();
    double t0 = now();
    eval_run_chunk(c);
    double dt = now() - t0;
    char b[32];
    fmt_bytes(tape_bytes() - bytes, b, sizeof b);
    if (dt >= 1) printf("time: %.3f s", dt);
    else printf("time: %.3f ms", dt * 1e3);
    printf(", tape: +%u entries (+%s)\n", tape.n - before, b);
}

static void cmd_reset(const char *args)
{
    (void)args;
    if (!eval_at_top_level())
        wg_error("':reset' works only at the top level, outside blocks and functions");
    eval_reset();
    if (wg_reset_hook) wg_reset_hook();
    printf("session reset\n");
}

static void cmd_quit(const char *args)
{
    (void)args;
    wg_quit = 1;
}

static void cmd_help(const char *args);

typedef struct {
    const char *name;
    void (*run)(const char *args);
    const char *help;
} Command;

static const Command commands[] = {
    {"help", cmd_help, ":help [topic]     commands, builtins, syntax, derivatives, backends"},
    {"tape", cmd_tape, ":tape [all|NAME|stats|dot [FILE]|clear|limit [SIZE]]   look inside the session tape"},
    {"backend", cmd_backend, ":backend [NAME]   show or switch: float64 float32 float16 bfloat16 posit8 posit16 posit32"},
    {"vars", cmd_vars, ":vars             variables with their values and versions"},
    {"load", cmd_load, ":load FILE        run a script into this session"},
    {"time", cmd_time, ":time STATEMENT   run it, then print the time taken and tape entries added"},
    {"reset", cmd_reset, ":reset            a fresh session"},
    {"quit", cmd_quit, ":quit             leave"},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

const char *cmd_name(int i) { return i < NCOMMANDS ? commands[i].name : NULL; }

static const char *topic_syntax =
    "syntax:\n"
    "  x = 2; x += 1            assignment, compound assignment (+= -= *= /=)\n"
    "  a = [1, 2, 3]; a[0] = 5  arrays (indexing from 0), a[1:3] is a copy\n"
    "  v = view(a, 0, 2, 1)     a view aliases a's elements: v[0] = 1 writes a\n"
    "  if c { } elif d { } else { }    while c { }    for i in 0..n { }\n"
    "  fn f(x) { return x * x }   g = fn(x) => x + 1   break  continue  return\n"
    "  operators: or and not  < <= > >= == !=  + -  * / %  unary -  ^  (loosest first)\n"
    "  x@k is the k-th value assigned to x; nograd { } runs without recording\n";

static const char *topic_derivatives =
    "derivatives:\n"
    "  d(y, x)        dy/dx by a reverse sweep over the session tape (also x@k, a, a[i])\n"
    "  d(d(y, x), x)  derivatives are recorded too: any order\n"
    "  grad(f)        the gradient function of f; nests without perturbation confusion\n"
    "  jvp(f, x, v)   forward mode, no tape; fwdgrad(f, x) forward gradient\n"
    "  hvp(f, x, v)   Hessian-vector product;  detach(x), nograd { } stop recording\n"
    "  :tape shows the record; :tape stats its size\n";

static const char *topic_backends =
    "backends (:backend NAME or --backend NAME):\n"
    "  float64 (default), float32, float16, bfloat16: IEEE, round to nearest even\n"
    "  posit8, posit16, posit32: Posit Standard 2022 (es = 2), NaR, quire sums\n"
    "  literals round once from their decimal value; stored values keep their bits\n"
    "  bits(x) shows the bit pattern, frombits(\"0x...\") makes a value\n";

static void cmd_help(const char *args)
{
    char topic[64];
    word(args, topic, sizeof topic);
    if (!topic[0]) {
        printf("commands:\n");
        for (int i = 0; i < NCOMMANDS; i++) printf("  %s\n", commands[i].help);
        printf("builtins:\n ");
        for (int i = 0; builtin_list(i); i++) printf(" %s", builtin_list(i)->name);
        printf("\nstandard library:\n ");
        for (int i = 0; i < nlib_help; i++) printf(" %s", lib_help[i].name);
        printf("\n:help NAME explains one; :help syntax, :help derivatives, :help backends\n");
        return;
    }
    if (!strcmp(topic, "syntax")) { fputs(topic_syntax, stdout); return; }
    if (!strcmp(topic, "derivatives")) { fputs(topic_derivatives, stdout); return; }
    if (!strcmp(topic, "backends")) { fputs(topic_backends, stdout); return; }
    if (!strcmp(topic, "pi")) { printf("pi: the constant 3.141592653589793, rounded to the active backend when used\n"); return; }
    const char *t = topic[0] == ':' ? topic + 1 : topic;
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, t)) { printf("%s\n", commands[i].help); return; }
    for (int i = 0; builtin_list(i); i++)
        if (!strcmp(builtin_list(i)->name, topic)) { printf("%s\n", builtin_list(i)->help); return; }
    for (int i = 0; i < nlib_help; i++)
        if (!strcmp(lib_help[i].name, topic)) { printf("%s\n", lib_help[i].help); return; }
    wg_error("no help for '%s' (try :help)", topic);
}

void cmd_run(const char *text)
{
    char name[64];
    const char *args = word(text, name, sizeof name);
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name)) {
            commands[i].run(args);
            fflush(stdout);
            return;
        }
    wg_error("unknown command ':%s' (try :help)", name);
}
