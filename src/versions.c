/* versions.c: when a write becomes a version, and how x@k is read back.
 * The evaluator says what was written where; this file decides which tape
 * entries become places and keeps the logs (see versions.h). */
#include <stdlib.h>
#include <string.h>
#include "versions.h"
#include "tape.h"
#include "error.h"
#include "state.h"

/* ------------------------------------------------------------- places */

/* A value bound to a name becomes a tape entry of its own, the variable's
 * next version. A constant gets a leaf; an entry just computed and not yet
 * bound to any name is labelled in place (no copy); an entry that already
 * is some variable's version is copied, so each version is its own place.
 * The in-place label is sound only because every number stored into a
 * variable or an element is labelled when it is stored (version_bind,
 * version_element): an unlabelled entry is held by no name. */
static inline __attribute__((always_inline)) uint32_t label_number(Value *v)
{
    /* a new entry is recorded labelled: no second write to its code */
    if (v->id == 0) v->id = tape_push_raw(OP_LEAF | TAPE_LABELED, 0, 0, v->u.n);
    else if (tape_labeled(v->id)) v->id = tape_push_raw(OP_COPY | TAPE_LABELED, v->id, 0, v->u.n);
    else rec_label(v->id);
    return v->id;
}

uint32_t version_label_number(Value *v) { return label_number(v); }

/* The innermost number of *v, after unsharing the duals on the way there:
 * a label written into a dual that another name also holds would move
 * that name's place too. */
static __attribute__((noinline)) Value *own_innermost_dual(Value *v)
{
    while (v->t == V_DUAL) {
        Dual *d = AS_DUAL(*v);
        if (d->h.rc > 1) {
            Dual *c = dual_alloc(d->tag, d->k);
            c->p = d->p;
            v_retain(d->p);
            for (int j = 0; j < d->k; j++) {
                c->t[j] = dual_tan(d, j);
                v_retain(c->t[j]);
            }
            dual_finish(c);
            v_release(*v);
            *v = obj_val(V_DUAL, c);
            d = c;
        }
        d->plain = 0;       /* the caller may write an entry into it (dual.c's short path reads no ids) */
        v = &d->p;
    }
    return v;
}

static inline Value *own_innermost(Value *v) { return v->t == V_DUAL ? own_innermost_dual(v) : v; }

uint32_t version_label_place(Value *v)
{
    if (!IS_NUMBER(*v)) return 0;
    return version_label_number(own_innermost(v));
}

/* A place of its own whatever the entry is: a function that keeps no
 * versions labels none of its variables, so an unlabelled entry there may
 * still be held by a name (t in `t = x + 1; a[0] = t`), and labelling it
 * in place would make that name's value the element's place too. */
uint32_t version_label_own(Value *v)
{
    if (!IS_NUMBER(*v)) return 0;
    Value *e = own_innermost(v);
    e->id = e->id ? tape_push_raw(OP_COPY | TAPE_LABELED, e->id, 0, e->u.n)
                  : tape_push_raw(OP_LEAF | TAPE_LABELED, 0, 0, e->u.n);
    return e->id;
}

/* The entries v shows that are no places yet, marked as held (labelled
 * in place, no version): a frame that keeps no versions may hold them in
 * its locals, so the binding they go to next copies them. */
void version_label_held(const Value *v)
{
    int n = is_seq(*v) ? seq_len(*v) : 1;
    for (int i = 0; i < n; i++) {
        const Value *e = is_seq(*v) ? seq_at(*v, i) : v;
        while (e->t == V_DUAL) e = &AS_DUAL(*e)->p;
        if (e->t == V_NUM && e->id && !tape_labeled(e->id)) rec_label(e->id);
    }
}

/* ---------------------------------------------------------------- logs */


