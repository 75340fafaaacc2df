/* versions.h: the versions of variables (SPEC "Derivatives": x@k is the
 * k-th value assigned to x, and every version is a place d can
 * differentiate against).
 *
 * A version log keeps, for each number assigned, the tape entry it became;
 * for arrays, a snapshot of the element entries at each whole assignment
 * and one record per element write, so a@k is replayed from them. Both
 * columns grow in tape order, so x@k and "which version is entry #i" are
 * binary searches.
 *
 * A value that carries tangents (a dual number inside jvp, or an array of
 * them) is also held as a whole, so that reading x@k inside forward mode
 * gives back the tangent with the number, not the number alone. */
#ifndef WG_VERSIONS_H
#define WG_VERSIONS_H
#include <stdint.h>
#include "value.h"
#include "tape.h"

/* A run of element writes to consecutive elements, each the next version
 * (a loop filling an array): write j of the run made version k + j of
 * element index + j, whose entry is wids[at + j], or first + j while the
 * entries are consecutive too (at WRITES_IN_ORDER): a loop over a million
 * elements that records one entry a write logs 20 bytes in all. A whole
 * assignment is a run of its own with index -1, and `at` the snapshot's
 * number. */
typedef struct {
    int k;            /* the version the run's first write made */
    int index;        /* its element, or -1: a whole array (snapshot) */
    int len;          /* writes in the run (1 for a snapshot) */
    uint32_t at;      /* first entry in wids, the snapshot's number, or WRITES_IN_ORDER */
    uint32_t first;   /* WRITES_IN_ORDER: the entry of the run's first write */
} ArrayWrite;
#define WRITES_IN_ORDER 0xFFFFFFFFu
static inline uint32_t write_id(const uint32_t *wids, const ArrayWrite *w, int j)
{
    return w->at == WRITES_IN_ORDER ? w->first + (uint32_t)j : wids[w->at + j];
}

/* A version whose value carries tangents: the value itself (a dual, or an
 * array copy for a whole array), or one element written (index >= 0). */
typedef struct {
    int k, index;
    Value v;
} HeldVersion;

/* An array's element entries at a whole assignment: listed, or (ids NULL)
 * the run first, first + 1, ...: an array labelled in one go, as nearly
 * every whole assignment is, costs nothing per element. */
typedef struct {
    uint32_t *ids;
    uint32_t first;
    int len;
    int ndim, rows, cols;    /* the array's shape (a matrix: value.h) */
} Snapshot;
static inline uint32_t snapshot_id(const Snapshot *s, int i) { return s->ids ? s->ids[i] : s->first + (uint32_t)i; }

typedef struct VerLog {
    uint32_t *ids;
    int *ks;
    int n, cap;
    int count;        /* assignments so far, arrays included */
    Snapshot *snaps;
    int nsnaps;
    ArrayWrite *writes;          /* runs of element writes, and snapshots */
    int nwrites, capwrites;
    uint32_t *wids;              /* the written elements' entries, run after run */
    int nwids, capwids;
    HeldVersion *held;
    int nheld, capheld;
    int *inner;       /* (first, last) pairs: versions made inside checkpointed loops */
    int ninner;
    int *views;       /* (first, last, owner) triples: versions that were views (version_count_view) */
    int nviews, capviews;
    uint32_t nograd_mark;   /* eval.c: the nograd block that listed it last */
} VerLog;

/* Making versions. Each call that records counts one assignment. */
uint32_t version_label_number(Value *v);           /* a number becomes a place of its own */
uint32_t version_label_place(Value *v);            /* the same for a number or a dual (its innermost number); 0 otherwise */
void     version_bind(VerLog *log, Value *v);    /* a value bound to the variable: its next version */
void     version_element(VerLog *log, int index, Value *v);   /* v written into element index */
/* v's entries that are no places yet become held ones (labelled, no
 * version): v comes from a frame that keeps no versions, whose locals may
 * hold them, and goes to a binding that would label them in place. */
void     version_label_held(const Value *v);
/* The same from a function that keeps no versions: v gets an entry of its
 * own (version_label_own); log may be NULL (a local array: the place alone). */
