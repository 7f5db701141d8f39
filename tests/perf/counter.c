/*
 * counter.c - LD_PRELOAD library counting heap allocations per thread.
 *
 * Preloaded before libcutaint.so, so its malloc family is the one every
 * library (the shim, fakecuda, the program) binds to; each call counts
 * against the calling thread and forwards to glibc's own (__libc_*).
 * perf_client reads the count with dlsym(RTLD_DEFAULT, "ctperf_allocs").
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static __thread __attribute__((tls_model("initial-exec"))) uint64_t allocs;

EXPORT uint64_t ctperf_allocs(void)
{
    return allocs;
}

EXPORT void *malloc(size_t n)
{
    allocs++;
    return __libc_malloc(n);
}
EXPORT void *calloc(size_t n, size_t m)
{
    allocs++;
    return __libc_calloc(n, m);
}
EXPORT void *realloc(void *p, size_t n)
{
    allocs++;
    return __libc_realloc(p, n);
}
EXPORT void free(void *p)
{
    __libc_free(p);
}
EXPORT void *memalign(size_t a, size_t n)
{
    allocs++;
    return __libc_memalign(a, n);
}
EXPORT void *aligned_alloc(size_t a, size_t n)
{
    allocs++;
    return __libc_memalign(a, n);
}
EXPORT int posix_memalign(void **out, size_t a, size_t n)
{
    allocs++;
    if (a % sizeof(void *) || (a & (a - 1)))
        return EINVAL;
    void *p = __libc_memalign(a, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
