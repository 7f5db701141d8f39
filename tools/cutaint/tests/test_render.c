/*
 * test_render.c - the three views: the text tree says what the brief asks
 * (root failure, skips, reads, verdicts, notes, the unusable image a
 * failure descends from, a path's run of one kernel folded, the reads of one
 * story on one line, the launch that retried a failure), hostile report text never reaches the output as
 * control bytes, DOT is accepted by Graphviz and JSON by a strict parser
 * (and lists every read).
 */
#include "helpers.h"

#include "jsonr.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const all_logs[] = {
    "demo.jsonl",
    "killed.jsonl",
    "corrupt.jsonl",
    "context_lost.jsonl",
    "multi_a.jsonl",
    "multi_b.jsonl",
    "hostile.jsonl",
    "repeats.jsonl",
    "image_stand_in.jsonl",
    "image_unnumbered.jsonl",
    "image_missing.jsonl",
    "context_lost_suspects.jsonl",
    "context_lost_none.jsonl",
    "context_lost_many.jsonl",
    "cascade.jsonl",
    "retry.jsonl",
};
#define N_LOGS (sizeof all_logs / sizeof all_logs[0])

static ct_report r;

static void teardown(void)
{
    ct_report_free(&r);
}

TestSuite(render, .fini = teardown);

static char *text_of(const char *log)
{
    read_data(&r, log);
    return render_to_string(&r, CT_FORMAT_TEXT, NULL);
}

Test(render, demo_tree)
{
    char *t = text_of("demo.jsonl");
    cr_assert(strstr(t, "failure #1: fill(float*, int, float) -> CUDA_ERROR_INVALID_VALUE (1)"));
    cr_assert(strstr(t, "launch #1, grid 32x1x1, block 2048x1x1"));
    cr_assert(strstr(t, "repro: compute-sanitizer"));
    cr_assert(strstr(t, "|  |- skipped launch #2: saxpy(int, float, float const*, float*)"));
    cr_assert(strstr(t, "|  `- refused read: cuMemcpyDtoH_v2, 262144 bytes at 0x7f2beca40000"));
    cr_assert(strstr(t, "host buffer poisoned"));
    cr_assert(strstr(t, "verdict: 1 root failure, 1 skipped launch, 1 refused read; context intact"));
    cr_assert_null(strstr(t, "overall:"), "one process: its verdict is the overall one");
    free(t);
}

Test(render, a_folded_failure_shows_its_count_and_both_launches)
{
    char *t = text_of("repeats.jsonl");
    cr_assert(strstr(t, "failure #1: fill(float*, int, float) -> CUDA_ERROR_INVALID_VALUE (1), 3 occurrences"), "%s",
              t);
    cr_assert(strstr(t, "at cuLaunchKernel, launch #1, latest launch #9,"), "%s", t);
    cr_assert(strstr(t, "verdict: 1 root failure (3 occurrences), 0 skipped launches"), "%s", t);
    free(t);
}

/* One failure spread through fill again and again (cascade.jsonl): a path
 * names a run of one kernel once, with its count, and the same kernel later
 * on, after another, as a step of its own; a path of distinct steps (the
 * demo's) reads as it always did. */
Test(render, a_path_through_one_kernel_again_and_again_is_folded)
{
    char *t = text_of("cascade.jsonl");
    cr_assert(strstr(t,
                     "  |  |- refused read: cuMemcpyDtoH_v2, 4096 bytes at 0x7f02e0c01000 -> returned "
                     "CUDA_ERROR_INVALID_VALUE; host buffer poisoned\n"
                     "  |  |     path: fill(float*, int, float) (13 times) -> saxpy(int, float, float const*, float*) "
                     "-> fill(float*, int, float)\n"),
              "%s", t);
    cr_assert(strstr(t, "     path: fill(float*, int, float) (13 times)\n"), "%s", t);
    cr_assert_null(strstr(t, "fill(float*, int, float) -> fill"), "%s", t);
    free(t);
    ct_report_free(&r);
    t = text_of("demo.jsonl");
    cr_assert(strstr(t, "     path: fill(float*, int, float) -> saxpy(int, float, float const*, float*)\n"), "%s", t);
    free(t);
}

