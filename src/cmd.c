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
#include "builtins.h"
#include "tape.h"
#include "parse.h"
#include "error.h"
#include "valuegc.h"
#include "ad.h"
#include "tapeview.h"
#include "help.h"
#include "state.h"

typedef struct HelpEntry { const char *name, *help; } HelpEntry;

void cmd_add_help(const char *name, const char *help)
{
    if (G->cmd.nlib_help == G->cmd.cap_lib_help) {
        G->cmd.cap_lib_help = G->cmd.cap_lib_help ? 2 * G->cmd.cap_lib_help : 32;
        G->cmd.lib_help = err_realloc(G->cmd.lib_help, sizeof(HelpEntry) * (size_t)G->cmd.cap_lib_help);
    }
    G->cmd.lib_help[G->cmd.nlib_help].name = strdup(name);
    G->cmd.lib_help[G->cmd.nlib_help].help = strdup(help);
    G->cmd.nlib_help++;
}

/* ------------------------------------------------------------- helpers */

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

/* The first word of s into buf; returns the rest. */
const char *cmd_word(const char *s, char *buf, size_t size)
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

void cmd_fmt_bytes(size_t b, char *buf, size_t size)
{
    if (b >= (size_t)1 << 30) snprintf(buf, size, "%.1f GB", (double)b / (1 << 30));
    else if (b >= (size_t)1 << 20) snprintf(buf, size, "%.1f MB", (double)b / (1 << 20));
    else if (b >= 1024) snprintf(buf, size, "%.1f KB", (double)b / 1024);
    else snprintf(buf, size, "%zu B", b);
}

/* ------------------------------------------------------------ others */

static void cmd_backend(const char *args)
{
    char name[64];
    cmd_word(args, name, sizeof name);
    if (name[0]) {
        int b = num_backend_lookup(name);
        if (b < 0) {
            char list[256] = "";
            for (int i = 0; i < BK_COUNT; i++) {
                strcat(list, i ? ", " : "");
                strcat(list, num_formats[i].name);
            }
            err_raise("unknown backend '%s' (one of %s)", name, list);
        }
        G->num.backend = b;
    }
    io_out("backend: %s", num_formats[G->num.backend].name);
    if (num_backend_is_posit(G->num.backend))
        io_out(" (posit<%d,2>; quire of %d bits for sum, dot and reverse sweeps)",
               num_formats[G->num.backend].width,
               num_formats[G->num.backend].posit->quire_bits);
    io_out("\n");
}



static void cmd_vars(const char *args)
{
    (void)args;
    int shown = 0;
    for (int g = 0; g < G->eval.nglobals; g++) {
        Global *gl = &G->eval.globals[g];
        if (gl->v.t == V_UNDEF || gl->v.t == V_BUILTIN) continue;
        if (g < G->eval.prelude_globals && gl->ver.count == 0) continue;   /* pi, the stdlib */
        io_out("%s = ", gl->name);
        if (gl->v.t == V_STR) io_out("\"");
        io_value(IO_OUT, gl->v, 1);
        if (gl->v.t == V_STR) io_out("\"");
        if (gl->ver.count) {
            io_out("    (%s@%d", gl->name, gl->ver.count);
            if (gl->v.t == V_NUM && gl->v.id) io_out(", tape #%u", gl->v.id);
            io_out(")");
        }
        io_out("\n");
        shown++;
    }
    if (!shown) io_out("(no variables yet)\n");
}

/* A relative path is looked up beside the file that holds the :load (a
 * real file, not <repl> or <-e>), then in the current directory. */
