/*
 * test_libcalls.c - calls into CUDA libraries as failures (issue 46), on
 * fakecuda with test-double libraries (doubles/): a cuRAND generation that
 * returns an error leaves its output refused, not served stale; a GEMM with
 * a bad leading dimension likewise, and a correct GEMM after it reads
 * correctly; a successful call releases exactly its extent; a GEMM reading a failed generation's output is skipped (its
 * answer per CUTAINT_ON_SKIP, in cuBLAS's codes) and the read of its output
 * names the path; a call the library makes into another wrapped one is not
 * accounted (only the outermost is); a library loaded into a local scope
 * (RTLD_LOCAL) is reached, and so is one reached only through dlsym on its
 * own handle; metrics count failures by library; a cuFFT execution's
 * extents are its plan's; an output scaled by a zero beta is not read; a
 * cuSOLVER call's nonzero devInfo refuses its outputs at the next
 * synchronous read, and a *Batched GEMM's matrices are followed there too.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define POISONED "bits=0xffffffff"
#define STALE_ONE "bits=0x3f800000"   /* 1.0f: what x held before */
#define STALE_SEVEN "bits=0x40e00000" /* 7.0f: what c held before */

static void run_libcalls(const char *scenario, const char *env, h_result *r)
{
    h_exec(&(h_run){.client = CT_CLIENT_LIBCALLS, .args = {scenario}, .env = {env}}, r);
    h_expect_ended(r);
}

/* The report's only failure event: its api and status. */
static void expect_failure(const h_result *r, const char *api, const char *status)
{
    h_report rep;
    h_expect_report(r, &rep);
    cr_expect_eq(h_count(&rep, "failure"), 1, "events: %s", h_events(&rep));
    int i = h_find(&rep, "failure", 0);
    if (i >= 0) {
        cr_expect_str_eq(h_str(rep.line[i], "api"), api);
        cr_expect_str_eq(h_str(rep.line[i], "status"), status);
    }
    h_report_free(&rep);
}

Test(libcalls, a_failed_generation_is_refused_not_served_stale)
{
    h_result alone, r;
    h_exec_baseline(&(h_run){.client = CT_CLIENT_LIBCALLS, .args = {"rand_fail"}}, &alone);
    cr_expect(h_has_line(alone.out, "read x: CUDA_SUCCESS " STALE_ONE), "baseline serves stale bytes:\n%s", alone.out);
    h_free(&alone);

    run_libcalls("rand_fail", NULL, &r);
    static const char *const lines[] = {
        "generate x: 201",
        "read x: CUDA_ERROR_UNKNOWN " POISONED,
        "generate x again: 0",
        "read x: CUDA_SUCCESS bits=0x3d000000", /* 0.5 / 16: the generation's own */
        NULL,
    };
    h_expect_lines(&r, lines);
    expect_failure(&r, "curandGenerateUniform", "CURAND_STATUS_LAUNCH_FAILURE (201)");
    cr_expect_eq(h_count_lines_with(r.err,
                                    (const char *const[]){"curandGenerateUniform returned",
                                                          "CURAND_STATUS_LAUNCH_FAILURE (201); the bytes", NULL}),
                 1, "stderr:\n%s", r.err);
    cr_expect_eq(r.status, 0);
    h_free(&r);
}

Test(libcalls, a_gemm_with_a_bad_argument_is_refused_and_a_correct_one_reads_correctly)
{
    h_result alone, r;
    h_exec_baseline(&(h_run){.client = CT_CLIENT_LIBCALLS, .args = {"gemm"}}, &alone);
    cr_expect(h_has_line(alone.out, "read c: CUDA_SUCCESS " STALE_SEVEN), "baseline serves stale bytes:\n%s",
              alone.out);
    h_free(&alone);

    run_libcalls("gemm", NULL, &r);
    static const char *const lines[] = {
        "gemm ldc=3: 7", "read c: CUDA_ERROR_UNKNOWN " POISONED, "gemm ldc=4: 0", "c: correct", NULL,
    };
    h_expect_lines(&r, lines);
    cr_expect(h_count_containing(r.out, "read c: CUDA_SUCCESS") == 1, "the correct GEMM's C reads:\n%s", r.out);
    expect_failure(&r, "cublasSgemm_v2", "CUBLAS_STATUS_INVALID_VALUE (7)");
    h_free(&r);
}

