/*
 * test_memory.c - the memory modern frameworks use (clients/memory.c):
 * cuMemMap'd memory a rejected launch left stale is refused on read, a
 * refused unmap or reservation free keeps it so, and once unmapped the same
 * addresses mapped again start clean; every batch and 3D peer copy to the
 * host is refused on a tainted source with the host buffer poisoned (a batch
 * whole); the first managed allocation to carry a failure is named in the
 * log, once.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static void run(const char *const *args, h_result *r)
{
    h_run run = {.client = CT_CLIENT_MEMORY, .env = {"CUTAINT_LOG=warn"}};
    for (int i = 0; args[i] && i < H_MAX_ARGS - 1; i++)
        run.args[i] = args[i];
    h_exec(&run, r);
    h_expect_ended(r);
    cr_expect_eq(r->status, 0, "status %d\n%s%s", r->status, r->out, r->err);
}

Test(memory, a_mapping_carries_its_failure_until_it_is_unmapped)
{
    h_result r;
    run((const char *const[]){"vmm_remap", NULL}, &r);
    static const char *const lines[] = {
        "launch fill a: CUDA_ERROR_INVALID_VALUE",
        "read a: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "read b: CUDA_SUCCESS first=2 last=2",
        "unmap half of a: CUDA_ERROR_INVALID_VALUE",
        "read a after a refused unmap: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "unmap a: CUDA_SUCCESS",
        "read a unmapped: CUDA_ERROR_INVALID_VALUE bytes=0x3c", /* the driver's answer: nothing poisoned */
        "map c where a was: CUDA_SUCCESS",
        "read c: CUDA_SUCCESS bytes=0x5a",
        "read c after fill: CUDA_SUCCESS first=3 last=3",
        "read a again: CUDA_SUCCESS first=5 last=5",
        NULL,
    };
    h_expect_lines(&r, lines);
    h_report rep;
    h_expect_report(&r, &rep);
    /* The read of unmapped a failed in the driver: a failure of its own. */
    cr_expect_str_eq(h_events(&rep), "start,failure,probe,refused_read,probe,refused_read,failure,probe,exit");
    h_report_free(&rep);
    h_free(&r);
}

/* Mappings side by side are one run: a kernel pointer reaches into the
 * next mapping, a read across the seam is checked as one (it used to be
 * "past the end" of the first and served unchecked), and an unmap ends
 * only its own bytes. */
Test(memory, mappings_side_by_side_are_one_run)
{
    h_result r;
    run((const char *const[]){"vmm_run", NULL}, &r);
    static const char *const lines[] = {
        "launch fill tensor: CUDA_ERROR_INVALID_VALUE",
        "read tensor in b: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "read across the seam: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "read a before the tensor: CUDA_SUCCESS first=1 last=1",
        "memset across the seam: CUDA_SUCCESS",
        "read across the seam after memset: CUDA_SUCCESS bytes=0x5a",
        "unmap a: CUDA_SUCCESS",
        "read tensor in b after a is unmapped: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "read c: CUDA_SUCCESS bytes=0x5a",
        /* fill's pointer is read and written: through c it reaches b's failure */
        "read across the seam after the fill: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        NULL,
    };
    h_expect_lines(&r, lines);
    h_report rep;
    h_expect_report(&r, &rep);
    /* The second fill is the first again (a retry: the driver refuses it
     * once more); the fill through c, with another value, is skipped. */
    cr_expect_eq(h_count(&rep, "repeat"), 1, "the second fill: %s", h_events(&rep));
    cr_expect_eq(h_count(&rep, "skip"), 1, "the fill through c: %s", h_events(&rep));
    h_report_free(&rep);
    h_free(&r);
}

