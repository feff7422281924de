#!/bin/sh
# deps.sh - check the build dependencies before make compiles anything, and
# install the missing ones when it can; otherwise stop with one line giving
# the exact command to run.  Run by the Makefile (`deps`, `deps-fuzz`), so
# that `make`, `make test`, `make demo` and `make gpu-test` work on a fresh
# Debian machine; `make gpu-test NO_BUILD=1` builds nothing and never runs it.
#
#   sh tests/deps.sh build   C compiler, CUDA headers, xxhash.h, zstd.h, yaml.h
#   sh tests/deps.sh fuzz    clang and its libFuzzer runtime (make fuzz)
#
# Installs with apt-get (`apt-get update` once, then `apt-get install -y
# --no-install-recommends ...`) when running as root with apt-get present;
# GPUREDUCE_NO_INSTALL=1 only checks.  Exit 0 when everything is there.
set -u
CC=${CC:-cc}
CUDA=${CUDA:-/usr/local/cuda}
what=${1:-build}
pkgs=""
updated=0

# has_header HEADER: can $CC find <HEADER>?
has_header() {
	printf '#include <%s>\n' "$1" | $CC -E -x c - >/dev/null 2>&1
}

has_fuzzer() {
	printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' |
		clang -fsanitize=fuzzer -x c - -o /dev/null >/dev/null 2>&1
}

# the Debian package of clang's runtime (libFuzzer), for clang's major version
rt_pkg() {
	v=$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -n 1)
	echo "libclang-rt-${v:-14}-dev"
}

collect() {
	pkgs=""
	case $what in
	build)
		command -v "$CC" >/dev/null 2>&1 || pkgs="$pkgs build-essential"
		if command -v "$CC" >/dev/null 2>&1; then
			has_header xxhash.h || pkgs="$pkgs libxxhash-dev"
			has_header zstd.h || pkgs="$pkgs libzstd-dev"
			has_header yaml.h || pkgs="$pkgs libyaml-dev"
		fi
		;;
	fuzz)
		if ! command -v clang >/dev/null 2>&1; then
			pkgs="$pkgs clang"
		elif ! has_fuzzer; then
			pkgs="$pkgs $(rt_pkg)"
		fi
		;;
	*)
		echo "deps.sh: unknown set '$what' (build or fuzz)" >&2
		exit 2
		;;
	esac
}

install() {
	if [ "$updated" -eq 0 ]; then
		apt-get update -q || return 1
		updated=1
	fi
	# shellcheck disable=SC2086  # a list of package names
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $1
}

if [ "$what" = build ] && [ ! -f "$CUDA/include/cuda.h" ]; then
	echo "gpureduce: the CUDA toolkit's headers are not in $CUDA/include (cuda.h): install the CUDA toolkit, or run make CUDA=/path/to/cuda" >&2
	exit 1
fi
collect
[ -z "$pkgs" ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1 && [ -z "${GPUREDUCE_NO_INSTALL:-}" ]; then
	echo "gpureduce: installing missing build dependencies:$pkgs" >&2
	install "$pkgs"
	# clang first, then the runtime of the clang that came
	collect
	[ -n "$pkgs" ] && [ "$what" = fuzz ] && install "$pkgs" && collect
	[ -z "$pkgs" ] && exit 0
	echo "gpureduce: still missing after apt-get:$pkgs" >&2
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo "
echo "gpureduce: missing build dependencies; run: ${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends$pkgs" >&2
exit 1
