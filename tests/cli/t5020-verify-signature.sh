#!/bin/sh
# t5020-verify-signature.sh - `gpureduce verify` judges runs against the
# signature the repro's header declares, not against whatever the first
# run happened to print.  The "repro" here is a C program (built through
# GPUREDUCE_NVCC) that prints scripted outcomes, one per run, read from a
# counter file: so a first run that faults differently cannot set the bar,
# a wild address reported as 717 instead of 700 is the same fault, and a
# different kernel or error is not.
. tests/cli/test-lib.sh

export GPUREDUCE_NVCC="cc -x c -w"
cd "$TMP" || exit 1

# fake_repro NAME ERROR KERNEL OUTCOMES...: a repro.cu whose header says it
# faults with ERROR in KERNEL and whose k-th run prints OUTCOMES[k]
# (clean | noline: exit 1 without a fault line | ERROR@KERNEL).
fake_repro() {
	name=$1 herr=$2 hker=$3
	shift 3
	{
		echo '/*'
		echo " * What faulted:   $herr (700) in $hker"
		echo ' */'
		echo '#include <stdio.h>'
		echo '#include <string.h>'
		echo 'static const char *runs[] = {'
		for o in "$@"; do echo "	\"$o\","; done
		echo '	0 };'
		cat <<EOC
int main(void)
{
	int k = 0;
	FILE *f = fopen("$TMP/$name.count", "r");
	if (f) { if (fscanf(f, "%d", &k) != 1) k = 0; fclose(f); }
	f = fopen("$TMP/$name.count", "w");
	fprintf(f, "%d\n", k + 1);
	fclose(f);
	const char *o = runs[k % $#];
	if (!strcmp(o, "clean")) { printf("repro: ran clean\n"); return 0; }
	if (!strcmp(o, "noline")) { printf("repro: something else went wrong\n"); return 1; }
	char err[64];
	const char *at = strchr(o, '@');
	snprintf(err, sizeof(err), "%.*s", (int)(at - o), o);
	printf("repro: %s faulted: %s (700): an illegal memory access was encountered\n", at + 1, err);
	return 1;
}
EOC
	} > "$name.cu"
	rm -f "$name.count"
}

K='scale(float*, float const*, int, int, unsigned int)'
KR=$(printf '%s' "$K" | sed 's/[*.[]/\\&/g')   # K as a grep pattern
fake_repro a CUDA_ERROR_ILLEGAL_ADDRESS "$K" \
	"CUDA_ERROR_INVALID_ADDRESS_SPACE@$K" "CUDA_ERROR_ILLEGAL_ADDRESS@$K" \
	"CUDA_ERROR_ILLEGAL_ADDRESS@$K" "CUDA_ERROR_ILLEGAL_ADDRESS@$K"
check "700 and 717 in the same kernel: one fault, all runs count" $GPUREDUCE verify -n 4 a.cu
check_grep "  ...judged against the header's signature" \
	"^verify: 4/4 runs faulted with CUDA_ERROR_ILLEGAL_ADDRESS in $KR (1 of them as CUDA_ERROR_INVALID_ADDRESS_SPACE" "$TMP/.out"

fake_repro b CUDA_ERROR_ILLEGAL_ADDRESS "$K" \
	"CUDA_ERROR_ASSERT@$K" "CUDA_ERROR_ILLEGAL_ADDRESS@$K" "CUDA_ERROR_ILLEGAL_ADDRESS@$K"
check_exit "a first run with another error does not set the bar (exit 1)" 1 $GPUREDUCE verify -n 3 b.cu
check_grep "  ...2/3 with the header's error, 1 differently" \
	"^verify: 2/3 runs faulted with CUDA_ERROR_ILLEGAL_ADDRESS in $KR; 1 faulted differently (rate 0\\.67)" "$TMP/.out"
rm -f b.count
check "  ...--rate=0.6 accepts it" $GPUREDUCE verify -n 3 --rate=0.6 b.cu

fake_repro c CUDA_ERROR_ILLEGAL_ADDRESS "$K" "CUDA_ERROR_ILLEGAL_ADDRESS@other(int)"
check_exit "the right error in another kernel is not the fault (exit 1)" 1 $GPUREDUCE verify -n 2 c.cu
check_grep "  ...0/2, both different" "^verify: 0/2 runs faulted with CUDA_ERROR_ILLEGAL_ADDRESS in $KR; 2 faulted differently" "$TMP/.out"

fake_repro d CUDA_ERROR_ILLEGAL_ADDRESS "$K" "clean"
check_exit "a repro that runs clean fails (exit 1)" 1 $GPUREDUCE verify -n 2 d.cu
check_grep "  ...and says so" "; 2 ran clean" "$TMP/.out"

# a run that exits 1 without its fault line ran: it is not "failed to run"
fake_repro g CUDA_ERROR_ILLEGAL_ADDRESS "$K" "CUDA_ERROR_ILLEGAL_ADDRESS@$K" "noline"
check_exit "a run that exits 1 without a fault line is not a fault (exit 1)" 1 $GPUREDUCE verify -n 2 g.cu
check_grep "  ...it is counted as that, not as one that failed to run" \
	"^verify: 1/2 runs faulted with CUDA_ERROR_ILLEGAL_ADDRESS in $KR; 1 exited 1 without a fault line" "$TMP/.out"
check_grep "  ...and what it printed is shown" "^repro: something else went wrong" "$TMP/.out"
check_no_grep "  ...no 'failed to run'" "failed to run" "$TMP/.out"

# a file without gpureduce's header: the first run sets the signature
fake_repro e CUDA_ERROR_ILLEGAL_ADDRESS "$K" "CUDA_ERROR_MISALIGNED_ADDRESS@k(int)"
sed -i '/What faulted/d' e.cu
check "no header: the first run's signature" $GPUREDUCE verify -n 2 e.cu
check_grep "  ...and says where the signature came from" \
	"^verify: 2/2 runs faulted with CUDA_ERROR_MISALIGNED_ADDRESS in k(int) \[no repro header: compared with the first run\]" "$TMP/.out"
finish
