# lib.sh - shared helpers for the GPU-machine scripts in tests/gpu
# (gpu-test.sh, demo.sh, bench.sh); sourced, never run.
#
# Gives: absolute paths (GR_ROOT, BUILD, GR = the gpureduce binary, NVCC,
# SAMPLEINFO), logging with timestamps, timing with `date +%s.%N` and awk
# (the GPU machine has no bc), a global deadline so a suite always ends in
# time, run_step (one logged, timed, time-limited command), sample.yaml
# loading through the prebuilt $BUILD/sampleinfo, parsers for the one-line
# summaries that gpureduce prints, and an aligned table printer.
#
# Nothing here exits on a failed command: callers record FAIL and go on.
# Requires bash 4 (associative arrays in the callers), coreutils `timeout`,
# awk and sed.

GR_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$GR_ROOT/$BUILD ;; esac
CUDA=${CUDA:-/usr/local/cuda}
export PATH="$CUDA/bin:$PATH"
GR=$BUILD/gpureduce
# the samples (GR_SAMPLES: another folder of NAME/sample.yaml, for the CPU
# tests of these scripts)
GR_SAMPLES=${GR_SAMPLES:-$GR_ROOT/samples}
SAMPLEINFO=$BUILD/sampleinfo
NVCC=$CUDA/bin/nvcc
[ -x "$NVCC" ] || NVCC=$(command -v nvcc 2>/dev/null || echo nvcc)

