#!/bin/sh
# t5121-vmm-pieces.sh - memory mapped piece by piece (cuMemMap; PyTorch's
# expandable segments) on the CPU driver double.  Two 2 MiB pieces mapped
# side by side hold a tensor that spans the seam.  Replayed as two
# buffers against guards, the seam was a guard the program never had: a
# kernel reading that tensor faulted under end guards, and hunt reported
# an overrun that is not there.  The decoder joins pieces mapped side by
# side into one allocation (trace/vmmjoin.inc): the reading replays clean
# every way and hunts clean, a real overrun past the last piece still
# faults and shrinks to a repro.cu that faults; a group's lifetime runs
# from its first piece's map to its last piece's unmap; a piece mapped
# into a group's hole joins it, and so does one that lay alone where the
# group grew to; a group over which a plain allocation lay while it lived
# stays in pieces; random maps and unmaps keep the joined allocations
# whole (no overlap, every mapped piece covered).
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

P1=0x7f0000000000   # the first piece, 2 MiB
P2=0x7f0000200000   # the next one, 2 MiB, right after it
P3=0x7f0000400000   # a third
IN=0x7f0010000000   # a cudaMalloc'ed input of its own
T=0x7f00001ff000    # a tensor of 8192 bytes: 4096 in P1, 4096 in P2
O=0x7f0000000000    # gather's output, 4096 bytes in P1
TAIL=0x7f00003ff000 # the last 4096 bytes of P2

head() {
	cat <<EOT
process 100 /work python3 train.py
device "gpureduce CPU double"
module $BUILD/double/kernels.cubin 1
alloc $P1 2097152 vmm
alloc $P2 2097152 vmm+cont
alloc $IN 8192
h2d $IN 8192 0x3f
h2d $T 8192 0
EOT
}
# $1: "blocks" for the allocator's blocks (capture --tensors), else none
span() {
	head
	[ "$1" = blocks ] && cat <<EOT
block $O 4096 $P1 initial at=/home/u/train.py:10:main
block $T 8192 $P1 initial at=/home/u/train.py:11:main
EOT
	cat <<EOT
launch _Z7add_onePfi 4 256 ptr:$O i32:1024 frame=/home/u/train.py:20:main
launch _Z6gatherPfPKfPKxi 4 256 ptr:$O ptr:$IN ptr:$T i32:1024 frame=/home/u/train.py:21:main
end 0
EOT
}
span none >span.txt
span blocks >spanb.txt
check "mktrace: a tensor across two pieces" $MKTRACE span.bin <span.txt
check "mktrace: ...with the allocator's blocks" $MKTRACE spanb.bin <spanb.txt

check "show: the trace" sh -c "$GPUREDUCE show span.bin >span.yaml"
check_grep "  ...says the decoder joined a piece" "vmm_pieces_joined: 1" span.yaml
awk '/^- event:/ { t = "" } /^  type:/ { t = $2 } /^  (addr|size|kind):/ && t == "ALLOC" { printf "%s=%s ", $1, $2 }
	/^  type: ALLOC/ { print "" }' span.yaml >allocs.txt
check_grep "  ...one allocation of both pieces, at the first" "addr:=$P1 size:=4194304 kind:=vmm" allocs.txt
check_no_grep "  ...no allocation at the second piece" "addr:=$P2 " allocs.txt

for g in end start layout; do
	check "a reading across the seam replays clean under $g guards" $GPUREDUCE replay --guard=$g span.bin
done
check "hunt of the trace with blocks: clean (exit 0)" $GPUREDUCE hunt --no-shrink -o h1 spanb.bin
check_grep "  ...says clean" "clean (no launch faulted under end or start guards)" "$TMP/.out"
check "hunt of the trace without blocks: clean (exit 0)" $GPUREDUCE hunt --no-shrink -o h2 span.bin

