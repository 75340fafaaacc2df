/* builtins.c: the table of builtin functions of SPEC "Builtins", the
 * derivative operators (implemented in ad.c and fwd.c) among them. Each
 * has a one-line help text that :help shows. Math builtins go through arith_apply, so they work elementwise,
 * record on the tape and carry forward-mode tangents like any operator. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval.h"
#include "builtins.h"
#include "arith.h"
#include "tape.h"
#include "error.h"
#include "rng.h"
#include "ad.h"
#include "fwd.h"
#include "fixedpoint.h"
#include "ckpt.h"
#include "suggest.h"
#include "parse.h"
#include "plot.h"
#include "matrix.h"
#include "matrix_lang.h"
#include "jacobian.h"
#include "state.h"
#include "dualarr.h"


void builtin_define(const Builtin *b)
{
    int i = 0;
    while (i < G->builtins.n && G->builtins.table[i] != b) i++;
    if (i == G->builtins.n) G->builtins.table[G->builtins.n++] = b;
    int gi = eval_global_index(b->name);   /* may move the G->eval.globals array */
    Global *g = &G->eval.globals[gi];
    v_release(g->v);
    g->v.t = V_BUILTIN;
    g->v.id = 0;
    g->v.u.bi = b;
}

void builtin_define_special(const char *name, SpecialFn fn, const char *help)
{
    for (int i = 0; i < G->builtins.n; i++)
        if (strcmp(G->builtins.table[i]->name, name) == 0) {
            builtin_define(G->builtins.table[i]);
            return;
        }
    Builtin *b = &G->builtins.special_defs[G->builtins.n];
    b->name = name;
    b->minargs = 0;
    b->maxargs = -1;
    b->fn = NULL;
    b->help = help;
    G->builtins.specials[G->builtins.n] = fn;
    builtin_define(b);
}

SpecialFn builtin_special(const Builtin *b)
{
    if (b->fn) return NULL;
    for (int i = 0; i < G->builtins.n; i++)
        if (G->builtins.table[i] == b) return G->builtins.specials[i];
    return NULL;
}

const Builtin *builtin_list(int i) { return i < G->builtins.n ? G->builtins.table[i] : NULL; }

/* -------------------------------------------------------------- helpers */

double arg_number(Value *argv, int i, const char *fname)
{
    if (!IS_NUMBER(argv[i]))
        err_raise("%s: argument %d must be a number, got %s", fname, i + 1, value_type_name(argv[i]));
    return v_primal(argv[i]);
}

int arg_count(Value *argv, int i, const char *fname)
{
    double d = arg_number(argv, i, fname);
    if (d != floor(d) || d < 0 || d > 1e9)
        err_raise("%s: argument %d must be a whole number from 0 to 1e9, got %s", fname, i + 1, value_num_str(d));
    return (int)d;
}

static void arg_seq(Value *argv, int i, const char *fname)
{
    if (!is_seq(argv[i]))
        err_raise("%s: argument %d must be an array, got %s", fname, i + 1, value_type_name(argv[i]));
    value_seq_check_numbers(argv[i], fname);
}

/* ---------------------------------------------------------------- basics */

static Value bi_print(int argc, Value *argv)
{
    for (int i = 0; i < argc; i++) {
        if (i) io_putc(IO_OUT, ' ');
        io_value(IO_OUT, argv[i], 0);
    }
    io_putc(IO_OUT, '\n');
    return nil_val();
}

static Value bi_len(int argc, Value *argv)
{
    (void)argc;
    if (argv[0].t == V_STR) {    /* characters, not bytes: skip UTF-8 continuation bytes */
        int n = 0;
        for (int i = 0; i < AS_STR(argv[0])->len; i++) n += ((unsigned char)AS_STR(argv[0])->s[i] & 0xC0) != 0x80;
        return num_val(n);
    }
    if (!is_seq(argv[0])) err_raise("len: argument 1 must be an array or a string, got %s", value_type_name(argv[0]));
    if (is_mat(argv[0])) return num_val(AS_ARR(argv[0])->rows);
    return num_val(seq_len(argv[0]));
}