Test(libcalls, a_gemm_reading_a_failed_generation_is_skipped)
{
    h_result r;
    run_libcalls("skip", NULL, &r);
    static const char *const lines[] = {
        "generate a: 201",
        "gemm: 0", /* CUTAINT_ON_SKIP=propagate: cuBLAS's success */
        "read c: CUDA_ERROR_UNKNOWN " POISONED,
        NULL,
    };
    h_expect_lines(&r, lines);
    h_report rep;
    h_expect_report(&r, &rep);
    int f = h_find(&rep, "failure", 0), s = h_find(&rep, "skip", 0), read = h_find(&rep, "refused_read", 0);
    cr_assert(f >= 0 && s > f && read > s, "events: %s", h_events(&rep));
    cr_expect_str_eq(h_str(rep.line[s], "api"), "cublasSgemm_v2");
    cr_expect_str_eq(h_str(rep.line[s], "failure"), h_str(rep.line[f], "id"), "the skip passes the root on");
    cr_expect_str_eq(h_str(rep.line[read], "root"), h_str(rep.line[f], "id"));
    cr_expect_eq(h_arr_len(rep.line[read], "path"), 2);
    cr_expect_str_eq(h_arr_str(rep.line[read], "path", 0), "curandGenerateUniform");
    cr_expect_str_eq(h_arr_str(rep.line[read], "path", 1), "cublasSgemm_v2");
    h_report_free(&rep);
#ifdef CT_CUTAINT_TOOL
    /* The tree: the library call as the root with its status, the GEMM as
     * a skipped step naming the generated bytes it read. */
    h_result text;
    h_exec(&(h_run){.client = CT_CUTAINT_TOOL, .args = {"report", r.report}, .no_shim = true}, &text);
    h_expect_ended(&text);
    cr_expect(strstr(text.out, "failure #1: curandGenerateUniform -> CURAND_STATUS_LAUNCH_FAILURE (201)\n"), "%s",
              text.out);
    cr_expect(strstr(text.out, "skipped library call: cublasSgemm_v2 (input 0x"), "%s", text.out);
    cr_expect(strstr(text.out, "0 skipped launches, 1 skipped library call, 1 refused read"), "%s", text.out);
    h_free(&text);
    /* The JSON summary's failure carries the library's status too. */
    h_exec(&(h_run){.client = CT_CUTAINT_TOOL, .args = {"report", "--format", "json", r.report}, .no_shim = true},
           &text);
    h_expect_ended(&text);
    cr_expect(strstr(text.out, "\"api\":\"curandGenerateUniform\""), "%s", text.out);
    cr_expect(strstr(text.out, "\"status\":\"CURAND_STATUS_LAUNCH_FAILURE (201)\""), "%s", text.out);
    h_free(&text);
#endif
    h_free(&r);

    run_libcalls("skip", "CUTAINT_ON_SKIP=error", &r);
    cr_expect(h_has_line(r.out, "gemm: 13"), "under error: CUBLAS_STATUS_EXECUTION_FAILED\n%s", r.out);
    h_free(&r);
}

Test(libcalls, a_successful_call_releases_exactly_its_extent)
{
    h_result r;
    run_libcalls("release", NULL, &r);
    static const char *const lines[] = {
        "generate x: 201",
        "gemm into x: 0",
        "read c: CUDA_SUCCESS " STALE_ONE,      /* its M x N: the GEMM's to write (the double wrote nothing) */
        "read x: CUDA_ERROR_UNKNOWN " POISONED, /* the rest still carries the generation's failure */
        NULL,
    };
    h_expect_lines(&r, lines);
    h_free(&r);
}

