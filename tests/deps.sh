#!/bin/sh
# Install the Debian packages the build and tests need, when missing
# (`sh tests/deps.sh fuzz` adds clang and its runtime for `make fuzz`).
# graphviz (for ':tape dot FILE.svg'), python3 (the tests read the SVG
# that plot writes as XML) and Jupyter's ipykernel, jupyter-client and
# nbclient (the notebook test) are optional: without them those checks are
# skipped, and failing to install them stops nothing.
need=""
pkgs="re2c lemon libedit-dev libgmp-dev libjansson-dev python3 tmux man-db valgrind universal-ctags"
[ "$1" = fuzz ] && pkgs="$pkgs clang libclang-rt-dev"
for p in $pkgs; do
    dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
extra=""
for p in graphviz python3; do
    dpkg -s "$p" >/dev/null 2>&1 || extra="$extra $p"
done
# optional extras are tried once, not before every test run (offline)
stamp=build/.optional-deps-tried
[ -f "$stamp" ] && extra=""
# the Jupyter kernel's test (tests/shell/jupyter.sh), tried once on its own
jupyter=""
for p in python3-ipykernel python3-jupyter-client python3-nbclient python3-nbformat; do
    dpkg -s "$p" >/dev/null 2>&1 || jupyter="$jupyter $p"
done
[ -f build/.optional-jupyter-tried ] && jupyter=""
[ -n "$jupyter" ] && mkdir -p build && : >build/.optional-jupyter-tried
extra="$extra$jupyter"
[ -z "$need$extra" ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
$SUDO apt-get update -qq || [ -z "$need" ] || exit 1
if [ -n "$need" ]; then
    echo "installing:$need"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need || exit 1
fi
if [ -n "$extra" ]; then
    mkdir -p build && : >"$stamp"
    echo "installing (optional):$extra"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $extra >/dev/null ||
        echo "note: could not install$extra; the tests that need them are skipped"
fi
exit 0
