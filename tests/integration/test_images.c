/*
 * test_images.c - kernel images the driver cannot use, in a driver-API
 * program (the scenario client's `images`): a load the driver refuses, of
 * bytes that are no image and of a pointer to nothing, a lookup of a
 * kernel the module lacks, and two library loads that are not quite the
 * runtime's own (no stand-in for either).  The program sees exactly the driver's answers;
 * the report holds one image event for each refusal, naming what could be
 * read, and no failure: an unusable image is said, not counted as a root.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "harness.h"

static const h_run images_run = {
    .client = CT_CLIENT_LINKED,
    .args = {"images"},
    .env = {"FAKECUDA_FAULTS=api:cuModuleLoadData#2=209;api:cuModuleLoadData#3=200;api:cuLibraryLoadData#1=209;"
            "api:cuLibraryLoadData#2=209"},
};

static const char *const answers[] = {
    "library wrapper: CUDA_ERROR_NO_BINARY_FOR_GPU",
    "library preserved bytes: CUDA_ERROR_NO_BINARY_FOR_GPU",
    "load bytes: CUDA_ERROR_NO_BINARY_FOR_GPU",
    "load nowhere: CUDA_ERROR_INVALID_IMAGE",
    "load again: CUDA_SUCCESS",
    "lookup missing: CUDA_ERROR_NOT_FOUND",
    "lookup fill: CUDA_SUCCESS",
    "unload: CUDA_SUCCESS",
};

static void expect_answers(const h_result *r, const char *run)
{
    for (size_t i = 0; i < sizeof answers / sizeof answers[0]; i++)
        cr_expect(h_has_line(r->out, answers[i]), "%s lacks %s:\n%s", run, answers[i], r->out);
}

Test(images, the_program_sees_the_drivers_answers_without_the_shim_too)
{
    h_result r;
    h_exec_baseline(&images_run, &r);
    h_expect_ended(&r);
    expect_answers(&r, "the run without the shim");
    h_free(&r);
}

Test(images, each_refusal_is_an_image_event_and_no_failure)
{
    h_result r;
    h_exec(&images_run, &r);
    h_expect_ended(&r);
    expect_answers(&r, "the run under the shim");
    cr_expect_eq(r.status, 0, "an unusable image fails no job: %s", r.err);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_eq(h_count(&rep, "image"), 5, "five refusals: %s", h_events(&rep));
    cr_expect_eq(h_count(&rep, "failure"), 0, "no root failure: %s", h_events(&rep));
    int lib_wrapper = h_find(&rep, "image", 0), lib_bytes = h_find(&rep, "image", lib_wrapper + 1);
    cr_assert(lib_wrapper >= 0 && lib_bytes > lib_wrapper, "%s", h_events(&rep));
    cr_expect_str_eq(h_str(rep.line[lib_wrapper], "form"), "wrapper", "%s", rep.line[lib_wrapper]);
    for (int i = lib_wrapper; i >= 0; i = h_find(&rep, "image", i + 1))
        cr_expect_str_eq(h_str(rep.line[i], "stand_in"), "false", "a driver-API load is never stood in for: %s",
                         rep.line[i]);
    int first = h_find(&rep, "image", lib_bytes + 1), second = h_find(&rep, "image", first + 1),
        third = h_find(&rep, "image", second + 1);
    cr_assert(first >= 0 && second > first && third > second, "%s", h_events(&rep));
    const char *bytes = rep.line[first], *nowhere = rep.line[second], *missing = rep.line[third];
    cr_expect_str_eq(h_str(bytes, "api"), "cuModuleLoadData");
    cr_expect_str_eq(h_str(bytes, "error"), "CUDA_ERROR_NO_BINARY_FOR_GPU");
    cr_expect_str_eq(h_str(bytes, "form"), "unknown", "%s", bytes);
    cr_expect_str_eq(h_str(bytes, "kernel"), "null");
    cr_expect_str_eq(h_str(nowhere, "error"), "CUDA_ERROR_INVALID_IMAGE");
    cr_expect_str_eq(h_str(nowhere, "address"), "0x10");
    cr_expect_str_eq(h_str(nowhere, "status"), "unreadable", "a pointer to nothing reads as unreadable: %s", nowhere);
    cr_expect_str_eq(h_str(missing, "api"), "cuModuleGetFunction");
    cr_expect_str_eq(h_str(missing, "kernel"), "no_such_kernel", "%s", missing);
    cr_expect_str_eq(h_str(missing, "error"), "CUDA_ERROR_NOT_FOUND");
    cr_expect_str_eq(h_str(missing, "device_cc"), "9.0", "%s", missing);
    const char *ex = rep.line[h_find(&rep, "exit", 0)];
    cr_expect_str_eq(h_str(ex, "unusable_images"), "5", "%s", ex);
    cr_expect(strstr(r.err, "summary: 0 failures, 0 skipped, 0 refused reads, 5 unusable images"), "%s", r.err);
    h_report_free(&rep);
    h_free(&r);
}
