/*
 * test_faults.c: FAKECUDA_FAULTS (each kind of injected fault, counting,
 * kernels launched by graphs, malformed specs) and the launch-time errors
 * the driver returns without running anything.
 */
#include "fc_test.h"

#include <criterion/redirect.h>

#include <stdio.h>
#include <stdlib.h>

static CUdeviceptr fill_launch(CUfunction f, CUdeviceptr out, int n, float v)
{
    void *args[] = {&out, &n, &v};
    OK(fc_launch(f, (unsigned)n, args, false, NULL));
    return out;
}

static float first_float(CUdeviceptr d)
{
    float v;
    OK(cuMemcpyDtoH(&v, d, sizeof v));
    return v;
}

Test(faults, api_call_fails_with_the_code_and_is_isolated)
{
    setenv("FAKECUDA_FAULTS", "api:cuMemcpyDtoH_v2#2=CUDA_ERROR_INVALID_VALUE", 1);
    fc_setup();
    float one = 1, host = 0;
    CUdeviceptr d = fc_upload(&one, sizeof one);
    OK(cuMemcpyDtoH(&host, d, sizeof host));
    host = 0;
    FAILS(cuMemcpyDtoH(&host, d, sizeof host), CUDA_ERROR_INVALID_VALUE);
    cr_assert_eq(host, 0.0f, "an injected failure does nothing");
    OK(cuMemcpyDtoH(&host, d, sizeof host));
    cr_assert_eq(host, 1.0f);
    OK(cuCtxSynchronize());
}

Test(faults, api_family_name_counts_every_variant)
{
    setenv("FAKECUDA_FAULTS", "api:cuMemAlloc#2=oom", 1);
    fc_setup();
    CUdeviceptr d;
    OK(cuMemAlloc(&d, 16));
    FAILS(cuMemAlloc(&d, 16), CUDA_ERROR_OUT_OF_MEMORY);
    OK(cuMemAlloc(&d, 16));
}

