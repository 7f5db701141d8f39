/*
 * cufft.c: cuFFT on fakecuda: a 1-D single-precision complex plan on a
 * stream of ours, a forward transform checked against a direct DFT
 * computed here, the inverse giving back N times the input (cuFFT does not
 * scale), the plan destroyed; and a plan of size 0, which the library
 * refuses (CUFFT_INVALID_SIZE). cuFFT's kernels for these sizes ship PTX,
 * so the numbers are checked (meson runs it with FAKECUDA_PTX=on); a
 * kernel without PTX would leave its output unwritten under
 * FAKECUDA_SASS=nowrite and the check would fail, not pass.
 */
#include "libs_test.h"

#include <cufft.h>
#include <math.h>

enum { N = 64, BATCH = 2 };

static int close_to(float got, double want)
{
    return fabs(got - want) <= 1e-3 * (1.0 + fabs(want));
}

/* Whether out is the DFT of in (sign -1: forward), batch by batch. */
static int is_dft(const cufftComplex *in, const cufftComplex *out)
{
    for (int b = 0; b < BATCH; b++)
        for (int k = 0; k < N; k++) {
            double re = 0, im = 0;
            for (int n = 0; n < N; n++) {
                double a = -2.0 * M_PI * (double)k * n / N;
                const cufftComplex x = in[b * N + n];
                re += x.x * cos(a) - x.y * sin(a);
                im += x.x * sin(a) + x.y * cos(a);
            }
            if (!close_to(out[b * N + k].x, re) || !close_to(out[b * N + k].y, im)) {
                printf("FAIL bin %d of batch %d: (%g, %g), expected (%g, %g)\n", k, b, out[b * N + k].x,
                       out[b * N + k].y, re, im);
                return 0;
            }
        }
    return 1;
}

int main(void)
{
    static cufftComplex in[N * BATCH], out[N * BATCH];
    for (int i = 0; i < N * BATCH; i++) {
        in[i].x = (float)((i * 7) % 13) - 6.0f;
        in[i].y = (float)((i * 5) % 11) * 0.5f;
    }
    cufftHandle plan;
    cudaStream_t stream;
    cufftComplex *d;
    CHECK_RT(cudaStreamCreate(&stream));
    CHECK_RT(cudaMalloc((void **)&d, sizeof in));
    CHECK_RT(cudaMemcpy(d, in, sizeof in, cudaMemcpyHostToDevice));
    CHECK_LIB(cufftPlan1d(&plan, N, CUFFT_C2C, BATCH), CUFFT_SUCCESS);
    CHECK_LIB(cufftSetStream(plan, stream), CUFFT_SUCCESS);
    CHECK_LIB(cufftExecC2C(plan, d, d, CUFFT_FORWARD), CUFFT_SUCCESS);
    CHECK_RT(cudaStreamSynchronize(stream));
    CHECK_RT(cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost));
    if (!is_dft(in, out))
        return 1;
    printf("forward transform: the DFT of the input\n");
    CHECK_LIB(cufftExecC2C(plan, d, d, CUFFT_INVERSE), CUFFT_SUCCESS);
    CHECK_RT(cudaStreamSynchronize(stream));
    CHECK_RT(cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N * BATCH; i++)
        if (!close_to(out[i].x, (double)N * in[i].x) || !close_to(out[i].y, (double)N * in[i].y)) {
            printf("FAIL inverse element %d: (%g, %g), expected N times (%g, %g)\n", i, out[i].x, out[i].y, in[i].x,
                   in[i].y);
            return 1;
        }
    printf("inverse transform: N times the input\n");
    CHECK_LIB(cufftDestroy(plan), CUFFT_SUCCESS);
    cufftHandle refused;
    CHECK_LIB(cufftPlan1d(&refused, 0, CUFFT_C2C, 1), CUFFT_INVALID_SIZE);
    CHECK_RT(cudaFree(d));
    CHECK_RT(cudaStreamDestroy(stream));
    printf("PASS\n");
    return 0;
}