/* Of cascade.jsonl's reads under failure #1, the 13 of x that tell one
 * story (API, path, answer, poisoning, failures carried) are one line with
 * their count and bytes; y's, by another path, and the reads of x differing
 * from them in one of the others each stay a line of their own, as a read
 * always read; the verdict counts every read. */
Test(render, refused_reads_that_tell_one_story_are_one_line)
{
    char *t = text_of("cascade.jsonl");
    cr_assert(strstr(t, "  |  |- refused 13 reads: cuMemcpyDtoH_v2, 6656 bytes in all, the first at 0x7f02e0c00000 -> "
                        "returned CUDA_ERROR_INVALID_VALUE; host buffers poisoned\n"
                        "  |  |     path: fill(float*, int, float) (13 times)\n"
                        "  |  |- refused read: cuMemcpyDtoH_v2, 512 bytes at 0x7f02e0c00200 -> returned "
                        "CUDA_ERROR_INVALID_VALUE; host buffer left as it was\n"
                        "  |  |     path: fill(float*, int, float) (13 times)\n"
                        "  |  |- refused read: cuMemcpyDtoHAsync_v2, 512 bytes at 0x7f02e0c00600 -> returned "
                        "CUDA_ERROR_INVALID_VALUE; host buffer poisoned\n"
                        "  |  |     path: fill(float*, int, float) (13 times)\n"
                        "  |  |- refused read: cuMemcpyDtoH_v2, 512 bytes at 0x7f02e0c00800 -> returned "
                        "CUDA_SUCCESS; host buffer poisoned\n"
                        "  |  |     path: fill(float*, int, float) (13 times)\n"
                        "  |  `- refused read: cuMemcpyDtoH_v2, 512 bytes at 0x7f02e0c00400 -> returned "
                        "CUDA_ERROR_INVALID_VALUE; host buffer poisoned\n"
                        "  |        path: fill(float*, int, float) (13 times)\n"
                        "  |        the bytes also carry failure #2\n"),
              "%s", t);
    cr_assert(strstr(t, "  |  |- refused read: cuMemcpyDtoH_v2, 4096 bytes at 0x7f02e0c01000 -> returned "
                        "CUDA_ERROR_INVALID_VALUE; host buffer poisoned\n"),
              "%s", t);
    cr_assert_null(strstr(t, "bytes at 0x7f02e0c00e00"), "a read of the story on its own: %s", t);
    cr_assert(strstr(t, "verdict: 2 root failures, 14 skipped launches, 18 refused reads; context intact"), "%s", t);
    free(t);
}

Test(render, killed_log_says_so)
{
    char *t = text_of("killed.jsonl");
    cr_assert(strstr(t, "log ends without an exit event: the process was killed or is still running"));
    cr_assert(strstr(t, "the last line is cut short"));
    free(t);
}

Test(render, context_loss_verdict)
{
    char *t = text_of("context_lost.jsonl");
    cr_assert(strstr(t, "verdict: CONTEXT LOST -- cuLaunchKernel(saxpy"));
    cr_assert(strstr(t, "exit: status 70 (the program asked for 1)"));
    cr_assert(strstr(t, "after failure #2"));
    free(t);
}

/* The prime suspects under the CONTEXT LOST line, in the event's order (a
 * kernel launch with its replay line, then a graph launch, which has none),
 * then how many there were; the others are not named. */
