#!/bin/sh
# t1000-capture-cli.sh - `gpureduce capture` as a command, without a GPU:
# options, exit codes, the environment the program gets, the summary line,
# and how the capture library's status file is acted on.  "CUDA programs"
# here are shell scripts that write a trace with $MKTRACE where the capture
# library would ($GPUREDUCE_TRACE) and a line into $GPUREDUCE_STATUS.
. tests/cli/test-lib.sh

LIB=$BUILD/libgpureduce-capture.so
[ -f "$LIB" ] || LIB=$TMP/fake-lib.so   # a build without CUPTI: any file will do
[ -f "$LIB" ] || : >"$LIB"
GPUREDUCE_CAPTURE_LIB=$LIB
export GPUREDUCE_CAPTURE_LIB
unset CUDA_INJECTION64_PATH
cd "$TMP" || exit 1

# --- usage ---------------------------------------------------------------
check_exit "no command: usage error" 2 "$GPUREDUCE" capture
check_grep "  ...and the usage text" "usage: gpureduce capture" "$TMP/.out"
check_exit "only options: usage error" 2 "$GPUREDUCE" capture -o x.bin --
check_exit "--help exits 0" 0 "$GPUREDUCE" capture --help
check_grep "  ...and prints usage" "allow-no-capture" "$TMP/.out"
check_exit "unknown option: usage error" 2 "$GPUREDUCE" capture --frobnicate true
check_grep "  ...naming it" "unknown option '--frobnicate'" "$TMP/.out"
check_exit "-o without a file: usage error" 2 "$GPUREDUCE" capture -o

# --- starting the program ---------------------------------------------------
check_exit "missing program: 127 like a shell" 127 "$GPUREDUCE" capture -- /no/such/prog
check_grep "  ...with one line naming it" "cannot run /no/such/prog" "$TMP/.out"
check_exit "exit code of a non-CUDA program passes through" 1 "$GPUREDUCE" capture -- /bin/false
check_grep "  ...and says nothing was captured" "/bin/false made no CUDA calls" "$TMP/.out"
check_exit "a program that made no CUDA call and exited 0: exit 4, nothing captured" 4 "$GPUREDUCE" capture true
check_grep "  ...saying so in one line" "^gpureduce: true made no CUDA calls (or the capture library was not loaded); nothing captured$" "$TMP/.out"
check_exit "  ...but with --allow-no-capture its exit 0 passes through" 0 "$GPUREDUCE" capture --allow-no-capture true
check_exit "options after the command belong to it" 3 "$GPUREDUCE" capture sh -c 'exit 3' -o x
check_exit "death by signal is 128+sig" 137 "$GPUREDUCE" capture -- sh -c 'kill -9 $$'
out=$(echo piped | "$GPUREDUCE" capture -o "$TMP/p.bin" -- cat 2>/dev/null)
[ "$out" = piped ] && ok "stdin and stdout pass through" || fail "stdin and stdout pass through (got '$out')"

