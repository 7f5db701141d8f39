/*
 * cudnn.c: cuDNN 9 on fakecuda: a handle on a stream of ours, one 3x3
 * convolution of an 8x8 image (descriptors, the output's shape asked of the
 * library, the algorithm's workspace size asked and a workspace of ours
 * given), its output read back, then a convolution whose output descriptor
 * has the wrong shape and a tensor descriptor of negative size, both refused
 * by the library (CUDNN_STATUS_BAD_PARAM). Its kernels are SASS only, so it
 * runs under FAKECUDA_SASS=nowrite and checks statuses, never numbers.
 */
#include "libs_test.h"

#include <cudnn.h>

enum { SIDE = 8, TAPS = 3 };

int main(void)
{
    cudnnHandle_t h;
    cudaStream_t stream;
    cudnnTensorDescriptor_t in_desc, out_desc, wrong_desc;
    cudnnFilterDescriptor_t filter_desc;
    cudnnConvolutionDescriptor_t conv;
    const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    int n, c, hgt, wid;
    size_t workspace_size = 0;
    void *workspace = NULL;
    float *in, *filter, *out, host_out[SIDE * SIDE], alpha = 1.0f, beta = 0.0f;

    CHECK_LIB(cudnnCreate(&h), CUDNN_STATUS_SUCCESS);
    CHECK_RT(cudaStreamCreate(&stream));
    CHECK_LIB(cudnnSetStream(h, stream), CUDNN_STATUS_SUCCESS);

    CHECK_LIB(cudnnCreateTensorDescriptor(&in_desc), CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnSetTensor4dDescriptor(in_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, SIDE, SIDE),
              CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnCreateFilterDescriptor(&filter_desc), CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnSetFilter4dDescriptor(filter_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, TAPS, TAPS),
              CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnCreateConvolutionDescriptor(&conv), CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
              CUDNN_STATUS_SUCCESS);
    /* Padding 1 keeps the 8x8 shape: the library must say so. */
    CHECK_LIB(cudnnGetConvolution2dForwardOutputDim(conv, in_desc, filter_desc, &n, &c, &hgt, &wid),
              CUDNN_STATUS_SUCCESS);
    CHECK_LIB(n == 1 && c == 1 && hgt == SIDE && wid == SIDE, 1);
    CHECK_LIB(cudnnCreateTensorDescriptor(&out_desc), CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnSetTensor4dDescriptor(out_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, hgt, wid),
              CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnGetConvolutionForwardWorkspaceSize(h, in_desc, filter_desc, conv, out_desc, algo, &workspace_size),
              CUDNN_STATUS_SUCCESS);
    printf("workspace %zu bytes\n", workspace_size);
    if (workspace_size > 0)
        CHECK_RT(cudaMalloc(&workspace, workspace_size));

    CHECK_RT(cudaMalloc((void **)&in, SIDE * SIDE * sizeof(float)));
    CHECK_RT(cudaMalloc((void **)&filter, TAPS * TAPS * sizeof(float)));
    CHECK_RT(cudaMalloc((void **)&out, SIDE * SIDE * sizeof(float)));
    CHECK_RT(cudaMemset(in, 0, SIDE * SIDE * sizeof(float)));
    CHECK_RT(cudaMemset(filter, 0, TAPS * TAPS * sizeof(float)));
    CHECK_LIB(cudnnConvolutionForward(h, &alpha, in_desc, in, filter_desc, filter, conv, algo, workspace,
                                      workspace_size, &beta, out_desc, out),
              CUDNN_STATUS_SUCCESS);
    CHECK_RT(cudaStreamSynchronize(stream));
    /* The launch succeeded, so under cutaint its output is readable. */
    CHECK_RT(cudaMemcpy(host_out, out, sizeof host_out, cudaMemcpyDeviceToHost));

    /* An output of 7x7 where the convolution gives 8x8: refused, nothing launched. */
    CHECK_LIB(cudnnCreateTensorDescriptor(&wrong_desc), CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnSetTensor4dDescriptor(wrong_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, SIDE - 1, SIDE - 1),
              CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnConvolutionForward(h, &alpha, in_desc, in, filter_desc, filter, conv, algo, workspace,
                                      workspace_size, &beta, wrong_desc, out),
              CUDNN_STATUS_BAD_PARAM);
    CHECK_LIB(cudnnSetTensor4dDescriptor(wrong_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, -1, SIDE, SIDE),
              CUDNN_STATUS_BAD_PARAM);

    CHECK_LIB(cudnnDestroyTensorDescriptor(wrong_desc), CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnDestroyTensorDescriptor(out_desc), CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnDestroyConvolutionDescriptor(conv), CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnDestroyFilterDescriptor(filter_desc), CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnDestroyTensorDescriptor(in_desc), CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnDestroy(h), CUDNN_STATUS_SUCCESS);
    CHECK_RT(cudaStreamDestroy(stream));
    CHECK_RT(cudaFree(in));
    CHECK_RT(cudaFree(filter));
    CHECK_RT(cudaFree(out));
    if (workspace)
        CHECK_RT(cudaFree(workspace));
    printf("PASS\n");
    return 0;
}
