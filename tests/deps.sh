#!/bin/sh
# Install the Debian packages the build and tests need, when missing
# (`sh tests/deps.sh fuzz` adds clang and its runtime for `make fuzz`).
need=""
pkgs="re2c lemon libedit-dev libgmp-dev tmux valgrind"
[ "$1" = fuzz ] && pkgs="$pkgs clang libclang-rt-dev"
for p in $pkgs; do
    dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
[ -z "$need" ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
echo "installing:$need"
$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need
