// ptx_kernels.cu: kernels of our own for fakecuda's PTX executor
// (test_ptx.c). nvcc compiles them to PTX text and to a fatbin at build
// time; the test runs them on fakecuda and checks every result against
// the same computation on the host. extern "C" keeps the names plain.
#include <cstdio>
#include <cassert>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <cooperative_groups.h>

__device__ unsigned g_counter;
__constant__ int c_table[4] = {3, 5, 7, 11};

// Integer and float arithmetic, conversions, selects.
extern "C" __global__ void arith(const int *a, const float *b, int *oi, float *of, unsigned *ou, double *od, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = a[i];
    float y = b[i];
    oi[i * 4 + 0] = x * 7 - (x >> 2) + (x % 5) + c_table[i & 3];
    oi[i * 4 + 1] = __float2int_rn(y * 3.5f) ^ __popc(x) ^ (__clz(x | 1) << 8);
    oi[i * 4 + 2] = x > 10 ? min(x, 100) : max(x, -100);
    oi[i * 4 + 3] = __brev(x) ^ __byte_perm(x, 0x12345678, 0x3210 + (i & 7));
    of[i * 2 + 0] = fmaf(y, 1.5f, -2.0f) / (1.0f + fabsf(y));
    of[i * 2 + 1] = sqrtf(fabsf(y)) + (float)x * 0.25f + __half2float(__float2half(y));
    ou[i] = (unsigned)x * 2654435761u + __umulhi((unsigned)x, 2654435761u);
    od[i] = (double)y * (double)x + 1.0 / (double)(i + 1);
}

// Directed rounding (interval arithmetic's): f32 and f64, down and up.
extern "C" __global__ void rounding(const float *a, const double *b, float *of, double *od)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    of[i * 2 + 0] = __fadd_rd(a[i], 1.0f / 3.0f);
    of[i * 2 + 1] = __fadd_ru(a[i], 1.0f / 3.0f);
    od[i * 2 + 0] = __dmul_rd(b[i], 0.1);
    od[i * 2 + 1] = __ddiv_ru(b[i], 3.0);
}

// A double shuffled between lanes: nvcc splits it into two 32-bit halves
// (mov.b64 {lo, hi}) and joins them again.
extern "C" __global__ void shfl_double(const double *in, double *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lanes = __activemask();
    out[i] = __shfl_xor_sync(lanes, in[i], 1) * 2.0;
}

// A block's sum: dynamic shared memory, barriers, then a warp shuffle.
extern "C" __global__ void block_sum(const float *in, float *out, int n)
{
    extern __shared__ float s[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k >= 32; k >>= 1) {
        if (t < k)
            s[t] += s[t + k];
        __syncthreads();
    }
    if (t < 32) {
        float v = s[t];
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, o);
        if (t == 0)
            out[blockIdx.x] = v;
    }
}

// Divergent loops: each lane its own trip count.
extern "C" __global__ void collatz(const unsigned *in, unsigned *steps, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned long long v = in[i];
    unsigned s = 0;
    while (v != 1) {
        v = (v & 1) ? 3 * v + 1 : v / 2;
        s++;
    }
    steps[i] = s;
}

// Warp votes, ballots, matches and shuffles, some inside a divergent branch.
extern "C" __global__ void warp_ops(const int *in, unsigned *out)
{
    int t = threadIdx.x, v = in[t];
    unsigned *o = out + t * 6;
    o[0] = __ballot_sync(0xffffffffu, v & 1);
    o[1] = __any_sync(0xffffffffu, v == 7) | (__all_sync(0xffffffffu, v >= 0) << 1);
    o[2] = __match_any_sync(0xffffffffu, v % 3);
    o[3] = (unsigned)__shfl_xor_sync(0xffffffffu, v, 5);
    o[4] = (unsigned)__shfl_sync(0xffffffffu, v, (t * 7) & 31);
    if (v & 1)
        o[5] = __activemask();
    else
        o[5] = (unsigned)__shfl_up_sync(__activemask(), v, 1);
}