Test(memory, releasing_the_handle_ends_no_mapping_and_freeing_the_reservation_ends_all)
{
    h_result r;
    run((const char *const[]){"vmm_release", NULL}, &r);
    static const char *const lines[] = {
        "release a: CUDA_SUCCESS",
        "read a after release: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "free the reservation while mapped: CUDA_ERROR_INVALID_VALUE",
        "read a after a refused free: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "free the reservation: CUDA_SUCCESS",
        "same addresses: yes",
        "read b: CUDA_SUCCESS first=4 last=4",
        NULL,
    };
    h_expect_lines(&r, lines);
    h_free(&r);
}

/* Without the shim the stale bytes come back as data: what the shim is for. */
Test(memory, without_the_shim_the_stale_mapping_is_read_as_data)
{
    h_result r;
    h_exec_baseline(&(h_run){.client = CT_CLIENT_MEMORY, .args = {"vmm_remap"}}, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {"read a: CUDA_SUCCESS first=1 last=1", NULL};
    h_expect_lines(&r, lines);
    h_free(&r);
}

/* Each way of reading, and the entry point its refusal names. */
static const struct copy_case {
    const char *how, *api;
} copies[] = {
    {"batch", "cuMemcpyBatchAsync"},
    {"batch_v2", "cuMemcpyBatchAsync_v2"},
    {"batch_v2_ptsz", "cuMemcpyBatchAsync_v2_ptsz"},
    {"batch3d", "cuMemcpy3DBatchAsync"},
    {"batch3d_v2", "cuMemcpy3DBatchAsync_v2"},
    {"peer3d", "cuMemcpy3DPeer"},
    {"peer3d_async", "cuMemcpy3DPeerAsync"},
};

ParameterizedTestParameters(memory, every_batch_and_peer_read_checks_its_source)
{
    return H_ROWS(copies);
}

ParameterizedTest(int *row, memory, every_batch_and_peer_read_checks_its_source)
{
    const char *how = copies[*row].how;
    h_result r;
    run((const char *const[]){"read_by", how, NULL}, &r);
    static const char *const lines[] = {
        "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "read y: CUDA_SUCCESS first=2 last=2",
        NULL,
    };
    h_expect_lines(&r, lines);
    if (strcmp(how, "batch") == 0 || strcmp(how, "batch3d") == 0)
        cr_expect(h_has_line(r.out, "failIdx: 0"), "%s: the refused copy is named\n%s", how, r.out);
    h_report rep;
    h_expect_report(&r, &rep);
    int rr = h_find(&rep, "refused_read", 0);
    cr_assert(rr >= 0, "%s: %s", how, h_events(&rep));
    cr_expect_str_eq(h_str(rep.line[rr], "api"), copies[*row].api, "%s", how);
    cr_expect_eq(h_count(&rep, "refused_read"), 1, "%s: %s", how, h_events(&rep));
    h_report_free(&rep);
    h_free(&r);
}

Test(memory, a_batch_with_a_tainted_read_is_refused_whole)
{
    h_result r;
    run((const char *const[]){"batch_mixed", NULL}, &r);
    static const char *const lines[] = {
        "batch: CUDA_ERROR_INVALID_VALUE",
        "failIdx: 1",
        "read hx: CUDA_SUCCESS bytes=0xff",
        "read hy: CUDA_SUCCESS bytes=0xff",
        "read z: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "batch again: CUDA_SUCCESS",
        "read hx: CUDA_SUCCESS first=1 last=1",
        "read hy: CUDA_SUCCESS first=2 last=2",
        "read z: CUDA_SUCCESS first=2 last=2",
        NULL,
    };
    h_expect_lines(&r, lines);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_str_eq(h_events(&rep), "start,failure,probe,refused_read,skip,refused_read,exit");
    h_report_free(&rep);
    h_free(&r);
}

Test(memory, the_first_managed_allocation_to_carry_a_failure_is_named_once)
{
    h_result r;
    run((const char *const[]){"managed", NULL}, &r);
    static const char *const lines[] = {"read m1: CUDA_ERROR_INVALID_VALUE bytes=0xff", NULL};
    h_expect_lines(&r, lines);
    const char *m1 = strstr(r.out, "managed m1: ");
    cr_assert(m1, "%s", r.out);
    char want[64];
    snprintf(want, sizeof want, "managed allocation %.*s (4096 bytes)", (int)strcspn(m1 + 12, "\n"), m1 + 12);
    cr_expect_eq(h_count_containing(r.err, "managed allocation"), 1, "said once:\n%s", r.err);
    cr_expect_eq(h_count_containing(r.err, want), 1, "naming m1 (%s):\n%s", want, r.err);
    cr_expect_eq(h_count_containing(r.err, "cannot refuse them"), 1, "%s", r.err);
    h_free(&r);
}

/* The same honest limit for pinned host memory, which cutaint does not
 * track: a failure writing through it is said once, naming the live
 * allocation it reached (not one freed before), and changes nothing else. */
Test(memory, the_first_failure_through_pinned_host_memory_is_named_once)
{
    h_result r;
    run((const char *const[]){"pinned", NULL}, &r);
    static const char *const driver_said[] = {"launch fill h0 (freed): CUDA_ERROR_INVALID_VALUE",
                                              "launch fill h1: CUDA_ERROR_INVALID_VALUE",
                                              "launch fill h2: CUDA_ERROR_INVALID_VALUE", NULL};
    h_expect_lines(&r, driver_said);
    const char *h1 = strstr(r.out, "pinned h1: ");
    cr_assert(h1, "%s", r.out);
    char want[64];
    snprintf(want, sizeof want, "pinned host memory %.*s (4096 bytes)", (int)strcspn(h1 + 11, "\n"), h1 + 11);
    cr_expect_eq(h_count_containing(r.err, "pinned host memory"), 1, "said once:\n%s", r.err);
    cr_expect_eq(h_count_containing(r.err, want), 1, "naming h1 (%s):\n%s", want, r.err);
    h_free(&r);
}

/* A successful pitched write, however tall, releases its rows and never the
 * gaps between them (issue: past 64 rows it used to release its bounding
 * span); through a memset, a 2D copy and a graph's memset node. */
typedef struct tall_case {
    const char *rows, *how;
} tall_case;

static const tall_case tall_cases[] = {
    {"64", "memset"},  {"65", "memset"}, {"1000", "memset"}, {"65", "copy2d"},
    {"300", "copy2d"}, {"64", "graph"},  {"65", "graph"},    {"1000", "graph"},
};

ParameterizedTestParameters(memory, a_tall_pitched_write_never_releases_its_gaps)
{
    return H_ROWS(tall_cases);
}

ParameterizedTest(const int *row, memory, a_tall_pitched_write_never_releases_its_gaps)
{
    const tall_case *c = &tall_cases[*row];
    h_result r;
    run((const char *const[]){"tall_pitched", c->rows, c->how, NULL}, &r);
    static const char *const lines[] = {
        "read row 0: CUDA_SUCCESS bytes=0x5a",
        "read gap of row 0: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "read last row: CUDA_SUCCESS bytes=0x5a",
        "read gap of the last row: CUDA_ERROR_INVALID_VALUE bytes=0xff",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        cr_expect(h_has_line(r.out, lines[i]), "%s rows by %s: missing \"%s\":\n%s", c->rows, c->how, lines[i], r.out);
    h_report rep;
    h_expect_report(&r, &rep);
    for (int i = h_find(&rep, "refused_read", 0); i >= 0; i = h_find(&rep, "refused_read", i + 1))
        cr_expect_str_eq(h_str(rep.line[i], "error"), "CUDA_ERROR_INVALID_VALUE",
                         "a gap's root is the fill, not an unfinished write: %s", rep.line[i]);
    h_report_free(&rep);
    h_free(&r);
}

/* A launch passing more pointer words than its room holds (256): every
 * word is an input checked and an output tainted, past the room too. */
Test(memory, a_failed_launch_taints_what_words_past_256_reach)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_MEMORY,
                    .args = {"wide_launch", "output"},
                    .env = {"FAKECUDA_KERNELS=" CT_WIDE_KERNEL, "CUTAINT_INJECT=launch:wide#1"}},
           &r);
    h_expect_ended(&r);
    cr_expect(h_has_line(r.out, "launch wide: CUDA_ERROR_LAUNCH_FAILED"), "%s%s", r.out, r.err);
    cr_expect(h_has_line(r.out, "read a: CUDA_ERROR_LAUNCH_FAILED bytes=0xff"), "%s", r.out);
    cr_expect(h_has_line(r.out, "read b: CUDA_ERROR_LAUNCH_FAILED bytes=0xff"),
              "b, reached by word 300, was served stale:\n%s", r.out);
    h_free(&r);
}

