/*
 * cbids.c - the one list of driver-API callbacks capture subscribes to
 * (issue 26).  Subscribing to the whole driver domain cost a callback on
 * every driver call the program makes (a PyTorch step makes about 15 per
 * kernel launch: context, stream and attribute queries), most of which
 * capture ignores; on the H200's host-fed ResNet loop that was 3.67 million
 * callbacks.  inject.c enables exactly the ids below instead.
 *
 * Each group names the code that handles it.  An id is here because a
 * switch in capture/ has a case for it (the launch, unload, attribute
 * and "unsupported" dispatch of inject.c, and copies.c's, allocs.c's,
 * graphapi.c's and tensormap.c's), or, for the last group, because it may be
 * the first call to return a fault that no launch returned (a copy or
 * graph that faulted, or a program run without blocking launches):
 * on_result turns the first sticky error of any subscribed call into the
 * FAULT record.  tests/cli/t1010-capture-subscribed.sh fails when a
 * `case CB(...)` in capture/ is missing here, or an id here is handled by
 * no case and is not in the fault watch.
 *
 * GPUREDUCE_CAPTURE_ALL_CALLBACKS=1 subscribes to the whole domain as
 * before (for side-by-side measurements; inject.c).
 */
#include <cupti.h>

#include "../common/util.h"
#include "cbids.h"

#define CB(name) CUPTI_DRIVER_TRACE_CBID_##name

