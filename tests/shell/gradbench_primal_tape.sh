#!/bin/bash
# A GradBench primal runs its program on constants (the driver binds the
# inputs unrecorded), so it records nothing (SPEC: a function called on
# unrecorded numbers with no derivative operator records nothing). Compound
# assignments into a function's own arrays (ode's `rest += ...`, the flat
# kmeans' `dist += ...`) made a leaf per element written, and everything
# computed from them was recorded: ode's primal recorded 277,734 entries a
# run, lstm's 339,815, kmeans' 42,001, and the flat kmeans' floor and sign
# made a kink note per element (most of its time in snprintf and strtod).
# The driver counts the entries one run recorded, also those reclaimed when
# its statement ended. Here the first primal evaluation of every recorded
# session, with the shipped programs and the flat ones, must record 0.
BUILD=${WG_BUILD:-build}
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
case "$BUILD" in /*) DRV="$BUILD/gradbench/wengert-gradbench" ;; *) DRV="$ROOT/$BUILD/gradbench/wengert-gradbench" ;; esac
S=$(ls -d "$ROOT"/../shared/gradbench/sessions /work/shared/gradbench/sessions 2>/dev/null | head -1)
if [ ! -x "$DRV" ]; then echo "SKIP: $DRV not built (make gradbench-tool)"; exit 0; fi
if [ -z "$S" ]; then echo "SKIP: no recorded sessions"; exit 0; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/flat"
cp "$ROOT"/bench/gradbench/*.wg "$T/flat/"
for f in "$T"/flat/*_flat.wg; do mv "$f" "${f%_flat.wg}.wg"; done
python3 - "$S" "$T" <<'PY'
import json, os, sys
sessions, out = sys.argv[1], sys.argv[2]
for f in sorted(os.listdir(sessions)):
    if not f.endswith(".jsonl"):
        continue
    msgs = [json.loads(l).get("message") for l in open(os.path.join(sessions, f)) if l.strip()]
    head = [m for m in msgs if m and m["kind"] in ("start", "define")]
    first = [m for m in msgs if m and m["kind"] == "evaluate" and m["function"] in ("primal", "objective", "cost", "square")]
    if first:
        with open(os.path.join(out, f), "w") as o:
            o.writelines(json.dumps(m) + "\n" for m in head + first[:1])
PY
fail=0 n=0
for f in "$T"/*.jsonl; do
    for progs in "$ROOT/bench/gradbench" "$T/flat"; do
        line=$(WENGERT_STDLIB="$ROOT/stdlib" "$DRV" "$progs" <"$f" 2>&1 >/dev/null | grep 'wengert-gradbench: .* runs, ')
        n=$((n + 1))
        case "$line" in
            *", 0 tape entries recorded in one run,"*) ;;
            *) echo "FAIL: $(basename "$f") with $progs: ${line:-no timing line}"; fail=1 ;;
        esac
    done
done
[ "$n" -ge 16 ] || { echo "FAIL: only $n primal evaluations found in $S"; fail=1; }
echo "$n primal evaluations"
exit $fail
