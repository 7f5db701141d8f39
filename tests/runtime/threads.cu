/*
 * threads.cu: several host threads using the CUDA runtime at once, each on
 * its own stream with its own buffers: saxpy (fakecuda's built-in) round
 * trips, checked on the host. Prints one line per thread and "PASS"; exits
 * 1 at the first wrong value or failed call.
 */
#include <thread>
#include <vector>

#include "runtime_test.cuh"

static const int THREADS = 4, ROUNDS = 50, N = 4096;

static int worker(int t)
{
    std::vector<float> x(N), y(N);
    cudaStream_t s;
    float *dx, *dy;
    if (cudaStreamCreate(&s) != cudaSuccess || cudaMalloc(&dx, N * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&dy, N * sizeof(float)) != cudaSuccess)
        return -1;
    int wrong = 0;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++) {
            x[i] = (float)(i + t);
            y[i] = (float)r;
        }
        cudaMemcpyAsync(dx, x.data(), N * sizeof(float), cudaMemcpyHostToDevice, s);
        cudaMemcpyAsync(dy, y.data(), N * sizeof(float), cudaMemcpyHostToDevice, s);
        saxpy<<<N / 256, 256, 0, s>>>(N, 2.0f, dx, dy);
        cudaMemcpyAsync(y.data(), dy, N * sizeof(float), cudaMemcpyDeviceToHost, s);
        if (cudaStreamSynchronize(s) != cudaSuccess)
            return -1;
        for (int i = 0; i < N; i++)
            wrong += y[i] != 2.0f * (float)(i + t) + (float)r;
    }
    cudaFree(dx);
    cudaFree(dy);
    cudaStreamDestroy(s);
    return wrong;
}

int main()
{
    std::vector<int> wrong(THREADS);
    std::vector<std::thread> pool;
    for (int t = 0; t < THREADS; t++)
        pool.emplace_back([t, &wrong] { wrong[t] = worker(t); });
    for (auto &th : pool)
        th.join();
    int bad = 0;
    for (int t = 0; t < THREADS; t++) {
        std::printf("thread %d: %d rounds, %d wrong\n", t, ROUNDS, wrong[t]);
        bad += wrong[t] != 0;
    }
    if (bad)
        return 1;
    std::printf("PASS\n");
    return 0;
}
