// exec_kernels.cu: the PTX executor's benchmark kernels (exec_bench.c);
// exec_plugin.c computes the same in C. extern "C" keeps the names plain,
// so the plugin's registration of the same names wins when it is loaded.
extern "C" __global__ void arith(float *out, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = (float)i * 0.001f, b = 1.0001f;
    unsigned h = (unsigned)i;
    for (int k = 0; k < iters; k++) {
        a = fmaf(a, b, 0.5f);
        h = h * 1664525u + 1013904223u;
        b = b + (float)(h >> 28) * 1e-6f;
    }
    out[i] = a + (float)(h & 0xff);
}

extern "C" __global__ void copy(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * 2.0f;
}

extern "C" __global__ void reduce(const float *in, float *out)
{
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (t < k)
            s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
