/*
 * render_text.c - the report as a tree per process, for people:
 *
 *   process PID: ARGV
 *     |- failure #ID: WHAT -> ERROR          (root cause)
 *     |  |  from unusable image #N: API ...  (the image its kernel is in)
 *     |  |- skipped launch #N: KERNEL         (work it kept from running)
 *     |  |- refused read: API, BYTES at ADDR (bytes it kept from the host)
 *     |  |     path: ROOT -> KERNEL (N times) (how the failure got there)
 *     |  `- refused N reads: API, BYTES in all (reads that tell one story)
 *     |- unusable image #N: WHY              (an image the driver refused)
 *     |- probe ... / CONTEXT LOST ...
 *     |     prime suspect: KERNEL ...        (the oldest unfinished on a stream)
 *     `- exit: status S   (or a note that the log ends without one)
 *     verdict: ...
 *
 * Owns: the tree layout.  Invariants: ASCII tree glyphs only (the output
 * is grepped and pasted into tickets); every line of report text goes
 * through ct_put_text; one verdict line per process, an overall line when
 * there is not exactly one process.
 */
#include "render.h"

#include "textout.h"
#include "util.h"
#include "jsonl.h"

#include <assert.h>
#include <inttypes.h>
#include <string.h>

#define BACKTRACE_SHOWN 4
#define TREE_DEPTH 3

/* Which ancestors are the last of their siblings, for the "|" columns. */
typedef struct tree {
    FILE *out;
    bool last[TREE_DEPTH + 1];
} tree;

/* Starts a node line at depth 1..TREE_DEPTH. */
static void node(tree *t, int depth, bool last)
{
    assert(depth >= 1 && depth <= TREE_DEPTH && "a node's depth fits the tree");
    t->last[depth] = last;
    fputs("  ", t->out);
    for (int d = 1; d < depth; d++)
        fputs(t->last[d] ? "   " : "|  ", t->out);
    fputs(last ? "`- " : "|- ", t->out);
}

/* Starts a detail line of the node at depth, above its children if any. */
static void detail(tree *t, int depth, bool children_follow)
{
    assert(depth >= 1 && depth <= TREE_DEPTH && "a detail's depth fits the tree");
    fputs("  ", t->out);
    for (int d = 1; d <= depth; d++)
        fputs(t->last[d] ? "   " : "|  ", t->out);
    fputs(children_follow ? "|  " : "   ", t->out);
}

/* ---- failures and what they caused ------------------------------------- */

static void failure_line(tree *t, const ct_failure *f)
{
    fprintf(t->out, "failure #%" PRId64 ": ", f->id);
    if (!f->described) {
        fputs("(its failure line is not in the log)\n", t->out);
        return;
    }
    ct_put_text(t->out, ct_failure_what(f), "");
    fputs(" -> ", t->out);
    if (f->status) { /* a library call: its own status, with its value */
        ct_put_text(t->out, f->status, "");
    } else {
        ct_put_text(t->out, f->error, "unknown error");
        fprintf(t->out, " (%" PRId64 ")", f->code);
    }
    if (f->occurrences > 1)
        fprintf(t->out, ", %" PRIu64 " occurrences", f->occurrences);
    if (f->injected)
        fputs(" [injected]", t->out);
    fputc('\n', t->out);
}

static void where_line(tree *t, const ct_failure *f, bool children)
{
    detail(t, 1, children);
    fputs("at ", t->out);
    ct_put_text(t->out, f->api, "unknown API");
    if (f->launch)
        fprintf(t->out, ", launch #%" PRId64, f->launch);
    if (f->last_launch > f->launch)
        fprintf(t->out, ", latest launch #%" PRId64, f->last_launch);
    if (f->has_dims)
        fprintf(t->out, ", grid %" PRId64 "x%" PRId64 "x%" PRId64 ", block %" PRId64 "x%" PRId64 "x%" PRId64,
                f->grid[0], f->grid[1], f->grid[2], f->block[0], f->block[1], f->block[2]);
    if (f->stream) {
        fputs(", stream ", t->out);
        ct_put_text(t->out, f->stream, "");
    }
    if (f->thread)
        fprintf(t->out, ", thread %" PRId64, f->thread);
    fputc('\n', t->out);
}