# --- environment and library lookup -----------------------------------------
cat >envdump.sh <<'EOS'
#!/bin/sh
env | grep -E '^(CUDA_INJECTION64_PATH|CUDA_LAUNCH_BLOCKING|GPUREDUCE_[A-Z_]*)=' | sort >"$1"
EOS
chmod +x envdump.sh
# (these programs make no CUDA call: capture runs them, then exits 4)
check_exit "program runs" 4 "$GPUREDUCE" capture -o rel.bin ./envdump.sh env.txt
LIBREAL=$(cd "$(dirname "$LIB")" && pwd -P)/$(basename "$LIB")
check_grep "CUDA_INJECTION64_PATH names the library" "^CUDA_INJECTION64_PATH=$LIBREAL\$" env.txt
check_grep "by default the library waits for launches: CUDA_LAUNCH_BLOCKING=0" "^CUDA_LAUNCH_BLOCKING=0\$" env.txt
check_grep "  ...and GPUREDUCE_BLOCKING=library" "^GPUREDUCE_BLOCKING=library\$" env.txt
check_exit "--blocking=driver" 4 "$GPUREDUCE" capture --blocking=driver -o rel.bin ./envdump.sh envd.txt
check_grep "  ...CUDA_LAUNCH_BLOCKING=1" "^CUDA_LAUNCH_BLOCKING=1\$" envd.txt
if grep -q '^GPUREDUCE_BLOCKING=' envd.txt; then fail "  ...and no GPUREDUCE_BLOCKING"; else ok "  ...and no GPUREDUCE_BLOCKING"; fi
GPUREDUCE_BLOCKING=driver "$GPUREDUCE" capture -o rel.bin ./envdump.sh enve.txt 2>/dev/null
check_grep "GPUREDUCE_BLOCKING=driver in capture's environment: CUDA_LAUNCH_BLOCKING=1" "^CUDA_LAUNCH_BLOCKING=1\$" enve.txt
GPUREDUCE_BLOCKING=driver "$GPUREDUCE" capture --blocking=library -o rel.bin ./envdump.sh envf.txt 2>/dev/null
check_grep "  ...--blocking=library wins over it" "^CUDA_LAUNCH_BLOCKING=0\$" envf.txt
check_exit "--blocking=sometimes is refused" 2 "$GPUREDUCE" capture --blocking=sometimes -o rel.bin ./envdump.sh envg.txt
check_grep "GPUREDUCE_TRACE is the absolute -o path" "^GPUREDUCE_TRACE=$TMP/\.gpureduce-capture-[^/]*/rel.bin\$" env.txt
check_grep "GPUREDUCE_STATUS is set" "^GPUREDUCE_STATUS=/" env.txt
if grep -q GPUREDUCE_ALLOW_NO_CAPTURE env.txt; then fail "no GPUREDUCE_ALLOW_NO_CAPTURE by default"; else ok "no GPUREDUCE_ALLOW_NO_CAPTURE by default"; fi
check "--allow-no-capture" "$GPUREDUCE" capture --allow-no-capture -o rel.bin ./envdump.sh env2.txt
check_grep "  ...sets GPUREDUCE_ALLOW_NO_CAPTURE=1" "^GPUREDUCE_ALLOW_NO_CAPTURE=1\$" env2.txt
check_exit "default output is trace.bin" 4 "$GPUREDUCE" capture ./envdump.sh env3.txt
check_grep "  ...in the current directory" "^GPUREDUCE_TRACE=$TMP/\.gpureduce-capture-[^/]*/trace.bin\$" env3.txt
check_exit "--output=FILE" 4 "$GPUREDUCE" capture --output=o2.bin ./envdump.sh env4.txt
check_grep "  ...is used" "^GPUREDUCE_TRACE=$TMP/\.gpureduce-capture-[^/]*/o2.bin\$" env4.txt
status_file=$(sed -n 's/^GPUREDUCE_STATUS=//p' env.txt)
[ -n "$status_file" ] && [ ! -e "$status_file" ] && ok "status file removed afterwards" || fail "status file removed afterwards ($status_file)"

check_exit "CUDA_INJECTION64_PATH of another tool: refused" 4 env CUDA_INJECTION64_PATH=/opt/nsys/libinject.so "$GPUREDUCE" capture true
check_grep "  ...saying why" "CUDA_INJECTION64_PATH is already set" "$TMP/.out"
check_exit "CUDA_INJECTION64_PATH already our library: fine" 4 env CUDA_INJECTION64_PATH="$LIB" "$GPUREDUCE" capture true
check_grep "  ...(run, not refused)" "made no CUDA calls" "$TMP/.out"
check_exit "GPUREDUCE_CAPTURE_LIB missing: environment error" 4 env GPUREDUCE_CAPTURE_LIB=/no/lib.so "$GPUREDUCE" capture true
check_grep "  ...naming it" "/no/lib.so" "$TMP/.out"