// Atomics on global and shared memory.
extern "C" __global__ void histogram(const unsigned *in, unsigned *bins, float *fsum, int n)
{
    __shared__ unsigned local[16];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    if (t < 16)
        local[t] = 0;
    __syncthreads();
    if (i < n) {
        atomicAdd(&local[in[i] & 15], 1u);
        atomicAdd(fsum, 0.5f);
        atomicInc(&g_counter, 1000000u);
    }
    __syncthreads();
    if (t < 16)
        atomicAdd(&bins[t], local[t]);
}

// Device functions, recursion and a local array indexed at run time.
__device__ __noinline__ unsigned long long fact(unsigned k)
{
    return k <= 1 ? 1ull : k * fact(k - 1);
}

extern "C" __global__ void calls(const int *in, unsigned long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int local[16];
    for (int k = 0; k < 16; k++)
        local[k] = k * in[i];
    out[i] = fact(in[i] % 20) + local[in[i] & 15];
}

// 2D launch: every thread writes its coordinates.
extern "C" __global__ void coords(unsigned *out)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned w = gridDim.x * blockDim.x;
    out[y * w + x] = (y << 16) | x | (threadIdx.z << 30);
}

extern "C" __global__ void say(int v)
{
    if (threadIdx.x < 2)
        printf("lane %u says %d %5.2f %s %c %llx\n", threadIdx.x, v, v * 0.5, "hi", 'A' + (int)threadIdx.x,
               0x1234567890ull);
}

extern "C" __global__ void check(int v)
{
    assert(v != 3);
}

extern "C" __global__ void poke(int *p, int v)
{
    p[threadIdx.x] = v;
}

extern "C" __global__ void stop(int v)
{
    if (v)
        __trap();
}

extern "C" __global__ void heap(unsigned *out)
{
    unsigned *p = (unsigned *)malloc(64 * sizeof(unsigned));
    if (!p) {
        out[threadIdx.x] = 0xdead;
        return;
    }
    for (int k = 0; k < 64; k++)
        p[k] = threadIdx.x + k;
    unsigned s = 0;
    for (int k = 0; k < 64; k++)
        s += p[k];
    free(p);
    out[threadIdx.x] = s;
}

// cp.async through the pipeline primitives: global to shared, then back doubled.
extern "C" __global__ void async_copy(const float4 *in, float4 *out)
{
    __shared__ float4 s[64];
    __pipeline_memcpy_async(&s[threadIdx.x], &in[threadIdx.x], sizeof(float4));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    float4 v = s[63 - threadIdx.x];
    out[threadIdx.x] = make_float4(2 * v.x, 2 * v.y, 2 * v.z, 2 * v.w);
}

// Warp-wide operations over a subset of the warp (a labeled partition's mask).
extern "C" __global__ void partition_ops(const int *in, unsigned *out)
{
    int t = threadIdx.x, v = in[t];
    unsigned group = __match_any_sync(0xffffffffu, v % 4);
    out[t * 2] = (unsigned)__reduce_max_sync(group, v);
    out[t * 2 + 1] = __ballot_sync(group, v > 50);
}

// ---- mbarrier (PTX ISA's mbarrier.*), written as inline PTX to name each operation ----

__device__ __forceinline__ unsigned smem(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ unsigned long long mb_arrive(unsigned long long *bar)
{
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(smem(bar)) : "memory");
    return state;
}

__device__ __forceinline__ void mb_wait(unsigned long long *bar, unsigned long long state)
{
    unsigned done;
    do
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(smem(bar)), "l"(state)
                     : "memory");
    while (!done);
}

__device__ __forceinline__ unsigned mb_test_parity(unsigned long long *bar, unsigned parity)
{
    unsigned done;
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem(bar)), "r"(parity)
                 : "memory");
    return done;
}

