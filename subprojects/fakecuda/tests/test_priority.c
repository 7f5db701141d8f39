/*
 * test_priority.c: stream priorities (StreamPriorities): the context's
 * range, a created stream's priority clamped into it and read back, the
 * default streams' least priority, and the flags a stream was made with.
 */
#include "fc_test.h"

Test(priority, range_is_hoppers)
{
    int least = 99, greatest = 99;
    fc_setup();
    OK(cuCtxGetStreamPriorityRange(&least, &greatest));
    cr_assert_eq(least, 0);
    cr_assert_eq(greatest, -5);
    OK(cuCtxGetStreamPriorityRange(NULL, &greatest)); /* either pointer may be NULL */
    OK(cuCtxGetStreamPriorityRange(&least, NULL));
}

Test(priority, needs_a_context)
{
    int least, greatest;
    OK(cuInit(0));
    FAILS(cuCtxGetStreamPriorityRange(&least, &greatest), CUDA_ERROR_INVALID_CONTEXT);
}

Test(priority, created_priority_is_clamped_and_read_back)
{
    static const int asked[] = {-3, 0, -5, -100, 7};
    static const int kept[] = {-3, 0, -5, -5, 0};
    fc_setup();
    for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++) {
        CUstream s;
        int p = 42;
        OK(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, asked[i]));
        OK(cuStreamGetPriority(s, &p));
        cr_assert_eq(p, kept[i], "asked %d, got %d", asked[i], p);
        OK(cuStreamDestroy(s));
    }
}

Test(priority, default_streams_have_the_least_priority)
{
    int p = 42;
    CUstream s;
    fc_setup();
    OK(cuStreamGetPriority(NULL, &p));
    cr_assert_eq(p, 0);
    p = 42;
    OK(cuStreamGetPriority(CU_STREAM_PER_THREAD, &p));
    cr_assert_eq(p, 0);
    OK(cuStreamCreate(&s, 0));
    OK(cuStreamGetPriority(s, &p));
    cr_assert_eq(p, 0);
    FAILS(cuStreamGetPriority(s, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuStreamDestroy(s));
    FAILS(cuStreamGetPriority(s, &p), CUDA_ERROR_INVALID_HANDLE);
}

Test(priority, flags_are_read_back)
{
    unsigned flags = 42;
    CUstream s;
    fc_setup();
    OK(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -1));
    OK(cuStreamGetFlags(s, &flags));
    cr_assert_eq(flags, CU_STREAM_NON_BLOCKING);
    OK(cuStreamDestroy(s));
    OK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
    OK(cuStreamGetFlags(s, &flags));
    cr_assert_eq(flags, CU_STREAM_DEFAULT);
    FAILS(cuStreamGetFlags(s, NULL), CUDA_ERROR_INVALID_VALUE);
}
