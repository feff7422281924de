#!/bin/sh
# t5117-shrink-outlier-words.sh - the data phase tries a copy's outliers,
# then its extremes, before the chunk search (phase-data.c, guess_faults).
# An index table whose one wild entry faults used to cost the chunk search
# a fault each round (8-16 faulting candidates for the samples' index
# tables on the H100, each a worker's new context, 0.3 s): keeping only the
# values that stand out, zeros elsewhere, finds it in one.  gather(out,
# src, idx, n) on the driver double, src 16384 floats, its 1000 int64
# indices one 8000-byte copy:
#   neg    indices 0..999 and one -1000000 (negative among non-negatives)
#   far    indices 0..999 and one 70000 (above 64x the 90th percentile)
#   edge   indices 0..999 and one 16384, one past src: no outlier, but the
#          largest value
#   ties   indices 0..999 and five entries of 16384: the largest value,
#          shared by five (each of them faults)
#   plain  indices 0..16383 spread evenly and nineteen entries of 20000,
#          none in the first 64 (the head gather's idx points at, the
#          third guess): more than 16 share the largest value and nothing
#          stands out; the extremes guess takes the first of the ties (the
#          chunk search ran here until it did: 11 faulting candidates)
#   pad    a table sized for the largest batch, mostly zeros: 600 indices
#          in use, then a ragged batch's 100 padding entries of
#          0xFFFFFFFF (-1 in an unsigned 32-bit table), zeros after
#          (managed-index's pattern: on the H100 its data phase faulted 13
#          times, the zeros putting every index in use above the 90th
#          percentile, the padding more than 64 words)
# Each must end with one wild word kept (8 bytes at its offset, zeros
# elsewhere: entry 737; for ties, plain and pad one of the others).  The
# slice's first tests are the data phase's guess for every copy at once,
# bare then with outliers (phase_data_guess_test): neg and far end after
# 1 to 3 faulting candidates of the slice and the data phase together (at
# b5d56fd 3, before any guess 7), edge and plain too, ties after at most 5,
# pad after at most 2 (12 at b5d56fd; 4 before one word of each value the
# guess kept went alone first, guess_value_alone).  The cases after the
# loop (seg, hash, chunks, indep, one, ptrs, table, structs) say what each
# checks.
. tests/cli/test-lib.sh
. tests/cli/chase-trace.sh

on_double no-sanitizer plain-path

# table KIND: the u64 list of 1000 indices, entry 737 the wild one (for
# ties also entries 100, 300, 500 and 900; for plain every 50th from 100
# too)
table() {
	awk -v kind="$1" 'BEGIN {
		for (i = 0; i < 1000; i++) {
			v = kind == "plain" ? int(i * 16.383) : kind == "pad" ? (i < 600 ? i : i < 700 ? "0xffffffff" : 0) : i
			if (i == 737 && kind != "pad")
				v = kind == "neg" ? -1000000 : kind == "far" ? 70000 : kind == "plain" ? 20000 : 16384
			if (kind == "ties" && (i == 100 || i == 300 || i == 500 || i == 900))
				v = 16384
			if (kind == "plain" && i % 50 == 0 && i >= 100)
				v = 20000
			if (v < 0)
				v = sprintf("0x%x", 18446744073709551616 + v)
			printf "%s%s", i ? "," : "", v
		}
	}'
}

# slice_data_faults DIR: the faulting candidates of the slice (whose first
# test is the data phase's guess for every copy: phase_data_guess) and of
# the data phase, from DIR/repro.yaml
slice_data_faults() {
	awk '/^- name: (slice|data)$/ { d = 1; next } /^- name:/ { d = 0 }
	     d && /^  faulted_replays:/ { n += $2; seen = 1 } END { if (seen) print n }' "$1/repro.yaml"
}

# copies_into PREFIX: "DST SIZE " of each copy left in the last show
# output ($TMP/.out) whose destination starts with PREFIX
copies_into() {
	awk '/type: MEMCPY_H2D/ { c = 1 } c && /^  dst: / { d = $2 } c && /^  size: / { print d, $2; c = 0 }' \
		"$TMP/.out" | grep "^$1" | tr '\n' ' '
}

