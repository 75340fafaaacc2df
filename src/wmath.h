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
/* out[i] = wm_exp(x[i]), i < n (an array's: vectorised) */
void wm_exp_n(const double *x, double *out, unsigned n);
double wm_tanh(double x);
/* out[i] = wm_tanh(x[i]), i < n (vectorised) */
void wm_tanh_n(const double *x, double *out, unsigned n);
double wm_atan(double x);
double wm_atan2(double y, double x);

#endif
