// wrong_arch.cu: a build for another GPU, and which call says so.
//
// tests/gpu/run.sh builds this program, and the module it loads
// (driver_kernels.cu as a fatbin), with -gencode arch=compute_80,code=sm_80
// only: sm_80 SASS and no PTX, which an sm_90 GPU can neither run nor
// compile. It records which call reports that, under the loading mode the
// scenario sets (CUDA_MODULE_LOADING=EAGER or LAZY), so that fakecuda's
// emulation (subprojects/fakecuda/README.md, "Module images": the lazy mode's
// FAKECUDA_LAZY_IMAGE_ERRORS=load|lookup|launch) can be checked against it:
//
// 1. Driver API: cuModuleLoad of the fatbin, cuModuleGetFunction("scale"),
//    cuFuncIsLoaded, cuFuncLoad (on a second module, so that the launch is
//    still the function's first use), cuLaunchKernel, cuCtxSynchronize.
// 2. Runtime API: cudaMalloc (the runtime's start), a launch of this
//    file's own kernel, cudaDeviceSynchronize.
// Each part stops at its first error. The kernels scale a buffer in place,
// and the copy back says whether one ran (it must not).
//
// Usage: wrong_arch MODULE.fatbin. It runs on fakecuda too, whose built-in
// extern "C" scale has this signature.
// Output: human-readable lines, then "RESULT key=value" lines for run.sh:
// loading_mode, drv_<call>, drv_loaded, drv_point (load, lookup, launch or
// none), drv_code, drv_ran, rt_<call>, rt_point (start, launch, sync or
// none), rt_code, rt_ran.
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>

extern "C" __global__ void scale(float *data, int n, float factor)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] *= factor;
}

static const int N = 1024;
static const float FACTOR = 3.0f;

static const char *name(CUresult r)
{
    const char *s = nullptr;
    return cuGetErrorName(r, &s) == CUDA_SUCCESS && s ? s : "?";
}

static void result(const char *key, const char *value)
{
    printf("RESULT %s=%s\n", key, value);
}

// Whether h holds the input scaled: some kernel ran.
static const char *ran(const std::vector<float> &h)
{
    for (int i = 0; i < N; ++i)
        if (h[i] != FACTOR * (float)i)
            return "no";
    return "yes";
}

// The first failing step names the point; later steps are not reached.
struct steps {
    const char *point = "none";
    const char *code = "none";
    bool failed(const char *where, const char *code_name, bool error)
    {
        if (error && !std::strcmp(point, "none")) {
            point = where;
            code = code_name;
        }
        return error;
    }
};

static void driver_part(const char *path, const std::vector<float> &h_in)
{
    steps s;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod, mod2;
    CUfunction fn, fn2;
    CUmoduleLoadingMode mode;
    cuInit(0);
    cuDeviceGet(&dev, 0);
    cuDevicePrimaryCtxRetain(&ctx, dev);
    cuCtxSetCurrent(ctx);
    CUresult r = cuModuleGetLoadingMode(&mode);
    result("loading_mode", r != CUDA_SUCCESS ? name(r) : mode == CU_MODULE_EAGER_LOADING ? "EAGER" : "LAZY");
    std::vector<float> h(N, -1.0f);
    const char *ran_it = "no";
    CUresult load = cuModuleLoad(&mod, path);
    result("drv_load", name(load));
    if (!s.failed("load", name(load), load != CUDA_SUCCESS)) {
        CUresult lookup = cuModuleGetFunction(&fn, mod, "scale");
        result("drv_lookup", name(lookup));
        if (!s.failed("lookup", name(lookup), lookup != CUDA_SUCCESS)) {
            CUfunctionLoadingState st;
            CUresult q = cuFuncIsLoaded(&st, fn);
            result("drv_loaded", q != CUDA_SUCCESS                        ? name(q)
                                 : st == CU_FUNCTION_LOADING_STATE_LOADED ? "LOADED"
                                                                          : "UNLOADED");
            CUresult fl = cuModuleLoad(&mod2, path);
            if (fl == CUDA_SUCCESS)
                fl = cuModuleGetFunction(&fn2, mod2, "scale");
            if (fl == CUDA_SUCCESS)
                fl = cuFuncLoad(fn2);
            result("drv_funcload", name(fl));
            CUdeviceptr d;
            int n = N;
            float f = FACTOR;
            void *args[] = {&d, &n, &f};
            if (cuMemAlloc(&d, N * sizeof(float)) == CUDA_SUCCESS &&
                cuMemcpyHtoD(d, h_in.data(), N * sizeof(float)) == CUDA_SUCCESS) {
                CUresult launch = cuLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
                result("drv_launch", name(launch));
                if (!s.failed("launch", name(launch), launch != CUDA_SUCCESS)) {
                    CUresult sync = cuCtxSynchronize();
                    result("drv_sync", name(sync));
                    s.failed("sync", name(sync), sync != CUDA_SUCCESS);
                }
                if (cuMemcpyDtoH(h.data(), d, N * sizeof(float)) == CUDA_SUCCESS)
                    ran_it = ran(h);
                cuMemFree(d);
            }
        }
    }
    printf("driver API: the first error at %s: %s\n", s.point, s.code);
    result("drv_point", s.point);
    result("drv_code", s.code);
    result("drv_ran", ran_it);
}

static void runtime_part(const std::vector<float> &h_in)
{
    steps s;
    std::vector<float> h(N, -1.0f);
    const char *ran_it = "no";
    float *d = nullptr;
    cudaError_t start = cudaMalloc(&d, N * sizeof(float));
    result("rt_malloc", cudaGetErrorName(start));
    if (!s.failed("start", cudaGetErrorName(start), start != cudaSuccess) &&
        cudaMemcpy(d, h_in.data(), N * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess) {
        scale<<<N / 256, 256>>>(d, N, FACTOR);
        cudaError_t launch = cudaGetLastError();
        result("rt_launch", cudaGetErrorName(launch));
        if (!s.failed("launch", cudaGetErrorName(launch), launch != cudaSuccess)) {
            cudaError_t sync = cudaDeviceSynchronize();
            result("rt_sync", cudaGetErrorName(sync));
            s.failed("sync", cudaGetErrorName(sync), sync != cudaSuccess);
        }
        if (cudaMemcpy(h.data(), d, N * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess)
            ran_it = ran(h);
        cudaFree(d);
    }
    printf("runtime API: the first error at %s: %s\n", s.point, s.code);
    result("rt_point", s.point);
    result("rt_code", s.code);
    result("rt_ran", ran_it);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODULE.fatbin\n", argv[0]);
        return 2;
    }
    std::vector<float> h_in(N);
    for (int i = 0; i < N; ++i)
        h_in[i] = (float)i;
    driver_part(argv[1], h_in);
    runtime_part(h_in);
    return 0;
}