/* Appends entry id as version log->count (the caller counted it). */
void version_log_push(VerLog *log, uint32_t id)
{
    G->versions.ids_logged++;
    if (log->n == log->cap) {
        __typeof__(log->cap) grown = log->cap ? 2 * log->cap : 8;   /* the size is kept only once it is had */
        log->ids = err_realloc(log->ids, sizeof(uint32_t) * (size_t)grown);
        log->ks = err_realloc(log->ks, sizeof(int) * (size_t)grown);
        log->cap = grown;
    }
    log->ids[log->n] = id;
    log->ks[log->n] = log->count;
    log->n++;
}

static void push_run(VerLog *log, int index, uint32_t at)
{
    if (log->nwrites == log->capwrites) {
        __typeof__(log->capwrites) grown = log->capwrites ? 2 * log->capwrites : 8;   /* the size is kept only once it is had */
        log->writes = err_realloc(log->writes, sizeof(ArrayWrite) * (size_t)grown);
        log->capwrites = grown;
    }
    log->writes[log->nwrites++] = (ArrayWrite){ log->count, index, 1, at, 0 };
}

static void reserve_wids(VerLog *log, int more)
{
    if (log->nwids + more <= log->capwids) return;
    __typeof__(log->capwids) grown = log->capwids ? 2 * log->capwids : 8;   /* the size is kept only once it is had */
    while (grown < log->nwids + more) grown *= 2;
    log->wids = err_realloc(log->wids, sizeof(uint32_t) * (size_t)grown);
    log->capwids = grown;
}

/* A run's entries listed at the end of wids (they stopped being
 * consecutive, or a listed run must grow at the end). */
static void list_run(VerLog *log, ArrayWrite *w)
{
    reserve_wids(log, w->len + 1);
    uint32_t at = (uint32_t)log->nwids;
    for (int j = 0; j < w->len; j++) log->wids[log->nwids++] = write_id(log->wids, w, j);
    w->at = at;
}

/* Element index's entry became version log->count: the last run grows if
 * this write continues it, else a run begins. */
static void push_write(VerLog *log, int index, uint32_t id)
{
    ArrayWrite *last = log->nwrites ? &log->writes[log->nwrites - 1] : NULL;
    G->versions.ids_logged++;
    if (!(last && last->index >= 0 && last->k + last->len == log->count && last->index + last->len == index)) {
        push_run(log, index, WRITES_IN_ORDER);
        log->writes[log->nwrites - 1].first = id;
        return;
    }
    if (last->at == WRITES_IN_ORDER && id == last->first + (uint32_t)last->len) {
        last->len++;
        return;
    }
    if (last->at == WRITES_IN_ORDER || last->at + (uint32_t)last->len != (uint32_t)log->nwids) list_run(log, last);
    reserve_wids(log, 1);
    log->wids[log->nwids++] = id;
    last->len++;
}

static uint32_t element_id(const Value *v) { return v->t == V_DUAL ? v_innermost((Value *)v)->id : v->id; }

/* The elements' entries become a snapshot: a run (first, n) when they
 * are consecutive (run: the caller saw that while labelling them), else
 * their list. */
static void push_snapshot(VerLog *log, Storage *s, int run)
{
    Snapshot snap = { NULL, s->n ? element_id(&s->v[0]) : 0, s->n, s->ndim, s->rows, s->cols };
    if (!run) {
        snap.ids = err_malloc(sizeof(uint32_t) * (size_t)(s->n ? s->n : 1));
        for (int i = 0; i < s->n; i++) snap.ids[i] = element_id(&s->v[i]);
    }
    log->snaps = err_realloc(log->snaps, sizeof(Snapshot) * (size_t)(log->nsnaps + 1));
    log->snaps[log->nsnaps] = snap;
    push_run(log, -1, (uint32_t)log->nsnaps++);
    G->versions.ids_logged += (uint64_t)s->n;
}

/* Keeps v (retained) as version log->count, element index (-1: whole). */
static void hold(VerLog *log, int index, Value v)
{
    if (log->nheld == log->capheld) {
        __typeof__(log->capheld) grown = log->capheld ? 2 * log->capheld : 4;   /* the size is kept only once it is had */
        log->held = err_realloc(log->held, sizeof(HeldVersion) * (size_t)grown);
        log->capheld = grown;
    }
    v_retain(v);
    log->held[log->nheld++] = (HeldVersion){ log->count, index, v };
}

