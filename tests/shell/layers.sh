#!/bin/bash
# The layering the code rests on (docs/design.md): nothing outside
# src/tape.[ch] touches the tape's arrays (the entry layout can change in
# one file), and the sweeps never call the evaluator; every header is its
# own .c file's: each function or variable a header src/X.h declares is
# defined in X.o (parse.h: also the generated lexer.o and parser.o), and no
# .c file declares another's by hand. Fails naming the offending lines.
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
         src/tape.c src/sweep.c src/fixtape.c src/arith.c src/dual.c src/num.c src/value.c src/valuegc.c src/versions.c src/kinks.c \
         src/matrix.c)
if [ -n "$upward" ]; then
    echo "a file below the evaluator includes a header above it:"
    echo "$upward"
    status=1
fi
# Headers and their objects: the names each header declares (universal
# ctags: prototypes and extern variables) that some object defines must be
# defined by the header's own. Declarations of static inline functions and
# macros are defined by no object and are left alone.
build=${WG_BUILD:-build}
if ! command -v ctags >/dev/null || ! ctags --version 2>/dev/null | grep -q Universal; then
    echo "SKIP headers: no universal ctags"
elif ! [ -f "$build/eval.o" ]; then
    echo "SKIP headers: no objects in $build"
else
    decls=$(mktemp)
    objs="$build/lexer.o $build/parser.o"     # not a stale object of a renamed file
    for c in src/*.c; do objs="$objs $build/$(basename "$c" .c).o"; done
    # shellcheck disable=SC2086
    nm -A --defined-only $objs 2>/dev/null \
        | awk '$(NF-1) ~ /^[TDBRCV]$/ { sub(/:.*/, "", $1); sub(/.*\//, "", $1); print "def", $NF, $1 }' >"$decls"
    ctags -x --c-kinds=px --language-force=C src/*.h | awk '{ print "decl", $1, $4 }' >>"$decls"
    wrong=$(awk '
        $1 == "def"  { where[$2] = $3; next }
        $1 == "decl" { h = $3; sub(/.*\//, "", h); sub(/\.h$/, "", h)
                       if (!($2 in where)) next
                       o = where[$2]; sub(/\.o$/, "", o)
                       if (o == h || (h == "parse" && (o == "lexer" || o == "parser"))) next
                       print $3 " declares " $2 ", which " where[$2] " defines (not " h ".o)" }' "$decls" | sort -u)
    rm -f "$decls"
    if [ -n "$wrong" ]; then
        echo "$wrong"
        status=1
    fi
    byhand=$(grep -nE '^[[:space:]]*extern[[:space:]]' src/*.c | grep -v 'extern char \*\*environ')
    if [ -n "$byhand" ]; then
        echo "a .c file declares another's symbol by hand (include its header):"
        echo "$byhand"
        status=1
    fi
fi
exit $status
