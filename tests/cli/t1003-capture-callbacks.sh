#!/bin/sh
# t1003-capture-callbacks.sh - the capture library's callbacks, end to end
# without a GPU: `gpureduce capture` runs capture-fakeprog, which loads the
# real libgpureduce-capture.so the way the driver does and delivers a
# scripted series of driver-API and resource callbacks through a fake
# CUPTI/driver (capture-fakecuda, installed as libcupti.so.13 and
# libcuda.so.1 first on LD_LIBRARY_PATH).  capture-dump prints the trace.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_fakes

# --- one run through every kind of call, ending in a fault --------------------
check_exit "capture passes the program's exit code" 3 "$GPUREDUCE" capture -o full.bin -- ./fakeprog full
check_grep "summary line" "^gpureduce: captured 7 launches, 4 allocations, .* (4612 B entered the GPU) -> full.bin; fault: CUDA_ERROR_ILLEGAL_ADDRESS in fill(float\*, int) at launch #6 (exit 3)\$" "$TMP/.out"
check_grep "  ...and, after a fault, what the trace lacks (the notes replay's failures would name)" \
	"^gpureduce: note: the trace lacks what capture could not record, which replay may need: cuMemcpy: host source 0x[0-9a-f]* (64 bytes) is not readable; copy not recorded; unsupported copy form cuMemcpyHtoA_v2: replay will miss these bytes; cuTexObjectCreate: texture and surface objects are not recorded" "$TMP/.out"
