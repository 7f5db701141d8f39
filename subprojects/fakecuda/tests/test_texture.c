/*
 * test_texture.c: CUDA arrays and texture objects (simpleTexture): arrays
 * made, described, copied to and from, destroyed; texture objects over an
 * array or pitched memory, sampled by the PTX executor's `tex` (our own
 * PTX, below) with point and linear filtering, normalized coordinates and
 * the wrap, clamp, mirror and border address modes.
 */
#include "fc_test.h"

/* fetch2d(out, tex, coords, n): out[i] = tex2D<float>(tex, coords[2i], coords[2i+1]).x;
   fetch1d_int(out, tex, n): out[i] = tex1Dfetch-like integer fetch at texel i, as int. */
static const char ptx[] = ".version 8.0\n"
                          ".target sm_90\n"
                          ".address_size 64\n"
                          ".visible .entry fetch2d(.param .u64 out, .param .u64 tex, .param .u64 xy, .param .u32 n)\n"
                          "{\n"
                          "  .reg .pred %p<2>;\n"
                          "  .reg .b32 %r<4>;\n"
                          "  .reg .f32 %f<8>;\n"
                          "  .reg .b64 %rd<8>;\n"
                          "  ld.param.u64 %rd1, [out];\n"
                          "  ld.param.u64 %rd2, [tex];\n"
                          "  ld.param.u64 %rd3, [xy];\n"
                          "  ld.param.u32 %r1, [n];\n"
                          "  mov.u32 %r2, %tid.x;\n"
                          "  setp.ge.u32 %p1, %r2, %r1;\n"
                          "  @%p1 bra DONE;\n"
                          "  mul.wide.u32 %rd4, %r2, 8;\n"
                          "  add.s64 %rd5, %rd3, %rd4;\n"
                          "  ld.global.v2.f32 {%f1, %f2}, [%rd5];\n"
                          "  tex.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [%rd2, {%f1, %f2}];\n"
                          "  mul.wide.u32 %rd6, %r2, 4;\n"
                          "  add.s64 %rd7, %rd1, %rd6;\n"
                          "  st.global.f32 [%rd7], %f3;\n"
                          "DONE:\n"
                          "  ret;\n"
                          "}\n"
                          ".visible .entry fetch1d_int(.param .u64 out, .param .u64 tex, .param .u32 n)\n"
                          "{\n"
                          "  .reg .pred %p<2>;\n"
                          "  .reg .b32 %r<8>;\n"
                          "  .reg .b64 %rd<8>;\n"
                          "  ld.param.u64 %rd1, [out];\n"
                          "  ld.param.u64 %rd2, [tex];\n"
                          "  ld.param.u32 %r1, [n];\n"
                          "  mov.u32 %r2, %tid.x;\n"
                          "  setp.ge.u32 %p1, %r2, %r1;\n"
                          "  @%p1 bra DONE;\n"
                          "  tex.1d.v4.s32.s32 {%r3, %r4, %r5, %r6}, [%rd2, {%r2}];\n"
                          "  mul.wide.u32 %rd6, %r2, 4;\n"
                          "  add.s64 %rd7, %rd1, %rd6;\n"
                          "  st.global.u32 [%rd7], %r3;\n"
                          "DONE:\n"
                          "  ret;\n"
                          "}\n";

static CUmodule module(void)
{
    CUmodule m;
    setenv("FAKECUDA_PTX", "on", 1);
    fc_setup();
    OK(cuModuleLoadData(&m, ptx));
    return m;
}