static const CUpti_CallbackId handled[] = {
	/* launches: inject.c get_launch, is_launch (enter: the LAUNCH record;
	 * exit: fold.c, the fault of the launch) */
	CB(cuLaunchKernel), CB(cuLaunchKernel_ptsz),
	CB(cuLaunchKernelEx), CB(cuLaunchKernelEx_ptsz),
	CB(cuLaunchCooperativeKernel), CB(cuLaunchCooperativeKernel_ptsz),

	/* copies: copies.c cap_copy_enter */
	CB(cuMemcpyHtoD_v2), CB(cuMemcpyHtoD_v2_ptds),
	CB(cuMemcpyHtoDAsync_v2), CB(cuMemcpyHtoDAsync_v2_ptsz),
	CB(cuMemcpyDtoD_v2), CB(cuMemcpyDtoD_v2_ptds),
	CB(cuMemcpyDtoDAsync_v2), CB(cuMemcpyDtoDAsync_v2_ptsz),
	CB(cuMemcpyDtoH_v2), CB(cuMemcpyDtoH_v2_ptds),
	CB(cuMemcpyDtoHAsync_v2), CB(cuMemcpyDtoHAsync_v2_ptsz),
	CB(cuMemcpy), CB(cuMemcpy_ptds),
	CB(cuMemcpyAsync), CB(cuMemcpyAsync_ptsz),
	CB(cuMemcpyPeer), CB(cuMemcpyPeer_ptds),
	CB(cuMemcpyPeerAsync), CB(cuMemcpyPeerAsync_ptsz),
	CB(cuMemcpy2D_v2), CB(cuMemcpy2D_v2_ptds),
	CB(cuMemcpy2DUnaligned_v2), CB(cuMemcpy2DUnaligned_v2_ptds),
	CB(cuMemcpy2DAsync_v2), CB(cuMemcpy2DAsync_v2_ptsz),
	CB(cuMemcpy3D_v2), CB(cuMemcpy3D_v2_ptds),
	CB(cuMemcpy3DAsync_v2), CB(cuMemcpy3DAsync_v2_ptsz),
	CB(cuMemcpyBatchAsync), CB(cuMemcpyBatchAsync_ptsz),
	CB(cuMemcpyBatchAsync_v2), CB(cuMemcpyBatchAsync_v2_ptsz),
	/* ...and values a stream writes into memory, as 4- or 8-byte copies */
	CB(cuStreamWriteValue32), CB(cuStreamWriteValue32_ptsz),
	CB(cuStreamWriteValue64), CB(cuStreamWriteValue64_ptsz),
	CB(cuStreamWriteValue32_v2), CB(cuStreamWriteValue32_v2_ptsz),
	CB(cuStreamWriteValue64_v2), CB(cuStreamWriteValue64_v2_ptsz),
	CB(cuStreamBatchMemOp), CB(cuStreamBatchMemOp_ptsz),
	CB(cuStreamBatchMemOp_v2), CB(cuStreamBatchMemOp_v2_ptsz),

	/* memsets: copies.c cap_memset_enter */
	CB(cuMemsetD8_v2), CB(cuMemsetD8_v2_ptds),
	CB(cuMemsetD16_v2), CB(cuMemsetD16_v2_ptds),
	CB(cuMemsetD32_v2), CB(cuMemsetD32_v2_ptds),
	CB(cuMemsetD8Async), CB(cuMemsetD8Async_ptsz),
	CB(cuMemsetD16Async), CB(cuMemsetD16Async_ptsz),
	CB(cuMemsetD32Async), CB(cuMemsetD32Async_ptsz),
	CB(cuMemsetD2D8_v2), CB(cuMemsetD2D8_v2_ptds),
	CB(cuMemsetD2D16_v2), CB(cuMemsetD2D16_v2_ptds),
	CB(cuMemsetD2D32_v2), CB(cuMemsetD2D32_v2_ptds),
	CB(cuMemsetD2D8Async), CB(cuMemsetD2D8Async_ptsz),
	CB(cuMemsetD2D16Async), CB(cuMemsetD2D16Async_ptsz),
	CB(cuMemsetD2D32Async), CB(cuMemsetD2D32Async_ptsz),

	/* frees (allocs.c cap_free_enter) and module unloads (inject.c) */
	CB(cuMemFree_v2), CB(cuMemFreeAsync), CB(cuMemFreeAsync_ptsz),
	CB(cuMemFreeHost), CB(cuMemHostUnregister), CB(cuMemUnmap), CB(cuMemAddressFree),
	CB(cuModuleUnload), CB(cuLibraryUnload),
	CB(cuIpcCloseMemHandle), CB(cuMemRelease),
	CB(cuGraphicsUnmapResources), CB(cuGraphicsUnmapResources_ptsz),

	/* allocations, VMM maps, module globals: allocs.c cap_alloc_exit */
	CB(cuMemAlloc_v2), CB(cuMemAllocPitch_v2), CB(cuMemAllocManaged),
	CB(cuMemAllocAsync), CB(cuMemAllocAsync_ptsz),
	CB(cuMemAllocFromPoolAsync), CB(cuMemAllocFromPoolAsync_ptsz),
	CB(cuMemAllocHost_v2), CB(cuMemHostAlloc),
	CB(cuMemHostRegister_v2), CB(cuMemHostRegister),
	CB(cuMemMap), CB(cuMemAddressReserve),
	CB(cuModuleGetGlobal_v2), CB(cuLibraryGetGlobal),
	/* ...and memory another process or API writes (managed.c's peer rule) */
	CB(cuIpcOpenMemHandle), CB(cuIpcOpenMemHandle_v2),
	CB(cuMemPoolImportPointer), CB(cuMemImportFromShareableHandle),
	CB(cuExternalMemoryGetMappedBuffer), CB(cuGraphicsResourceGetMappedPointer_v2),

	/* function attributes: inject.c on_driver */
	CB(cuFuncSetAttribute), CB(cuKernelSetAttribute),

	/* TMA tensor maps: tensormap.c cap_tmap_exit */
	CB(cuTensorMapEncodeTiled), CB(cuTensorMapEncodeIm2col),
	CB(cuTensorMapEncodeIm2colWide), CB(cuTensorMapReplaceAddress),

	/* graphs: graphapi.c cap_graph_exit; launches: inject.c on_unsupported_enter */
	CB(cuStreamBeginCapture), CB(cuStreamBeginCapture_ptsz),
	CB(cuStreamBeginCapture_v2), CB(cuStreamBeginCapture_v2_ptsz),
	CB(cuStreamBeginCaptureToGraph), CB(cuStreamBeginCaptureToGraph_ptsz),
	CB(cuStreamEndCapture), CB(cuStreamEndCapture_ptsz),
	CB(cuGraphInstantiate), CB(cuGraphInstantiate_v2),
	CB(cuGraphInstantiateWithFlags),
	CB(cuGraphInstantiateWithParams), CB(cuGraphInstantiateWithParams_ptsz),
	CB(cuGraphExecKernelNodeSetParams), CB(cuGraphExecKernelNodeSetParams_v2),
	CB(cuGraphExecNodeSetParams),
	CB(cuGraphDestroy),
	CB(cuGraphExecUpdate), CB(cuGraphExecUpdate_v2),
	CB(cuGraphExecMemsetNodeSetParams), CB(cuGraphExecMemcpyNodeSetParams),
	CB(cuGraphLaunch), CB(cuGraphLaunch_ptsz),

	/* what the trace cannot express, noted once: inject.c on_unsupported_enter */
	CB(cuMemcpyHtoA_v2), CB(cuMemcpyHtoA_v2_ptds),
	CB(cuMemcpyHtoAAsync_v2), CB(cuMemcpyHtoAAsync_v2_ptsz),
	CB(cuMemcpyDtoA_v2), CB(cuMemcpyDtoA_v2_ptds),
	CB(cuMemcpyAtoD_v2), CB(cuMemcpyAtoD_v2_ptds),
	CB(cuMemcpyAtoA_v2), CB(cuMemcpyAtoA_v2_ptds),
	CB(cuMemcpy3DPeer), CB(cuMemcpy3DPeer_ptds),
	CB(cuMemcpy3DPeerAsync), CB(cuMemcpy3DPeerAsync_ptsz),
	CB(cuMemcpy3DBatchAsync), CB(cuMemcpy3DBatchAsync_ptsz),
	CB(cuMemcpy3DBatchAsync_v2), CB(cuMemcpy3DBatchAsync_v2_ptsz),
	CB(cuMemMapArrayAsync), CB(cuMemMapArrayAsync_ptsz),
	CB(cuLaunchCooperativeKernelMultiDevice),
	CB(cuLaunch), CB(cuLaunchGrid), CB(cuLaunchGridAsync),
	CB(cuTexObjectCreate), CB(cuSurfObjectCreate),

	/* the fault watch: calls that wait for the GPU or ask how it went, so
	 * a fault no launch returned (a copy's, or one under a program that
	 * turned blocking launches off) is still seen where it surfaces;
	 * only on_result looks at them */
	CB(cuCtxSynchronize), CB(cuCtxSynchronize_v2),
	CB(cuStreamSynchronize), CB(cuStreamSynchronize_ptsz),
	CB(cuStreamQuery), CB(cuStreamQuery_ptsz),
	CB(cuEventSynchronize), CB(cuEventQuery),
};

size_t cap_cbids(const CUpti_CallbackId **ids)
{
	*ids = handled;
	return ARRAY_SIZE(handled);
}

int cap_cbids_enable(CUpti_SubscriberHandle sub, unsigned *failed)
{
	unsigned bad = 0;

	for (size_t i = 0; i < ARRAY_SIZE(handled); i++)
		if (cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, handled[i]) != CUPTI_SUCCESS)
			bad++;
	*failed = bad;
	return bad == ARRAY_SIZE(handled) ? -1 : 0;
}
