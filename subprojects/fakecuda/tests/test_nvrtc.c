/*
 * test_nvrtc.c: NVRTC's export table (da9151d3-3ae6-cc41-a5c0-4f26d533e328)
 * is refused quietly (CUDA_ERROR_NOT_SUPPORTED, nothing on stderr, one
 * FAKECUDA_LOG=debug line), and, where the build found libnvrtc
 * (FC_HAVE_NVRTC), NVRTC compiles on fakecuda and the PTX it makes loads
 * and runs.
 */
#include "fc_test.h"

#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#if FC_HAVE_NVRTC
#include <nvrtc.h>
#endif

static const CUuuid NVRTC_TABLE = {{(char)0xda, (char)0x91, 0x51, (char)0xd3, 0x3a, (char)0xe6, (char)0xcc, 0x41,
                                    (char)0xa5, (char)0xc0, 0x4f, 0x26, (char)0xd5, 0x33, (char)0xe3, 0x28}};

Test(nvrtc, its_table_is_refused_quietly, .init = cr_redirect_stderr)
{
    const void *t = (const void *)1;
    FAILS(cuGetExportTable(&t, &NVRTC_TABLE), CUDA_ERROR_NOT_SUPPORTED);
    cr_assert_null(t);
    OK(cuInit(0));
    t = (const void *)1;
    FAILS(cuGetExportTable(&t, &NVRTC_TABLE), CUDA_ERROR_NOT_SUPPORTED);
    cr_assert_null(t);
    fflush(stderr);
    cr_assert_stderr_eq_str("");
}

Test(nvrtc, its_table_has_one_debug_line, .init = cr_redirect_stderr)
{
    setenv("FAKECUDA_LOG", "debug", 1);
    const void *t;
    CUresult r = cuGetExportTable(&t, &NVRTC_TABLE); /* FAILS would log cuGetErrorName too */
    fflush(stderr);
    cr_assert_eq(r, CUDA_ERROR_NOT_SUPPORTED);
    cr_assert_stderr_eq_str("fakecuda: cuGetExportTable\n"
                            "fakecuda: cuGetExportTable da9151d3-3ae6-cc41-a5c0-4f26d533e328 (NVRTC): not provided\n");
}

#if FC_HAVE_NVRTC
Test(nvrtc, compiles_on_fakecuda_and_its_ptx_runs)
{
    static const char src[] = "extern \"C\" __global__ void scale(float *d, int n, float f)\n"
                              "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) d[i] *= f; }\n";
    fc_setup();
    nvrtcProgram p;
    cr_assert_eq(nvrtcCreateProgram(&p, src, "scale.cu", 0, NULL, NULL), NVRTC_SUCCESS);
    const char *opts[] = {"-arch=compute_90"};
    nvrtcResult r = nvrtcCompileProgram(p, 1, opts);
    cr_assert_eq(r, NVRTC_SUCCESS, "%s", nvrtcGetErrorString(r));
    size_t n;
    cr_assert_eq(nvrtcGetPTXSize(p, &n), NVRTC_SUCCESS);
    char *ptx = malloc(n);
    cr_assert_eq(nvrtcGetPTX(p, ptx), NVRTC_SUCCESS);
    nvrtcDestroyProgram(&p);
    CUmodule m;
    OK(cuModuleLoadData(&m, ptx));
    free(ptx);
    CUfunction f;
    OK(cuModuleGetFunction(&f, m, "scale"));
    FAILS(cuModuleGetFunction(&f, m, "_Z4fillPfif"), CUDA_ERROR_NOT_FOUND); /* its PTX was read */
    float h[64];
    for (int i = 0; i < 64; i++)
        h[i] = (float)i;
    CUdeviceptr d = fc_upload(h, sizeof h);
    int count = 64;
    float factor = 0.5f;
    void *args[] = {&d, &count, &factor};
    OK(fc_launch(f, 64, args, false, NULL));
    OK(cuMemcpyDtoH(h, d, sizeof h));
    for (int i = 0; i < 64; i++)
        cr_assert_eq(h[i], 0.5f * (float)i);
}
#endif
