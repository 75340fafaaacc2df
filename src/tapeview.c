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
#include "reclaim.h"
#include "sweep.h"
#include "error.h"
#include "gc.h"
#include "ad.h"
#include "kinks.h"
#include "tapedot.h"
#include "fixpt.h"

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
 * then by k. Read straight from the version logs: an element write made
 * its entry at the version it records, and a whole-array snapshot holds
 * its elements' entries at its version; the earliest k an entry appears
 * at is its label. No version is replayed, so a million element writes
 * cost a million records, not a million arrays. Each array gives at most
 * HIST_PER_ARRAY records, its latest. */
#define HIST_PER_ARRAY (2 << 20)
typedef struct { uint32_t id; int owner, index, k; } HistElem;
static HistElem *hist;
static int nhist;

static int cmp_hist(const void *a, const void *b)
{
    const HistElem *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

static void history_push(size_t *cap, uint32_t min_id, uint32_t id, int owner, int index, int k)
{
    if (!id || id < min_id) return;
    if ((size_t)nhist == *cap) {
        size_t grown = 2 * *cap + 1024;
        hist = wg_realloc(hist, sizeof(HistElem) * grown);
        *cap = grown;
    }
    hist[nhist++] = (HistElem){ id, owner, index, k };
}

static void index_history(uint32_t min_id)
{
    size_t cap = 0;
    for (int g = 0; g < nglobals; g++) {
        if (globals[g].v.t == V_NUM || globals[g].v.t == V_UNDEF) continue;
        const VerLog *log = &globals[g].ver;
        int budget = HIST_PER_ARRAY;
        for (int w = log->nwrites - 1; w >= 0 && budget > 0; w--) {
            const ArrayWrite *aw = &log->writes[w];
            if (aw->index >= 0) {
                for (int j = aw->len - 1; j >= 0 && budget > 0; j--, budget--)
                    history_push(&cap, min_id, write_id(log->wids, aw, j), g, aw->index + j, aw->k + j);
                continue;
            }
            const Snapshot *snap = &log->snaps[aw->at];
            for (int i = 0; i < snap->len && budget > 0; i++, budget--) history_push(&cap, min_id, snapshot_id(snap, i), g, i, aw->k);
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

/* Indexes the labels of entries from min_id up (a listing of the latest
 * entries needs no more). */
static void index_elements(uint32_t min_id)
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
        for (int i = 0; i < s->n; i++) {
            if (s->v[i].id < min_id) continue;
            ids[k] = s->v[i].id;
            owner[k] = g;
            index[k] = i;
            order[k] = k;
            k++;
        }
    }
    nelems = k;
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
    index_history(min_id);
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
    if (!(tape_labeled(id))) return 0;
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
    TapeArgs g = tape_args(i);
    if (op == OP_SUM || op == OP_DOT)
        snprintf(args, sizeof args, "%u operands", op == OP_DOT ? 2 * g.b : g.b & ~TAPE_SUM_RUN);
    else if (op == OP_DERIV)
        snprintf(args, sizeof args, "d(#%u)", tape_deriv_call(g.a)->y);
    else if (op == OP_CKOUT)
        snprintf(args, sizeof args, "#%u[%u]", g.a, g.b);
    else if (op == OP_FIXPT) {      /* its stand-in, and g's result there */
        const FixSide *s = fixpt_side(i);
        snprintf(args, sizeof args, "#%u g:#%u", g.b, s->ids[s->n + fixpt_index(s, g.b)]);
    }
    else if (op_arity[op] >= 1) {
        /* operand 0 is a constant that the rule does not need */
        char a[16] = "const", b[16] = "const";
        if (g.a) snprintf(a, sizeof a, "#%u", g.a);
        if (g.b) snprintf(b, sizeof b, "#%u", g.b);
        snprintf(args, sizeof args, op_arity[op] == 2 ? "%s %s" : "%s", a, b);
    }
    num_format(tape_val(i), val, sizeof val);
    fprintf(f, "%8u  %-12s %-6s %-16s %s\n", i, label, op_names[op], args, val);
}

/* Marks every entry the given entries depend on. */
static void mark_operand(uint32_t id, void *mark) { ((uint8_t *)mark)[id] = 1; }

/* The entries the given ones depend on: one downward pass, since every
 * operand lies below the entry that reads it. */
static void mark_extra(uint32_t *id, void *mark) { if (*id < tape_size()) ((uint8_t *)mark)[*id] = 1; }

static uint8_t *cone_of(const uint32_t *ids, int n)
{
    uint8_t *mark = wg_calloc(tape_size(), 1);
    uint32_t top = 0;
    for (int i = 0; i < n; i++) {
        if (ids[i] && ids[i] < tape_size()) mark[ids[i]] = 1;
        if (ids[i] > top && ids[i] < tape_size()) top = ids[i];
    }
    for (uint32_t i = top; i > 0; i--)
        if (mark[i]) {
            tape_each_operand(i, mark_operand, mark);
            if (tape_has_side(i)) tape_each_extra_id(i, mark_extra, mark);   /* a fixed point's group */
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
    printf("tape: %u entries, %zu bytes\n", tape_size() - 1, tape_bytes());
}

static void tape_list(uint32_t from)
{
    tape_header();
    for (uint32_t i = from < 1 ? 1 : from; i < tape_size(); i++) print_entry(stdout, i);
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
    for (uint32_t i = 1; i < tape_size(); i++) count += mark[i];
    printf("tape: %u entries that %s depends on\n", count, name);
    uint32_t skip = count > 20 ? count - 20 : 0, seen = 0;   /* the latest 20, as :tape */
    for (uint32_t i = 1; i < tape_size(); i++)
        if (mark[i] && seen++ >= skip) print_entry(stdout, i);
    if (skip) printf("  (%u earlier entries that %s depends on; ':tape all' lists every entry)\n", skip, name);
    free(mark);
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
    printf("  %-10s %10s %14s\n", "op", "entries", "bytes");
    for (int op = 0; op < OP_COUNT; op++) {
        if (!count[op]) continue;
        size_t bytes = count[op] * per + wide[op] * wide_bytes;
        printf("  %-10s %10llu %14zu\n", op_names[op], (unsigned long long)count[op], bytes);
    }
    size_t versions = 0;
    for (int g = 0; g < nglobals; g++)    /* numbers, and arrays whole and by element */
        versions += verlog_kept(&globals[g].ver);
    double all = tape_size() > 1 ? (double)tape_bytes() / (tape_size() - 1) : (double)per;
    printf("  bytes per entry: %.1f in all (op and operand fields %zu, saved value %zu; "
           "the rest: wide entries, far operands, operand lists)\n", all, sizeof(uint32_t), sizeof(double));
    printf("  operands: %llu wide entries (%zu bytes more each), %zu far operand ids\n",
           (unsigned long long)nwide, wide_bytes, tape_far_count());
    printf("  saved values: %u (each entry keeps the value its reverse rule reads; "
           "overwritten variables keep theirs in older entries)\n", tape_size() - 1);
    printf("  operand lists (sum, dot, d): %zu ids\n", tape_pool_size());
    printf("  variable versions: %zu\n", versions);
    printf("  adjoint sweeps run: %llu; derivatives expanded for higher order: %llu\n",
           (unsigned long long)tape.sweeps, (unsigned long long)tape.expansions);
    if (ckpt_steps_run)
        printf("  checkpointed loops: %llu steps run, %llu recomputed by sweeps (%.2f a step)\n",
               ckpt_steps_run, ckpt_steps_recomputed, (double)ckpt_steps_recomputed / (double)ckpt_steps_run);
    char gone[32];
    cmd_fmt_bytes(tape.reclaimed_bytes, gone, sizeof gone);
    printf("  reclaimed: %llu entries (%s) that nothing could reach, in %llu passes "
           "(entry numbers are positions: the entries after a reclaimed one move down)\n",
           (unsigned long long)tape.reclaimed, gone, (unsigned long long)tape.reclaims);
    if (backend_is_posit(num_backend))
        printf("  quire: %d bits, used by sum, dot and by reverse sweeps to add up adjoints\n",
               formats[num_backend].posit->quire_bits);
    char lim[32], used[32];
    cmd_fmt_bytes(tape.limit, lim, sizeof lim);
    cmd_fmt_bytes(tape_bytes(), used, sizeof used);
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
    sweep_forget();
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

/* :tape reclaim: give back now what nothing can reach (it happens by
 * itself as the tape grows; this is for looking at it). */
static void tape_reclaim_now(void)
{
    char b[32];
    if (!eval_outside_calls() || ad_nesting)
        wg_error("':tape reclaim' runs outside functions only (inside one, its loops reclaim as they go)");
    size_t bytes = tape_bytes();
    gc_collect();        /* closures no one holds let go of what they captured */
    uint32_t gone = reclaim_now(reclaim_everything());
    cmd_fmt_bytes(bytes - tape_bytes(), b, sizeof b);
    printf("reclaimed %u entries (%s); tape: %u entries, %zu bytes\n", gone, b, tape_size() - 1, tape_bytes());
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
    /* the labels a[i] and a@k[i] are for listings and pictures only */
    int labels = strcmp(sub, "stats") && strcmp(sub, "kinks") && strcmp(sub, "clear") && strcmp(sub, "limit");
    if (labels) index_elements(sub[0] ? 1 : latest_from());
    tape_subcommand(args);
    if (labels) forget_elements();
}

static void tape_subcommand(const char *args)
{
    char sub[64];
    const char *rest = cmd_word(args, sub, sizeof sub);
    if (!sub[0]) {
        uint32_t from = latest_from();
        tape_list(from);
        if (from > 1) printf("  (%u earlier entries: ':tape all' shows them)\n", from - 1);
    } else if (!strcmp(sub, "all")) tape_list(1);
    else if (!strcmp(sub, "stats")) tape_stats();
    else if (!strcmp(sub, "kinks")) kink_list(stdout);
    else if (!strcmp(sub, "dot")) tapedot_command(rest, entry_label);
    else if (!strcmp(sub, "clear")) {
        if (ad_nesting) wg_error("':tape clear' cannot run while grad or hvp is differentiating");
        /* a running call holds numbers (and its own versions) in places
         * the clear cannot reach: they would name entries of the new tape */
        if (!eval_outside_calls()) wg_error("':tape clear' runs outside functions only");
        tape_forget();
    }
    else if (!strcmp(sub, "limit")) {
        char b[32];
        if (*rest) {
            size_t lim;
            if (!parse_size(rest, &lim)) wg_error("':tape limit' takes a size like 512KB, 64MB or 2GB");
            tape_set_limit(lim);
            reclaim_reset();     /* the next pass comes before the new cap */
        }
        cmd_fmt_bytes(tape.limit, b, sizeof b);
        printf("tape limit: %s (in use: %zu bytes)\n", b, tape_bytes());
    } else tape_depends(sub);
}

