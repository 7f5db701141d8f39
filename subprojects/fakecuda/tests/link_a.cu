// link_a.cu: the first input test_link.c joins: one kernel with the name
// and signature of fakecuda's built-in scale, so the joined image's lookup
// finds a kernel fakecuda can run.
extern "C" __global__ void scale(float *data, int n, float factor)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] *= factor;
}
