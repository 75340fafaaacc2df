/* kinks.c: notes of kinks and near-switch branches (see kinks.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kinks.h"
#include "tape.h"
#include "error.h"

typedef struct {
    uint32_t id;          /* kink: the entry; branch: the tape size when it ran */
    uint32_t end;         /* branch: the tape size when its top-level statement ended, 0 if running */
    uint32_t ida, idb;    /* branch: the compared entries */
    int branch;
    int gone;             /* kink: its entry was reclaimed: 1 kept for :tape kinks only, 2 dropped */
    double a, b;
    char what[256];       /* "abs(x) at x = 0", "x < y with x = 1, y = 1" */
    char where[96];       /* "demo.wg:4:9" */
} Note;

static Note *notes;            /* in tape order */
static uint32_t nnotes, capnotes, epoch;
static uint32_t *passed, npassed, cappassed;   /* the latest derivative's notes */
static int depth, noted;

static void check_epoch(void)
{
    if (epoch != tape.epoch) {
        nnotes = npassed = 0;
        epoch = tape.epoch;
    }
}

static Note *new_note(void)
{
    check_epoch();
    if (nnotes == capnotes) {
        __typeof__(capnotes) grown = capnotes ? 2 * capnotes : 16;   /* the size is kept only once it is had */
        notes = wg_realloc(notes, sizeof(Note) * grown);
        capnotes = grown;
    }
    Note *n = &notes[nnotes++];
    memset(n, 0, sizeof *n);
    return n;
}

/* file:line:col as errors show places (a call by its callee's first
 * character, columns as displayed). */
static void locate(Note *note, const Node *n, const Chunk *c)
{
    if (n && n->kind == N_CALL && n->a) n = n->a;
    if (n && c) snprintf(note->where, sizeof note->where, "%s:%d:%d", c->filename, n->line,
                         wg_display_col(c, n->line, n->col));
    else snprintf(note->where, sizeof note->where, "?");
}

/* An operand as the source shows it: its variable's name, or else its
 * value. */
static void operand(const Node *n, double v, char *buf, int size)
{
    if (n && (n->kind == N_NAME || n->kind == N_VERSION)) snprintf(buf, size, "%s", n->name);
    else num_format(v, buf, size);
}

static int named(const Node *n) { return n && (n->kind == N_NAME || n->kind == N_VERSION); }

static int at_kink(int op, double a, double b)
{
    switch (op) {
    case OP_ABS: case OP_SIGN: return a == 0;
    case OP_FLOOR: return a == floor(a);
    case OP_MIN: case OP_MAX: return a == b;
    case OP_MOD: { double q = a / b; return isfinite(q) && q == floor(q); }
    default: return 0;
    }
}

void kink_note_op(int op, double a, double b, uint32_t id)
{
    if (!at_kink(op, a, b)) return;
    Note *note = new_note();
    note->id = id;
    note->a = a;
    note->b = b;
    const Node *n = wg_where.node;
    locate(note, n, wg_where.chunk);
    /* the call or operator that made it, when the evaluator stands on it */
    const Node *na = NULL, *nb = NULL;
    if (n && n->kind == N_CALL && n->n >= 1) {
        na = n->list[0];
        if (n->n >= 2) nb = n->list[1];
    } else if (n && n->kind == N_BINOP) {
        na = n->a;
        nb = n->b;
    }
    char xs[48], ys[48], va[40], vb[40];
    operand(na, a, xs, sizeof xs);
    operand(nb, b, ys, sizeof ys);
    num_format(a, va, sizeof va);
    num_format(b, vb, sizeof vb);
    switch (op) {
    case OP_MIN: case OP_MAX:
        snprintf(note->what, sizeof note->what, "%s(%s, %s) at a tie, both %s", op_names[op], xs, ys, va);
        break;
    case OP_MOD:
        snprintf(note->what, sizeof note->what, "%s %% %s at a jump, %s / %s whole", xs, ys, va, vb);
        break;
    default:
        if (named(na)) snprintf(note->what, sizeof note->what, "%s(%s) at %s = %s", op_names[op], xs, xs, va);
        else snprintf(note->what, sizeof note->what, "%s at %s", op_names[op], va);
    }
}

static const char *cmp_symbol(int op)
{
    static const char *const s[] = { [OP2_LT] = "<", [OP2_LE] = "<=", [OP2_GT] = ">",
                                     [OP2_GE] = ">=", [OP2_EQ] = "==", [OP2_NE] = "!=" };
    return op >= OP2_LT && op <= OP2_NE ? s[op] : "?";
}

void kink_note_branch(const Node *n, const Chunk *c, double x, double y, uint32_t ida, uint32_t idb)
{
    if (!isfinite(x) || !isfinite(y)) return;
    double scale = fmax(fabs(x), fabs(y));
    if (fabs(x - y) > 1e-9 * scale) return;
    Note *note = new_note();
    note->branch = 1;
    note->id = tape_size();
    note->ida = ida;
    note->idb = idb;
    note->a = x;
    note->b = y;
    locate(note, n, c);
    char xs[48], ys[48], va[40], vb[40];
    operand(n->a, x, xs, sizeof xs);
    operand(n->b, y, ys, sizeof ys);
    num_format(x, va, sizeof va);
    num_format(y, vb, sizeof vb);
    int len = snprintf(note->what, sizeof note->what, "a branch within 1e-9 of switching: %s %s %s",
                       xs, cmp_symbol(n->op), ys);
    if (named(n->a) || named(n->b))
        snprintf(note->what + len, sizeof note->what - (size_t)len, " with %s%s%s%s%s%s%s",
                 named(n->a) ? xs : "", named(n->a) ? " = " : "", named(n->a) ? va : "",
                 named(n->a) && named(n->b) ? ", " : "",
                 named(n->b) ? ys : "", named(n->b) ? " = " : "", named(n->b) ? vb : "");
}

