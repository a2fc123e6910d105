#!/bin/sh
# SPDX-License-Identifier: MIT
# with_counters.sh PROBE_PROG CMD ARGS... - runs CMD with
# REC_COUNTERS=page-faults,context-switches, or exits 77 (meson: skipped)
# when this machine refuses those perf events (seccomp, perf_event_paranoid 3),
# which PROBE_PROG reveals by a stderr line.
probe=$1
shift
out=/tmp/rec_with_counters_$$.zst
err=$(REC_OUTPUT=$out REC_COUNTERS=page-faults,context-switches "$probe" 2>&1 >/dev/null)
rm -f "$out"
if [ -n "$err" ]; then
	echo "skipped: $err"
	exit 77
fi
REC_COUNTERS=page-faults,context-switches exec "$@"