/* "from unusable image #1: cuLibraryLoadData failed with ...": the image
 * event, of the same process, that a launch's failure descends from. */
static void origin_line(tree *t, const ct_process *p, const ct_failure *f, bool children)
{
    detail(t, 1, children);
    fprintf(t->out, "from unusable image #%" PRId64, f->image);
    const ct_image_note *im = ct_process_image(p, f->image);
    if (!im) {
        fputs(" (not in this report)\n", t->out);
        return;
    }
    fputs(": ", t->out);
    ct_put_text(t->out, im->api, "?");
    fputs(" failed with ", t->out);
    ct_put_text(t->out, im->error, "?");
    fputc('\n', t->out);
}

/* "retried by launch #3, which succeeded: its outputs are written again"
 * (docs/DESIGN.md, "Retries"). */
static void retry_line(tree *t, const ct_failure *f, bool children)
{
    detail(t, 1, children);
    if (f->retries == 1)
        fprintf(t->out, "retried by launch #%" PRId64 ", which succeeded", f->retry_launch);
    else
        fprintf(t->out, "retried %" PRIu64 " times, the first by launch #%" PRId64 ", and succeeded", f->retries,
                f->retry_launch);
    fputs(": the outputs it left unwritten are written\n", t->out);
}

/* "covers 13312 bytes of an allocation of 16384 that looks like a pool"
 * (docs/POOLS.md). */
static void pool_line(tree *t, const ct_failure *f, bool children)
{
    detail(t, 1, children);
    fprintf(t->out,
            "covers %" PRId64 " bytes of an allocation of %" PRId64 " reached through %" PRId64 " pointers: a pool?"
            " declare each tensor with CUTAINT_REGION_ALLOC (include/cutaint.h), or give each its own allocation"
            " (docs/POOLS.md)\n",
            f->pool_covered, f->pool_size, f->pool_pointers);
}

static void failure_details(tree *t, const ct_process *p, const ct_failure *f)
{
    bool children = f->n_skips || f->n_reads;
    if (!f->described)
        return;
    if (f->has_image)
        origin_line(t, p, f, children);
    where_line(t, f, children);
    if (f->retries)
        retry_line(t, f, children);
    if (f->pool)
        pool_line(t, f, children);
    for (size_t i = 0; i < f->backtrace.n && i < BACKTRACE_SHOWN; i++) {
        detail(t, 1, children);
        fputs(i ? "   " : "by ", t->out);
        ct_put_text(t->out, f->backtrace.v[i], "");
        fputc('\n', t->out);
    }
    if (f->backtrace.n > BACKTRACE_SHOWN) {
        detail(t, 1, children);
        fprintf(t->out, "   ... %zu more frames\n", f->backtrace.n - BACKTRACE_SHOWN);
    }
    if (f->repro) {
        detail(t, 1, children);
        fputs("repro: ", t->out);
        ct_put_text(t->out, f->repro, "");
        fputc('\n', t->out);
    }
}

static void skip_line(tree *t, const ct_skip_group *g, bool last)
{
    node(t, 2, last);
    const char *what = g->kernel ? g->kernel : g->api;
    bool call = !g->kernel && ct_is_library_call(g->api);
    if (g->count == 1 && g->kernel)
        fprintf(t->out, "skipped launch #%" PRId64 ": ", g->first_launch);
    else if (call && g->count == 1)
        fputs("skipped library call: ", t->out);
    else if (call)
        fprintf(t->out, "skipped %" PRIu64 " library calls: ", g->count);
    else if (g->count == 1)
        fputs("skipped copy: ", t->out);
    else if (g->kernel)
        fprintf(t->out, "skipped %" PRIu64 " launches (#%" PRId64 "..#%" PRId64 "): ", g->count, g->first_launch,
                g->last_launch);
    else
        fprintf(t->out, "skipped %" PRIu64 " copies: ", g->count);
    ct_put_text(t->out, what, "unknown");
    fputs(" (input ", t->out);
    ct_put_text(t->out, g->needed, "?");
    fprintf(t->out, " carried the failure; %" PRId64 " output%s tainted)\n", g->produced,
            ct_plural((unsigned long long)g->produced));
}

/* How many elements from the i-th on are the same text. */
static size_t run_at(const ct_strv *path, size_t i)
{
    size_t n = 1;
    while (i + n < path->n && strcmp(path->v[i + n], path->v[i]) == 0)
        n++;
    return n;
}

