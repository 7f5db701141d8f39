/*
 * cuapi.h - the three ways a client reaches the driver, behind one macro, so
 * the same scenario code runs under each (docs/DESIGN.md, "Interception facts"):
 *
 *   default                          linked with -lcuda; cuda.h's renames pick
 *                                    cuMemAlloc_v2, cuMemcpyDtoH_v2, ...
 *   -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1
 *                                    linked, but cuda.h emits the _ptds / _ptsz
 *                                    symbols (cuMemcpyDtoH_v2_ptds,
 *                                    cuLaunchKernel_ptsz, ...)
 *   -DCLIENT_RUNTIME_LOAD=1          never links libcuda: does what the CUDA
 *                                    runtime does -- dlopen("libcuda.so.1",
 *                                    RTLD_NOW|RTLD_LOCAL), dlsym(h,
 *                                    "cuGetProcAddress_v2"), fetch
 *                                    "cuGetProcAddress" through it at 12000 and
 *                                    at 11030, and every other entry point
 *                                    through those (most at 12000, some at 11030)
 *
 * Scenario code writes CU(cuMemAlloc)(&p, n).  Nothing here knows of cutaint.
 */
#ifndef CLIENT_CUAPI_H
#define CLIENT_CUAPI_H

#include <cuda.h>

/* Every entry point the clients use, with the cudaVersion the runtime-style
 * loader asks for it at. */
/* An X-macro table, laid out by hand: */
/* clang-format off */
#define CUAPI_FUNCS(X)                  \
    X(cuInit, 12000)                    \
    X(cuDriverGetVersion, 12000)        \
    X(cuGetErrorName, 12000)            \
    X(cuDeviceGet, 12000)               \
    X(cuDevicePrimaryCtxRetain, 12000)  \
    X(cuDevicePrimaryCtxRelease, 12000) \
    X(cuCtxSetCurrent, 12000)           \
    X(cuCtxGetCurrent, 12000)           \
    X(cuCtxSynchronize, 12000)          \
    X(cuMemGetInfo, 12000)              \
    X(cuCtxCreate, 12050)               \
    X(cuCtxDestroy, 12000)              \
    X(cuModuleLoadData, 12000)          \
    X(cuModuleGetFunction, 11030)       \
    X(cuModuleUnload, 12000)            \
    X(cuLibraryLoadData, 12000)         \
    X(cuLibraryGetKernel, 12000)        \
    X(cuLibraryUnload, 12000)           \
    X(cuMemAlloc, 12000)                \
    X(cuMemFree, 12000)                 \
    X(cuMemcpyHtoD, 11030)              \
    X(cuMemcpyDtoH, 12000)              \
    X(cuMemcpyDtoD, 12000)              \
    X(cuMemsetD8, 11030)                \
    X(cuMemsetD32, 12000)               \
    X(cuStreamCreate, 12000)            \
    X(cuStreamDestroy, 12000)           \
    X(cuStreamSynchronize, 12000)       \
    X(cuStreamWaitEvent, 12000)         \
    X(cuEventCreate, 12000)             \
    X(cuEventRecord, 12000)             \
    X(cuEventSynchronize, 12000)        \
    X(cuEventQuery, 12000)              \
    X(cuEventDestroy, 12000)            \
    X(cuLaunchKernel, 12000)            \
    X(cuGraphCreate, 12000)             \
    X(cuGraphAddMemsetNode, 12000)      \
    X(cuGraphAddKernelNode, 12000)      \
    X(cuGraphAddMemcpyNode, 12000)      \
    X(cuGraphInstantiateWithFlags, 12000) \
    X(cuGraphLaunch, 12000)             \
    X(cuGraphExecKernelNodeSetParams, 12000) \
    X(cuGraphExecUpdate, 12000)         \
    X(cuGraphExecDestroy, 12000)        \
    X(cuGraphDestroy, 12000)            \
    X(cuGraphConditionalHandleCreate, 12030) \
    X(cuGraphAddNode, 12030)
/* clang-format on */

#if CLIENT_RUNTIME_LOAD

/* One pointer per entry point, typed from cuda.h's prototype (the first use
 * of `f` is macro-expanded to the versioned name, the pasted one is not). */
#define CUAPI_DECLARE(f, ver) extern __typeof__(&f) cuapi_##f;
CUAPI_FUNCS(CUAPI_DECLARE)
#undef CUAPI_DECLARE
#define CU(f) (cuapi_##f)

#else

#define CU(f) f

#endif

/* Reaches the driver the way this build does.  0, or -1 after printing why
 * on stderr (linked builds cannot fail here: the loader already did it). */
int cuapi_load(void);

/* A stable name for a CUresult, whether or not the driver could say. */
const char *cuapi_errname(CUresult r);

#endif
