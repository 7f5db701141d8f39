/*
 * zerocopy.cu: mapped pinned memory as cuda-samples' simpleZeroCopy uses
 * it: cudaSetDeviceFlags(cudaDeviceMapHost), buffers from cudaHostAlloc
 * with cudaHostAllocMapped (and, as the sample's other mode, plain memory
 * registered mapped), their device pointers from cudaHostGetDevicePointer,
 * and kernels that read and write the host memory through them, no copy
 * in between. The kernels are fakecuda's built-in fill and saxpy.
 * Prints one line per step and "PASS"; exits 1 at the first wrong value
 * or failed call.
 */
#include "runtime_test.cuh"

static const int N = 1 << 15;

/* y = fill(1) then y = 2x + y, through the device pointers; checked on the host. */
static int run(const char *how, float *hx, float *hy)
{
    for (int i = 0; i < N; i++)
        hx[i] = (float)i;
    float *dx, *dy;
    CHECK(cudaHostGetDevicePointer((void **)&dx, hx, 0));
    CHECK(cudaHostGetDevicePointer((void **)&dy, hy, 0));
    fill<<<N / 256, 256>>>(dy, N, 1.0f);
    CHECK(cudaGetLastError());
    saxpy<<<N / 256, 256>>>(N, 2.0f, dx, dy);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += hy[i] != 2.0f * (float)i + 1.0f;
    std::printf("%s: y[1]=%g y[%d]=%g, %d wrong\n", how, hy[1], N - 1, hy[N - 1], wrong);
    return wrong;
}

int main()
{
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device can map host memory: %s\n", prop.canMapHostMemory ? "yes" : "no");
    int bad = !prop.canMapHostMemory;
    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));

    float *hx, *hy;
    CHECK(cudaHostAlloc(&hx, N * sizeof(float), cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&hy, N * sizeof(float), cudaHostAllocMapped));
    bad += run("cudaHostAlloc mapped", hx, hy);
    CHECK(cudaFreeHost(hx));
    CHECK(cudaFreeHost(hy));

    void *px = nullptr, *py = nullptr;
    if (posix_memalign(&px, 4096, N * sizeof(float)) != 0 || posix_memalign(&py, 4096, N * sizeof(float)) != 0) {
        std::puts("FAIL posix_memalign");
        return 1;
    }
    CHECK(cudaHostRegister(px, N * sizeof(float), cudaHostRegisterMapped));
    CHECK(cudaHostRegister(py, N * sizeof(float), cudaHostRegisterMapped));
    bad += run("cudaHostRegister mapped", (float *)px, (float *)py);
    CHECK(cudaHostUnregister(px));
    CHECK(cudaHostUnregister(py));
    free(px);
    free(py);
    std::puts(bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