check "dump the trace" sh -c "./dump full.bin >full.txt"
D=full.txt
has() { check_grep "$1" "$2" "$D"; }
has "PROCESS first, from /proc/self/cmdline" "^PROCESS pid=[0-9]* argc=2 argv0=./fakeprog cwd=$TMP\$"
n=$(head -1 $D | cut -d' ' -f1); [ "$n" = PROCESS ] && ok "  ...as the first record" || fail "  ...as the first record ($n)"
has "DEVICE from the first context" "^DEVICE name=Fake GPU cc=9.0 driver=13000 toolkit=[0-9]* mem=17179869184 sms=132\$"
n=$(grep -c '^DEVICE' $D); [ "$n" = 1 ] && ok "  ...once, though two contexts were created" || fail "  ...once ($n)"
has "ELF module stored as a blob" "^MODULE id=7 kind=1 size=256 blob=found\$"
has "non-ELF module: kind other" "^MODULE id=8 kind=2 size=100 blob=found\$"
has "cuMemAlloc" "^ALLOC addr=0xd00000000000 size=4000 kind=device name=\$"
if grep -q 0xd0000dead000 $D; then fail "failed cuMemAlloc not recorded"; else ok "failed cuMemAlloc not recorded"; fi
has "cuMemAllocPitch: pitch x height" "^ALLOC addr=0xd00000100000 size=5120 kind=device"
has "cuMemAllocHost: host kind" "^ALLOC addr=0x[0-9a-f]* size=1000 kind=host"
has "cuModuleGetGlobal: named global, size asked for" "^ALLOC addr=0xd00000f00000 size=64 kind=global name=gcounter\$"
n=$(grep -c 'name=gcounter' $D); [ "$n" = 1 ] && ok "  ...recorded once" || fail "  ...recorded once ($n)"
has "cuMemcpyHtoD: the bytes" "^H2D dst=0xd00000000000 src=0x[0-9a-f]* size=4000 stream=0x0 flags=0 datalen=4000 data=00070e151c232a31\$"
has "cuMemcpyAsync host->device: H2D, async" "^H2D dst=0xd00000001000 .* size=100 stream=0x5 flags=1 datalen=100 data=00070e15"
has "cuMemcpyAsync device->device: D2D" "^D2D dst=0xd00000100000 src=0xd00000000000 size=256 stream=0x5 flags=1\$"
has "cuMemcpy device->host: D2H" "^D2H dst=0x[0-9a-f]* src=0xd00000000000 size=16 stream=0x0 flags=0\$"
has "cuMemcpyDtoH" "^D2H .* size=32 "
has "unreadable 'host' source: a note instead of a crash" "^NOTE cuMemcpy: host source 0x[0-9a-f]* (64 bytes) is not readable; copy not recorded\$"
n=$(grep -c '^H2D dst=0xd00000100[0246]00 .* size=64 ' $D); [ "$n" = 4 ] && ok "cuMemcpy2D with pitched rows: one H2D per row" || fail "cuMemcpy2D rows ($n)"
has "  ...with each row's bytes" "^H2D dst=0xd00000100600 .* size=64 .* data=c0c1c2c3c4c5c6c7\$"
has "cuMemcpy2D contiguous: one H2D" "^H2D dst=0xd00000100000 .* size=256 .* datalen=256 data=0001020304050607\$"
n=$(grep -c 'unsupported copy form cuMemcpyHtoA_v2' $D); [ "$n" = 1 ] && ok "unsupported copy: one note for two calls" || fail "unsupported copy note ($n)"
n=$(grep -c 'cuTexObjectCreate: texture and surface objects are not recorded' $D)
[ "$n" = 1 ] && ok "texture object: one note for two calls" || fail "texture object note ($n)"
has "cuMemsetD32Async during stream capture: async+captured" "^MEMSET dst=0xd00000000000 value=0xdeadbeef elem=4 width=1000 height=1 pitch=0 stream=0xca97 flags=3\$"
has "cuMemsetD2D8" "^MEMSET dst=0xd00000100000 value=0x5a elem=1 width=300 height=10 pitch=512 stream=0x0 flags=0\$"
has "launch of a CUfunction: name and layout from cuFunc*" "^LAUNCH seq=0 name=_Z4fillPfi api=1 flags=0 grid=4,1,1 block=256,1,1 shmem=0 stream=0x0 params=0:8,8:4 args=0000000000d00000e8030000 attrs= py=0 frames=0 tid=set\$"
has "launch of a CUkernel (_ptsz): from cuKernel*" "^LAUNCH seq=1 name=_Z5scalePfPKfi api=1 flags=0 grid=8,2,1 block=128,1,1 shmem=64 stream=0x5 params=0:8,8:8,16:4 args=0000000000d000000000100000d00000e8030000 "
has "FUNC_INFO of a CUfunction: its attributes, from cuFuncGetAttribute" "^FUNC_INFO func=0xf001 name=_Z4fillPfi max_threads=256 regs=24 shared=0 const=0 local=0 ptx=90 binary=90\$"
has "FUNC_INFO of a CUkernel: from cuKernelGetAttribute on the context's device" "^FUNC_INFO func=0xe001 name=_Z5scalePfPKfi max_threads=1024 regs=40 "
n=$(grep -c '^FUNC_INFO' $D); [ "$n" = 2 ] && ok "  ...once per handle" || fail "  ...once per handle ($n)"
n=$(grep -m1 -e '^FUNC_INFO func=0xf001' -e '^LAUNCH seq=0 ' $D | cut -d' ' -f1)
[ "$n" = FUNC_INFO ] && ok "  ...before the handle's first launch" || fail "  ...before the handle's first launch ($n)"
has "launch with 'extra': the parameter buffer" "^LAUNCH seq=2 name=_Z4fillPfi .* args=0000000000d000004d00000000000000 "
has "stream capture begins" "^GRAPH_BEGIN stream=0xca97 graph=0x0 exec=0x0\$"
has "  ...ends with its graph" "^GRAPH_END stream=0xca97 graph=0x9a9 exec=0x0\$"
has "  ...is instantiated" "^GRAPH_EXEC stream=0x0 graph=0x9a9 exec=0xe9e\$"
has "  ...and launched" "^GRAPH_LAUNCH stream=0x0 graph=0x0 exec=0xe9e\$"

# --- a fault in a graph launch: which node faulted is replay's to say --------
check_exit "graph fault: the program's exit code" 1 "$GPUREDUCE" capture -o gf.bin -- ./fakeprog graphfault
check_grep "  ...the summary says a kernel of a CUDA graph, not the last plain launch" \
	"fault: CUDA_ERROR_ILLEGAL_ADDRESS in a kernel of a CUDA graph (reported by cuGraphLaunch; replay and shrink name the kernel)" "$TMP/.out"
