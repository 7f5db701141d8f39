/*
 * test_layers.c - cutaint beside another interposer (layer/testlayer.c, in
 * the GPU-sharing layers' pattern: its own cu* exports, a dlsym override,
 * cuGetProcAddress pointers swapped), both load orders, on the linked
 * (-lcuda) and the runtime's loading path (dlopen + dlsym +
 * cuGetProcAddress), with the layer resolving the driver as stacking
 * interposers do (the next dlsym) and as HAMi-core does (glibc's dlsym by
 * version, handle lookups, RTLD_NEXT).  The layer counts the calls that
 * reach it; the same program under the layer alone says what the program
 * made.
 *   cutaint first: every call cutaint passes down reaches the layer (the
 *     same counts as alone), those it answers itself (the skipped launch,
 *     the refused reads) do not, and cutaint's checks hold.
 *   layer first: the layer sees every call, cutaint still checks the ones
 *     the layer passes on, and says it is not first.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

typedef enum { LAYER_ONLY, SHIM_FIRST, LAYER_FIRST } load_order;

static const char *const counted[] = {"cuMemAlloc_v2", "cuMemcpyDtoH_v2", "cuLaunchKernel", "cuGetProcAddress_v2",
                                      "cuGetProcAddress"};
#define N_COUNTED (sizeof counted / sizeof counted[0])

typedef struct layer_run {
    h_result r;
    long count[N_COUNTED];
} layer_run;

typedef struct path_case path_case;
static void run_limited(const path_case *p, const char *scenario, load_order order, const char *limit, layer_run *out);

static void run_layered(const path_case *p, const char *scenario, load_order order, layer_run *out)
{
    run_limited(p, scenario, order, "TESTLAYER_MEMORY_LIMIT=", out);
}

struct path_case {
    const char *name;
    const char *client;
    bool runtime;      /* reaches the driver through cuGetProcAddress */
    const char *layer; /* the layer's path */
};

/* limit: the layer's TESTLAYER_MEMORY_LIMIT, "" for none. */
static void run_limited(const path_case *p, const char *scenario, load_order order, const char *limit, layer_run *out)
{
    char preload[1024];
    if (order == LAYER_ONLY)
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s", p->layer);
    else
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s %s", order == SHIM_FIRST ? CT_SHIM : p->layer,
                 order == SHIM_FIRST ? p->layer : CT_SHIM);
    h_exec(&(h_run){.client = p->client,
                    .args = {scenario},
                    .no_shim = true,
                    .env = {preload, "CUTAINT_REPORT=@DIR@/report.jsonl", "TESTLAYER_COUNTS=@DIR@/counts", limit}},
           &out->r);
    h_expect_ended(&out->r);
    char *text = h_slurp(h_path(&out->r, "counts"));
    cr_assert(text != NULL, "the layer wrote no counts (was it loaded?)\n--- stderr\n%s", out->r.err);
    for (size_t i = 0; i < N_COUNTED; i++) {
        char key[64];
        snprintf(key, sizeof key, "%s ", counted[i]);
        const char *line = h_line_containing(text, key);
        out->count[i] = line[0] && strncmp(line, key, strlen(key)) == 0 ? atol(line + strlen(key)) : -1;
    }
    free(text);
}

static const path_case paths[] = {
    {"linked", CT_CLIENT_LINKED, false, CT_TESTLAYER},
    {"runtime", CT_CLIENT_RUNTIME, true, CT_TESTLAYER},
    {"linked, HAMi-core's resolution", CT_CLIENT_LINKED, false, CT_TESTLAYER_HAMI},
    {"runtime, HAMi-core's resolution", CT_CLIENT_RUNTIME, true, CT_TESTLAYER_HAMI},
};

static const char *layer_name(const path_case *p)
{
    return strrchr(p->layer, '/') + 1;
}

static const char *const refused_lines[] = {"launch fill x: CUDA_ERROR_INVALID_VALUE",
                                            "read u: CUDA_SUCCESS first=4 last=4",
                                            "read y: CUDA_ERROR_INVALID_VALUE bytes=0xff",
                                            "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff", NULL};

/* cutaint's checks held: the refusals on stdout, the story in the report. */
static void expect_checked(const path_case *p, const layer_run *with)
{
    h_expect_lines(&with->r, refused_lines);
    h_report rep;
    h_expect_report(&with->r, &rep);
    cr_expect_str_eq(h_events(&rep), "start,failure,probe,skip,refused_read,refused_read,exit", "%s", p->name);
    h_report_free(&rep);
}

