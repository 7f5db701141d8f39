/*
 * test_graphs.c - explicit graphs at the driver level (the scenario client's
 * graph_update, every way of reaching the driver): the graph's read set is
 * checked at cuGraphLaunch, and after cuGraphExecKernelNodeSetParams or
 * cuGraphExecUpdate changes which buffer a node reads, the new input is the
 * one checked. Without the shim the stale input's output is served.
 * graph_host: a skipped graph's host copies, through the read rule.
 * graph_cond: a kernel inside a conditional node's body (fakecuda's) reads
 * a stale input: the graph launch is skipped, as for the exec's own nodes.
 * graph_reuse: threads instantiating and destroying execs at once, the
 * driver handing out a destroyed exec's handle again at once.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include "harness.h"

static const char *const clients[] = {CT_CLIENT_LINKED, CT_CLIENT_PTDS, CT_CLIENT_RUNTIME, CT_CLIENT_NOISE};

ParameterizedTestParameters(graphs, exec_changes_what_is_checked)
{
    return H_ROWS(clients);
}

ParameterizedTest(int *row, graphs, exec_changes_what_is_checked)
{
    h_run run = {.client = clients[*row], .args = {"graph_update"}};
    h_result alone, r;
    h_exec_baseline(&run, &alone);
    h_expect_ended(&alone);
    /* Without the shim the stale z (5) is read: y = 2 * 5. */
    cr_expect(h_has_line(alone.out, "read y after z: CUDA_SUCCESS first=10 last=10"), "baseline:\n%s", alone.out);
    cr_expect(h_has_line(alone.out, "read y after update: CUDA_SUCCESS first=10 last=10"), "baseline:\n%s", alone.out);
    h_free(&alone);

    h_exec(&run, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "launch fill z: CUDA_ERROR_INVALID_VALUE",
        "graph x: CUDA_SUCCESS",
        "read y after x: CUDA_SUCCESS first=2 last=2",
        "set params z: CUDA_SUCCESS",
        "graph z: CUDA_SUCCESS",
        "read y after z: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        /* the graph's memset rewrites y before saxpy reads it: a clean x runs again */
        "read y after x again: CUDA_SUCCESS first=2 last=2",
        "update z: CUDA_SUCCESS",
        "read y after update: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        NULL,
    };
    h_expect_lines(&r, lines);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_eq(h_count(&rep, "skip"), 2, "%s", h_events(&rep));
    int skip = h_find(&rep, "skip", 0);
    cr_assert(skip >= 0, "%s", h_events(&rep));
    cr_expect_str_eq(h_str(rep.line[skip], "kernel"), "saxpy(int, float, float const*, float*)");
    cr_expect(h_str(rep.line[skip], "graph") != NULL && h_str(rep.line[skip], "node") != NULL, "%s", rep.line[skip]);
    cr_expect_eq(h_count(&rep, "refused_read"), 2, "%s", h_events(&rep));
    h_report_free(&rep);
    h_free(&r);
}

/* A destroyed exec is forgotten before the driver can hand its handle to
 * another thread's cuGraphInstantiate: forgetting it after (as cutaint did)
 * forgot that thread's new exec now and then, whose launch then went
 * unchecked and served a y computed from stale x (a few of 60,000 on 2
 * cores, in every run; fakecuda reuses a freed handle first, as a pool). */
Test(graphs, a_handle_handed_out_again_keeps_its_new_exec_checked, .timeout = 120)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"graph_reuse", "60000"},
                    .no_report = true,
                    .env = {"CUTAINT_LOG=off"},
                    .timeout_s = 100},
           &r);
    h_expect_ended(&r);
    cr_expect(h_has_line(r.out, "launch fill x: CUDA_ERROR_INVALID_VALUE"), "%s", r.out);
    cr_expect(h_has_line(r.out, "graph_reuse: launches=60000 served=0 errors=0"), "stdout:\n%s\nstderr:\n%s", r.out,
              r.err);
    cr_expect_eq(r.status, 0);
    h_free(&r);
}

/* A skipped graph's host copies are read by the read rule, as every read
 * is: the copy of y (clean itself, but the graph never ran) is refused and
 * poisoned; the copy of x whose source pitch is narrower than its row is a
 * shape the rule leaves to the driver, so cutaint neither refuses nor
 * poisons it (it was refused and poisoned before, through the raw check). */
Test(graphs, a_skipped_graphs_host_copies_go_through_the_read_rule)
{
    h_run run = {.client = CT_CLIENT_LINKED, .args = {"graph_host"}};
    h_result alone, r;
    h_exec_baseline(&run, &alone);
    h_expect_ended(&alone);
    /* Without the shim the graph runs: the stale z (5) reaches the host. */
    cr_expect(h_has_line(alone.out, "read host y: CUDA_SUCCESS first=5 last=5"), "baseline:\n%s", alone.out);
    cr_expect(h_has_line(alone.out, "read host x: CUDA_SUCCESS first=1 last=1"), "baseline:\n%s", alone.out);
    h_free(&alone);

    h_exec(&run, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "launch fill z: CUDA_ERROR_INVALID_VALUE",
        "graph: CUDA_SUCCESS",
        "read host y: CUDA_SUCCESS bytes=0xff",
        "read host x: CUDA_SUCCESS bytes=0x3c",
        NULL,
    };
    h_expect_lines(&r, lines);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_eq(h_count(&rep, "skip"), 1, "%s", h_events(&rep));
    cr_expect_eq(h_count(&rep, "refused_read"), 1, "only the copy of y: %s", h_events(&rep));
    h_report_free(&rep);
    h_free(&r);
}

ParameterizedTestParameters(graphs, a_conditional_bodys_kernel_is_checked)
{
    return H_ROWS(clients);
}

/* cutaint follows a conditional node into its body (shim/graphs.c): the
 * body's kernel reading the stale z skips the whole graph launch, and y,
 * which the body would have written, is refused.  Without cutaint the
 * stale z's result is served. */
ParameterizedTest(int *row, graphs, a_conditional_bodys_kernel_is_checked)
{
    h_run run = {.client = clients[*row], .args = {"graph_cond"}, .env = {"CUTAINT_LOG=info"}};
    h_result alone, r;
    static const char *const common[] = {
        "handle: CUDA_SUCCESS",     "add conditional: CUDA_SUCCESS", "instantiate: CUDA_SUCCESS",
        "graph cond: CUDA_SUCCESS", "graph destroy: CUDA_SUCCESS",   NULL,
    };
    h_exec_baseline(&run, &alone);
    h_expect_ended(&alone);
    h_expect_lines(&alone, common);
    cr_expect(h_has_line(alone.out, "read y after cond: CUDA_SUCCESS first=10 last=10"), "baseline:\n%s", alone.out);
    h_free(&alone);

    h_exec(&run, &r);
    h_expect_ended(&r);
    h_expect_lines(&r, common);
    cr_expect(h_has_line(r.out, "read y after cond: CUDA_ERROR_INVALID_VALUE bytes=0xff"), "stdout:\n%s", r.out);
    cr_expect(strstr(r.err, "does not follow") == NULL, "the body is followed, the exec not opaque:\n%s", r.err);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_eq(h_count(&rep, "skip"), 1, "%s", h_events(&rep));
    int skip = h_find(&rep, "skip", 0);
    cr_assert(skip >= 0, "%s", h_events(&rep));
    cr_expect_str_eq(h_str(rep.line[skip], "kernel"), "saxpy(int, float, float const*, float*)");
    cr_expect_eq(h_count(&rep, "refused_read"), 1, "%s", h_events(&rep));
    h_report_free(&rep);
    h_free(&r);
}