# copies_are PREFIX WANT WHAT: the copies into PREFIX... are WANT
copies_are() {
	copies=$(copies_into $1)
	if [ "$copies" = "$2" ]; then
		ok "  ...$3"
	else
		fail "  ...$3: copies left: '$copies' (want '$2')"
	fi
}

# shrink_case NAME: NAME.txt into NAME.bin, shrunk into NAME/, its
# repro.bin shown ($TMP/.out)
shrink_case() {
	check "mktrace ($1)" $MKTRACE $1.bin < $1.txt
	check "shrink it ($1)" $GPUREDUCE shrink -j 4 --quiet --log=$1.log -o $1/repro.cu $1.bin
	check "show the result" $GPUREDUCE show $1/repro.bin
}

# faults_within NAME LO HI: NAME's slice and data phase faulted LO to HI
# times
faults_within() {
	n=$(slice_data_faults $1)
	if [ -n "$n" ] && [ "$n" -ge "$2" ] && [ "$n" -le "$3" ]; then
		ok "  ...after $n faulting slice and data candidates ($1)"
	else
		fail "  ...slice and data phase faulted '$n' times (want $2 to $3) ($1)"
	fi
}

for kind in neg far edge ties plain pad; do
	{ double_trace_head; cat <<EOT; } > $kind.txt
alloc 0x7f0000100000 65536
alloc 0x7f0000200000 4000
alloc 0x7f0000300000 8000
h2d 0x7f0000100000 65536 seq
h2d 0x7f0000300000 8000 u64:$(table $kind)
launch _Z6gatherPfPKfPKxi 4 256 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7f0000300000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
	shrink_case $kind
	# the copies into the index buffer that are left: one, of the wild word
	copies=$(copies_into 0x7f00003)
	w=${copies% 8 }
	case $kind:$copies in
	*:"0x7f0000301708 8 ")
		ok "  ...only the wild index is kept: 8 bytes at entry 737 ($kind)" ;;
	ties:"0x7f0000300320 8 "|ties:"0x7f0000300960 8 "|ties:"0x7f0000300fa0 8 "|ties:"0x7f0000301c20 8 ")
		ok "  ...only a wild index is kept: 8 bytes at $w ($kind)" ;;
	pad:"0x7f0000301"[0-9a-f][0-9a-f][0-9a-f]" 8 ")
		if [ $(( (w - 0x7f0000300000) / 8 )) -ge 600 ] && [ $(( (w - 0x7f0000300000) / 8 )) -lt 700 ]; then
			ok "  ...only a padding entry is kept: 8 bytes at $w ($kind)"
		else
			fail "  ...the word kept, $w, is not a padding entry ($kind)"
		fi ;;
	plain:"0x7f0000300"[0-9a-f][0-9a-f][0-9a-f]" 8 "|plain:"0x7f0000301"[0-9a-f][0-9a-f][0-9a-f]" 8 ")
		if [ $(( (w - 0x7f0000300000) % 400 )) -eq 0 ]; then
			ok "  ...only a wild index is kept: 8 bytes at $w ($kind)"
		else
			fail "  ...the word kept, $w, is not a wild entry ($kind)"
		fi ;;
	*)	fail "  ...index buffer copies left: '$copies' (want one wild entry's 8 bytes) ($kind)" ;;
	esac
	case $kind in
	plain)	faults_within $kind 1 3 ;;   # the first of the tied largest values
	ties)	faults_within $kind 1 5 ;;
	pad)	faults_within $kind 1 2 ;;
	*)	faults_within $kind 1 3 ;;
	esac
done