Test(faults, api_fault_reported_at_the_next_sync)
{
    setenv("FAKECUDA_FAULTS", "api:cuMemcpyHtoDAsync_v2#1=fault", 1);
    fc_setup();
    float v = 1;
    CUdeviceptr d;
    OK(cuMemAlloc(&d, sizeof v));
    OK(cuMemcpyHtoDAsync(d, &v, sizeof v, NULL));
    FAILS(cuStreamSynchronize(NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    FAILS(cuMemAlloc(&d, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
}

Test(faults, api_fault_on_a_call_without_work)
{
    setenv("FAKECUDA_FAULTS", "api:cuMemAlloc_v2#1=fault", 1);
    fc_setup();
    CUdeviceptr d;
    OK(cuMemAlloc(&d, 16));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
}

Test(faults, launch_fails_with_the_code_and_runs_nothing)
{
    setenv("FAKECUDA_FAULTS", "launch:_Z4fillPfif#1=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 1);
    fc_setup();
    CUfunction f = fc_function("_Z4fillPfif");
    CUdeviceptr out;
    OK(cuMemAlloc(&out, 64 * sizeof(float)));
    int n = 64;
    float v = 4;
    void *args[] = {&out, &n, &v};
    FAILS(fc_launch(f, 64, args, false, NULL), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    OK(cuCtxSynchronize());
    cr_assert_eq(fc_as_bits(first_float(out)), FC_STALE_WORD);
    fill_launch(f, out, 64, 4); /* the second launch is fine */
    OK(cuCtxSynchronize());
    cr_assert_eq(first_float(out), 4.0f);
}

Test(faults, launch_fault_by_glob_is_sticky)
{
    setenv("FAKECUDA_FAULTS", "launch:_Z5saxpy*#2=fault", 1);
    fc_setup();
    CUfunction f = fc_function("_Z5saxpyifPKfPf");
    float x[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    CUdeviceptr dx = fc_upload(x, sizeof x), dy = fc_upload(x, sizeof x);
    int n = 8;
    float a = 1;
    void *args[] = {&n, &a, &dx, &dy};
    OK(fc_launch(f, 8, args, false, NULL));
    OK(cuCtxSynchronize());
    OK(fc_launch(f, 8, args, false, NULL)); /* faults when it runs */
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    FAILS(fc_launch(f, 8, args, false, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
}

/* ns::put(float *p, float v): *p = v, one thread; PTX only, so the kernel
   is known only once its module is loaded, after FAKECUDA_FAULTS is read. */
static const char put_ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                              ".visible .entry _ZN2ns3putEPff(.param .u64 p, .param .f32 v)\n{\n"
                              ".reg .b64 %rd<3>;\n.reg .f32 %f<2>;\n"
                              "ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\n"
                              "ld.param.f32 %f1, [v];\nst.global.f32 [%rd2], %f1;\nret;\n}\n";

/* Under rule, the first launch of ns::put writes and the second fails with
   CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, writing nothing. */
static void expect_put_fails_second(const char *rule)
{
    setenv("FAKECUDA_FAULTS", rule, 1);
    setenv("FAKECUDA_PTX", "on", 1);
    fc_setup();
    CUmodule m;
    CUfunction f;
    OK(cuModuleLoadData(&m, put_ptx));
    OK(cuModuleGetFunction(&f, m, "_ZN2ns3putEPff"));
    CUdeviceptr out;
    OK(cuMemAlloc(&out, sizeof(float)));
    float v = 1;
    void *args[] = {&out, &v};
    OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    OK(cuCtxSynchronize());
    cr_assert_eq(first_float(out), 1.0f, "the first launch ran");
    v = 2;
    FAILS(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    OK(cuCtxSynchronize());
    cr_assert_eq(first_float(out), 1.0f, "the failed launch wrote nothing");
}

Test(faults, launch_rule_names_a_ptx_kernel_by_its_entry_name)
{
    expect_put_fails_second("launch:_ZN2ns3putEPff#2=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
}

Test(faults, launch_rule_names_a_ptx_kernel_by_its_demangled_signature)
{
    expect_put_fails_second("launch:ns::put(float?, float)#2=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
}

Test(faults, launch_rule_names_a_ptx_kernel_by_its_demangled_name)
{
    expect_put_fails_second("launch:ns::put#2=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
}

/* A kernel no module holds yet is no malformed rule: the spec stands. */
Test(faults, a_launch_rule_for_a_kernel_not_yet_loaded_is_kept)
{
    setenv("FAKECUDA_FAULTS", "launch:not_loaded_yet#1=fault;alloc#1=oom", 1);
    fc_setup();
    CUdeviceptr d;
    FAILS(cuMemAlloc(&d, 16), CUDA_ERROR_OUT_OF_MEMORY);
}

/* A graph of one fill node (out, 64, v) then one scale node (out, 64, 2). */
static CUgraphExec fill_scale_graph(CUdeviceptr out, float v)
{
    CUgraph g;
    CUgraphNode fill, scale;
    int n = 64;
    float two = 2;
    void *fargs[] = {&out, &n, &v}, *sargs[] = {&out, &n, &two};
    CUDA_KERNEL_NODE_PARAMS p = {.func = fc_function("_Z4fillPfif"),
                                 .gridDimX = 1,
                                 .gridDimY = 1,
                                 .gridDimZ = 1,
                                 .blockDimX = 64,
                                 .blockDimY = 1,
                                 .blockDimZ = 1,
                                 .kernelParams = fargs};
    OK(cuGraphCreate(&g, 0));
    OK(cuGraphAddKernelNode(&fill, g, NULL, 0, &p));
    p.func = fc_function("scale");
    p.kernelParams = sargs;
    OK(cuGraphAddKernelNode(&scale, g, &fill, 1, &p));
    CUgraphExec e;
    OK(cuGraphInstantiateWithFlags(&e, g, 0));
    return e;
}

Test(faults, launch_rules_count_kernels_launched_by_a_graph)
{
    setenv("FAKECUDA_FAULTS", "launch:scale#2=fault", 1);
    fc_setup();
    CUdeviceptr out;
    OK(cuMemAlloc(&out, 64 * sizeof(float)));
    CUgraphExec e = fill_scale_graph(out, 3);
    OK(cuGraphLaunch(e, NULL)); /* scale #1 */
    OK(cuCtxSynchronize());
    cr_assert_eq(first_float(out), 6.0f);
    OK(cuGraphLaunch(e, NULL)); /* scale #2: its work faults when it runs */
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
}

Test(faults, a_launch_rule_code_fails_the_graph_launch_and_queues_nothing)
{
    setenv("FAKECUDA_FAULTS", "launch:scale#1=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 1);
    fc_setup();
    CUdeviceptr out;
    OK(cuMemAlloc(&out, 64 * sizeof(float)));
    CUgraphExec e = fill_scale_graph(out, 3);
    FAILS(cuGraphLaunch(e, NULL), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    OK(cuCtxSynchronize());
    cr_assert_eq(fc_as_bits(first_float(out)), FC_STALE_WORD, "not even the fill ran");
    OK(cuGraphLaunch(e, NULL));
    cr_assert_eq(first_float(out), 6.0f);
}

Test(faults, api_rules_work_on_graph_entry_points)
{
    setenv("FAKECUDA_FAULTS", "api:cuGraphLaunch#1=CUDA_ERROR_INVALID_VALUE;api:cuGraphInstantiateWithFlags#2=oom", 1);
    fc_setup();
    CUdeviceptr out;
    OK(cuMemAlloc(&out, 64 * sizeof(float)));
    CUgraphExec e = fill_scale_graph(out, 1);
    FAILS(cuGraphLaunch(e, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuGraphLaunch(e, NULL));
    cr_assert_eq(first_float(out), 2.0f);
    CUgraph g;
    OK(cuGraphCreate(&g, 0));
    FAILS(cuGraphInstantiateWithFlags(&e, g, 0), CUDA_ERROR_OUT_OF_MEMORY);
}

Test(faults, nth_allocation_is_out_of_memory)
{
    setenv("FAKECUDA_FAULTS", "alloc#2=oom", 1);
    fc_setup();
    CUdeviceptr d;
    OK(cuMemAlloc(&d, 16));
    FAILS(cuMemAllocManaged(&d, 16, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_OUT_OF_MEMORY);
    OK(cuMemAllocAsync(&d, 16, NULL));
    OK(cuCtxSynchronize());
}

Test(faults, n_plus_fails_every_later_call)
{
    setenv("FAKECUDA_FAULTS", " alloc#2+=CUDA_ERROR_OUT_OF_MEMORY ; api:cuInit#1=100 ", 1);
    FAILS(cuInit(0), CUDA_ERROR_NO_DEVICE);
    fc_setup();
    CUdeviceptr d;
    OK(cuMemAlloc(&d, 16));
    for (int i = 0; i < 3; i++)
        FAILS(cuMemAlloc(&d, 16), CUDA_ERROR_OUT_OF_MEMORY);
}

static void expect_ignored(const char *spec)
{
    setenv("FAKECUDA_FAULTS", spec, 1);
    fc_setup();
    CUdeviceptr d;
    OK(cuMemAlloc(&d, 16)); /* the valid rule of the spec is ignored too */
    fflush(stderr);
    char line[512] = "";
    FILE *err = cr_get_redirected_stderr();
    cr_assert_not_null(fgets(line, sizeof line, err));
    cr_assert(strstr(line, "fakecuda: FAKECUDA_FAULTS ignored"), "stderr: %s", line);
    cr_assert_null(fgets(line, sizeof line, err), "one line only");
}

Test(faults, malformed_target_is_reported_and_ignored, .init = cr_redirect_stderr)
{
    expect_ignored("alloc#1=oom;apx:cuMemAlloc#1=oom");
}

Test(faults, malformed_count_is_reported_and_ignored, .init = cr_redirect_stderr)
{
    expect_ignored("alloc#1=oom;alloc#0=oom");
}

Test(faults, unknown_code_is_reported_and_ignored, .init = cr_redirect_stderr)
{
    expect_ignored("alloc#1=CUDA_ERROR_NOPE");
}

Test(faults, unknown_api_is_reported_and_ignored, .init = cr_redirect_stderr)
{
    expect_ignored("alloc#1=oom;api:cuMemAlocTypo#1=oom");
}

Test(faults, alloc_cannot_fault, .init = cr_redirect_stderr)
{
    expect_ignored("alloc#1=fault");
}

/* ---- launch-time errors: returned by the launch, nothing queued -------- */

static CUfunction fill;
static CUdeviceptr out;
static int n = 64;
static float value = 9;
static void *args[] = {&out, &n, &value};

static void launch_setup(void)
{
    fc_setup();
    fill = fc_function("_Z4fillPfif");
    OK(cuMemAlloc(&out, 64 * sizeof(float)));
}

static void nothing_ran(void)
{
    OK(cuCtxSynchronize());
    cr_assert_eq(fc_as_bits(first_float(out)), FC_STALE_WORD);
}

Test(launch_errors, block_and_grid_limits)
{
    launch_setup();
    FAILS(cuLaunchKernel(fill, 1, 1, 1, 1025, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLaunchKernel(fill, 1, 1, 1, 512, 2, 2, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 65, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLaunchKernel(fill, 0, 1, 1, 64, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLaunchKernel(fill, 1, 0, 1, 64, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLaunchKernel(fill, 1, 1, 1, 0, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLaunchKernel(fill, 1, 65536, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    nothing_ran();
}

Test(launch_errors, shared_memory_limit_follows_the_attribute)
{
    launch_setup();
    FAILS(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 48 * 1024 + 1, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    nothing_ran();
    OK(cuFuncSetAttribute(fill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
    OK(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 64 * 1024, NULL, args, NULL));
    FAILS(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 64 * 1024 + 1, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuCtxSynchronize());
}

Test(launch_errors, bad_function_handles)
{
    launch_setup();
    int junk[16] = {0};
    FAILS(cuLaunchKernel(NULL, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuLaunchKernel((CUfunction)(void *)junk, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_HANDLE);
    CUmodule mod;
    CUfunction f;
    OK(cuModuleLoadData(&mod, "image"));
    OK(cuModuleGetFunction(&f, mod, "_Z4fillPfif"));
    OK(cuModuleUnload(mod));
    FAILS(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_HANDLE);
    nothing_ran();
}

Test(launch_errors, bad_parameters)
{
    launch_setup();
    size_t small = 8;
    char buf[16];
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &small, CU_LAUNCH_PARAM_END};
    void *bad_key[] = {(void *)7, buf, CU_LAUNCH_PARAM_END};
    FAILS(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, NULL, args, extra), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, NULL, NULL, extra), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, NULL, NULL, bad_key), CUDA_ERROR_INVALID_VALUE);
    void *null_arg[] = {&out, NULL, &value};
    FAILS(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, NULL, null_arg, NULL), CUDA_ERROR_INVALID_VALUE);
    nothing_ran();
}

Test(launch_errors, launch_ex_and_cooperative)
{
    launch_setup();
    CUlaunchAttribute coop = {.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE, .value.cooperative = 1};
    CUlaunchConfig cfg = {.gridDimX = 1,
                          .gridDimY = 1,
                          .gridDimZ = 1,
                          .blockDimX = 64,
                          .blockDimY = 1,
                          .blockDimZ = 1,
                          .attrs = &coop,
                          .numAttrs = 1};
    FAILS(cuLaunchKernelEx(NULL, fill, args, NULL), CUDA_ERROR_INVALID_VALUE);
    cfg.blockDimX = 2048;
    FAILS(cuLaunchKernelEx(&cfg, fill, args, NULL), CUDA_ERROR_INVALID_VALUE);
    cfg.blockDimX = 64;
    cfg.gridDimX = 100000;
    FAILS(cuLaunchKernelEx(&cfg, fill, args, NULL), CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    FAILS(cuLaunchCooperativeKernel(fill, 100000, 1, 1, 64, 1, 1, 0, NULL, args),
          CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    nothing_ran();
    cfg.gridDimX = 1;
    OK(cuLaunchKernelEx(&cfg, fill, args, NULL));
    OK(cuCtxSynchronize());
    cr_assert_eq(first_float(out), 9.0f);
    OK(cuLaunchCooperativeKernel(fill, 1, 1, 1, 64, 1, 1, 0, NULL, args));
    OK(cuCtxSynchronize());
}

Test(launch_errors, needs_init_and_context)
{
    CUfunction f = NULL;
    FAILS(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_NOT_INITIALIZED);
    OK(cuInit(0));
    FAILS(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_CONTEXT);
}
