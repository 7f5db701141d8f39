// driver_kernels.cu: the module driver_api loads at run time. run.sh compiles
// it twice with nvcc -arch=sm_90: to a cubin (-cubin) and to PTX (-ptx, which
// the driver JIT-compiles when it loads it); and once as a fatbin for sm_80
// only, the module wrong_arch.cu loads to see the driver refuse it. extern "C" keeps the name
// unmangled, as driver-API code usually does. (The signature is also that of
// fakecuda's built-in "scale", so the program runs on the CPU driver too.)
extern "C" __global__ void scale(float *data, int n, float factor)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] *= factor;
}
