#!/bin/sh
# Install what the benchmark references need, if missing (Debian; run as root).
#   lua5.4          W1 reference
#   libadolc-dev    ADOL-C references (W2, W3, W4)
#   python3-torch   PyTorch rows (W2, W4), run with /usr/bin/python3
#   hyperfine       start-up cross-check, and for timing by hand
set -e
missing=""
for pkg in lua5.4 libadolc-dev python3-torch hyperfine; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done
if [ -z "$missing" ]; then
    echo "bench deps: all installed"
    exit 0
fi
echo "bench deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y $missing || { apt-get update && apt-get install -y $missing; }
