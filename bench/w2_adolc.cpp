// W2 reference with ADOL-C: tape h = tanh(w*h + b) for n steps with adoubles
// (keeping the Taylor values), then one first-order reverse sweep (fos_reverse).
// w = 0.9, b = 0.1, h0 = 0.1 unless argv says otherwise (N W H0).
// The buffers are sized so the whole tape stays in memory, as wengert's does.
// Prints info lines "# key value", then: h dh/dw dh/db
#include <adolc/adolc.h>
#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    const short tag = 1;
    unsigned big = (unsigned)(32 * n + 4096);   // elements per buffer: whole tape in core
    double x[2] = {argc > 2 ? atof(argv[2]) : 0.9, 0.1}, y;   // w, b
    double h0 = argc > 3 ? atof(argv[3]) : 0.1;

    trace_on(tag, 1, big, big, big, big);
    adouble w, b, h;
    w <<= x[0];
    b <<= x[1];
    h = h0;
    for (long t = 0; t < n; t++) h = tanh(w * h + b);
    h >>= y;
    trace_off();

    double u = 1.0, g[2];
    fos_reverse(tag, 1, 2, &u, g);

    size_t st[STAT_SIZE];
    tapestats(tag, st);
    // the tape proper (operations, locations, constants), and the Taylor stack
    // of values the forward sweep saved for the reverse sweep
    double tape = st[NUM_OPERATIONS] * 1.0 + st[NUM_LOCATIONS] * sizeof(locint)
                + st[NUM_VALUES] * sizeof(double);
    double taylor = st[TAY_STACK_SIZE] * sizeof(double);
    printf("# ops %zu\n# ops_per_step %.2f\n", st[NUM_OPERATIONS], (double)st[NUM_OPERATIONS] / n);
    printf("# bytes_per_op %.1f\n", (tape + taylor) / st[NUM_OPERATIONS]);
    printf("# bytes_per_op_tape %.1f\n", tape / st[NUM_OPERATIONS]);
    printf("# bytes_per_step %.1f\n", (tape + taylor) / n);
    printf("# in_core %d\n", !(st[OP_FILE_ACCESS] || st[LOC_FILE_ACCESS] || st[VAL_FILE_ACCESS]));
    printf("%.17g %.17g %.17g\n", y, g[0], g[1]);
    return 0;
}