Test(libcalls, a_call_inside_another_library_call_is_not_accounted)
{
    h_result r;
    run_libcalls("nested", NULL, &r);
    static const char *const lines[] = {"gemm ex: 0", "c: correct", NULL};
    h_expect_lines(&r, lines);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_eq(h_count(&rep, "failure"), 0, "the probe cublasGemmEx made and recovered from is its own: %s",
                 h_events(&rep));
    h_report_free(&rep);
    h_free(&r);
}

/* The library reached only through a local scope (a Python extension's
 * libcurand): its calls are still the library's, and still accounted. */
Test(libcalls, a_library_in_a_local_scope_is_reached)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIBCALLS_LOCAL, .args = {CT_LOCAL_USER}}, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "generate x: 201",
        "read x: CUDA_ERROR_UNKNOWN " POISONED,
        "generate x again: 0",
        "read x: CUDA_SUCCESS bits=0x3d000000",
        NULL,
    };
    h_expect_lines(&r, lines);
    h_free(&r);
}

/* dlopen("libcublas...") then dlsym on that handle: the wrapper, not the
 * library's own function, whose failures would go unseen. */
Test(libcalls, a_library_reached_through_dlsym_on_its_own_handle_is_reached)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIBCALLS_DLOPEN, .args = {CT_EVERY_ROW_DOUBLE}}, &r);
    h_expect_ended(&r);
    cr_expect_str_eq(r.out, "generate: 201\n"
                            "read x: CUDA_ERROR_UNKNOWN\n"
                            "generate again: 0\n"
                            "read x: CUDA_SUCCESS\n"
                            "gemm: 7\n"
                            "read c: CUDA_ERROR_UNKNOWN\n");
    cr_expect_eq(r.status, 0);
    h_free(&r);
}

/* A plan made through its wrapper gives its executions their extents; one
 * destroyed (or never seen made) leaves an execution today's: the rest of
 * each buffer's allocation. */
Test(libcalls, a_cufft_execution_covers_its_plan_and_a_destroyed_plan_the_whole_buffer)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIBCALLS_ROWS, .args = {"fft"}}, &r);
    h_expect_ended(&r);
    cr_expect_str_eq(r.out, "plan: 0\n"
                            "exec: 6\n"
                            "read out in the plan: CUDA_ERROR_UNKNOWN\n"
                            "read out past the plan: CUDA_SUCCESS\n" /* 2 x 16 complex: 256 of 4096 bytes */
                            "destroy: 0\n"
                            "exec on a destroyed plan: 6\n"
                            "read out in the plan: CUDA_ERROR_UNKNOWN\n"
                            "read out past the plan: CUDA_ERROR_UNKNOWN\n");
    cr_expect_eq(r.status, 0);
    h_free(&r);
}

/* y = ... + beta * y over a tainted y: a host beta of 0 reads nothing of y
 * (the call runs and cleans it), as GEMM's; a host 1 or a device beta reads
 * it (skipped, y still refused). */
Test(libcalls, spmv_spmm_and_cublaslt_with_a_zero_beta_clean_their_output)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIBCALLS_ROWS, .args = {"scaled"}}, &r);
    h_expect_ended(&r);
    cr_expect_str_eq(r.out, "spmv beta 0: 0\nread y: CUDA_SUCCESS\n"
                            "spmv beta 1: 0\nread y: CUDA_ERROR_UNKNOWN\n"
                            "spmv device beta 0: 0\nread y: CUDA_ERROR_UNKNOWN\n"
                            "spmm beta 0: 0\nread y: CUDA_SUCCESS\n"
                            "spmm beta 1: 0\nread y: CUDA_ERROR_UNKNOWN\n"
                            "spmm device beta 0: 0\nread y: CUDA_ERROR_UNKNOWN\n"
                            "matmul beta 0: 0\nread y: CUDA_SUCCESS\n"
                            "matmul beta 1: 0\nread y: CUDA_ERROR_UNKNOWN\n"
                            "matmul device beta 0: 0\nread y: CUDA_ERROR_UNKNOWN\n"
                            "matmul beta zero mode: 0\nread y: CUDA_SUCCESS\n");
    cr_expect_eq(r.status, 0);
    h_free(&r);
}