/* "path: fill(float*, int, float) (13 times) -> saxpy(...)": a run of one
 * kernel (or copy API) in a row is one step with its count, so a failure
 * that spread through one kernel again and again reads at a glance. */
static void path_line(tree *t, const ct_strv *path)
{
    detail(t, 2, false);
    fputs("path: ", t->out);
    for (size_t i = 0, run; i < path->n; i += run) {
        run = run_at(path, i);
        fputs(i ? " -> " : "", t->out);
        ct_put_text(t->out, path->v[i], "");
        if (run > 1)
            fprintf(t->out, " (%zu times)", run);
    }
    fputc('\n', t->out);
}

static void read_details(tree *t, const ct_read *rd, int64_t root)
{
    if (rd->path.n)
        path_line(t, &rd->path);
    bool others = false;
    for (size_t i = 0; i < rd->n_failures; i++) {
        if (rd->failures[i] == root)
            continue;
        if (!others)
            detail(t, 2, false);
        fprintf(t->out, "%s#%" PRId64, others ? ", " : "the bytes also carry failure ", rd->failures[i]);
        others = true;
    }
    if (others)
        fputc('\n', t->out);
}

/* "refused read: API, N bytes at ADDR -> ...", or for reads that tell the
 * same story "refused 13 reads: API, 6656 bytes in all, the first at ADDR
 * -> ...", and under it the path they share. */
static void read_line(tree *t, const ct_failure *f, const ct_read_group *g, bool last)
{
    const ct_read *rd = &f->reads[g->first];
    bool one = g->count == 1;
    node(t, 2, last);
    if (one)
        fputs("refused read: ", t->out);
    else
        fprintf(t->out, "refused %" PRIu64 " reads: ", g->count);
    ct_put_text(t->out, rd->api, "unknown API");
    if (one)
        fprintf(t->out, ", %" PRId64 " byte%s at ", rd->bytes, ct_plural((unsigned long long)rd->bytes));
    else
        fprintf(t->out, ", %" PRId64 " bytes in all, the first at ", g->bytes);
    ct_put_text(t->out, rd->address, "?");
    fputs(" -> returned ", t->out);
    ct_put_text(t->out, rd->returned, "an error");
    if (rd->poisoned)
        fputs(one ? "; host buffer poisoned\n" : "; host buffers poisoned\n", t->out);
    else
        fputs(one ? "; host buffer left as it was\n" : "; host buffers left as they were\n", t->out);
    read_details(t, rd, f->id);
}

static void failure_tree(tree *t, const ct_process *p, const ct_failure *f, bool last)
{
    node(t, 1, last);
    failure_line(t, f);
    failure_details(t, p, f);
    for (size_t i = 0; i < f->n_skips; i++)
        skip_line(t, &f->skips[i], i + 1 == f->n_skips && !f->n_reads);
    for (size_t i = 0; i < f->n_read_groups; i++)
        read_line(t, f, &f->read_groups[i], i + 1 == f->n_read_groups);
}

/* ---- the rest of a process --------------------------------------------- */

static void probe_line(tree *t, const ct_probe *pr, bool last)
{
    node(t, 1, last);
    fputs("probe after ", t->out);
    ct_put_text(t->out, pr->after, "?");
    fputs(" (", t->out);
    ct_put_text(t->out, pr->error, "?");
    fputs("): synchronize returned ", t->out);
    ct_put_text(t->out, pr->result, "?");
    fputs(" -> ", t->out);
    ct_put_text(t->out, pr->verdict, "?");
    fputc('\n', t->out);
}

/* "unusable image #1: image 0x... (kernels fill) holds sm_80 code and no
 * PTX; ...", and when cutaint stood in for it, that its launches fail. */
static void image_line(tree *t, const ct_image_note *im, bool last)
{
    node(t, 1, last);
    fprintf(t->out, "unusable image #%" PRId64 ": ", im->number);
    if (im->why) {
        ct_put_text(t->out, im->why, "");
    } else { /* an event without its sentence: what it does say */
        ct_put_text(t->out, im->api, "?");
        fputs(" failed with ", t->out);
        ct_put_text(t->out, im->error, "?");
    }
    if (im->stand_in)
        fputs("; cutaint answered with a stand-in: its kernels' launches fail as root failures", t->out);
    fputc('\n', t->out);
}

