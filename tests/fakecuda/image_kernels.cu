// image_kernels.cu: the device code of the images test_images.c loads,
// built by nvcc (tests/fakecuda/meson.build) for one target each. Its two
// kernels have the names and signatures of fakecuda built-ins (scale and
// fill, _Z4fillPfif), so a lookup that finds one gets a kernel fakecuda can
// run; the built-in saxpy is in no image, so looking it up must fail.
extern "C" __global__ void scale(float *data, int n, float factor)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] *= factor;
}

__global__ void fill(float *out, int n, float value)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = value;
}
