/*
 * kernels_image.c - the source of the double's test "cubin",
 * $(BUILD)/double/kernels.cubin, compiled with `cc -c`: a relocatable ELF64
 * whose symbol table, like a real cubin's, names the kernels it contains
 * (defined STT_FUNC symbols with nvcc's mangled names) and its __device__
 * globals (defined STT_OBJECT symbols).  The bodies are empty: the double
 * runs the C functions registered under the same names in kernels.c.
 *
 * _Z7unknownPf is deliberately absent from the registry, so asking for it
 * gives CUDA_ERROR_NOT_FOUND although the image defines it.
 */
#define KERNEL(cname, mangled) \
	void cname(void) __asm__(mangled); \
	void cname(void) {}

KERNEL(img_scale, "_Z5scalePfPKfi")
KERNEL(img_scale_nocheck, "_Z13scale_nocheckPfPKfi")
KERNEL(img_dims_fill, "_Z9dims_fill4DimsPf")
KERNEL(img_dims_fill_u, "_Z11dims_fill_u5DimsUPf")
KERNEL(img_gather, "_Z6gatherPfPKfPKxi")
KERNEL(img_check_index, "_Z11check_indexPKxii")
KERNEL(img_add_one, "_Z7add_onePfi")
KERNEL(img_racy_augment, "_Z12racy_augmentPfii")
KERNEL(img_racy_grid, "_Z9racy_gridPfi")
KERNEL(img_racy_rare, "_Z9racy_rarePfi")
KERNEL(img_racy_burst, "_Z10racy_burstPfi")
KERNEL(img_racy_often, "_Z10racy_oftenPfi")
KERNEL(img_racy_warm, "_Z9racy_warmPfi")
KERNEL(img_racy_wide, "_Z9racy_widePfi")
KERNEL(img_use_buf, "_Z7use_bufPfi")
KERNEL(img_struct_params, "_Z13struct_params4Pair")
KERNEL(img_fill, "_Z4fillPffi")
KERNEL(img_spin, "_Z4spinPVKi")
KERNEL(img_gated_write, "_Z11gated_writePVKiPfi")
KERNEL(img_limit_write, "_Z11limit_writePf")
KERNEL(img_ring_write, "_Z10ring_writePf")
KERNEL(img_nccl_allreduce, "_Z39ncclDevKernel_AllReduce_Sum_i64_RING_LL17ncclDevKernelArgs")
KERNEL(img_tma_rows, "_Z8tma_rows14CUtensorMap_stPfi")
KERNEL(img_tdesc_rows, "tdesc_rows")
KERNEL(img_pick, "pick_kernel")
KERNEL(img_chase, "_Z5chasePPKfPfi")
KERNEL(img_unknown, "_Z7unknownPf")

/* __device__ globals, reachable through cuModuleGetGlobal. */
int d_limit = 1000;
float d_table[64] = { 1.0f, 2.0f, 3.0f };
long long d_counter;    /* .bss: zero-initialised */