Test(render, a_loss_names_its_prime_suspects_in_order)
{
    char *t = text_of("context_lost_suspects.jsonl");
    cr_assert(
        strstr(t, " every later driver call in this process returns the same status.\n"
                  "  |     prime suspect: fill(float*, int, float) launch #1 on stream 0x0 (grid 4x1x1, block 256x1x1, "
                  "thread 32663)\n"
                  "  |     replay: compute-sanitizer --tool memcheck --launch-skip 0 --launch-count 1 ./client crash\n"
                  "  |     prime suspect: graph 0x55d0c0de1000 (cuGraphLaunch) on stream 0x5a5a0000\n"
                  "  |     4 suspects in all: cutaint orders them, it cannot know which one faulted\n"
                  "  `- exit: status 70"),
        "%s", t);
    cr_assert_null(strstr(t, "crash(float*)"), "only the primes are named: %s", t);
    cr_assert(strstr(t, "\n  verdict: CONTEXT LOST -- cuStreamSynchronize failed (CUDA_ERROR_ILLEGAL_ADDRESS), and a "
                        "synchronize issued afterwards also failed"),
              "%s", t);
    free(t);
}

Test(render, an_older_loss_names_no_suspect)
{
    char *t = text_of("context_lost.jsonl");
    cr_assert_null(strstr(t, "suspect"), "%s", t);
    cr_assert(strstr(t, "  |     after failure #2\n  `- exit: status 70"), "%s", t);
    free(t);
}

Test(render, a_loss_without_suspects_says_every_launch_finished)
{
    char *t = text_of("context_lost_none.jsonl");
    cr_assert(strstr(t, " returns the same status.\n"
                        "  |     no suspect: every launch on the context was proven finished\n"
                        "  `- exit"),
              "%s", t);
    cr_assert_null(strstr(t, "prime suspect"), "%s", t);
    free(t);
}

Test(render, more_suspects_than_listed_says_how_many_are)
{
    char *t = text_of("context_lost_many.jsonl");
    cr_assert(strstr(t, "  |     20 suspects in all (the report lists 18): cutaint orders them"), "%s", t);
    free(t);
}

Test(render, several_processes_get_an_overall_line)
{
    read_data(&r, "multi_a.jsonl");
    read_data(&r, "multi_b.jsonl");
    char *t = render_to_string(&r, CT_FORMAT_TEXT, NULL);
    cr_assert(strstr(t, "process 700: torchrun --rank 0"));
    cr_assert(strstr(t, "verdict: clean -- no failures; context intact"));
    cr_assert(strstr(t, "overall: 3 processes: 2 root failures"));
    cr_assert(strstr(t, "CONTEXT LOST in 1 (pid 701)"));
    cr_assert(strstr(t, "skipped launch #5: scale"));
    free(t);
}

Test(render, hostile_text_is_defused)
{
    read_data(&r, "hostile.jsonl");
    for (ct_format fmt = CT_FORMAT_TEXT; fmt <= CT_FORMAT_JSON; fmt++) {
        size_t n;
        char *t = render_to_string(&r, fmt, &n);
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)t[i];
            cr_assert(c >= 0x20 || c == '\n', "control byte 0x%02x at %zu in format %d", c, i, (int)fmt);
            cr_assert(c != 0x7f);
            cr_assert(!(c == 0xc2 && i + 1 < n && (unsigned char)t[i + 1] >= 0x80 && (unsigned char)t[i + 1] < 0xa0),
                      "C1 control in format %d", (int)fmt);
        }
        free(t);
    }
}

Test(render, json_summary_is_valid_json)
{
    for (size_t i = 0; i < N_LOGS; i++)
        read_data(&r, all_logs[i]);
    size_t n;
    char *t = render_to_string(&r, CT_FORMAT_JSON, &n);
    jsonr_doc doc = {0};
    const char *why = NULL;
    cr_assert(jsonr_parse(&doc, t, n, &why), "invalid JSON: %s", why ? why : "?");
    const jv *root = jsonr_root(&doc);
    const jv *procs = jsonr_get(&doc, root, "processes");
    cr_assert_eq(procs->count, r.n_procs);
    const jv *totals = jsonr_get(&doc, root, "totals");
    cr_assert_eq(jsonr_get(&doc, totals, "contexts_lost")->i, 6);
    jsonr_free(&doc);
    free(t);
}