static Value filled(int n, double x)
{
    Storage *s = value_storage_unfilled(n);
    for (int i = 0; i < n; i++) s->v[i] = num_val(x);
    s->known = KNOWN_CONSTS;
    return obj_val(V_ARR, s);
}

static Value bi_zeros(int argc, Value *argv)
{
    if (argc == 2) return mat_filled(argv, 0, "zeros");
    return filled(arg_count(argv, 0, "zeros"), 0);
}

static Value bi_ones(int argc, Value *argv)
{
    if (argc == 2) return mat_filled(argv, num_round(1), "ones");
    return filled(arg_count(argv, 0, "ones"), num_round(1));
}

static Value bi_range(int argc, Value *argv)
{
    (void)argc;
    int n = arg_count(argv, 0, "range");
    Storage *s = value_storage_unfilled(n);
    if (G->num.backend == BK_F64)       /* i itself: no call to round it an element */
        for (int i = 0; i < n; i++) s->v[i] = num_val(i);
    else
        for (int i = 0; i < n; i++) s->v[i] = num_val(num_round(i));
    s->known = KNOWN_CONSTS;
    return obj_val(V_ARR, s);
}

/* k as an index of an array of len, or -1: not a whole number in [0, len)
 * (nan too). */
static inline long take_index(double k, int len)
{
    return k >= 0 && k < len && k == (double)(int)k ? (long)(int)k : -1;
}

/* Whether every iv[i].u.n (i < n) is an index of an array of len
 * (take_index's test), so that the gather's loop needs none. On x86-64
 * four at a time and without branches: each truncated to 32 bits and back
 * (a fraction comes back another number; nan and what 32 bits do not
 * hold come back as -2^31), and the least and the greatest compared with
 * the bounds once at the end. -0 is index 0, as take_index has it. */
#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
static inline __m128d two_numbers(const Value *iv) { return _mm_loadh_pd(_mm_load_sd(&iv[0].u.n), &iv[1].u.n); }
static int all_indices(const Value *iv, int n, int len)
{
    __m128d bad = _mm_setzero_pd(), lo = _mm_setzero_pd(), hi = _mm_set1_pd(-1);
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        __m128d k = two_numbers(iv + i), m = two_numbers(iv + i + 2);
        __m128d kb = _mm_cvtepi32_pd(_mm_cvttpd_epi32(k)), mb = _mm_cvtepi32_pd(_mm_cvttpd_epi32(m));
        bad = _mm_or_pd(bad, _mm_or_pd(_mm_cmpneq_pd(kb, k), _mm_cmpneq_pd(mb, m)));
        lo = _mm_min_pd(lo, _mm_min_pd(kb, mb));     /* of the numbers come back: no nan */
        hi = _mm_max_pd(hi, _mm_max_pd(kb, mb));
    }
    __m128d bounds = _mm_or_pd(_mm_cmplt_pd(lo, _mm_setzero_pd()), _mm_cmpge_pd(hi, _mm_set1_pd((double)len)));
    if (_mm_movemask_pd(_mm_or_pd(bad, bounds))) return 0;
    for (; i < n; i++)
        if (take_index(iv[i].u.n, len) < 0) return 0;
    return 1;
}
#else
static int all_indices(const Value *iv, int n, int len)
{
    for (int i = 0; i < n; i++)
        if (take_index(iv[i].u.n, len) < 0) return 0;
    return 1;
}
#endif

/* take(a, idx): the elements a[idx[0]], a[idx[1]], ... (a gather). The
 * elements are the same values, so derivatives flow back to a's elements. */