# installed layout: bin/gpureduce finds lib/gpureduce/libgpureduce-capture.so
mkdir -p inst/bin inst/lib/gpureduce lone
cp "$GPUREDUCE" inst/bin/ && cp "$GPUREDUCE" lone/ && cp "$LIB" inst/lib/gpureduce/libgpureduce-capture.so
check_exit "installed layout finds its library" 4 env -u GPUREDUCE_CAPTURE_LIB inst/bin/gpureduce capture -o i.bin ./envdump.sh env5.txt
check_grep "  ...under PREFIX/lib/gpureduce" "^CUDA_INJECTION64_PATH=$TMP/inst/lib/gpureduce/libgpureduce-capture.so\$" env5.txt
check_exit "no library anywhere: environment error" 4 env -u GPUREDUCE_CAPTURE_LIB lone/gpureduce capture true
check_grep "  ...with a hint" "cannot find libgpureduce-capture.so" "$TMP/.out"

# --- output file ---------------------------------------------------------------
check_exit "unwritable output directory: input error" 3 "$GPUREDUCE" capture -o /no/such/dir/t.bin true
check_grep "  ...naming the directory" "/no/such/dir" "$TMP/.out"
mkdir adir
check_exit "output is a directory: input error" 3 "$GPUREDUCE" capture -o adir true
echo stale >old.bin
check_exit "an output that is not a trace is refused" 2 "$GPUREDUCE" capture -o old.bin true
check_grep "  ...saying --force would replace it" "not a gpureduce trace.*--force" "$TMP/.out"
check_exit "  ...with --force the program runs" 4 "$GPUREDUCE" capture --force -o old.bin true
[ "$(cat old.bin)" = stale ] && ok "  ...and nothing captured leaves the old file as it was" ||
	fail "  ...and nothing captured leaves the old file as it was"

# --- summaries of what the library wrote --------------------------------------
# fake.sh SCRIPT EXIT [STATUS-LINE]: write the trace from SCRIPT, exit EXIT
cat >fake.sh <<'EOS'
#!/bin/sh
"$MKTRACE" "$GPUREDUCE_TRACE" <"$1" || exit 99
echo "${3:-ok $$ $GPUREDUCE_TRACE}" >>"$GPUREDUCE_STATUS"
exit "$2"
EOS
chmod +x fake.sh
cat >fault.s <<'EOS'
process 1 /tmp prog
device "NVIDIA H200"
alloc 0x7f0000000000 4000
alloc 0x7f0000100000 8192
alloc 0x7f0000200000 1000 global gvar
h2d 0x7f0000000000 4000 rand:5
h2d 0x7f0000100000 8192 seq
launch _Z4fillPfi 4 256 ptr:0x7f0000000000 i32:1000
launch _Z5scalePfPKfii 4 256 ptr:0x7f0000000000 ptr:0x7f0000100000 i32:1000 i32:2
launch _Z5scalePfPKfii 4 256 ptr:0x7f0000000000 ptr:0x7f0000100000 i32:1000 i32:3
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 2 at_launch=1
EOS
check_exit "faulting program's exit code passes through" 1 "$GPUREDUCE" capture -o f.bin ./fake.sh fault.s 1
check_grep "summary: counts" "^gpureduce: captured 3 launches, 3 allocations, .* (11.9 KiB entered the GPU) -> f.bin; " "$TMP/.out"
check_grep "summary: the fault, kernel and launch" "; fault: CUDA_ERROR_ILLEGAL_ADDRESS in scale(float\*, float const\*, int, int) at launch #2 (exit 1)" "$TMP/.out"
check_grep "summary: no end record noticed" "no end record" "$TMP/.out"
n=$(grep -c '^gpureduce:' "$TMP/.out")
[ "$n" = 1 ] && ok "exactly one summary line" || fail "exactly one summary line (got $n)"
[ -s f.bin ] && ok "trace kept" || fail "trace kept"

cat >late.s <<'EOS'
process 1 /tmp prog
launch _Z1kv 1 1
launch _Z1jv 1 1
fault 717 CUDA_ERROR_INVALID_ADDRESS_SPACE cuCtxSynchronize 1 at_launch=0
EOS
check_exit "fault reported by a later call" 1 "$GPUREDUCE" capture -o l.bin ./fake.sh late.s 1
check_grep "  ...names that call" "fault: CUDA_ERROR_INVALID_ADDRESS_SPACE in j() at launch #1 (reported by cuCtxSynchronize)" "$TMP/.out"

