/* tapeview.c: looking inside the session tape (SPEC "REPL commands"):
 * `:tape`, `:tape all`, `:tape NAME`, `:tape stats`, `:tape kinks`,
 * `:tape clear`, `:tape limit`, and the labels `:tape dot` draws with. It
 * reads the tape through its reader API only (tape.h). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tapeview.h"
#include "cmd.h"
#include "eval.h"
#include "tape.h"
#include "tapegc.h"
#include "ckpt.h"
#include "sweep.h"
#include "error.h"
#include "valuegc.h"
#include "ad.h"
#include "kinks.h"
#include "tapedot.h"
#include "fixtape.h"
#include "fixtape.h"
#include "state.h"

/* ------------------------------------------------------ tape labels */

/* The label of an entry that is a variable version: a global's x@k, an
 * element of a top-level array as it is now (a[i]), or an element of an
 * earlier version (a@k[i]), in that order of preference; "(local)" for a
 * function's variables. Labels are found for a set of entries at a time
 * (the ones a command shows) by one walk over the globals' values and
 * version logs: no array version is replayed, and the memory is the set's,
 * so `:tape` and `:tape NAME` cost the same on a tape of a million
 * entries as on one of ten. A run of element writes or a snapshot whose
 * entries are consecutive is one range, looked up by binary search. */
enum { LAB_NONE, LAB_HIST, LAB_ELEM, LAB_VERSION };   /* in increasing preference */
typedef struct Label { int kind, owner, index, k; } Label;

#define LABEL_WINDOW (1 << 20)     /* entries a window labels at most */

static void forget_labels(void)
{
    free(G->tapeview.lab_ids);
    free(G->tapeview.lab_of);
    G->tapeview.lab_ids = NULL;
    G->tapeview.lab_of = NULL;
    G->tapeview.nlab = 0;
    G->tapeview.lab_lo = G->tapeview.lab_hi = 0;
    G->tapeview.lab_lazy = 0;
}

