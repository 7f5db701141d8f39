/*
 * test_ptx_oracle.c: core/ptx.c's direction reader against fakecuda's
 * write oracle. Every kernel of our suites' PTX (the files named on the
 * command line, built by nvcc from our own .cu files) runs on fakecuda's
 * PTX executor with each pointer-sized parameter pointing into a buffer of
 * its own; FAKECUDA_WRITE_LOG then says which bytes the launch wrote. A
 * parameter whose buffer was written must not be called read-only
 * (CT_PTX_LOADS or CT_PTX_UNUSED) by ct_ptx_directions: that answer would
 * let cutaint hand back bytes a failed launch did write.
 *
 * The launches are made to finish, not to compute anything: one block of
 * 64 threads, buffers filled with small numbers, scalars small;
 * FAKECUDA_PTX_STEPS bounds a kernel that would loop on such input, and a
 * launch that faults still logs what it wrote before the fault.
 * The test links core (the reader) and the driver (fakecuda); fakecuda
 * itself imports nothing from core.
 */
#include "ptx.h"

#include <cuda.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUF_BYTES (256u * 1024u)
#define MAX_PARAMS 64

static int failures, checked_params, stored_params;

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *b = malloc((size_t)len + 1);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    if (b)
        b[len] = '\0';
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* The buffers a launch's log line wrote into: bit i set for params[i]. */
static uint64_t written_params(const char *line, const CUdeviceptr *buf, unsigned n)
{
    uint64_t mask = 0;
    const char *p = strchr(line, ' ');
    while (p && *p == ' ') {
        unsigned long long lo, len;
        if (sscanf(p, " 0x%llx+%llu", &lo, &len) != 2)
            break;
        for (unsigned i = 0; i < n; i++)
            if (buf[i] && lo < buf[i] + BUF_BYTES && lo + len > buf[i])
                mask |= 1ull << i;
        p = strchr(p + 1, ' ');
    }
    return mask;
}

/* The last line of the log (the launch just made). */
static bool last_line(const char *log, char *out, size_t cap)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return false;
    char line[65536];
    bool any = false;
    while (fgets(line, sizeof line, f)) {
        snprintf(out, cap, "%s", line);
        any = true;
    }
    fclose(f);
    return any;
}

/* Runs kernel name of m and checks it; false when the launch lost the context. */
static bool check_kernel(CUmodule m, const char *ptx, size_t len, const char *name, const char *log)
{
    CUfunction f;
    if (cuModuleGetFunction(&f, m, name) != CUDA_SUCCESS) {
        printf("  %s: not found\n", name);
        failures++;
        return true;
    }
    size_t off[MAX_PARAMS], size[MAX_PARAMS];
    unsigned n = 0;
    while (n < MAX_PARAMS && cuFuncGetParamInfo(f, n, &off[n], &size[n]) == CUDA_SUCCESS)
        n++;
    CUdeviceptr buf[MAX_PARAMS] = {0};
    unsigned char block[4096] = {0};
    size_t used = 0;
    for (unsigned i = 0; i < n; i++) {
        if (size[i] == 8) {
            if (cuMemAlloc(&buf[i], BUF_BYTES) != CUDA_SUCCESS || cuMemsetD32(buf[i], 3, BUF_BYTES / 4) != CUDA_SUCCESS)
                abort();
            memcpy(block + off[i], &buf[i], 8);
        } else if (size[i] == 4) {
            uint32_t v = 3;
            memcpy(block + off[i], &v, 4);
        } else if (size[i] > 8) { /* a structure: every 8-byte slot points into its buffer */
            if (cuMemAlloc(&buf[i], BUF_BYTES) != CUDA_SUCCESS || cuMemsetD32(buf[i], 3, BUF_BYTES / 4) != CUDA_SUCCESS)
                abort();
            for (size_t at = 0; at + 8 <= size[i]; at += 8)
                memcpy(block + off[i] + at, &buf[i], 8);
        }
        used = off[i] + size[i];
    }
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, block, CU_LAUNCH_PARAM_BUFFER_SIZE, &used, CU_LAUNCH_PARAM_END};
    CUresult r = cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 1024, NULL, NULL, extra);
    CUresult s = r == CUDA_SUCCESS ? cuCtxSynchronize() : r;
    char line[65536];
    if (!last_line(log, line, sizeof line) || strncmp(line, name, strlen(name)) != 0) {
        /* a built-in or a plugin of the same name ran instead: not the executor's */
        printf("  %s: not run by the executor (launch %d, sync %d): skipped\n", name, r, s);
        return s == CUDA_SUCCESS;
    }
    uint64_t stored = written_params(line, buf, n);
    uint8_t dirs[MAX_PARAMS];
    int k = ct_ptx_directions(ptx, len, name, dirs, MAX_PARAMS);
    for (unsigned i = 0; i < n; i++) {
        checked_params++;
        if (!((stored >> i) & 1))
            continue;
        stored_params++;
        if (k < 0 || (dirs[i] & CT_PTX_STORES))
            continue;
        printf("  %s: parameter %u was stored through, the reader says %s\n", name, i,
               dirs[i] == CT_PTX_LOADS ? "LOADS" : "UNUSED");
        failures++;
    }
    for (unsigned i = 0; i < n; i++)
        if (buf[i])
            cuMemFree(buf[i]);
    return s == CUDA_SUCCESS;
}