uint32_t version_label_own(Value *v);
void     version_element_own(VerLog *log, int index, Value *v);
/* An element, a place already, written by a write through a view of the
 * variable's storage: part of version log->count (counted already). */
void     version_element_logged(VerLog *log, int index, const Value *v);
void     version_array(VerLog *log, Storage *s); /* the array as it is now (after an in-place update) */
static inline void version_count(VerLog *log) { log->count++; }   /* an assignment that keeps no version */
/* The same for an assignment that leaves a view in the variable (bound to
 * it, or written through it): a view keeps no versions of its own (its
 * elements are its storage's), so x@k of it can only say so, naming the
 * global array it views (View.owner; a local's is not named). */
void     version_count_view(VerLog *log, const View *w);
/* version_count for an assignment that leaves v in the variable. */
static inline void version_count_as(VerLog *log, const Value *v)
{
    if (v->t == V_VIEW) version_count_view(log, AS_VIEW(*v));
    else version_count(log);
}
/* The variable's value as a nograd block leaves it becomes its latest
 * version (counted already): numbers nothing made places yet get leaves,
 * elements that are places stay as they are. A view labels its storage. */
void     version_settle(VerLog *log, Value *v);
void     version_log_push(VerLog *log, uint32_t id);  /* entry id as version log->count */

/* Ids that have entered any log (a number, an element write, each element
 * of a snapshot): the evaluator counts those of global variables, which
 * stay live, so a pass knows what it cannot give back. */
typedef struct { uint64_t ids_logged; } VersionsState;   /* ids version logs took, ever */

/* version_element for a plain number whose entry is not a place yet (just
 * computed) and continues the variable's last run of writes: every write
 * of an element loop after its first (W4's a[i] = a[i] * a[i]), inline. */
#endif

/* Needs the session state (state.h includes this file again). */
#if defined(WG_STATE_DONE) && !defined(WG_VERSIONS_H_STATE)
#define WG_VERSIONS_H_STATE
static inline void version_element_num(VerLog *log, int index, Value *v)
{
    ArrayWrite *last = log && log->nwrites ? &log->writes[log->nwrites - 1] : NULL;
    if (last && v->id && !tape_labeled(v->id) && last->at == WRITES_IN_ORDER && last->index >= 0
        && last->k + last->len == log->count && last->index + last->len == index
        && v->id == last->first + (uint32_t)last->len) {
        rec_label(v->id);
        last->len++;
        G->versions.ids_logged++;
        return;
    }
    version_element(log, index, v);
}

/* Reading them. */
uint32_t version_log_find(const VerLog *log, int k);            /* 0 if not kept */
uint32_t *version_log_array(const VerLog *log, int k, int *n);  /* element ids (scratch: err_scratch_free), or NULL */
int      version_of_id(const VerLog *log, uint32_t id); /* 0 if not there */
const Value *version_log_held(const VerLog *log, int k, int index);   /* NULL if not held */
Value    version_read(const VerLog *log, int k, int *found);   /* x@k; found 0: not kept */

/* Versions first..last were made inside a checkpointed loop (not kept);
 * version_log_inner gives the version the loop ended with (last + 1) if k is
 * one of them, else 0. */
void version_log_mark_inner(VerLog *log, int first, int last);
int  version_log_inner(const VerLog *log, int k);
/* Version k was a view (version_count_view): 2 + the global slot of the
 * array it viewed, 1 if none is known, 0 if it was no view. */
int  version_log_view(const VerLog *log, int k);

void version_log_free(VerLog *log);            /* releases the held values too */
void version_log_free_shallow(VerLog *log);    /* the collector frees the held values itself */
void version_log_visit(const VerLog *log, void (*visit)(Value));
/* Every tape id the log holds (fn may rewrite it: reclaiming renumbers
 * entries, keeping their order, so the columns stay sorted). Numbers held
 * inside heap values (duals, arrays) are the collector's to walk. */
void version_log_each_id(VerLog *log, void (*fn)(uint32_t *id, void *ud), void *ud);
size_t   version_log_kept(const VerLog *log);   /* versions kept: numbers, snapshots, element writes */

#endif