/* The elements of an array, as they are now, become one version of it. */
static void snapshot(VerLog *log, Storage *s)
{
    storage_dirty(s);       /* its elements get labels */
    int duals = 0, n = s->n;
    TapeIdRun run = { 0, n > 0 };
    Value *v = s->v;
    /* (the plain numbers a stretch at a time, tape_label_numbers: an array
     * bound while recording, W4's a = a0 and g = d(...), pays little per
     * element; the general path when eval_fast_paths is off) */
    for (int i = 0; i < n;) {
        Value *e = &v[i];
        if (e->t == V_NUM && eval_fast_paths) {
            i += (int)tape_label_numbers(e, (uint32_t)(n - i), 1, 1, &run);
            continue;
        }
        uint32_t id;
        if (e->t == V_NUM) id = label_number(e);     /* no dual to unshare on the way */
        else {
            version_label_place(e);
            duals |= e->t == V_DUAL;
            id = element_id(e);
        }
        run.consecutive &= id != 0 && (!run.next || id == run.next);
        run.next = id + 1;
        i++;
    }
    push_snapshot(log, s, run.consecutive);
    if (duals) {
        Value whole = obj_val(V_ARR, s);
        Value copy = value_arr_copy(whole);
        hold(log, -1, copy);
        v_release(copy);
    }
}

/* Version log->count (counted) was view w. */
static void mark_view(VerLog *log, const View *w)
{
    int k = log->count, owner = w->owner >= 0 && !w->home ? w->owner : -1;
    int *last = log->nviews ? &log->views[3 * (log->nviews - 1)] : NULL;
    if (last && last[1] == k - 1 && last[2] == owner) {
        last[1] = k;
        return;
    }
    if (log->nviews == log->capviews) {
        int grown = log->capviews ? 2 * log->capviews : 2;
        log->views = err_realloc(log->views, sizeof(int) * 3 * (size_t)grown);
        log->capviews = grown;      /* the size is kept only once it is had */
    }
    int *t = &log->views[3 * log->nviews++];
    t[0] = t[1] = k;
    t[2] = owner;
}

void version_count_view(VerLog *log, const View *w)
{
    log->count++;
    mark_view(log, w);
}

void version_bind(VerLog *log, Value *v)
{
    log->count++;
    if (IS_NUMBER(*v)) {
        version_log_push(log, version_label_place(v));
        if (v->t == V_DUAL) hold(log, -1, *v);
        return;
    }
    if (v->t == V_ARR) {   /* each element becomes a place of its own */
        arr_own(v);        /* labels must not reach other holders */
        snapshot(log, AS_ARR(*v));
    } else if (v->t == V_VIEW) {
        mark_view(log, AS_VIEW(*v));
        /* A view keeps no versions of its own (its elements are its
         * storage's), but what it shows is a place from now on, as the
         * elements of an array bound to a name are: an entry no name
         * held (a view of a temporary) is labelled in place, so a later
         * binding of v[i] (a parameter) copies it instead of labelling it
         * again while the view still shows it. */
        View *w = AS_VIEW(*v);
        for (int i = 0; i < w->len; i++) {
            Value *e = &w->s->v[w->start + (long)i * w->stride];
            Value *in = v_innermost(e);
            if (in->t != V_NUM || !in->id || tape_labeled(in->id)) continue;
            if (e->t == V_DUAL) in = own_innermost(e);
            rec_label(in->id);
        }
    }
}

void version_array(VerLog *log, Storage *s) { snapshot(log, s); }

/* The elements nothing has made places yet (written under nograd: id 0)
 * become leaves; elements that already are places stay the places they
 * are: nothing assigned them again. Returns whether any holds tangents. */
