/*
 * sigrename.c - a test's rename(2) and renameat2(2), preloaded before
 * libcutaint.so: the SIGRENAME_NTH-th rename (default 1) whose target ends
 * in SIGRENAME_SUFFIX raises SIGTERM before renaming.  cutaint renames its metrics file into
 * place under its metrics lock, so the program's SIGTERM handler then runs
 * while cutaint holds that lock: the moment an exit() in the handler must
 * not wait for it.  Nothing here knows cutaint's code.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Raises SIGTERM when this rename to `to` is the one. */
static void maybe_raise(const char *to)
{
    static atomic_int seen;
    const char *suffix = getenv("SIGRENAME_SUFFIX"), *nth = getenv("SIGRENAME_NTH");
    size_t n = suffix ? strlen(suffix) : 0, m = to ? strlen(to) : 0;
    if (n && m >= n && strcmp(to + m - n, suffix) == 0 && atomic_fetch_add(&seen, 1) + 1 == (nth ? atoi(nth) : 1))
        raise(SIGTERM);
}

__attribute__((visibility("default"))) int rename(const char *from, const char *to)
{
    int (*real)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    maybe_raise(to);
    return real ? real(from, to) : -1;
}

__attribute__((visibility("default"))) int renameat2(int fromfd, const char *from, int tofd, const char *to,
                                                     unsigned flags)
{
    typedef int (*renameat2_fn)(int, const char *, int, const char *, unsigned);
    renameat2_fn real = (renameat2_fn)dlsym(RTLD_NEXT, "renameat2");
    maybe_raise(to);
    return real ? real(fromfd, from, tofd, to, flags) : -1;
}
