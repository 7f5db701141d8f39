/*
 * hostregister.cu: cudaHostRegister'd memory used like cuda-samples'
 * simpleStreams does in its default mode: plain page-aligned host buffers
 * registered (mapped), then, in each of two streams, an async copy of its
 * half to the device, a fill and a saxpy there, and an async copy back into
 * the registered buffer; both streams synchronised, the results checked,
 * the buffers unregistered. Registered memory is also reached through its
 * device pointer (cudaHostGetDevicePointer). The kernels are fakecuda's
 * built-in saxpy and fill.
 * Prints one line per step and "PASS"; exits 1 at the first wrong value
 * or failed call.
 */
#include "runtime_test.cuh"

static const int N = 1 << 16;
static const int STREAMS = 2;

int main()
{
    size_t bytes = N * sizeof(float);
    void *px = nullptr, *py = nullptr;
    if (posix_memalign(&px, 4096, bytes) != 0 || posix_memalign(&py, 4096, bytes) != 0) {
        std::puts("FAIL posix_memalign");
        return 1;
    }
    float *hx = (float *)px, *hy = (float *)py;
    for (int i = 0; i < N; i++) {
        hx[i] = (float)i;
        hy[i] = -1.0f;
    }
    CHECK(cudaHostRegister(hx, bytes, cudaHostRegisterMapped));
    CHECK(cudaHostRegister(hy, bytes, cudaHostRegisterMapped));
    unsigned flags = 0;
    CHECK(cudaHostGetFlags(&flags, hx));
    std::printf("registered: flags mapped %s\n", (flags & cudaHostRegisterMapped) ? "yes" : "no");
    int bad = !(flags & cudaHostRegisterMapped);

    float *dx, *dy;
    CHECK(cudaMalloc(&dx, bytes));
    CHECK(cudaMalloc(&dy, bytes));
    cudaStream_t s[STREAMS];
    for (int k = 0; k < STREAMS; k++)
        CHECK(cudaStreamCreate(&s[k]));
    int part = N / STREAMS;
    for (int k = 0; k < STREAMS; k++) {
        int off = k * part;
        CHECK(cudaMemcpyAsync(dx + off, hx + off, part * sizeof(float), cudaMemcpyHostToDevice, s[k]));
        fill<<<part / 256, 256, 0, s[k]>>>(dy + off, part, (float)(k + 1));
        CHECK(cudaGetLastError());
        saxpy<<<part / 256, 256, 0, s[k]>>>(part, 3.0f, dx + off, dy + off);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(hy + off, dy + off, part * sizeof(float), cudaMemcpyDeviceToHost, s[k]));
    }
    for (int k = 0; k < STREAMS; k++)
        CHECK(cudaStreamSynchronize(s[k]));
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += hy[i] != 3.0f * (float)i + (float)(i / part + 1);
    std::printf("two streams: y[1]=%g y[%d]=%g, %d wrong\n", hy[1], N - 1, hy[N - 1], wrong);
    bad += wrong;

    /* the registered buffer through its device pointer: y = 2x + y in place */
    float *mx, *my;
    CHECK(cudaHostGetDevicePointer((void **)&mx, hx, 0));
    CHECK(cudaHostGetDevicePointer((void **)&my, hy, 0));
    saxpy<<<N / 256, 256>>>(N, 2.0f, mx, my);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += hy[i] != 5.0f * (float)i + (float)(i / part + 1);
    std::printf("mapped: y[1]=%g, %d wrong\n", hy[1], wrong);
    bad += wrong;

    for (int k = 0; k < STREAMS; k++)
        CHECK(cudaStreamDestroy(s[k]));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaHostUnregister(hx));
    CHECK(cudaHostUnregister(hy));
    free(px);
    free(py);
    std::puts(bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
