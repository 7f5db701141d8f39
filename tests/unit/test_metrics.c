/*
 * test_metrics.c - the Prometheus text of core/metrics.h: the exact
 * exposition of a small case, label escaping, the full table folding into
 * "(other)", and all-or-nothing formatting.  (The integration tests parse
 * real files with promtool and prometheus_client.)
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "metrics.h"

static char text[CT_METRICS_TEXT_MAX];

static const char *format(const ct_metrics *m)
{
    size_t n = ct_metrics_format(m, text, sizeof text);
    cr_assert(n > 0 && n == strlen(text));
    return text;
}

Test(metrics, exact_exposition)
{
    static ct_metrics m;
    ct_metrics_init(&m, "0.1.0", 12080, 42, "node1");
    ct_metrics_failure(&m, "cuLaunchKernel", "fill(float*)", "CUDA_ERROR_INVALID_VALUE");
    ct_metrics_failure(&m, "cuLaunchKernel", "fill(float*)", "CUDA_ERROR_INVALID_VALUE");
    ct_metrics_failure(&m, "cuMemcpyHtoD_v2", NULL, "CUDA_ERROR_UNKNOWN");
    m.skips = 3;
    m.refused_reads = 2;
    m.refused_bytes = 8192;
    m.context_lost = true;
    m.unprotected = true;
    const char *t = format(&m);
    static const char *const lines[] = {
        "# TYPE cutaint_info gauge\n"
        "cutaint_info{host=\"node1\",pid=\"42\",version=\"0.1.0\",driver_version=\"12080\"} 1\n",
        "# TYPE cutaint_failures_total counter\n"
        "cutaint_failures_total{host=\"node1\",pid=\"42\",api=\"cuLaunchKernel\",kernel=\"fill(float*)\","
        "error=\"CUDA_ERROR_INVALID_VALUE\"} 2\n"
        "cutaint_failures_total{host=\"node1\",pid=\"42\",api=\"cuMemcpyHtoD_v2\",kernel=\"\","
        "error=\"CUDA_ERROR_UNKNOWN\"} 1\n",
        "# TYPE cutaint_skips_total counter\ncutaint_skips_total{host=\"node1\",pid=\"42\"} 3\n",
        "# TYPE cutaint_refused_reads_total counter\ncutaint_refused_reads_total{host=\"node1\",pid=\"42\"} 2\n",
        "# TYPE cutaint_refused_bytes_total counter\ncutaint_refused_bytes_total{host=\"node1\",pid=\"42\"} 8192\n",
        "# TYPE cutaint_context_lost gauge\ncutaint_context_lost{host=\"node1\",pid=\"42\"} 1\n",
        "# TYPE cutaint_unprotected gauge\ncutaint_unprotected{host=\"node1\",pid=\"42\"} 1\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        cr_expect(strstr(t, lines[i]) != NULL, "missing:\n%s\n--- in\n%s", lines[i], t);
    cr_expect_eq(t[strlen(t) - 1], '\n');
}

Test(metrics, no_driver_and_no_failure)
{
    static ct_metrics m;
    ct_metrics_init(&m, "0.1.0", 0, 7, "h");
    const char *t = format(&m);
    cr_expect(strstr(t, "driver_version=\"none\"} 1\n"), "%s", t);
    cr_expect(strstr(t, "# TYPE cutaint_failures_total counter\n# HELP cutaint_library_failures_total"), "%s", t);
    cr_expect(strstr(t, "# TYPE cutaint_library_failures_total counter\n# HELP cutaint_skips_total"), "%s", t);
}

Test(metrics, library_failures_by_library_in_order_first_met)
{
    static ct_metrics m;
    ct_metrics_init(&m, "0.1.0", 1, 7, "h");
    ct_metrics_library_failure(&m, "curand");
    ct_metrics_library_failure(&m, "cublas");
    ct_metrics_library_failure(&m, "curand");
    const char *t = format(&m);
    cr_expect(strstr(t, "# TYPE cutaint_library_failures_total counter\n"
                        "cutaint_library_failures_total{host=\"h\",pid=\"7\",library=\"curand\"} 2\n"
                        "cutaint_library_failures_total{host=\"h\",pid=\"7\",library=\"cublas\"} 1\n"),
              "%s", t);
    for (int i = 0; i < 2 * CT_METRICS_LIBRARIES; i++) {
        char name[16];
        snprintf(name, sizeof name, "lib%d", i);
        ct_metrics_library_failure(&m, name);
    }
    cr_expect_eq(m.n_libraries, (unsigned)CT_METRICS_LIBRARIES, "past the cap, not counted");
}

Test(metrics, own_output_troubles_per_file)
{
    static ct_metrics m;
    ct_metrics_init(&m, "0.1.0", 1, 9, "h");
    m.outputs[CT_OUTPUT_REPORT].dropped = 3;
    m.outputs[CT_OUTPUT_LOG].write_errors = 2;
    m.outputs[CT_OUTPUT_STDERR].reopened = 0;
    m.outputs[CT_OUTPUT_METRICS].reopened = 1;
    const char *t = format(&m);
    static const char *const lines[] = {
        "# TYPE cutaint_output_dropped_lines_total counter\n"
        "cutaint_output_dropped_lines_total{host=\"h\",pid=\"9\",file=\"stderr\"} 0\n"
        "cutaint_output_dropped_lines_total{host=\"h\",pid=\"9\",file=\"log\"} 0\n"
        "cutaint_output_dropped_lines_total{host=\"h\",pid=\"9\",file=\"report\"} 3\n",
        "cutaint_output_write_errors_total{host=\"h\",pid=\"9\",file=\"log\"} 2\n",
        "cutaint_output_reopened_total{host=\"h\",pid=\"9\",file=\"metrics\"} 1\n",
        "cutaint_output_reopened_total{host=\"h\",pid=\"9\",file=\"health\"} 0\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        cr_expect(strstr(t, lines[i]) != NULL, "missing:\n%s\n--- in\n%s", lines[i], t);
}

Test(metrics, label_values_are_escaped)
{
    static ct_metrics m;
    ct_metrics_init(&m, "0.1.0", 1, 1, "h\"1");
    ct_metrics_failure(&m, "api", "k<\"a\\b\">\n\x01\xc3\xa9", "E");
    const char *t = format(&m);
    cr_expect(strstr(t, "host=\"h\\\"1\""), "%s", t);
    cr_expect(strstr(t, "kernel=\"k<\\\"a\\\\b\\\">\\n???\""), "%s", t);
}

Test(metrics, a_full_table_folds_into_other)
{
    static ct_metrics m;
    ct_metrics_init(&m, "0.1.0", 1, 1, "h");
    char kernel[32];
    for (int i = 0; i < CT_METRICS_SETS + 5; i++) {
        snprintf(kernel, sizeof kernel, "k%d", i);
        ct_metrics_failure(&m, "cuLaunchKernel", kernel, "E");
    }
    ct_metrics_failure(&m, "cuLaunchKernel", "k0", "E");
    const char *t = format(&m);
    cr_expect(strstr(t, "kernel=\"k0\",error=\"E\"} 2\n"), "%s", t);
    cr_expect(strstr(t, "api=\"(other)\",kernel=\"(other)\",error=\"(other)\"} 5\n"), "%s", t);
    snprintf(kernel, sizeof kernel, "kernel=\"k%d\"", CT_METRICS_SETS);
    cr_expect(strstr(t, kernel) == NULL, "%s", t);
}

Test(metrics, too_small_a_buffer_gets_nothing)
{
    static ct_metrics m;
    ct_metrics_init(&m, "0.1.0", 1, 1, "h");
    char small[100];
    cr_assert_eq(ct_metrics_format(&m, small, sizeof small), 0);
    cr_assert_str_empty(small);
    cr_assert_eq(ct_metrics_format(&m, small, 0), 0);
}

/* The worst case fits the shim's buffer: a full table of the longest labels. */
Test(metrics, the_largest_exposition_fits)
{
    static ct_metrics m;
    char host[CT_METRICS_HOST_MAX], kernel[CT_METRICS_KERNEL_MAX];
    memset(host, '"', sizeof host - 1);
    host[sizeof host - 1] = '\0';
    ct_metrics_init(&m, "0.1.0", 1, 2147483647, host);
    for (int i = 0; i <= CT_METRICS_SETS; i++) {
        memset(kernel, '\\', sizeof kernel - 1);
        snprintf(kernel, 8, "%d", i);
        kernel[strlen(kernel)] = '\\';
        kernel[sizeof kernel - 1] = '\0';
        ct_metrics_failure(&m, "cuLaunchKernelEx_ptsz_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", kernel,
                           "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING_xxxxxxxxxxxxxxxxxxxxxxx");
    }
    for (int i = 0; i < CT_METRICS_LIBRARIES; i++) {
        char library[CT_METRICS_LIBRARY_MAX];
        memset(library, '"', sizeof library - 1);
        library[sizeof library - 1] = '\0';
        library[0] = (char)('a' + i);
        ct_metrics_library_failure(&m, library);
    }
    cr_assert_gt(ct_metrics_format(&m, text, sizeof text), 0);
}
