#!/bin/bash
# Two rewrites of GradBench programs that must give the same numbers to
# the bit as the plain forms they replace, on the recorded sessions:
#  - ht.wg's Jacobian moves each vertex only by the bones that weigh it
#    (skinned_sparse): answered against the same program whose Jacobian
#    runs the dense skinned loop (jvp(ht, ...));
#  - kmeans.wg's dir takes J from the primal of hvp's pass: answered
#    against J = grad(...) and H = hvp(...) taken apart.
# Every answer (all evaluations of each session) must be identical text.
BUILD=${WG_BUILD:-build}
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
case "$BUILD" in /*) DRV="$BUILD/gradbench/wengert-gradbench" ;; *) DRV="$ROOT/$BUILD/gradbench/wengert-gradbench" ;; esac
SD=$(ls -d "$ROOT"/../shared/gradbench/sessions /work/shared/gradbench/sessions 2>/dev/null | head -1)
if [ ! -x "$DRV" ]; then echo "SKIP: $DRV not built (make gradbench-tool)"; exit 0; fi
if [ -z "$SD" ]; then echo "SKIP: no recorded sessions"; exit 0; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/new" "$T/old"
cp "$ROOT"/bench/gradbench/*.wg "$T/new/"
cp "$ROOT"/bench/gradbench/*.wg "$T/old/"
# the plain forms
sed -i 's/jvp(ht_sparse, z,/jvp(ht, z,/' "$T/old/ht.wg"
python3 - "$T/old/kmeans.wg" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
i = s.index("fn dir() {")
s = s[:i] + """fn dir() {
    at = gather_index(nearest(centroids))
    J = grad(fn(C) => assigned_cost(C, at))(centroids)
    H = hvp(fn(C) => assigned_cost(C, at), centroids, ones(len(centroids)))
    return J / H
}
"""
open(p, "w").write(s)
PY
grep -q 'jvp(ht, z,' "$T/old/ht.wg" || { echo "FAIL: ht.wg's Jacobian line not found"; exit 1; }
bad=0
for s in ht-simple-small ht-complicated-small kmeans; do
    f="$SD/$s.jsonl"
    [ -f "$f" ] || { echo "SKIP: no $s session"; continue; }
    python3 "$ROOT/tests/shell/gb_session.py" messages "$f" >"$T/$s.msgs"
    for v in new old; do
        WENGERT_STDLIB="$ROOT/stdlib" "$DRV" "$T/$v" <"$T/$s.msgs" 2>"$T/$s.$v.err" |
            python3 "$ROOT/tests/shell/gb_session.py" answers >"$T/$s.$v"
    done
    n=$(grep -c '"output"' "$T/$s.new")
    if [ "$n" -lt 1 ]; then echo "FAIL: $s: no answers"; head -5 "$T/$s.new.err"; bad=1
    elif cmp -s "$T/$s.new" "$T/$s.old"; then echo "$s: $n answers identical"
    else echo "FAIL: $s: the answers differ"; diff "$T/$s.new" "$T/$s.old" | head -c 600; bad=1; fi
done
exit $bad
