/*
 * test_reader.c - the report reader on the hand-written logs of
 * tests/data: the demo's report, a killed process (no exit event, last
 * line cut), corrupt lines of every kind, several processes in several
 * files, a failure folded twice, lines over the length limit, the image
 * events a launch failure names (numbered or, older, not), and refused
 * reads grouped by the story they tell.
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static ct_report r;

static void teardown(void)
{
    ct_report_free(&r);
}

TestSuite(reader, .fini = teardown);

Test(reader, demo_report_builds_the_chain)
{
    read_data(&r, "demo.jsonl");
    cr_assert_eq(r.n_procs, 1);
    const ct_process *p = &r.procs[0];
    cr_assert(p->has_start && p->has_exit);
    cr_assert_eq(p->exit.status, 1);
    cr_assert_eq(p->n_failures, 1);
    const ct_failure *f = &p->failures[0];
    cr_assert(f->described);
    cr_assert_str_eq(f->kernel, "fill(float*, int, float)");
    cr_assert_str_eq(f->error, "CUDA_ERROR_INVALID_VALUE");
    cr_assert_eq(f->block[0], 2048);
    cr_assert_eq(f->n_skips, 1);
    cr_assert_eq(f->skips[0].first_launch, 2);
    cr_assert_eq(f->n_reads, 1);
    cr_assert(f->reads[0].poisoned);
    cr_assert_eq(f->reads[0].bytes, 262144);
    cr_assert_eq(f->reads[0].path.n, 2);
    cr_assert_eq(p->n_probes, 1);
    cr_assert_not(ct_file_note_any(&r.files[0]));
}

/* cascade.jsonl: every read of failure #1 is kept, and in exactly one
 * group; the 13 of x that tell one story are one group, in the place of
 * its first read, with their bytes summed. */
Test(reader, refused_reads_are_kept_and_grouped_by_story)
{
    read_data(&r, "cascade.jsonl");
    const ct_failure *f = &r.procs[0].failures[0];
    cr_assert_eq(f->n_reads, 18);
    cr_assert_eq(f->n_read_groups, 6);
    uint64_t grouped = 0;
    for (size_t i = 0; i < f->n_read_groups; i++)
        grouped += f->read_groups[i].count;
    cr_assert_eq(grouped, f->n_reads);
    const ct_read_group *x = &f->read_groups[1];
    cr_assert_eq(x->first, 1);
    cr_assert_eq(x->count, 13);
    cr_assert_eq(x->bytes, 13 * 512);
    cr_assert_eq(f->read_groups[2].first, 14, "the next story starts after the 13");
}

Test(reader, killed_process_has_no_exit_and_a_cut_line)
{
    read_data(&r, "killed.jsonl");
    cr_assert_eq(r.n_procs, 1);
    cr_assert_not(r.procs[0].has_exit);
    cr_assert(r.files[0].truncated);
    cr_assert_eq(r.files[0].corrupt.count, 0);
    cr_assert_eq(r.procs[0].failures[0].n_skips, 1);
}

/* Two processes append to one report and a full disk cuts their lines:
 * pid 700's cut failure line, which it could not end, has pid 701's whole
 * start glued onto it; its cut refused_read was ended (the shim does); a
 * last damaged line is two fragments.  Each damaged line is skipped and
 * counted, and a whole event glued after one is kept: pid 701 has its
 * start. */
Test(reader, a_damaged_line_is_skipped_and_a_whole_event_glued_after_it_kept)
{
    read_data(&r, "glued.jsonl");
    const ct_file_note *n = &r.files[0];
    cr_assert_eq(n->corrupt.count, 3);
    cr_assert_eq(n->corrupt.first, 2);
    cr_assert_eq(n->malformed.count, 0);
    cr_assert_not(n->truncated);
    cr_assert_eq(r.n_procs, 2);
    for (size_t i = 0; i < r.n_procs; i++) {
        const ct_process *p = &r.procs[i];
        cr_assert(p->has_start && p->has_exit, "pid %ld lost its start or exit", p->pid);
    }
    const ct_process *worker = r.procs[0].pid == 701 ? &r.procs[0] : &r.procs[1];
    cr_assert_eq(worker->pid, 701);
    cr_assert_eq(worker->argv.n, 3);
    cr_assert_str_eq(worker->argv.v[0], "./worker");
    cr_assert_eq(worker->n_failures, 1);
}

