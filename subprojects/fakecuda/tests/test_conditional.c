/*
 * test_conditional.c: conditional graph nodes (graphConditionalNodes):
 * handles made by cuGraphConditionalHandleCreate, if (and if/else), while
 * and switch nodes added through cuGraphAddNode with their body graphs,
 * the condition set by a kernel through the executor's built-in
 * cudaGraphSetConditional (our own PTX, below) and read when the node runs,
 * the launch-time reset of CU_GRAPH_COND_ASSIGN_DEFAULT handles, clones.
 */
#include "fc_test.h"

/* set_cond(h, v): cudaGraphSetConditional(h, v).
   bump(p): *p += 1.
   tick(hits, h, stop): *hits += 1; cudaGraphSetConditional(h, *hits < stop). */
#define FC_SETCOND_CALL                                       \
    "  {\n"                                                   \
    "  .param .b64 param0;\n"                                 \
    "  st.param.b64 [param0+0], %rd1;\n"                      \
    "  .param .b32 param1;\n"                                 \
    "  st.param.b32 [param1+0], %r1;\n"                       \
    "  call.uni cudaGraphSetConditional, (param0, param1);\n" \
    "  }\n"
static const char ptx[] = ".version 8.0\n"
                          ".target sm_90\n"
                          ".address_size 64\n"
                          ".extern .func cudaGraphSetConditional\n"
                          "(\n"
                          "  .param .b64 cudaGraphSetConditional_param_0,\n"
                          "  .param .b32 cudaGraphSetConditional_param_1\n"
                          ")\n"
                          ";\n"
                          ".visible .entry set_cond(.param .u64 h, .param .u32 v)\n"
                          "{\n"
                          "  .reg .b32 %r<2>;\n"
                          "  .reg .b64 %rd<2>;\n"
                          "  ld.param.u64 %rd1, [h];\n"
                          "  ld.param.u32 %r1, [v];\n" FC_SETCOND_CALL "  ret;\n"
                          "}\n"
                          ".visible .entry bump(.param .u64 p)\n"
                          "{\n"
                          "  .reg .b32 %r<3>;\n"
                          "  .reg .b64 %rd<2>;\n"
                          "  ld.param.u64 %rd1, [p];\n"
                          "  ld.global.u32 %r1, [%rd1];\n"
                          "  add.s32 %r2, %r1, 1;\n"
                          "  st.global.u32 [%rd1], %r2;\n"
                          "  ret;\n"
                          "}\n"
                          ".visible .entry tick(.param .u64 hits, .param .u64 h, .param .u32 stop)\n"
                          "{\n"
                          "  .reg .pred %p<2>;\n"
                          "  .reg .b32 %r<5>;\n"
                          "  .reg .b64 %rd<3>;\n"
                          "  ld.param.u64 %rd2, [hits];\n"
                          "  ld.param.u64 %rd1, [h];\n"
                          "  ld.param.u32 %r3, [stop];\n"
                          "  ld.global.u32 %r2, [%rd2];\n"
                          "  add.s32 %r2, %r2, 1;\n"
                          "  st.global.u32 [%rd2], %r2;\n"
                          "  setp.lt.u32 %p1, %r2, %r3;\n"
                          "  selp.u32 %r1, 1, 0, %p1;\n" FC_SETCOND_CALL "  ret;\n"
                          "}\n";

static CUmodule module(void)
{
    CUmodule m;
    setenv("FAKECUDA_PTX", "on", 1);
    fc_setup();
    OK(cuModuleLoadData(&m, ptx));
    return m;
}

static CUgraphNode kernel_node(CUgraph g, CUgraphNode *dep, CUfunction f, void **args)
{
    CUgraphNode n;
    CUgraphNodeParams p = {.type = CU_GRAPH_NODE_TYPE_KERNEL};
    p.kernel = (CUDA_KERNEL_NODE_PARAMS_v3){.func = f,
                                            .gridDimX = 1,
                                            .gridDimY = 1,
                                            .gridDimZ = 1,
                                            .blockDimX = 1,
                                            .blockDimY = 1,
                                            .blockDimZ = 1,
                                            .kernelParams = args};
    OK(cuGraphAddNode(&n, g, dep, NULL, dep ? 1 : 0, &p));
    return n;
}

