// W3 reference with ADOL-C: tape the recurrence for n steps, then the full
// 2x2 Hessian over (w, b) with the hessian() driver.
// Prints info lines (the whole Hessian), then: h d2h/dw2 d2h/dwdb
#include <adolc/adolc.h>
#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    const short tag = 2;
    unsigned big = (unsigned)(32 * n + 4096);   // whole tape in core
    double x[2] = {0.9, 0.1}, y;    // w, b; h0 = 0.1

    trace_on(tag, 0, big, big, big, big);
    adouble w, b, h;
    w <<= x[0];
    b <<= x[1];
    h = 0.1;
    for (long t = 0; t < n; t++) h = tanh(w * h + b);
    h >>= y;
    trace_off();

    double **H = myalloc2(2, 2);
    hessian(tag, 2, x, H);              // fills the lower triangle
    printf("# hessian [[%.17g, %.17g], [%.17g, %.17g]]\n", H[0][0], H[1][0], H[1][0], H[1][1]);
    printf("%.17g %.17g %.17g\n", y, H[0][0], H[1][0]);
    myfree2(H);
    return 0;
}
