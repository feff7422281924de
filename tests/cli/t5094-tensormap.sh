#!/bin/sh
# t5094-tensormap.sh - TMA tensor maps end to end on the driver double:
# tma-prog encodes a map over its tensor with cuTensorMapEncodeTiled (a bad
# row stride) and launches tma_rows, which reads through the map passed by
# value.  Captured for real (capture library + fake CUPTI): the TENSORMAP
# record holds the call's arguments and the 128 bytes; replay re-encodes
# the map for the relocated tensor and faults the same way; the slice
# keeps the tensor (only the map points at it); repro.cu builds the map
# with cuTensorMapEncodeTiled over its own buffer and faults when built
# against the double; a ReplaceAddress map carries its encode's geometry.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_on_double $H/tma-prog.c
PATH=/usr/bin:/bin     # no compute-sanitizer
export LD_LIBRARY_PATH GPUREDUCE_CAPTURE_LIB GPUREDUCE_LIBCUDA PATH
unset CUDA_INJECTION64_PATH GPUREDUCE_SANITIZER
cd "$TMP" || exit 1
CUBIN=$DBL/kernels.cubin

# --- capture ------------------------------------------------------------------
check_exit "a good stride runs clean under capture" 0 "$GPUREDUCE" capture -o good.bin -- ./prog $CUBIN good
check_exit "a bad stride faults under capture" 3 "$GPUREDUCE" capture -o bad.bin -- ./prog $CUBIN bad
check "show the trace" sh -c "'$GPUREDUCE' show bad.bin > bad.yaml"
check_grep "format 2.1" 'format: "2.1"' bad.yaml
check_grep "a TENSORMAP record" "type: TENSORMAP" bad.yaml
check_grep "  ...from cuTensorMapEncodeTiled" "api: tiled" bad.yaml
check_grep "  ...described in the kernel's terms" "a TMA descriptor over a 64x256 f32 tensor, box 64x64, row strides 8192 bytes" bad.yaml
check_grep "  ...with its bad stride" "strides: \[8192\]" bad.yaml
check_grep "the launch's map parameter is named" "param 0: a TMA descriptor over a 64x256 f32 tensor" bad.yaml

# --- replay: the map is re-encoded for the relocated tensor -------------------
check_exit "the good trace replays clean" 0 "$GPUREDUCE" replay good.bin
check_grep "  ...its map re-encoded (1 of 1)" "1 TMA tensor map(s) re-encoded, 0 by address word only" "$TMP/.out"
check_exit "the bad trace replays to the fault" 1 "$GPUREDUCE" replay bad.bin
check_grep "  ...in tma_rows" "in _Z8tma_rows14CUtensorMap_stPfi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
check_grep "  ...relocation coverage reported" "replay: relocation: [1-9][0-9]* pointer word(s) relocated, 0 word(s) looked like" "$TMP/.out"

# --- slice and repro ---------------------------------------------------------
check "shrink the bad trace" "$GPUREDUCE" shrink -j 2 -o r/repro.cu bad.bin
check_grep "  ...to one launch" "3 launches -> 1 launch," "$TMP/.out"
check_grep "  ...the slice keeps the tensor and the output, drops the decoy" "slice  *3 / 3  *1 / 2 " "$TMP/.out"
check_grep "repro.yaml: the reduced trace's map was re-encoded" "tensor_maps_reencoded: 1" r/repro.yaml
check_grep "repro.cu builds the map with cuTensorMapEncodeTiled" "SETUP(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, global, dims, strides, box, elem_strides" r/repro.cu
check_grep "  ...named dims and the bad stride" "cuuint64_t strides\[1\] = { 8192ull }" r/repro.cu
check_grep "  ...over its own buffer" "void \*global = (void \*)(buf\[[0-9]\].ptr + 0);" r/repro.cu
check_grep "  ...described" "param 0: a TMA descriptor over a 64x256 f32 tensor, box 64x64" r/repro.cu
repro_faults_on_double r

# --- diagnose speaks of the map (a stand-in compute-sanitizer reports a read
# just past the first buffer, the tensor) --------------------------------------
cat > fake-sanitizer <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
san_run "$@"
[ -n "$buf0" ] || exit 0
set -- $buf0 $buf0_size
addr=$(printf '0x%x' $(( $1 + $2 + 4 )))
cat <<EOR
========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at tma_rows(CUtensorMap_st, float *, int)+0x90
=========     by thread (0,0,0) in block (8,0,0)
=========     Access to $addr is out of bounds
=========     and is 5 bytes after the nearest allocation at $1 of size $2 bytes
EOR
EOT
chmod +x fake-sanitizer
check "diagnose the reduced trace" env GPUREDUCE_SANITIZER=$TMP/fake-sanitizer "$GPUREDUCE" diagnose r/repro.bin
check_grep "  ...names the map behind the overrun" "past the end of param 0 .*: a TMA descriptor over a 64x256 f32 tensor, box 64x64, row strides 8192 bytes" "$TMP/.out"

