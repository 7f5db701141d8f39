/*
 * failmalloc.c - LD_PRELOAD library (preloaded before libcutaint.so) whose
 * malloc family fails with ENOMEM while armed: memory pressure at a moment
 * the program chooses.  A program arms it with
 * dlsym(RTLD_DEFAULT, "failmalloc_arm")(1) and disarms it with (0); nothing
 * fails until then.  Everything forwards to glibc's own (__libc_*).
 * For tests only; not built under a sanitizer, whose own allocator must
 * see every block.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static atomic_bool armed;

EXPORT void failmalloc_arm(int on)
{
    atomic_store(&armed, on != 0);
}

static bool fails(void)
{
    if (!atomic_load_explicit(&armed, memory_order_relaxed))
        return false;
    errno = ENOMEM;
    return true;
}

EXPORT void *malloc(size_t n)
{
    return fails() ? NULL : __libc_malloc(n);
}
EXPORT void *calloc(size_t n, size_t m)
{
    return fails() ? NULL : __libc_calloc(n, m);
}
EXPORT void *realloc(void *p, size_t n)
{
    return fails() ? NULL : __libc_realloc(p, n);
}
EXPORT void free(void *p)
{
    __libc_free(p);
}
EXPORT void *memalign(size_t a, size_t n)
{
    return fails() ? NULL : __libc_memalign(a, n);
}
EXPORT void *aligned_alloc(size_t a, size_t n)
{
    return fails() ? NULL : __libc_memalign(a, n);
}
EXPORT int posix_memalign(void **out, size_t a, size_t n)
{
    if (a % sizeof(void *) || (a & (a - 1)))
        return EINVAL;
    if (fails())
        return ENOMEM;
    void *p = __libc_memalign(a, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
