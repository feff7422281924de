/*
 * tma-prog.c - test helper: a program that reads through a TMA tensor map
 * on the CPU driver double, captured for real by libgpureduce-capture.so
 * through the CUPTI part of capture-fakecuda (as ckpt-prog.c), for
 * t5094-tensormap.sh.  Every driver call goes to the double between the
 * enter and exit callbacks CUPTI would deliver.
 *
 *   tma-prog KERNELS.CUBIN [bad|good] [replace|unseen|many]
 *
 * Buffers: T (64 rows of 256 floats, 64 KiB, the tensor), OUT (as many
 * floats), D (4 KiB, a decoy nothing needs).  The map is encoded with
 * cuTensorMapEncodeTiled over T: dims 256 x 64 f32, box 64 x 64, row
 * stride 1024 bytes ("good") or 8192 ("bad": Triton's bad-stride bug,
 * rows 8.. read past T).  With "replace" the map is first encoded over D
 * and then pointed at T with cuTensorMapReplaceAddress; with "unseen" the
 * encode call gets no callbacks (a map capture cannot see being made); with
 * "many", 2500 other rank-1 maps over T (16 bytes apart) are encoded first,
 * none launched with (a checkpoint carries only the latest).  Two healthy
 * add_one launches on D come first; then tma_rows(map, OUT, 16384).
 * Exit 3 when the launch faulted, 0 when it ran, 2 on a set-up error.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>

#define PROG "tma-prog"
#include "fakeprog.h"

static CUresult launch(CUfunction f, unsigned grid, void **kp)
{
	return launch_block(f, grid, 256, kp);
}

int main(int argc, char **argv)
{
	CUmodule mod;
	CUfunction add_one, tma_rows;
	CUdeviceptr T, OUT, D;
	CUtensorMap map;
	static float host[64 * 256];
	cuuint64_t dims[2] = { 256, 64 }, strides[1] = { 1024 };
	cuuint32_t box[2] = { 64, 64 }, es[2] = { 1, 1 };
	int replace = argc > 3 && !strcmp(argv[3], "replace"), n = 64 * 256, nd = 1024;
	int unseen = argc > 3 && !strcmp(argv[3], "unseen");
	int many = argc > 3 && !strcmp(argv[3], "many");
	CUresult r;

	if (argc < 2) {
		fprintf(stderr, "usage: tma-prog KERNELS.CUBIN [bad|good] [replace]\n");
		return 2;
	}
	if (argc > 2 && !strcmp(argv[2], "bad"))
		strides[0] = 8192;
	mod = start_on_cubin(argv[1], 0);
	if ((r = cuModuleGetFunction(&add_one, mod, "_Z7add_onePfi")) ||
	    (r = cuModuleGetFunction(&tma_rows, mod, "_Z8tma_rows14CUtensorMap_stPfi")))
		die("cuModuleGetFunction", r);
	T = alloc(sizeof(host));
	OUT = alloc(sizeof(host));
	D = alloc(4096);
	for (int i = 0; i < 64 * 256; i++)
		host[i] = (float)i;
	h2d(T, host, sizeof(host));
	for (int k = 0; many && k < 2500; k++) {
		/* distinct maps nothing launches with, before the one that is */
		cuTensorMapEncodeTiled_params q = { &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1,
						    (void *)(uintptr_t)(T + 16u * (unsigned)k), dims, strides, box,
						    es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
						    CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE };
		if ((r = CALL(cuTensorMapEncodeTiled, cuTensorMapEncodeTiled, &q, &map, q.tensorDataType, 1,
			      q.globalAddress, dims, strides, box, es, q.interleave, q.swizzle, q.l2Promotion,
			      q.oobFill)))
			die("cuTensorMapEncodeTiled (many)", r);
	}
	{
		void *base = (void *)(uintptr_t)(replace ? D : T);
		cuTensorMapEncodeTiled_params q = { &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, base, dims,
						    strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
						    CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
						    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE };
		if (unseen)
			r = cuTensorMapEncodeTiled(&map, q.tensorDataType, 2, base, dims, strides, box, es,
						   q.interleave, q.swizzle, q.l2Promotion, q.oobFill);
		else
			r = CALL(cuTensorMapEncodeTiled, cuTensorMapEncodeTiled, &q, &map, q.tensorDataType, 2,
				 base, dims, strides, box, es, q.interleave, q.swizzle, q.l2Promotion, q.oobFill);
		if (r)
			die("cuTensorMapEncodeTiled", r);
	}
	if (replace) {
		cuTensorMapReplaceAddress_params q = { &map, (void *)(uintptr_t)T };
		if ((r = CALL(cuTensorMapReplaceAddress, cuTensorMapReplaceAddress, &q, &map, q.globalAddress)))
			die("cuTensorMapReplaceAddress", r);
	}
	for (int k = 0; k < 2; k++) {
		void *kp[] = { &D, &nd };
		if ((r = launch(add_one, 4, kp)))
			die("a healthy launch", r);
	}
	{
		void *kp[] = { &map, &OUT, &n };
		r = launch(tma_rows, 64, kp);
	}
	fprintf(stderr, "tma-prog: tma_rows returned %d\n", (int)r);
	return r ? 3 : 0;
}