static Value bi_take(int argc, Value *argv)
{
    (void)argc;
    arg_seq(argv, 0, "take");
    arg_seq(argv, 1, "take");
    int n = seq_len(argv[1]), len = seq_len(argv[0]);
    Storage *rs = value_storage_unfilled(n);
    /* numbers that hold no heap object on both sides (GradBench's index
     * arithmetic): no retains, and the result knows it */
    int nums = seq_noheap(argv[0]), plain_ix = seq_noheap(argv[1]);
    if (eval_fast_paths && plain_ix && argv[1].t == V_ARR) {
        /* by an array of numbers (an index matrix's gather; kmeans' take
         * of dual centroids): the indices checked in one pass, then one
         * loop over the storages, each element retained when a's are not
         * all numbers; an index out of range leaves it to the loop below,
         * which raises */
        const Value *iv = AS_ARR(argv[1])->v;
        if (all_indices(iv, n, len)) {
            const Value *av = argv[0].t == V_ARR ? AS_ARR(argv[0])->v : storage_of(argv[0])->v + AS_VIEW(argv[0])->start;
            long sa = argv[0].t == V_ARR ? 1 : AS_VIEW(argv[0])->stride;
            Value *out = rs->v;
            if (nums)
                for (int i = 0; i < n; i++) out[i] = av[(long)iv[i].u.n * sa];
            else
                for (int i = 0; i < n; i++) {
                    Value e = av[(long)iv[i].u.n * sa];
                    v_retain(e);
                    out[i] = e;
                }
            rs->known = nums ? storage_of(argv[0])->known : 0;
            return obj_val(V_ARR, rs);
        }
    }
    for (int i = 0; i < n; i++) {
        const Value *ki = seq_at(argv[1], i);
        double k = plain_ix ? ki->u.n : v_primal(*ki);
        if (take_index(k, len) < 0) {
            for (int j = i; j < n; j++) rs->v[j] = num_val(0);
            v_release(obj_val(V_ARR, rs));
            err_raise("take: index %s out of range for array of length %d", value_num_str(k), len);
        }
        Value e = *seq_at(argv[0], (int)k);
        if (!nums) v_retain(e);
        rs->v[i] = e;
    }
    rs->known = nums ? storage_of(argv[0])->known : 0;
    return obj_val(V_ARR, rs);
}

/* Whether every element of s is a number (KNOWN_NOHEAP), looked at if
 * not known, and learnt (as value_seq_check_numbers learns it): a literal
 * array's, once. */
static int noheap_learnt(Storage *s)
{
    if (s->known & KNOWN_NOHEAP) return 1;
    int other = 0;
    for (int i = 0; i < s->n; i++) other |= s->v[i].t != V_NUM;
    if (!other) s->known |= KNOWN_NOHEAP;
    return !other;
}

/* Whether b is take (exec_compound's `v op= take(a, idx)` reads a[idx[i]]
 * in place, without the gathered temporary). */
int builtin_is_take(const Builtin *b) { return b->fn == bi_take; }

/* Whether take(a, idx) is bi_take's gather of numbers by numbers and
 * cannot fail: a and idx arrays (not views) of plain numbers, every index
 * in range. Its result would be a[idx[0]], a[idx[1]], ... (the same Values,
 * known as a's storage is). builtin_take(a, idx) is take's value. */
Value builtin_take(Value a, Value idx)
{
    Value argv[2] = { a, idx };
    return bi_take(2, argv);
}

int builtin_take_plain(Value a, Value idx)
{
    return a.t == V_ARR && idx.t == V_ARR && noheap_learnt(AS_ARR(a)) && noheap_learnt(AS_ARR(idx)) &&
           all_indices(AS_ARR(idx)->v, AS_ARR(idx)->n, AS_ARR(a)->n);
}

static Value bi_assert(int argc, Value *argv)
{
    if (argv[0].t != V_BOOL)
        err_raise("assert: the condition must be true or false, got %s", value_type_name(argv[0]));
    if (!argv[0].u.b) {
        if (argc > 1 && argv[1].t == V_STR) err_raise("assertion failed: %s", AS_STR(argv[1])->s);
        err_raise("assertion failed");
    }
    return nil_val();
}

static Value bi_error(int argc, Value *argv)
{
    (void)argc;
    if (argv[0].t == V_STR) err_raise("%s", AS_STR(argv[0])->s);
    char buf[64];
    if (argv[0].t == V_NUM) num_format(argv[0].u.n, buf, sizeof buf);
    else snprintf(buf, sizeof buf, "%s", value_type_name(argv[0]));
    err_raise("%s", buf);
}

/* ---------------------------------------------------------- reductions */

