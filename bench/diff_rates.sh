#!/bin/sh
# SPDX-License-Identifier: MIT
# diff_rates.sh - the error rates of `tracetool diff` on a loaded machine
# (issue 25; docs/BENCHMARKS.md, "diff's error rates"). Records
# bench/diff_prog (one build) and bench/diff_prog_slow (four known
# regressions) while two busy loops keep both cores busy, run by run
# interleaved, then counts:
#   false alarms: PAIRS pairs of RUNS runs of diff_prog against RUNS others:
#     pairs where --fail-on=p50:+5 exits 3, pairs with any slower/faster
#     verdict; and the same with one run a side (RUNS x PAIRS pairs);
#   power: PAIRS trials of RUNS runs of diff_prog against RUNS of
#     diff_prog_slow: each regression found (verdict slower; its --fail-on
#     rule tripped), and the other scopes flagged on the way.
# With DIFF_RATES_DIR=DIR the recordings are kept there, and those already
# there are not recorded again (to count again with another tracetool).
#   usage: bench/diff_rates.sh BUILD_DIR [PAIRS [RUNS]]   (20 5: 300 runs)
set -eu
build=${1:?usage: diff_rates.sh BUILD_DIR [PAIRS [RUNS]]}
pairs=${2:-20}
runs=${3:-5}
tt=$build/analyzer/tracetool
if [ -n "${DIFF_RATES_DIR:-}" ]; then
	dir=$DIFF_RATES_DIR
	mkdir -p "$dir"
	keep=1
else
	dir=$(mktemp -d)
	keep=0
