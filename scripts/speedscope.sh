#!/bin/sh
# SPDX-License-Identifier: MIT
# speedscope.sh - installs speedscope (the flame graph viewer), pinned to one
# version and checked against the registry's integrity hash, into
# .cache/npm/speedscope-VERSION/ of the source tree, for
# tests/analyzer/check_speedscope.sh: the folded stacks of `tracetool flame`
# loaded by speedscope's own importer in headless Chromium. Only the
# package's prebuilt web app is used (dist/release/); its npm dependencies
# (the CLI's browser opener) are not installed. Prints the app's directory.
# Needs npm; does nothing when the version is already there.
set -eu
version=1.25.0
integrity=sha512-cpf9HWTZf1ijLXBJrk87Ve/54tnYx6rlf0gUThvn3ook6h63hLXVOQiMf44PT+XoV503cPfvfiT5gP5vojp6Ag==
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$top/.cache/npm/speedscope-$version
if [ -f "$dest/dist/release/index.html" ]; then
	echo "$dest/dist/release"
	exit 0
fi
command -v npm >/dev/null || { echo "speedscope.sh: npm not found" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "speedscope@$version" >/dev/null)
tgz=$tmp/speedscope-$version.tgz
got=$(python3 -c 'import base64, hashlib, sys
print("sha512-" + base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$tgz")
[ "$got" = "$integrity" ] || { echo "speedscope.sh: integrity mismatch: $got" >&2; exit 1; }
mkdir -p "$tmp/x"
tar -xzf "$tgz" -C "$tmp/x"
mkdir -p "$(dirname "$dest")"
rm -rf "$dest"
mv "$tmp/x/package" "$dest"
echo "$dest/dist/release"