# a real overrun: add_one writes 8192 bytes from P2's last 4096
{ head; cat <<EOT
launch _Z7add_onePfi 8 256 ptr:$TAIL i32:2048 frame=/home/u/train.py:30:main
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
} >over.txt
check "mktrace: a write past the last piece" $MKTRACE over.bin <over.txt
check_exit "  ...faults under end guards" 1 $GPUREDUCE replay --guard=end over.bin
check_grep "  ...in add_one" "in _Z7add_onePfi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
check "  ...shrinks" $GPUREDUCE shrink -j 2 -o out/repro.cu over.bin
check_grep "  ...to a repro.cu that faults" "repro.cu faulted 5/5" "$TMP/.out"
check "  ...repro.cu compiles as C against the double" cc -x c -w -I${CUDA:-/usr/local/cuda}/include \
	-o out/repro out/repro.cu -L$BUILD/double -Wl,-rpath,$BUILD/double -lcuda
check_exit "  ...and faults on its own" 1 ./out/repro
check_grep "  ...in add_one" "add_one.* faulted: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"

# vcase NAME TITLE < BODY: a trace of the double's process, device and
# kernels, then BODY's lines (pieces, launches), as NAME.bin and NAME.yaml
vcase() {
	{ printf 'process 100 /work python3 train.py\ndevice "gpureduce CPU double"\n'
	  printf 'module %s 1\n' "$BUILD/double/kernels.cubin"; cat; echo "end 0"; } >$1.txt
	check "mktrace: $2" $MKTRACE $1.bin <$1.txt
	check "  ...show" sh -c "$GPUREDUCE show $1.bin >$1.yaml"
}
# nrec NAME TYPE N: NAME.yaml holds N records of TYPE
nrec() {
	n=$(grep -c "^  type: $2\$" $1.yaml)
	[ "$n" = "$3" ] && ok "  ...$3 $2 record(s)" || fail "  ...$n $2 records, not $3"
}
clean_end() { check "  ...replays clean under end guards" $GPUREDUCE replay --guard=end $1.bin; }

# lifetimes: P2 unmapped first, then P1: one FREE, of the joined base,
# where the last piece went; P2 mapped later beside nothing live is its own
vcase life "pieces unmapped one by one" <<EOT
alloc $P1 2097152 vmm
alloc $P2 2097152 vmm+cont
launch _Z7add_onePfi 8 256 ptr:$T i32:2048
free $P2 vmm
launch _Z7add_onePfi 4 256 ptr:$O i32:1024
free $P1 vmm
alloc $P2 2097152 vmm+cont
launch _Z7add_onePfi 4 256 ptr:$P2 i32:1024
EOT
awk '/^- event:/ { t = "" } /^  type:/ { t = $2 } /^  (addr|size):/ && (t == "ALLOC" || t == "FREE") { printf "%s %s=%s\n", t, $1, $2 }' \
	life.yaml | tr '\n' ' ' >life1.txt
check_grep "  ...the group's ALLOC, one FREE of its base after the second launch, then P2 alone" \
	"ALLOC addr:=$P1 ALLOC size:=4194304 FREE addr:=$P1 ALLOC addr:=$P2 ALLOC size:=2097152 \$" life1.txt
clean_end life

# a hole refilled: P1 P2 P3 side by side, P2 unmapped and mapped again
vcase hole "a hole refilled" <<EOT
alloc $P1 2097152 vmm
alloc $P2 2097152 vmm+cont
alloc $P3 2097152 vmm+cont
free $P2 vmm
alloc $P2 2097152 vmm+cont
launch _Z7add_onePfi 8 256 ptr:$T i32:2048
EOT
check_grep "  ...three pieces joined" "vmm_pieces_joined: 3" hole.yaml
nrec hole ALLOC 1
check_grep "  ...of 6 MiB" "size: 6291456" hole.yaml
nrec hole FREE 0
clean_end hole