/* A W x H float array holding texel (x, y) = 10 * y + x, through cuMemcpy2D. */
#define W 4
#define H 3
static CUarray float_array(void)
{
    CUarray a;
    CUDA_ARRAY_DESCRIPTOR d = {.Width = W, .Height = H, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
    float texels[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            texels[y][x] = (float)(10 * y + x);
    OK(cuArrayCreate(&a, &d));
    CUDA_MEMCPY2D c = {.srcMemoryType = CU_MEMORYTYPE_HOST,
                       .srcHost = texels,
                       .srcPitch = sizeof texels[0],
                       .dstMemoryType = CU_MEMORYTYPE_ARRAY,
                       .dstArray = a,
                       .WidthInBytes = sizeof texels[0],
                       .Height = H};
    OK(cuMemcpy2D(&c));
    return a;
}

static CUtexObject texture(CUarray a, CUaddress_mode mode, CUfilter_mode filter, unsigned flags)
{
    CUtexObject t;
    CUDA_RESOURCE_DESC r = {.resType = CU_RESOURCE_TYPE_ARRAY, .res.array.hArray = a};
    CUDA_TEXTURE_DESC td = {.addressMode = {mode, mode, mode},
                            .filterMode = filter,
                            .flags = flags,
                            .borderColor = {-1.0f, -2.0f, -3.0f, -4.0f}};
    OK(cuTexObjectCreate(&t, &r, &td, NULL));
    return t;
}

/* Samples t at n (x, y) points with fetch2d. */
static void sample(CUmodule m, CUtexObject t, const float *xy, float *out, unsigned n)
{
    CUfunction f;
    CUdeviceptr d_xy = fc_upload(xy, 2 * n * sizeof *xy), d_out;
    OK(cuMemAlloc(&d_out, n * sizeof *out));
    OK(cuModuleGetFunction(&f, m, "fetch2d"));
    void *args[] = {&d_out, &t, &d_xy, &n};
    OK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    OK(cuMemcpyDtoH(out, d_out, n * sizeof *out));
}

Test(texture, array_is_described_copied_and_destroyed)
{
    fc_setup();
    CUarray a = float_array();
    CUDA_ARRAY3D_DESCRIPTOR d3;
    OK(cuArray3DGetDescriptor(&d3, a));
    cr_assert(d3.Width == W && d3.Height == H && d3.Depth == 0 && d3.Format == CU_AD_FORMAT_FLOAT &&
              d3.NumChannels == 1);
    CUDA_ARRAY_DESCRIPTOR d2;
    OK(cuArrayGetDescriptor(&d2, a));
    cr_assert(d2.Width == W && d2.Height == H);
    /* row 1, texels 1..2, back to the host */
    float back[2] = {0, 0};
    CUDA_MEMCPY2D c = {.srcMemoryType = CU_MEMORYTYPE_ARRAY,
                       .srcArray = a,
                       .srcXInBytes = sizeof(float),
                       .srcY = 1,
                       .dstMemoryType = CU_MEMORYTYPE_HOST,
                       .dstHost = back,
                       .dstPitch = sizeof back,
                       .WidthInBytes = sizeof back,
                       .Height = 1};
    OK(cuMemcpy2D(&c));
    cr_assert(back[0] == 11.0f && back[1] == 12.0f, "got %g %g", back[0], back[1]);
    c.Height = H; /* rows 1..3 of 3: past the array's end */
    FAILS(cuMemcpy2D(&c), CUDA_ERROR_INVALID_VALUE);
    OK(cuArrayDestroy(a));
    FAILS(cuArrayDestroy(a), CUDA_ERROR_INVALID_HANDLE);
    c.Height = 1;
    FAILS(cuMemcpy2D(&c), CUDA_ERROR_INVALID_VALUE);
}

Test(texture, array_creation_refuses_bad_descriptors)
{
    CUarray a;
    fc_setup();
    CUDA_ARRAY3D_DESCRIPTOR d = {.Width = 8, .Height = 8, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 3};
    FAILS(cuArray3DCreate(&a, &d), CUDA_ERROR_INVALID_VALUE);
    d.NumChannels = 1;
    d.Width = 0;
    FAILS(cuArray3DCreate(&a, &d), CUDA_ERROR_INVALID_VALUE);
    d.Width = 8;
    d.Format = (CUarray_format)0x77;
    FAILS(cuArray3DCreate(&a, &d), CUDA_ERROR_INVALID_VALUE);
    d.Format = CU_AD_FORMAT_FLOAT;
    d.Flags = CUDA_ARRAY3D_LAYERED;
    FAILS(cuArray3DCreate(&a, &d), CUDA_ERROR_NOT_SUPPORTED);
    d.Flags = CUDA_ARRAY3D_SURFACE_LDST;
    OK(cuArray3DCreate(&a, &d));
    FAILS(cuArray3DCreate(NULL, &d), CUDA_ERROR_INVALID_VALUE);
}

Test(texture, point_sampling_clamps_unnormalized_coordinates)
{
    CUmodule m = module();
    CUtexObject t = texture(float_array(), CU_TR_ADDRESS_MODE_CLAMP, CU_TR_FILTER_MODE_POINT, 0);
    const float xy[] = {0.5f, 0.5f, 3.9f, 2.1f, 1.0f, 1.99f, -5.0f, 1.5f, 9.0f, 9.0f};
    const float want[] = {0, 23, 11, 10, 23};
    float out[5];
    sample(m, t, xy, out, 5);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(out[i], want[i], "point %d: %g, want %g", i, out[i], want[i]);
}

Test(texture, linear_filtering_weighs_neighbours_in_fixed_point)
{
    CUmodule m = module();
    CUtexObject t = texture(float_array(), CU_TR_ADDRESS_MODE_CLAMP, CU_TR_FILTER_MODE_LINEAR, 0);
    /* x 1.75 -> texels 1 and 2 at 3/4 and 1/4; y 0.5 -> row 0 alone */
    const float xy[] = {1.75f, 0.5f, 1.5f, 1.0f, 0.5f + 1.0f / 3.0f, 0.5f};
    float out[3];
    sample(m, t, xy, out, 3);
    cr_assert_eq(out[0], 1.25f, "got %g", out[0]);
    cr_assert_eq(out[1], 6.0f, "got %g", out[1]); /* rows 0 and 1 halved: (1 + 11) / 2 */
    /* a third is kept as 85/256, as the hardware's 8 fraction bits keep it */
    cr_assert_eq(out[2], 85.0f / 256.0f, "got %.9g", out[2]);
}

Test(texture, normalized_coordinates_wrap_mirror_and_border)
{
    CUmodule m = module();
    CUarray a = float_array();
    const float xy[] = {1.125f, 0.5f, -0.125f, 0.5f}; /* x 4.5 and -0.5 texels, row 1 */
    float out[2];
    sample(m, texture(a, CU_TR_ADDRESS_MODE_WRAP, CU_TR_FILTER_MODE_POINT, CU_TRSF_NORMALIZED_COORDINATES), xy, out, 2);
    cr_assert(out[0] == 10.0f && out[1] == 13.0f, "wrap: %g %g", out[0], out[1]);
    sample(m, texture(a, CU_TR_ADDRESS_MODE_MIRROR, CU_TR_FILTER_MODE_POINT, CU_TRSF_NORMALIZED_COORDINATES), xy, out,
           2);
    cr_assert(out[0] == 13.0f && out[1] == 10.0f, "mirror: %g %g", out[0], out[1]);
    sample(m, texture(a, CU_TR_ADDRESS_MODE_BORDER, CU_TR_FILTER_MODE_POINT, CU_TRSF_NORMALIZED_COORDINATES), xy, out,
           2);
    cr_assert(out[0] == -1.0f && out[1] == -1.0f, "border: %g %g", out[0], out[1]);
}

Test(texture, pitched_bytes_read_as_integers)
{
    CUmodule m = module();
    unsigned char bytes[8] = {0, 1, 2, 200, 4, 5, 6, 255};
    CUdeviceptr d = fc_upload(bytes, sizeof bytes), d_out;
    CUtexObject t;
    CUDA_RESOURCE_DESC r = {.resType = CU_RESOURCE_TYPE_LINEAR,
                            .res.linear = {.devPtr = d,
                                           .format = CU_AD_FORMAT_UNSIGNED_INT8,
                                           .numChannels = 1,
                                           .sizeInBytes = sizeof bytes}};
    CUDA_TEXTURE_DESC td = {.flags = CU_TRSF_READ_AS_INTEGER};
    OK(cuTexObjectCreate(&t, &r, &td, NULL));
    CUDA_RESOURCE_DESC back;
    OK(cuTexObjectGetResourceDesc(&back, t));
    cr_assert(back.resType == CU_RESOURCE_TYPE_LINEAR && back.res.linear.devPtr == d);
    td.filterMode = CU_TR_FILTER_MODE_LINEAR; /* integers are never filtered */
    CUtexObject bad;
    FAILS(cuTexObjectCreate(&bad, &r, &td, NULL), CUDA_ERROR_INVALID_VALUE);
    r.res.linear.sizeInBytes = 4096; /* more than the allocation holds */
    td.filterMode = CU_TR_FILTER_MODE_POINT;
    FAILS(cuTexObjectCreate(&bad, &r, &td, NULL), CUDA_ERROR_INVALID_VALUE);

    CUfunction f;
    unsigned n = 8, out[8];
    OK(cuMemAlloc(&d_out, sizeof out));
    OK(cuModuleGetFunction(&f, m, "fetch1d_int"));
    void *args[] = {&d_out, &t, &n};
    OK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    OK(cuMemcpyDtoH(out, d_out, sizeof out));
    for (int i = 0; i < 8; i++)
        cr_assert_eq(out[i], bytes[i], "texel %d: %u", i, out[i]);
    OK(cuTexObjectDestroy(t));
    FAILS(cuTexObjectDestroy(t), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuTexObjectGetResourceDesc(&back, t), CUDA_ERROR_INVALID_VALUE);
}

Test(texture, a_destroyed_texture_faults_the_kernel)
{
    CUmodule m = module();
    CUtexObject t = texture(float_array(), CU_TR_ADDRESS_MODE_CLAMP, CU_TR_FILTER_MODE_POINT, 0);
    OK(cuTexObjectDestroy(t));
    CUfunction f;
    float xy[2] = {0, 0};
    unsigned n = 1;
    CUdeviceptr d_xy = fc_upload(xy, sizeof xy), d_out;
    OK(cuMemAlloc(&d_out, 4));
    OK(cuModuleGetFunction(&f, m, "fetch2d"));
    void *args[] = {&d_out, &t, &d_xy, &n};
    OK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
}