Test(render, dot_is_accepted_by_graphviz)
{
#ifndef CT_TEST_DOT
    cr_skip_test("Graphviz dot is not installed");
#else
    for (size_t i = 0; i < N_LOGS; i++)
        read_data(&r, all_logs[i]);
    char in[] = "/tmp/cutaint-test-XXXXXX.dot";
    int fd = mkstemps(in, 4);
    cr_assert_geq(fd, 0);
    size_t n;
    char *t = render_to_string(&r, CT_FORMAT_DOT, &n);
    cr_assert_eq(write(fd, t, n), (ssize_t)n);
    close(fd);
    free(t);
    char *argv[] = {CT_TEST_DOT, "-Tsvg", in, "-o", "/dev/null", NULL};
    int status = run_argv(argv, NULL, NULL);
    unlink(in);
    cr_assert_eq(status, 0, "dot -Tsvg refused the output");
#endif
}

/* ---- an unusable image and the failures that descend from it ------------ */

static char *render_of(const char *log, ct_format format)
{
    read_data(&r, log);
    return render_to_string(&r, format, NULL);
}

Test(render, a_failure_from_an_unusable_image_says_so_under_its_root)
{
    char *t = render_of("image_stand_in.jsonl", CT_FORMAT_TEXT);
    cr_assert(strstr(t, "  |- failure #1: fill(float*, int, float) -> CUDA_ERROR_NO_BINARY_FOR_GPU (209)\n"
                        "  |  |  from unusable image #1: cuLibraryLoadData failed with CUDA_ERROR_NO_BINARY_FOR_GPU\n"
                        "  |  |  at cuLaunchKernel, launch #1,"),
              "%s", t);
    cr_assert(strstr(t, "  |- unusable image #1: image 0x55cf3dd9a590 (kernels fill(float*, int, float)) holds sm_80"),
              "%s", t);
    cr_assert(strstr(t, "CUDA_ERROR_NO_BINARY_FOR_GPU; cutaint answered with a stand-in: its kernels' launches fail "
                        "as root failures\n"),
              "%s", t);
    cr_assert(strstr(t, "verdict: 1 root failure, 1 skipped launch, 1 refused read, 1 unusable image; context intact"),
              "the image and its failure are each counted once: %s", t);
    free(t);
}

Test(render, images_of_an_older_report_are_numbered_in_order_and_no_stand_in)
{
    char *t = render_of("image_unnumbered.jsonl", CT_FORMAT_TEXT);
    cr_assert(strstr(t, "  |- unusable image #1: image 0x5600000a0000"), "%s", t);
    cr_assert(strstr(t, "  |- unusable image #2: kernel _Z5scalePfi"), "%s", t);
    cr_assert(strstr(t, "  |- unusable image #1: image 0x5600000c0000"), "the second process counts from 1: %s", t);
    cr_assert_null(strstr(t, "from unusable image"), "no failure names an image: %s", t);
    cr_assert_null(strstr(t, "stand-in"), "%s", t);
    free(t);
}

Test(render, a_failure_naming_an_image_not_in_the_report_says_so)
{
    char *t = render_of("image_missing.jsonl", CT_FORMAT_TEXT);
    cr_assert(strstr(t, "  |- failure #1: scale(float*, int) -> CUDA_ERROR_NO_BINARY_FOR_GPU (209)\n"
                        "  |     from unusable image #2 (not in this report)\n"),
              "%s", t);
    cr_assert_null(strstr(t, "from unusable image #1"), "%s", t);
    free(t);
}

