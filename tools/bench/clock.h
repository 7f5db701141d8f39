/*
 * clock.h - what the one-off benches (image_bench, ptx_bench) time with:
 * a monotonic clock in milliseconds and the median of a run's reps.
 * Header-only, as each bench is one file.
 */
#ifndef CT_BENCH_CLOCK_H
#define CT_BENCH_CLOCK_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline int bench_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of ms[0..n), n > 0; ms is sorted in place. */
static inline double bench_median(double *ms, int n)
{
    qsort(ms, (size_t)n, sizeof *ms, bench_by_value);
    return n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}

#endif
