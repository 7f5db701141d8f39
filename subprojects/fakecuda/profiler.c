/*
 * profiler.c: cuProfilerStart / cuProfilerStop, which cuda-samples
 * (asyncAPI, matrixMul) call around their timed work.
 *
 * There is no profiling tool to enable or disable, so the calls only check
 * what the driver checks: a current context (the driver enables collection
 * "for the current context"), else CUDA_ERROR_INVALID_CONTEXT. Starting an
 * enabled profiler or stopping a disabled one has no effect on the driver
 * either, so no state is kept. cuProfilerInitialize (deprecated, its
 * configuration file format tied to a tool that no longer exists) is not
 * emulated.
 */
#include "fakecuda.h"

static CUresult fc_profiler_toggle(void)
{
    CUcontext ctx;
    return fc_current(&ctx);
}

CUresult fc_profiler_start(void)
{
    return fc_profiler_toggle();
}

CUresult fc_profiler_stop(void)
{
    return fc_profiler_toggle();
}
