// Kernels of the PTX tests/unit/meson.build has nvcc write for test_ptx.c,
// each with the direction of every parameter that test_ptx.c expects of
// core/ptx.c: L loaded through, S stored through, B both, - neither.
#include <cuda_pipeline.h>
#include <mma.h>

struct Pair {
    float *src;
    float *dst;
    int n;
};

// out S, in L, n -: a grid-stride loop reads in, one store writes out.
__global__ void sum_into(float *out, float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0;
    for (int j = i; j < n; j += gridDim.x * blockDim.x)
        s += in[j];
    if (i < n)
        out[i] = s;
}

// p B, n -
__global__ void scale(float *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] *= 2.0f;
}

// c B: an atomic reads and writes.
__global__ void atomic_count(int *c)
{
    atomicAdd(c, 1);
}

// p B: one parameter, its src read and its dst written.
__global__ void copy_pair(Pair p)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        p.dst[i] = p.src[i];
}

// p L, out S: both of the struct's pointers only read.
__global__ void gather(Pair p, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        out[i] = p.src[i] + p.dst[i];
}

// - -
__global__ void unused(float *p, int n)
{
}

// in L (ld.global.nc), out S
__global__ void read_only(const float *__restrict__ in, float *out)
{
    out[threadIdx.x] = __ldg(in + threadIdx.x);
}

// p B: the pointer itself is stored, so anything may write through it later.
__device__ float *stash;
__global__ void leak(float *p)
{
    stash = p;
}

// p B: handed to a device function; q L
__device__ __noinline__ void helper(float *p)
{
    *p = 0;
}
__global__ void calls(float *p, float *q)
{
    if (*q > 0)
        helper(p);
}

// pp L, out S: what is stored through is a pointer read from pp's buffer,
// not pp.
__global__ void chase(float **pp, float *out)
{
    float *p = pp[threadIdx.x];
    *p = 1;
    out[threadIdx.x] = 2;
}

// in L, out S: cp.async from in into shared memory, then a store.
__global__ void async_copy(const float *in, float *out)
{
    __shared__ float tile[256];
    __pipeline_memcpy_async(&tile[threadIdx.x], &in[threadIdx.x], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[threadIdx.x] = tile[255 - threadIdx.x];
}

// a L, b L, c S, ld -: wmma's loads and store, the stride only a stride.
__global__ void mma_tile(const half *a, const half *b, float *c, unsigned ld)
{
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, ld);
    wmma::load_matrix_sync(fb, b, ld);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, ld, wmma::mem_row_major);
}

// p B, out B: &p.v[i] takes the address of a __grid_constant__ parameter,
// and from an address in the parameter space any parameter can be read.
struct Table {
    float v[8];
};
__global__ void indexed(const __grid_constant__ Table p, int i, float *out)
{
    out[threadIdx.x] = p.v[i];
}