/* The first position in the set holding an id >= id. */
static int lab_lower(uint32_t id)
{
    int lo = 0, hi = G->tapeview.nlab;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (G->tapeview.lab_ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void lab_offer(int at, int kind, int owner, int index, int k)
{
    Label *l = &G->tapeview.lab_of[at];
    if (kind < l->kind) return;
    if (kind == l->kind && (kind != LAB_HIST || k >= l->k)) return;   /* the first, or the earliest version */
    *l = (Label){ kind, owner, index, k };
}

static void lab_offer_id(uint32_t id, int kind, int owner, int index, int k)
{
    if (!G->tapeview.nlab || id < G->tapeview.lab_ids[0] || id > G->tapeview.lab_ids[G->tapeview.nlab - 1]) return;
    int at = lab_lower(id);
    if (at < G->tapeview.nlab && G->tapeview.lab_ids[at] == id) lab_offer(at, kind, owner, index, k);
}

/* Entries first, first + 1, ... of a run: element index + j at version k + step * j. */
static void lab_offer_run(uint32_t first, int len, int owner, int index, int k, int step)
{
    if (!G->tapeview.nlab || len <= 0 || first > G->tapeview.lab_ids[G->tapeview.nlab - 1] || first + (uint32_t)len <= G->tapeview.lab_ids[0]) return;
    for (int at = lab_lower(first); at < G->tapeview.nlab && G->tapeview.lab_ids[at] - first < (uint32_t)len; at++) {
        int j = (int)(G->tapeview.lab_ids[at] - first);
        lab_offer(at, LAB_HIST, owner, index + j, k + step * j);
    }
}

/* Fills lab_of[] for the set lab_ids[0..nlab). */
static void label_set(void)
{
    G->tapeview.lab_of = err_calloc((size_t)G->tapeview.nlab + 1, sizeof(Label));
    if (!G->tapeview.nlab) return;
    for (int g = 0; g < G->eval.nglobals; g++) {
        const VerLog *log = &G->eval.globals[g].ver;
        for (int i = 0; i < log->n; i++) lab_offer_id(log->ids[i], LAB_VERSION, g, 0, log->ks[i]);
        if (G->eval.globals[g].v.t == V_ARR) {
            Storage *s = AS_ARR(G->eval.globals[g].v);
            for (int i = 0; i < s->n; i++)
                if (s->v[i].id) lab_offer_id(s->v[i].id, LAB_ELEM, g, i, 0);
        }
        if (G->eval.globals[g].v.t == V_NUM || G->eval.globals[g].v.t == V_UNDEF) continue;
        for (int w = 0; w < log->nwrites; w++) {
            const ArrayWrite *aw = &log->writes[w];
            if (aw->index >= 0) {
                if (aw->at == WRITES_IN_ORDER) lab_offer_run(aw->first, aw->len, g, aw->index, aw->k, 1);
                else
                    for (int j = 0; j < aw->len; j++)
                        lab_offer_id(log->wids[aw->at + j], LAB_HIST, g, aw->index + j, aw->k + j);
                continue;
            }
            const Snapshot *snap = &log->snaps[aw->at];
            if (!snap->ids) lab_offer_run(snap->first, snap->len, g, 0, aw->k, 0);
            else
                for (int i = 0; i < snap->len; i++)
                    if (snap->ids[i]) lab_offer_id(snap->ids[i], LAB_HIST, g, i, aw->k);
        }
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Labels for the given entries (any order; those that are not versions
 * are left out). */
static void label_entries(const uint32_t *ids, int n)
{
    forget_labels();
    G->tapeview.lab_ids = err_malloc(sizeof(uint32_t) * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        if (ids[i] && ids[i] < tape_size() && tape_labeled(ids[i])) G->tapeview.lab_ids[G->tapeview.nlab++] = ids[i];
    qsort(G->tapeview.lab_ids, (size_t)G->tapeview.nlab, sizeof(uint32_t), cmp_u32);
    int u = 0;
    for (int i = 0; i < G->tapeview.nlab; i++)
        if (!u || G->tapeview.lab_ids[u - 1] != G->tapeview.lab_ids[i]) G->tapeview.lab_ids[u++] = G->tapeview.lab_ids[i];
    G->tapeview.nlab = u;
    label_set();
}

/* Lazy mode: the labelled entries from id on, LABEL_WINDOW of them at most. */
static void label_window(uint32_t id)
{
    free(G->tapeview.lab_ids);
    free(G->tapeview.lab_of);
    G->tapeview.lab_ids = NULL;         /* (an allocation that fails leaves nothing to free twice) */
    G->tapeview.lab_of = NULL;
    G->tapeview.nlab = 0;
    G->tapeview.lab_ids = err_malloc(sizeof(uint32_t) * LABEL_WINDOW);
    uint32_t i = id;
    for (; i < tape_size() && G->tapeview.nlab < LABEL_WINDOW; i++)
        if (tape_labeled(i)) G->tapeview.lab_ids[G->tapeview.nlab++] = i;
    G->tapeview.lab_lo = id;
    G->tapeview.lab_hi = i;
    label_set();
}

static int entry_label(uint32_t id, char *buf, size_t size)
{
    if (!(tape_labeled(id))) return 0;
    if (G->tapeview.lab_lazy && (id < G->tapeview.lab_lo || id >= G->tapeview.lab_hi)) label_window(id);
    int at = G->tapeview.nlab ? lab_lower(id) : 0;
    const Label *l = at < G->tapeview.nlab && G->tapeview.lab_ids[at] == id ? &G->tapeview.lab_of[at] : NULL;
    if (!l || l->kind == LAB_NONE) snprintf(buf, size, "(local)");
    else if (l->kind == LAB_VERSION) snprintf(buf, size, "%s@%d", G->eval.globals[l->owner].name, l->k);
    else if (l->kind == LAB_ELEM) snprintf(buf, size, "%s[%d]", G->eval.globals[l->owner].name, l->index);
    else snprintf(buf, size, "%s@%d[%d]", G->eval.globals[l->owner].name, l->k, l->index);
    return 1;
}

static void print_entry(uint32_t i)
{
    char label[64] = "", args[64] = "", val[64];
    entry_label(i, label, sizeof label);
    int op = tape_opcode(i);
    TapeArgs g = tape_args(i);
    if (op == OP_LSE) {          /* logsumexp(#first..#last), or of n operands */
        TapeTerms t = tape_lse(i).t;
        if (t.list) snprintf(args, sizeof args, "%u operands", t.n);
        else snprintf(args, sizeof args, "#%u..#%u", t.first, t.first + t.n - 1);
    }
    else if (op == OP_SUM || op == OP_DOT)
        snprintf(args, sizeof args, "%u operands", op == OP_DOT ? 2 * g.b : g.b & ~TAPE_SUM_RUN);
    else if (op == OP_DERIV)
        snprintf(args, sizeof args, "d(#%u)", tape_deriv_call(g.a)->y);
    else if (op == OP_CKOUT)
        snprintf(args, sizeof args, "#%u[%u]", g.a, g.b);
    else if (op == OP_FIXPT) {      /* its stand-in, and g's result there */
        const FixSide *s = fixtape_side(i);
        snprintf(args, sizeof args, "#%u g:#%u", g.b, s->ids[s->n + fixtape_index(s, g.b)]);
    }
    else if (num_op_arity[op] >= 1) {
        /* operand 0 is a constant that the rule does not need */
        char a[16] = "const", b[16] = "const";
        if (g.a) snprintf(a, sizeof a, "#%u", g.a);
        if (g.b) snprintf(b, sizeof b, "#%u", g.b);
        snprintf(args, sizeof args, num_op_arity[op] == 2 ? "%s %s" : "%s", a, b);
    }
    num_format(tape_val(i), val, sizeof val);
    io_out("%8u  %-12s %-6s %-16s %s\n", i, label, num_op_names[op], args, val);
}

/* Marks every entry the given entries depend on. */
static void mark_operand(uint32_t id, void *mark) { ((uint8_t *)mark)[id] = 1; }

/* The entries the given ones depend on: one downward pass, since every
 * operand lies below the entry that reads it. */
static void mark_extra(uint32_t *id, void *mark) { if (*id < tape_size()) ((uint8_t *)mark)[*id] = 1; }

static uint8_t *cone_of(const uint32_t *ids, int n)
{
    uint8_t *mark = err_scratch(tape_size());
    /* the n entries of one d call over n places all read its y and its n
     * places: they are marked once a call, or a gradient over a million
     * places would cost 10^12 steps */
    uint8_t *call_seen = err_scratch(tape_deriv_calls() + 1);
    uint32_t top = 0;
    for (int i = 0; i < n; i++) {
        if (ids[i] && ids[i] < tape_size()) mark[ids[i]] = 1;
        if (ids[i] > top && ids[i] < tape_size()) top = ids[i];
    }
    for (uint32_t i = top; i > 0; i--) {
        if (!mark[i]) continue;
        if ((i & 0xfffff) == 0) err_check_interrupt();
        if (tape_opcode(i) == OP_DERIV) {
            uint32_t call = tape_deriv_call_of(i, NULL);
            if (call_seen[call]) continue;
            call_seen[call] = 1;
        }
        tape_each_operand(i, mark_operand, mark);
        if (tape_has_side(i)) tape_each_extra_id(i, mark_extra, mark);   /* a fixed point's group */
    }
    err_scratch_free(call_seen);
    mark[0] = 0;
    return mark;
}

/* The entries a value holds, as scratch (an error while its cone is
 * marked gives them back). */
static int value_ids(Value v, uint32_t **ids)
{
    if (v.t == V_NUM) {
        *ids = err_scratch(sizeof(uint32_t));
        (*ids)[0] = v.id;
        return 1;
    }
    if (is_seq(v)) {
        int n = seq_len(v);
        *ids = err_scratch(sizeof(uint32_t) * (size_t)(n ? n : 1));
        for (int i = 0; i < n; i++) (*ids)[i] = seq_at(v, i)->id;
        return n;
    }
    *ids = NULL;
    return 0;
}

static void tape_header(void)
{
    io_out("tape: %u entries, %zu bytes\n", tape_size() - 1, tape_bytes());
}

/* Entries from..to-1, labelled. */
static void tape_list(uint32_t from)
{
    tape_header();
    if (from < 1) from = 1;
    if (tape_size() - from <= 20) {         /* the latest: labelled in one go */
        uint32_t ids[20];
        int n = 0;
        for (uint32_t i = from; i < tape_size(); i++) ids[n++] = i;
        label_entries(ids, n);
    } else G->tapeview.lab_lazy = 1;                    /* all of them: window after window */
    for (uint32_t i = from; i < tape_size(); i++) {
        if ((i & 0xffff) == 0) err_check_interrupt();
        print_entry(i);
    }
}

/* The variable :tape NAME and :tape dot NAME show: one that holds numbers
 * (a builtin's or a function's name says what it is instead). */
Global *tapeview_variable(const char *name)
{
    Global *g = eval_global_lookup(name);
    if (!g || g->v.t == V_UNDEF) err_raise("no variable named '%s'", name);
    if (g->v.t == V_BUILTIN)
        err_raise("'%s' is a builtin function, not a variable: :tape NAME shows what a variable's numbers depend on", name);
    if (g->v.t == V_FN)
        err_raise("'%s' is a function, not a variable of numbers: :tape NAME shows what a variable's numbers depend on", name);
    return g;
}

static void tape_depends(const char *name)
{
    Global *g = tapeview_variable(name);
    uint32_t *ids;
    int n = value_ids(g->v, &ids);
    uint8_t *mark = cone_of(ids, n);
    err_scratch_free(ids);
    uint32_t count = 0;
    for (uint32_t i = 1; i < tape_size(); i++) count += mark[i];
    io_out("tape: %u entries that %s depends on\n", count, name);
    uint32_t latest[20] = {0};      /* the latest 20, as :tape */
    int nlatest = 0;
    for (uint32_t i = tape_size(); i-- > 1 && nlatest < 20;)
        if (mark[i]) latest[nlatest++] = i;
    label_entries(latest, nlatest);
    for (int k = nlatest; k-- > 0;) print_entry(latest[k]);
    if (count > 20) io_out("  (%u earlier entries that %s depends on; ':tape all' lists every entry)\n", count - 20, name);
    err_scratch_free(mark);
}

static void tape_stats(void)
{
    uint64_t count[OP_COUNT] = {0}, wide[OP_COUNT] = {0}, nwide = 0;
    for (uint32_t i = 1; i < tape_size(); i++) {
        int op = tape_opcode(i), w = tape_wide(i);
        count[op]++;
        wide[op] += w;
        nwide += w;
    }
    size_t per = sizeof(uint32_t) + sizeof(double), wide_bytes = sizeof(TapeArgs);
    tape_header();
    io_out("  %-10s %10s %14s\n", "op", "entries", "bytes");
    size_t total = 0;
    for (int op = 0; op < OP_COUNT; op++) {
        if (!count[op]) continue;
        size_t bytes = count[op] * per + wide[op] * wide_bytes;
        io_out("  %-10s %10llu %14zu\n", num_op_names[op], (unsigned long long)count[op], bytes);
        total += bytes;
    }
    size_t versions = 0;
    for (int g = 0; g < G->eval.nglobals; g++)    /* numbers, and arrays whole and by element */
        versions += version_log_kept(&G->eval.globals[g].ver);
    /* the rows, then what is no entry's own: the sum is the header's bytes */
    size_t zero = per, far = tape_far_count() * sizeof(uint32_t), lists = tape_pool_size() * sizeof(uint32_t),
           calls = (size_t)tape_deriv_calls() * sizeof(DerivRec);
    double all = tape_size() > 1 ? (double)tape_bytes() / (tape_size() - 1) : (double)per;
    io_out("  bytes: rows %zu + entry #0 %zu + far ids %zu + op lists %zu + d calls %zu = %zu (%.1f an entry; "
           "an entry is %zu: op and operand fields %zu, saved value %zu; a wide one %zu more)\n",
           total, zero, far, lists, calls, total + zero + far + lists + calls, all, per, sizeof(uint32_t),
           sizeof(double), wide_bytes);
    io_out("  operands: %llu wide entries (%zu bytes more each), %zu far operand ids\n",
           (unsigned long long)nwide, wide_bytes, tape_far_count());
    io_out("  saved values: %u (each entry keeps the value its reverse rule reads; "
           "overwritten variables keep theirs in older entries)\n", tape_size() - 1);
    io_out("  operand lists (sum, dot, d): %zu ids\n", tape_pool_size());
    io_out("  variable versions: %zu\n", versions);
    io_out("  adjoint sweeps run: %llu; derivatives expanded for higher order: %llu\n",
           (unsigned long long)G->tape.sweeps, (unsigned long long)G->tape.expansions);
    if (G->ckpt.steps_run)
        io_out("  checkpointed loops: %llu steps run, %llu recomputed by sweeps (%.2f a step)\n",
               G->ckpt.steps_run, G->ckpt.steps_recomputed, (double)G->ckpt.steps_recomputed / (double)G->ckpt.steps_run);
    jac_stats();
    char gone[32];
    cmd_fmt_bytes(G->tape.reclaimed_bytes, gone, sizeof gone);
    io_out("  reclaimed: %llu entries (%s) that nothing could reach, in %llu passes "
           "(entry numbers are positions: the entries after a reclaimed one move down)\n",
           (unsigned long long)G->tape.reclaimed, gone, (unsigned long long)G->tape.reclaims);
    if (num_backend_is_posit(G->num.backend))
        io_out("  quire: %d bits, used by sum, dot and by reverse sweeps to add up adjoints\n",
               num_formats[G->num.backend].posit->quire_bits);
    char lim[32], used[32];
    cmd_fmt_bytes(G->tape.limit, lim, sizeof lim);
    cmd_fmt_bytes(tape_bytes(), used, sizeof used);
    io_out("  in use: %s of a limit of %s\n", used, lim);
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
    sweep_forget();
    gc_strip_ids();
    for (int g = 0; g < G->eval.nglobals; g++) {
        Global *gl = &G->eval.globals[g];
        if (gl->v.t == V_NUM) gl->v.id = 0;
        int count = gl->ver.count;
        version_log_free(&gl->ver);
        gl->ver.count = count;
        if (gl->v.t == V_NUM && gl->ver.count) version_log_push(&gl->ver, version_label_number(&gl->v));
        if (gl->v.t == V_ARR && gl->ver.count) storage_dirty(AS_ARR(gl->v));
        if (gl->v.t == V_ARR && gl->ver.count)
            for (int i = 0; i < AS_ARR(gl->v)->n; i++) version_label_number(&AS_ARR(gl->v)->v[i]);
        /* (array versions before the clear are forgotten with the tape) */
    }
}

static void tape_subcommand(const char *args);

/* :tape reclaim: give back now what nothing can reach (it happens by
 * itself as the tape grows; this is for looking at it). */
static void tape_reclaim_now(void)
{
    char b[32];
    if (!eval_outside_calls() || G->ad.nesting)
        err_raise("':tape reclaim' runs outside functions only (inside one, its loops reclaim as they go)");
    size_t bytes = tape_bytes();
    gc_collect();        /* closures no one holds let go of what they captured */
    uint32_t gone = reclaim_now(reclaim_everything());
    cmd_fmt_bytes(bytes - tape_bytes(), b, sizeof b);
    io_out("reclaimed %u entries (%s); tape: %u entries, %zu bytes\n", gone, b, tape_size() - 1, tape_bytes());
}

/* The first entry `:tape` lists: the latest 20. */
static uint32_t latest_from(void) { return tape_size() > 20 ? tape_size() - 20 : 1; }

void tapeview_command(const char *args)
{
    char sub[64];
    cmd_word(args, sub, sizeof sub);
    if (!strcmp(sub, "reclaim")) {
        tape_reclaim_now();
        return;
    }
    forget_labels();      /* a previous command may have stopped on an error */
    if (!strcmp(sub, "dot")) G->tapeview.lab_lazy = 1;     /* labelled in tape order, window after window */
    tape_subcommand(args);
    forget_labels();
}

static void tape_subcommand(const char *args)
{
    char sub[64];
    const char *rest = cmd_word(args, sub, sizeof sub);
    if (!sub[0]) {
        uint32_t from = latest_from();
        tape_list(from);
        if (from > 1) io_out("  (%u earlier entries: ':tape all' shows them)\n", from - 1);
    } else if (!strcmp(sub, "all")) tape_list(1);
    else if (!strcmp(sub, "stats")) tape_stats();
    else if (!strcmp(sub, "kinks")) kink_list();
    else if (!strcmp(sub, "dot")) tapedot_command(rest, entry_label);
    else if (!strcmp(sub, "clear")) {
        if (G->ad.nesting) err_raise("':tape clear' cannot run while grad or hvp is differentiating");
        /* a running call holds numbers (and its own versions) in places
         * the clear cannot reach: they would name entries of the new tape */
        if (!eval_outside_calls()) err_raise("':tape clear' runs outside functions only");
        tape_forget();
    }
    else if (!strcmp(sub, "limit")) {
        char b[32];
        if (*rest) {
            size_t lim;
            if (!parse_size(rest, &lim)) err_raise("':tape limit' takes a size like 512KB, 64MB or 2GB");
            tape_set_limit(lim);
            reclaim_reset();     /* the next pass comes before the new cap */
        }
        cmd_fmt_bytes(G->tape.limit, b, sizeof b);
        io_out("tape limit: %s (in use: %zu bytes)\n", b, tape_bytes());
    } else tape_depends(sub);
}

