/*
 * test_loading.c - the same scenarios through every way a program reaches the
 * driver (clients/cuapi.h): linked with -lcuda; built with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM (the _ptds/_ptsz symbols); the CUDA
 * runtime's dlopen + dlsym + cuGetProcAddress sequence, never linking
 * libcuda; and linked while calling dlsym(RTLD_NEXT/RTLD_DEFAULT) for
 * unrelated names around every call.  The report's "api" fields show which
 * exported variant the shim caught.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include "harness.h"

typedef struct path_case {
    const char *name;
    const char *client;
    const char *launch_api; /* what the failure and skip events must name */
    const char *read_api;   /* what the refused_read events must name */
} path_case;

static const path_case paths[] = {
    {"linked", CT_CLIENT_LINKED, "cuLaunchKernel", "cuMemcpyDtoH_v2"},
    {"ptds", CT_CLIENT_PTDS, "cuLaunchKernel_ptsz", "cuMemcpyDtoH_v2_ptds"},
    {"runtime", CT_CLIENT_RUNTIME, "cuLaunchKernel", "cuMemcpyDtoH_v2"},
    {"noise", CT_CLIENT_NOISE, "cuLaunchKernel", "cuMemcpyDtoH_v2"},
};

ParameterizedTestParameters(loading, happy_identical)
{
    return H_ROWS(paths);
}

ParameterizedTest(int *row, loading, happy_identical)
{
    const path_case *p = &paths[*row];
    h_run run = {.client = p->client, .args = {"happy", "5"}};
    h_result with, alone, linked;
    h_exec(&run, &with);
    h_exec_baseline(&run, &alone);
    h_exec_baseline(&(h_run){.client = CT_CLIENT_LINKED, .args = {"happy", "5"}}, &linked);
    h_expect_ended(&alone);
    h_expect_ended(&with);
    /* The client itself is faithful: the same program whichever way it loads. */
    cr_expect_str_eq(alone.out, linked.out, "%s: differs from the linked client without any shim", p->name);
    cr_expect_str_eq(with.out, alone.out, "%s: stdout differs under the shim\n--- with\n%s--- without\n%s", p->name,
                     with.out, alone.out);
    cr_expect_str_eq(with.err, alone.err, "%s: stderr differs under the shim\n--- with\n%s--- without\n%s", p->name,
                     with.err, alone.err);
    cr_expect_eq(with.status, 5, "%s: exit status %d, the program's is 5", p->name, with.status);
    cr_expect_eq(h_count_containing(with.out, "noise:"), 0, "%s: dlsym answered wrongly under the shim:\n%s", p->name,
                 with.out);
    h_report rep;
    h_expect_report(&with, &rep);
    cr_expect_str_eq(h_events(&rep), "start,exit", "%s: happy path report", p->name);
    h_report_free(&rep);
    h_free(&with);
    h_free(&alone);
    h_free(&linked);
}

ParameterizedTestParameters(loading, two_hops)
{
    return H_ROWS(paths);
}

ParameterizedTest(int *row, loading, two_hops)
{
    const path_case *p = &paths[*row];
    h_result r;
    h_exec(&(h_run){.client = p->client, .args = {"two_hops"}}, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "launch fill x: CUDA_ERROR_INVALID_VALUE",     "launch saxpy x y: CUDA_SUCCESS",
        "read u: CUDA_SUCCESS first=4 last=4",         "read y: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff", NULL,
    };
    cr_log_info("loading path %s", p->name);
    h_expect_lines(&r, lines);
    cr_expect_eq(h_count_containing(r.out, "noise:"), 0, "%s: dlsym answered wrongly:\n%s", p->name, r.out);

    h_report rep;
    h_expect_report(&r, &rep);
    int f = h_find(&rep, "failure", 0), s = h_find(&rep, "skip", 0), rr = h_find(&rep, "refused_read", 0);
    cr_assert(f >= 0 && s >= 0 && rr >= 0, "%s: events %s", p->name, h_events(&rep));
    cr_expect_str_eq(h_str(rep.line[f], "api"), p->launch_api, "%s: failure caught at %s", p->name,
                     h_str(rep.line[f], "api"));
    cr_expect_str_eq(h_str(rep.line[s], "api"), p->launch_api, "%s: skip caught at %s", p->name,
                     h_str(rep.line[s], "api"));
    cr_expect_str_eq(h_str(rep.line[rr], "api"), p->read_api, "%s: read caught at %s", p->name,
                     h_str(rep.line[rr], "api"));
    h_report_free(&rep);
    h_free(&r);
}

/* An unmodified runtime-style program under the shim must get working entry
 * points for every lookup, at 11030 and 12000 alike: cuapi_load prints and
 * exits 3 otherwise. */
Test(loading, runtime_lookups_all_succeed)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_RUNTIME, .args = {"failed_launch"}}, &r);
    h_expect_ended(&r);
    cr_expect_neq(r.status, 3, "a cuGetProcAddress lookup failed under the shim:\n%s", r.err);
    cr_expect_eq(h_count_containing(r.err, "client:"), 0, "%s", r.err);
    cr_expect(h_has_line(r.out, "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff"), "%s", r.out);
    h_free(&r);
}
