/*
 * floor.c - the floor of the bench: the least any LD_PRELOAD interposer
 * adds to a driver call.  Each entry point the bench measures is one
 * indirect jump to the next definition (dlsym(RTLD_NEXT), resolved once
 * at load), so the driver sees the program's own arguments and the
 * program the driver's own result.  tools/bench/run.sh measures it beside
 * libcutaint.so: what cutaint adds above this is its own.
 *
 * Invariant: every name of FLOOR_CALLS is resolved before the program's
 * first call (a constructor); x86-64 only (the jump is written in its
 * assembly), elsewhere the library is not built.
 */
#include <assert.h>
#include <dlfcn.h>

/* The driver calls the bench makes, one row each. */
#define FLOOR_CALLS(X)     \
    X(cuLaunchKernel)      \
    X(cuMemcpyDtoH_v2)     \
    X(cuMemcpyHtoD_v2)     \
    X(cuMemAlloc_v2)       \
    X(cuMemFree_v2)        \
    X(cuStreamSynchronize) \
    X(cuGraphLaunch)       \
    X(cuModuleLoadData)    \
    X(cuModuleUnload)      \
    X(cublasSgemm_v2)

#define NEXT(name) __attribute__((visibility("hidden"))) void *floor_next_##name;
FLOOR_CALLS(NEXT)

#define TRAMPOLINE(name)                                                        \
    __asm__(".text\n.globl " #name "\n.type " #name ", @function\n" #name ":\n" \
            "    jmp *floor_next_" #name "(%rip)\n.size " #name ", .-" #name "\n");
FLOOR_CALLS(TRAMPOLINE)

__attribute__((constructor)) static void floor_resolve(void)
{
#define RESOLVE(name) floor_next_##name = dlsym(RTLD_NEXT, #name);
    FLOOR_CALLS(RESOLVE)
#define RESOLVED(name) assert(floor_next_##name && "every name of FLOOR_CALLS has a next definition");
    FLOOR_CALLS(RESOLVED)
}