# ---- logging and time ---------------------------------------------------

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
warn() { printf '[%s] WARNING: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
now() { date +%s.%N; }
# seconds since START (a `now` value), two decimals
secs_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# The global deadline: gr_deadline_set SECONDS, then gr_time_left.
GR_DEADLINE=0
gr_deadline_set() { GR_DEADLINE=$(( $(date +%s) + $1 )); }
gr_time_left() { echo $(( GR_DEADLINE - $(date +%s) )); }
# A step's time limit: DEFAULT, cut to what is left before the deadline
# (less a 5 s margin).  Prints 0 when no time is left.
gr_step_timeout() {
	local left=$(( $(gr_time_left) - 5 ))
	[ "$left" -lt 0 ] && left=0
	if [ "$1" -lt "$left" ]; then echo "$1"; else echo "$left"; fi
}

# gr_pack_logs TGZ ROOT STAMP MAX PATH...: pack into TGZ the files under
# ROOT/PATH... written after STAMP (a file; not what an earlier call on the
# same warm machine left), traces (*.bin, *.bin.next), objects and built
# repro programs left out.  When that archive is over MAX bytes (the
# device tool brings back no file over 16 MiB), it is packed again with
# only session-logs/ and each part's summary files and logs, less the
# per-run logs (repro-run-N, capture-N, pool, build, nvcc-repro).
gr_pack_logs() {
	local tgz=$1 root=$2 stamp=$3 max=$4 list
	shift 4
	list=$(mktemp) || return 1
	(cd "$root" && find "$@" -type f -newer "$stamp" ! -name '*.bin' ! -name '*.bin.next' ! -name '*.o' \
		! -name repro ! -name '.*' 2>/dev/null) >"$list"
	tar -czf "$tgz" -C "$root" -T "$list" 2>/dev/null
	if [ "$(stat -c %s "$tgz" 2>/dev/null || echo 0)" -gt "$max" ]; then
		grep -E '^session-logs/|(/table|summary\.txt|rows\.txt|notes\.txt|\.log)$' "$list" |
			grep -Ev '/(repro-run-[0-9]+|capture-[0-9]+|pool|build|nvcc-repro)\.log$' >"$list.slim"
		tar -czf "$tgz" -C "$root" -T "$list.slim" 2>/dev/null
		rm -f "$list.slim"
	fi
	rm -f "$list"
}

# ---- the GPU's own health ------------------------------------------------
# Three times a GPU needed a reset mid-call (two H100s: 2026-12-05 twice,
# Xid 119 GSP timeouts; 2026-12-07, Xid 109 "CTX SWITCH TIMEOUT" and then
# Xid 119, "GPU requires reset"); every step after it failed with
# CUDA_ERROR_NO_DEVICE, some only after hanging for minutes.  What the
# samples' faults themselves raise: 13 (graphics engine exception:
# asserts, traps), 31 (MMU fault), 43 (a faulted context stopped), 45 (its
# channels cleaned up); any other Xid is the machine's, and is shown.
GR_OWN_XIDS="13 31 43 45"

# gr_xid_lines: dmesg's text on stdin; prints its Xid lines other than
# GR_OWN_XIDS (at most 12, the first ones: what came first set it off),
# then one line "xids: CODE xN ..." over all its Xid lines (nothing when
# there were none).
gr_xid_lines() {
	awk -v own=" $GR_OWN_XIDS " '
		/Xid \(/ {
			s = $0; sub(/.*Xid \([^)]*\): */, "", s); code = s; sub(/[^0-9].*/, "", code)
			if (code == "") next
			if (!(code in n)) order[++k] = code
			n[code]++
			if (index(own, " " code " ") == 0 && shown < 12) { print; shown++ }
		}
		END {
			if (!k) exit
			line = "xids:"
			for (i = 1; i <= k; i++) line = line " " order[i] " x" n[order[i]]
			print line
		}'
}

# gr_gpu_lost: exit 0 when the GPU can no longer be used (nvidia-smi fails
# or says it needs a reset), printing why in one line; 1 when it looks
# usable, or when there is no nvidia-smi to ask.  GR_SMI (default
# nvidia-smi) is what is asked.
gr_gpu_lost() {
	local out
	command -v "${GR_SMI:-nvidia-smi}" >/dev/null 2>&1 || return 1
	if ! out=$(${GR_SMI:-nvidia-smi} -q 2>&1); then
		echo "nvidia-smi failed: $(printf '%s\n' "$out" | head -n 1)"
		return 0
	fi
	if printf '%s\n' "$out" | grep -q 'GPU requires reset'; then
		echo "nvidia-smi: GPU requires reset"
		return 0
	fi
	return 1
}

# ---- running commands ---------------------------------------------------

# run_step DIR LOG TIMEOUT CMD [ARG...]
# Runs CMD in DIR (stdin from /dev/null) under `timeout`, stdout and stderr
# appended to LOG after a "+ CMD" line.  Sets STEP_RC (124 = timed out or no
# time left) and STEP_SECS.  Returns STEP_RC.
run_step() {
	local dir=$1 logf=$2 t=$3 start
	shift 3
	{ printf '+'; printf ' %q' "$@"; printf '\n'; } >>"$logf"
	if [ "$t" -le 0 ]; then
		echo "(skipped: no time left before the deadline)" >>"$logf"
		STEP_RC=124; STEP_SECS=0
		return 124
	fi
	start=$(now)
	(cd "$dir" && exec timeout -k 10 "$t" "$@") >>"$logf" 2>&1 </dev/null
	STEP_RC=$?
	STEP_SECS=$(secs_since "$start")
	if [ "$STEP_RC" -eq 124 ] || [ "$STEP_RC" -eq 137 ]; then
		echo "(timed out after ${t}s)" >>"$logf"
		STEP_RC=124
	fi
	echo "(exit $STEP_RC after ${STEP_SECS}s)" >>"$logf"
	return "$STEP_RC"
}

# tail_log FILE [N]: the last N (20) lines of FILE, indented.
tail_log() {
	[ -f "$1" ] || { echo "    ($1: no such log)"; return; }
	echo "    --- tail of $1"
	tail -n "${2:-20}" "$1" | sed 's/^/    | /'
}

# ---- samples ------------------------------------------------------------

# need_sampleinfo: make sure $SAMPLEINFO can run.  Rebuilds it when it is
# missing or older than its source and libyaml is available (this needs
# yaml.h and a static libyaml, which the GPU machine lacks: there, build it
# beforehand and carry build/).  Returns 1 with a clear message if missing.
need_sampleinfo() {
	local src=$GR_ROOT/tests/gpu/sampleinfo.c
	if [ ! -x "$SAMPLEINFO" ] || [ "$src" -nt "$SAMPLEINFO" ]; then
		mkdir -p "$(dirname "$SAMPLEINFO")"
		if cc -O2 -o "$SAMPLEINFO.tmp" "$src" -Wl,-Bstatic -lyaml -Wl,-Bdynamic >/dev/null 2>&1 &&
		   mv -f "$SAMPLEINFO.tmp" "$SAMPLEINFO"; then
			log "built $SAMPLEINFO"
		elif [ -x "$SAMPLEINFO" ]; then
			rm -f "$SAMPLEINFO.tmp"
			warn "could not rebuild $SAMPLEINFO (no libyaml here?); using the existing one"
		else
			rm -f "$SAMPLEINFO.tmp"
			echo "error: $SAMPLEINFO is missing and cannot be built here (needs libyaml headers)." >&2
			echo "       Build it on the build machine and carry build/ along:" >&2
			echo "       cc -O2 -o build/sampleinfo tests/gpu/sampleinfo.c -Wl,-Bstatic -lyaml -Wl,-Bdynamic" >&2
			return 1
		fi
	fi
	return 0
}

# load_sample FILE: sets NAME STORY BUILD_CMD RUN EXPECT_ERRORS
# EXPECT_KERNEL FLAKY TIMEOUT CAPTURE_ARGS EXPECT_ROOT_KERNEL PROCESSES from a sample.yaml.  On error returns 1 with
# sampleinfo's message in SAMPLE_ERR.
load_sample() {
	local out
	NAME=; STORY=; BUILD_CMD=; RUN=; EXPECT_ERRORS=; EXPECT_KERNEL=; FLAKY=0; TIMEOUT=120
	CAPTURE_ARGS=; EXPECT_ROOT_KERNEL=; PROCESSES=1; EXPECT_HUNT_KERNEL=; CLEAN_ENV=
	SAMPLE_ERR=
	if ! out=$("$SAMPLEINFO" "$1" 2>&1); then
		SAMPLE_ERR=$out
		return 1
	fi
	eval "$out"
}

# list_samples [NAME...]: sample directories (absolute), in the order given,
# or all of samples/*/sample.yaml: the quick CUDA C ones first (while the
# PyTorch extension builds in the background), then torch-extension (the
# seed story, so that a tight deadline cuts the lesser samples), then the
# other Python ones, then any others alphabetically.
list_samples() {
	local n d
	if [ $# -gt 0 ]; then
		for n in "$@"; do
			n=${n%/}; n=${n##*/}
			echo "$GR_SAMPLES/$n"
		done
		return
	fi
	local order="oob-write use-after-free shared-overflow race torch-extension triton-mask index-assert"
	for n in $order; do
		[ -f "$GR_SAMPLES/$n/sample.yaml" ] && echo "$GR_SAMPLES/$n"
	done
	for d in "$GR_SAMPLES"/*/; do
		n=$(basename "$d")
		[ -f "$d/sample.yaml" ] || continue
		case " $order " in *" $n "*) continue ;; esac
		echo "${d%/}"
	done
}

# samples_with VAR: the sample directories (absolute, by name) whose
# sample.yaml sets VAR (sampleinfo's VAR='...' not empty), e.g. CLEAN_ENV
samples_with() {
	local d
	for d in "$GR_SAMPLES"/*/; do
		[ -f "$d/sample.yaml" ] && "$SAMPLEINFO" "$d/sample.yaml" 2>/dev/null |
			grep -q "^$1='..*'" && echo "${d%/}"
	done
}

# err_in_list ERR "LIST": 0 if ERR is one of the space-separated names.
err_in_list() {
	local e
	[ -n "$1" ] || return 1
	for e in $2; do [ "$e" = "$1" ] && return 0; done
	return 1
}

# kernel_matches NAME SUBSTRING: case-insensitive; an empty SUBSTRING matches.
kernel_matches() {
	[ -z "$2" ] && return 0
	local n=${1,,} s=${2,,}
	[[ $n == *"$s"* ]]
}

# short_kernel NAME: a readable short name (demangled, no namespaces,
# template arguments or parameters), at most 32 characters.
short_kernel() {
	local n=$1 d
	if [[ $n == _Z* ]] && command -v c++filt >/dev/null 2>&1; then
		d=$(printf '%s\n' "$n" | c++filt 2>/dev/null)
		[ -n "$d" ] && n=$d
	fi
	n=${n#void }
	n=${n%%[\(\<]*}
	n=${n##*::}
	n=${n##* }
	[ -n "$n" ] || n=$1
	printf '%s' "${n:0:32}"
}

# short_err CUDA_ERROR_X -> X
short_err() { printf '%s' "${1#CUDA_ERROR_}"; }

# ---- parsing gpureduce output -------------------------------------------

# parse_capture LOG: reads the last "gpureduce: captured ..." line.
# Sets CAP_LINE, CAP_LAUNCHES, CAP_ERR, CAP_KERNEL, CAP_AT (empty if absent).
parse_capture() {
	CAP_LINE=$(grep -a '^gpureduce: captured' "$1" 2>/dev/null | tail -n 1)
	CAP_LAUNCHES=$(printf '%s\n' "$CAP_LINE" | sed -n 's/^gpureduce: captured \([0-9][0-9]*\) launch.*/\1/p')
	CAP_ERR=$(printf '%s\n' "$CAP_LINE" | sed -n 's/.*fault: \(CUDA_ERROR_[A-Z0-9_]*\) in .*/\1/p')
	CAP_KERNEL=$(printf '%s\n' "$CAP_LINE" | sed -n 's/.*fault: CUDA_ERROR_[A-Z0-9_]* in \([^ ]*\) at launch #[0-9][0-9]*.*/\1/p')
	CAP_AT=$(printf '%s\n' "$CAP_LINE" | sed -n 's/.*fault: [^;]* at launch #\([0-9][0-9]*\).*/\1/p')
}

# show_fault TRACE LOG: runs `gpureduce show --fault TRACE` (or, if that
# fails, `gpureduce show TRACE --fault`) into LOG and sets SHOW_ERR (the
# first CUDA_ERROR_* name) and SHOW_KERNEL (the value of a kernel: key).
show_fault() {
	local t
	SHOW_ERR=; SHOW_KERNEL=
	: >"$2"
	t=$(gr_step_timeout 60)
	run_step "$GR_ROOT" "$2" "$t" "$GR" show --fault "$1" ||
		run_step "$GR_ROOT" "$2" "$t" "$GR" show "$1" --fault
	[ "$STEP_RC" -eq 0 ] || return 1
	SHOW_ERR=$(grep -a -o 'CUDA_ERROR_[A-Z0-9_]*' "$2" | head -n 1)
	SHOW_KERNEL=$(sed -n 's/^[[:space:]-]*kernel:[[:space:]]*//p' "$2" | head -n 1 |
		sed 's/^["'\'']//; s/["'\'']$//')
	return 0
}

# parse_replay LOG: from "replay: faulted at event N (launch #K) in KERNEL:
# ERR[ (code) after ...]" sets REP_ERR, REP_KERNEL; REP_WORD is fault /
# clean / "could not" (empty when there is no replay: line).
parse_replay() {
	local line
	line=$(grep -a '^replay:' "$1" 2>/dev/null | tail -n 1)
	REP_ERR=; REP_KERNEL=; REP_WORD=
	case $line in
	"replay: faulted"*)
		REP_WORD=fault
		REP_ERR=$(printf '%s\n' "$line" | sed -n 's/.*: \(CUDA_ERROR_[A-Z0-9_]*\).*/\1/p')
		[ -n "$REP_ERR" ] || REP_ERR=$(printf '%s\n' "$line" | grep -o 'CUDA_ERROR_[A-Z0-9_]*' | tail -n 1)
		REP_KERNEL=$(printf '%s\n' "$line" | sed -n 's/.*) in \(.*\): CUDA_ERROR_.*/\1/p') ;;
	"replay: ran clean"*) REP_WORD=clean ;;
	"replay: could not"*) REP_WORD="could not" ;;
	esac
}

# parse_shrink LOG: from the last "shrink: N launches -> M launch(es), ..."
# line sets SHR_BEFORE, SHR_AFTER and SHR_CANDS (from "K candidates", if the
# line says it); SHR_LINE is the line.
parse_shrink() {
	SHR_LINE=$(grep -a '^shrink:' "$1" 2>/dev/null | tail -n 1)
	SHR_BEFORE=$(printf '%s\n' "$SHR_LINE" | sed -n 's/^shrink: \([0-9][0-9]*\) launch.*/\1/p')
	SHR_AFTER=$(printf '%s\n' "$SHR_LINE" | sed -n 's/.*-> *\([0-9][0-9]*\) launch.*/\1/p')
	SHR_CANDS=$(printf '%s\n' "$SHR_LINE" | sed -n 's/.*[^0-9]\([0-9][0-9]*\) candidate.*/\1/p')
}

# yaml_candidates FILE: the number after a `candidates:` key, if any.
yaml_candidates() {
	[ -f "$1" ] || return 0
	sed -n 's/^[[:space:]]*candidates:[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$1" | head -n 1
}

# yaml_key KEY FILE: the value of a top-level `KEY:` line, or "-".
yaml_key() {
	local v
	[ -f "$2" ] && v=$(sed -n "s/^$1:[[:space:]]*//p" "$2" | head -n 1)
	printf '%s\n' "${v:--}"
}

# parse_verify LOG: "verify: K/N runs faulted ..." -> VER_K, VER_N.
parse_verify() {
	local line
	line=$(grep -a '^verify:' "$1" 2>/dev/null | tail -n 1)
	VER_K=$(printf '%s\n' "$line" | sed -n 's/^verify: \([0-9][0-9]*\)\/[0-9][0-9]* run.*/\1/p')
	VER_N=$(printf '%s\n' "$line" | sed -n 's/^verify: [0-9][0-9]*\/\([0-9][0-9]*\) run.*/\1/p')
}

# build_repro SRC BIN LOG: nvcc SRC -lcuda as documented; if that link
# fails (no libcuda.so dev symlink), once more against the toolkit's stub
# (the binary then loads the driver's libcuda.so.1 at run time).
build_repro() {
	local t
	t=$(gr_step_timeout 120)
	run_step "$(dirname "$1")" "$3" "$t" "$NVCC" -o "$2" "$1" -lcuda && return 0
	[ "$STEP_RC" -eq 124 ] && return 1
	t=$(gr_step_timeout 120)
	run_step "$(dirname "$1")" "$3" "$t" "$NVCC" -o "$2" "$1" -L"$CUDA/lib64/stubs" -lcuda
}

# shrink_time_limit STEP_TIMEOUT: the --time-limit to give `gpureduce
# shrink` so that it stops reducing, and still writes its best repro, before
# the step's timeout kills it: 20 s under it (less for short steps), >= 1.
shrink_time_limit() {
	local t=$1
	if [ "$t" -gt 60 ]; then echo $((t - 20))
	elif [ "$t" -gt 10 ]; then echo $((t * 2 / 3))
	else echo 1
	fi
}

# ---- numbers and tables -------------------------------------------------

# median X... (numbers), one decimal.
median() {
	[ $# -gt 0 ] || { echo n/a; return; }
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
		END { if (NR == 0) { print "n/a"; exit }
		      if (NR % 2) printf "%.1f\n", v[(NR + 1) / 2]
		      else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B: A / B with two decimals, or n/a.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "" || b == "" || a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b + 0 == 0) print "n/a"
		else printf "%.2f\n", a / b }'
}

# san_summary LOG: "N (kernel)" from a compute-sanitizer memcheck log: N
# its errors (ERROR SUMMARY, every process) less the API errors among
# them ("Program hit CUDA_ERROR_... on CUDA API call": not a memory
# access), which follow as "; A API error(s)"; the kernel of the first
# invalid access
san_summary() {
	local n a k
	n=$(grep -a -o 'ERROR SUMMARY: [0-9]*' "$1" | awk '{ s += $3 } END { print s + 0 }')
	a=$(grep -a -c '^=* *Program hit CUDA_ERROR_[A-Z_]* .* on CUDA API call' "$1")
	k=$(grep -a -A1 'Invalid __global__' "$1" | sed -n 's/^=* *at \([A-Za-z_0-9]*\).*/\1/p' | head -n 1)
	[ "$a" -gt "$n" ] && a=$n
	echo "$((n - a))${k:+ ($k)}$([ "$a" -gt 0 ] && echo "; $a API error(s)")"
}

# print_table FILE: rows of '|'-separated cells, the first row the header;
# prints them aligned, with a rule under the header.
print_table() {
	awk -F'|' '
		{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
		  if (NF > nf) nf = NF; rows = NR }
		END {
			for (r = 1; r <= rows; r++) {
				line = ""
				for (i = 1; i <= nf; i++)
					line = line (i < nf ? sprintf("%-" w[i] "s", c[r, i]) " | " : c[r, i])
				print line
				if (r == 1) {
					line = ""
					for (i = 1; i <= nf; i++) {
						s = ""; for (k = 0; k < w[i]; k++) s = s "-"
						line = line s (i < nf ? "-+-" : "")
					}
					print line
				}
			}
		}' "$1"
}