# seg: the indices are a tensor inside an allocator's segment, floats
# around them (a 256 KiB copy: 64 KiB of floats, 1024 int64 indices with
# one wild entry, 1024 = 777, then floats again), gather's idx pointing
# at the tensor, its out at the floats after it.  The whole copy finds no
# outlier (floats of both signs, large as integers); the window from
# where idx points finds the wild entry: one fault in all (before: the
# chunk search, 4 faulting candidates on the double, 9-16 for the samples'
# segments on the H100)
# segment KIND: the u64 list of a 256 KiB segment, floats around an int64
# index tensor at word 8192 (seg: 1024 indices, entry 777 wild; hash: 256
# entries, all 1 << 28)
segment() {
	python3 - "$1" <<'EOP'
import random, struct, sys
kind = sys.argv[1]
random.seed(5 if kind == 'seg' else 7)
w = [struct.unpack('<Q', struct.pack('<ff', random.gauss(0, 1), random.gauss(0, 1)))[0] for _ in range(32768)]
for k in range(1024 if kind == 'seg' else 256):
    w[8192 + k] = random.randrange(0, 16000) if kind == 'seg' else 1 << 28
if kind == 'seg':
    w[8192 + 777] = 1663264414
print(','.join('0x%x' % v for v in w))
EOP
}
segment seg > seg.list
{ double_trace_head; cat <<EOT; } > seg.txt
alloc 0x7f0000100000 64000
alloc 0x7f0000400000 262144
h2d 0x7f0000100000 64000 seq
h2d 0x7f0000400000 262144 u64:$(cat seg.list)
launch _Z6gatherPfPKfPKxi 4 256 ptr:0x7f0000420000 ptr:0x7f0000100000 ptr:0x7f0000410000 i32:1024
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
shrink_case seg
copies_are 0x7f00004 "0x7f0000411848 8 " "only the wild index is kept: 8 bytes at entry 777 of the tensor (seg)"
faults_within seg 1 1

# hash: the same segment, but every one of the 256 indices is 1 << 28 (a
# hashed id where an expert number belonged: gemm-then-fault).  Nothing
# stands out and the largest value is shared by all; the heads of the
# tensors the parameters point at are the third guess, and each head's
# first word alone the next batch: the index tensor's first entry is kept,
# after 2 faults in the data phase (13 with the chunk search; 11 with ddmin
# over the heads' words)
segment hash > hash.list
{ double_trace_head; cat <<EOT; } > hash.txt
alloc 0x7f0000400000 262144
h2d 0x7f0000400000 262144 u64:$(cat hash.list)
launch _Z6gatherPfPKfPKxi 1 256 ptr:0x7f0000420000 ptr:0x7f0000400000 ptr:0x7f0000410000 i32:256
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
shrink_case hash
copies_are 0x7f00004 "0x7f0000410000 8 " "only the index tensor's first entry is kept (hash)"
faults_within hash 1 3

# chunks: the index table comes in four copies of 128 entries (a batched
# copy of one chunk per request: batch-copy), the last one an evicted
# request's, 1 << 40 throughout.  That copy has no outlier and its one
# value is all ties: the extremes guess takes the first of them, and the
# first entry of the wild chunk is kept after 3 faults in the slice and
# data phase (13 when the chunk search ran over that copy)
chunk() {   # BASE WILD: 128 u64 entries
	awk -v base=$1 -v wild=$2 'BEGIN { for (i = 0; i < 128; i++) printf "%s%s", i ? "," : "", wild ? "0x10000000000" : (base + i * 7) % 16000 }'
}
{ double_trace_head; cat <<EOT; } > chunks.txt
alloc 0x7f0000100000 64000
alloc 0x7f0000200000 4096
alloc 0x7f0000300000 4096
h2d 0x7f0000100000 64000 seq
h2d 0x7f0000300000 1024 u64:$(chunk 0 0)
h2d 0x7f0000300400 1024 u64:$(chunk 100 0)
h2d 0x7f0000300800 1024 u64:$(chunk 200 0)
h2d 0x7f0000300c00 1024 u64:$(chunk 0 1)
launch _Z6gatherPfPKfPKxi 2 256 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7f0000300000 i32:512
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
shrink_case chunks
copies_are 0x7f00003 "0x7f0000300c00 8 " "only the wild chunk's first entry is kept (chunks)"
faults_within chunks 1 3

# indep: the padded table (pad's) is the input of scale_nocheck, which
# overruns whatever the bytes: the bare guess (zeros, no outliers) goes
# first and faults: 1 fault in all (the guess with its 100 padding words
# first, then none of them: 2; a ddmin over words that do not matter: 5)
{ double_trace_head; cat <<EOT; } > indep.txt
alloc 0x7f0000200000 8000
alloc 0x7f0000300000 8000
h2d 0x7f0000300000 8000 u64:$(table pad)
launch _Z13scale_nocheckPfPKfi 16 256 ptr:0x7f0000200000 ptr:0x7f0000300000 i32:2000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
shrink_case indep
check_grep "  ...no bytes are copied in: the input is zeros (indep)" "h2d_bytes: 0$" "$TMP/.out"
faults_within indep 1 1