static const jv *object_at(const jsonr_doc *doc, const jv *obj, const char *key, size_t index)
{
    const jv *e = jsonr_first(doc, jsonr_get(doc, obj, key));
    for (size_t i = 0; e && i < index; i++)
        e = jsonr_next(doc, e);
    cr_assert_not_null(e, "no %s[%zu]", key, index);
    return e;
}

static void assert_int(const jsonr_doc *doc, const jv *obj, const char *key, int64_t want)
{
    const jv *v = jsonr_get(doc, obj, key);
    cr_assert(v && v->type == JV_NUMBER && v->is_int && v->i == want, "%s is not %lld", key, (long long)want);
}

Test(render, json_links_a_failure_to_its_image)
{
    char *t = render_of("image_stand_in.jsonl", CT_FORMAT_JSON);
    jsonr_doc doc = {0};
    cr_assert(jsonr_parse(&doc, t, strlen(t), NULL));
    const jv *proc = object_at(&doc, jsonr_root(&doc), "processes", 0);
    assert_int(&doc, object_at(&doc, proc, "failures", 0), "image", 1);
    const jv *im = object_at(&doc, proc, "images", 0);
    assert_int(&doc, im, "number", 1);
    cr_assert_eq(jsonr_get(&doc, im, "stand_in")->type, JV_TRUE);
    jsonr_free(&doc);
    free(t);
}

Test(render, json_of_an_older_report_numbers_images_and_nulls_the_link)
{
    char *t = render_of("image_unnumbered.jsonl", CT_FORMAT_JSON);
    jsonr_doc doc = {0};
    cr_assert(jsonr_parse(&doc, t, strlen(t), NULL));
    const jv *first = object_at(&doc, jsonr_root(&doc), "processes", 0);
    const jv *image = jsonr_get(&doc, object_at(&doc, first, "failures", 0), "image");
    cr_assert(image && image->type == JV_NULL, "a failure without an image has image null");
    assert_int(&doc, object_at(&doc, first, "images", 0), "number", 1);
    assert_int(&doc, object_at(&doc, first, "images", 1), "number", 2);
    cr_assert_eq(jsonr_get(&doc, object_at(&doc, first, "images", 1), "stand_in")->type, JV_FALSE);
    const jv *second = object_at(&doc, jsonr_root(&doc), "processes", 1);
    assert_int(&doc, object_at(&doc, second, "images", 0), "number", 1);
    jsonr_free(&doc);
    free(t);
}

Test(render, dot_draws_the_image_a_failure_descends_from)
{
    char *t = render_of("image_stand_in.jsonl", CT_FORMAT_DOT);
    cr_assert(strstr(t, "    p0_i0 [label=\"unusable image #1\\ncuLibraryLoadData\\nCUDA_ERROR_NO_BINARY_FOR_GPU"),
              "%s", t);
    cr_assert(strstr(t, "    p0_i0 -> p0_f1;\n"), "%s", t);
    free(t);
    ct_report_free(&r);
    t = render_of("image_missing.jsonl", CT_FORMAT_DOT);
    cr_assert_null(strstr(t, "p0_i0 ->"), "image #1 is not the one failure #1 names: %s", t);
    cr_assert(strstr(t, "\\nfrom unusable image #2 (not in this report)\""), "%s", t);
    free(t);
}

/* The summary is for machines: every read of a story is listed, as the
 * report has it. */
Test(render, json_lists_each_read_of_a_story)
{
    char *t = render_of("cascade.jsonl", CT_FORMAT_JSON);
    jsonr_doc doc = {0};
    cr_assert(jsonr_parse(&doc, t, strlen(t), NULL));
    const jv *fill = object_at(&doc, object_at(&doc, jsonr_root(&doc), "processes", 0), "failures", 0);
    cr_assert_eq(jsonr_get(&doc, fill, "refused_reads")->count, 18, "%s", t);
    assert_int(&doc, object_at(&doc, fill, "refused_reads", 2), "bytes", 512);
    jsonr_free(&doc);
    free(t);
}

