/* tapedot.c: the session tape as a Graphviz graph (SPEC "Seeing it").
 *
 *   :tape dot                 DOT text of the whole tape on stdout
 *   :tape dot NAME            DOT text of NAME's cone on stdout
 *   :tape dot [NAME] FILE     FILE.svg / FILE.png drawn by Graphviz's dot;
 *                             any other FILE gets the DOT text
 *
 * One argument is a FILE when it ends in .dot, .gv, .svg or .png, else a
 * NAME. Nodes are labelled as :tape labels entries. Derivative entries
 * (deriv) are drawn apart, and when a later sweep expanded one into
 * recorded operations (for a higher derivative), that expansion sits in a
 * cluster of its own, linked to the deriv entry it stands for. */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "tapedot.h"
#include "fixtape.h"
#include "tapeview.h"
#include "fixtape.h"
#include "eval.h"
#include "error.h"
#include "tape.h"
#include "state.h"

extern char **environ;

#define DERIV_STYLE "shape=box, style=\"filled,bold\", fillcolor=\"#fde3cf\", color=\"#d55e00\""
#define CLUSTER_STYLE "style=\"rounded,filled\"; fillcolor=\"#eef3fb\"; color=\"#7a9cc6\"; fontname=\"monospace\";"

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n > m && strcasecmp(s + n - m, tail) == 0;
}

static int is_file_name(const char *s)
{
    return ends_with(s, ".dot") || ends_with(s, ".gv") || ends_with(s, ".svg") || ends_with(s, ".png");
}

/* ------------------------------------------------------------ the cone */

static void push_mark(uint8_t *mark, uint32_t *stack, uint32_t *n, uint32_t id)
{
    if (id && id < tape_size() && !mark[id]) {
        mark[id] = 1;
        stack[(*n)++] = id;
    }
}

typedef struct {
    uint8_t *mark;
    uint32_t *stack, *n;
} MarkList;

static void push_operand(uint32_t id, void *ud)
{
    MarkList *l = ud;
    push_mark(l->mark, l->stack, l->n, id);
}

static void push_extra(uint32_t *id, void *ud) { push_operand(*id, ud); }

/* Every entry the given value depends on, through operands, the y of a
 * derivative entry, and the expansion that stands for it (which lies above
 * it on the tape, hence a work list rather than one downward pass). */
static uint8_t *cone(Value v)
{
    uint8_t *mark = err_scratch(tape_size());
    uint32_t *stack = err_scratch(sizeof(uint32_t) * tape_size()), n = 0;
    /* the entries of one d call all read its y and its places: marked once
     * a call, or a gradient over a million places costs 10^12 steps */
    uint8_t *call_seen = err_scratch(tape_deriv_calls() + 1);
    if (v.t == V_NUM) push_mark(mark, stack, &n, v.id);
    else if (is_seq(v))
        for (int i = 0; i < seq_len(v); i++)
            if (seq_at(v, i)->t == V_NUM) push_mark(mark, stack, &n, seq_at(v, i)->id);
    for (uint32_t steps = 0; n; steps++) {
        if ((steps & 0xfffff) == 0) err_check_interrupt();
        uint32_t i = stack[--n];
        MarkList l = { mark, stack, &n };
        if (tape_opcode(i) == OP_DERIV) {     /* the expansion standing for it */
            uint32_t which, call = tape_deriv_call_of(i, &which);
            DerivRec *r = tape_deriv_call(call);
            if (r->exp_lo) push_mark(mark, stack, &n, tape_pool_at(r->exp_off)[which]);
            if (call_seen[call]) continue;
            call_seen[call] = 1;
        }
        tape_each_operand(i, push_operand, &l);
        if (tape_has_side(i)) tape_each_extra_id(i, push_extra, &l);   /* a fixed point's group */
    }
    err_scratch_free(call_seen);
    err_scratch_free(stack);
    return mark;
}

/* ----------------------------------------------------------- expansions */

/* The entries an expansion appended, [lo, hi]: from its first entry to the
 * last of its results. Expansions made during another one lie inside it,
 * so the intervals nest (a partial overlap is clipped to keep it so). */