static Value bi_sum(int argc, Value *argv)
{
    /* an array of plain numbers in one pass (a million-element sum(a)
     * was four); anything else is checked first */
    Value r;
    if (argc == 2) return mat_reduce_axis(OP_ADD, argv, "sum");
    if (arith_sum_plain(argv[0], &r)) return r;
    arg_seq(argv, 0, "sum");
    return arith_sum(argv[0]);
}

static Value bi_dot(int argc, Value *argv)
{
    (void)argc;
    /* a dot over duals of a jvp first (arith_dot would take it next):
     * fwd_dot takes numbers and duals only, so what it takes has nothing
     * arg_seq's look for strings would refuse (kmeans' dot(diff, diff):
     * 8000 duals looked at twice, 256k instructions) */
    Value d;
    if (G->fwd.top && is_seq(argv[0]) && is_seq(argv[1]) && seq_len(argv[0]) == seq_len(argv[1]) &&
        fwd_dot(argv[0], argv[1], seq_len(argv[0]), &d))
        return d;
    arg_seq(argv, 0, "dot");
    arg_seq(argv, 1, "dot");
    return arith_dot(argv[0], argv[1]);
}

static Value bi_prod(int argc, Value *argv)
{
    (void)argc;
    arg_seq(argv, 0, "prod");
    if (seq_len(argv[0]) == 0) return num_val(1);
    return arith_fold(OP_MUL, argv[0], "prod");
}

static Value min_max(int op, int argc, Value *argv, const char *fname)
{
    if (__builtin_expect(G->ckpt.mode == 1, 0)) ckpt_near_minmax(op, argc, argv);
    if (argc == 1) {
        arg_seq(argv, 0, fname);
        return arith_fold(op, argv[0], fname);
    }
    /* max(a, k) of a matrix: along axis k (max(k, a) is elementwise) */
    if (is_mat(argv[0]) && IS_NUMBER(argv[1])) return mat_reduce_axis(op, argv, fname);
    return arith_apply(op, argv[0], argv[1]);
}

static Value bi_min(int argc, Value *argv) { return min_max(OP_MIN, argc, argv, "min"); }
static Value bi_max(int argc, Value *argv) { return min_max(OP_MAX, argc, argv, "max"); }

/* ----------------------------------------------------------------- math */

/* The builtins that are ops (the FN rows of ops.def): op_bi_##e applies
 * op e to its one or two arguments, elementwise on arrays. */