fi
loads=""
cleanup() {
	for p in $loads; do kill "$p" 2>/dev/null || true; done
	if [ "$keep" -eq 0 ]; then rm -rf "$dir"; else rm -f "$dir"/*.csv "$dir"/*.err; fi
}
trap cleanup EXIT INT TERM

# Another process keeps both cores busy (two shell loops: subshells of
# this one, so that $! is the loop itself and kill ends it).
busy() { while :; do :; done; }
for _ in 1 2; do
	busy &
	loads="$loads $!"
done

echo "recording: $pairs x (2 x $runs runs of diff_prog, $runs of diff_prog_slow), under load" >&2
k=0
while [ "$k" -lt "$pairs" ]; do
	r=0
	while [ "$r" -lt "$runs" ]; do
		for f in a$((2 * k)) s$k a$((2 * k + 1)); do
			[ -s "$dir/${f}_$r.zst" ] && continue
			prog=diff_prog
			[ "${f#s}" != "$f" ] && prog=diff_prog_slow
			REC_OUTPUT=$dir/${f}_$r.zst.tmp "$build/bench/$prog"
			mv "$dir/${f}_$r.zst.tmp" "$dir/${f}_$r.zst"
		done
		r=$((r + 1))
	done
	k=$((k + 1))
done
for p in $loads; do kill "$p" 2>/dev/null || true; done
loads=""

# The runs of one set, in order.
set_of() {
	r=0
	while [ "$r" -lt "$runs" ]; do
		printf '%s ' "$dir/$1_$r.zst"
		r=$((r + 1))
	done
}

# verdicts FILE: "name verdict" per row (CSV without --by-thread).
flagged() { # CSV on stdin; prints the scopes slower/faster, except those listed in $1
	awk -F, -v skip="$1" 'NR > 1 && ($16 == "slower" || $16 == "faster") {
		n = split(skip, s, " "); hit = 0
		for (i = 1; i <= n; i++) if ($1 ~ s[i]) hit = 1
		if (!hit) print $1 ":" $16 }'
}

aa_trip=0 aa_flag=0 aa_scopes=0 one_trip=0 one_flag=0 one_pairs=0
k=0
while [ "$k" -lt "$pairs" ]; do
	# shellcheck disable=SC2046
	rc=0
	"$tt" diff --format=csv --fail-on=p50:+5 $(set_of a$((2 * k))) -- $(set_of a$((2 * k + 1))) \
		>"$dir/aa.csv" 2>"$dir/aa.err" || rc=$?
	[ "$rc" -eq 3 ] && aa_trip=$((aa_trip + 1))
	[ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] && { cat "$dir/aa.err" >&2; exit 1; }
	f=$(flagged "" <"$dir/aa.csv" | wc -l)
	[ "$f" -gt 0 ] && aa_flag=$((aa_flag + 1))
	aa_scopes=$((aa_scopes + f))
	[ "$f" -gt 0 ] && echo "A/A pair $k ($runs runs): $(flagged "" <"$dir/aa.csv" | tr '\n' ' ')" >&2
	r=0
	while [ "$r" -lt "$runs" ]; do
		rc=0
		"$tt" diff --format=csv --fail-on=p50:+5 "$dir/a$((2 * k))_$r.zst" \
			"$dir/a$((2 * k + 1))_$r.zst" >"$dir/one.csv" 2>/dev/null || rc=$?
		[ "$rc" -eq 3 ] && one_trip=$((one_trip + 1))
		[ "$(flagged "" <"$dir/one.csv" | wc -l)" -gt 0 ] && one_flag=$((one_flag + 1))
		one_pairs=$((one_pairs + 1))
		r=$((r + 1))
	done
	k=$((k + 1))
done

# Power: which of the four were found in each trial.
shift=0 thr=0 thrbt=0 tiny=0 tail=0 f_shift=0 f_thr=0 f_tiny=0 f_tail=0 others=0 others_pairs=0
one_shift=0 one_thr=0 one_tiny=0 one_tail=0
verdict() { awk -F, -v n="$1" '$1 == n { print $16 }' "$2"; }
k=0
while [ "$k" -lt "$pairs" ]; do
	# shellcheck disable=SC2046
	"$tt" diff --format=csv --fail-on=p50:+5 --fail-on=p99:+10 $(set_of a$((2 * k))) -- \
		$(set_of s$k) >"$dir/p.csv" 2>"$dir/p.err" || true
	# shellcheck disable=SC2046
	"$tt" diff --format=csv --by-thread --fail-on=p50:+10 $(set_of a$((2 * k))) -- \
		$(set_of s$k) >"$dir/pt.csv" 2>"$dir/pt.err" || true
	[ "$(verdict shift_target "$dir/p.csv")" = slower ] && shift=$((shift + 1))
	[ "$(verdict thread_leaf "$dir/p.csv")" = slower ] && thr=$((thr + 1))
	[ "$(verdict tiny_fn "$dir/p.csv")" = slower ] && tiny=$((tiny + 1))
	[ "$(verdict tail_fn "$dir/p.csv")" = slower ] && tail=$((tail + 1))
	[ "$(awk -F, '$1 == "worker2" && $2 == "thread_leaf" { print $17 }' "$dir/pt.csv")" = slower ] &&
		thrbt=$((thrbt + 1))
	grep -q "regression: shift_target: p50 " "$dir/p.err" && f_shift=$((f_shift + 1))
	grep -q "regression: tiny_fn: p50 " "$dir/p.err" && f_tiny=$((f_tiny + 1))
	grep -q "regression: tail_fn: p99 " "$dir/p.err" && f_tail=$((f_tail + 1))
	grep -q "regression: thread_leaf \[worker2\]: p50 " "$dir/pt.err" && f_thr=$((f_thr + 1))
	o=$(flagged "shift_target thread_leaf tiny_fn tail_fn round_" <"$dir/p.csv" | wc -l)
	others=$((others + o))
	[ "$o" -gt 0 ] && others_pairs=$((others_pairs + 1)) &&
		echo "power trial $k, others flagged: $(flagged "shift_target thread_leaf tiny_fn tail_fn round_" <"$dir/p.csv" | tr '\n' ' ')" >&2
	"$tt" diff --format=csv "$dir/a$((2 * k))_0.zst" "$dir/s${k}_0.zst" >"$dir/p1.csv" 2>/dev/null || true
	[ "$(verdict shift_target "$dir/p1.csv")" = slower ] && one_shift=$((one_shift + 1))
	[ "$(verdict thread_leaf "$dir/p1.csv")" = slower ] && one_thr=$((one_thr + 1))
	[ "$(verdict tiny_fn "$dir/p1.csv")" = slower ] && one_tiny=$((one_tiny + 1))
	[ "$(verdict tail_fn "$dir/p1.csv")" = slower ] && one_tail=$((one_tail + 1))
	k=$((k + 1))
done

nfn=$(tail -n +2 "$dir/aa.csv" | wc -l)
echo "diff error rates: $pairs pairs, $runs runs a side, $nfn scope names, 2 busy loops"
echo "false alarms, same build, $runs runs a side ($pairs pairs):"
echo "  --fail-on=p50:+5 exit 3:          $aa_trip of $pairs pairs"
echo "  any slower/faster verdict:        $aa_flag of $pairs pairs ($aa_scopes scopes in all)"
echo "false alarms, same build, 1 run a side ($one_pairs pairs):"
echo "  --fail-on=p50:+5 exit 3:          $one_trip of $one_pairs pairs"
echo "  any slower/faster verdict:        $one_flag of $one_pairs pairs"
echo "power, $runs runs a side ($pairs trials): verdict slower / its --fail-on rule tripped"
echo "  p50 +10 %, 1000 calls (p50:+5):    $shift / $f_shift of $pairs"
echo "  one of two threads 3x (p50:+10):  $thr (merged row) $thrbt (--by-thread row) / $f_thr of $pairs"
echo "  10 ns function 2x (p50:+5):       $tiny / $f_tiny of $pairs"
echo "  p99 +50 %, p50 same (p99:+10):    $tail / $f_tail of $pairs"
echo "  other scopes slower/faster:       $others in $others_pairs of $pairs trials"
echo "power, 1 run a side ($pairs trials): verdict slower"
echo "  p50 +10 %: $one_shift, thread 3x: $one_thr, 10 ns 2x: $one_tiny, p99 +50 %: $one_tail of $pairs"
