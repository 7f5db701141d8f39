/*
 * test_batch.c: copies in batches (cuMemcpyBatchAsync, cuMemcpy3DBatchAsync,
 * both ABI versions) and 3D peer copies (cuMemcpy3DPeer(Async)) on the one
 * device: data lands where it should, a copy whose source order is
 * DURING_API_CALL is done when the call returns, bad arguments are refused
 * before any copy of the batch runs, and the 12.8 versions name the copy at
 * fault (failIdx).
 */
#include "fc_test.h"

#include <cudaTypedefs.h>
#include <stdint.h>
#include <stdlib.h>

#define N 256

static PFN_cuMemcpyBatchAsync_v12080 batch_v1;
static PFN_cuMemcpy3DBatchAsync_v12080 batch3d_v1;
static PFN_cuMemcpyBatchAsync_v13000 batch_v2_per_thread;

static CUstream setup(void)
{
    fc_setup();
    CUstream s;
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    OK(cuGetProcAddress("cuMemcpyBatchAsync", (void **)&batch_v1, 12080, 0, NULL));
    OK(cuGetProcAddress("cuMemcpy3DBatchAsync", (void **)&batch3d_v1, 12080, 0, NULL));
    OK(cuGetProcAddress("cuMemcpyBatchAsync", (void **)&batch_v2_per_thread, 13000,
                        CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
    return s;
}

static CUdeviceptr device_bytes(unsigned char v, size_t n)
{
    CUdeviceptr d;
    OK(cuMemAlloc(&d, n));
    OK(cuMemsetD8(d, v, n));
    return d;
}

static void expect_bytes(const unsigned char *p, unsigned char v, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(p[i], v, "%s[%zu] = 0x%02x, expected 0x%02x", what, i, p[i], v);
}

static CUmemcpyAttributes order(CUmemcpySrcAccessOrder o)
{
    return (CUmemcpyAttributes){.srcAccessOrder = o};
}

Test(batch, device_to_host_host_to_device_and_device_to_device_in_one_batch)
{
    CUstream s = setup();
    unsigned char in[N], out[N];
    memset(in, 0x11, sizeof in);
    memset(out, 0, sizeof out);
    CUdeviceptr a = device_bytes(0x22, N), b = device_bytes(0, N), c = device_bytes(0, N);
    CUdeviceptr dsts[] = {(CUdeviceptr)(uintptr_t)out, b, c};
    CUdeviceptr srcs[] = {a, (CUdeviceptr)(uintptr_t)in, a};
    size_t sizes[] = {N, N, N}, idx[] = {0}, fail = 77;
    CUmemcpyAttributes attrs[] = {order(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM)};
    OK(batch_v1(dsts, srcs, sizes, 3, attrs, idx, 1, &fail, s));
    OK(cuStreamSynchronize(s));
    cr_expect_eq(fail, 77, "failIdx is written only on failure");
    expect_bytes(out, 0x22, N, "out");
    unsigned char back[N];
    OK(cuMemcpyDtoH(back, b, N));
    expect_bytes(back, 0x11, N, "b");
    OK(cuMemcpyDtoH(back, c, N));
    expect_bytes(back, 0x22, N, "c");
}

Test(batch, the_13_0_version_has_no_fail_index_and_the_per_thread_stream_is_allowed)
{
    setup();
    unsigned char out[N] = {0};
    CUdeviceptr a = device_bytes(0x33, N);
    CUdeviceptr dsts[] = {(CUdeviceptr)(uintptr_t)out}, srcs[] = {a};
    size_t sizes[] = {N}, idx[] = {0};
    CUmemcpyAttributes attrs[] = {order(CU_MEMCPY_SRC_ACCESS_ORDER_ANY)};
    OK(batch_v2_per_thread(dsts, srcs, sizes, 1, attrs, idx, 1, NULL));
    OK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    expect_bytes(out, 0x33, N, "out");
    FAILS(cuMemcpyBatchAsync(dsts, srcs, sizes, 1, attrs, idx, 1, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemcpyBatchAsync(dsts, srcs, sizes, 1, attrs, idx, 1, CU_STREAM_LEGACY), CUDA_ERROR_INVALID_VALUE);
}

/* Its source is read during the call: done when the call returns, no sync. */
Test(batch, a_during_api_call_copy_is_done_when_the_call_returns)
{
    CUstream s = setup();
    unsigned char out[N] = {0};
    CUdeviceptr a = device_bytes(0x44, N);
    CUdeviceptr dsts[] = {(CUdeviceptr)(uintptr_t)out}, srcs[] = {a};
    size_t sizes[] = {N}, idx[] = {0};
    CUmemcpyAttributes attrs[] = {order(CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL)};
    OK(cuMemcpyBatchAsync(dsts, srcs, sizes, 1, attrs, idx, 1, s));
    expect_bytes(out, 0x44, N, "out");
}

/* The second attribute (copies 2..3) has no valid order; copy 1 reads past
 * its allocation: each named by failIdx, and no copy of the batch ran. */
Test(batch, a_bad_copy_is_named_and_nothing_of_the_batch_runs)
{
    CUstream s = setup();
    unsigned char out[4][N];
    memset(out, 0, sizeof out);
    CUdeviceptr a = device_bytes(0x55, N);
    CUdeviceptr dsts[4], srcs[] = {a, a, a, a};
    for (int i = 0; i < 4; i++)
        dsts[i] = (CUdeviceptr)(uintptr_t)out[i];
    size_t sizes[] = {N, N, N, N}, idx[] = {0, 2}, fail = 0;
    CUmemcpyAttributes attrs[] = {order(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM), order(CU_MEMCPY_SRC_ACCESS_ORDER_INVALID)};
    FAILS(batch_v1(dsts, srcs, sizes, 4, attrs, idx, 2, &fail, s), CUDA_ERROR_INVALID_VALUE);
    cr_expect_eq(fail, 2);
    attrs[1] = order(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    sizes[1] = N + 1;
    FAILS(batch_v1(dsts, srcs, sizes, 4, attrs, idx, 2, &fail, s), CUDA_ERROR_INVALID_VALUE);
    cr_expect_eq(fail, 1);
    OK(cuStreamSynchronize(s));
    expect_bytes(out[0], 0, N, "out[0]");
}

Test(batch, attribute_indexes_that_do_not_cover_the_batch_are_refused)
{
    CUstream s = setup();
    unsigned char out[N];
    CUdeviceptr a = device_bytes(0x55, N);
    CUdeviceptr dsts[] = {(CUdeviceptr)(uintptr_t)out, (CUdeviceptr)(uintptr_t)out}, srcs[] = {a, a};
    size_t sizes[] = {N, N}, fail = 0;
    CUmemcpyAttributes attrs[] = {order(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM), order(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM)};
    size_t not_from_zero[] = {1}, not_increasing[] = {0, 0}, past_the_end[] = {0, 2};
    FAILS(batch_v1(dsts, srcs, sizes, 2, attrs, not_from_zero, 1, &fail, s), CUDA_ERROR_INVALID_VALUE);
    cr_expect_eq(fail, SIZE_MAX, "no one copy is at fault");
    FAILS(batch_v1(dsts, srcs, sizes, 2, attrs, not_increasing, 2, &fail, s), CUDA_ERROR_INVALID_VALUE);
    FAILS(batch_v1(dsts, srcs, sizes, 2, attrs, past_the_end, 2, &fail, s), CUDA_ERROR_INVALID_VALUE);
    FAILS(batch_v1(dsts, srcs, sizes, 2, attrs, not_from_zero, 0, &fail, s), CUDA_ERROR_INVALID_VALUE);
    FAILS(batch_v1(dsts, srcs, sizes, 0, attrs, not_from_zero, 0, &fail, s), CUDA_ERROR_INVALID_VALUE);
}

static CUmemcpy3DOperand pointer(CUdeviceptr p, size_t row_length, size_t layer_height)
{
    CUmemcpy3DOperand o = {.type = CU_MEMCPY_OPERAND_TYPE_POINTER};
    o.op.ptr.ptr = p;
    o.op.ptr.rowLength = row_length;
    o.op.ptr.layerHeight = layer_height;
    return o;
}

/* 2 layers of 3 rows of 4 bytes out of a device volume pitched 8 x 4. */
Test(batch, a_3d_batch_copies_pitched_boxes)
{
    CUstream s = setup();
    unsigned char vol[2 * 4 * 8];
    for (size_t i = 0; i < sizeof vol; i++)
        vol[i] = (unsigned char)i;
    CUdeviceptr d;
    OK(cuMemAlloc(&d, sizeof vol));
    OK(cuMemcpyHtoD(d, vol, sizeof vol));
    unsigned char box[2 * 3 * 4] = {0};
    CUDA_MEMCPY3D_BATCH_OP op = {
        .src = pointer(d, 8, 4),
        .dst = pointer((CUdeviceptr)(uintptr_t)box, 0, 0),
        .extent = {4, 3, 2},
        .srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
    };
    OK(cuMemcpy3DBatchAsync(1, &op, 0, s));
    OK(cuStreamSynchronize(s));
    for (size_t z = 0; z < 2; z++)
        for (size_t y = 0; y < 3; y++)
            for (size_t x = 0; x < 4; x++)
                cr_assert_eq(box[(z * 3 + y) * 4 + x], vol[(z * 4 + y) * 8 + x], "box[%zu][%zu][%zu]", z, y, x);
}

Test(batch, a_3d_batch_refuses_arrays_zero_extents_short_rows_and_flags)
{
    CUstream s = setup();
    unsigned char host[64];
    CUdeviceptr d;
    OK(cuMemAlloc(&d, 64));
    CUDA_MEMCPY3D_BATCH_OP ops[2] = {
        {.src = pointer(d, 0, 0),
         .dst = pointer((CUdeviceptr)(uintptr_t)host, 0, 0),
         .extent = {8, 1, 1},
         .srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM},
        {.src = pointer(d, 0, 0),
         .dst = pointer((CUdeviceptr)(uintptr_t)host, 0, 0),
         .extent = {8, 1, 1},
         .srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM},
    };
    size_t fail = 0;
    OK(batch3d_v1(2, ops, &fail, 0, s));
    ops[1].dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    FAILS(batch3d_v1(2, ops, &fail, 0, s), CUDA_ERROR_NOT_SUPPORTED);
    cr_expect_eq(fail, 1);
    ops[1].dst = pointer((CUdeviceptr)(uintptr_t)host, 4, 0);
    FAILS(batch3d_v1(2, ops, &fail, 0, s), CUDA_ERROR_INVALID_VALUE);
    cr_expect_eq(fail, 1, "a row length below the width");
    ops[1].dst = pointer((CUdeviceptr)(uintptr_t)host, 0, 0);
    ops[0].extent.depth = 0;
    FAILS(batch3d_v1(2, ops, &fail, 0, s), CUDA_ERROR_INVALID_VALUE);
    cr_expect_eq(fail, 0, "a zero extent");
    ops[0].extent.depth = 1;
    FAILS(batch3d_v1(2, ops, &fail, 1, s), CUDA_ERROR_INVALID_VALUE);
    cr_expect_eq(fail, SIZE_MAX);
}

Test(batch, a_3d_peer_copy_is_a_copy_on_the_one_device)
{
    CUcontext ctx = fc_setup();
    unsigned char out[N] = {0};
    CUdeviceptr a = device_bytes(0x66, N);
    CUDA_MEMCPY3D_PEER p = {
        .srcMemoryType = CU_MEMORYTYPE_DEVICE,
        .srcDevice = a,
        .srcContext = ctx,
        .srcPitch = N,
        .dstMemoryType = CU_MEMORYTYPE_HOST,
        .dstHost = out,
        .dstContext = ctx,
        .dstPitch = N,
        .WidthInBytes = N,
        .Height = 1,
        .Depth = 1,
    };
    OK(cuMemcpy3DPeer(&p));
    expect_bytes(out, 0x66, N, "out");
    memset(out, 0, sizeof out);
    OK(cuMemcpy3DPeerAsync(&p, NULL));
    OK(cuCtxSynchronize());
    expect_bytes(out, 0x66, N, "out (async)");
    p.srcContext = NULL;
    FAILS(cuMemcpy3DPeer(&p), CUDA_ERROR_INVALID_CONTEXT);
    FAILS(cuMemcpy3DPeer(NULL), CUDA_ERROR_INVALID_VALUE);
}
