// driver_api.cpp: a driver-API program (host code only, linked -lcuda, no CUDA
// runtime) that loads a module from a file and makes the same mistake as
// badconfig.cu: a launch with 2048 threads per block whose error it ignores,
// then a read of the result. The kernel scales a buffer in place, so without
// cutaint the read returns the unscaled input ("stale"); with cutaint it must
// fail and leave 0xff bytes.
//
// run.sh builds it twice: plain, and with -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1,
// where cuda.h maps cuLaunchKernel to cuLaunchKernel_ptsz and cuMemcpyDtoH to
// cuMemcpyDtoH_v2_ptds, the variants cutaint must also intercept.
//
// Usage: driver_api MODULE (a .cubin or .ptx file with extern "C" scale()).
// It also runs on fakecuda (subprojects/fakecuda), whose built-in "scale" has the
// same signature: LD_LIBRARY_PATH=build/subprojects/fakecuda driver_api ANY_FILE.
// Output: human-readable lines, then "RESULT key=value" lines for run.sh.
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda.h>

static const char *name(CUresult r)
{
    const char *s = nullptr;
    return cuGetErrorName(r, &s) == CUDA_SUCCESS && s ? s : "?";
}

#define CK(call)                                                                   \
    do {                                                                           \
        CUresult r_ = (call);                                                      \
        if (r_ != CUDA_SUCCESS) {                                                  \
            printf("%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, name(r_)); \
            return 1;                                                              \
        }                                                                          \
    } while (0)

// What the host buffer holds after a copy back: the scaled answer, the
// unscaled input left there (stale), cutaint's poison, or something else.
static const char *classify(const std::vector<float> &h, float a)
{
    bool correct = true, is_stale = true, poisoned = true;
    const unsigned char *b = reinterpret_cast<const unsigned char *>(h.data());
    for (size_t i = 0; i < h.size(); ++i) {
        if (h[i] != a * (float)i)
            correct = false;
        if (h[i] != (float)i)
            is_stale = false;
    }
    for (size_t i = 0; i < h.size() * sizeof(float); ++i)
        if (b[i] != 0xff)
            poisoned = false;
    return correct ? "correct" : is_stale ? "stale" : poisoned ? "poisoned" : "other";
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODULE.cubin|MODULE.ptx\n", argv[0]);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoad(&mod, argv[1]));
    CK(cuModuleGetFunction(&fn, mod, "scale"));

    int n = 1 << 16;
    float a = 2.0f;
    const size_t bytes = n * sizeof(float);
    std::vector<float> h_in(n), h_out(n);
    for (int i = 0; i < n; ++i)
        h_in[i] = (float)i;
    CUdeviceptr data;
    CK(cuMemAlloc(&data, bytes));
    CK(cuMemcpyHtoD(data, h_in.data(), bytes));

    void *args[] = {&data, &n, &a};
    CUresult launch = cuLaunchKernel(fn, n / 2048, 1, 1, 2048, 1, 1, 0, nullptr, args, nullptr);
    memset(h_out.data(), 0, bytes);
    CUresult copy = cuMemcpyDtoH(h_out.data(), data, bytes);
    const char *seen = classify(h_out, a);
    printf("cuLaunchKernel with 2048 threads: %s (ignored)\n", name(launch));
    printf("cuMemcpyDtoH back: %s, host buffer %s\n", name(copy), seen);

    // The retry sends the request again, then launches correctly.
    CK(cuMemcpyHtoD(data, h_in.data(), bytes));
    CUresult relaunch = cuLaunchKernel(fn, n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
    CUresult sync = cuCtxSynchronize();
    memset(h_out.data(), 0, bytes);
    CUresult recopy = cuMemcpyDtoH(h_out.data(), data, bytes);
    const char *reseen = classify(h_out, a);
    printf("retry with 256 threads: %s, synchronize %s; cuMemcpyDtoH back: %s, host buffer %s\n", name(relaunch),
           name(sync), name(recopy), reseen);

    CK(cuMemFree(data));
    CK(cuModuleUnload(mod));
    CK(cuDevicePrimaryCtxRelease(dev));
    printf("RESULT launch=%s\n", name(launch));
    printf("RESULT memcpy=%s\n", name(copy));
    printf("RESULT host=%s\n", seen);
    printf("RESULT retry_memcpy=%s\n", name(recopy));
    printf("RESULT retry_host=%s\n", reseen);
    return 0;
}
