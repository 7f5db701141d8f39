// empty_launch.cu: how many launches of an empty kernel per second the host
// can issue. run.sh runs it with and without cutaint and compares: this is
// the per-launch cost of the interposer on the happy path.
//
// Usage: empty_launch [LAUNCHES_PER_ROUND]; prints the best of three rounds.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void empty()
{
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    if (n <= 0)
        n = 200000;
    for (int i = 0; i < 1000; ++i)
        empty<<<1, 32>>>(); // warm up: module load, queue
    if (cudaDeviceSynchronize() != cudaSuccess) {
        printf("warm-up failed: %s\n", cudaGetErrorName(cudaGetLastError()));
        return 1;
    }
    double best = 0;
    for (int round = 0; round < 3; ++round) {
        auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < n; ++i)
            empty<<<1, 32>>>();
        cudaError_t e = cudaDeviceSynchronize();
        auto t1 = std::chrono::steady_clock::now();
        if (e != cudaSuccess || cudaGetLastError() != cudaSuccess) {
            printf("round %d failed: %s\n", round, cudaGetErrorName(e));
            return 1;
        }
        double rate = n / std::chrono::duration<double>(t1 - t0).count();
        printf("round %d: %ld launches, %.0f launches/s\n", round, n, rate);
        if (rate > best)
            best = rate;
    }
    printf("RESULT launches_per_sec=%.0f\n", best);
    printf("RESULT us_per_launch=%.3f\n", 1e6 / best);
    return 0;
}