/* One kernel, in a child process of its own (a fault is sticky for the
   process, as on a GPU): exits 1 on a misread, 2 when a parameter was stored
   through and read right, 0 when nothing was stored through one. */
static int run_child(const char *ptx, size_t len, const char *name, const char *log)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        failures = stored_params = 0;
        CUcontext ctx;
        CUmodule m;
        if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
            cuCtxSetCurrent(ctx) != CUDA_SUCCESS || cuModuleLoadData(&m, ptx) != CUDA_SUCCESS) {
            printf("  %s: cannot load its module\n", name);
            _exit(1);
        }
        check_kernel(m, ptx, len, name, log);
        fflush(stdout);
        _exit(failures ? 1 : stored_params ? 2 : 0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
        printf("  %s: the child died\n", name);
        return 1;
    }
    return WEXITSTATUS(status);
}

/* Each ".entry NAME(" of the text, in order. */
static void each_kernel(const char *path, const char *log)
{
    size_t len;
    char *ptx = slurp(path, &len);
    if (!ptx) {
        printf("cannot read %s\n", path);
        failures++;
        return;
    }
    printf("%s\n", path);
    for (const char *p = ptx; (p = strstr(p, ".entry ")); p++) {
        const char *s = p + 7, *e = s;
        while (*e && *e != '(' && *e != ' ' && *e != '\n')
            e++;
        char name[512];
        snprintf(name, sizeof name, "%.*s", (int)(e - s), s);
        int rc = run_child(ptx, len, name, log);
        checked_params++;
        failures += rc == 1;
        stored_params += rc == 2;
    }
    free(ptx);
}

int main(int argc, char **argv)
{
    char log[] = "/tmp/ct_ptx_oracle_XXXXXX";
    int fd = mkstemp(log);
    if (fd < 0)
        return 99;
    close(fd);
    setenv("FAKECUDA_PTX", "on", 1);
    setenv("FAKECUDA_WRITE_LOG", log, 1);
    setenv("FAKECUDA_PTX_STEPS", "2000000", 1);
    setenv("FAKECUDA_SCHEDULE", "sync", 1);
    for (int i = 1; i < argc; i++)
        each_kernel(argv[i], log);
    if (!getenv("KEEP_LOG"))
        unlink(log);
    else
        printf("log %s\n", log);
    printf("%d kernels, %d stored through a parameter, %d misread\n", checked_params, stored_params, failures);
    /* An oracle that saw no store checks nothing. */
    return failures ? 1 : stored_params == 0 ? 1 : 0;
}