ParameterizedTestParameters(layers, cutaint_first_passes_every_call_down)
{
    return H_ROWS(paths);
}

ParameterizedTest(int *row, layers, cutaint_first_passes_every_call_down)
{
    const path_case *p = &paths[*row];
    layer_run alone, with;
    run_layered(p, "two_hops", LAYER_ONLY, &alone);
    run_layered(p, "two_hops", SHIM_FIRST, &with);
    cr_log_info("path %s", p->name);
    expect_checked(p, &with);
    /* The skipped saxpy and the two refused reads never reach the driver,
     * nor the layer; everything else does, once. */
    static const long answered[N_COUNTED] = {0, 2, 1, 0, 0};
    for (size_t i = 0; i < N_COUNTED; i++)
        cr_expect_eq(with.count[i], alone.count[i] - answered[i], "%s: %s reached the layer %ld times, alone %ld",
                     p->name, counted[i], with.count[i], alone.count[i]);
    cr_expect(alone.count[0] == 3 && alone.count[2] == 4, "%s: the layer alone saw the program's calls", p->name);
    if (p->runtime)
        cr_expect(with.count[3] > 0, "%s: the runtime's lookups must go through the layer's cuGetProcAddress", p->name);
    cr_expect_eq(h_count_containing(with.r.err, "loaded before libcutaint.so"), 0, "%s", with.r.err);
    h_free(&alone.r);
    h_free(&with.r);
}

ParameterizedTestParameters(layers, happy_path_identical_in_both_orders)
{
    return H_ROWS(paths);
}

ParameterizedTest(int *row, layers, happy_path_identical_in_both_orders)
{
    const path_case *p = &paths[*row];
    layer_run alone, first, second;
    run_layered(p, "happy", LAYER_ONLY, &alone);
    run_layered(p, "happy", SHIM_FIRST, &first);
    run_layered(p, "happy", LAYER_FIRST, &second);
    cr_expect_str_eq(first.r.out, alone.r.out, "%s: cutaint first changes the program's output", p->name);
    cr_expect_str_eq(second.r.out, alone.r.out, "%s: layer first changes the program's output", p->name);
    for (size_t i = 0; i < N_COUNTED; i++) {
        cr_expect_eq(first.count[i], alone.count[i], "%s: cutaint first: %s %ld, alone %ld", p->name, counted[i],
                     first.count[i], alone.count[i]);
        cr_expect_eq(second.count[i], alone.count[i], "%s: layer first: %s %ld, alone %ld", p->name, counted[i],
                     second.count[i], alone.count[i]);
    }
    h_free(&alone.r);
    h_free(&first.r);
    h_free(&second.r);
}

ParameterizedTestParameters(layers, layer_first_is_still_checked_and_said)
{
    return H_ROWS(paths);
}

ParameterizedTest(int *row, layers, layer_first_is_still_checked_and_said)
{
    const path_case *p = &paths[*row];
    layer_run alone, with;
    run_layered(p, "two_hops", LAYER_ONLY, &alone);
    run_layered(p, "two_hops", LAYER_FIRST, &with);
    cr_log_info("path %s", p->name);
    expect_checked(p, &with);
    for (size_t i = 0; i < N_COUNTED; i++)
        cr_expect_eq(with.count[i], alone.count[i], "%s: the layer, first, sees every call: %s %ld, alone %ld", p->name,
                     counted[i], with.count[i], alone.count[i]);
    char said[256];
    snprintf(said, sizeof said, "%s is loaded before libcutaint.so", layer_name(p));
    cr_expect_eq(h_count_containing(with.r.err, said), 1, "%s: cutaint must say once that it is not first:\n%s",
                 p->name, with.r.err);
    snprintf(said, sizeof said, "LD_PRELOAD=\"libcutaint.so %s\"", layer_name(p));
    cr_expect_eq(h_count_containing(with.r.err, said), 1, "%s", with.r.err);
    h_free(&alone.r);
    h_free(&with.r);
}

ParameterizedTestParameters(layers, the_layers_limit_holds_in_both_orders)
{
    return H_ROWS(paths);
}

/* The layer's own effect: two 4 KiB buffers fit its limit, the third is
 * refused by the layer, in either order, and the program stops there. */