static int settle_elements(Value *v, int n, long stride, int *run)
{
    int duals = 0;
    TapeIdRun ids = { 0, n > 0 };
    for (int i = 0; i < n;) {
        Value *e = v;
        if (e->t == V_NUM && eval_fast_paths) {   /* plain numbers (a filled array's every element) a stretch at a time */
            uint32_t k = tape_label_numbers(e, (uint32_t)(n - i), stride, 0, &ids);
            i += (int)k, v += (long)k * stride;
            continue;
        }
        if (e->t == V_NUM) {     /* a plain number, without the duals' tests */
            if (!e->id) e->id = tape_push_raw(OP_LEAF | TAPE_LABELED, 0, 0, e->u.n);
            else if (!tape_labeled(e->id)) rec_label(e->id);
        } else {
            e = v_innermost(v);
            duals |= v->t == V_DUAL;
            if (e->t == V_NUM && !(e->id && tape_labeled(e->id))) {
                if (v->t == V_DUAL) e = own_innermost(v);   /* the label must not reach other holders */
                if (!e->id) e->id = tape_push_raw(OP_LEAF | TAPE_LABELED, 0, 0, e->u.n);
                else rec_label(e->id);
            }
        }
        ids.consecutive &= e->id != 0 && (!ids.next || e->id == ids.next);
        ids.next = e->id + 1;
        i++, v += stride;
    }
    if (run) *run = ids.consecutive;
    return duals;
}

void version_settle(VerLog *log, Value *v)
{
    if (IS_NUMBER(*v)) {
        version_log_push(log, version_label_place(v));
        if (v->t == V_DUAL) hold(log, -1, *v);
    } else if (v->t == V_ARR) {
        arr_own(v);
        Storage *s = AS_ARR(*v);
        storage_dirty(s);
        int run, duals = settle_elements(s->v, s->n, 1, &run);
        push_snapshot(log, s, run);
        if (duals) {
            Value copy = value_arr_copy(*v);
            hold(log, -1, copy);
            v_release(copy);
        }
    } else if (v->t == V_VIEW) {
        View *w = AS_VIEW(*v);
        storage_dirty(w->s);
        settle_elements(w->s->v + w->start, w->len, w->stride, NULL);
    }
}

/* An element write: the element is a place whether or not its variable
 * keeps versions (log NULL: a view, or a frame that keeps none). */
void version_element(VerLog *log, int index, Value *v)
{
    uint32_t id = version_label_place(v);
    if (!log || !log->nwrites) return;
    push_write(log, index, id);
    if (v->t == V_DUAL) hold(log, index, *v);
}

void version_element_own(VerLog *log, int index, Value *v)
{
    uint32_t id = version_label_own(v);
    if (!log || !log->nwrites) return;
    push_write(log, index, id);
    if (v->t == V_DUAL) hold(log, index, *v);
}

/* Element index, a place already, written as part of version log->count
 * (a write through a view of the variable's storage: one version, however
 * many elements it wrote). */
void version_element_logged(VerLog *log, int index, const Value *v)
{
    if (!log->nwrites || !IS_NUMBER(*v)) return;
    push_write(log, index, element_id(v));
    if (v->t == V_DUAL) hold(log, index, *v);
}

/* ------------------------------------------------------------- reading */

uint32_t version_log_find(const VerLog *log, int k)
{
    int lo = 0, hi = log->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (log->ks[mid] == k) return log->ids[mid];
        if (log->ks[mid] < k) lo = mid + 1;
        else hi = mid - 1;
    }
    return 0;
}

int version_of_id(const VerLog *log, uint32_t id)
{
    int lo = 0, hi = log->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (log->ids[mid] == id) return log->ks[mid];
        if (log->ids[mid] < id) lo = mid + 1;
        else hi = mid - 1;
    }
    return 0;
}

/* Held versions are in increasing k; a write through a view holds one per
 * element it wrote, all with the same k. */
const Value *version_log_held(const VerLog *log, int k, int index)
{
    int lo = 0, hi = log->nheld - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (log->held[mid].k == k) {
            while (mid > 0 && log->held[mid - 1].k == k) mid--;
            for (; mid < log->nheld && log->held[mid].k == k; mid++)
                if (log->held[mid].index == index) return &log->held[mid].v;
            return NULL;
        }
        if (log->held[mid].k < k) lo = mid + 1;
        else hi = mid - 1;
    }
    return NULL;
}