Test(libcalls, metrics_count_library_failures_by_library)
{
    h_result r;
    run_libcalls("gemm", "CUTAINT_METRICS_FILE=@DIR@/metrics.prom", &r);
    char *text = h_slurp(h_path(&r, "metrics.prom"));
    cr_assert_not_null(text);
    cr_expect(strstr(text, "cutaint_library_failures_total{") && strstr(text, "library=\"cublas\"} 1\n"), "%s", text);
    cr_expect(strstr(text, "error=\"CUBLAS_STATUS_INVALID_VALUE\"} 1\n"), "%s", text);
    free(text);
    h_free(&r);
}

/* A *Batched GEMM's matrices lie behind device arrays of pointers: they are
 * followed at the program's next synchronous read, with no synchronisation
 * of cutaint's own.  A batch with a bad argument leaves every C refused; a
 * correct one (beta 0) after it releases them; one whose A0 is a failed
 * generation's output leaves C0 refused, C1 served. */
Test(libcalls, a_batched_gemm_follows_its_pointer_arrays_at_the_next_synchronous_read)
{
    h_result alone, r;
    h_exec_baseline(&(h_run){.client = CT_CLIENT_LIBCALLS, .args = {"batched"}}, &alone);
    cr_expect(h_has_line(alone.out, "read c0: CUDA_SUCCESS " STALE_SEVEN), "baseline serves stale bytes:\n%s",
              alone.out);
    h_free(&alone);

    run_libcalls("batched", NULL, &r);
    cr_expect_str_eq(r.out, "batched ldc=3: 7\n"
                            "read c0: CUDA_ERROR_UNKNOWN " POISONED "\n"
                            "read c1: CUDA_ERROR_UNKNOWN " POISONED "\n"
                            "batched ldc=4: 0\n"
                            "read c0: CUDA_SUCCESS bits=0x42820000\n" /* 1 * 10 + 5 * 11 */
                            "c0: correct\n"
                            "read c1: CUDA_SUCCESS bits=0x42820000\n"
                            "c1: correct\n"
                            "generate a0: 201\n"
                            "batched: 0\n"
                            "read c0: CUDA_ERROR_UNKNOWN " POISONED "\n"
                            "read c1: CUDA_SUCCESS bits=0x42820000\n"
                            "c1: correct\n");
    h_report rep;
    h_expect_report(&r, &rep);
    int f = h_find(&rep, "failure", 0), s = h_find(&rep, "skip", 0);
    cr_assert(f >= 0 && s > f, "events: %s", h_events(&rep));
    cr_expect_str_eq(h_str(rep.line[f], "api"), "cublasSgemmBatched");
    cr_expect_str_eq(h_str(rep.line[f], "status"), "CUBLAS_STATUS_INVALID_VALUE (7)");
    cr_expect_str_eq(h_str(rep.line[s], "api"), "cublasSgemmBatched", "C0 takes the generation's failure");
    h_report_free(&rep);
    h_free(&r);
}

/* cuSOLVER answers success and reports on the device (devInfo) that a
 * Cholesky met a minor that is not positive definite: the factor the
 * program then reads synchronously is refused, devInfo itself is served,
 * an asynchronous read is not checked (docs/PRECISION.md), and the report's
 * root names the call and the value. */
