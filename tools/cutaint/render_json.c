/*
 * render_json.c - the merged summary of every report read, as one JSON
 * object on one line (pipe it to jq for people):
 *
 *   {"files":[...], "processes":[{"pid":..,"counts":{..},"failures":[
 *      {..,"skips":[..],"refused_reads":[..]}],"probes":[..],..}],
 *    "totals":{..}}
 *
 * Owns: what the summary's objects hold: each fills its summary_* record's
 * struct from the model (the records of core/schema.def, documented in
 * docs/REPORT.md) and the generated writer (schema_write.h) writes it.
 * Invariants: the output is valid JSON, written by core's one JSON writer
 * (jsonl.h, streamed: the summary has no size limit and nothing in it is
 * cut); no field is ever absent: an optional value missing is null, so
 * consumers need no existence checks.
 */
#include "render.h"

#include "schema_write.h"

#include <assert.h>

static void to_file(void *out, const char *piece, size_t len)
{
    fwrite(piece, 1, len, out);
}

static ct_out_strings strv(const ct_strv *v)
{
    return ct_out_strings_of((const char *const *)v->v, v->n);
}

static ct_dims dims(const int64_t d[3])
{
    return (ct_dims){{d[0], d[1], d[2]}};
}

/* ---- the model -------------------------------------------------------------- */

static void counts(ct_jsonl *j, const void *items, size_t i)
{
    const ct_counts *c = (const ct_counts *)items + i;
    ct_write_summary_counts(j, &(ct_out_summary_counts){.failures = (int64_t)c->failures,
                                                        .occurrences = (int64_t)c->occurrences,
                                                        .skips = (int64_t)c->skips,
                                                        .skipped_copies = (int64_t)c->skipped_copies,
                                                        .skipped_library_calls = (int64_t)c->skipped_calls,
                                                        .retries = (int64_t)c->retries,
                                                        .refused_reads = (int64_t)c->refused_reads,
                                                        .unusable_images = (int64_t)c->unusable_images});
}

static void skip(ct_jsonl *j, const void *items, size_t i)
{
    const ct_skip_group *g = (const ct_skip_group *)items + i;
    ct_write_summary_skip(j, &(ct_out_summary_skip){.api = g->api,
                                                    .kernel = g->kernel,
                                                    .count = (int64_t)g->count,
                                                    .first_launch = g->first_launch,
                                                    .last_launch = g->last_launch,
                                                    .needed = g->needed,
                                                    .produced = g->produced});
}

static void refused_read(ct_jsonl *j, const void *items, size_t i)
{
    const ct_read *rd = (const ct_read *)items + i;
    ct_write_summary_read(j, &(ct_out_summary_read){.api = rd->api,
                                                    .address = rd->address,
                                                    .bytes = rd->bytes,
                                                    .error = rd->error,
                                                    .returned = rd->returned,
                                                    .code = rd->code,
                                                    .poisoned = rd->poisoned,
                                                    .failures = {rd->failures, rd->n_failures},
                                                    .path = strv(&rd->path)});
}

static void failure(ct_jsonl *j, const void *items, size_t i)
{
    const ct_failure *f = (const ct_failure *)items + i;
    ct_write_summary_failure(j, &(ct_out_summary_failure){.nulls =
                                                              (f->has_dims ? 0
                                                                           : CT_FIELD_BIT(summary_failure, grid) |
                                                                                 CT_FIELD_BIT(summary_failure, block)) |
                                                              (f->has_image ? 0 : CT_FIELD_BIT(summary_failure, image)),
                                                          .id = f->id,
                                                          .described = f->described,
                                                          .api = f->api,
                                                          .kernel = f->kernel,
                                                          .error = f->error,
                                                          .status = f->status,
                                                          .code = f->code,
                                                          .launch = f->launch,
                                                          .grid = dims(f->grid),
                                                          .block = dims(f->block),
                                                          .stream = f->stream,
                                                          .thread = f->thread,
                                                          .injected = f->injected,
                                                          .occurrences = (int64_t)f->occurrences,
                                                          .last_launch =
                                                              f->last_launch > f->launch ? f->last_launch : f->launch,
                                                          .repro = f->repro,
                                                          .backtrace = strv(&f->backtrace),
                                                          .image = f->image,
                                                          .retries = (int64_t)f->retries,
                                                          .retry_launch = f->retry_launch,
                                                          .skips = {f->skips, f->n_skips, skip},
                                                          .refused_reads = {f->reads, f->n_reads, refused_read}});
}

static void probe(ct_jsonl *j, const void *items, size_t i)
{
    const ct_probe *pr = (const ct_probe *)items + i;
    ct_write_summary_probe(j, &(ct_out_summary_probe){.after = pr->after,
                                                      .error = pr->error,
                                                      .result = pr->result,
                                                      .verdict = pr->verdict});
}