check "  ...dump" sh -c "./dump gf.bin >gf.txt"
check_grep "  ...the fault record names no kernel" "^FAULT code=700 error=CUDA_ERROR_ILLEGAL_ADDRESS api=cuGraphLaunch .* kernel=\$" gf.txt
has "cuLaunchKernelEx: config, attribute, captured flag" "^LAUNCH seq=3 name=_Z5scalePfPKfi api=2 flags=2 grid=3,1,1 block=64,1,1 shmem=128 stream=0xca97 .* attrs=2:64:01000000 "
has "failed launch: a note" "^NOTE launch #4 (cuLaunchKernel) returned CUDA_ERROR_INVALID_VALUE: it did not run\$"
has "kernel the driver cannot name: a note" "^NOTE kernel ? (handle 0xbad): the driver gave no name"
has "cuFuncSetAttribute" "^FUNC_ATTR kernel=_Z4fillPfi attr=8 value=100000\$"
has "cuMemFree" "^FREE addr=0xd00000100000 kind=device\$"
has "cuMemFreeHost: by host pointer, kind host" "^FREE addr=0x[0-9a-f]* kind=host\$"
if grep -q 'FREE addr=0xd00000777000' $D; then fail "free of unknown memory ignored"; else ok "free of unknown memory ignored"; fi
has "the fault, at the launch that returned it" "^FAULT code=700 error=CUDA_ERROR_ILLEGAL_ADDRESS api=cuLaunchKernel seq=6 at_launch=1 kernel=_Z4fillPfi\$"
n=$(grep -c '^FAULT' $D); [ "$n" = 1 ] && ok "  ...only the first sticky error" || fail "  ...only the first sticky error ($n)"
if grep -q 'INVALID_VALUE.*cuCtxSynchronize\|cuCtxSynchronize.*INVALID_VALUE' $D; then fail "harmless errors are not faults"; else ok "harmless errors are not faults"; fi
n=$(sed -n '/^FAULT/,$p' $D | grep -vc '^FAULT\|^END'); [ "$n" = 0 ] && ok "nothing recorded after the fault" || fail "nothing recorded after the fault ($n)"
has "END from exit(), with the exit code and totals" "^END exit=3 launches=7 allocs=4 h2d=4612\$"
n=$(tail -1 $D | cut -d' ' -f1); [ "$n" = END ] && ok "  ...as the last record" || fail "  ...as the last record ($n)"

# --- concurrency -------------------------------------------------------------
check_exit "8 threads x 500 launches" 0 "$GPUREDUCE" capture -o thr.bin -- ./fakeprog threads 8
check_grep "  ...all counted" "captured 4000 launches" "$TMP/.out"
check "  ...trace reads back" sh -c "./dump thr.bin >thr.txt"
n=$(grep '^LAUNCH' thr.txt | sed 's/.* seq=\([0-9]*\) .*/\1/' | sort -n | uniq | wc -l | tr -d ' ')
[ "$n" = 4000 ] && ok "  ...every seq once" || fail "  ...every seq once ($n)"
if grep -q TRUNCATED thr.txt; then fail "  ...no torn records"; else ok "  ...no torn records"; fi

# --- more than one process ----------------------------------------------------
check_exit "fork and a CUDA subprocess" 0 "$GPUREDUCE" capture -o fx.bin -- ./fakeprog forkexec
check_grep "  ...the subprocess's trace is named" "other CUDA processes wrote $TMP/fx.bin\.[0-9]*\$" "$TMP/.out"
check "  ...parent's trace reads back" sh -c "./dump fx.bin >fx.txt"
n=$(grep -c '^LAUNCH' fx.txt); [ "$n" = 2 ] && ok "  ...forked child wrote nothing into it" || fail "  ...forked child wrote nothing into it ($n launches)"
n=$(grep -c '^END' fx.txt); [ "$n" = 1 ] && ok "  ...one END" || fail "  ...one END ($n)"
sub=$(ls fx.bin.* 2>/dev/null | head -1)
[ -n "$sub" ] && ./dump "$sub" >sub.txt 2>&1 && grep -q '^END exit=0 launches=1 ' sub.txt &&
	ok "  ...the subprocess has its own complete trace" || fail "  ...the subprocess has its own complete trace"