Test(libcalls, a_nonzero_dev_info_refuses_the_outputs_at_the_next_synchronous_read)
{
    h_result alone, r;
    h_exec_baseline(&(h_run){.client = CT_CLIENT_LIBCALLS, .args = {"potrf"}}, &alone);
    cr_expect(h_count_containing(alone.out, "read a: CUDA_SUCCESS") == 2, "baseline serves the half-done factor:\n%s",
              alone.out);
    h_free(&alone);

    run_libcalls("potrf", "CUTAINT_METRICS_FILE=@DIR@/metrics.prom", &r);
    cr_expect_str_eq(r.out, "potrf good: 0\n"
                            "read a: CUDA_SUCCESS bits=0x3fddb3d7\n" /* sqrt(3): devInfo 0, the factor */
                            "potrf bad: 0\n"
                            "read a: CUDA_ERROR_UNKNOWN " POISONED "\n"
                            "read info: CUDA_SUCCESS 2\n" /* the library's answer is data */
                            "potrf bad: 0\n"
                            /* not checked: no synchronisation to read devInfo under */
                            "read a async: 0 bits=0x3f800000\n");
    expect_failure(&r, "cusolverDnSpotrf", "devInfo=2");
    char *text = h_slurp(h_path(&r, "metrics.prom"));
    cr_assert_not_null(text);
    cr_expect(strstr(text, "library=\"cusolver\"} 1\n"), "%s", text);
    free(text);
#ifdef CT_CUTAINT_TOOL
    h_result tree;
    h_exec(&(h_run){.client = CT_CUTAINT_TOOL, .args = {"report", r.report}, .no_shim = true}, &tree);
    h_expect_ended(&tree);
    cr_expect(strstr(tree.out, "failure #1: cusolverDnSpotrf -> devInfo=2\n"), "%s", tree.out);
    cr_expect(strstr(tree.out, "1 root failure, 0 skipped launches, 1 refused read"), "%s", tree.out);
    h_free(&tree);
#endif
    h_free(&r);

    /* devInfo read first: served, and the factor is refused all the same. */
    h_exec(&(h_run){.client = CT_CLIENT_LIBCALLS, .args = {"potrf", "info-first"}}, &r);
    h_expect_ended(&r);
    cr_expect(strstr(r.out, "potrf bad: 0\nread info: CUDA_SUCCESS 2\nread a: CUDA_ERROR_UNKNOWN " POISONED "\n"), "%s",
              r.out);
    h_free(&r);
}

/* The first line where got and want differ, with the row it belongs to
 * (the last line not indented before it); NULL when they are the same. */
static char *first_difference(const char *got, const char *want)
{
    const char *g = got, *w = want, *row = want;
    while (*g || *w) {
        size_t gl = strcspn(g, "\n"), wl = strcspn(w, "\n");
        if (*w != ' ')
            row = w;
        if (gl != wl || strncmp(g, w, gl) != 0) {
            char *text = NULL;
            size_t size = 0;
            FILE *f = open_memstream(&text, &size);
            fprintf(f, "row \"%.*s\": got \"%.*s\", expected \"%.*s\"", (int)strcspn(row, "\n"), row, (int)gl, g,
                    (int)wl, w);
            fclose(f);
            return text;
        }
        g += gl + (g[gl] == '\n');
        w += wl + (w[wl] == '\n');
    }
    return NULL;
}

/* Every row of shim/libcalls.def through its wrapper into the generated
 * double (clients/every_row.c): what a failure taints, what a success
 * releases, what each argument's failure skips, against the reviewed
 * libcalls_every_row.expected: its numbers are the extents the client's
 * fixed arguments give, checked by hand family by family, so a row whose
 * direction or extent changes in the table shows here as that row. */
Test(libcalls, every_row_of_the_table_taints_releases_and_skips_as_expected)
{
    char *want = h_slurp(CT_EVERY_ROW_EXPECTED);
    cr_assert_not_null(want, "%s", CT_EVERY_ROW_EXPECTED);
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_EVERY_ROW, .env = {"CUTAINT_ON_SKIP=error"}}, &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0, "stderr tail: %s", r.err + (strlen(r.err) > 2000 ? strlen(r.err) - 2000 : 0));
    char *difference = first_difference(r.out, want);
    cr_expect_null(difference, "%s", difference);
    free(difference);
    free(want);
    h_free(&r);

    /* Under propagate, a skipped call answers its library's success. */
    h_exec(&(h_run){.client = CT_CLIENT_EVERY_ROW}, &r);
    h_expect_ended(&r);
    int skips = h_count_containing(r.out, "skip-status ");
    cr_expect_gt(skips, 0);
    cr_expect_eq(h_count_containing(r.out, "skip-status 0"), skips, "%s", r.out);
    h_free(&r);
}
