/*
 * client.h: what the scenario and lifecycle clients share, so the tests
 * drive and parse them one way: the scenario table and main()'s dispatch
 * (`client SCENARIO [ARG...]`), and the lines a client prints:
 *   NAME: CUDA_...                       a call's return code (say)
 *   setup NAME: CUDA_...                 a setup call failed; exit 4 (check)
 *   read LABEL: CUDA_... bytes=0xNN      every byte read was NN: the poison,
 *                                        or stale fill (describe)
 *   read LABEL: CUDA_... first=F last=L  the first and last float read
 */
#ifndef CLIENT_H
#define CLIENT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuapi.h"

static inline void say(const char *what, CUresult r)
{
    printf("%s: %s\n", what, cuapi_errname(r));
}

static inline void check(const char *what, CUresult r)
{
    if (r != CUDA_SUCCESS) {
        printf("setup %s: %s\n", what, cuapi_errname(r));
        exit(4);
    }
}

static inline void describe(const char *label, CUresult r, const unsigned char *host, size_t bytes)
{
    const char *error = cuapi_errname(r);
    size_t same = 1;
    while (same < bytes && host[same] == host[0])
        same++;
    if (same == bytes || bytes < sizeof(float)) {
        printf("read %s: %s bytes=0x%02x\n", label, error, host[0]);
        return;
    }
    float first, last;
    memcpy(&first, host, sizeof first);
    memcpy(&last, host + (bytes / sizeof(float) - 1) * sizeof(float), sizeof last);
    printf("read %s: %s first=%g last=%g\n", label, error, first, last);
}

/* What the linked clients' setup shares: the primary context of device 0,
 * current, and a module (fakecuda finds kernels by name, whatever the
 * image bytes). */
static inline void client_primary_and_module(CUcontext *ctx, CUmodule *mod)
{
    CUdevice dev;
    check("cuInit", CU(cuInit)(0));
    check("cuDeviceGet", CU(cuDeviceGet)(&dev, 0));
    check("cuDevicePrimaryCtxRetain", CU(cuDevicePrimaryCtxRetain)(ctx, dev));
    check("cuCtxSetCurrent", CU(cuCtxSetCurrent)(*ctx));
    check("cuModuleLoadData", CU(cuModuleLoadData)(mod, "any bytes: the kernels are found by name"));
}

typedef struct client_scenario {
    const char *name;
    int (*run)(int argc, char **argv);
} client_scenario;

/* Run the scenario argv[1] names with the arguments after it, once setup
 * ran; usage on stderr and 2 for an unknown or missing name. */
static inline int client_main(int argc, char **argv, const client_scenario *scenarios, size_t n, void (*setup)(void))
{
    for (size_t i = 0; argc > 1 && i < n; i++) {
        if (strcmp(argv[1], scenarios[i].name) == 0) {
            setvbuf(stdout, NULL, _IOLBF, 0);
            setup();
            return scenarios[i].run(argc - 2, argv + 2);
        }
    }
    fprintf(stderr, "usage: %s SCENARIO [ARG]; scenarios:", argv[0]);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " %s", scenarios[i].name);
    fprintf(stderr, "\n");
    return 2;
}

#endif