typedef struct {
    uint32_t lo, hi, rec;
} Span;

static int cmp_span(const void *a, const void *b)
{
    const Span *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return x->hi > y->hi ? -1 : x->hi < y->hi;
}

static Span *expansion_spans(uint32_t *count)
{
    Span *s = err_scratch(sizeof(Span) * (tape_deriv_calls() + 1));
    uint32_t n = 0;
    for (uint32_t r = 0; r < tape_deriv_calls(); r++) {
        DerivRec *d = tape_deriv_call(r);
        if (!d->exp_lo || d->exp_lo >= tape_size()) continue;
        uint32_t hi = d->exp_lo;
        for (uint32_t w = 0; w < d->nwrt; w++) {
            uint32_t id = tape_pool_at(d->exp_off)[w];
            if (id > hi && id < tape_size()) hi = id;
        }
        s[n++] = (Span){d->exp_lo, hi, r};
    }
    qsort(s, n, sizeof(Span), cmp_span);
    for (uint32_t i = 1; i < n; i++)    /* clip to the enclosing span */
        for (uint32_t j = i; j-- > 0;)
            if (s[j].lo <= s[i].lo && s[i].lo <= s[j].hi) {
                if (s[i].hi > s[j].hi) s[i].hi = s[j].hi;
                break;
            }
    *count = n;
    return s;
}

/* ---------------------------------------------------------------- DOT */

static void write_node(FILE *f, uint32_t i, EntryLabel label, const char *indent)
{
    char name[64] = "", val[64], extra[32] = "";
    label(i, name, sizeof name);
    num_format(tape_val(i), val, sizeof val);
    int op = tape_opcode(i);
    if (op == OP_DERIV) snprintf(extra, sizeof extra, " d(#%u)", tape_deriv_call(tape_a(i))->y);
    fprintf(f, "%sn%u [label=\"#%u %s%s\\n%s%s%s\"", indent, i, i, num_op_names[op], extra, name,
            name[0] ? " = " : "", val);
    if (op == OP_DERIV) fprintf(f, ", " DERIV_STYLE);
    else if (op == OP_CONST) fprintf(f, ", shape=ellipse, color=gray55, fontcolor=gray35");
    else if (name[0]) fprintf(f, ", style=bold");
    fprintf(f, "];\n");
}

static void write_edge(FILE *f, const uint8_t *sel, uint32_t from, uint32_t to, const char *attrs)
{
    if (from && from < tape_size() && sel[from]) fprintf(f, "  n%u -> n%u%s;\n", from, to, attrs);
}

typedef struct { FILE *f; const uint8_t *sel; uint32_t to; } EdgeTo;
static void loop_edge(uint32_t id, void *ud)
{
    EdgeTo *e = ud;
    write_edge(e->f, e->sel, id, e->to, "");
}

static void write_edges(FILE *f, const uint8_t *sel, uint32_t i)
{
    int op = tape_opcode(i);
    TapeArgs g = tape_args(i);
    if (op == OP_SUM || op == OP_LSE) {
        TapeTerms t = op == OP_SUM ? tape_terms(i) : tape_lse(i).t;
        for (uint32_t j = 0; j < t.n; j++) write_edge(f, sel, tape_term(t, j), i, "");
    }
    else if (op == OP_DOT) for (uint32_t j = 0; j < 2 * g.b; j++) write_edge(f, sel, tape_pool_at(g.a)[j], i, "");
    else if (op == OP_CKPT) {       /* a checkpointed loop: its inputs */
        EdgeTo e = { f, sel, i };
        tape_each_operand(i, loop_edge, &e);
    }
    else if (op == OP_DERIV) {
        DerivRec *r = tape_deriv_call(g.a);
        write_edge(f, sel, r->y, i, " [style=dashed, color=\"#d55e00\", label=\"d\"]");
        if (g.b < r->nwrt)
            write_edge(f, sel, tape_deriv_wrt(r, g.b), i, " [style=dotted, color=\"#d55e00\", label=\"wrt\"]");
        if (r->exp_lo && g.b < r->nwrt)
            write_edge(f, sel, tape_pool_at(r->exp_off)[g.b], i, " [style=dotted, color=\"#7a9cc6\", label=\"expanded\"]");
    } else if (op == OP_FIXPT) {
        const FixSide *s = fixtape_side(i);
        write_edge(f, sel, g.b, i, "");
        write_edge(f, sel, s->ids[s->n + fixtape_index(s, g.b)], i, " [style=dashed, label=\"g\"]");
    } else {
        if (num_op_arity[op] >= 1) write_edge(f, sel, g.a, i, "");
        if (num_op_arity[op] == 2) write_edge(f, sel, g.b, i, "");
    }
}

