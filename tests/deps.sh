#!/bin/sh
# Install the Debian packages the build and tests need, when missing.
need=""
for p in re2c lemon libedit-dev libgmp-dev tmux valgrind; do
    dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
[ -z "$need" ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
echo "installing:$need"
$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need
