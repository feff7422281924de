/*
 * drv.h - the CUDA driver API as replay workers see it: a table of function
 * pointers filled by dlopen("libcuda.so.1") at run time.
 *
 * gpureduce itself never links libcuda, so `show`, `shrink`'s parent process
 * and the CPU tests run on machines without a driver; only worker children
 * call drv_load().  The list below is also the contract of the CPU driver
 * double (tests/double/): every symbol named here must exist there.
 * Symbols are the versioned ABI names (cuMemAlloc_v2...), as cuda.h maps them.
 */
#ifndef GPUREDUCE_DRV_H
#define GPUREDUCE_DRV_H

#include <cuda.h>

#include "../addr/place.h"

struct strbuf;

/* X(field, exported symbol, required); placement's entry points are
 * fields of d->vmm, the table addr/place.h calls through */
#define DRV_FUNCS(X) \
	X(Init, "cuInit", 1) \
	X(DriverGetVersion, "cuDriverGetVersion", 1) \
	X(DeviceGet, "cuDeviceGet", 1) \
	X(DeviceGetCount, "cuDeviceGetCount", 1) \
	X(DeviceGetName, "cuDeviceGetName", 1) \
	X(DeviceGetAttribute, "cuDeviceGetAttribute", 1) \
	X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 1) \
	X(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", 1) \
	X(CtxSetCurrent, "cuCtxSetCurrent", 1) \
	X(CtxSynchronize, "cuCtxSynchronize", 1) \
	X(ModuleLoadData, "cuModuleLoadData", 1) \
	X(ModuleUnload, "cuModuleUnload", 1) \
	X(ModuleGetFunction, "cuModuleGetFunction", 1) \
	X(ModuleGetGlobal, "cuModuleGetGlobal_v2", 0) \
	X(FuncGetParamInfo, "cuFuncGetParamInfo", 0) \
	X(FuncSetAttribute, "cuFuncSetAttribute", 1) \
	X(FuncGetAttribute, "cuFuncGetAttribute", 0) \
	X(vmm.MemAlloc, "cuMemAlloc_v2", 1) \
	X(vmm.MemFree, "cuMemFree_v2", 1) \
	X(MemcpyHtoD, "cuMemcpyHtoD_v2", 1) \
	X(MemcpyDtoH, "cuMemcpyDtoH_v2", 1) \
	X(MemAllocHost, "cuMemAllocHost_v2", 0) \
	X(MemFreeHost, "cuMemFreeHost", 0) \
	X(MemcpyDtoD, "cuMemcpyDtoD_v2", 1) \
	X(MemsetD8, "cuMemsetD8_v2", 1) \
	X(MemsetD16, "cuMemsetD16_v2", 1) \
	X(MemsetD32, "cuMemsetD32_v2", 1) \
	X(MemsetD2D8, "cuMemsetD2D8_v2", 0) \
	X(MemsetD2D16, "cuMemsetD2D16_v2", 0) \
	X(MemsetD2D32, "cuMemsetD2D32_v2", 0) \
	X(LaunchKernel, "cuLaunchKernel", 1) \
	X(LaunchKernelEx, "cuLaunchKernelEx", 0) \
	X(LaunchCooperativeKernel, "cuLaunchCooperativeKernel", 0) \
	X(GetErrorName, "cuGetErrorName", 1) \
	X(GetErrorString, "cuGetErrorString", 1) \
	X(MemGetAllocationGranularity, "cuMemGetAllocationGranularity", 0) \
	X(vmm.MemAddressReserve, "cuMemAddressReserve", 0) \
	X(vmm.MemAddressFree, "cuMemAddressFree", 0) \
	X(vmm.MemCreate, "cuMemCreate", 0) \
	X(vmm.MemRelease, "cuMemRelease", 0) \
	X(vmm.MemMap, "cuMemMap", 0) \
	X(vmm.MemUnmap, "cuMemUnmap", 0) \
	X(vmm.MemSetAccess, "cuMemSetAccess", 0) \
	X(TensorMapEncodeTiled, "cuTensorMapEncodeTiled", 0) \
	X(TensorMapEncodeIm2col, "cuTensorMapEncodeIm2col", 0)

struct drv {
	void *handle;
	CUresult (*Init)(unsigned int);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxSynchronize)(void);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*ModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule, const char *);
	CUresult (*FuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *);
	CUresult (*FuncGetAttribute)(int *, CUfunction_attribute, CUfunction);
	CUresult (*FuncSetAttribute)(CUfunction, CUfunction_attribute, int);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*MemAllocHost)(void **, size_t);
	CUresult (*MemFreeHost)(void *);
	CUresult (*MemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
	CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*MemsetD16)(CUdeviceptr, unsigned short, size_t);
	CUresult (*MemsetD32)(CUdeviceptr, unsigned int, size_t);
	CUresult (*MemsetD2D8)(CUdeviceptr, size_t, unsigned char, size_t, size_t);
	CUresult (*MemsetD2D16)(CUdeviceptr, size_t, unsigned short, size_t, size_t);
	CUresult (*MemsetD2D32)(CUdeviceptr, size_t, unsigned int, size_t, size_t);
	struct place_vmm vmm;    /* cuMemAlloc ... cuMemSetAccess: placement's calls (addr/place.h) */
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
				 unsigned, unsigned, CUstream, void **, void **);
	CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
	CUresult (*LaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
					    unsigned, unsigned, unsigned, CUstream, void **);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*GetErrorString)(CUresult, const char **);
	CUresult (*MemGetAllocationGranularity)(size_t *, const CUmemAllocationProp *,
						CUmemAllocationGranularity_flags);
	/* TMA tensor maps (replay/tensormap.c); absent before CUDA 12 */
	CUresult (*TensorMapEncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
					 const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
					 const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
					 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
	CUresult (*TensorMapEncodeIm2col)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
					  const cuuint64_t *, const cuuint64_t *, const int *, const int *,
					  cuuint32_t, cuuint32_t, const cuuint32_t *, CUtensorMapInterleave,
					  CUtensorMapSwizzle, CUtensorMapL2promotion,
					  CUtensorMapFloatOOBfill);
};

/* dlopen libcuda.so.1 (or $GPUREDUCE_LIBCUDA) and resolve the table.
 * Returns 0, or -1 with a one-line reason in err. */
int drv_load(struct drv *d, struct strbuf *err);
/* "CUDA_ERROR_ILLEGAL_ADDRESS" for a code, without needing a context. */
const char *drv_error_name(const struct drv *d, CUresult r);
/* 1 for the sticky family that means the context is dead (700, 710...). */
int drv_is_sticky(CUresult r);
#endif
