#!/bin/sh
# t1010-capture-subscribed.sh - capture subscribes to exactly the driver
# callbacks it handles (issue 26: a callback on every driver call cost
# more than a second on the H200's host-fed loop).  The real
# libgpureduce-capture.so runs under the fake CUPTI (capture-fakecuda),
# which records what it enables; capture-fakeprog prints that.  The
# expected set is read from the dispatch code itself: every `case CB(x)`
# and MSET_1D/MSET_2D(x, y, ...) in capture/*.c (the switches that act on a
# callback), plus the fault watch (the sync and query calls a fault may
# first surface in).  Fails when a handled API is not subscribed (its
# records would silently stop) or an unhandled one is (cost for nothing).
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_fakes

HDR=$CUDA/include/cupti_driver_cbid.h
[ -f "$HDR" ] || HDR=$CUDA/extras/CUPTI/include/cupti_driver_cbid.h
check "the CUPTI header naming the driver callbacks" test -f "$HDR"
# name -> id, from the header
sed -n 's/^ *CUPTI_DRIVER_TRACE_CBID_\([A-Za-z0-9_]*\) *= *\([0-9]*\).*/\1 \2/p' "$HDR" |
	grep -v '^SIZE \|^FORCE_INT ' | sort -k1,1 >ids.txt
n=$(wc -l <ids.txt | tr -d ' ')
[ "$n" -gt 500 ] && ok "  ...$n driver callback ids" || fail "  ...driver callback ids ($n)"

