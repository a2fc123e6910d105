#!/bin/sh
# SPDX-License-Identifier: MIT
# convert.sh MODE TRACETOOL GOLDEN_DIR - the golden outputs of the commands
# that write files: MODE perfetto (each v1 trace's Perfetto trace, replayed
# by tests/analyzer/perfetto_check.py through `protoc --decode`, and for
# annotated.zst decoded in full), export_csv (the tables of
# `export --format=csv`, each file whole) or export_parquet (the Parquet
# tables read back by DuckDB, golden_export.mjs). Each is compared exactly
# with GOLDEN_DIR/expected/<trace>.<MODE>.txt: the exit code, stderr and
# the decoded output, the output folder shown as @OUT@. GOLDEN_UPDATE=1
# rewrites the expected files instead (review the diff before committing).
# Exit 77 (skipped) only when the decoder or readers are missing
# (scripts/deps.sh installs protobuf-compiler; scripts/npm-clients.sh the
# Parquet readers).
set -eu
mode=$1
tt=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") # absolute: the loop runs in GOLDEN_DIR
dir=$3
here=$(cd "$(dirname "$0")" && pwd)
analyzer_tests="$here/../analyzer"
case $mode in
perfetto)
	command -v protoc >/dev/null || { echo "protoc not found" >&2; exit 77; }
	command -v python3 >/dev/null || { echo "python3 not found" >&2; exit 77; }
	traces="clean_three_threads truncated_mid_frame corrupt_middle_frame bad_checksum annotated"
	;;
export_csv)
	traces="clean_three_threads annotated"
	;;
export_parquet)
	REC_NPM_DIR=$("$here/../../scripts/npm-clients.sh") || exit $?
	export REC_NPM_DIR
	command -v node >/dev/null || { echo "node not found" >&2; exit 77; }
	traces="clean_three_threads annotated"
	;;
*)
	echo "usage: convert.sh perfetto|export_csv|export_parquet TRACETOOL GOLDEN_DIR" >&2
	exit 2
	;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
# Relative names, so that messages and export's `file` column do not
# depend on where the tree is.
cd "$dir"
for t in $traces; do
	out="$tmp/out"
	rm -rf "$out"
	rc=0
	case $mode in
	perfetto) "$tt" perfetto -o "$out" "$t.zst" 2>"$tmp/err" || rc=$? ;;
	export_csv) "$tt" export --format=csv -o "$out" "$t.zst" 2>"$tmp/err" || rc=$? ;;
	export_parquet) "$tt" export -o "$out" "$t.zst" 2>"$tmp/err" || rc=$? ;;
	esac
	{
		echo "exit $rc"
		echo "--- stderr"
		sed "s|$out|@OUT@|g" "$tmp/err"
		case $mode in
		perfetto)
			echo "--- replayed (perfetto_check.py)"
			python3 "$analyzer_tests/perfetto_check.py" "$analyzer_tests/perfetto_min.proto" \
				"$out" >"$tmp/replay" || echo "perfetto_check.py: exit $?"
			python3 -c 'import json, sys
print(json.dumps(json.load(open(sys.argv[1])), indent=1, sort_keys=True))' "$tmp/replay" ||
				echo "not JSON"
			if [ "$t" = annotated ]; then
				echo "--- protoc --decode=perfetto.protos.Trace"
				protoc --decode=perfetto.protos.Trace -I "$analyzer_tests" \
					"$analyzer_tests/perfetto_min.proto" <"$out" || echo "protoc: exit $?"
			fi
			;;
		export_csv)
			for f in $(cd "$out" && ls); do
				echo "--- $f"
				cat "$out/$f"
			done
			;;
		export_parquet)
			node "$here/golden_export.mjs" "$out" || echo "golden_export.mjs: exit $?"
			;;
		esac
	} >"$tmp/got" 2>&1
	want="expected/$t.$mode.txt"
	if [ "${GOLDEN_UPDATE:-}" ]; then
		cp "$tmp/got" "$want"
	elif ! cmp -s "$tmp/got" "$want"; then
		echo "$t: $mode output differs from $dir/$want:"
		diff -u "$want" "$tmp/got" | head -40 || true
		failed=1
	else
		echo "$t: $mode ok"
	fi
done
exit $failed
