/* regvm.h: simple scalar closures compiled once to a register form and
 * run on unboxed doubles (regvm.c says what and why). */
#ifndef WG_REGVM_H
#define WG_REGVM_H
#include "value.h"

/* FnInfo.reg_state. REG_RESTING: compiled, but its calls by a local or
 * captured name were declined many times in a row (det's minor under
 * grad, its A recorded), so they are not offered until a closure of it is
 * made again (eval.c's make_closure): offering costs a recursive closure
 * at every call, and declining is always safe. The tree walker's path
 * tests reg_state < REG_DECLINED, one compare either way. */
enum { REG_UNTRIED, REG_COMPILED, REG_DECLINED, REG_RESTING };

/* c(args) run in its compiled form, its value in *out: 1. 0: declined
 * (nothing done, nothing raised): the caller runs the call as it would
 * have. args are the argc arguments evaluated (owned by the caller; a
 * call it takes has only plain numbers, which own nothing). The caller
 * has set G->err.where.node to the call's node. */
int regvm_call(Closure *c, int argc, const Value *args, Value *out, int by_global);

/* Calls the tree walker offered the compiled form, calls that entered it
 * from the tree walker, and calls it ran in all (with its own calls),
 * since the process began: for tests (tests/unit/test_regvm.c) that must
 * see it ran, or rested. */
extern unsigned long regvm_offers, regvm_entries, regvm_calls;
/* Entries of the recording form (regvm.c), which calls with recorded
 * numbers in the arrays they read run in. */
extern unsigned long regvm_rec_entries;
/* Entries of the forward form (regvm_jvp). */
extern unsigned long regvm_fwd_entries;

/* jvp(f, x, v)'s tangent in *tangent, f run in its compiled form with a
 * tangent beside each register (regvm.c's forward form): 1. 0: declined,
 * nothing done (fwd_jvp runs f on duals). x and v are jvp's arguments;
 * the caller has pushed the jvp's tag (which the call needs no more). */
int regvm_jvp(Value f, Value x, Value v, Value *tangent);

/* The tape ids the compiled calls running hold in their locals, for a
 * reclaiming pass (tapegc.c) to mark and renumber as a frame's: the
 * evaluator's roots (eval.c) name them. */
void regvm_each_root(void (*fn)(uint32_t *id, void *ud), void *ud);

#endif