# one: the same with one outlier (entry 250 of 500 is 70000000): the one
# word the guess keeps is tried away too (a single word was once left in
# the repro, the data phase saying "nothing to replace")
{ double_trace_head; cat <<EOT; } > one.txt
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 u64:$(awk 'BEGIN { for (i = 0; i < 500; i++) printf "%s%d", i ? "," : "", i == 250 ? 70000000 : i }')
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
shrink_case one
check_grep "  ...no bytes are copied in: the outlier did not matter (one)" "h2d_bytes: 0$" "$TMP/.out"

# ptrs: chase's copies are its pointer table alone (8 pointers, the
# buffers never copied in): the guess would change nothing, so it is not
# made: the slice is the plain slice, the data phase replaces nothing
{ double_trace_head; chase_trace 8 8 | grep -v ' seq$'; } > ptrs.txt
shrink_case ptrs
check_grep "  ...the slice kept the copies as captured (ptrs)" "outcome: reduced to one launch$" ptrs/repro.yaml
check_grep "  ...the data phase replaced nothing (ptrs)" "outcome: nothing to replace$" ptrs/repro.yaml

# table: chase's table is 64 pointers into A, then 8 retired rows that
# hold the sentinel 0xdead00000000, and chase reads row 64: the fault is
# the sentinel.  Zeroed, the row would be a null pointer: the same error
# in the same kernel (on the GPU only the site check tells them apart, at
# the end: device-counter backed off and checked repro.cu twice).  In a
# table of pointers, words that are neither zeros nor pointers are kept as
# pointers are: the table stays as captured, all 72 rows (A's bytes still
# become zeros).
{ double_trace_head
  echo "alloc 0x7f0000100000 4096"
  echo "h2d 0x7f0000100000 4096 seq"
  echo "alloc 0x7f0000800000 576"
  echo "alloc 0x7f0000a00000 512"
  echo "h2d 0x7f0000800000 576 u64:$(awk 'BEGIN { for (i = 0; i < 72; i++) printf "%s%s", i ? "," : "", i < 64 ? sprintf("0x7f00001%05x", 64 * i) : "0xdead00000000" }')"
  echo "launch _Z5chasePPKfPfi 1 72 ptr:0x7f0000800000 ptr:0x7f0000a00000 i32:72"
  echo "fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1"; } > table.txt
shrink_case table
copies_are 0x7f00008 "0x7f0000800000 576 " "the table's sentinel rows are kept with its pointers (table)"
check_grep "  ...A's bytes, which do not matter, became zeros (table)" "outcome: reduced to one launch, copies in as zeros" table/repro.yaml

# structs: gather's src is 64 {pointer, length} structs (the pointer
# words are kept, the lengths become zeros) and its index table has a
# wild entry: the struct array's 64 kept ranges are written as one copy
# from the first kept byte to the last, zeros between (reducer/cand.c,
# write_keep_span), not a copy each (262144 of them, and 112 MB of C in
# repro.cu, for bench-cpu's 4 MiB array)
{ double_trace_head; cat <<EOT; } > structs.txt
alloc 0x7f0000100000 64000
alloc 0x7f0000800000 1024
alloc 0x7f0000300000 8000
h2d 0x7f0000100000 64000 seq
h2d 0x7f0000800000 1024 u64:$(awk 'BEGIN { for (i = 0; i < 128; i++) printf "%s%s", i ? "," : "", i % 2 ? i : "0x7f0000100000" }')
h2d 0x7f0000300000 8000 u64:$(awk 'BEGIN { for (i = 0; i < 1000; i++) printf "%s%d", i ? "," : "", i == 737 ? 100000000 : i }')
launch _Z6gatherPfPKfPKxi 4 256 ptr:0x7f0000100000 ptr:0x7f0000800000 ptr:0x7f0000300000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
shrink_case structs
copies_are 0x7f00008 "0x7f0000800000 1016 " "the struct array is one copy, its first pointer to its last (structs)"
check_exit "  ...which replays to the fault (exit 1)" 1 $GPUREDUCE replay structs/repro.bin
check_grep "  ...in gather" "faulted at event.*_Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
finish