/* The write record of the last whole assignment at or before version k,
 * or -1. */
static int last_snapshot(const VerLog *log, int k)
{
    for (int i = log->nwrites - 1; i >= 0; i--)
        if (log->writes[i].k <= k && log->writes[i].index < 0) return i;
    return -1;
}

/* The element entries of array version k: the last whole assignment at
 * or before k, with the element writes after it replayed. NULL if version
 * k was not an array version kept here. */
uint32_t *version_log_array(const VerLog *log, int k, int *n)
{
    int last = last_snapshot(log, k);
    if (last < 0) return NULL;
    int found = 0;
    for (int i = last; i < log->nwrites && log->writes[i].k <= k; i++)
        found |= k < log->writes[i].k + log->writes[i].len;
    if (!found) return NULL;
    const Snapshot *snap = &log->snaps[log->writes[last].at];
    *n = snap->len;
    uint32_t *ids = err_scratch(sizeof(uint32_t) * (size_t)(*n ? *n : 1));
    for (int i = 0; i < *n; i++) ids[i] = snapshot_id(snap, i);
    for (int i = last + 1; i < log->nwrites && log->writes[i].k <= k; i++) {
        const ArrayWrite *w = &log->writes[i];
        if (w->index < 0) break;
        for (int j = 0; j < w->len && w->k + j <= k; j++) ids[w->index + j] = write_id(log->wids, w, j);
    }
    return ids;
}

static void put(Storage *s, int i, const Value *v)
{
    storage_dirty(s);
    v_retain(*v);
    v_release(s->v[i]);
    s->v[i] = *v;
}

/* Array version k rebuilt from entries (r) gets back the tangents of the
 * elements that carried them, replaying the same writes. */
static void overlay_held(const VerLog *log, int k, Storage *r)
{
    int last = last_snapshot(log, k);
    const Value *whole = version_log_held(log, log->writes[last].k, -1);
    if (whole && whole->t == V_ARR)
        for (int i = 0; i < r->n && i < AS_ARR(*whole)->n; i++)
            if (AS_ARR(*whole)->v[i].t == V_DUAL) put(r, i, &AS_ARR(*whole)->v[i]);
    for (int i = last + 1; i < log->nwrites && log->writes[i].k <= k; i++) {
        const ArrayWrite *w = &log->writes[i];
        for (int j = 0; j < w->len && w->k + j <= k; j++) {
            const Value *e = version_log_held(log, w->k + j, w->index + j);
            if (e && w->index + j < r->n) put(r, w->index + j, e);
        }
    }
}

Value version_read(const VerLog *log, int k, int *found)
{
    *found = 1;
    const Value *h = version_log_held(log, k, -1);
    if (h && h->t != V_ARR) {
        v_retain(*h);
        return *h;
    }
    uint32_t id = version_log_find(log, k);
    if (id && id < tape_size()) return num_rec(tape_val(id), id);
    int len;
    uint32_t *ids = version_log_array(log, k, &len);
    if (!ids) {
        *found = 0;
        return nil_val();
    }
    Value r = value_arr_new(len);
    for (int i = 0; i < len; i++)
        AS_ARR(r)->v[i] = ids[i] && ids[i] < tape_size() ? num_rec(tape_val(ids[i]), ids[i]) : num_val(0);
    err_scratch_free(ids);
    const Snapshot *snap = &log->snaps[log->writes[last_snapshot(log, k)].at];   /* a matrix's versions are matrices */
    storage_set_shape(AS_ARR(r), snap->ndim, snap->rows, snap->cols);
    if (log->nheld) overlay_held(log, k, AS_ARR(r));
    return r;
}

/* ------------------------------------------------------------ lifetime */

void version_log_mark_inner(VerLog *log, int first, int last)
{
    log->inner = err_realloc(log->inner, sizeof(int) * 2 * (size_t)(log->ninner + 1));
    log->inner[2 * log->ninner] = first;
    log->inner[2 * log->ninner + 1] = last;
    log->ninner++;
}