static void image(ct_jsonl *j, const void *items, size_t i)
{
    const ct_image_note *im = (const ct_image_note *)items + i;
    ct_write_summary_image(j, &(ct_out_summary_image){.api = im->api,
                                                      .error = im->error,
                                                      .address = im->address,
                                                      .path = im->path,
                                                      .kernel = im->kernel,
                                                      .form = im->form,
                                                      .status = im->status,
                                                      .holds = strv(&im->holds),
                                                      .kernels = strv(&im->kernels),
                                                      .kernels_total = im->kernels_total,
                                                      .device = im->device,
                                                      .device_cc = im->device_cc,
                                                      .fit = im->fit,
                                                      .why = im->why,
                                                      .number = im->number,
                                                      .stand_in = im->stand_in});
}

static void suspect(ct_jsonl *j, const void *items, size_t i)
{
    const ct_suspect *s = (const ct_suspect *)items + i;
    ct_write_summary_suspect(j,
                             &(ct_out_summary_suspect){.nulls = s->has_dims ? 0
                                                                            : CT_FIELD_BIT(summary_suspect, grid) |
                                                                                  CT_FIELD_BIT(summary_suspect, block),
                                                       .api = s->api,
                                                       .kernel = s->kernel,
                                                       .graph = s->graph,
                                                       .launch = s->launch,
                                                       .stream = s->stream,
                                                       .grid = dims(s->grid),
                                                       .block = dims(s->block),
                                                       .thread = s->thread,
                                                       .prime = s->prime,
                                                       .repro = s->repro});
}

static void exit_event(ct_jsonl *j, const void *items, size_t i)
{
    const ct_exit *e = (const ct_exit *)items + i;
    ct_write_summary_exit(j, &(ct_out_summary_exit){.status = e->status, .program_status = e->program_status});
}

static void process(ct_jsonl *j, const void *items, size_t i)
{
    const ct_process *p = (const ct_process *)items + i;
    ct_counts c = ct_process_counts(p);
    ct_write_summary_process(j,
                             &(ct_out_summary_process){.nulls = (p->has_driver
                                                                     ? 0
                                                                     : CT_FIELD_BIT(summary_process, driver_version)) |
                                                                (p->has_exit ? 0 : CT_FIELD_BIT(summary_process, exit)),
                                                       .pid = p->pid,
                                                       .report = p->file,
                                                       .argv = strv(&p->argv),
                                                       .driver_version = p->driver_version,
                                                       .cutaint_version = p->cutaint_version,
                                                       .complete = p->has_exit,
                                                       .exit = {&p->exit, 1, exit_event},
                                                       .context_lost = p->context_lost,
                                                       .context_lost_reason = p->lost_reason,
                                                       .context_lost_simulated = p->lost_simulated,
                                                       .context_lost_suspects = {p->suspects, p->n_suspects, suspect},
                                                       .context_lost_suspects_total = (int64_t)p->suspects_total,
                                                       .counts = {&c, 1, counts},
                                                       .failures = {p->failures, p->n_failures, failure},
                                                       .probes = {p->probes, p->n_probes, probe},
                                                       .images = {p->images, p->n_images, image}});
}

static void file_note(ct_jsonl *j, const void *items, size_t i)
{
    const ct_file_note *n = (const ct_file_note *)items + i;
    ct_write_summary_file(j, &(ct_out_summary_file){.path = n->path,
                                                    .lines = (int64_t)n->lines,
                                                    .corrupt = (int64_t)n->corrupt.count,
                                                    .malformed = (int64_t)n->malformed.count,
                                                    .too_long = (int64_t)n->too_long.count,
                                                    .unknown_events = (int64_t)n->unknown,
                                                    .truncated = n->truncated,
                                                    .newer_format = n->newer_format});
}

static void totals(ct_jsonl *j, const void *items, size_t i)
{
    const ct_report *r = (const ct_report *)items + i;
    int64_t lost = 0;
    for (size_t k = 0; k < r->n_procs; k++)
        lost += r->procs[k].context_lost;
    ct_write_summary_totals(j, &(ct_out_summary_totals){.processes = (int64_t)r->n_procs, .contexts_lost = lost});
}

void ct_render_json(FILE *out, const ct_report *r)
{
    char buf[4096];
    ct_jsonl j;
    ct_counts total = ct_report_counts(r);
    ct_jsonl_begin_stream(&j, buf, sizeof buf, to_file, out);
    ct_write_summary(&j, &(ct_out_summary){.files = {r->files, r->n_files, file_note},
                                           .processes = {r->procs, r->n_procs, process},
                                           .totals = {r, 1, totals},
                                           .counts = {&total, 1, counts}});
    assert(!j.full && "a streamed summary is never cut");
    ct_jsonl_end(&j);
}
