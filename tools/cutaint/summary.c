/*
 * summary.c - what `cutaint run` says when the program has ended: a few
 * lines prefixed "==cutaint==" (so they stand apart from the program's
 * output and the shim's own "cutaint:" log lines), e.g.
 *
 *   ==cutaint== ./app exited with status 0 -> 70 | 1 root failure, 1 skipped
 *               launch, 1 refused read | context lost: YES | report: /tmp/...
 *   ==cutaint== root cause: gemm(float*, ...) -> CUDA_ERROR_ILLEGAL_ADDRESS
 *               (cuLaunchKernel, launch #3)
 *   ==cutaint== context lost: <reason>
 *   ==cutaint== the tree: cutaint report /tmp/...
 *
 * Owns: the summary wording.  Invariants: the first line always names the
 * status cutaint exits with; counts cover every process that reached the
 * driver, in the one report or, with %p, in every file of the run
 * (run_reports.c); report text is printed through ct_put_text only.
 */
#include "run.h"

#include "render.h"
#include "report.h"
#include "textout.h"
#include "util.h"

#include <assert.h>
#include <inttypes.h>
#include <string.h>

#define PREFIX "==cutaint== "

/* Reads the run's reports; false if there is none to read. */
static bool load(const ct_run_outcome *o, ct_report *r)
{
    return ct_run_reports_read(o, r) > 0;
}

/* The report files read, as one can pass them to `cutaint report`. */
static void put_files(FILE *out, const ct_run_outcome *o, const ct_report *r)
{
    if (r->n_files == 0)
        ct_put_text(out, o->report, "");
    for (size_t i = 0; i < r->n_files; i++) {
        if (i)
            fputc(' ', out);
        ct_put_text(out, r->files[i].path, "");
    }
}

/* The program's own process: the last one with its pid. */
static const ct_process *main_process(const ct_report *r, long pid)
{
    for (size_t i = r->n_procs; i > 0; i--)
        if (r->procs[i - 1].pid == pid)
            return &r->procs[i - 1];
    return NULL;
}

static void status_part(FILE *out, const ct_run_request *req, const ct_run_outcome *o, const ct_process *p)
{
    assert((!o->signal || o->status == o->program_status) && "the first line names the status cutaint exits with");
    fputs(PREFIX, out);
    ct_put_text(out, req->program[0], "");
    if (o->signal) {
        const char *name = sigabbrev_np(o->signal);
        fprintf(out, " was killed by signal %d%s%s%s -> status %d", o->signal, name ? " (SIG" : "", name ? name : "",
                name ? ")" : "", o->status);
        return;
    }
    fputs(" exited with status ", out);
    if (p && p->has_exit && p->exit.program_status != o->program_status)
        fprintf(out, "%" PRId64 " -> ", p->exit.program_status);
    fprintf(out, "%d", o->program_status);
    if (o->status != o->program_status)
        fprintf(out, " -> %d (--error-exitcode: a read was refused or failed)", o->status);
}

static const ct_failure *first_failure(const ct_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        for (size_t k = 0; k < r->procs[i].n_failures; k++)
            if (r->procs[i].failures[k].described)
                return &r->procs[i].failures[k];
    return NULL;
}

static const ct_process *lost_process(const ct_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        if (r->procs[i].context_lost)
            return &r->procs[i];
    return NULL;
}

static void root_cause_line(FILE *out, const ct_failure *f, uint64_t failures)
{
    fputs(PREFIX "root cause: ", out);
    ct_put_text(out, ct_failure_what(f), "");
    fputs(" -> ", out);
    ct_put_text(out, f->error, "an error");
    fputs(" (", out);
    ct_put_text(out, f->api, "?");
    if (f->launch)
        fprintf(out, ", launch #%" PRId64, f->launch);
    if (f->occurrences > 1)
        fprintf(out, ", %" PRIu64 " occurrences", f->occurrences);
    if (f->last_launch > f->launch)
        fprintf(out, ", latest launch #%" PRId64, f->last_launch);
    fputs(f->injected ? ", injected)" : ")", out);
    if (failures > 1)
        fprintf(out, "; %" PRIu64 " more failure%s in the report", failures - 1, ct_plural(failures - 1));
    fputc('\n', out);
}

static void report_lines(FILE *out, const ct_run_outcome *o, const ct_report *r, const ct_process *p,
                         const ct_counts *c)
{
    const ct_failure *f = first_failure(r);
    const ct_process *lost = lost_process(r);
    if (f)
        root_cause_line(out, f, c->failures);
    if (lost) {
        fputs(PREFIX "context lost: ", out);
        ct_put_text(out, lost->lost_reason, "no reason given");
        fputc('\n', out);
    }
    if (r->n_procs == 0 && o->signal)
        fputs(PREFIX "the report is empty: the program was killed before its first CUDA call\n", out);
    else if (r->n_procs == 0)
        fputs(PREFIX "no process reached the CUDA driver: the program used no CUDA, or "
                     "libcutaint.so was not loaded (static and setuid programs ignore "
                     "LD_PRELOAD)\n",
              out);
    else if (p && !p->has_exit)
        fputs(o->signal ? PREFIX "the report ends without an exit event: the program was killed\n"
                        : PREFIX "the report ends without an exit event: the program left "
                                 "without exit() (_exit or exec?)\n",
              out);
    bool odd_lines = false;
    for (size_t i = 0; i < r->n_files; i++)
        odd_lines = odd_lines || ct_file_note_any(&r->files[i]);
    if (odd_lines)
        fputs(PREFIX "some report lines could not be read (cut short or corrupt)\n", out);
    if (f || lost || odd_lines || (p && !p->has_exit)) {
        fputs(PREFIX "the tree: cutaint report ", out);
        put_files(out, o, r);
        fputc('\n', out);
    }
}

void ct_run_summary(FILE *out, const ct_run_request *req, const ct_run_outcome *o)
{
    assert(o->ran && "a summary is of a program that ran");
    ct_report r;
    bool have = load(o, &r);
    const ct_process *p = have ? main_process(&r, o->pid) : NULL;
    ct_counts c = ct_report_counts(&r);
    char counts[256];
    ct_counts_phrase(counts, sizeof counts, &c);
    status_part(out, req, o, p);
    if (r.n_procs > 1)
        fprintf(out, " | %zu processes", r.n_procs);
    if (have)
        fprintf(out, " | %s | context lost: %s | report%s: ", counts, lost_process(&r) ? "YES" : "no",
                r.n_files > 1 ? "s" : "");
    else if (o->report_removed)
        fputs(" | no process reached the CUDA driver: no report kept", out);
    else
        fputs(" | no report to read: ", out);
    if (have)
        put_files(out, o, &r);
    else if (!o->report_removed)
        ct_put_text(out, o->report[0] ? o->report : "(none asked for)", "");
    fputc('\n', out);
    if (have)
        report_lines(out, o, &r, p, &c);
    ct_report_free(&r);
}

bool ct_run_report_refused(const ct_run_outcome *o)
{
    ct_report r;
    bool refused = false;
    if (load(o, &r))
        for (size_t i = 0; i < r.n_procs; i++)
            refused = refused || r.procs[i].read_events > 0 || r.procs[i].exit.failed_reads > 0;
    ct_report_free(&r);
    return refused;
}
