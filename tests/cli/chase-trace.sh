# chase-trace.sh - sourced by the tests and benches that need a chase
# trace (mktrace lines): chase(table, out, n) reads NBUF buffers through a
# table of device pointers, the last pointer one past its buffer, so the
# launch faults.  Each buffer is a 4 KiB copy of `seq` data; the table is
# one copy of WORDS 8-byte words: the NBUF pointers, then small integers
# (a struct array, a descriptor's workspace: words that do not matter).
# Usage: chase_trace NBUF WORDS   (the header lines are the caller's)
chase_trace() {
	_n=$1 _w=$2 _b=0 _tab=
	while [ $_b -lt "$_n" ]; do
		_a=$(printf '0x%x' $((0x5a0000100000 + _b * 0x10000)))
		printf 'alloc %s 4096\nh2d %s 4096 seq\n' $_a $_a
		if [ $_b -eq $((_n - 1)) ]; then _a=$(printf '0x%x' $((_a + 0x1000))); fi
		_tab="$_tab${_tab:+,}$_a"
		_b=$((_b + 1))
	done
	while [ $_b -lt "$_w" ]; do _tab="$_tab,$((_b * 3 + 1))"; _b=$((_b + 1)); done
	printf 'alloc 0x5a0000900000 %d\nalloc 0x5a0000a00000 %d\nh2d 0x5a0000900000 %d u64:%s\n' \
		$((_w * 8)) $((_n * 8)) $((_w * 8)) "$_tab"
	echo "launch _Z5chasePPKfPfi 1 32 ptr:0x5a0000900000 ptr:0x5a0000a00000 i32:$_n"
	echo 'fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1'
}
