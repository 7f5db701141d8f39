/*
 * cudnn.c: cuDNN 9 on fakecuda: a handle made and destroyed, and a tensor
 * descriptor of negative size, refused by the library
 * (CUDNN_STATUS_BAD_PARAM). Under FAKECUDA_SASS=nowrite. Not yet: a
 * stream of ours (cudnnSetStream asks cuStreamGetPriority and
 * cuCtxGetStreamPriorityRange, the stream-priority entry points issue 45
 * gives another branch) and a convolution.
 */
#include "libs_test.h"

#include <cudnn.h>

int main(void)
{
    cudnnHandle_t h;
    cudnnTensorDescriptor_t t;
    CHECK_LIB(cudnnCreate(&h), CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnCreateTensorDescriptor(&t), CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, -1, 8, 8), CUDNN_STATUS_BAD_PARAM);
    CHECK_LIB(cudnnDestroyTensorDescriptor(t), CUDNN_STATUS_SUCCESS);
    CHECK_LIB(cudnnDestroy(h), CUDNN_STATUS_SUCCESS);
    printf("PASS\n");
    return 0;
}
