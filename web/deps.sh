#!/bin/sh
# What `make web` and `make test-web` need beyond the build's own (as
# tests/deps.sh does for those): Debian's emscripten, chromium (the browser
# test drives it) and node with npm (the page's packages, web/package.json),
# installed when missing (as root, or with sudo).
need=""
command -v emcc >/dev/null 2>&1 || need="$need emscripten"
command -v chromium >/dev/null 2>&1 || need="$need chromium"
command -v node >/dev/null 2>&1 || need="$need nodejs"
command -v npm >/dev/null 2>&1 || need="$need npm"
[ -z "$need" ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
echo "installing:$need"
$SUDO apt-get update -qq || exit 1
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need >/dev/null || exit 1