# --- ReplaceAddress: the encode's geometry comes along ------------------------
check_exit "encode over the decoy, then ReplaceAddress to the tensor: faults" 3 \
	"$GPUREDUCE" capture -o repl.bin -- ./prog $CUBIN bad replace
check "show it" sh -c "'$GPUREDUCE' show repl.bin > repl.yaml"
check_grep "a replace record" "api: replace" repl.yaml
check_grep "  ...with the encode's geometry" "geom: tiled" repl.yaml
n=$(grep -c "no recorded cuTensorMapEncode" repl.yaml)
[ "$n" = 0 ] && ok "  ...the replaced map counts as recorded (no note)" || fail "a note on a replaced map ($n)"
check_exit "it replays to the fault" 1 "$GPUREDUCE" replay repl.bin
check_grep "  ...its map re-encoded" "1 TMA tensor map(s) re-encoded" "$TMP/.out"
check "shrink it" "$GPUREDUCE" shrink -j 2 --quiet -o r2/repro.cu repl.bin
check_grep "  ...the repro encodes over the tensor" "SETUP(cuTensorMapEncodeTiled" r2/repro.cu
check "  ...compiles" $CC -x c -w -I$CUDA/include -o r2/repro r2/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "  ...and faults" 1 ./r2/repro
# --- a map capture did not see being made: noted, replayed by its address word
check_exit "an encode without callbacks: faults under capture" 3 "$GPUREDUCE" capture -o unseen.bin -- ./prog $CUBIN bad unseen
check "show it" sh -c "'$GPUREDUCE' show unseen.bin > unseen.yaml"
check_grep "  ...a note names the kernel's unrecorded map" "param 0 is 128 bytes at a 16-byte-aligned offset whose first word is a device address (a TMA tensor map?), but no recorded cuTensorMapEncode\\* call made it" unseen.yaml
n=$(grep -c "no recorded cuTensorMapEncode" bad.yaml)
[ "$n" = 0 ] && ok "  ...and no such note when the encode was recorded" || fail "a note on a recorded map ($n)"
check_exit "it replays to the fault" 1 "$GPUREDUCE" replay unseen.bin
check_grep "  ...no map re-encoded: the address word relocated it" "replay: relocation: [1-9][0-9]* pointer word(s) relocated, 0 word(s)" "$TMP/.out"
# --- a map encoded once, launched after a checkpoint (CUTLASS encodes at set-up
# and launches for days): the next segment carries the TENSORMAP record --------
for how in background sync; do
	[ $how = sync ] && ck="GPUREDUCE_CKPT_SNAPSHOT_MAX=0" || ck="X=1"
	check_exit "$how checkpoint before every launch: faults under capture" 3 \
		env $ck "$GPUREDUCE" capture --checkpoint-every=1 -o ck-$how.bin -- ./prog $CUBIN bad
	check "show it" sh -c "'$GPUREDUCE' show ck-$how.bin > ck-$how.yaml"
	check_grep "  ...the trace is the last segment: a checkpoint (after the encode), then its window" "type: CHECKPOINT_BEGIN" ck-$how.yaml
	n=$(grep -c "type: LAUNCH$" ck-$how.yaml)
	[ "$n" -ge 1 ] && [ "$n" -lt 3 ] && ok "  ...$n of the 3 launches in the window" || fail "  ...$n launches in the window"
	check_grep "  ...the map's record was carried" "api: tiled" ck-$how.yaml
	check_exit "  ...it replays to the fault" 1 "$GPUREDUCE" replay ck-$how.bin
	check_grep "  ...its map re-encoded for the relocated tensor" "1 TMA tensor map(s) re-encoded, 0 by address word only" "$TMP/.out"
done
check "shrink the background one" "$GPUREDUCE" shrink -j 2 --quiet -o r3/repro.cu ck-background.bin
check_grep "  ...its repro.cu encodes the map over its own buffer" "SETUP(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, global" r3/repro.cu
repro_faults_on_double r3
# ...and with 2500 other distinct maps encoded before it, only the latest
# 1024 are carried, the one the launch uses among them
check_exit "2501 maps, checkpoint before every launch: faults under capture" 3 \
	"$GPUREDUCE" capture --checkpoint-every=1 -o ck-many.bin -- ./prog $CUBIN bad many
check "show it" sh -c "'$GPUREDUCE' show ck-many.bin > ck-many.yaml"
n=$(grep -c "type: TENSORMAP$" ck-many.yaml)
[ "$n" = 1024 ] && ok "  ...$n of the 2501 maps carried" || fail "  ...$n of the 2501 maps carried (want the latest 1024)"
check_exit "  ...it replays to the fault" 1 "$GPUREDUCE" replay ck-many.bin
check_grep "  ...its map re-encoded" "1 TMA tensor map(s) re-encoded, 0 by address word only" "$TMP/.out"
[ -n "$T5090_KEEP" ] && cp -r "$TMP" "$T5090_KEEP"
finish
