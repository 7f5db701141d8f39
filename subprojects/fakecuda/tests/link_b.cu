// link_b.cu: the second input test_link.c joins: the built-in saxpy's
// name and signature (_Z5saxpyifPKfPf), in no other image of the test.
__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