#define OP(e, name, kind, flags, f, da, db) \
    enum { ARITY_##e = OPK_ARITY_##kind }; static const char name_##e[] __attribute__((unused)) = name;
#define FN(e, help, example) \
    static Value op_bi_##e(int argc, Value *argv) { (void)argc; return arith_apply(OP_##e, argv[0], argv[ARITY_##e - 1]); }
#include "ops.def"
#undef FN
#undef OP

static const Builtin op_builtins[] = {
#define OP(e, name, kind, flags, f, da, db)
#define FN(e, help, example) { name_##e, ARITY_##e, ARITY_##e, op_bi_##e, help },
#include "ops.def"
#undef FN
#undef OP
};
#define NOP_BUILTINS (int)(sizeof op_builtins / sizeof op_builtins[0])
static const uint8_t op_builtin_op[] = {
#define OP(e, name, kind, flags, f, da, db)
#define FN(e, help, example) OP_##e,
#include "ops.def"
#undef FN
#undef OP
};
static const char *const op_builtin_example[] = {
#define OP(e, name, kind, flags, f, da, db)
#define FN(e, help, example) example,
#include "ops.def"
#undef FN
#undef OP
};

/* The op behind a one-argument math builtin, so the evaluator can apply it
 * to a number without the call (eval_call caches it per call site); -1 for
 * every other builtin. */
int builtin_math1_op(const Builtin *b)
{
    for (int i = 0; i < NOP_BUILTINS; i++)
        if (b == &op_builtins[i]) return b->minargs == 1 ? op_builtin_op[i] : -1;
    return -1;
}

/* The example :help shows for a builtin that is an op; NULL for others. */
const char *builtin_op_example(const char *name)
{
    for (int i = 0; i < NOP_BUILTINS; i++)
        if (!strcmp(op_builtins[i].name, name)) return op_builtin_example[i];
    return NULL;
}

/* ------------------------------------------------------------ randomness */

/* A draw is a constant: a function that only draws records nothing. When
 * a draw meets a recorded value, the entry that reads it saves it (as a
 * const operand), so the tape keeps the very numbers a replay must see. */
static Value draw(int normal)
{
    if (normal) return num_val(num_round(rng_normal(&G->rng)));
    double u = num_round(rng_uniform(&G->rng));
    if (u >= 1) u = num_below_one();   /* rounding to a narrow format must not reach 1 */
    return num_val(u);
}

static Value draws(int argc, Value *argv, int normal, const char *fname)
{
    if (argc == 0) return draw(normal);
    if (argc == 2) {
        int rows, cols;
        mat_dims(argv, fname, &rows, &cols);
        Value r = mat_new(rows, cols);
        for (int i = 0; i < rows * cols; i++) AS_ARR(r)->v[i] = draw(normal);
        return r;
    }
    int n = arg_count(argv, 0, fname);
    Value r = value_arr_new(n);
    for (int i = 0; i < n; i++) AS_ARR(r)->v[i] = draw(normal);
    return r;
}

static Value bi_rand(int argc, Value *argv) { return draws(argc, argv, 0, "rand"); }
static Value bi_randn(int argc, Value *argv) { return draws(argc, argv, 1, "randn"); }

static Value bi_seed(int argc, Value *argv)
{
    (void)argc;
    double d = arg_number(argv, 0, "seed");
    if (d != floor(d) || d < 0 || d >= 18446744073709551616.0)
        err_raise("seed: the seed must be a whole number from 0 to 2^64 - 1, got %s", value_num_str(d));
    rng_seed(&G->rng, (uint64_t)d);
    return nil_val();
}

/* ------------------------------------------------------------------- num */

/* The length of a decimal literal at s (digits, a point, an exponent), or
 * 0 when s does not start with one. */
static size_t decimal_len(const char *s)
{
    size_t i = 0, digits = 0;
    while (isdigit((unsigned char)s[i])) i++, digits++;
    if (s[i] == '.') for (i++; isdigit((unsigned char)s[i]); i++) digits++;
    if (!digits) return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-') j++;
        if (!isdigit((unsigned char)s[j])) return i;
        while (isdigit((unsigned char)s[j])) j++;
        i = j;
    }
    return i;
}

/* num(s): the number a string spells, as a literal would be read (rounded
 * once to the active backend); also inf and nan, with a sign; spaces around
 * it are ignored. */
static Value bi_num(int argc, Value *argv)
{
    (void)argc;
    if (argv[0].t != V_STR) err_raise("num: expects a string, got %s", value_type_name(argv[0]));
    const char *s = AS_STR(argv[0])->s, *p = s;
    while (isspace((unsigned char)*p)) p++;
    int neg = *p == '-';
    if (*p == '-' || *p == '+') p++;
    size_t n = decimal_len(p);
    double x;
    if (n) {
        char *text = err_malloc(n + 1);
        memcpy(text, p, n);
        text[n] = 0;
        x = num_literal(text);
        free(text);
    } else if (!strncasecmp(p, "infinity", n = 8) || !strncasecmp(p, "inf", n = 3)) x = INFINITY;
    else if (!strncasecmp(p, "nan", n = 3)) x = num_round(NAN);
    else n = 0, x = 0;
    const char *end = p + n;
    while (isspace((unsigned char)*end)) end++;
    if (!n || *end || (int)strlen(s) != AS_STR(argv[0])->len)
        err_raise("num: \"%s\" is not a number", s);
    return num_val(num_round(neg ? -x : x));
}

/* ------------------------------------------------------------------ bits */

static Value bi_bits(int argc, Value *argv)
{
    (void)argc;
    double x = num_round(arg_number(argv, 0, "bits"));
    char buf[32];
    int n = num_bits(x, buf, sizeof buf);
    return value_str_new(buf, n);
}

