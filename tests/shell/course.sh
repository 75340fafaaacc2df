#!/bin/bash
# The course (examples/course/): jupyter/course.py runs every lesson as
# shipped (each exercise "not yet answered") and every solution (each
# exercise "right"), scripts and notebooks, and checks that each solution
# differs from its lesson only inside exercise blocks and that each notebook
# is what its script makes. Without Debian's nbclient the notebooks are
# skipped (a SKIP line) and the scripts still run.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${WG_PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=python3
exec "$py" "$root/jupyter/course.py" check "$WG_BIN"