/* Set when a Ctrl-C stopped write_dot part way: the caller tidies up (a
 * temporary file, a half-written one) and then reports "interrupted". */

/* Nodes in tape order, each expansion's entries inside its cluster. */
static uint32_t write_dot(FILE *f, const uint8_t *sel, const char *title, EntryLabel label)
{
    fprintf(f, "digraph tape {\n  rankdir=BT;\n  node [shape=box, fontname=\"monospace\"];\n");
    if (title) fprintf(f, "  label=\"%s\";\n  labelloc=t;\n", title);
    uint32_t nspans, count = 0;
    Span *spans = expansion_spans(&nspans);
    uint32_t *open = err_scratch(sizeof(uint32_t) * (nspans + 1)), nopen = 0, next = 0;
    uint8_t *shown = err_scratch(nspans + 1);   /* by depth: the open cluster was written */
    /* a cluster is written only if it holds a selected entry */
    uint32_t *before = err_scratch(sizeof(uint32_t) * ((size_t)tape_size() + 1));
    for (uint32_t i = 0; i < tape_size(); i++) before[i + 1] = before[i] + (i ? sel[i] : 0);
    G->tapeview.dot_stopped = 0;
    for (uint32_t i = 1; i < tape_size(); i++) {
        if ((i & 0xfff) == 0 && err_interrupted) {
            G->tapeview.dot_stopped = 1;
            break;
        }
        while (nopen && spans[open[nopen - 1]].hi < i) {
            nopen--;
            if (shown[nopen]) fprintf(f, "%*s}\n", 2 * (int)nopen + 2, "");
        }
        while (next < nspans && spans[next].lo == i) {
            Span *s = &spans[next];
            shown[nopen] = before[s->hi + 1] > before[s->lo];
            if (shown[nopen]) {
                fprintf(f, "%*ssubgraph cluster_x%u {\n", 2 * (int)nopen + 2, "", s->rec);
                fprintf(f, "%*slabel=\"expansion of d(#%u)\"; " CLUSTER_STYLE "\n", 2 * (int)nopen + 4, "",
                        tape_deriv_call(s->rec)->y);
            }
            open[nopen++] = next;
            next++;
        }
        if (!sel[i]) continue;
        char indent[64];
        snprintf(indent, sizeof indent, "%*s", 2 * (int)nopen + 2, "");
        write_node(f, i, label, indent);
        count++;
    }
    while (nopen) {
        nopen--;
        if (shown[nopen]) fprintf(f, "%*s}\n", 2 * (int)nopen + 2, "");
    }
    for (uint32_t i = 1; i < tape_size() && !G->tapeview.dot_stopped; i++) {
        if ((i & 0xfff) == 0 && err_interrupted) G->tapeview.dot_stopped = 1;
        else if (sel[i]) write_edges(f, sel, i);
    }
    fprintf(f, "}\n");
    err_scratch_free(before);
    err_scratch_free(shown);
    err_scratch_free(open);
    err_scratch_free(spans);
    return count;
}

/* ------------------------------------------------------------ Graphviz */

/* dot's path from PATH, or 0 if it is not installed. */
static int find_dot(char *buf, size_t size)
{
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        if (n) {
            snprintf(buf, size, "%.*s/dot", (int)n, path);
            if (access(buf, X_OK) == 0) return 1;
        }
        path += n + (end != NULL);
    }
    return 0;
}