# P3 mapped alone, unmapped; then P2 and P3 again beside P1: the group's
# extent covers where the first P3 lay while the group lived, so that
# piece joins it too (one allocation, not one over another)
vcase grown "a group grown over an earlier piece" <<EOT
alloc $P1 2097152 vmm
alloc $P3 2097152 vmm+cont
launch _Z7add_onePfi 4 256 ptr:$P3 i32:1024
free $P3 vmm
alloc $P2 2097152 vmm+cont
alloc $P3 2097152 vmm+cont
launch _Z7add_onePfi 8 256 ptr:$T i32:2048
EOT
check_grep "  ...all joined" "vmm_pieces_joined: 3" grown.yaml
nrec grown ALLOC 1
clean_end grown

# a piece mapped alone inside a live group's hole (nothing live beside
# it) joins the group: its allocation covers the hole
P4=0x7f0000600000
P5=0x7f0000800000
vcase alone "a piece alone in a group's hole" <<EOT
alloc $P1 2097152 vmm
alloc $P2 2097152 vmm+cont
alloc $P3 2097152 vmm+cont
alloc $P4 2097152 vmm+cont
alloc $P5 2097152 vmm+cont
free $P2 vmm
free $P3 vmm
free $P4 vmm
alloc $P3 2097152 vmm+cont
launch _Z7add_onePfi 4 256 ptr:$P3 i32:1024
EOT
check_grep "  ...joined to the group" "vmm_pieces_joined: 5" alone.yaml
nrec alone ALLOC 1
clean_end alone

# a clash: a plain allocation where the group's hole was, while the group
# lived: the joined allocation would lie over it, so the group stays in
# pieces
vcase clash "a plain allocation in a group's hole" <<EOT
alloc $P1 2097152 vmm
alloc $P2 2097152 vmm+cont
alloc $P3 2097152 vmm+cont
free $P2 vmm
alloc $P2 2097152
launch _Z7add_onePfi 4 256 ptr:$P2 i32:1024
free $P2
alloc $P2 2097152 vmm+cont
launch _Z7add_onePfi 8 256 ptr:$T i32:2048
EOT
check_no_grep "  ...nothing joined" "vmm_pieces_joined" clash.yaml
nrec clash ALLOC 5

# pieces of different names (a peer's import beside one's own) stay apart
sed -e "s/^alloc $P2 2097152 vmm+cont\$/alloc $P2 2097152 vmm+cont cuMemImportFromShareableHandle/" span.txt >peer.txt
check "mktrace: a peer's piece beside one's own" $MKTRACE peer.bin <peer.txt
check "  ...show" sh -c "$GPUREDUCE show peer.bin >peer.yaml"
check_no_grep "  ...not joined" "vmm_pieces_joined" peer.yaml
check_grep "  ...show prints the continuing piece's flag" "flags: 0x1" peer.yaml

# two ranges the program reserved apart that happen to lie side by side
# (NCCL's buffers, an allocator that reserves per allocation): the upper
# piece does not continue the lower one's range (no TR_ALLOC_F_VMM_CONT),
# so they are not joined, and a write from one into the other is an
# overrun under end guards
vcase apart "two reservations side by side" <<EOT
alloc $P1 2097152 vmm
alloc $P2 2097152 vmm
launch _Z7add_onePfi 8 256 ptr:$T i32:2048
EOT
check_no_grep "  ...not joined" "vmm_pieces_joined" apart.yaml
nrec apart ALLOC 2
check_exit "  ...the write across faults under end guards" 1 $GPUREDUCE replay --guard=end apart.bin
check_grep "  ...in add_one" "in _Z7add_onePfi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"

# a trace of format 2.0 (before capture flagged continuing pieces): pieces
# side by side are joined without the flag
{ sed 's/ vmm+cont$/ vmm/' span.txt; echo "version 2 0"; } >v20.txt
check "mktrace: a 2.0 trace of the same pieces, unflagged" $MKTRACE v20.bin <v20.txt
check "  ...show" sh -c "$GPUREDUCE show v20.bin >v20.yaml"
check_grep "  ...is 2.0" 'format: "2.0"' v20.yaml
check_grep "  ...joins pieces side by side" "vmm_pieces_joined: 1" v20.yaml
check "  ...replays clean under end guards" $GPUREDUCE replay --guard=end v20.bin