# --- CUPTI held by another tool -------------------------------------------------
check_exit "CUPTI busy: exit 4" 4 env FAKE_CUPTI_BUSY=1 "$GPUREDUCE" capture -o busy.bin -- ./fakeprog full
check_grep "  ...naming the tool that holds it" "CUPTI is already in use by another tool (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: Nsight Systems)" "$TMP/.out"
[ ! -e busy.bin ] && ok "  ...no trace" || fail "  ...no trace"
check_exit "CUPTI busy, --allow-no-capture: the program runs" 3 env FAKE_CUPTI_BUSY=1 "$GPUREDUCE" capture --allow-no-capture -o busy.bin -- ./fakeprog full
check_grep "  ...uncaptured" "ran without capture" "$TMP/.out"

# --- trace not writable from inside the program ----------------------------------
check_exit "library cannot create the trace: exits 86 at init" 86 env CUDA_INJECTION64_PATH="$LIB" \
	GPUREDUCE_TRACE="$TMP/no/such/dir/t.bin" GPUREDUCE_STATUS="$TMP/st" ./fakeprog full
check_grep "  ...saying so on stderr" "^gpureduce: $TMP/no/such/dir/t.bin: cannot create trace: No such file or directory; not running the program half-captured\$" "$TMP/.out"
check_grep "  ...and in the status file" "^trace-error $TMP/no/such/dir/t.bin: cannot create trace" "$TMP/st"
check_exit "  ...GPUREDUCE_ALLOW_NO_CAPTURE=1: runs on" 3 env CUDA_INJECTION64_PATH="$LIB" \
	GPUREDUCE_TRACE="$TMP/no/such/dir/t.bin" GPUREDUCE_ALLOW_NO_CAPTURE=1 ./fakeprog full

# --- outside `gpureduce capture` (no GPUREDUCE_TRACE): the library stays out of the way
check_exit "no GPUREDUCE_TRACE: nothing happens" 3 env -u GPUREDUCE_TRACE CUDA_INJECTION64_PATH="$LIB" ./fakeprog full
[ -z "$(ls "$TMP" | grep -e '^trace')" ] && ok "  ...no file written" || fail "  ...no file written"

# --- a module unload: the handle's FUNC_INFO is written again --------------------
check "capture the unload scenario" "$GPUREDUCE" capture -o un.bin -- ./fakeprog unload
check "dump it" sh -c "./dump un.bin >un.txt"
n=$(grep -e '^FUNC_INFO' -e '^LAUNCH' un.txt | cut -d' ' -f1 | tr '\n' ' ')
[ "$n" = "FUNC_INFO LAUNCH LAUNCH FUNC_INFO LAUNCH " ] && ok "  ...once before the first launch, again after the unload" ||
	fail "  ...once before the first launch, again after the unload ($n)"

# --- mapped memory: pieces mapped one by one, unmapped by one call --------
check "vmm pieces: capture" "$GPUREDUCE" capture -o vm.bin -- ./fakeprog vmmunmap
check "  ...dump (the decoder joins the pieces mapped side by side)" sh -c "./dump vm.bin >vm.txt"
check_grep "  ...the three pieces as one allocation" "^ALLOC addr=0xd00010000000 size=6291456 kind=vmm" vm.txt
check_grep "  ...one cuMemUnmap of the three frees it (a FREE for every piece it unmapped, the last one the group's)" \
	"^FREE addr=0xd00010000000 kind=vmm" vm.txt
check_grep "  ...the piece mapped and unmapped alone" "^FREE addr=0xd00011000000 kind=vmm" vm.txt
check "  ...show" sh -c "$GPUREDUCE show vm.bin >vm.yaml"
check_grep "  ...says two pieces were joined" "vmm_pieces_joined: 2" vm.yaml
check_grep "  ...a piece past its reserved range's start is flagged as continuing it (0x1)" \
	"^ALLOC addr=0xd00012200000 size=2097152 kind=vmm name= flags=0x1\$" vm.txt
check_grep "  ...a piece at its range's start is not" "^ALLOC addr=0xd00011000000 size=2097152 kind=vmm name=\$" vm.txt
check_grep "  ...nor one mapped after its range was freed" "^ALLOC addr=0xd00010200000 size=2097152 kind=vmm name=\$" vm.txt

finish
