#!/bin/bash
# The layering the code rests on (docs/design.md): nothing outside
# src/tape.[ch] touches the tape's arrays (the entry layout can change in
# one file), and the sweeps never call the evaluator. Fails naming the
# offending lines.
cd "$(dirname "$0")/../.." || exit 1
status=0
arrays=$(grep -nE '\btape\.(op|arg|val|pool|derivs|n|npool|nderivs|cap|cappool|capderivs)\b' src/*.c src/*.h \
         | grep -vE '^src/tape\.(c|h):')
if [ -n "$arrays" ]; then
    echo "the tape's arrays touched outside src/tape.[ch]:"
    echo "$arrays"
    status=1
fi
upward=$(grep -nE '#include "(eval|builtins|cmd|repl|parse|resolve|tapeview|tapedot|plot|ad|fwd|help)\.h"' \
         src/tape.c src/sweep.c src/fixpt.c src/arith.c src/dual.c src/num.c src/value.c src/gc.c src/versions.c src/kinks.c \
         src/matrix.c)
if [ -n "$upward" ]; then
    echo "a file below the evaluator includes a header above it:"
    echo "$upward"
    status=1
fi
exit $status