Test(reader, corrupt_lines_are_counted_and_skipped)
{
    read_data(&r, "corrupt.jsonl");
    const ct_file_note *n = &r.files[0];
    cr_assert_eq(n->corrupt.count, 3);
    cr_assert_eq(n->corrupt.first, 2);
    cr_assert_eq(n->malformed.count, 3);
    cr_assert_eq(n->unknown, 1);
    cr_assert_not(n->truncated);
    /* A second start for pid 500 is a second process. */
    cr_assert_eq(r.n_procs, 2);
    const ct_process *p = &r.procs[0];
    cr_assert_not(p->has_exit);
    cr_assert(r.procs[1].has_exit);
    /* Failure 3 was logged twice: one failure, two occurrences. */
    const ct_failure *f = ct_process_failure(p, 3);
    cr_assert_eq(f->occurrences, 2);
    cr_assert(f->injected);
    cr_assert_eq(f->n_skips, 2, "relu folded into one group, the copy another");
    cr_assert_eq(f->skips[0].count, 2);
    cr_assert_eq(f->skips[0].last_launch, 10);
    cr_assert_null(f->skips[1].kernel);
    /* A skip naming an unknown failure gets a placeholder. */
    const ct_failure *orphan = ct_process_failure(p, 9);
    cr_assert_not(orphan->described);
    cr_assert_eq(orphan->n_skips, 1);
    ct_counts c = ct_process_counts(p);
    cr_assert_eq(c.skips, 4);
    cr_assert_eq(c.skipped_copies, 1);
}

Test(reader, a_folded_failure_counts_its_repeats_and_keeps_both_launches)
{
    read_data(&r, "repeats.jsonl");
    const ct_process *p = &r.procs[0];
    cr_assert_eq(p->n_failures, 1, "repeats are one failure");
    const ct_failure *f = &p->failures[0];
    cr_assert_eq(f->occurrences, 3);
    cr_assert_eq(f->launch, 1, "the first launch stays");
    cr_assert_eq(f->last_launch, 9);
    cr_assert_eq(r.files[0].unknown, 0, "repeat is a known event");
    ct_counts c = ct_process_counts(p);
    cr_assert_eq(c.failures, 1);
    cr_assert_eq(c.occurrences, 3);
}

Test(reader, several_files_group_by_process)
{
    read_data(&r, "multi_a.jsonl");
    read_data(&r, "multi_b.jsonl");
    cr_assert_eq(r.n_procs, 3);
    cr_assert_eq(r.n_files, 2);
    cr_assert_eq(r.procs[0].pid, 700);
    cr_assert(r.procs[1].context_lost);
    cr_assert_eq(ct_process_loss_cause(&r.procs[1])->id, 1);
    cr_assert_eq(r.procs[1].exit.status, 70);
    ct_counts total = ct_report_counts(&r);
    cr_assert_eq(total.failures, 2);
    cr_assert_eq(total.refused_reads, 2);
}

Test(reader, over_long_lines_are_skipped_without_losing_the_next)
{
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    fputs("{\"event\":\"start\",\"pid\":9,\"argv\":[\"", f);
    for (size_t i = 0; i < CT_REPORT_LINE_MAX + 10; i++)
        fputc('a', f);
    fputs("\"]}\n{\"event\":\"exit\",\"pid\":9,\"status\":3}\n", f);
    rewind(f);
    cr_assert_eq(ct_report_read(&r, f, "long"), 0);
    fclose(f);
    cr_assert_eq(r.files[0].too_long.count, 1);
    cr_assert_eq(r.n_procs, 1);
    cr_assert(r.procs[0].has_exit);
    cr_assert_eq(r.procs[0].exit.status, 3);
}

