#!/bin/bash
# The GradBench driver keeps a function's result in C between the run and
# the answer; the cycle collector did not count it as a root, so a
# collection in between (a later run, or the statement's end) freed it and
# the answer read freed memory: ht's Jacobian, written into a matrix a
# column at a time from 26 jvp passes, came back as 6.9e-310 garbage, the
# wrong length, or the driver crashed. Here that evaluation of the recorded
# ht session (hand1, simple variant), with ht.wg's Jacobian taken a column
# at a time as it was then, must answer what the reference did.
BUILD=${WG_BUILD:-build}
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
case "$BUILD" in /*) DRV="$BUILD/gradbench/wengert-gradbench" ;; *) DRV="$ROOT/$BUILD/gradbench/wengert-gradbench" ;; esac
S=$(ls "$ROOT"/../shared/gradbench/sessions/ht-simple-small.jsonl /work/shared/gradbench/sessions/ht-simple-small.jsonl 2>/dev/null | head -1)
if [ ! -x "$DRV" ]; then echo "SKIP: $DRV not built (make gradbench-tool)"; exit 0; fi
if [ -z "$S" ]; then echo "SKIP: no recorded ht session"; exit 0; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# start, define and the first jacobian only
python3 - "$S" "$T/ht.jsonl" <<'PY'
import json, sys
out, seen = [], set()
for line in open(sys.argv[1]):
    e = json.loads(line)
    m = e.get("message") or {}
    if m.get("kind") == "evaluate" and (m["function"] != "jacobian" or "jac" in seen):
        continue
    if m.get("kind") == "analysis":
        continue
    if m.get("kind") == "evaluate":
        seen.add("jac")
    out.append(line)
open(sys.argv[2], "w").writelines(out)
PY
cp "$ROOT"/bench/gradbench/*.wg "$T/"
cat >>"$T/ht.wg" <<'WG'
fn jacobian() {
    z = inputs()
    D = directions(z, 0)
    J = zeros(3 * len(data_correspondences), 26)
    for k in 0..26 {
        j = col(J, k)
        j += jvp(ht, z, reshape(col(D, k), len(z)))
    }
    return reshape(J, len(J) * 26)
}
WG
printf '#!/bin/sh\nWENGERT_STDLIB="%s/stdlib" exec "%s" "%s"\n' "$ROOT" "$DRV" "$T" >"$T/tool"
chmod +x "$T/tool"
python3 "$ROOT/bench/gradbench/replay.py" --log "$T/err" "$T/tool" "$T/ht.jsonl"
