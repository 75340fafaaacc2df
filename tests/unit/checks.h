/* checks.h - what the unit tests that count checks share: check(ok, what)
 * counts one and prints "FAIL: what" when it failed; each test prints
 * "NAME: n_checks checks, n_failed failed" and exits non-zero on a
 * failure. Header-only (static), as posit_check.h. */
#ifndef UNIT_CHECKS_H
#define UNIT_CHECKS_H
#include <stdio.h>

static int n_checks, n_failed;

static void check(int ok, const char *what)
{
    n_checks++;
    if (!ok) {
        n_failed++;
        printf("FAIL: %s\n", what);
    }
}

/* The tape tests' main: body run in a fresh session on a fresh tape under
 * one protected call (a wengert error escaping it counts as a failed
 * check), then the summary line; main's exit code. For tests that include
 * state.h, tape.h and error.h before this file. */
#if defined(WG_STATE_H) && defined(WG_TAPE_H) && defined(WG_ERROR_H)
static inline int run_tape_checks(const char *name, void (*body)(void *))
{
    state_enter(state_open());
    tape_init();
    if (err_pcall(body, NULL)) {
        n_checks++;
        n_failed++;
        printf("FAIL: a wengert error escaped (above)\n");
    }
    printf("%s: %d checks, %d failed\n", name, n_checks, n_failed);
    return n_failed != 0;
}
#endif

#endif
