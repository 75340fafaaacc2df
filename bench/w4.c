/* W4 reference: a[i] = 1 + i*1e-6; a[i] = a[i]*a[i] in place;
   g = d(sum(a), a as it was before the loop), by a hand-written adjoint that
   saves each overwritten element, as a tape of in-place writes must.
   Prints: sum(a) sum(g) */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    double *a = malloc(n * sizeof *a), *saved = malloc(n * sizeof *saved);
    if (!a || !saved) { perror("malloc"); return 1; }
    for (long i = 0; i < n; i++) a[i] = 1 + i * 1e-6;

    for (long i = 0; i < n; i++) { saved[i] = a[i]; a[i] = a[i] * a[i]; }
    double s = 0.0;
    for (long i = 0; i < n; i++) s += a[i];

    double *g = a;                     /* reuse: abar, starts as dsum/da = 1 */
    for (long i = n - 1; i >= 0; i--) g[i] = 1.0 * 2.0 * saved[i];
    double gs = 0.0;
    for (long i = 0; i < n; i++) gs += g[i];
    printf("%.17g %.17g\n", s, gs);
    free(a); free(saved);
    return 0;
}