/* A conditional node after dep; its bodies in body[]. */
static CUgraphNode cond_node(CUgraph g, CUgraphNode *dep, CUgraphConditionalHandle h, CUgraphConditionalNodeType type,
                             unsigned size, CUgraph *body)
{
    CUgraphNode n;
    CUgraphNodeParams p = {.type = CU_GRAPH_NODE_TYPE_CONDITIONAL};
    p.conditional = (CUDA_CONDITIONAL_NODE_PARAMS){.handle = h, .type = type, .size = size};
    OK(cuGraphAddNode(&n, g, dep, NULL, dep ? 1 : 0, &p));
    cr_assert_not_null(p.conditional.phGraph_out, "the driver hands out the body graphs");
    for (unsigned i = 0; i < size; i++)
        body[i] = p.conditional.phGraph_out[i];
    return n;
}

static unsigned read_word(CUdeviceptr d)
{
    unsigned v;
    OK(cuMemcpyDtoH(&v, d, sizeof v));
    return v;
}

static void launch_and_wait(CUgraphExec e)
{
    OK(cuGraphLaunch(e, NULL));
    OK(cuCtxSynchronize());
}

/* The if node's body runs only when the kernel before it set the condition;
   with an else body (size 2), exactly one of the two runs. */
static void if_node(unsigned size)
{
    CUmodule m = module();
    CUfunction set, bump;
    OK(cuModuleGetFunction(&set, m, "set_cond"));
    OK(cuModuleGetFunction(&bump, m, "bump"));
    unsigned zero[2] = {0, 0}, value = 0;
    CUdeviceptr hits = fc_upload(zero, sizeof zero), other = hits + 4;
    CUgraph g, body[2];
    CUgraphConditionalHandle h;
    OK(cuGraphCreate(&g, 0));
    OK(cuGraphConditionalHandleCreate(&h, g, NULL, 0, 0));
    void *set_args[] = {&h, &value};
    CUgraphNode setter = kernel_node(g, NULL, set, set_args);
    cond_node(g, &setter, h, CU_GRAPH_COND_TYPE_IF, size, body);
    void *then_args[] = {&hits}, *else_args[] = {&other};
    kernel_node(body[0], NULL, bump, then_args);
    if (size == 2)
        kernel_node(body[1], NULL, bump, else_args);
    CUgraphExec e;
    OK(cuGraphInstantiate(&e, g, 0));

    launch_and_wait(e);
    cr_expect_eq(read_word(hits), 0, "condition 0: the if body did not run");
    cr_expect_eq(read_word(other), size == 2 ? 1 : 0, "condition 0: the else body ran, if there is one");

    value = 7;
    CUDA_KERNEL_NODE_PARAMS kp;
    OK(cuGraphKernelNodeGetParams(setter, &kp));
    kp.kernelParams = set_args;
    OK(cuGraphExecKernelNodeSetParams(e, setter, &kp));
    launch_and_wait(e);
    cr_expect_eq(read_word(hits), 1, "condition 7: the if body ran once");
    cr_expect_eq(read_word(other), size == 2 ? 1 : 0, "condition 7: the else body did not run");
    OK(cuGraphExecDestroy(e));
    OK(cuGraphDestroy(g));
}

Test(conditional, if_body_runs_only_when_a_kernel_sets_the_condition)
{
    if_node(1);
}

Test(conditional, if_else_runs_one_of_its_two_bodies)
{
    if_node(2);
}

/* A while graph on handle h (default 1, reset at each launch): its body
   counts hits and clears the condition at the fifth pass. */
