# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# scripts/lib/peer-loop.sh - sourced (not run) by the scripts that time the
# peer harness's loop, ../shared/bench-peers/src/loop.c: peer-probe.sh,
# peer-probe-ab.sh, peer-2t.sh and writer-cost.sh. It finds the harness and
# builds loop.c's variants one way, with the harness's flags:
#   PEER_SRC                        the harness's src/: PEERS_SRC if set, else
#                                   shared/bench-peers/src beside this checkout,
#                                   else /work/shared/bench-peers/src
#   peer_loop OUT FLAGS...          loop.c built with FLAGS, no librec (base,
#                                   floor, the harness's reference recorder)
#   peer_loop_rec BUILD OUT FLAGS...  the same linked with BUILD's librectrace
#                                   (run-time path to it), rec.h from BUILD;
#                                   librec/include from PEER_REC_ROOT (default:
#                                   this checkout)
#   peer_loop_probe BUILD OUT       the harness's external-probe variant with
#                                   rec's TRACE_SCOPE (its src/rec_probe.h)
PEER_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PEER_SRC=${PEERS_SRC:-$(cd "$PEER_ROOT/.." && pwd)/shared/bench-peers/src}
[[ -f $PEER_SRC/loop.c ]] || PEER_SRC=/work/shared/bench-peers/src
PEER_CFLAGS=(-O2 -g -Wall -Wextra)

peer_loop() {
	local out=$1
	shift
	gcc "${PEER_CFLAGS[@]}" "$@" "$PEER_SRC/loop.c" -o "$out" -lpthread
}

peer_loop_rec() {
	local bld=$1 out=$2 root=${PEER_REC_ROOT:-$PEER_ROOT}
	shift 2
	gcc "${PEER_CFLAGS[@]}" "$@" "$PEER_SRC/loop.c" -o "$out" -I"$bld/librec" \
		-I"$root/librec/include" -L"$bld/librec" -Wl,-rpath,"$bld/librec" -lrectrace -lpthread
}

peer_loop_probe() {
	peer_loop_rec "$1" "$2" -DV_EXTERNAL -DEXTERNAL_PROBE_HEADER='"rec_probe.h"' -I"$PEER_SRC"
}
