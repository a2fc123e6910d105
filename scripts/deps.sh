# SPDX-License-Identifier: MIT
# deps.sh - sourced by the Quick-start scripts: installs, with apt-get, the
# Debian packages that rec needs and this machine lacks. Needs root (or sudo)
# only when something is missing.
rec_install_deps() {
	local want=(meson ninja-build pkg-config gcc g++ libc6-dev libzstd-dev zstd libcriterion-dev libelf-dev valgrind python3 protobuf-compiler cmake groff-base bsdutils tmux zlib1g-dev golang-go golang-github-google-pprof-dev)
	# protobuf-compiler: protoc decodes `tracetool perfetto` output in the tests
	# (an independent decoder; tests/analyzer/perfetto.sh)
	# zlib1g-dev: gzip for `tracetool pprof` (profile.proto files are gzipped)
	# golang-go, golang-github-google-pprof-dev: `go tool pprof` and pprof's own
	# profile.proto read `tracetool pprof` output back (tests/analyzer/test_pprof.c)
	# cmake, groff-base, bsdutils (script): the packaging tests (tests/packaging)
	# tmux: a real terminal for `tracetool top` (tests/analyzer/top_tmux.sh)
	local missing=() pkg sudo=""
	case "${CC:-}" in *clang*) want+=(clang libclang-rt-dev) ;; esac # libFuzzer, sanitizers
	want+=("$@")
	for pkg in "${want[@]}"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	echo "Installing: ${missing[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
