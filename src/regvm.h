/* regvm.h: simple scalar closures compiled once to a register form and
 * run on unboxed doubles (regvm.c says what and why). */
#ifndef WG_REGVM_H
#define WG_REGVM_H
#include "value.h"

enum { REG_UNTRIED, REG_COMPILED, REG_DECLINED };

/* c(args) run in its compiled form, its value in *out: 1. 0: declined
 * (nothing done, nothing raised): the caller runs the call as it would
 * have. args are the argc arguments evaluated (owned by the caller; a
 * call it takes has only plain numbers, which own nothing). The caller
 * has set G->err.where.node to the call's node. */
int regvm_call(Closure *c, int argc, const Value *args, Value *out);

/* Calls that entered the compiled form from the tree walker, and calls
 * the compiled form ran in all (with its own calls), since the process
 * began: for tests (tests/unit/test_regvm.c) that must see it ran. */
extern unsigned long regvm_entries, regvm_calls;

#endif
