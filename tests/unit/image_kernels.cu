// Kernels of the images tests/unit/meson.build has nvcc build for
// test_image.c: a C++ kernel, an extern "C" one, a template instance, and
// a device function of its own section that is no kernel.
__device__ __noinline__ float helper(float x) { return x * 3.0f; }

__global__ void fill(float *p, int n, float v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = helper(v);
}

extern "C" __global__ void plain(int *q) { *q = 1; }

template <typename T> __global__ void twice(T *p) { *p *= 2; }
template __global__ void twice<double>(double *);
