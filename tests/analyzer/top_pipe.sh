#!/bin/bash
# SPDX-License-Identifier: MIT
# top_pipe.sh TRACETOOL PROG_TOP GOLDEN - `tracetool top` over a pipe
# (tracetool(1), top): one plain table per period, ended by a blank line;
# it follows a recording while it is written and ends by itself, exit 0,
# after the END record.
#  1. prog_top steps: the first tables hold the 100 "short" and 200 "work"
#     activations and no "long" (still open); once the program goes on,
#     "long" is counted, whole, in a later table; the tables add up to the
#     file's exact calls; the last says the recording ended cleanly.
#  2. A finished trace appended to the followed file in pieces cut inside
#     frames: top waits for each frame's rest (no error), and its tables add
#     up to summary's calls.
#  3. A file that is not a trace: exit 1 with "tracetool: FILE: ...".
#  4. The file cut to nothing and written again (a new recording): top
#     starts over, and its tables add up to the new recording's calls.
#  5. The same with another file moved over the followed one.
# Synchronised by the programs' output (FIFOs), not by sleeping.
set -eu
tt=$1 prog=$2 golden=$3
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "top_pipe: $*"; echo "0 passed, 1 failed"; exit 1; }

# sums FILE: "scope calls" summed over every table of top's output FILE.
sums() {
	awk '/^scope +calls/ { t = 1; next } /^$/ { t = 0 } t && NF >= 6 { n[$1] += $2 }
	     END { for (k in n) print k, n[k] }' "$1" | sort
}

# --- 1. a program being recorded ---
mkfifo "$tmp/go" "$tmp/prog_out" "$tmp/top_out"
REC_OUTPUT="$tmp/t.zst" "$prog" steps <"$tmp/go" >"$tmp/prog_out" &
pids+=($!)
prog_pid=$!
exec 3>"$tmp/go" 4<"$tmp/prog_out"
read -r line <&4 || fail "prog_top said nothing"
[ "$line" = flushed ] || fail "prog_top said '$line'"
"$tt" top -d 50ms "$tmp/t.zst" >"$tmp/top_out" 2>"$tmp/top_err" &
top_pid=$!
pids+=($top_pid)
exec 5<"$tmp/top_out"
: >"$tmp/before"
# Tables until one has the 100 short and 200 work calls (the first frames
# may come in more than one period).
while IFS= read -r line <&5; do
	printf '%s\n' "$line" >>"$tmp/before"
	[ -n "$line" ] && continue
	s=$(sums "$tmp/before")
	echo "$s" | grep -qx 'short 100' && echo "$s" | grep -qx 'work 200' && break
done
echo "$s" | grep -qx 'short 100' || { cat "$tmp/before"; fail "no table with the 100 short calls"; }
grep -q '^long ' "$tmp/before" && { cat "$tmp/before"; fail "long counted before it ended"; }
grep -qE '^work +200 .* worker 100%$' "$tmp/before" || { cat "$tmp/before"; fail "work's thread is not worker"; }
echo go >&3
cat <&5 >"$tmp/after"
wait "$top_pid" || fail "top exited $? ($(cat "$tmp/top_err"))"
wait "$prog_pid" || fail "prog_top failed"
cat "$tmp/before" "$tmp/after" >"$tmp/all"
[ "$(sums "$tmp/all" | tr '\n' ' ')" = "long 1 short 100 tail 50 work 200 " ] ||
	{ cat "$tmp/all"; fail "the tables add up to: $(sums "$tmp/all" | tr '\n' ' ')"; }
grep -qE '^long +1 ' "$tmp/after" || fail "long is not in a table after it ended"
tail -n 20 "$tmp/all" | grep -q '^the recording ended cleanly: ' || fail "the last table does not say the recording ended"
grep -q $'\033' "$tmp/all" && fail "escape sequences in a pipe"
[ ! -s "$tmp/top_err" ] || fail "stderr: $(cat "$tmp/top_err")"

# --- 2. frames appended in pieces cut inside them ---
size=$(stat -c %s "$golden")
: >"$tmp/g.zst"
"$tt" top -d 20ms "$tmp/g.zst" >"$tmp/top_out" 2>"$tmp/top_err" &
top_pid=$!
pids+=($top_pid)
exec 5<"$tmp/top_out"
: >"$tmp/g.out"
# tables N: reads top's output until N more tables have ended.
tables() {
	local n=0
	while [ "$n" -lt "$1" ] && IFS= read -r line <&5; do
		printf '%s\n' "$line" >>"$tmp/g.out"
		[ -n "$line" ] || n=$((n + 1))
	done
}
tables 1
at=0
for cut in $((size / 3)) $((size / 2)) $((size - 7)); do
	dd if="$golden" bs=1 skip=$at count=$((cut - at)) status=none >>"$tmp/g.zst"
	at=$cut
	tables 2 # one drawn after top read the piece
done
kill -0 "$top_pid" 2>/dev/null || fail "top stopped on a frame cut short: $(cat "$tmp/top_err")"
dd if="$golden" bs=1 skip=$at status=none >>"$tmp/g.zst"
cat <&5 >>"$tmp/g.out"
wait "$top_pid" || fail "top exited $? on the pieces ($(cat "$tmp/top_err"))"
want=$("$tt" summary --format=csv "$golden" | awk -F, 'NR > 1 { print $1, $2 }' | sort | tr '\n' ' ')
[ "$(sums "$tmp/g.out" | tr '\n' ' ')" = "$want" ] ||
	fail "tables add up to '$(sums "$tmp/g.out" | tr '\n' ' ')', summary says '$want'"

# --- 4. and 5. a new recording: the file cut to nothing in place, or another
# file moved over it; the first one's start is another recording's (part 1),
# so that reading on where it stopped would read a damaged frame. ---
for how in cut moved; do
	head -c 200 "$tmp/t.zst" >"$tmp/n.zst"
	timeout 60 "$tt" top -d 20ms "$tmp/n.zst" >"$tmp/top_out" 2>"$tmp/top_err" &
	top_pid=$!
	pids+=($top_pid)
	exec 5<"$tmp/top_out"
	: >"$tmp/g.out"
	tables 2
	if [ $how = cut ]; then
		: >"$tmp/n.zst"
		tables 2 # top saw it empty
		cat "$golden" >>"$tmp/n.zst"
	else
		cp "$golden" "$tmp/n2.zst"
		mv "$tmp/n2.zst" "$tmp/n.zst"
	fi
	cat <&5 >>"$tmp/g.out"
	wait "$top_pid" || fail "$how: top exited $? ($(cat "$tmp/top_err"))"
	[ "$(sums "$tmp/g.out" | tr '\n' ' ')" = "$want" ] ||
		fail "$how: tables add up to '$(sums "$tmp/g.out" | tr '\n' ' ')', summary says '$want'"
done

# --- 3. not a trace ---
printf 'not a trace at all, just text\n' >"$tmp/bad.zst"
rc=0
"$tt" top -d 20ms "$tmp/bad.zst" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "top on a text file exited $rc"
grep -q "^tracetool: $tmp/bad.zst: " "$tmp/err" || fail "message: $(cat "$tmp/err")"
echo "1 passed, 0 failed"