static CUgraph while_graph(CUfunction tick, CUdeviceptr *hits, CUgraphConditionalHandle *h, unsigned *stop, void **args)
{
    CUgraph g, body;
    unsigned zero = 0;
    *hits = fc_upload(&zero, sizeof zero);
    OK(cuGraphCreate(&g, 0));
    OK(cuGraphConditionalHandleCreate(h, g, NULL, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
    cond_node(g, NULL, *h, CU_GRAPH_COND_TYPE_WHILE, 1, &body);
    args[0] = hits;
    args[1] = h;
    args[2] = stop;
    kernel_node(body, NULL, tick, args);
    return g;
}

Test(conditional, while_body_runs_until_the_condition_is_cleared_each_launch)
{
    CUmodule m = module();
    CUfunction tick;
    OK(cuModuleGetFunction(&tick, m, "tick"));
    CUdeviceptr hits;
    CUgraphConditionalHandle h;
    unsigned stop = 5;
    void *args[3];
    CUgraph g = while_graph(tick, &hits, &h, &stop, args);
    CUgraphExec e;
    OK(cuGraphInstantiate(&e, g, 0));
    launch_and_wait(e);
    cr_expect_eq(read_word(hits), 5, "the body ran until its fifth pass cleared the condition");
    cr_expect_eq(read_word(h), 0, "the handle is the address of its condition cell");
    /* The second launch starts from the default again (ASSIGN_DEFAULT): the body runs five times more. */
    OK(cuMemsetD32(hits, 0, 1));
    launch_and_wait(e);
    cr_expect_eq(read_word(hits), 5, "each launch resets the condition to its default");
    OK(cuGraphExecDestroy(e));

    /* A clone carries its own copy of the body. */
    CUgraph c;
    OK(cuGraphClone(&c, g));
    OK(cuGraphDestroy(g));
    OK(cuMemsetD32(hits, 0, 1));
    OK(cuGraphInstantiate(&e, c, 0));
    launch_and_wait(e);
    cr_expect_eq(read_word(hits), 5, "the clone's while node runs its copied body");
    OK(cuGraphExecDestroy(e));
    OK(cuGraphDestroy(c));
}

Test(conditional, switch_runs_the_body_the_condition_names)
{
    CUmodule m = module();
    CUfunction set, bump;
    OK(cuModuleGetFunction(&set, m, "set_cond"));
    OK(cuModuleGetFunction(&bump, m, "bump"));
    unsigned zero[3] = {0, 0, 0}, value = 1;
    CUdeviceptr hits = fc_upload(zero, sizeof zero), at[3] = {hits, hits + 4, hits + 8};
    CUgraph g, body[3];
    CUgraphConditionalHandle h;
    OK(cuGraphCreate(&g, 0));
    OK(cuGraphConditionalHandleCreate(&h, g, NULL, 0, 0));
    void *set_args[] = {&h, &value}, *bump_args[3][1] = {{&at[0]}, {&at[1]}, {&at[2]}};
    CUgraphNode setter = kernel_node(g, NULL, set, set_args);
    cond_node(g, &setter, h, CU_GRAPH_COND_TYPE_SWITCH, 3, body);
    for (int i = 0; i < 3; i++)
        kernel_node(body[i], NULL, bump, bump_args[i]);
    CUgraphExec e;
    OK(cuGraphInstantiate(&e, g, 0));
    launch_and_wait(e);
    unsigned got[3];
    OK(cuMemcpyDtoH(got, hits, sizeof got));
    cr_expect(got[0] == 0 && got[1] == 1 && got[2] == 0, "condition 1 ran body 1 only: %u %u %u", got[0], got[1],
              got[2]);
    OK(cuGraphExecDestroy(e));
    OK(cuGraphDestroy(g));
}

Test(conditional, bad_handles_shapes_and_body_destruction_are_refused)
{
    fc_setup();
    CUgraph g, body[2];
    CUgraphConditionalHandle h;
    OK(cuGraphCreate(&g, 0));
    FAILS(cuGraphConditionalHandleCreate(&h, g, NULL, 0, 0x2), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphConditionalHandleCreate(NULL, g, NULL, 0, 0), CUDA_ERROR_INVALID_VALUE);
    OK(cuGraphConditionalHandleCreate(&h, g, NULL, 0, 0));
    CUgraphNode n;
    CUgraphNodeParams p = {.type = CU_GRAPH_NODE_TYPE_CONDITIONAL};
    p.conditional = (CUDA_CONDITIONAL_NODE_PARAMS){.handle = h, .type = CU_GRAPH_COND_TYPE_WHILE, .size = 2};
    FAILS(cuGraphAddNode(&n, g, NULL, NULL, 0, &p), CUDA_ERROR_INVALID_VALUE);
    p.conditional = (CUDA_CONDITIONAL_NODE_PARAMS){.handle = 0, .type = CU_GRAPH_COND_TYPE_IF, .size = 1};
    FAILS(cuGraphAddNode(&n, g, NULL, NULL, 0, &p), CUDA_ERROR_INVALID_VALUE);
    n = cond_node(g, NULL, h, CU_GRAPH_COND_TYPE_IF, 1, body);
    CUgraphNodeType t;
    OK(cuGraphNodeGetType(n, &t));
    cr_expect_eq(t, CU_GRAPH_NODE_TYPE_CONDITIONAL);
    FAILS(cuGraphDestroy(body[0]), CUDA_ERROR_INVALID_VALUE);
    OK(cuGraphDestroy(g));
}
