/* W2 reference: h = tanh(w*h + b) for n steps, then dh/dw and dh/db by a
   hand-written adjoint: the forward sweep stores every h_t, the reverse sweep
   walks them back.  w = 0.9, b = 0.1, h0 = 0.1 unless argv says otherwise
   (w2 N W H0: the underflowing row runs w = 0.5, h0 = 0).
   Prints: h dh/dw dh/db */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    double w = argc > 2 ? atof(argv[2]) : 0.9, b = 0.1;
    double *h = malloc((n + 1) * sizeof *h);   /* h[t] is h after t steps */
    if (!h) { perror("malloc"); return 1; }
    h[0] = argc > 3 ? atof(argv[3]) : 0.1;
    for (long t = 1; t <= n; t++) h[t] = tanh(w * h[t - 1] + b);

    double hbar = 1.0, wbar = 0.0, bbar = 0.0;
    for (long t = n; t >= 1; t--) {
        double ubar = hbar * (1.0 - h[t] * h[t]);  /* through tanh */
        wbar += ubar * h[t - 1];
        bbar += ubar;
        hbar = ubar * w;
    }
    printf("%.17g %.17g %.17g\n", h[n], wbar, bbar);
    free(h);
    return 0;
}
