/* wmath_paths.h - the ways wm_exp_n and wm_tanh_n can run (wmath.c): the
 * scalar loop and, on x86-64, SSE2, AVX2 and AVX-512F loops. Not part of
 * wmath.h on purpose: callers take wm_exp_n / wm_tanh_n, which pick the
 * widest path once; only tests/unit/test_wmath.c runs each path, to check
 * that every one gives the scalar functions' bits on this CPU. */
#ifndef WENGERT_WMATH_PATHS_H
#define WENGERT_WMATH_PATHS_H

typedef void wm_array_fn(const double *x, double *out, unsigned n);

struct wm_path {
    const char *name;                  /* "scalar", "sse2", "avx2", "avx512f" */
    wm_array_fn *exp_n, *tanh_n;
    int (*runs_here)(void);            /* this CPU has the instructions */
};

/* The paths this CPU can run, slowest (scalar) first: *n of them; wm_exp_n
 * and wm_tanh_n take the last. */
const struct wm_path *wm_paths(unsigned *n);

#endif