/* Runs `dot -Tsvg|png -o file dotfile`; 0 on success. */
static int run_dot(const char *prog, const char *format, const char *file, const char *dotfile)
{
    char fmt[16];
    snprintf(fmt, sizeof fmt, "-T%s", format);
    char *argv[] = {"dot", fmt, "-o", (char *)file, (char *)dotfile, NULL};
    pid_t pid;
    io_flush();
    if (posix_spawn(&pid, prog, NULL, NULL, argv, environ) != 0) return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A nonempty regular file is there. */
static int written(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

/* dot draws into a temporary file beside FILE, renamed to FILE once it
 * is there whole: an interrupted or failed drawing leaves FILE as it was
 * (Graphviz exits 0 when Ctrl-C stops it, having written nothing). */
static void render(const uint8_t *sel, const char *title, const char *file, EntryLabel label)
{
    const char *format = ends_with(file, ".svg") ? "svg" : "png";
    char prog[4096];
    if (!find_dot(prog, sizeof prog))
        err_raise("drawing '%s' needs Graphviz's dot program, which is not installed: "
                 "apt-get install graphviz (or write the DOT text: ':tape dot FILE.dot')", file);
    char tmp[] = "/tmp/wengert-tape-XXXXXX";
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0) close(fd);
        err_raise("cannot write a temporary file for dot in /tmp");
    }
    uint32_t count = write_dot(f, sel, title, label);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (G->tapeview.dot_stopped) {
        unlink(tmp);
        err_check_interrupt_now();
    }
    char *out = err_scratch(strlen(file) + 32);
    sprintf(out, "%s.wengert-XXXXXX", file);
    int ofd = bad ? -1 : mkstemp(out);
    if (ofd >= 0) {
        mode_t mask = umask(0);       /* the picture gets a new file's usual mode */
        umask(mask);
        fchmod(ofd, 0666 & ~mask);
        close(ofd);
    }
    int rc = bad ? -2 : ofd < 0 ? -3 : run_dot(prog, format, out, tmp);
    unlink(tmp);
    if (rc == -2) err_raise("cannot write a temporary file for dot in /tmp");
    if (rc == -3) err_raise("cannot write '%s': %s", file, strerror(errno));
    if (err_interrupted) {         /* Ctrl-C reached dot too */
        unlink(out);
        err_check_interrupt_now();
    }
    if (rc != 0 || !written(out)) {
        unlink(out);
        if (rc != 0) err_raise("Graphviz's dot could not draw '%s' (exit status %d)", file, rc);
        err_raise("Graphviz's dot wrote nothing for '%s'", file);
    }
    if (rename(out, file) != 0) {
        int e = errno;
        unlink(out);
        err_raise("cannot write '%s': %s", file, strerror(e));
    }
    err_scratch_free(out);
    io_out("wrote %s (%u entries)\n", file, count);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len + 4096 > cap) {
            char *b = realloc(buf, cap = (*len + 4096) * 2);
            if (!b) break;
            buf = b;
        }
        size_t got = fread(buf + *len, 1, cap - *len, f);
        if (!got) break;
        *len += got;
    }
    fclose(f);
    return buf;
}

/* A notebook (eval_display) shows the graph as SVG, with its DOT text as
 * the fallback; without Graphviz the DOT text is all it gets. */
static void display_graph(const uint8_t *sel, const char *title, EntryLabel label)
{
    char *text = NULL, prog[4096];
    size_t ntext = 0;
    FILE *f = open_memstream(&text, &ntext);
    if (!f) err_raise("out of memory");
    write_dot(f, sel, title, label);
    fclose(f);
    if (G->tapeview.dot_stopped) {
        free(text);
        err_check_interrupt_now();
    }
#ifdef __EMSCRIPTEN__
    /* a web page (web/) has no dot program: it lays the DOT text out itself */
    G->eval.display("text/vnd.graphviz", text, ntext, text);
    free(text);
    return;
#endif
    char dotfile[] = "/tmp/wengert-tape-XXXXXX", svgfile[] = "/tmp/wengert-svg-XXXXXX";
    int fd = -1, fs = -1, shown = 0;
    if (find_dot(prog, sizeof prog) && (fd = mkstemp(dotfile)) >= 0 && (fs = mkstemp(svgfile)) >= 0 &&
        write(fd, text, ntext) == (ssize_t)ntext && run_dot(prog, "svg", svgfile, dotfile) == 0) {
        size_t nsvg;
        char *svg = slurp(svgfile, &nsvg);
        if (svg && nsvg) {
            G->eval.display("image/svg+xml", svg, nsvg, text);
            shown = 1;
        }
        free(svg);
    }
    if (fd >= 0) { close(fd); unlink(dotfile); }
    if (fs >= 0) { close(fs); unlink(svgfile); }
    if (!shown) io_write(IO_OUT, text, ntext);
    free(text);
}

