/*
 * rel_soak.c - N launches (default 1,000,000; REL_SOAK_LAUNCHES or argv[1])
 * under the shim with a failure every 1,000: the failed launch taints its
 * buffer, the next launch is skipped, a read is refused, a memset releases
 * the buffer.  RSS is sampled 20 times; after the first tenth (warm-up) it
 * must not grow by more than 2 MiB (the report file is on disk, not in memory).
 * Re-executes itself with LD_PRELOAD=libcutaint.so.
 */
#include <cuda.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rel_env.h"

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

#define CHECK(x)                                                 \
    do {                                                         \
        CUresult r_ = (x);                                       \
        if (r_ != CUDA_SUCCESS) {                                \
            fprintf(stderr, "rel_soak: %s = %d\n", #x, (int)r_); \
            return 1;                                            \
        }                                                        \
    } while (0)

int main(int argc, char **argv)
{
    if (!getenv("REL_PRELOADED")) {
        rel_preload_env();
        setenv("REL_PRELOADED", "1", 1);
        execv("/proc/self/exe", argv);
        perror("exec");
        return 3;
    }
    uint64_t n = argc > 1                      ? strtoull(argv[1], NULL, 0)
                 : getenv("REL_SOAK_LAUNCHES") ? strtoull(getenv("REL_SOAK_LAUNCHES"), NULL, 0)
                                               : 1000000;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fill;
    CUdeviceptr buf, other;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    CHECK(cuModuleLoadData(&mod, "soak"));
    CHECK(cuModuleGetFunction(&fill, mod, "_Z4fillPfif"));
    CHECK(cuMemAlloc(&buf, 4096));
    CHECK(cuMemAlloc(&other, 4096));
    int cnt = 1024;
    float v = 1;
    void *kp[] = {&buf, &cnt, &v};
    float host[16];
    long base = 0, peak = 0, samples[21] = {0};
    uint64_t refused = 0, failed = 0;
    uint64_t step = n / 20 ? n / 20 : 1; /* 20 RSS samples */
    for (uint64_t i = 1; i <= n; i++) {
        if (i % 1000 == 0) {
            if (cuLaunchKernel(fill, 4, 1, 1, 2048, 1, 1, 0, 0, kp, NULL) != CUDA_SUCCESS) /* INVALID_VALUE */
                failed++;
            CHECK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, 0, kp, NULL)); /* skipped */
            if (cuMemcpyDtoH(host, buf, sizeof host) != CUDA_SUCCESS)
                refused++;
            CHECK(cuMemsetD8(buf, 0, 4096)); /* released */
        } else {
            CHECK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, 0, kp, NULL));
        }
        if (i % step == 0) {
            CHECK(cuCtxSynchronize());
            long r = rss_kib();
            samples[i / step <= 20 ? i / step : 20] = r;
            if (i <= n / 10 + step && !base)
                base = i >= n / 10 ? r : 0;
            peak = r > peak ? r : peak;
        }
    }
    CHECK(cuCtxSynchronize());
    printf("rel_soak: %" PRIu64 " launches, %" PRIu64 " failed, %" PRIu64 " reads refused; RSS KiB:", n, failed,
           refused);
    for (int i = 1; i <= 20; i++)
        printf(" %ld", samples[i]);
    printf("\n");
    if (failed != n / 1000 || refused != n / 1000) {
        printf("rel_soak: expected %" PRIu64 " failures and refusals\n", n / 1000);
        return 1;
    }
    if (base && peak - base > 2048) {
        printf("rel_soak: RSS grew by %ld KiB after warm-up\n", peak - base);
        return 1;
    }
    printf("rel_soak: constant memory (growth after warm-up %ld KiB)\n", base ? peak - base : 0);
    return 0;
}
