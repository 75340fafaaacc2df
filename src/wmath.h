/* wmath.h - wengert's own elementary functions, the same bits in every build.
 *
 * The terminal's ./wengert links glibc's libm; the page's WebAssembly (web/,
 * `make web`) links musl's. Their tanh, atan, atan2, exp ... differ in the
 * last bit on a few inputs in a hundred (tests/libm/README.md has the table),
 * so a program printed different digits in the page. These functions are
 * built only from IEEE + - * / and exact operations, which round the same
 * everywhere, so they give the same result in both; each is faithfully
 * rounded (an error below one ulp; the figures are in wmath.c).
 * tests/libm/same.sh checks both builds agree bit for bit. */
#ifndef WENGERT_WMATH_H
#define WENGERT_WMATH_H

double wm_exp(double x);
/* out[i] = wm_exp(x[i]), i < n (an array's: vectorised). out may be x
 * (in place), but no other overlap; neither needs any alignment; nothing
 * outside x[0 .. n) is read nor outside out[0 .. n) written; n at most
 * 2^32 - 9 (the loops' i + 8 <= n) */
void wm_exp_n(const double *x, double *out, unsigned n);
/* wm_exp_n, and returns sum + out[0] + out[1] + ... + out[n-1] added in
 * that order (the same bits as that loop after wm_exp_n), for less time:
 * the adds run beside the exps (logsumexp's sum) */
double wm_exp_n_sum(const double *x, double *out, unsigned n, double sum);
double wm_tanh(double x);
/* out[i] = wm_tanh(x[i]), i < n (vectorised; as wm_exp_n: out may be x) */
void wm_tanh_n(const double *x, double *out, unsigned n);
double wm_atan(double x);
double wm_atan2(double y, double x);

/* For tests/unit/test_wmath.c: the ways wm_exp_n and wm_tanh_n can run,
 * the scalar loop and, on x86-64, SSE2, AVX2 and AVX-512F loops. Callers
 * take wm_exp_n / wm_tanh_n, which pick the widest path once; the test
 * runs each path, to check that every one gives the scalar functions' bits
 * on this CPU. (Here and not in a header of its own: each header's
 * functions are its own object's, tests/shell/layers.sh.) */
typedef void wm_array_fn(const double *x, double *out, unsigned n);
struct wm_path {
    const char *name;                  /* "scalar", "sse2", "avx2", "avx512f" */
    wm_array_fn *exp_n;
    double (*exp_n_sum)(const double *x, double *out, unsigned n, double sum);
    wm_array_fn *tanh_n;
    int (*runs_here)(void);            /* this CPU has the instructions */
};
/* The paths this CPU can run, slowest (scalar) first: *n of them; wm_exp_n
 * and wm_tanh_n take the last. */
const struct wm_path *wm_paths(unsigned *n);
/* The path they take: the last of those, or the one the environment's
 * WENGERT_WMATH names if this CPU runs it (tests: scalar, sse2, avx2) */
const struct wm_path *wm_path_used(void);

#endif