Test(reader, a_last_line_without_newline_that_parses_is_kept)
{
    FILE *f = tmpfile();
    fputs("{\"event\":\"exit\",\"pid\":9,\"status\":0}", f);
    rewind(f);
    cr_assert_eq(ct_report_read(&r, f, "nonl"), 0);
    fclose(f);
    cr_assert_not(r.files[0].truncated);
    cr_assert(r.procs[0].has_exit);
}

Test(reader, random_mutations_of_a_real_report_do_not_crash)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/demo.jsonl", CT_TEST_DATA);
    FILE *in = fopen(path, "re");
    cr_assert_not_null(in);
    char seed[8192];
    size_t n = fread(seed, 1, sizeof seed, in);
    fclose(in);
    srand(99);
    for (int round = 0; round < 500; round++) {
        char buf[sizeof seed];
        memcpy(buf, seed, n);
        for (int k = rand() % 8; k >= 0; k--)
            buf[(size_t)rand() % n] = (char)(rand() % 256);
        FILE *f = fmemopen(buf, (size_t)rand() % n + 1, "r");
        ct_report one = {0};
        ct_report_read(&one, f, "mutated");
        fclose(f);
        free(render_to_string(&one, CT_FORMAT_TEXT, NULL));
        free(render_to_string(&one, CT_FORMAT_DOT, NULL));
        free(render_to_string(&one, CT_FORMAT_JSON, NULL));
        ct_report_free(&one);
    }
}

/* A report in a format newer than this reader's is read as far as it goes,
 * and said plainly; the format of one without the field is 1. */
Test(reader, a_newer_format_is_said_plainly)
{
    read_data(&r, "newer.jsonl");
    cr_assert_eq(r.procs[0].format_version, 99);
    cr_assert_eq(r.files[0].newer_format, 99);
    cr_assert(ct_file_note_any(&r.files[0]));
    cr_assert(r.procs[0].has_exit, "what it knows is read");
    size_t len;
    char *text = render_to_string(&r, CT_FORMAT_TEXT, &len);
    cr_assert(strstr(text, "written in report format 99, newer than this cutaint's"), "%s", text);
    free(text);
    ct_report_free(&r);
    memset(&r, 0, sizeof r);
    read_data(&r, "demo.jsonl");
    cr_assert_eq(r.procs[0].format_version, 1);
    cr_assert_eq(r.files[0].newer_format, 0);
}

/* An image the driver refused, answered with a stand-in, and the launch
 * failure that descends from it: each image event's number and stand_in,
 * the failure's image, and the counts as they were (an unusable image and
 * a root failure, one each). */
Test(reader, a_failure_names_the_image_it_descends_from)
{
    read_data(&r, "image_stand_in.jsonl");
    const ct_process *p = &r.procs[0];
    cr_assert_eq(p->n_images, 1);
    cr_assert_eq(p->images[0].number, 1);
    cr_assert(p->images[0].stand_in);
    const ct_failure *f = ct_process_failure(p, 1);
    cr_assert(f->has_image);
    cr_assert_eq(f->image, 1);
    cr_assert_eq(ct_process_image(p, 1), &p->images[0]);
    cr_assert_null(ct_process_image(p, 2));
    cr_assert_eq(f->n_skips, 1);
    cr_assert_eq(f->n_reads, 1);
    ct_counts c = ct_process_counts(p);
    cr_assert_eq(c.failures, 1);
    cr_assert_eq(c.unusable_images, 1);
    cr_assert_eq(c.refused_reads, 1);
}

/* Written before the keys: images numbered in order within each process,
 * no stand-ins, a failure with no image. */
Test(reader, images_without_numbers_are_numbered_in_order_per_process)
{
    read_data(&r, "image_unnumbered.jsonl");
    cr_assert_eq(r.n_procs, 2);
    const ct_process *p = &r.procs[0];
    cr_assert_eq(p->n_images, 2);
    cr_assert_eq(p->images[0].number, 1);
    cr_assert_eq(p->images[1].number, 2);
    cr_assert_not(p->images[0].stand_in);
    cr_assert_not(p->images[1].stand_in);
    cr_assert_not(p->failures[0].has_image);
    cr_assert_eq(r.procs[1].n_images, 1);
    cr_assert_eq(r.procs[1].images[0].number, 1, "numbers start again in each process");
}

