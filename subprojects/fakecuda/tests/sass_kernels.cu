// sass_kernels.cu: device code test_libraries.c loads as SASS only (an
// sm_90 cubin, no PTX), as NVIDIA's libraries ship theirs: a kernel no
// built-in or plugin names, and a __device__ variable it reads.
__device__ float offsets[16];

__global__ void add_offsets(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] += offsets[i % 16];
}
