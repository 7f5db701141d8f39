/*
 * fakecuda_kernel.h: the kernel-plugin ABI of fakecuda (version 1).
 *
 * A kernel plugin is a shared object named in FAKECUDA_KERNELS
 * (`a.so[:b.so]`) that supplies host implementations of CUDA kernels, found
 * by their exact (mangled) names through cuModuleGetFunction and
 * cuLibraryGetKernel like fakecuda's built-in kernels. This header is the
 * whole interface: plain C, no cuda.h, usable from C and C++.
 *
 * A plugin defines, with default visibility:
 *
 *     FAKECUDA_KERNEL_PLUGIN_ABI;           the ABI version it was built for
 *     int fakecuda_kernels_register(const struct fakecuda_host *host);
 *
 * fakecuda loads each plugin once, at the first driver call, checks the
 * version before calling anything in it, then calls the entry function,
 * which registers kernels through host->register_kernel and returns 0.
 * Loading is all or nothing: a plugin whose version differs, whose entry
 * function is missing or returns nonzero, or any of whose registrations is
 * refused (bad layout, or a name already known: the first registration of a
 * name wins, built-in kernels first, then plugins in list order) is skipped
 * whole, with one line on stderr naming it and the reason.
 *
 * The kernel's contract:
 * - It is called once per launch, at one of fakecuda's sync points, and
 *   computes the effect of the whole grid (it is not called per thread).
 * - It reaches device memory only through launch->device (or
 *   fakecuda_view), which maps a device range to host memory, and only
 *   during its own call. It checks every range it will touch before writing
 *   anything, so a faulting launch writes nothing, as on fakecuda's built-in
 *   kernels.
 * - It runs with fakecuda's memory lock held: it must not call the driver
 *   (no cu* function), block on another thread that does, throw a C++
 *   exception out of the call, or keep a mapped pointer after returning.
 * - It returns FAKECUDA_KERNEL_OK, or a fault: FAKECUDA_KERNEL_ILLEGAL_ADDRESS
 *   and FAKECUDA_KERNEL_MISALIGNED_ADDRESS are reported as those CUresults;
 *   any other nonzero value as CUDA_ERROR_LAUNCH_FAILED. Every fault is
 *   sticky: the context is lost and the next sync point returns the fault,
 *   as a GPU's would.
 *
 * Stability: version 1's structures are never changed; an incompatible
 * change is a new FAKECUDA_KERNEL_ABI_VERSION, and fakecuda refuses plugins
 * built for another version.
 */
#ifndef FAKECUDA_KERNEL_H
#define FAKECUDA_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FAKECUDA_KERNEL_ABI_VERSION 1u

/* What a kernel returns: 0, or the CUresult value of its fault. */
#define FAKECUDA_KERNEL_OK 0
#define FAKECUDA_KERNEL_ILLEGAL_ADDRESS 700    /* CUDA_ERROR_ILLEGAL_ADDRESS */
#define FAKECUDA_KERNEL_MISALIGNED_ADDRESS 716 /* CUDA_ERROR_MISALIGNED_ADDRESS */
#define FAKECUDA_KERNEL_LAUNCH_FAILED 719      /* CUDA_ERROR_LAUNCH_FAILED: what other codes become */

/* The largest parameter block, as CUDA 12.1 and later allow. */
#define FAKECUDA_KERNEL_MAX_PARAM_BYTES 32764u

struct fakecuda_dim3 {
    unsigned x, y, z;
};

/* One launch, as the kernel sees it. Valid only during the kernel's call. */
struct fakecuda_launch {
    struct fakecuda_dim3 grid, block;
    unsigned shared_bytes; /* dynamic shared memory requested (none is provided) */
    void *stream;          /* the CUstream the launch named (NULL or CU_STREAM_LEGACY/
                              PER_THREAD for a default stream), for identification only:
                              it may be destroyed by now */
    const void *params;    /* the packed parameters, in the registered layout;
                              aligned for any C type */
    size_t params_size;    /* the end of the last parameter */
    /* Host address of device bytes [addr, addr + bytes), or NULL unless that
       range lies inside one live allocation. */
    void *(*device)(uint64_t addr, size_t bytes);
    void *user; /* the registration's user pointer */
};

typedef int (*fakecuda_kernel_fn)(const struct fakecuda_launch *launch);

/* Where one parameter lies in the packed block: the C++ ABI's layout of the
   signature (each parameter at the next offset aligned for its type). */
struct fakecuda_param {
    size_t offset, size;
};

struct fakecuda_kernel {
    const char *name; /* exact mangled name; copied */
    fakecuda_kernel_fn run;
    unsigned nparams;
    const struct fakecuda_param *params; /* nparams entries, in order; copied */
    void *user;                          /* handed to run as launch->user */
};

struct fakecuda_host {
    unsigned abi_version; /* FAKECUDA_KERNEL_ABI_VERSION of this fakecuda */
    const char *plugin;   /* the plugin's path as listed in FAKECUDA_KERNELS */
    /* Registers one kernel; call only from the entry function, on its thread.
       Returns 0, or nonzero when refused (the plugin will then be skipped). */
    int (*register_kernel)(const struct fakecuda_host *host, const struct fakecuda_kernel *kernel);
};

#if defined(__GNUC__)
#define FAKECUDA_KERNEL_EXPORT __attribute__((visibility("default")))
#else
#define FAKECUDA_KERNEL_EXPORT
#endif

/* Defined by the plugin with FAKECUDA_KERNEL_PLUGIN_ABI. */
FAKECUDA_KERNEL_EXPORT extern const unsigned fakecuda_kernel_abi_version;
/* Defined by the plugin: registers its kernels; returns 0 on success. */
FAKECUDA_KERNEL_EXPORT int fakecuda_kernels_register(const struct fakecuda_host *host);

/* The declaration above gives the definition its visibility. */
#define FAKECUDA_KERNEL_PLUGIN_ABI const unsigned fakecuda_kernel_abi_version = FAKECUDA_KERNEL_ABI_VERSION

/*
 * The host view of count elements of elem bytes at device address addr,
 * which must be aligned to align (a power of two; 1 for none). On failure
 * returns NULL and stores the fault to return in *err.
 */
static inline void *fakecuda_view(const struct fakecuda_launch *launch, uint64_t addr, uint64_t count, size_t elem,
                                  size_t align, int *err)
{
    if (align > 1 && addr % align != 0) {
        *err = FAKECUDA_KERNEL_MISALIGNED_ADDRESS;
        return NULL;
    }
    void *p = elem && count > SIZE_MAX / elem ? NULL : launch->device(addr, (size_t)(count * elem));
    if (!p)
        *err = FAKECUDA_KERNEL_ILLEGAL_ADDRESS;
    return p;
}

#ifdef __cplusplus
}
#endif

#endif