# what capture's dispatch handles (cbids.c itself is the list under test)
for f in "$SRCDIR"/capture/*.c; do
	[ "$(basename "$f")" = cbids.c ] && continue
	grep -o 'case CB([A-Za-z0-9_]*)' "$f" | sed 's/case CB(\(.*\))/\1/'
	grep -o 'MSET_[12]D([A-Za-z0-9_]*, *[A-Za-z0-9_]*' "$f" | sed 's/MSET_[12]D(\([A-Za-z0-9_]*\), *\([A-Za-z0-9_]*\)/\1\n\2/'
done | grep -v '^cbv$\|^cbp$' | sort -u >handled.txt
# the fault watch: no case acts on them, on_result reads their result
for w in cuCtxSynchronize cuCtxSynchronize_v2 cuStreamSynchronize cuStreamSynchronize_ptsz \
	cuStreamQuery cuStreamQuery_ptsz cuEventSynchronize cuEventQuery; do
	echo "$w"
done | sort >watch.txt
n=$(wc -l <handled.txt | tr -d ' ')
[ "$n" -gt 100 ] && ok "the dispatch code handles $n driver APIs" || fail "the dispatch code's APIs ($n)"
grep -q '^cuLaunchKernelEx$' handled.txt && grep -q '^cuMemsetD2D32Async_ptsz$' handled.txt &&
	grep -q '^cuTensorMapEncodeTiled$' handled.txt && grep -q '^cuMemMap$' handled.txt &&
	ok "  ...launches, memsets, tensor maps and VMM maps among them" || fail "  ...launches, memsets, tensor maps, VMM maps"
sort -u handled.txt watch.txt | join - ids.txt | awk '{ print $2 }' | sort -n >want.txt
n=$(sort -u handled.txt watch.txt | join -v1 - ids.txt | tr '\n' ' ')
[ -z "$n" ] && ok "  ...each a callback id the header knows" || fail "  ...ids the header does not know: $n"

# what the library enabled
check_exit "capture a program that lists what was enabled" 0 "$GPUREDUCE" capture -o s.bin -- ./fakeprog subscribed
sed -n 's/^driver \([0-9]*\)$/\1/p' "$TMP/.out" | sort -n >got.txt
sed -n 's/^resource \([0-9]*\)$/\1/p' "$TMP/.out" | tr '\n' ' ' >res.txt
name_of() { awk '{ print $2, $1 }' ids.txt | sort -k1,1 | join - "$1" 2>/dev/null | awk '{ print $2 }' | tr '\n' ' '; }
sort -k1,1 want.txt >w.s; sort -k1,1 got.txt >g.s
comm -23 w.s g.s >missing.txt
comm -13 w.s g.s >extra.txt
[ ! -s missing.txt ] && ok "every API capture handles is subscribed" ||
	fail "every API capture handles is subscribed (not: $(name_of missing.txt))"
[ ! -s extra.txt ] && ok "no API capture ignores is subscribed" ||
	fail "no API capture ignores is subscribed (also: $(name_of extra.txt))"
n=$(wc -l <got.txt | tr -d ' ')
[ "$n" -gt 100 ] && [ "$n" -lt 250 ] && ok "  ...$n of $(wc -l <ids.txt | tr -d ' ') driver callbacks" ||
	fail "  ...driver callbacks subscribed ($n)"
id() { awk -v n="$1" '$1 == n { print $2 }' ids.txt; }
grep -qx "$(id cuLaunchKernel)" got.txt && grep -qx "$(id cuStreamSynchronize)" got.txt &&
	! grep -qx "$(id cuCtxGetCurrent)" got.txt && ! grep -qx "$(id cuStreamGetCaptureInfo_v2)" got.txt &&
	ok "  ...cuLaunchKernel and cuStreamSynchronize in, cuCtxGetCurrent and cuStreamGetCaptureInfo_v2 out" ||
	fail "  ...cuLaunchKernel, cuStreamSynchronize in; cuCtxGetCurrent, cuStreamGetCaptureInfo_v2 out"
[ "$(cat res.txt)" = "1 6 7 " ] && ok "resource callbacks: context created, module loaded, module unloading" ||
	fail "resource callbacks ($(cat res.txt))"
check "  ...nothing noted as refused" sh -c "./dump s.bin >s.txt && ! grep -q 'CUPTI refused' s.txt"

# the whole domain, when asked (side-by-side measurements)
check_exit "GPUREDUCE_CAPTURE_ALL_CALLBACKS=1" 0 env GPUREDUCE_CAPTURE_ALL_CALLBACKS=1 \
	"$GPUREDUCE" capture -o a.bin -- ./fakeprog subscribed
n=$(grep -c '^driver ' "$TMP/.out")
[ "$n" -ge "$(wc -l <ids.txt | tr -d ' ')" ] && ok "  ...every driver callback ($n)" || fail "  ...every driver callback ($n)"

# the measurement-only ablations (bench-hostfed's BENCH_HOSTFED_ABLATE ways)
check_exit "GPUREDUCE_CAPTURE_ABLATE=dispatch" 3 env GPUREDUCE_CAPTURE_ABLATE=dispatch \
	"$GPUREDUCE" capture -o ab.bin -- ./fakeprog full
check "  ...dump" sh -c "./dump ab.bin >ab.txt"
! grep -q '^LAUNCH\|^H2D\|^ALLOC' ab.txt && grep -q '^MODULE ' ab.txt &&
	ok "  ...driver callbacks return at once: modules only, no launch, copy or allocation" ||
	fail "  ...modules only ($(cut -d' ' -f1 ab.txt | sort | uniq -c | tr '\n' ' '))"
check_exit "GPUREDUCE_CAPTURE_ABLATE=nobytes" 3 env GPUREDUCE_CAPTURE_ABLATE=nobytes \
	"$GPUREDUCE" capture -o nb.bin -- ./fakeprog full
check "  ...dump" sh -c "./dump nb.bin >nb.txt"
n=$(grep -c '^LAUNCH' nb.txt)
grep -q '^H2D dst=0xd00000000000 .* size=4000 .*blob 0000000000000000 is referenced but not stored' nb.txt && [ "$n" -ge 7 ] &&
	ok "  ...copies in recorded without their bytes, launches as usual ($n)" ||
	fail "  ...copies without bytes ($(grep '^H2D' nb.txt | head -n 1); $n launches)"
check_exit "an unknown ablation is no ablation" 3 env GPUREDUCE_CAPTURE_ABLATE=bogus \
	"$GPUREDUCE" capture -o bg.bin -- ./fakeprog full
check "  ...dump" sh -c "./dump bg.bin >bg.txt"
check_grep "  ...the bytes are there" '^H2D dst=0xd00000000000 .* size=4000 .* datalen=4000 ' bg.txt

# the fault watch at work: a copy's fault surfacing in cuStreamSynchronize
check_exit "a fault first returned by cuStreamSynchronize" 1 "$GPUREDUCE" capture -o w.bin -- ./fakeprog syncfault
check "  ...dump" sh -c "./dump w.bin >w.txt"
check_grep "  ...is the trace's FAULT, after the last launch" \
	"^FAULT code=700 error=CUDA_ERROR_ILLEGAL_ADDRESS api=cuStreamSynchronize seq=0 at_launch=0 kernel=_Z4fillPfi\$" w.txt

finish