# random maps and unmaps of 2 MiB pieces over 24 slots (three seeds),
# growing as a segment does with some mapped anywhere: most are joined,
# and as joined no two live allocations overlap, every piece the program
# had mapped at a launch lies inside a live allocation, and every FREE ends
# a live one (show's records against the script)
for seed in 1 2 3; do
	python3 - "$seed" "$BUILD/double/kernels.cubin" >rnd$seed.txt <<'EOP'
import random, sys
r = random.Random(int(sys.argv[1]))
base, piece = 0x7f0000000000, 2 << 20
print("process 100 /work python3 train.py")
print('device "gpureduce CPU double"')
print("module %s 1" % sys.argv[2])
live = set()
def put(s):
	live.add(s)
	print("alloc %#x %d %s" % (base + s * piece, piece, "vmm+cont" if s else "vmm"))
for step in range(400):
	x = r.random()
	if x < 0.5:   # grow as a segment does: the lowest free slot beside a live one
		c = [s for s in range(24) if s not in live and (s - 1 in live or s + 1 in live)]
		if not live:
			put(0)
		elif c:
			put(min(c))
	elif x < 0.8 and live:   # unmap a piece
		s = r.choice(sorted(live))
		live.discard(s)
		print("free %#x vmm" % (base + s * piece))
	elif x >= 0.8:   # map one anywhere (alone, maybe)
		c = [s for s in range(24) if s not in live]
		if c:
			put(r.choice(c))
	if step % 10 == 9:
		print("launch _Z7add_onePfi 1 1 ptr:%#x i32:1 %s" % (base, " ".join("m=%d" % x for x in sorted(live))))
print("end 0")
EOP
	sed 's/ m=[0-9]*//g' rnd$seed.txt >rnd$seed.mk
	check "random pieces (seed $seed): mktrace" $MKTRACE rnd$seed.bin <rnd$seed.mk
	check "  ...show" sh -c "$GPUREDUCE show rnd$seed.bin >rnd$seed.yaml"
	python3 - rnd$seed.txt rnd$seed.yaml >rnd$seed.check <<'EOP'
import sys
base, piece = 0x7f0000000000, 2 << 20
mapped_at = [[int(w[2:]) for w in l.split() if w.startswith("m=")] for l in open(sys.argv[1]) if l.startswith("launch")]
recs, cur = [], {}
for l in open(sys.argv[2]):
	if l.startswith("- event:"):
		cur = {}
		recs.append(cur)
	elif l.startswith("  ") and not l.startswith("   ") and ":" in l:
		k, v = l.strip().split(":", 1)
		cur[k] = v.strip()
live, bad, nl = {}, [], 0
for x in recs:
	t = x.get("type")
	if t == "ALLOC":
		a, n = int(x["addr"], 16), int(x["size"])
		for b, m in live.items():
			if a < b + m and b < a + n:
				bad.append("overlap %#x+%d with %#x+%d" % (a, n, b, m))
		live[a] = n
	elif t == "FREE":
		a = int(x["addr"], 16)
		if a not in live:
			bad.append("FREE of %#x, not live" % a)
		live.pop(a, None)
	elif t == "LAUNCH":
		for s in mapped_at[nl]:
			p = base + s * piece
			if not any(b <= p and p + piece <= b + m for b, m in live.items()):
				bad.append("launch %d: piece %d in no live allocation" % (nl, s))
		nl += 1
print("launches %d, bad %d" % (nl, len(bad)))
for b in bad[:5]:
	print(b)
EOP
	n=$(sed -n 's/^  vmm_pieces_joined: //p' rnd$seed.yaml)
	[ "${n:-0}" -ge 50 ] && ok "  ...most pieces joined ($n)" || fail "  ...only ${n:-0} pieces joined"
	check_grep "  ...40 launches checked, no overlap, every piece covered, every FREE of a live one" \
		"^launches 40, bad 0\$" rnd$seed.check
done

finish