// Two phases of one mbarrier among the block's warps (each thread reads what a
// thread of another warp stored before arriving), cp.async arriving on a second
// one (.noinc), and one thread's transaction count on a third: info[] records
// what its waits and pending_count saw.
extern "C" __global__ void mbarrier_phases(const int *in, int *out, unsigned *info)
{
    __shared__ unsigned long long bar, copies, tx;
    __shared__ int s[256], s2[256];
    __shared__ __align__(16) int4 staged[256];
    int t = threadIdx.x, n = blockDim.x;
    if (t == 0) {
        asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(smem(&bar)), "r"(n));
        asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(smem(&copies)), "r"(2 * n));
        asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(smem(&tx)), "r"(1));
    }
    __syncthreads();
    s[t] = in[t] * 3;
    unsigned long long st = mb_arrive(&bar);
    mb_wait(&bar, st);
    out[t] = s[(t + 37) % n];
    s2[t] = in[t] + t;
    mb_arrive(&bar);
    while (!mb_test_parity(&bar, 1)) // the second phase's parity is 1
        __nanosleep(10);
    out[n + t] = s2[(t + 65) % n];
    // cp.async with the mbarrier tracking it: 2n arrivals, n of them the copies'
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(smem(&staged[t])),
                 "l"((const int4 *)in + (t % (n / 4))));
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(smem(&copies)));
    mb_wait(&copies, mb_arrive(&copies));
    int4 v = staged[(t + 99) % n];
    out[2 * n + t] = v.x + v.y + v.z + v.w;
    if (t == 0) {
        unsigned long long a;
        unsigned pending, before, after, count;
        asm volatile("mbarrier.expect_tx.shared.b64 [%0], 16;" ::"r"(smem(&tx)));
        asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(a) : "r"(smem(&tx)));
        asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(count) : "l"(a));
        asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(before)
                     : "r"(smem(&tx)), "l"(a));
        asm volatile("mbarrier.complete_tx.shared.b64 [%0], 16;" ::"r"(smem(&tx)));
        asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(after)
                     : "r"(smem(&tx)), "l"(a));
        pending = mb_test_parity(&bar, 0); // two phases done: the third, parity 0 again, is pending
        info[0] = count;
        info[1] = before;
        info[2] = after;
        info[3] = pending;
        asm volatile("mbarrier.inval.shared.b64 [%0];" ::"r"(smem(&tx)));
    }
}

// Cooperative groups' grid sync (cuLaunchCooperativeKernel): each round every
// thread reads what a thread of another block wrote before the sync.
extern "C" __global__ void grid_rounds(int *a, int *b, int n, int rounds)
{
    cooperative_groups::grid_group g = cooperative_groups::this_grid();
    int i = (int)g.thread_rank();
    for (int r = 0; r < rounds; r++) {
        b[i] = a[(i + blockDim.x + 1) % n] + r;
        g.sync();
        a[i] = b[i] * 2;
        g.sync();
    }
}

// ---- indirect calls: virtual functions (a vtable of function addresses) and
// a table of function pointers; each warp calls one target ----

struct Shape {
    int v;
    __device__ explicit Shape(int v) : v(v)
    {
    }
    __device__ virtual int grow(int k) const
    {
        return v + k;
    }
    __device__ virtual ~Shape()
    {
    }
};

struct Square : Shape {
    __device__ explicit Square(int v) : Shape(v)
    {
    }
    __device__ int grow(int k) const override
    {
        return v * v - k;
    }
};

__device__ __noinline__ int grow_through(const Shape *s, int k)
{
    return s->grow(k);
}

__device__ __noinline__ int twice(int x)
{
    return 2 * x;
}

__device__ __noinline__ int negate(int x)
{
    return -x;
}

__device__ int (*g_ops[2])(int) = {twice, negate}; // not const: read at run time

extern "C" __global__ void indirect_calls(const int *in, int *out)
{
    int t = threadIdx.x, warp = t / 32;
    Shape *s = warp & 1 ? new Square(in[t]) : new Shape(in[t]);
    out[2 * t] = grow_through(s, t);
    delete s;
    int (*op)(int) = g_ops[(warp >> 1) & 1];
    out[2 * t + 1] = op(in[t]);
}