static Value bi_frombits(int argc, Value *argv)
{
    (void)argc;
    if (argv[0].t != V_STR) err_raise("frombits: expects a string like \"0x3c00\", got %s", value_type_name(argv[0]));
    double x;
    if ((int)strlen(AS_STR(argv[0])->s) != AS_STR(argv[0])->len || !num_frombits(AS_STR(argv[0])->s, &x))
        err_raise("frombits: \"%s\" is not a hex bit pattern of the %s format (\"0x\" and at most %d hex digits)",
                 AS_STR(argv[0])->s, num_formats[G->num.backend].name, num_formats[G->num.backend].width / 4);
    return num_val(x);
}

/* ----------------------------------------------------------------- views */

static int whole(Value v, const char *what)
{
    if (v.t != V_NUM) err_raise("view: %s must be a number, got %s", what, value_type_name(v));
    if (v.u.n != floor(v.u.n) || fabs(v.u.n) > 2e9) err_raise("view: %s must be a whole number, got %s", what, value_num_str(v.u.n));
    return (int)v.u.n;
}

/* The value view(a, ...), row(a, i) or col(a, j) views, taken as a place
 * when arg is a variable: if its storage is shared by value with another
 * array it is split off first, so the view aliases that variable alone,
 * and home/owner name the variable a write through the view makes a new
 * version of (owner -1: none). A view that is only read at once
 * (readonly: the call's view_read, resolve.c) reads the storage as it is,
 * shared or not: nothing writes through it, and nothing writes that
 * storage before the read. */
Value builtin_view_base(Node *arg, Env *env, EnvCell **home, int *owner, int readonly)
{
    Value base;
    Place pl;
    *home = NULL;
    *owner = -1;
    if (readonly && arg->kind == N_NAME && eval_place(arg, env, &pl)) {
        if (pl.slot->t == V_UNDEF) suggest_undefined(arg, env);
        base = *pl.slot;
        v_retain(base);
    } else if (arg->kind == N_NAME && eval_place(arg, env, &pl)) {
        if (pl.slot->t == V_UNDEF) suggest_undefined(arg, env);
        arr_own(pl.slot);
        base = *pl.slot;
        v_retain(base);
        if (base.t == V_ARR) {
            if (pl.home && !pl.home->cell) {
                pl.home->cell = err_malloc(sizeof(EnvCell));
                *pl.home->cell = (EnvCell){ 1, pl.home };
            }
            *home = pl.home ? pl.home->cell : NULL;
            *owner = pl.index;
        }
    } else {
        base = eval_expr(arg, env);
    }
    return base;
}

/* The view of base's elements start, start + stride, ... (len of them,
 * in range), composed with base when base is a view itself; takes base.
 * readonly: a view only read at once, which leaves the storage as
 * unaliased as it was (builtin_view_base). */
Value builtin_view_over(Value base, EnvCell *home, int owner, int start, int len, int stride, int readonly)
{
    Storage *s;
    if (base.t == V_VIEW) {      /* compose in 64 bits: the result must index the storage */
        View *w = AS_VIEW(base);
        s = w->s;
        home = w->home;      /* a view of a view writes its owner */
        owner = w->owner;
        long long st = w->start + (long long)start * w->stride, sd = (long long)stride * w->stride;
        if (len == 0) st = 0;
        if (sd > INT_MAX || sd < -INT_MAX) sd = sd > 0 ? INT_MAX : -INT_MAX;   /* len <= 1 here */
        start = (int)st;
        stride = (int)sd;
    } else {
        s = AS_ARR(base);
    }
    int aliased = s->aliased;
    Value r = value_view_new(s, start, len, stride);
    if (readonly) s->aliased = aliased;
    if (owner >= 0) {
        AS_VIEW(r)->home = home;
        AS_VIEW(r)->owner = owner;
        if (home) home->rc++;
    }
    v_release(base);
    return r;
}