static FILE *open_beside(const char *name, char *path, size_t size)
{
    const char *from = G->err.where.chunk ? G->err.where.chunk->filename : NULL;
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
    if (!*args) err_raise("':load' needs a file name");
    char path[4096];
    FILE *f = open_beside(args, path, sizeof path);
    if (!f) err_raise("cannot open '%s': %s", args, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        err_raise("cannot load '%s': it is a directory", args);
    }
    args = path;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char tmp[8192];
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) {
        if (len + n > cap) {
            cap = (len + n) * 2;
            buf = err_realloc(buf, cap);
        }
        memcpy(buf + len, tmp, n);
        len += n;
    }
    fclose(f);
    Chunk *c = parse_chunk(args, buf ? buf : "", len, 0, NULL);
    free(buf);
    if (!c) err_raise("'%s' not loaded: syntax error (above)", args);
    int echo = G->eval.echo;
    G->eval.echo = 0;
    err_call_push(":load");
    eval_run_chunk(c);
    err_call_pop();
    G->eval.echo = echo;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void cmd_time(const char *args)
{
    if (!*args) err_raise("':time' needs a statement to run");
    const char *file = G->err.where.chunk ? G->err.where.chunk->filename : "<time>";
    /* The statement keeps its place in the file: padded with the lines and
     * columns before it, its errors name the line and column of the :time. */
    const Node *at = G->err.where.node;
    int line = 1, col = 1;
    if (at && at->kind == N_COMMAND && at->text && args >= at->text && args <= at->text + strlen(at->text)) {
        line = at->line;
        col = at->col + 1 + (int)(args - at->text);
    }
    size_t n = strlen(args), pad = (size_t)(line - 1) + (size_t)(col - 1);
    char *src = err_malloc(pad + n + 1);
    memset(src, '\n', (size_t)(line - 1));
    memset(src + line - 1, ' ', (size_t)(col - 1));
    memcpy(src + pad, args, n + 1);
    Chunk *c = parse_chunk(file, src, pad + n, 0, NULL);
    free(src);
    if (!c) err_raise("':time': syntax error (above)");
    /* reclaiming may give entries back meanwhile: count what was recorded */
    uint64_t before = tape_size() + G->tape.reclaimed, reclaimed = G->tape.reclaimed;
    size_t bytes = tape_bytes() + G->tape.reclaimed_bytes;
    uint64_t passes[4];
    jac_time_mark(passes);
    double t0 = now();
    err_call_push(":time");
    eval_run_chunk(c);
    err_call_pop();
    double dt = now() - t0;
    char b[32];
    cmd_fmt_bytes(tape_bytes() + G->tape.reclaimed_bytes - bytes, b, sizeof b);
    if (dt >= 1) io_out("time: %.3f s", dt);
    else io_out("time: %.3f ms", dt * 1e3);
    io_out(", tape: +%llu entries (+%s)", (unsigned long long)(tape_size() + G->tape.reclaimed - before), b);
    if (G->tape.reclaimed > reclaimed)
        io_out(", %llu reclaimed meanwhile", (unsigned long long)(G->tape.reclaimed - reclaimed));
    jac_time_note(passes);     /* jacobian, hessian, vjp: the passes they took */
    io_out("\n");
}

static void forget_inputs(void);

static void cmd_reset(const char *args)
{
    (void)args;
    if (!eval_at_top_level())
        err_raise("':reset' works only at the top level, outside blocks and functions");
    eval_reset();
    forget_inputs();
    if (G->cmd.reset_hook) G->cmd.reset_hook();
    io_out("session reset\n");
}

static void cmd_quit(const char *args)
{
    (void)args;
    G->eval.quit = 1;
}

/* ---------------------------------------------------------------- :save */


static void forget_inputs(void)
{
    for (int i = 0; i < G->cmd.ninputs; i++) free(G->cmd.inputs[i]);
    G->cmd.ninputs = 0;
}

/* Commands that change nothing a script could rebuild are not kept. */
static int only_looks(const char *s)
{
    char name[64], sub[64];
    s = cmd_word(s + 1, name, sizeof name);
    if (!strcmp(name, "tape")) {
        cmd_word(s, sub, sizeof sub);
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
    if (G->cmd.ninputs == G->cmd.capinputs) {
        __typeof__(G->cmd.capinputs) grown = G->cmd.capinputs ? 2 * G->cmd.capinputs : 64;   /* the size is kept only once it is had */
        G->cmd.inputs = err_realloc(G->cmd.inputs, sizeof(char *) * (size_t)grown);
        G->cmd.capinputs = grown;
    }
    char *copy = err_malloc(len + 1);
    memcpy(copy, src, len);
    copy[len] = 0;
    G->cmd.inputs[G->cmd.ninputs++] = copy;
}

static void save(const char *file, int overwrite)
{
    if (!*file) err_raise("':save' needs a file name");
    struct stat st;
    if (!overwrite && stat(file, &st) == 0)
        err_raise("'%s' exists; ':save! %s' overwrites it", file, file);
    FILE *f = fopen(file, "w");
    if (!f) err_raise("cannot write '%s': %s", file, strerror(errno));
    fprintf(f, "# a wengert session, saved by :save (%d input%s)\n", G->cmd.ninputs, G->cmd.ninputs == 1 ? "" : "s");
    for (int i = 0; i < G->cmd.ninputs; i++) fprintf(f, "%s\n", G->cmd.inputs[i]);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) err_raise("could not write '%s'", file);
    io_out("saved %d input%s to %s\n", G->cmd.ninputs, G->cmd.ninputs == 1 ? "" : "s", file);
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
    {"tape", tapeview_command, ":tape [all|NAME|stats|kinks|dot [NAME] [FILE]|reclaim|clear|limit [SIZE]]   look inside the session tape (dot: Graphviz; FILE.svg/.png drawn by dot; reclaim: give back now what nothing can reach)"},
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

const char *cmd_lib_name(int i) { return i < G->cmd.nlib_help ? G->cmd.lib_help[i].name : NULL; }

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
    for (int i = 0; i < G->cmd.nlib_help; i++)
        if (!strcmp(G->cmd.lib_help[i].name, name)) return G->cmd.lib_help[i].help;
    return NULL;
}

static void cmd_help(const char *args)
{
    char topic[64];
    cmd_word(args, topic, sizeof topic);
    help_show(topic);
}

void cmd_run(const char *text)
{
    char name[64];
    const char *args = cmd_word(text, name, sizeof name);
    if (!strcmp(name, "save!")) {
        save(args, 1);
        io_flush();
        return;
    }
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name)) {
            commands[i].run(args);
            io_flush();
            return;
        }
    err_raise("unknown command ':%s' (try :help)", name);
}
