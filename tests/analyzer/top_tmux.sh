#!/bin/bash
# SPDX-License-Identifier: MIT
# top_tmux.sh TRACETOOL PROG_TOP - `tracetool top` in a real terminal
# (tracetool(1), top), a tmux pane of 100x30 following prog_top live:
#  1. the table is drawn in place (header, the "tick" row of thread "busy",
#     "q: quit"); the key q quits it, exit 0, and the terminal's settings
#     (stty -a) are as before it started;
#  2. SIGTERM: the terminal is restored and top dies of the signal (143);
#  3. the recording ends cleanly: top ends by itself, exit 0, and the screen
#     says so;
#  4. (run before 3) ^Z stops it with the terminal's settings restored, and
#     once continued q still quits it.
# Skipped (77) without tmux (scripts/deps.sh installs it).
set -eu
tt=$1 prog=$2
command -v tmux >/dev/null || { echo "tmux is not installed: skipped"; exit 77; }
tmp=$(mktemp -d)
sock="$tmp/tmux.sock" # its own server, in tmp: nothing left in /tmp/tmux-UID
prog_pid=""
cleanup() {
	tmux -S "$sock" kill-server 2>/dev/null || true
	[ -z "$prog_pid" ] || kill "$prog_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "top_tmux: $*"
	[ ! -f "$tmp/screen" ] || { echo "--- screen:"; cat "$tmp/screen"; }
	echo "0 passed, 1 failed"
	exit 1
}

mkfifo "$tmp/go" "$tmp/prog_out"
REC_OUTPUT="$tmp/t.zst" REC_FLUSH_MS=20 "$prog" live <"$tmp/go" >"$tmp/prog_out" &
prog_pid=$!
exec 3>"$tmp/go" 4<"$tmp/prog_out"
read -r line <&4 || fail "prog_top said nothing"
[ "$line" = ready ] || fail "prog_top said '$line'"

# run NAME: top in a new tmux session; when it exits, its status goes to
# $tmp/NAME.rc, the terminal's settings before and after to NAME.before
# and NAME.after, and the channel NAME is signalled (tmux wait-for).
run() {
	local n=$1
	cat >"$tmp/$n.sh" <<SH
stty -a >"$tmp/$n.before"
sh -c 'echo \$\$ >"$tmp/$n.pid"; exec "$tt" top -d 100ms "$tmp/t.zst"'
echo \$? >"$tmp/$n.rc"
stty -a >"$tmp/$n.after"
tmux -S "$sock" wait-for -S "$n"
sleep 600
SH
	tmux -S "$sock" new-session -d -s "$n" -x 100 -y 30 "bash $tmp/$n.sh"
}
# screen_has NAME REGEX: waits (up to 30 s) until the pane shows REGEX.
screen_has() {
	for _ in $(seq 300); do
		tmux -S "$sock" capture-pane -p -t "$1" >"$tmp/screen" 2>/dev/null || true
		grep -qE "$2" "$tmp/screen" && return 0
		sleep 0.1
	done
	return 1
}
check_restored() {
	[ -s "$tmp/$1.after" ] || fail "$1: no stty after"
	cmp -s "$tmp/$1.before" "$tmp/$1.after" ||
		fail "$1: terminal not restored: $(diff "$tmp/$1.before" "$tmp/$1.after" | tr '\n' ' ')"
}

# 1. Drawn in place; q quits.
run q
screen_has q '^tick +[0-9]+ +[0-9.KM]+ +100\.0% .* busy 100%' || fail "no tick row on the screen"
grep -qE '^scope +calls +calls/s +time% +p50 +p99 +threads' "$tmp/screen" || fail "no header"
grep -q "t.zst at .* calls in the last" "$tmp/screen" || fail "no status line"
grep -q '^q: quit' "$tmp/screen" || fail "no 'q: quit'"
[ "$(grep -c '^scope ' "$tmp/screen")" = 1 ] || fail "the table is not redrawn in place"
tmux -S "$sock" send-keys -t q q
tmux -S "$sock" wait-for q
[ "$(cat "$tmp/q.rc")" = 0 ] || fail "q: top exited $(cat "$tmp/q.rc")"
check_restored q

# 2. SIGTERM.
run term
screen_has term '^tick ' || fail "term: no tick row"
kill -TERM "$(cat "$tmp/term.pid")"
tmux -S "$sock" wait-for term
[ "$(cat "$tmp/term.rc")" = 143 ] || fail "SIGTERM: top exited $(cat "$tmp/term.rc"), not 143"
check_restored term

# 4. ^Z: stopped with the terminal as it was; continued, it takes it back.
# Under a shell with job control (set -m), as in an interactive one: in an
# orphaned process group the kernel discards ^Z.
cat >"$tmp/tstp.sh" <<SH
set -m
stty -a >"$tmp/tstp.before"
"$tt" top -d 100ms "$tmp/t.zst"
rc=\$?
if [ \$rc = 148 ]; then
	stty -a >"$tmp/tstp.stopped"
	echo "top is stopped"
	fg >/dev/null
	rc=\$?
fi
echo \$rc >"$tmp/tstp.rc"
stty -a >"$tmp/tstp.after"
tmux -S "$sock" wait-for -S tstp
sleep 600
SH
tmux -S "$sock" new-session -d -s tstp -x 100 -y 30 "bash $tmp/tstp.sh"
screen_has tstp '^tick ' || fail "tstp: no tick row"
tmux -S "$sock" send-keys -t tstp C-z
for _ in $(seq 300); do
	[ -s "$tmp/tstp.stopped" ] && break
	sleep 0.1
done
[ -s "$tmp/tstp.stopped" ] || fail "^Z did not stop top"
cmp -s "$tmp/tstp.before" "$tmp/tstp.stopped" ||
	fail "^Z: terminal not restored while stopped: $(diff "$tmp/tstp.before" "$tmp/tstp.stopped" | tr '\n' ' ')"
# Drawn again once continued: the redraw erases the line the shell printed.
for _ in $(seq 300); do
	tmux -S "$sock" capture-pane -p -t tstp >"$tmp/screen"
	grep -q '^tick ' "$tmp/screen" && ! grep -q 'top is stopped' "$tmp/screen" && break
	sleep 0.1
done
grep -q 'top is stopped' "$tmp/screen" && fail "not drawn again after fg"
tmux -S "$sock" send-keys -t tstp q
tmux -S "$sock" wait-for tstp
[ "$(cat "$tmp/tstp.rc")" = 0 ] || fail "after ^Z, fg and q top exited $(cat "$tmp/tstp.rc")"
check_restored tstp

# 3. The recording ends: top ends by itself.
run end
screen_has end '^tick ' || fail "end: no tick row"
echo stop >&3
wait "$prog_pid" || fail "prog_top failed"
prog_pid=""
tmux -S "$sock" wait-for end
[ "$(cat "$tmp/end.rc")" = 0 ] || fail "at the end top exited $(cat "$tmp/end.rc")"
check_restored end
screen_has end '^the recording ended cleanly: ' || fail "the screen does not say the recording ended"
echo "1 passed, 0 failed"
