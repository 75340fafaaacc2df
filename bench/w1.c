/* W1 reference: the scalar loop of w1.wg in plain C.
   n comes from argv and the result is printed, so -O2 cannot delete the loop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double w1(long n) {
    double x = 0.5;
    for (long i = 0; i < n; i++) x = sin(x) * 0.9 + 0.1;
    return x;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    printf("%.17g\n", w1(n));
    return 0;
}
