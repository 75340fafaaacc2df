// W4 reference with ADOL-C: n independents a[i] = 1 + i*1e-6, squared in
// place on the tape, summed; one reverse sweep gives d sum / d a (initial a).
// Prints info lines, then: sum(a) sum(g)
#include <adolc/adolc.h>
#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    const short tag = 3;
    unsigned big = (unsigned)(32 * n + 4096);   // whole tape in core
    double *x = new double[n], *g = new double[n], y;
    for (long i = 0; i < n; i++) x[i] = 1 + i * 1e-6;

    trace_on(tag, 1, big, big, big, big);
    adouble *a = new adouble[n];
    for (long i = 0; i < n; i++) a[i] <<= x[i];
    for (long i = 0; i < n; i++) a[i] = a[i] * a[i];
    adouble s = 0.0;
    for (long i = 0; i < n; i++) s += a[i];
    s >>= y;
    trace_off();

    double u = 1.0;
    fos_reverse(tag, 1, n, &u, g);
    double gs = 0.0;
    for (long i = 0; i < n; i++) gs += g[i];

    size_t st[STAT_SIZE];
    tapestats(tag, st);
    printf("# ops %zu\n# in_core %d\n", st[NUM_OPERATIONS],
           !(st[OP_FILE_ACCESS] || st[LOC_FILE_ACCESS] || st[VAL_FILE_ACCESS]));
    printf("%.17g %.17g\n", y, gs);
    delete[] a; delete[] x; delete[] g;
    return 0;
}
