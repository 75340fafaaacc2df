#!/bin/bash
# The Jupyter kernel, headless: tests/jupyter/notebook_test.py executes the
# example notebook and a notebook of checks through Debian's nbclient, with
# the kernel spec in a scratch JUPYTER_PATH (the user's is left alone).
# Without the Debian packages (tests/deps.sh tries them) it says SKIP.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${WG_PYTHON:-/usr/bin/python3}    # WG_PYTHON=/bin/false shows the SKIP
if ! [ -x $py ] || ! $py -c 'import nbclient, nbformat, ipykernel, jupyter_client' 2>/dev/null; then
    echo "SKIP tests/shell/jupyter.sh: python3-nbclient, python3-ipykernel or python3-jupyter-client is not installed"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$py "$root/jupyter/install.py" --dir "$tmp/jupyter" "$WG_BIN" >/dev/null || exit 1
export JUPYTER_PATH="$tmp/jupyter" JUPYTER_RUNTIME_DIR="$tmp/runtime" JUPYTER_DATA_DIR="$tmp/data"
export PYDEVD_DISABLE_FILE_VALIDATION=1
cd "$tmp" && $py "$root/tests/jupyter/notebook_test.py" "$root"