int version_log_inner(const VerLog *log, int k)
{
    for (int i = 0; i < log->ninner; i++)
        if (k >= log->inner[2 * i] && k <= log->inner[2 * i + 1]) return log->inner[2 * i + 1] + 1;
    return 0;
}

int version_log_view(const VerLog *log, int k)
{
    for (int i = log->nviews; i-- > 0;) {
        const int *t = &log->views[3 * i];
        if (k >= t[0] && k <= t[1]) return t[2] >= 0 ? t[2] + 2 : 1;
    }
    return 0;
}

void version_log_free_shallow(VerLog *log)
{
    free(log->views);
    free(log->inner);
    free(log->ids);
    free(log->ks);
    for (int i = 0; i < log->nsnaps; i++) free(log->snaps[i].ids);
    free(log->snaps);
    free(log->writes);
    free(log->wids);
    free(log->held);
    memset(log, 0, sizeof *log);
}

void version_log_free(VerLog *log)
{
    for (int i = 0; i < log->nheld; i++) v_release(log->held[i].v);
    version_log_free_shallow(log);
}

void version_log_visit(const VerLog *log, void (*visit)(Value))
{
    for (int i = 0; i < log->nheld; i++) visit(log->held[i].v);
}

/* A run's ids one by one; renumbering keeps a run a run (its entries are
 * all live, and compaction keeps their order), but should one come apart
 * it is listed from there on, so nothing depends on that. */
static void each_snapshot_id(Snapshot *s, void (*fn)(uint32_t *id, void *ud), void *ud)
{
    if (s->ids) {
        for (int i = 0; i < s->len; i++) fn(&s->ids[i], ud);
        return;
    }
    uint32_t first = s->first;
    for (int i = 0; i < s->len; i++) {
        uint32_t id = s->first + (uint32_t)i;
        fn(&id, ud);
        if (i == 0) first = id;
        else if (!s->ids && id != first + (uint32_t)i) {
            s->ids = err_malloc(sizeof(uint32_t) * (size_t)s->len);
            for (int j = 0; j < i; j++) s->ids[j] = first + (uint32_t)j;
        }
        if (s->ids) s->ids[i] = id;
    }
    s->first = first;
}

size_t version_log_kept(const VerLog *log)
{
    size_t n = (size_t)log->n + (size_t)log->nsnaps;
    for (int r = 0; r < log->nwrites; r++)
        if (log->writes[r].index >= 0) n += (size_t)log->writes[r].len;
    return n;
}

void version_log_each_id(VerLog *log, void (*fn)(uint32_t *id, void *ud), void *ud)
{
    for (int i = 0; i < log->n; i++) fn(&log->ids[i], ud);
    for (int s = 0; s < log->nsnaps; s++) each_snapshot_id(&log->snaps[s], fn, ud);
    int listed = log->nwids;     /* runs listed below append after these */
    for (int i = 0; i < listed; i++) fn(&log->wids[i], ud);
    for (int r = 0; r < log->nwrites; r++) {
        ArrayWrite *w = &log->writes[r];
        if (w->index < 0 || w->at != WRITES_IN_ORDER) continue;
        uint32_t first = w->first, broke = 0;
        for (int j = 0; j < w->len; j++) {
            uint32_t id = w->first + (uint32_t)j;
            fn(&id, ud);
            if (j == 0) first = id;
            else if (!broke && id != first + (uint32_t)j) {   /* listed from here on (see each_snapshot_id) */
                broke = 1;
                uint32_t old = w->first;
                w->first = first;
                int len = w->len;
                w->len = j;
                list_run(log, w);     /* the j renumbered so far */
                w->len = len;
                w->first = old;
            }
            if (broke) {
                reserve_wids(log, 1);
                log->wids[log->nwids++] = id;
            }
        }
        if (!broke) w->first = first;
    }
    for (int i = 0; i < log->nheld; i++)
        if (log->held[i].v.t == V_NUM) fn(&log->held[i].v.id, ud);
}