cat >clean.s <<'EOS'
process 1 /tmp prog
alloc 0x7f0000000000 16
launch _Z1kv 1 1
end 0
EOS
check_exit "clean run" 0 "$GPUREDUCE" capture -o c.bin ./fake.sh clean.s 0
check_grep "  ...one launch, no fault, exit 0" "captured 1 launch, 1 allocation, .*; no fault (exit 0)\$" "$TMP/.out"
check_exit "clean trace, program exits 5 anyway" 5 "$GPUREDUCE" capture -o c.bin ./fake.sh clean.s 5
check_grep "  ...reported" "no fault (exit 5)" "$TMP/.out"

{ cat clean.s; echo "truncate -3"; } >trunc.s
check_exit "truncated trace (died mid-write)" 0 "$GPUREDUCE" capture -o t.bin ./fake.sh trunc.s 0
check_grep "  ...says so" "; trace truncated: " "$TMP/.out"
[ -s t.bin ] && ok "  ...and keeps the file" || fail "  ...and keeps the file"

: >empty.s
check_exit "header-only trace: program's exit code" 6 "$GPUREDUCE" capture -o e.bin ./fake.sh empty.s 6
check_grep "  ...says it was empty" "trace was empty" "$TMP/.out"
[ ! -e e.bin ] && ok "  ...and removes it" || fail "  ...and removes it"

printf 'process 1 /tmp prog\nraw 5 00\n' >corrupt.s
check_exit "unreadable trace: program's exit code" 0 "$GPUREDUCE" capture -o bad.bin ./fake.sh corrupt.s 0
check_grep "  ...and the reader's error" "bad.bin" "$TMP/.out"
[ -e bad.bin ] && ok "  ...file kept for inspection" || fail "  ...file kept for inspection"

cat >two.sh <<'EOS'
#!/bin/sh
"$MKTRACE" "$GPUREDUCE_TRACE" <clean.s
"$MKTRACE" "$GPUREDUCE_TRACE.4242" <clean.s
echo "ok $$ $GPUREDUCE_TRACE" >>"$GPUREDUCE_STATUS"
echo "ok 4242 $GPUREDUCE_TRACE.4242" >>"$GPUREDUCE_STATUS"
EOS
chmod +x two.sh
check "a second CUDA process" "$GPUREDUCE" capture -o two.bin ./two.sh
check_grep "  ...its trace is named" "other CUDA processes wrote $TMP/two.bin.4242" "$TMP/.out"

# --- the library could not capture ---------------------------------------------
cat >busy.sh <<'EOS'
#!/bin/sh
echo "cupti-busy CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" >>"$GPUREDUCE_STATUS"
[ "$GPUREDUCE_ALLOW_NO_CAPTURE" = 1 ] && exit 0
exit 86
EOS
chmod +x busy.sh
check_exit "CUPTI taken by another tool: environment error" 4 "$GPUREDUCE" capture -o b.bin ./busy.sh
check_grep "  ...one line that says so" "CUPTI is already in use by another tool (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)" "$TMP/.out"
check_exit "--allow-no-capture: the program's code instead" 0 "$GPUREDUCE" capture --allow-no-capture -o b.bin ./busy.sh
check_grep "  ...and a note it ran uncaptured" "ran without capture" "$TMP/.out"
cat >terr.sh <<'EOS'
#!/bin/sh
echo "trace-error /x/t.bin: cannot create trace: Permission denied" >>"$GPUREDUCE_STATUS"
exit 86
EOS
chmod +x terr.sh
check_exit "library could not write the trace: environment error" 4 "$GPUREDUCE" capture ./terr.sh
check_grep "  ...with its reason" "could not write the trace: /x/t.bin: cannot create trace: Permission denied" "$TMP/.out"

finish
