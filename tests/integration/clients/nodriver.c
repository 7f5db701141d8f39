/*
 * nodriver.c - a program run where no libcuda.so.1 can be found.  It does not
 * link libcuda (it could not start); it looks the entry points up in the
 * global scope, as a plugin host would, and calls what it finds.  Without a
 * shim it finds nothing and says so; under the shim it reaches the shim's
 * wrappers, which must answer with an error code, not crash.
 *
 * Output: "NAME: missing" or "NAME: <CUresult number>" per call; exit 0.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

static void *find(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    if (p == NULL)
        printf("%s: missing\n", name);
    return p;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))find("cuInit");
    if (init != NULL)
        printf("cuInit: %d\n", (int)init(0));
    CUresult (*alloc)(CUdeviceptr *, size_t) = (CUresult(*)(CUdeviceptr *, size_t))find("cuMemAlloc_v2");
    CUdeviceptr p = 0;
    if (alloc != NULL)
        printf("cuMemAlloc_v2: %d\n", (int)alloc(&p, 64));
    CUresult (*dtoh)(void *, CUdeviceptr, size_t) = (CUresult(*)(void *, CUdeviceptr, size_t))find("cuMemcpyDtoH_v2");
    char host[64];
    if (dtoh != NULL)
        printf("cuMemcpyDtoH_v2: %d\n", (int)dtoh(host, 0x1000, sizeof host));
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                       void **, void **) =
        (CUresult(*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                     void **, void **))find("cuLaunchKernel");
    if (launch != NULL)
        printf("cuLaunchKernel: %d\n", (int)launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CUresult (*sync)(CUstream) = (CUresult(*)(CUstream))find("cuStreamSynchronize");
    if (sync != NULL)
        printf("cuStreamSynchronize: %d\n", (int)sync(NULL));
    return 0;
}
