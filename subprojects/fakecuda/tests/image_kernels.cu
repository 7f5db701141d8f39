// image_kernels.cu: the device code of the images test_images.c loads,
// built by nvcc (tests/meson.build) for one target each. Its two
// kernels have the names and signatures of fakecuda built-ins (scale and
// fill, _Z4fillPfif), so a lookup that finds one gets a kernel fakecuda can
// run; the built-in saxpy is in no image, so looking it up must fail.
// crash(float*) is a __device__ function with the mangled name of the
// built-in crash kernel (_Z5crashPf): a function symbol of a relocatable
// cubin and a .func in PTX, and in neither a kernel.
__device__ __noinline__ void crash(float *p)
{
    p[threadIdx.x] = 0.0f;
}

extern "C" __global__ void scale(float *data, int n, float factor)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] *= factor;
    if (n < 0)
        crash(data);
}

__global__ void fill(float *out, int n, float value)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = value;
}