ParameterizedTest(int *row, layers, the_layers_limit_holds_in_both_orders)
{
    const path_case *p = &paths[*row];
    static const char *const stopped[] = {"setup cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY", NULL};
    const load_order orders[] = {LAYER_ONLY, SHIM_FIRST, LAYER_FIRST};
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++) {
        layer_run run;
        run_limited(p, "happy", orders[i], "TESTLAYER_MEMORY_LIMIT=8192", &run);
        cr_log_info("%s, order %zu", p->name, i);
        h_expect_lines(&run.r, stopped);
        cr_expect_eq(run.r.status, 4, "%s, order %zu: exit status %d", p->name, i, run.r.status);
        cr_expect_eq(run.count[0], 3, "%s, order %zu: cuMemAlloc_v2 reached the layer %ld times, want 3", p->name, i,
                     run.count[0]);
        h_free(&run.r);
    }
}

/* A layer first that reaches the driver around every hook (glibc's dlsym
 * asked of libc.so.6): on the runtime path no call reaches cutaint, so it
 * can check nothing, but at exit the driver says it was used and cutaint
 * says the process ran unprotected: one line, start and exit events, the
 * exit's unprotected field and the metric.  The program is unchanged.
 * Whichever way the driver tears itself down: in its destructor (after
 * cutaint's), or in an exit handler it registered at cuInit (before
 * cutaint's destructor: FAKECUDA_TEARDOWN=atexit). */
static void expect_said_at_exit(const char *teardown)
{
    h_result alone, with;
    const h_run run = {.client = CT_CLIENT_RUNTIME,
                       .args = {"happy"},
                       .no_shim = true,
                       .env = {"LD_PRELOAD=" CT_TESTLAYER_BYPASS " " CT_SHIM, "CUTAINT_REPORT=@DIR@/report.jsonl",
                               "CUTAINT_METRICS_FILE=@DIR@/metrics.prom", teardown}};
    h_exec(&(h_run){.client = CT_CLIENT_RUNTIME,
                    .args = {"happy"},
                    .no_shim = true,
                    .env = {"LD_PRELOAD=" CT_TESTLAYER_BYPASS, teardown}},
           &alone);
    h_exec(&run, &with);
    h_expect_ended(&with);
    cr_expect_eq(with.status, alone.status);
    cr_expect_str_eq(with.out, alone.out, "the program's output is its own");
    cr_expect_eq(h_count_containing(with.err, "none of its calls reached cutaint: libtestlayer_bypass.so"), 1,
                 "%s: said once, naming the layer:\n%s", teardown, with.err);
    h_report rep;
    h_expect_report(&with, &rep);
    cr_expect_str_eq(h_events(&rep), "start,exit", "nothing else was seen");
    h_report_free(&rep);
    char *report = h_slurp(with.report);
    cr_expect(report && strstr(report, "\"unprotected\":true"), "%s: the exit says it:\n%s", teardown,
              report ? report : "");
    free(report);
    char *metrics = h_slurp(h_path(&with, "metrics.prom"));
    cr_expect(metrics && h_line_containing(metrics, "cutaint_unprotected{")[0] &&
                  strstr(h_line_containing(metrics, "cutaint_unprotected{"), "} 1"),
              "%s: the metric says it:\n%s", teardown, metrics ? metrics : "");
    free(metrics);
    h_free(&alone);
    h_free(&with);
}

Test(layers, a_layer_around_every_hook_is_said_at_exit)
{
    expect_said_at_exit("FAKECUDA_TEARDOWN=destructor");
}

Test(layers, a_layer_around_every_hook_is_said_before_a_teardown_at_exit)
{
    expect_said_at_exit("FAKECUDA_TEARDOWN=atexit");
}

/* Silent where nothing was bypassed: a program that loads the driver and
 * never uses it, and the linked path (the calls the layer does not define
 * still reach cutaint, which says only that it is not first). */
Test(layers, a_driver_never_used_or_a_layer_partly_around_is_not_unprotected)
{
    h_result probe, linked;
    h_exec(&(h_run){.client = CT_CLIENT_LOADONLY,
                    .env = {"LD_PRELOAD=" CT_TESTLAYER_BYPASS " " CT_SHIM},
                    .no_shim = true},
           &probe);
    cr_expect_str_eq(probe.out, "loaded\n");
    cr_expect_str_eq(probe.err, "", "a driver loaded and never used is no bypass");
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"happy"},
                    .no_shim = true,
                    .env = {"LD_PRELOAD=" CT_TESTLAYER_BYPASS " " CT_SHIM, "CUTAINT_REPORT=@DIR@/report.jsonl"}},
           &linked);
    cr_expect_eq(h_count_containing(linked.err, "none of its calls reached cutaint"), 0, "%s", linked.err);
    cr_expect_eq(h_count_containing(linked.err, "libtestlayer_bypass.so is loaded before libcutaint.so"), 1, "%s",
                 linked.err);
    h_free(&probe);
    h_free(&linked);
}
