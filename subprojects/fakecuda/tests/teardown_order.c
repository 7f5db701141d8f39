/*
 * teardown_order.c: where fakecuda's teardown falls among a program's exit
 * handlers (FAKECUDA_TEARDOWN). With "atexit" it is an exit handler that
 * cuInit registers, so glibc runs it after the handlers registered later
 * and before those registered earlier: one registered after cuInit still
 * finds the driver answering, one registered before finds
 * CUDA_ERROR_DEINITIALIZED. With the default, the library destructor, both
 * find it answering. argv[1] is the teardown expected: "atexit" or
 * "destructor". Exit status 0 only if both handlers ran and found what
 * that teardown promises; 3 if the earlier handler never ran.
 */
#include <cuda.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int torn_down_between; /* the expected teardown runs between the two handlers */
static int verdict;

static void expect(const char *when, CUresult want)
{
    int n = 0;
    CUresult r = cuDeviceGetCount(&n);
    if (r != want) {
        fprintf(stderr, "cuDeviceGetCount in the handler registered %s cuInit: %d, want %d\n", when, (int)r, (int)want);
        verdict = 1;
    }
}

static void registered_after_init(void)
{
    expect("after", CUDA_SUCCESS);
}

static void registered_before_init(void)
{
    expect("before", torn_down_between ? CUDA_ERROR_DEINITIALIZED : CUDA_SUCCESS);
    _exit(verdict);
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "atexit") != 0 && strcmp(argv[1], "destructor") != 0)) {
        fprintf(stderr, "usage: %s atexit|destructor\n", argv[0]);
        return 2;
    }
    torn_down_between = strcmp(argv[1], "atexit") == 0;
    atexit(registered_before_init);
    if (cuInit(0) != CUDA_SUCCESS) {
        fprintf(stderr, "cuInit failed\n");
        return 1;
    }
    atexit(registered_after_init);
    return 3;
}