Test(memory, a_tainted_input_past_256_words_skips_the_launch)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_MEMORY,
                    .args = {"wide_launch", "input"},
                    .env = {"FAKECUDA_KERNELS=" CT_WIDE_KERNEL}},
           &r);
    h_expect_ended(&r);
    cr_expect(h_has_line(r.out, "launch wide: CUDA_SUCCESS"), "%s%s", r.out, r.err);
    cr_expect(h_has_line(r.out, "read a: CUDA_ERROR_INVALID_VALUE bytes=0xff"),
              "a launch reading tainted b (word 300) ran, and a was served:\n%s", r.out);
    cr_expect(h_has_line(r.out, "read b: CUDA_ERROR_INVALID_VALUE bytes=0xff"), "%s", r.out);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_eq(h_count(&rep, "skip"), 1, "%s", h_events(&rep));
    h_report_free(&rep);
    h_free(&r);
}

/* A batch the driver fails (here CUTAINT_INJECT's, on the clean second
 * read) is a failed read to the host: its destination poisoned, a failure
 * reported. */
typedef struct failed_batch_case {
    const char *how, *inject;
} failed_batch_case;

static const failed_batch_case failed_batch_cases[] = {
    {"batch", "CUTAINT_INJECT=api:cuMemcpyBatchAsync*#2"},
    {"batch_v2", "CUTAINT_INJECT=api:cuMemcpyBatchAsync*#2"},
    {"batch3d", "CUTAINT_INJECT=api:cuMemcpy3DBatchAsync*#2"},
    {"batch3d_v2", "CUTAINT_INJECT=api:cuMemcpy3DBatchAsync*#2"},
};