static Value sp_view(Node *call, Env *env)
{
    if (call->n < 1 || call->n > 4) err_raise("view expects 1 to 4 arguments, got %d", call->n);
    EnvCell *home;
    int owner;      /* the variable a write through the view makes a version of */
    Value base = builtin_view_base(call->list[0], env, &home, &owner, call->view_read);
    if (!is_seq(base)) {
        const char *what_type = value_type_name(base);   /* before the release: a matrix is read */
        v_release(base);
        err_raise("view: argument 1 must be an array or a view, got %s", what_type);
    }
    int n = seq_len(base), start = 0, len = n, stride = 1;
    Value args[3];
    int nargs = call->n - 1;
    for (int i = 0; i < nargs; i++) args[i] = eval_expr(call->list[i + 1], env);
    G->err.where.node = call;
    if (nargs >= 1) start = whole(args[0], "start");
    len = nargs >= 2 ? whole(args[1], "len") : n - start;
    if (nargs >= 3) stride = whole(args[2], "stride");
    if (stride == 0) err_raise("view: stride must be a non-zero whole number");
    if (len < 0) err_raise("view: len must not be negative, got %d", len);
    long last = start + (long)(len - 1) * stride;
    if (len > 0 && (start < 0 || start >= n || last < 0 || last >= n))
        err_raise("view out of range: start %d, len %d, stride %d over %d elements", start, len, stride, n);
    return builtin_view_over(base, home, owner, start, len, stride, call->view_read);
}

static Value bi_detach(int argc, Value *argv)
{
    (void)argc;
    Value v = argv[0];
    if (IS_NUMBER(v)) return num_val(v_primal(v));
    if (is_seq(v)) {
        value_seq_check_numbers(v, "detach");
        int n = seq_len(v);
        Value r = value_arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(r)->v[i] = num_val(v_primal(*seq_at(v, i)));
        shape_like(r, v);
        return r;
    }
    v_retain(v);
    return v;
}

static Value bi_type(int argc, Value *argv)
{
    (void)argc;
    const char *t = value_type_name(argv[0]);
    return value_str_new(t, (int)strlen(t));
}

/* ceil and round are made of floor, so their derivative is floor's (0,
 * SPEC "Derivatives") and their kink notes are floor's, at their jumps:
 * ceil(x) = -floor(-x); round(x) = floor(x + 1/2) less a constant (0 or 1)
 * that sends halves to the even neighbour, as Python, Julia and numpy
 * round, and keeps 0.49999999999999994 at 0. */
static Value bi_ceil(int argc, Value *argv)
{
    (void)argc;
    Value n = arith_apply(OP_NEG, argv[0], argv[0]);
    Value f = arith_apply(OP_FLOOR, n, n);
    Value r = arith_apply(OP_NEG, f, f);
    v_release(n);
    v_release(f);
    return r;
}

static double round_fix(Value x, Value f)
{
    return v_primal(f) - nearbyint(v_primal(x));
}

static Value bi_round(int argc, Value *argv)
{
    (void)argc;
    Value x = argv[0];
    if (!IS_NUMBER(x) && !is_seq(x)) err_raise("round: argument 1 must be a number or an array, got %s", value_type_name(x));
    Value half = num_val(num_round(0.5));
    Value s = arith_apply(OP_ADD, x, half);
    Value f = arith_apply(OP_FLOOR, s, s);
    v_release(s);
    Value fix;
    if (is_seq(x)) {
        int n = seq_len(x);
        fix = value_arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(fix)->v[i] = num_val(round_fix(*seq_at(x, i), *seq_at(f, i)));
    } else {
        fix = num_val(round_fix(x, f));
    }
    Value r = arith_apply(OP_SUB, f, fix);
    v_release(f);
    v_release(fix);
    return r;
}

/* Before the ops' builtins in :help's and completion's order. */
static const Builtin builtins_first[] = {
    {"type", 1, 1, bi_type, "type(x): \"number\", \"array\", \"view\", \"string\", \"boolean\", \"function\" or \"nil\""},
    {"print", 0, -1, bi_print, "print(a, b, ...): write the values separated by spaces, then a newline"},
    {"len", 1, 1, bi_len, "len(a): number of elements of an array or view, rows of a matrix (or characters of a string)"},
    {"zeros", 1, 2, bi_zeros, "zeros(n): an array of n zeros; zeros(m, n): an m x n matrix of them"},
    {"ones", 1, 2, bi_ones, "ones(n): an array of n ones; ones(m, n): an m x n matrix of them"},
    {"range", 1, 1, bi_range, "range(n): the array [0, 1, ..., n - 1]"},
    {"take", 2, 2, bi_take, "take(a, idx): the array [a[idx[0]], a[idx[1]], ...], differentiable in a"},
    {"sum", 1, 2, bi_sum, "sum(a): sum of the elements (one tape entry; the quire in posit backends); sum(a, 1) / sum(a, 2) of a matrix: down the columns (1 x n) / along the rows (m x 1)"},
    {"prod", 1, 1, bi_prod, "prod(a): product of the elements"},
    {"dot", 2, 2, bi_dot, "dot(a, b): sum of a[i]*b[i] (one tape entry; the quire in posit backends)"},
};

