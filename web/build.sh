#!/bin/sh
# Assembles the static site (make web): build.sh WASMDIR DEST. The
# interpreter (emscripten's wengert.js, .wasm and .data: the standard library,
# examples and course as files) beside the page's sources, with app.js
# bundled by esbuild with the npm packages it imports (Graphviz's viz.js as a
# chunk loaded at the first ':tape dot'), and the service worker given the
# list of files to keep for offline use.
set -eu
wasm=$1 dest=$2
web=$(dirname "$0")
rm -rf "$dest"
mkdir -p "$dest"
cp "$wasm/wengert.js" "$wasm/wengert.wasm" "$wasm/wengert.data" "$dest/"
cp "$web/index.html" "$web/style.css" "$web/worker.js" "$dest/"
"$web/node_modules/.bin/esbuild" "$web/app.js" --bundle --format=esm --splitting --minify \
    --target=es2020 --outdir="$dest" --chunk-names='chunks/[name]-[hash]' --log-level=warning
files=$(cd "$dest" && find . -type f ! -name sw.js | sort | sed 's|^\./||')
version=$(cd "$dest" && cat $files "$OLDPWD/$web/sw.js" | sha256sum | cut -c1-12)
list=$(printf '"./"'; for f in $files; do printf ', "%s"' "$f"; done)
sed -e "s|@VERSION@|$version|" -e "s|@FILES@|[$list]|" "$web/sw.js" >"$dest/sw.js"
# The WebAssembly's size, as sent compressed: at most 2 MB.
raw=$(wc -c <"$dest/wengert.wasm")
gz=$(gzip -9 -c "$dest/wengert.wasm" | wc -c)
echo "build/web: wengert.wasm $raw bytes, $gz gzipped; site $(du -sk "$dest" | cut -f1) KB"
if [ "$gz" -gt 2097152 ]; then
    echo "wengert.wasm is over 2 MB compressed" >&2
    exit 1
fi
