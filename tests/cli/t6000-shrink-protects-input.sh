#!/bin/sh
# t6000-shrink-protects-input.sh - shrink never writes over its input trace
# (a capture can take hours to make) and checks every place it will write
# before any work: refusals are exit 2 (an output is the input) or 3 (a
# folder missing or not writable), with one line and nothing changed.
# Outputs: -o FILE.cu, FILE.bin, FILE.yaml beside it, --log; -o DIR means
# DIR/repro.cu.
. tests/cli/test-lib.sh

on_double no-sanitizer plain-path

cat > crash.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 seq
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1
EOT
check "mktrace crash" $MKTRACE crash.bin < crash.txt
sum=$(cksum < crash.bin)

# refuse_case DESC EXIT PATTERN ARGS...: shrink exits EXIT at once, says
# PATTERN, and crash.bin is unchanged
refuse_case() {
	desc=$1 code=$2 pat=$3
	shift 3
	check_exit "$desc: exit $code" "$code" timeout 20 $GPUREDUCE shrink -j 1 --quiet "$@"
	check_grep "  ...saying why" "$pat" "$TMP/.out"
	if [ "$(cksum < crash.bin)" = "$sum" ]; then ok "  ...crash.bin unchanged"; else fail "  ...crash.bin was changed"; fi
	if ls -d ./*.work-* >/dev/null 2>&1; then fail "  ...a work folder was made"; rm -rf ./*.work-*; else ok "  ...no work started"; fi
}

refuse_case "-o crash.cu (repro.bin would be crash.bin)" 2 \
	"the reduced trace would be written to crash.bin, which is the input trace" crash.bin -o crash.cu
refuse_case "-o crash.bin (C source over the input)" 2 \
	"the repro (-o) would be written to crash.bin, which is the input trace" -o crash.bin crash.bin
refuse_case "-o crash (no .cu: crash.bin again)" 2 "which is the input trace" -o crash crash.bin
mkdir sub
refuse_case "the same file by another path" 2 "which is the input trace" -o sub/../crash.cu ./crash.bin
ln -s crash.bin link.bin
refuse_case "the input through a symbolic link" 2 "which is the input trace" -o link.cu crash.bin
refuse_case "--log=crash.bin" 2 "the log (--log) would be written to crash.bin" --log=crash.bin -o r/repro.cu crash.bin
refuse_case "--log the same file as the repro" 2 "is also where the repro (-o) goes" --log=r/repro.cu -o r/repro.cu crash.bin
touch afile
refuse_case "--log in a folder that is a file" 3 "cannot write the log (--log) to afile/s.log: afile is a file" \
	--log=afile/s.log -o r/repro.cu crash.bin
refuse_case "--log in a folder that does not exist" 3 "nodir/deeper does not exist" \
	--log=nodir/deeper/s.log -o r/repro.cu crash.bin
refuse_case "-o under a file" 3 "cannot write the repro (-o) to afile/repro.cu" -o afile/repro.cu crash.bin
if [ -e r ]; then fail "no output (not even its folder) after a refusal"; else ok "no output (not even its folder) after a refusal"; fi

# -o DIR: the repro goes into it (main ran the whole reduction, then failed)
mkdir outdir
check "-o DIR writes DIR/repro.cu" timeout 60 $GPUREDUCE shrink -j 1 --quiet -o outdir crash.bin
for f in repro.cu repro.bin repro.yaml; do
	if [ -f outdir/$f ]; then ok "  ...outdir/$f"; else fail "  ...no outdir/$f"; fi
done
if [ "$(cksum < crash.bin)" = "$sum" ]; then ok "crash.bin unchanged after all that"; else fail "crash.bin was changed"; fi
finish
