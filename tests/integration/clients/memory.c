/*
 * memory.c - an ordinary driver-API program, knowing nothing of cutaint,
 * that uses the memory modern frameworks use: virtual memory mapped with
 * cuMemCreate / cuMemMap (unmapped, remapped, released, its reservation
 * freed), copies to the host in batches and 3D peer copies, and managed
 * memory.  One scenario per argv[1]; it prints what it saw in scenarios.c's
 * stable text form:
 *   NAME: CUDA_...                      a call's return code
 *   read LABEL: CUDA_... bytes=0xHH     every byte read was HH (0x3c: left untouched)
 *   read LABEL: CUDA_... first=F last=F the first and last float read
 *   NAME: N                             a number the driver returned
 * Exit: the scenario's status, 2 usage, 4 setup failed.
 */
#include <cuda.h>
#include <cudaTypedefs.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

#define N 1024
#define BYTES (N * sizeof(float))
#define OK_BLOCK 256u
#define BAD_BLOCK 2048u /* > 1024 threads: the launch fails, the kernel does not run */
#define UNTOUCHED 0x3c

static CUcontext ctx;
static CUmodule mod;
static CUfunction k_fill;
static CUstream stream;

static void setup(void)
{
    client_primary_and_module(&ctx, &mod);
    check("cuModuleGetFunction", cuModuleGetFunction(&k_fill, mod, "_Z4fillPfif"));
    check("cuStreamCreate", cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
}

static CUresult fill(CUdeviceptr out, int n, float v, unsigned block)
{
    void *p[] = {&out, &n, &v};
    unsigned grid = block > 1024 ? 1 : ((unsigned)n + block - 1) / block;
    return cuLaunchKernel(k_fill, grid, 1, 1, block, 1, 1, 0, NULL, p, NULL);
}

static CUresult write_floats(CUdeviceptr dst, size_t n, float v)
{
    float host[N];
    for (size_t i = 0; i < n && i < N; i++)
        host[i] = v;
    return cuMemcpyHtoD(dst, host, n * sizeof(float));
}

static void show(const char *label, CUresult r, const void *host, size_t bytes)
{
    describe(label, r, host, bytes);
}

static CUresult show_read(const char *label, CUdeviceptr src, size_t bytes)
{
    static unsigned char host[BYTES];
    memset(host, UNTOUCHED, bytes);
    CUresult r = cuMemcpyDtoH(host, src, bytes);
    show(label, r, host, bytes);
    return r;
}

static CUdeviceptr alloc(size_t bytes)
{
    CUdeviceptr p;
    check("cuMemAlloc", cuMemAlloc(&p, bytes));
    return p;
}

/* ---- virtual memory ------------------------------------------------------ */
static size_t granularity;

static CUmemAllocationProp device_prop(void)
{
    CUmemAllocationProp p = {0};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    return p;
}

static CUmemGenericAllocationHandle create(void)
{
    CUmemAllocationProp p = device_prop();
    CUmemGenericAllocationHandle h;
    if (!granularity)
        check("cuMemGetAllocationGranularity",
              cuMemGetAllocationGranularity(&granularity, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    check("cuMemCreate", cuMemCreate(&h, granularity, &p, 0));
    return h;
}

static CUresult map(CUdeviceptr at, CUmemGenericAllocationHandle h)
{
    CUresult r = cuMemMap(at, granularity, 0, h, 0);
    CUmemAccessDesc d = {.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0}, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    return r == CUDA_SUCCESS ? cuMemSetAccess(at, granularity, &d, 1) : r;
}

/* Two handles mapped in one reservation, a granule apart (not side by
 * side: each its own run); a rejected launch on the first; the first
 * unmapped and a fresh handle mapped at its addresses. */
static int sc_vmm_remap(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUmemGenericAllocationHandle a = create(), b = create(), c = create();
    CUdeviceptr base;
    check("cuMemAddressReserve", cuMemAddressReserve(&base, 3 * granularity, 0, 0, 0));
    say("map a", map(base, a));
    say("map b", map(base + 2 * granularity, b));
    say("write a", write_floats(base, N, 1.0f));
    say("write b", write_floats(base + 2 * granularity, N, 2.0f));
    say("launch fill a", fill(base, N, 7.0f, BAD_BLOCK));
    show_read("a", base, BYTES);
    show_read("b", base + 2 * granularity, BYTES);
    say("unmap half of a", cuMemUnmap(base, granularity / 2));
    show_read("a after a refused unmap", base, BYTES);
    say("unmap a", cuMemUnmap(base, granularity));
    show_read("a unmapped", base, BYTES);
    say("map c where a was", map(base, c));
    show_read("c", base, BYTES);
    say("launch fill c", fill(base, N, 3.0f, OK_BLOCK));
    show_read("c after fill", base, BYTES);
    say("unmap c", cuMemUnmap(base, granularity));
    say("map a again", map(base, a));
    say("write a", write_floats(base, N, 5.0f));
    show_read("a again", base, BYTES);
    return 0;
}

/* Two handles mapped side by side, as allocators map one reservation in
 * granules: one run (the memory is one to a kernel and to a copy).  A
 * tensor from the middle of the first into the second: a failed fill of it
 * leaves both parts refused; a read across the seam is checked as one; a
 * memset across it releases both sides; unmapping the first ends only its
 * own bytes, the second keeps its failure; a fresh mapping beside it joins
 * the run again. */
static int sc_vmm_run(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUmemGenericAllocationHandle a = create(), b = create(), c = create();
    CUdeviceptr base;
    check("cuMemAddressReserve", cuMemAddressReserve(&base, 2 * granularity, 0, 0, 0));
    say("map a", map(base, a));
    say("map b", map(base + granularity, b));
    CUdeviceptr seam = base + granularity, tensor = seam - BYTES / 2;
    say("write a", write_floats(base, N, 1.0f));
    say("write b", write_floats(seam, N, 2.0f));
    say("launch fill tensor", fill(tensor, N, 7.0f, BAD_BLOCK));
    show_read("tensor in b", seam, BYTES / 2);
    show_read("across the seam", tensor, BYTES);
    show_read("a before the tensor", base, BYTES);
    say("memset across the seam", cuMemsetD8(tensor, 0x5a, BYTES));
    show_read("across the seam after memset", tensor, BYTES);
    say("launch fill tensor again", fill(tensor, N, 7.0f, BAD_BLOCK));
    say("unmap a", cuMemUnmap(base, granularity));
    show_read("tensor in b after a is unmapped", seam, BYTES / 2);
    say("map c where a was", map(base, c));
    show_read("c", base, BYTES);
    say("launch fill tensor through c", fill(tensor, N, 3.0f, OK_BLOCK));
    show_read("across the seam after the fill", tensor, BYTES);
    return 0;
}

/* Releasing the handle ends no mapping; freeing the reservation ends them
 * all, and a reservation made again at those addresses starts clean. */
static int sc_vmm_release(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUmemGenericAllocationHandle a = create();
    CUdeviceptr base;
    check("cuMemAddressReserve", cuMemAddressReserve(&base, granularity, 0, 0, 0));
    say("map a", map(base, a));
    say("launch fill a", fill(base, N, 7.0f, BAD_BLOCK));
    say("release a", cuMemRelease(a));
    show_read("a after release", base, BYTES);
    say("free the reservation while mapped", cuMemAddressFree(base, granularity));
    show_read("a after a refused free", base, BYTES);
    say("unmap a", cuMemUnmap(base, granularity));
    say("free the reservation", cuMemAddressFree(base, granularity));
    CUdeviceptr again;
    check("cuMemAddressReserve", cuMemAddressReserve(&again, granularity, 0, base, 0));
    printf("same addresses: %s\n", again == base ? "yes" : "no");
    CUmemGenericAllocationHandle b = create();
    say("map b", map(again, b));
    say("launch fill b", fill(again, N, 4.0f, OK_BLOCK));
    show_read("b", again, BYTES);
    return 0;
}

/* ---- reads in batches and 3D peer copies ---------------------------------- */
static CUresult copy_to_host(const char *how, void *host, CUdeviceptr src, size_t bytes)
{
    CUdeviceptr dsts[] = {(CUdeviceptr)(uintptr_t)host}, srcs[] = {src};
    size_t sizes[] = {bytes}, idx[] = {0}, fail = 99;
    CUmemcpyAttributes attrs[] = {{.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM}};
    CUDA_MEMCPY3D_BATCH_OP op = {.extent = {bytes, 1, 1}, .srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
    op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.src.op.ptr.ptr = src;
    op.dst.op.ptr.ptr = (CUdeviceptr)(uintptr_t)host;
    CUDA_MEMCPY3D_PEER peer = {
        .srcMemoryType = CU_MEMORYTYPE_DEVICE,
        .srcDevice = src,
        .srcContext = ctx,
        .srcPitch = bytes,
        .dstMemoryType = CU_MEMORYTYPE_HOST,
        .dstHost = host,
        .dstContext = ctx,
        .dstPitch = bytes,
        .WidthInBytes = bytes,
        .Height = 1,
        .Depth = 1,
    };
    CUresult r;
    if (strcmp(how, "batch") == 0) {
        PFN_cuMemcpyBatchAsync_v12080 batch;
        check("cuGetProcAddress", cuGetProcAddress("cuMemcpyBatchAsync", (void **)&batch, 12080, 0, NULL));
        r = batch(dsts, srcs, sizes, 1, attrs, idx, 1, &fail, stream);
        printf("failIdx: %zu\n", fail);
    } else if (strcmp(how, "batch_v2") == 0) {
        r = cuMemcpyBatchAsync(dsts, srcs, sizes, 1, attrs, idx, 1, stream);
    } else if (strcmp(how, "batch_v2_ptsz") == 0) {
        PFN_cuMemcpyBatchAsync_v13000 batch;
        check("cuGetProcAddress", cuGetProcAddress("cuMemcpyBatchAsync", (void **)&batch, 13000,
                                                   CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
        r = batch(dsts, srcs, sizes, 1, attrs, idx, 1, NULL);
    } else if (strcmp(how, "batch3d") == 0) {
        PFN_cuMemcpy3DBatchAsync_v12080 batch;
        check("cuGetProcAddress", cuGetProcAddress("cuMemcpy3DBatchAsync", (void **)&batch, 12080, 0, NULL));
        r = batch(1, &op, &fail, 0, stream);
        printf("failIdx: %zu\n", fail);
    } else if (strcmp(how, "batch3d_v2") == 0) {
        r = cuMemcpy3DBatchAsync(1, &op, 0, stream);
    } else if (strcmp(how, "peer3d") == 0) {
        r = cuMemcpy3DPeer(&peer);
    } else if (strcmp(how, "peer3d_async") == 0) {
        r = cuMemcpy3DPeerAsync(&peer, stream);
    } else {
        fprintf(stderr, "unknown copy %s\n", how);
        exit(2);
    }
    CUresult s = cuCtxSynchronize();
    return r != CUDA_SUCCESS ? r : s;
}

/* argv[0] names the copy: a tainted source refused, a clean one read. */
static int sc_read_by(int argc, char **argv)
{
    const char *how = argc > 0 ? argv[0] : "batch";
    static unsigned char host[BYTES];
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES);
    say("launch fill x", fill(x, N, 7.0f, BAD_BLOCK));
    say("launch fill y", fill(y, N, 2.0f, OK_BLOCK));
    memset(host, UNTOUCHED, sizeof host);
    show("x", copy_to_host(how, host, x, BYTES), host, BYTES);
    memset(host, UNTOUCHED, sizeof host);
    show("y", copy_to_host(how, host, y, BYTES), host, BYTES);
    return 0;
}

/* One batch: a tainted read to the host, a clean one, a clean device copy.
 * Refused whole: both host buffers poisoned, the device copy's destination
 * carrying the failure. */
static int sc_batch_mixed(int argc, char **argv)
{
    (void)argc, (void)argv;
    static unsigned char hx[BYTES], hy[BYTES];
    memset(hx, UNTOUCHED, sizeof hx);
    memset(hy, UNTOUCHED, sizeof hy);
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES), z = alloc(BYTES);
    say("launch fill x", fill(x, N, 7.0f, BAD_BLOCK));
    say("launch fill y", fill(y, N, 2.0f, OK_BLOCK));
    say("launch fill z", fill(z, N, 3.0f, OK_BLOCK));
    CUdeviceptr dsts[] = {(CUdeviceptr)(uintptr_t)hy, (CUdeviceptr)(uintptr_t)hx, z}, srcs[] = {y, x, y};
    size_t sizes[] = {BYTES, BYTES, BYTES}, idx[] = {0}, fail = 99;
    CUmemcpyAttributes attrs[] = {{.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM}};
    PFN_cuMemcpyBatchAsync_v12080 batch;
    check("cuGetProcAddress", cuGetProcAddress("cuMemcpyBatchAsync", (void **)&batch, 12080, 0, NULL));
    say("batch", batch(dsts, srcs, sizes, 3, attrs, idx, 1, &fail, stream));
    printf("failIdx: %zu\n", fail);
    say("sync", cuCtxSynchronize());
    show("hx", CUDA_SUCCESS, hx, BYTES);
    show("hy", CUDA_SUCCESS, hy, BYTES);
    show_read("z", z, BYTES);
    say("write x", write_floats(x, N, 1.0f));
    say("batch again", batch(dsts, srcs, sizes, 3, attrs, idx, 1, &fail, stream));
    say("sync", cuCtxSynchronize());
    show("hx", CUDA_SUCCESS, hx, BYTES);
    show("hy", CUDA_SUCCESS, hy, BYTES);
    show_read("z", z, BYTES);
    return 0;
}

/* ---- managed memory ---------------------------------------------------------- */
/* A failure on plain memory, then on two managed allocations, twice. */
static int sc_managed(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr plain = alloc(BYTES), m1, m2;
    check("cuMemAllocManaged", cuMemAllocManaged(&m1, BYTES, CU_MEM_ATTACH_GLOBAL));
    check("cuMemAllocManaged", cuMemAllocManaged(&m2, BYTES, CU_MEM_ATTACH_GLOBAL));
    say("launch fill plain", fill(plain, N, 1.0f, BAD_BLOCK));
    printf("managed m1: 0x%llx\n", (unsigned long long)m1);
    say("launch fill m1", fill(m1, N, 1.0f, BAD_BLOCK));
    say("launch fill m2", fill(m2, N, 1.0f, BAD_BLOCK));
    say("launch fill m1 again", fill(m1, N, 1.0f, BAD_BLOCK));
    show_read("m1", m1, BYTES);
    return 0;
}

/* ---- pinned host memory ------------------------------------------------------ */
/* Failed fills through pinned host pointers: one freed first (no longer
 * pinned), then two live ones (cuMemAllocHost, cuMemHostAlloc).  Only the
 * first live one is named. */
static int sc_pinned(int argc, char **argv)
{
    (void)argc, (void)argv;
    void *h0, *h1, *h2;
    check("cuMemAllocHost", cuMemAllocHost(&h0, BYTES));
    check("cuMemAllocHost", cuMemAllocHost(&h1, BYTES));
    check("cuMemHostAlloc", cuMemHostAlloc(&h2, BYTES, CU_MEMHOSTALLOC_DEVICEMAP));
    check("cuMemFreeHost", cuMemFreeHost(h0));
    say("launch fill h0 (freed)", fill((CUdeviceptr)(uintptr_t)h0, N, 1.0f, BAD_BLOCK));
    printf("pinned h1: 0x%llx\n", (unsigned long long)(uintptr_t)h1);
    say("launch fill h1", fill((CUdeviceptr)(uintptr_t)h1 + 64, N - 16, 1.0f, BAD_BLOCK));
    say("launch fill h2", fill((CUdeviceptr)(uintptr_t)h2, N, 1.0f, BAD_BLOCK));
    check("cuMemFreeHost", cuMemFreeHost(h1));
    check("cuMemFreeHost", cuMemFreeHost(h2));
    return 0;
}

/* A failed fill taints a pitched buffer; then a successful write of ROWS
 * rows of 16 bytes at a pitch of 512 (HOW: memset, copy2d, or graph: a
 * memset node).  The gaps between the rows were never written: they must
 * keep the fill's failure, whatever the height. */
#define TALL_PITCH 512u
#define TALL_WIDTH 16u
static int sc_tall_pitched(int argc, char **argv)
{
    unsigned rows = argc > 0 ? (unsigned)atoi(argv[0]) : 65;
    const char *how = argc > 1 ? argv[1] : "memset";
    if (rows == 0 || rows > 4096)
        return 2;
    CUdeviceptr buf = alloc((size_t)TALL_PITCH * rows);
    say("launch fill buf", fill(buf, (int)(TALL_PITCH * rows / sizeof(float)), 1.0f, BAD_BLOCK));
    if (strcmp(how, "memset") == 0) {
        say("memset 2D", cuMemsetD2D8(buf, TALL_PITCH, 0x5a, TALL_WIDTH, rows));
    } else if (strcmp(how, "copy2d") == 0) {
        static unsigned char host[TALL_WIDTH * 4096];
        memset(host, 0x5a, sizeof host);
        CUDA_MEMCPY2D c = {.srcMemoryType = CU_MEMORYTYPE_HOST,
                           .srcHost = host,
                           .srcPitch = TALL_WIDTH,
                           .dstMemoryType = CU_MEMORYTYPE_DEVICE,
                           .dstDevice = buf,
                           .dstPitch = TALL_PITCH,
                           .WidthInBytes = TALL_WIDTH,
                           .Height = rows};
        say("copy 2D", cuMemcpy2D(&c));
    } else {
        CUgraph g;
        CUgraphNode node;
        CUgraphExec exec;
        CUDA_MEMSET_NODE_PARAMS p =
            {.dst = buf, .pitch = TALL_PITCH, .value = 0x5a, .elementSize = 1, .width = TALL_WIDTH, .height = rows};
        check("cuGraphCreate", cuGraphCreate(&g, 0));
        check("cuGraphAddMemsetNode", cuGraphAddMemsetNode(&node, g, NULL, 0, &p, ctx));
        check("cuGraphInstantiateWithFlags", cuGraphInstantiateWithFlags(&exec, g, 0));
        say("graph launch", cuGraphLaunch(exec, stream));
        say("sync", cuStreamSynchronize(stream));
    }
    show_read("row 0", buf, TALL_WIDTH);
    show_read("gap of row 0", buf + TALL_WIDTH, 1);
    show_read("last row", buf + (CUdeviceptr)(rows - 1) * TALL_PITCH, TALL_WIDTH);
    show_read("gap of the last row", buf + (CUdeviceptr)(rows - 1) * TALL_PITCH + TALL_WIDTH, 1);
    return 0;
}

/* wide(Ptrs) passes 300 pointer words (tests/integration/wide_kernel.c,
 * loaded through FAKECUDA_KERNELS): a, 298 numbers, then buffer b.
 *   output: the launch fails (CUTAINT_INJECT): b, reached only by a word
 *           past the first 256, must be refused.
 *   input:  b carries a failed fill; the launch must be skipped, so a,
 *           its first word, takes the failure instead of being released. */
static int sc_wide_launch(int argc, char **argv)
{
    const char *mode = argc > 0 ? argv[0] : "output";
    CUfunction wide;
    check("wide", cuModuleGetFunction(&wide, mod, "_Z4wide4Ptrs"));
    CUdeviceptr a = alloc(BYTES), b = alloc(BYTES);
    say("write a", write_floats(a, N, 2.0f));
    say("write b", write_floats(b, N, 2.0f));
    if (strcmp(mode, "input") == 0)
        say("launch fill b", fill(b, N, 3.0f, BAD_BLOCK));
    struct {
        CUdeviceptr p[300];
    } ptrs = {{0}};
    ptrs.p[0] = a;
    for (int i = 1; i < 299; i++)
        ptrs.p[i] = 8 * (CUdeviceptr)i; /* numbers, not device memory: every word counts */
    ptrs.p[299] = b;
    void *params[] = {&ptrs};
    say("launch wide", cuLaunchKernel(wide, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    say("sync", cuCtxSynchronize());
    show_read("a", a, BYTES);
    show_read("b", b, BYTES);
    return 0;
}

static const client_scenario scenarios[] = {
    {"wide_launch", sc_wide_launch}, {"tall_pitched", sc_tall_pitched}, {"vmm_remap", sc_vmm_remap},
    {"vmm_run", sc_vmm_run},         {"vmm_release", sc_vmm_release},   {"read_by", sc_read_by},
    {"batch_mixed", sc_batch_mixed}, {"managed", sc_managed},           {"pinned", sc_pinned},
};

int main(int argc, char **argv)
{
    return client_main(argc, argv, scenarios, sizeof scenarios / sizeof scenarios[0], setup);
}