/* A failure may name an image the report does not hold (the line was
 * lost); "image": null is no image. */
Test(reader, a_failure_may_name_an_image_the_report_lacks)
{
    read_data(&r, "image_missing.jsonl");
    const ct_process *p = &r.procs[0];
    const ct_failure *f = ct_process_failure(p, 1);
    cr_assert(f->has_image);
    cr_assert_eq(f->image, 2);
    cr_assert_null(ct_process_image(p, 2));
    cr_assert_not(ct_process_failure(p, 2)->has_image, "image: null is none");
}

/* ---- a lost context's suspects -------------------------------------------- */

/* Two streams, each with its prime (the default one's a kernel launch, the
 * other's a graph launch), kept in the event's order. */
Test(reader, a_loss_keeps_its_suspects_in_order)
{
    read_data(&r, "context_lost_suspects.jsonl");
    const ct_process *p = &r.procs[0];
    cr_assert(p->context_lost && p->has_suspects);
    cr_assert_eq(p->n_suspects, 4);
    cr_assert_eq(p->suspects_total, 4);
    cr_assert_eq(p->suspects_dropped, 0);
    const ct_suspect *s = p->suspects;
    cr_assert_str_eq(s[0].kernel, "fill(float*, int, float)");
    cr_assert(s[0].prime);
    cr_assert_eq(s[0].launch, 1);
    cr_assert(s[0].has_dims);
    cr_assert_eq(s[0].grid[0], 4);
    cr_assert_eq(s[0].block[0], 256);
    cr_assert_eq(s[0].thread, 32663);
    cr_assert_str_eq(s[0].repro, "compute-sanitizer --tool memcheck --launch-skip 0 --launch-count 1 ./client crash");
    cr_assert_str_eq(s[1].kernel, "crash(float*)");
    cr_assert_not(s[1].prime);
    cr_assert_null(s[2].kernel, "a graph launch has no kernel");
    cr_assert_str_eq(s[2].api, "cuGraphLaunch");
    cr_assert_str_eq(s[2].graph, "0x55d0c0de1000");
    cr_assert_str_eq(s[2].stream, "0x5a5a0000");
    cr_assert(s[2].prime);
    cr_assert_null(s[2].repro);
    cr_assert_str_eq(s[3].kernel, "scale(float*, int)");
    cr_assert_not(s[3].prime);
}

/* Written before the keys: no suspects, a total of 0, and not "none". */
Test(reader, an_older_loss_has_no_suspects)
{
    read_data(&r, "context_lost.jsonl");
    const ct_process *p = &r.procs[0];
    cr_assert(p->context_lost);
    cr_assert_not(p->has_suspects);
    cr_assert_eq(p->n_suspects, 0);
    cr_assert_eq(p->suspects_total, 0);
}

Test(reader, a_loss_with_every_launch_finished_has_none)
{
    read_data(&r, "context_lost_none.jsonl");
    const ct_process *p = &r.procs[0];
    cr_assert(p->has_suspects);
    cr_assert_eq(p->n_suspects, 0);
    cr_assert_eq(p->suspects_total, 0);
}

/* More listed than the event may hold: CT_SUSPECTS_MAX kept, the rest
 * counted, the total as the event said it. */
Test(reader, the_suspects_kept_are_bounded)
{
    read_data(&r, "context_lost_many.jsonl");
    const ct_process *p = &r.procs[0];
    cr_assert_eq(p->n_suspects, CT_SUSPECTS_MAX);
    cr_assert_eq(p->suspects_dropped, 18 - CT_SUSPECTS_MAX);
    cr_assert_eq(p->suspects_total, 20);
    cr_assert_str_eq(p->suspects[CT_SUSPECTS_MAX - 1].kernel, "step15(float*)", "the first ones are kept");
}