/* "prime suspect: crash(float*) launch #2 on stream 0x0 (grid 4x1x1, block
 * 256x1x1, thread N)", or for a graph launch "prime suspect: graph 0x55..
 * (cuGraphLaunch) on stream 0x..", then the line that replays it. */
static void prime_suspect_lines(tree *t, const ct_suspect *s)
{
    detail(t, 1, false);
    fputs("prime suspect: ", t->out);
    if (s->kernel) {
        ct_put_text(t->out, s->kernel, "");
        if (s->launch)
            fprintf(t->out, " launch #%" PRId64, s->launch);
    } else {
        fputs("graph ", t->out);
        ct_put_text(t->out, s->graph, "?");
        fputs(" (", t->out);
        ct_put_text(t->out, s->api, "unknown API");
        fputc(')', t->out);
    }
    fputs(" on stream ", t->out);
    ct_put_text(t->out, s->stream, "?");
    if (s->kernel && s->has_dims)
        fprintf(t->out,
                " (grid %" PRId64 "x%" PRId64 "x%" PRId64 ", block %" PRId64 "x%" PRId64 "x%" PRId64 ", thread %" PRId64
                ")",
                s->grid[0], s->grid[1], s->grid[2], s->block[0], s->block[1], s->block[2], s->thread);
    else if (s->kernel && s->thread)
        fprintf(t->out, " (thread %" PRId64 ")", s->thread);
    fputc('\n', t->out);
    if (s->repro) {
        detail(t, 1, false);
        fputs("replay: ", t->out);
        ct_put_text(t->out, s->repro, "");
        fputc('\n', t->out);
    }
}

/* How many suspects there were, and that none is known to be the one; an
 * older report names none and gets no line. */
static void suspects_count_line(tree *t, const ct_process *p)
{
    if (!p->has_suspects)
        return;
    detail(t, 1, false);
    if (!p->suspects_total) {
        fputs("no suspect: every launch on the context was proven finished\n", t->out);
        return;
    }
    fprintf(t->out, "%" PRIu64 " suspect%s in all", p->suspects_total, ct_plural(p->suspects_total));
    uint64_t listed = p->n_suspects + p->suspects_dropped;
    if (listed < p->suspects_total)
        fprintf(t->out, " (the report lists %" PRIu64 ")", listed);
    fputs(": cutaint orders them, it cannot know which one faulted\n", t->out);
}

static void lost_line(tree *t, const ct_process *p, bool last)
{
    node(t, 1, last);
    fputs(p->lost_simulated ? "CONTEXT LOST (simulated): " : "CONTEXT LOST: ", t->out);
    ct_put_text(t->out, p->lost_reason, "no reason given");
    fputc('\n', t->out);
    const ct_failure *cause = ct_process_loss_cause(p);
    if (cause) {
        detail(t, 1, false);
        fprintf(t->out, "after failure #%" PRId64 "\n", cause->id);
    }
    for (size_t i = 0; i < p->n_suspects; i++)
        if (p->suspects[i].prime)
            prime_suspect_lines(t, &p->suspects[i]);
    suspects_count_line(t, p);
}

static void exit_line(tree *t, const ct_process *p)
{
    node(t, 1, true);
    if (!p->has_exit) {
        fputs("log ends without an exit event: the process was killed or is still running\n", t->out);
        return;
    }
    fprintf(t->out, "exit: status %" PRId64, p->exit.status);
    if (p->exit.status != p->exit.program_status)
        fprintf(t->out, " (the program asked for %" PRId64 ")", p->exit.program_status);
    fputc('\n', t->out);
}

static void verdict_line(FILE *out, const ct_process *p)
{
    char counts[256];
    ct_counts c = ct_process_counts(p);
    ct_counts_phrase(counts, sizeof counts, &c);
    if (p->context_lost) {
        fputs("  verdict: CONTEXT LOST -- ", out);
        ct_put_text(out, p->lost_reason, "no reason given");
        fprintf(out, " (%s)\n", counts);
    } else if (c.failures == 0 && c.refused_reads == 0 && c.unusable_images == 0) {
        fputs("  verdict: clean -- no failures; context intact\n", out);
    } else {
        fprintf(out, "  verdict: %s; context intact\n", counts);
    }
}