/* retry.jsonl: fill refused with 2048 threads (#1), then with 1024 (#2,
 * injected), then retried with 256 by launch #3, which succeeded. */
Test(render, a_retried_failure_names_the_launch_that_redid_it)
{
    char *t = text_of("retry.jsonl");
    const char *second = strstr(t, "failure #2:");
    cr_assert(second, "%s", t);
    cr_assert(strstr(second, "retried by launch #3, which succeeded"), "%s", t);
    cr_assert(strstr(t, "retried by") == strstr(second, "retried by"), "failure #1 was retried by no launch: %s", t);
    cr_assert(strstr(t, "verdict: 2 root failures, 0 skipped launches, 1 retried launch, 0 refused reads"), "%s", t);
    free(t);
}

Test(render, json_counts_retries_and_links_them_to_their_failure)
{
    char *t = render_of("retry.jsonl", CT_FORMAT_JSON);
    jsonr_doc doc = {0};
    cr_assert(jsonr_parse(&doc, t, strlen(t), NULL));
    const jv *proc = object_at(&doc, jsonr_root(&doc), "processes", 0);
    assert_int(&doc, object_at(&doc, proc, "failures", 0), "retries", 0);
    assert_int(&doc, object_at(&doc, proc, "failures", 1), "retries", 1);
    assert_int(&doc, object_at(&doc, proc, "failures", 1), "retry_launch", 3);
    assert_int(&doc, jsonr_get(&doc, proc, "counts"), "retries", 1);
    jsonr_free(&doc);
    free(t);
}

/* ---- a lost context's suspects in JSON and DOT ---------------------------- */

static void assert_type(const jsonr_doc *doc, const jv *obj, const char *key, jv_type want)
{
    const jv *v = jsonr_get(doc, obj, key);
    cr_assert(v && v->type == want, "%s is not of type %d", key, (int)want);
}

static void assert_str(const jsonr_doc *doc, const jv *obj, const char *key, const char *want)
{
    const jv *v = jsonr_get(doc, obj, key);
    cr_assert(v && v->type == JV_STRING && v->len == strlen(want) && memcmp(v->str, want, v->len) == 0,
              "%s is not \"%s\"", key, want);
}

static void assert_dims(const jsonr_doc *doc, const jv *obj, const char *key, int64_t x, int64_t y, int64_t z)
{
    const jv *arr = jsonr_get(doc, obj, key);
    cr_assert(arr && arr->type == JV_ARRAY && arr->count == 3, "%s is not [x, y, z]", key);
    const int64_t want[3] = {x, y, z};
    int k = 0;
    for (const jv *e = jsonr_first(doc, arr); e; e = jsonr_next(doc, e), k++)
        cr_assert(e->type == JV_NUMBER && e->is_int && e->i == want[k], "%s[%d] is not %lld", key, k,
                  (long long)want[k]);
}

Test(render, json_lists_a_loss_s_suspects_and_their_total)
{
    char *t = render_of("context_lost_suspects.jsonl", CT_FORMAT_JSON);
    jsonr_doc doc = {0};
    cr_assert(jsonr_parse(&doc, t, strlen(t), NULL));
    const jv *proc = object_at(&doc, jsonr_root(&doc), "processes", 0);
    cr_assert_eq(jsonr_get(&doc, proc, "context_lost_suspects")->count, 4);
    assert_int(&doc, proc, "context_lost_suspects_total", 4);
    const jv *fill = object_at(&doc, proc, "context_lost_suspects", 0);
    assert_str(&doc, fill, "api", "cuLaunchKernel");
    assert_str(&doc, fill, "kernel", "fill(float*, int, float)");
    assert_str(&doc, fill, "graph", "0x0");
    assert_int(&doc, fill, "launch", 1);
    assert_str(&doc, fill, "stream", "0x0");
    assert_dims(&doc, fill, "grid", 4, 1, 1);
    assert_dims(&doc, fill, "block", 256, 1, 1);
    assert_int(&doc, fill, "thread", 32663);
    assert_type(&doc, fill, "prime", JV_TRUE);
    assert_str(&doc, fill, "repro",
               "compute-sanitizer --tool memcheck --launch-skip 0 --launch-count 1 ./client crash");
    assert_type(&doc, object_at(&doc, proc, "context_lost_suspects", 1), "prime", JV_FALSE);
    const jv *graph = object_at(&doc, proc, "context_lost_suspects", 2);
    assert_str(&doc, graph, "api", "cuGraphLaunch");
    assert_type(&doc, graph, "kernel", JV_NULL);
    assert_str(&doc, graph, "graph", "0x55d0c0de1000");
    assert_str(&doc, graph, "stream", "0x5a5a0000");
    assert_dims(&doc, graph, "grid", 0, 0, 0);
    assert_type(&doc, graph, "prime", JV_TRUE);
    assert_type(&doc, graph, "repro", JV_NULL);
    jsonr_free(&doc);
    free(t);
}

