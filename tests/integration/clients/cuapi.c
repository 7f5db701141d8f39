/*
 * cuapi.c - cuapi_load() for the three ways of reaching the driver (see
 * cuapi.h).  The runtime-style path reproduces libcudart's sequence exactly:
 * dlopen, one dlsym of cuGetProcAddress_v2 on that handle, then everything
 * (cuGetProcAddress itself first, at 12000 and 11030) through the driver.
 */
#include "cuapi.h"

#include <stdio.h>

#if CLIENT_RUNTIME_LOAD
#include <dlfcn.h>

typedef CUresult (*gpa_v2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa_v1_fn)(const char *, void **, int, cuuint64_t);

#define CUAPI_DEFINE(f, ver) __typeof__(&f) cuapi_##f;
CUAPI_FUNCS(CUAPI_DEFINE)
#undef CUAPI_DEFINE

/* Fetch one entry point the way the runtime does for that version. */
static int fetch(gpa_v2_fn gpa, gpa_v1_fn gpa_old, const char *name, int ver, void **out)
{
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = ver >= 12000 ? gpa(name, out, ver, CU_GET_PROC_ADDRESS_DEFAULT, &st)
                              : gpa_old(name, out, ver, CU_GET_PROC_ADDRESS_DEFAULT);
    if (r != CUDA_SUCCESS || *out == NULL || (ver >= 12000 && st != CU_GET_PROC_ADDRESS_SUCCESS)) {
        fprintf(stderr, "client: cuGetProcAddress(%s, %d) failed: %d status %d\n", name, ver, (int)r, (int)st);
        return -1;
    }
    return 0;
}

int cuapi_load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "client: dlopen(libcuda.so.1) failed: %s\n", dlerror());
        return -1;
    }
    gpa_v2_fn first = (gpa_v2_fn)dlsym(h, "cuGetProcAddress_v2");
    if (first == NULL) {
        fprintf(stderr, "client: dlsym(cuGetProcAddress_v2) failed\n");
        return -1;
    }
    gpa_v2_fn gpa = NULL;
    gpa_v1_fn gpa_old = NULL;
    CUdriverProcAddressQueryResult st;
    if (first("cuGetProcAddress", (void **)&gpa, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st) != CUDA_SUCCESS ||
        gpa == NULL ||
        gpa("cuGetProcAddress", (void **)&gpa_old, 11030, CU_GET_PROC_ADDRESS_DEFAULT, &st) != CUDA_SUCCESS ||
        gpa_old == NULL) {
        fprintf(stderr, "client: cuGetProcAddress self-lookup failed\n");
        return -1;
    }
#define CUAPI_FETCH(f, ver)                                     \
    if (fetch(gpa, gpa_old, #f, ver, (void **)&cuapi_##f) != 0) \
        return -1;
    CUAPI_FUNCS(CUAPI_FETCH)
#undef CUAPI_FETCH
    return 0;
}

#else

int cuapi_load(void)
{
    return 0;
}

#endif

const char *cuapi_errname(CUresult r)
{
    const char *s = NULL;
    if (CU(cuGetErrorName)(r, &s) != CUDA_SUCCESS || s == NULL) {
        static __thread char buf[32];
        snprintf(buf, sizeof buf, "CUresult(%d)", (int)r);
        return buf;
    }
    return s;
}
