#!/bin/sh
# SPDX-License-Identifier: MIT
# flame-png.sh - the README's picture: records the example pipeline, draws
# its flame graph with `tracetool flame --format=svg` and photographs the
# SVG in headless Chromium at its own size.
#   usage: scripts/flame-png.sh BUILD_DIR OUT.png   (e.g. build docs/flame.png)
set -eu
build=${1:?usage: flame-png.sh BUILD_DIR OUT.png}
out=${2:?usage: flame-png.sh BUILD_DIR OUT.png}
chromium=$(command -v chromium || command -v chromium-browser) ||
	{ echo "flame-png.sh: chromium not found" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
REC_OUTPUT=$dir/trace.zst "$build/examples/pipeline" >/dev/null
tt=$(cd "$build/analyzer" && pwd)/tracetool
(cd "$dir" && "$tt" flame --format=svg -o pipeline.svg trace.zst) # title: trace.zst
height=$(sed -n 's/.*<svg [^>]* height="\([0-9]*\)".*/\1/p' "$dir/pipeline.svg" | head -n 1)
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir="$dir/profile" --window-size="1200,$height" \
	--screenshot="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")" \
	"file://$dir/pipeline.svg" 2>/dev/null >/dev/null
echo "$out: 1200x$height"
