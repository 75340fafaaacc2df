#!/bin/bash
# A nograd block that an error leaves still ends: the variables it had
# assigned become places, as when it ends normally (src/eval.c,
# eval_chunk), and the session goes on. Run through --kernel, which keeps
# the session after an error as the REPL does.
set -u
fail=0
coproc "$WG_BIN" --kernel
trap '[ -n "${COPROC_PID:-}" ] && kill "$COPROC_PID" 2>/dev/null' EXIT

ask() {
    printf '%s\n' "$1" >&"${COPROC[1]}"
    got=""
    local line
    while IFS= read -r -t 20 line <&"${COPROC[0]}"; do
        got+="$line"$'\n'
        [[ "$line" == '{"done"'* ]] && return 0
    done
    echo "FAIL no answer to $1"; fail=1
}
contains() {
    [[ "$got" == *"$1"* ]] || { echo "FAIL: after $2 no $1"; echo "  got: ${got:0:400}"; fail=1; }
}

IFS= read -r -t 20 hello <&"${COPROC[0]}"
ask '{"op":"run","code":"x = 1"}'
ask '{"op":"run","code":"nograd { x = 5; y = [1, 2]; y[0] = 3; error(\"stop\") }"}'
contains '"message":"stop"' "the error"
ask '{"op":"run","code":"z = x * y[0]\n[d(z, x), d(z, y)[0], d(z, y)[1]]"}'
contains '"value":"[3, 5, 0]"' "derivatives after the error"
# the next block settles as usual
ask '{"op":"run","code":"nograd { x = 7 }\nd(x * x, x)"}'
contains '"value":"14"' "a block after the error"
exit $fail
