/* W3 reference: d2h/dw2 (and d2h/dw db) of h = tanh(w*h + b) after n steps, by
   hand, forward over reverse: the forward sweep stores h_t and its tangent
   hdot_t = dh_t/dw; the reverse sweep carries the adjoints and their tangents.
   Prints info lines, then: h d2h/dw2 d2h/dwdb.  w = 0.9, b = 0.1, h0 = 0.1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    double w = 0.9, b = 0.1;
    double *h = malloc((n + 1) * sizeof *h), *hd = malloc((n + 1) * sizeof *hd);
    if (!h || !hd) { perror("malloc"); return 1; }
    h[0] = 0.1; hd[0] = 0.0;
    for (long t = 1; t <= n; t++) {
        h[t] = tanh(w * h[t - 1] + b);
        hd[t] = (1.0 - h[t] * h[t]) * (h[t - 1] + w * hd[t - 1]);
    }
    /* adjoints (xbar) and their tangents in direction w (xbard) */
    double hbar = 1.0, hbard = 0.0, wbar = 0.0, wbard = 0.0, bbard = 0.0;
    for (long t = n; t >= 1; t--) {
        double s = 1.0 - h[t] * h[t], sd = -2.0 * h[t] * hd[t];
        double ubar = hbar * s, ubard = hbard * s + hbar * sd;
        wbar += ubar * h[t - 1];
        wbard += ubard * h[t - 1] + ubar * hd[t - 1];
        bbard += ubard;
        hbard = ubard * w + ubar;      /* d(ubar*w)/dw, wdot = 1 */
        hbar = ubar * w;
    }
    printf("# dh/dw %.17g\n# d2h/dwdb %.17g\n", wbar, bbard);
    printf("%.17g %.17g %.17g\n", h[n], wbard, bbard);
    free(h); free(hd);
    return 0;
}