/* Graphviz lays out a few thousand nodes in seconds; the whole tape of a
 * long loop (millions) it cannot, and its DOT text alone would be
 * gigabytes. Past these sizes the command says how to draw less. */
#define DOT_PICTURE_MAX 5000u
#define DOT_TEXT_MAX    1000000u

static void check_size(const char *name, const char *file, uint32_t count, int picture)
{
    uint32_t max = picture ? DOT_PICTURE_MAX : DOT_TEXT_MAX;
    if (count <= max) return;
    const char *what = picture ? "a picture" : "DOT text";
    if (!name)
        err_raise("the tape has %u entries, too many for %s (at most %u): draw what one variable "
                 "depends on with ':tape dot NAME%s%s'%s", count, what, max, file ? " " : "", file ? file : "",
                 picture ? ", or write the DOT text with ':tape dot FILE.dot'" : "");
    err_raise("'%s' depends on %u entries, too many for %s (at most %u): draw a variable made in "
             "fewer steps (a smaller case of the computation, after ':tape clear')%s", name, count, what, max,
             picture ? ", or write the DOT text with ':tape dot NAME FILE.dot'" : "");
}

void tapedot_command(const char *args, EntryLabel label)
{
    char words[3][1024] = {"", "", ""};
    int n = 0;
    while (*args && n < 3) {
        size_t k = 0;
        while (*args && *args != ' ' && *args != '\t') {
            if (k + 1 < sizeof words[n]) words[n][k++] = *args;
            args++;
        }
        words[n++][k] = 0;
        while (*args == ' ' || *args == '\t') args++;
    }
    if (n == 3) err_raise("':tape dot' takes a NAME, a FILE, or both: ':tape dot x cone.svg'");
    const char *name = NULL, *file = NULL;
    if (n == 2) name = words[0], file = words[1];
    else if (n == 1 && is_file_name(words[0])) file = words[0];
    else if (n == 1) name = words[0];

    uint8_t *sel;
    char title[1200], *tp = NULL;
    uint32_t count;
    if (name) {
        Global *g = tapeview_variable(name);
        sel = cone(g->v);
        snprintf(title, sizeof title, "the entries that %s depends on", name);
        tp = title;
        count = 0;
        for (uint32_t i = 1; i < tape_size(); i++) count += sel[i];
    } else {
        sel = err_scratch(tape_size());
        memset(sel + 1, 1, tape_size() - 1);
        count = tape_size() - 1;
    }
    int picture = (file && (ends_with(file, ".svg") || ends_with(file, ".png"))) || (!file && G->eval.display);
    check_size(name, file, count, picture);
    if (file && picture) render(sel, tp, file, label);
    else if (file) {
        FILE *f = fopen(file, "w");
        if (!f) err_raise("cannot write '%s'", file);
        count = write_dot(f, sel, tp, label);
        int bad = ferror(f);
        if (fclose(f) != 0 || bad) err_raise("could not write '%s'", file);
        if (G->tapeview.dot_stopped) {
            unlink(file);
            err_check_interrupt_now();
        }
        io_out("wrote %s (%u entries)\n", file, count);
    } else if (G->eval.display) display_graph(sel, tp, label);
    else {
        char *text = NULL;
        size_t ntext = 0;
        FILE *m = open_memstream(&text, &ntext);
        if (!m) err_raise("out of memory");
        write_dot(m, sel, tp, label);
        fclose(m);
        io_write(IO_OUT, text, ntext);
        free(text);
        if (G->tapeview.dot_stopped) err_check_interrupt_now();
    }
    err_scratch_free(sel);
}
