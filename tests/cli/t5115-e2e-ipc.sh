#!/bin/sh
# t5115-e2e-ipc.sh - device memory another process owns and writes,
# reached through CUDA IPC (cuIpcOpenMemHandle), that a kernel reads
# through a pointer argument (capture/managed.c, cap_mm_peer): ipc-prog
# on the driver double, its importer captured for real, its exporter a
# second process that refills the shared index table between the
# importer's launches and writes a wild index before the last one.
# Checked: the buffer is recorded as an allocation named by the call; its
# bytes are read back and written before each launch that points into it
# (and before the device-to-device copy that reads it), not before the
# launches that do not; replay faults in gather at the program's launch;
# shrink reduces it to one launch and the repro built against the double
# faults.  Then the same table as device memory another API owns and
# writes (ipc-prog extmem: cuExternalMemoryGetMappedBuffer once; gfx:
# cuGraphicsResourceGetMappedPointer and cuGraphicsUnmapResources around
# every step), with no callback for its allocation or its writes; and
# with no call at all (ipc-prog hidden), found at the launch that points
# into it (capture/foreign.c).
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_on_double $H/ipc-prog.c
PATH=/usr/bin:/bin     # no compute-sanitizer
export PATH
cd "$TMP" || exit 1

# the double shares IPC memory through POSIX shared memory (/dev/shm)
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	check_exit "capture the program (it faults: exit 3)" 3 "$GPUREDUCE" capture --no-checkpoint -o p.bin -- \
		./prog $DBL/kernels.cubin
	n=$(ls p.bin* | wc -l | tr -d ' ')
	[ "$n" = 1 ] && ok "  ...one trace: the exporter loads no capture" || fail "  ...one trace: the exporter loads no capture ($(ls p.bin*))"
	"$GPUREDUCE" show p.bin >p.yaml
	check_grep "the IPC buffer recorded, named by its call" "name: cuIpcOpenMemHandle" p.yaml
	check_grep "a note at gather's first launch (argument byte 16)" \
		"kernel _Z6gatherPfPKfPKxi (launch #1) takes a pointer to device memory another process or API writes at 0x[0-9a-f]* (8000 bytes; argument byte 16): its bytes are read back" p.yaml
	n=$(grep -c "device memory another process or API writes" p.yaml)
	[ "$n" = 1 ] && ok "  ...one note" || fail "  ...one note ($n)"

	# the content records (flags 0x8), in order, as "event type": one before
	# each gather through P (steps 0, 1, 3, 4) and one before the copy at
	# step 2; none before add_one
	"$GPUREDUCE" show p.bin | awk '
		/^- event:/ { ev = $3 }
		/^  type: / { t = $2; if (t == "LAUNCH") print ev, "LAUNCH" }
		/^  kernel: / && t == "LAUNCH" { print ev, "name", $2 }
		/^  flags: 0x8$/ && t == "MEMCPY_H2D" { print ev, "PEER" }
		/^  type: MEMCPY_D2D/ { print ev, "D2D" }' >seq.txt
	peers=$(grep -c ' PEER$' seq.txt)
	[ "$peers" = 5 ] && ok "five content records of the shared table" || fail "five content records of the shared table ($peers; $(tr '\n' ' ' <seq.txt))"
	# each PEER record is followed by a gather launch or the D2D copy, never add_one
	awk '$2 == "PEER" { want = 1; next }
		want && $2 == "LAUNCH" { next }
		want && $2 == "name" { print $3; want = 0; next }
		want && $2 == "D2D" { print "D2D"; want = 0 }' seq.txt | sort | uniq -c | awk '{ print $2 ":" $1 }' >after.txt
	check_grep "  ...four right before a gather through it" "^_Z6gatherPfPKfPKxi:4\$" after.txt
	check_grep "  ...one right before the device-to-device copy from it" "^D2D:1\$" after.txt
	n=$(wc -l <after.txt | tr -d ' ')
	[ "$n" = 2 ] && ok "  ...and none before add_one" || fail "  ...and none before add_one ($(tr '\n' ' ' <after.txt))"

	gather_fault_shrinks p.bin
else
	echo "skip: the IPC case: no writable /dev/shm for the double's shared memory"
fi

# other_api MODE CALL ALLOCS FREES: capture ipc-prog MODE, whose table
# comes in through CALL (ALLOCS times, FREES unmaps); the same checks
other_api() {
	mkdir -p "$1" && cd "$1" || exit 1
	check_exit "$1: capture (it faults: exit 3)" 3 "$GPUREDUCE" capture --no-checkpoint -o p.bin -- \
		../prog $DBL/kernels.cubin "$1"
	"$GPUREDUCE" show p.bin >p.yaml
	n=$(grep -c "name: $2\$" p.yaml)
	[ "$n" = "$3" ] && ok "  ...the table recorded $3 time(s), named by $2" || fail "  ...the table recorded $3 time(s), named by $2 ($n)"
	n=$(grep -c "^  type: FREE" p.yaml)
	[ "$n" = "$4" ] && ok "  ...freed $4 time(s)" || fail "  ...freed $4 time(s) ($n)"
	n=$("$GPUREDUCE" show p.bin | grep -c '^  flags: 0x8$')
	[ "$n" = 5 ] && ok "  ...its content before each gather or copy that reads it (5)" || \
		fail "  ...its content before each gather or copy that reads it (5, got $n)"
	gather_fault_shrinks p.bin "  ..."
	cd "$TMP" || exit 1
}
other_api extmem cuExternalMemoryGetMappedBuffer 1 0
other_api gfx cuGraphicsResourceGetMappedPointer 5 4
# no call at all: found at gather's first launch (capture/foreign.c)
other_api hidden "found at a launch" 1 0
check_grep "  ...with a note naming the launch and the argument byte" \
	"kernel _Z6gatherPfPKfPKxi (launch #1) takes a pointer to device memory at 0x[0-9a-f]* (8000 bytes; argument byte 16) that no recorded call allocated" hidden/p.yaml
n=$(grep -c 'device memory' hidden/p.yaml)
[ "$n" = 1 ] && ok "  ...one note" || fail "  ...one note ($n)"
GPUREDUCE_FOREIGN=0 "$GPUREDUCE" capture --no-checkpoint -o off.bin -- ./prog $DBL/kernels.cubin hidden >/dev/null 2>&1
"$GPUREDUCE" show off.bin >off.yaml
check_no_grep "  ...not with GPUREDUCE_FOREIGN=0" "found at a launch" off.yaml

finish