void kink_begin(void)
{
    check_epoch();
    if (depth++ == 0) npassed = 0;
}

int kink_watching(void) { return depth > 0; }

static void pass(uint32_t k)
{
    for (uint32_t i = 0; i < npassed; i++)
        if (passed[i] == k) return;
    if (npassed == cappassed) {
        __typeof__(cappassed) grown = cappassed ? 2 * cappassed : 8;   /* the size is kept only once it is had */
        passed = wg_realloc(passed, sizeof(uint32_t) * grown);
        cappassed = grown;
    }
    passed[npassed++] = k;
}

/* The first note at or after entry lo (notes are in tape order). */
static uint32_t first_note(uint32_t lo)
{
    uint32_t a = 0, b = nnotes;
    while (a < b) {
        uint32_t m = (a + b) / 2;
        if (notes[m].id < lo) a = m + 1;
        else b = m;
    }
    return a;
}

/* Whether any entry in [from, to] got an adjoint: what the branch decided
 * reached the result. A very long stretch is taken as reached. */
static int reached(uint32_t from, uint32_t to, double (*adjoint)(void *ud, uint32_t id), void *ud)
{
    if (to - from > (1u << 22)) return 1;
    for (uint32_t i = from; i <= to; i++)
        if (adjoint(ud, i) != 0) return 1;
    return 0;
}

/* A kink counts when its entry got an adjoint. A branch counts when it
 * compared values recorded inside the swept range (only those can depend
 * on what the derivative is taken with respect to) and something computed
 * after it, in the same top-level statement, reached the result. */
void kink_scan(uint32_t lo, uint32_t top, double (*adjoint)(void *ud, uint32_t id), void *ud)
{
    check_epoch();
    for (uint32_t k = first_note(lo); k < nnotes && notes[k].id <= top; k++) {
        Note *n = &notes[k];
        if (n->gone) continue;
        if (!n->branch) {
            if (adjoint(ud, n->id) != 0) pass(k);
            continue;
        }
        int compared = (n->ida >= lo && n->ida <= top) || (n->idb >= lo && n->idb <= top);
        uint32_t to = n->end && n->end - 1 < top ? n->end - 1 : top;
        if (compared && n->id <= to && reached(n->id, to, adjoint, ud)) pass(k);
    }
}

void kink_end(void)
{
    if (--depth > 0 || !npassed || noted) return;
    noted = 1;
    const Note *n = &notes[passed[0]];
    wg_note("this derivative passed %s%s (%s); :tape kinks for all",
            n->branch ? "" : "a kink: ", n->what, n->where);
}

void kink_statement(void)
{
    check_epoch();
    for (uint32_t k = nnotes; k-- > 0 && !notes[k].end;) notes[k].end = tape_size();
    noted = 0;
    depth = 0;     /* an error may have unwound out of a derivative */
}

void kink_renumber(uint32_t lo, uint32_t (*entry)(uint32_t id), uint32_t (*position)(uint32_t p))
{
    check_epoch();
    /* in place, without allocating (it runs after the tape has moved):
     * renumber each note, marking those that go; then renumber the latest
     * derivative's list, which names notes by index; then close the gaps */
    for (uint32_t k = 0; k < nnotes; k++) {
        Note *n = &notes[k];
        if (n->branch) {
            if (n->id >= lo) n->id = position(n->id);
            if (n->end > lo) n->end = position(n->end);
            if (n->ida >= lo) n->ida = entry(n->ida);
            if (n->idb >= lo) n->idb = entry(n->idb);
        } else if (n->id >= lo) {
            uint32_t id = entry(n->id);
            if (!id) {
                int listed = 0;     /* the latest derivative's list keeps it */
                for (uint32_t i = 0; i < npassed; i++) listed |= passed[i] == k;
                n->gone = listed ? 1 : 2;     /* 2: no live value can pass it again */
                id = position(n->id);
            }
            n->id = id;
        }
    }
    for (uint32_t i = 0; i < npassed; i++) {
        uint32_t before = 0;
        for (uint32_t k = 0; k < passed[i]; k++) before += notes[k].gone != 2;
        passed[i] = before;
    }
    uint32_t kept = 0;
    for (uint32_t k = 0; k < nnotes; k++)
        if (notes[k].gone != 2) notes[kept++] = notes[k];
    nnotes = kept;
}

void kink_list(FILE *f)
{
    check_epoch();
    if (!npassed) {
        fprintf(f, "kinks: none in the latest derivative\n");
        return;
    }
    fprintf(f, "kinks: %u in the latest derivative\n", npassed);
    for (uint32_t i = 0; i < npassed; i++) {
        const Note *n = &notes[passed[i]];
        fprintf(f, "  %s%s (%s)\n", n->branch ? "" : "kink: ", n->what, n->where);
    }
}
