/*
 * libs_test.h: what the library test programs share: CHECK_RT (a runtime
 * call) and CHECK_LIB (a library call and the status it must answer), each
 * printing the call and its answer and ending the program with FAIL at the
 * first unexpected one, so the output, compared with and without cutaint,
 * is the list of statuses the program saw.
 */
#ifndef LIBS_TEST_H
#define LIBS_TEST_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK_RT(call)                                                                                    \
    do {                                                                                                  \
        cudaError_t e_ = (call);                                                                          \
        if (e_ != cudaSuccess) {                                                                          \
            printf("FAIL %s:%d %s: %s (%d)\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_), (int)e_); \
            exit(1);                                                                                      \
        }                                                                                                 \
    } while (0)

#define CHECK_LIB(call, want)                                                                       \
    do {                                                                                            \
        int s_ = (int)(call);                                                                       \
        printf("%s = %d\n", #call, s_);                                                             \
        if (s_ != (int)(want)) {                                                                    \
            printf("FAIL %s:%d %s: %d, expected %d\n", __FILE__, __LINE__, #call, s_, (int)(want)); \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

#endif
