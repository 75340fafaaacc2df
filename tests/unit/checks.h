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

#endif
