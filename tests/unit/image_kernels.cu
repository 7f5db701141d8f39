// Kernels of the images tests/unit/meson.build has nvcc build for
// test_image.c: a C++ kernel, an extern "C" one, a template instance, and
// a device function of its own section that is no kernel; then kernels
// whose parameters test_image.c knows the layout of (docs/IMAGES.md).
__device__ __noinline__ float helper(float x)
{
    return x * 3.0f;
}

__global__ void fill(float *p, int n, float v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = helper(v);
}

extern "C" __global__ void plain(int *q)
{
    *q = 1;
}

template <typename T> __global__ void twice(T *p)
{
    *p *= 2;
}
template __global__ void twice<double>(double *);

// Parameter shapes: each scalar size, a pointer, a 12-byte struct of ints
// (aligned 4), a 24-byte struct holding a double (aligned 8), an aligned(16)
// struct, and a char after them.
struct three {
    int a, b, c;
};
struct mixed {
    char c;
    double d;
    int i;
};
struct __align__(16) wide
{
    float x;
};
extern "C" __global__ void shapes(char c, short s, int i, float f, double d, int *p, three t, mixed m, wide w,
                                  char last)
{
}

extern "C" __global__ void none()
{
}

// 40 parameters: (int, char, double, float *) ten times, 24 bytes each time.
#define FOUR(n) int i##n, char c##n, double d##n, float *p##n
extern "C" __global__ void many(FOUR(0), FOUR(1), FOUR(2), FOUR(3), FOUR(4), FOUR(5), FOUR(6), FOUR(7), FOUR(8),
                                FOUR(9))
{
}

// Past some 4 KiB of parameters nvcc 13.0 writes wider records.
struct big {
    int v[5000];
};
extern "C" __global__ void large(char c, big b, int last)
{
}