static const Builtin builtins[] = {
    {"ceil", 1, 1, bi_ceil, "ceil(x): smallest whole number >= x (derivative 0)"},
    {"round", 1, 1, bi_round, "round(x): the nearest whole number, halves to the even one (derivative 0)"},
    {"min", 1, 2, bi_min, "min(a) of an array, or min(x, y) elementwise (a tie goes to x); min(a, 1) / min(a, 2) of a matrix a: down the columns / along the rows"},
    {"max", 1, 2, bi_max, "max(a) of an array, or max(x, y) elementwise (a tie goes to x); max(a, 1) / max(a, 2) of a matrix a: down the columns / along the rows"},
    {"assert", 1, 2, bi_assert, "assert(cond, msg): stop with an error when cond is false"},
    {"error", 1, 1, bi_error, "error(msg): stop with an error"},
    {"seed", 1, 1, bi_seed, "seed(n): restart the Philox4x32-10 generator at seed n"},
    {"rand", 0, 2, bi_rand, "rand(), rand(n) or rand(m, n): uniform draws in [0, 1) from the session generator"},
    {"randn", 0, 2, bi_randn, "randn(), randn(n) or randn(m, n): standard normal draws from the session generator"},
    {"bits", 1, 1, bi_bits, "bits(x): the bit pattern of x in the active backend, as \"0x...\""},
    {"frombits", 1, 1, bi_frombits, "frombits(s): the number with bit pattern s in the active backend"},
    {"num", 1, 1, bi_num, "num(s): the number the string s spells (\"2.5\", \"-1e3\", \"inf\"); an error for anything else"},
    {"detach", 1, 1, bi_detach, "detach(x): x as a constant, cut off from the tape"},
    {"grad", 1, 2, ad_grad, "grad(f): the gradient function of f in its first argument only (a number or array; the result a number); grad(f, k): in argument k, from 0; grad(f, \"all\"): in every argument (numbers), an array"},
    {"hvp", 3, 3, ad_hvp, "hvp(f, x, v): Hessian of f at x times v (forward over reverse)"},
    {"jvp", 3, 3, fwd_jvp_builtin, "jvp(f, x, v): forward-mode directional derivative f'(x)·v, no tape; jvp(f, x, V) with V an n×k matrix: J·V (m×k), k directions in one pass"},
    {"fixedpoint", 2, 4, fixedpoint_builtin, "fixedpoint(g, x0), fixedpoint(g, x0, tol, maxiter): iterate x = g(x) until a step changes x by at most tol (relative; 1e-12, at most 1000 steps); derivatives of x* by the implicit function theorem"},
    {"fwdgrad", 2, 2, fwd_fwdgrad, "fwdgrad(f, x): forward gradient (grad f(x)·v) v, v ~ N(0, I) from the session generator"},
};

void builtin_register(void)
{
    for (size_t i = 0; i < sizeof builtins_first / sizeof builtins_first[0]; i++) builtin_define(&builtins_first[i]);
    for (int i = 0; i < NOP_BUILTINS; i++) builtin_define(&op_builtins[i]);
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) builtin_define(&builtins[i]);
    builtin_define_special("view", sp_view, "view(a), view(a, start, len), view(a, start, len, stride): an alias of a's elements");
    builtin_define_special("d", ad_d, "d(y, place): derivative of y with respect to x, x@k, an array a or an element a[i]");
    plot_register();
    mat_register();
    jac_register();
    int pi_index = eval_global_index("pi");
    Global *g = &G->eval.globals[pi_index];
    v_release(g->v);
    g->v = num_val(M_PI);
    rng_seed(&G->rng, 0);
}