static void process_header(FILE *out, const ct_process *p)
{
    fprintf(out, "process %ld: ", p->pid);
    ct_put_command(out, p);
    fputc('\n', out);
    fputs("  |  report ", out);
    ct_put_text(out, p->file, "?");
    if (p->has_driver)
        fprintf(out, ", driver %" PRId64 ".%" PRId64, p->driver_version / 1000, (p->driver_version % 1000) / 10);
    else if (p->has_start)
        fputs(", no CUDA driver", out);
    if (p->cutaint_version) {
        fputs(", cutaint ", out);
        ct_put_text(out, p->cutaint_version, "");
    }
    fputc('\n', out);
}

static void process_tree(FILE *out, const ct_process *p)
{
    tree t = {.out = out};
    process_header(out, p);
    for (size_t i = 0; i < p->n_failures; i++)
        failure_tree(&t, p, &p->failures[i], false);
    for (size_t i = 0; i < p->n_images; i++)
        image_line(&t, &p->images[i], false);
    for (size_t i = 0; i < p->n_probes; i++)
        probe_line(&t, &p->probes[i], false);
    if (p->context_lost)
        lost_line(&t, p, false);
    exit_line(&t, p);
    verdict_line(out, p);
}

/* ---- notes and the overall line ---------------------------------------- */

static void note_count(FILE *out, const ct_file_note *n, ct_skipped kind, const char *what)
{
    if (!kind.count)
        return;
    fputs("note: ", out);
    ct_put_text(out, n->path, "");
    fprintf(out, ": %" PRIu64 " %s line%s skipped (the first is line %" PRIu64 ")\n", kind.count, what,
            ct_plural(kind.count), kind.first);
}

static void file_notes(FILE *out, const ct_file_note *n)
{
    note_count(out, n, n->corrupt, "corrupt (not JSON)");
    note_count(out, n, n->malformed, "malformed (JSON, but not a cutaint event)");
    note_count(out, n, n->too_long, "over-long (more than 1 MiB)");
    if (n->unknown) {
        fputs("note: ", out);
        ct_put_text(out, n->path, "");
        fprintf(out, ": %" PRIu64 " event%s of a kind this cutaint does not know, ignored\n", n->unknown,
                ct_plural(n->unknown));
    }
    if (n->newer_format) {
        fputs("note: ", out);
        ct_put_text(out, n->path, "");
        fprintf(out,
                ": written in report format %" PRId64 ", newer than this cutaint's %d: what it does not know is "
                "ignored, and what it shows may be incomplete (use the cutaint that wrote it)\n",
                n->newer_format, CT_REPORT_FORMAT_VERSION);
    }
    if (n->truncated) {
        fputs("note: ", out);
        ct_put_text(out, n->path, "");
        fputs(": the last line is cut short (the writer was killed mid-line); ignored\n", out);
    }
}

static void overall_line(FILE *out, const ct_report *r)
{
    char counts[256];
    size_t lost = 0;
    ct_counts c = ct_report_counts(r);
    ct_counts_phrase(counts, sizeof counts, &c);
    for (size_t i = 0; i < r->n_procs; i++)
        lost += r->procs[i].context_lost;
    fprintf(out, "overall: %zu process%s: %s; ", r->n_procs, r->n_procs == 1 ? "" : "es", counts);
    if (!lost) {
        fputs("no context lost\n", out);
        return;
    }
    fprintf(out, "CONTEXT LOST in %zu (pid", lost);
    for (size_t i = 0; i < r->n_procs; i++)
        if (r->procs[i].context_lost)
            fprintf(out, " %ld", r->procs[i].pid);
    fputs(")\n", out);
}

void ct_render_text(FILE *out, const ct_report *r)
{
    for (size_t i = 0; i < r->n_files; i++)
        file_notes(out, &r->files[i]);
    if (r->n_procs == 0) {
        fprintf(out, "no cutaint events in %zu file%s\n", r->n_files, ct_plural(r->n_files));
        return;
    }
    for (size_t i = 0; i < r->n_procs; i++) {
        if (i)
            fputc('\n', out);
        process_tree(out, &r->procs[i]);
    }
    if (r->n_procs != 1) {
        fputc('\n', out);
        overall_line(out, r);
    }
}
