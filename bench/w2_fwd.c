/* W2 forward-mode reference: the same recurrence with a tangent carried along
   (dual numbers by hand, direction dw = 1); constant memory.  w = 0.9, b = 0.1, h0 = 0.1.  Prints: dh/dw */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    double w = 0.9, b = 0.1, h = 0.1, hdot = 0.0;
    for (long t = 0; t < n; t++) {
        double u = w * h + b, udot = h + w * hdot;   /* wdot = 1 */
        h = tanh(u);
        hdot = (1.0 - h * h) * udot;
    }
    printf("%.17g\n", hdot);
    return 0;
}
