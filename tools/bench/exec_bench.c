/*
 * exec_bench.c: the speed of fakecuda's PTX executor, in thread-
 * instructions per second on one core (FAKECUDA_SCHEDULE=sync: the launch
 * runs on the calling thread), for an arithmetic kernel, a memory-bound
 * kernel and a shared-memory reduction (exec_kernels.cu), beside the same
 * kernels as a C plugin (exec_plugin.c) in the same run, timed in CPU
 * time (a shared machine's wall clock counts other jobs). Each mode runs in
 * a child process of its own (fakecuda reads its settings once); the
 * executor counts the thread-instructions it ran (FAKECUDA_PTX_STATS), and
 * the plugin's rate is the same count over its own time. docs/PERFORMANCE.md
 * records the figures.
 *
 * Usage: exec_bench [exec_kernels.ptx plugin.so]  (defaults: the build's)
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 3

static const char *kernels[] = {"arith", "copy", "reduce"};

/* The process's CPU time, not the wall clock: on a machine shared with
   other jobs the wall clock counts their time too (a launch's wall time
   swings 2-10x with the load), while the launch runs on the calling thread
   (FAKECUDA_SCHEDULE=sync) and its CPU time is what the executor costs. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void check(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "exec_bench: %s failed (%d)\n", what, (int)r);
        exit(1);
    }
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) == (size_t)n)
        b[n] = '\0';
    fclose(f);
    return b;
}

/* Runs the three kernels; writes each one's best time (seconds) to times. */
static void run_mode(const char *ptx_path, double *times)
{
    CUcontext ctx;
    CUmodule m;
    check(cuInit(0), "cuInit");
    check(cuDevicePrimaryCtxRetain(&ctx, 0), "context");
    check(cuCtxSetCurrent(ctx), "context");
    char *ptx = slurp(ptx_path);
    if (!ptx)
        exit(1);
    check(cuModuleLoadData(&m, ptx), "load");
    enum { THREADS = 64 * 1024, ITERS = 64 };
    CUdeviceptr in, out;
    check(cuMemAlloc(&in, THREADS * 4), "alloc");
    check(cuMemAlloc(&out, THREADS * 4), "alloc");
    check(cuMemsetD32(in, 0x3f800000u, THREADS), "memset");
    int n = THREADS, iters = ITERS;
    void *args[3][3] = {{&out, &iters}, {&in, &out, &n}, {&in, &out}};
    for (int k = 0; k < 3; k++) {
        CUfunction f;
        check(cuModuleGetFunction(&f, m, kernels[k]), kernels[k]);
        double best = 1e30;
        for (int r = 0; r < ROUNDS; r++) {
            double t0 = now();
            check(cuLaunchKernel(f, THREADS / 256, 1, 1, 256, 1, 1, 0, NULL, args[k], NULL), "launch");
            check(cuCtxSynchronize(), "sync");
            double t = now() - t0;
            best = t < best ? t : best;
        }
        times[k] = best;
    }
}

/* One mode in a child; its times come back through a pipe. */
static void child(const char *ptx, const char *plugin, const char *stats, double *times)
{
    int fd[2];
    if (pipe(fd) != 0)
        exit(1);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        setenv("FAKECUDA_SCHEDULE", "sync", 1);
        setenv("FAKECUDA_PTX", "on", 1);
        if (plugin)
            setenv("FAKECUDA_KERNELS", plugin, 1);
        if (stats)
            setenv("FAKECUDA_PTX_STATS", stats, 1);
        double t[3];
        run_mode(ptx, t);
        _exit(write(fd[1], t, sizeof t) == sizeof t ? 0 : 1);
    }
    close(fd[1]);
    int status;
    if (read(fd[0], times, 3 * sizeof *times) != 3 * sizeof *times || waitpid(pid, &status, 0) != pid ||
        !WIFEXITED(status) || WEXITSTATUS(status)) {
        fprintf(stderr, "exec_bench: a child failed\n");
        exit(1);
    }
    close(fd[0]);
}

int main(int argc, char **argv)
{
    const char *ptx = argc > 2 ? argv[1] : EXEC_PTX, *plugin = argc > 2 ? argv[2] : EXEC_PLUGIN;
    char stats[] = "/tmp/exec_bench_XXXXXX";
    int fd = mkstemp(stats);
    if (fd < 0)
        return 1;
    close(fd);
    double t_ptx[3], t_c[3];
    child(ptx, NULL, stats, t_ptx);
    child(ptx, plugin, NULL, t_c);
    /* thread-instructions per launch, from the executor's own count */
    unsigned long long insns[3] = {0};
    FILE *f = fopen(stats, "r");
    char name[64];
    unsigned long long warp_steps, thread_steps;
    while (f && fscanf(f, "%63s %llu %llu", name, &warp_steps, &thread_steps) == 3)
        for (int k = 0; k < 3; k++)
            if (strcmp(name, kernels[k]) == 0)
                insns[k] = thread_steps;
    if (f)
        fclose(f);
    unlink(stats);
    printf("%-8s %16s %12s %14s %12s %14s %8s\n", "kernel", "thread-instr", "PTX ms", "PTX instr/s", "C ms",
           "C equiv/s", "C/PTX");
    for (int k = 0; k < 3; k++)
        printf("%-8s %16llu %12.2f %14.3g %12.3f %14.3g %8.1f\n", kernels[k], insns[k], t_ptx[k] * 1e3,
               insns[k] / t_ptx[k], t_c[k] * 1e3, insns[k] / t_c[k], t_ptx[k] / t_c[k]);
    return 0;
}