ParameterizedTestParameters(memory, a_failed_batch_poisons_its_host_destinations)
{
    return H_ROWS(failed_batch_cases);
}

ParameterizedTest(const int *row, memory, a_failed_batch_poisons_its_host_destinations)
{
    const failed_batch_case *c = &failed_batch_cases[*row];
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_MEMORY, .args = {"read_by", c->how}, .env = {c->inject}}, &r);
    h_expect_ended(&r);
    cr_expect(h_has_line(r.out, "read y: CUDA_ERROR_UNKNOWN bytes=0xff"), "%s: the host buffer kept stale bytes:\n%s",
              c->how, r.out);
    h_report rep;
    h_expect_report(&r, &rep);
    int injected = 0;
    for (int i = h_find(&rep, "failure", 0); i >= 0; i = h_find(&rep, "failure", i + 1))
        injected += strcmp(h_str(rep.line[i], "injected"), "true") == 0;
    cr_expect_eq(injected, 1, "%s: %s", c->how, h_events(&rep));
    int e = h_find(&rep, "exit", 0);
    cr_expect(e >= 0 && strcmp(h_str(rep.line[e], "failed_reads"), "1") == 0, "%s", e >= 0 ? rep.line[e] : "no exit");
    h_report_free(&rep);
    h_free(&r);
}