/* An older report and a loss with none both have [] and 0. */
Test(render, json_of_a_loss_without_suspects_has_none)
{
    static const char *const logs[] = {"context_lost.jsonl", "context_lost_none.jsonl"};
    for (size_t i = 0; i < 2; i++) {
        char *t = render_of(logs[i], CT_FORMAT_JSON);
        jsonr_doc doc = {0};
        cr_assert(jsonr_parse(&doc, t, strlen(t), NULL));
        const jv *proc = object_at(&doc, jsonr_root(&doc), "processes", 0);
        const jv *list = jsonr_get(&doc, proc, "context_lost_suspects");
        cr_assert(list && list->type == JV_ARRAY && list->count == 0, "%s: %s", logs[i], t);
        assert_int(&doc, proc, "context_lost_suspects_total", 0);
        jsonr_free(&doc);
        free(t);
        ct_report_free(&r);
    }
}

Test(render, json_keeps_sixteen_suspects_and_the_whole_total)
{
    char *t = render_of("context_lost_many.jsonl", CT_FORMAT_JSON);
    jsonr_doc doc = {0};
    cr_assert(jsonr_parse(&doc, t, strlen(t), NULL));
    const jv *proc = object_at(&doc, jsonr_root(&doc), "processes", 0);
    cr_assert_eq(jsonr_get(&doc, proc, "context_lost_suspects")->count, 16);
    assert_int(&doc, proc, "context_lost_suspects_total", 20);
    jsonr_free(&doc);
    free(t);
}

/* Each prime suspect is a node with an edge to the lost context; the
 * others are not drawn, and an older report draws none. */
Test(render, dot_draws_the_prime_suspects_of_a_loss)
{
    char *t = render_of("context_lost_suspects.jsonl", CT_FORMAT_DOT);
    cr_assert(strstr(t,
                     "    p0_suspect0 [label=\"prime suspect\\nfill(float*, int, float)\\nlaunch #1\\non stream 0x0\""),
              "%s", t);
    cr_assert(strstr(t, "    p0_suspect0 -> p0_lost;\n"), "%s", t);
    cr_assert(strstr(t, "    p0_suspect2 [label=\"prime suspect\\ngraph 0x55d0c0de1000\\ncuGraphLaunch\\non stream "
                        "0x5a5a0000\""),
              "%s", t);
    cr_assert(strstr(t, "    p0_suspect2 -> p0_lost;\n"), "%s", t);
    cr_assert_null(strstr(t, "p0_suspect1"), "not a prime: %s", t);
    cr_assert_null(strstr(t, "p0_suspect3"), "not a prime: %s", t);
    free(t);
    ct_report_free(&r);
    t = render_of("context_lost.jsonl", CT_FORMAT_DOT);
    cr_assert(strstr(t, "p0_lost [label="), "%s", t);
    cr_assert_null(strstr(t, "suspect"), "%s", t);
    free(t);
}
