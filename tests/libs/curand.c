/*
 * curand.c: cuRAND's host API on fakecuda: a generator on a stream of
 * ours, seeded, generating uniform floats into device memory, destroyed;
 * and a generation of an odd count of normals, which the library refuses
 * (CURAND_STATUS_LENGTH_NOT_MULTIPLE). Under FAKECUDA_SASS=nowrite it
 * checks statuses, never numbers.
 */
#include "libs_test.h"

#include <curand.h>

enum { N = 1024 };

int main(void)
{
    curandGenerator_t gen;
    cudaStream_t stream;
    float *out;
    CHECK_RT(cudaStreamCreate(&stream));
    CHECK_RT(cudaMalloc((void **)&out, N * sizeof(float)));
    CHECK_LIB(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT), CURAND_STATUS_SUCCESS);
    CHECK_LIB(curandSetStream(gen, stream), CURAND_STATUS_SUCCESS);
    CHECK_LIB(curandSetPseudoRandomGeneratorSeed(gen, 1234ULL), CURAND_STATUS_SUCCESS);
    CHECK_LIB(curandGenerateUniform(gen, out, N), CURAND_STATUS_SUCCESS);
    CHECK_RT(cudaStreamSynchronize(stream));
    CHECK_LIB(curandGenerateNormal(gen, out, N - 1, 0.0f, 1.0f), CURAND_STATUS_LENGTH_NOT_MULTIPLE);
    CHECK_LIB(curandDestroyGenerator(gen), CURAND_STATUS_SUCCESS);
    CHECK_RT(cudaFree(out));
    CHECK_RT(cudaStreamDestroy(stream));
    printf("PASS\n");
    return 0;
}
