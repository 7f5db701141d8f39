/*
 * render_json.c - the merged summary of every report read, as one JSON
 * object on one line (pipe it to jq for people):
 *
 *   {"files":[...], "processes":[{"pid":..,"counts":{..},"failures":[
 *      {..,"skips":[..],"refused_reads":[..]}],"probes":[..],..}],
 *    "totals":{..}}
 *
 * Owns: writing the summary's objects (their fields are the summary_*
 * records of core/schema.def, documented in docs/REPORT.md).  Invariants:
 * the output is valid JSON, written by core's one JSON writer (jsonl.h,
 * streamed: the summary has no size limit and nothing in it is cut); keys
 * are the table's (CT_KEY); absent optional values are null, never
 * missing, so consumers need no existence checks.
 */
#include "render.h"

#include "jsonl.h"
#include "schema.h"

#include <inttypes.h>

static void to_file(void *out, const char *piece, size_t len)
{
    fwrite(piece, 1, len, out);
}

static void strv(ct_jsonl *j, const char *key, const ct_strv *v)
{
    ct_jsonl_open_array(j, key);
    for (size_t i = 0; i < v->n; i++)
        ct_jsonl_str(j, NULL, v->v[i]);
    ct_jsonl_close(j);
}

static void dims(ct_jsonl *j, const char *key, bool has, const int64_t d[3])
{
    if (!has) {
        ct_jsonl_null(j, key);
        return;
    }
    ct_jsonl_open_array(j, key);
    for (int i = 0; i < 3; i++)
        ct_jsonl_int(j, NULL, d[i]);
    ct_jsonl_close(j);
}

/* ---- the model -------------------------------------------------------------- */

static void counts(ct_jsonl *j, const char *key, const ct_counts *c)
{
    ct_jsonl_open_object(j, key);
    ct_jsonl_uint(j, CT_KEY(summary_counts, failures, INT), c->failures);
    ct_jsonl_uint(j, CT_KEY(summary_counts, occurrences, INT), c->occurrences);
    ct_jsonl_uint(j, CT_KEY(summary_counts, skips, INT), c->skips);
    ct_jsonl_uint(j, CT_KEY(summary_counts, skipped_copies, INT), c->skipped_copies);
    ct_jsonl_uint(j, CT_KEY(summary_counts, retries, INT), c->retries);
    ct_jsonl_uint(j, CT_KEY(summary_counts, refused_reads, INT), c->refused_reads);
    ct_jsonl_uint(j, CT_KEY(summary_counts, unusable_images, INT), c->unusable_images);
    ct_jsonl_close(j);
}

static void skip(ct_jsonl *j, const ct_skip_group *g)
{
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_str(j, CT_KEY(summary_skip, api, STR), g->api);
    ct_jsonl_str(j, CT_KEY(summary_skip, kernel, STR), g->kernel);
    ct_jsonl_uint(j, CT_KEY(summary_skip, count, INT), g->count);
    ct_jsonl_int(j, CT_KEY(summary_skip, first_launch, INT), g->first_launch);
    ct_jsonl_int(j, CT_KEY(summary_skip, last_launch, INT), g->last_launch);
    ct_jsonl_str(j, CT_KEY(summary_skip, needed, STR), g->needed);
    ct_jsonl_int(j, CT_KEY(summary_skip, produced, INT), g->produced);
    ct_jsonl_close(j);
}

static void refused_read(ct_jsonl *j, const ct_read *rd)
{
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_str(j, CT_KEY(summary_read, api, STR), rd->api);
    ct_jsonl_str(j, CT_KEY(summary_read, address, STR), rd->address);
    ct_jsonl_int(j, CT_KEY(summary_read, bytes, INT), rd->bytes);
    ct_jsonl_str(j, CT_KEY(summary_read, error, STR), rd->error);
    ct_jsonl_str(j, CT_KEY(summary_read, returned, STR), rd->returned);
    ct_jsonl_int(j, CT_KEY(summary_read, code, INT), rd->code);
    ct_jsonl_bool(j, CT_KEY(summary_read, poisoned, BOOL), rd->poisoned);
    ct_jsonl_open_array(j, CT_KEY(summary_read, failures, INTS));
    for (size_t i = 0; i < rd->n_failures; i++)
        ct_jsonl_int(j, NULL, rd->failures[i]);
    ct_jsonl_close(j);
    strv(j, CT_KEY(summary_read, path, STRS), &rd->path);
    ct_jsonl_close(j);
}

static void failure(ct_jsonl *j, const ct_failure *f)
{
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_int(j, CT_KEY(summary_failure, id, INT), f->id);
    ct_jsonl_bool(j, CT_KEY(summary_failure, described, BOOL), f->described);
    ct_jsonl_str(j, CT_KEY(summary_failure, api, STR), f->api);
    ct_jsonl_str(j, CT_KEY(summary_failure, kernel, STR), f->kernel);
    ct_jsonl_str(j, CT_KEY(summary_failure, error, STR), f->error);
    ct_jsonl_int(j, CT_KEY(summary_failure, code, INT), f->code);
    ct_jsonl_int(j, CT_KEY(summary_failure, launch, INT), f->launch);
    dims(j, CT_KEY(summary_failure, grid, DIMS), f->has_dims, f->grid);
    dims(j, CT_KEY(summary_failure, block, DIMS), f->has_dims, f->block);
    ct_jsonl_str(j, CT_KEY(summary_failure, stream, STR), f->stream);
    ct_jsonl_int(j, CT_KEY(summary_failure, thread, INT), f->thread);
    ct_jsonl_bool(j, CT_KEY(summary_failure, injected, BOOL), f->injected);
    ct_jsonl_uint(j, CT_KEY(summary_failure, occurrences, INT), f->occurrences);
    ct_jsonl_int(j, CT_KEY(summary_failure, last_launch, INT), f->last_launch > f->launch ? f->last_launch : f->launch);
    ct_jsonl_str(j, CT_KEY(summary_failure, repro, STR), f->repro);
    strv(j, CT_KEY(summary_failure, backtrace, STRS), &f->backtrace);
    if (f->has_image)
        ct_jsonl_int(j, CT_KEY(summary_failure, image, INT), f->image);
    else
        ct_jsonl_null(j, CT_KEY(summary_failure, image, INT));
    ct_jsonl_uint(j, CT_KEY(summary_failure, retries, INT), f->retries);
    ct_jsonl_int(j, CT_KEY(summary_failure, retry_launch, INT), f->retry_launch);
    ct_jsonl_open_array(j, CT_KEY(summary_failure, skips, OBJS));
    for (size_t i = 0; i < f->n_skips; i++)
        skip(j, &f->skips[i]);
    ct_jsonl_close(j);
    ct_jsonl_open_array(j, CT_KEY(summary_failure, refused_reads, OBJS));
    for (size_t i = 0; i < f->n_reads; i++)
        refused_read(j, &f->reads[i]);
    ct_jsonl_close(j);
    ct_jsonl_close(j);
}

static void probe(ct_jsonl *j, const ct_probe *pr)
{
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_str(j, CT_KEY(summary_probe, after, STR), pr->after);
    ct_jsonl_str(j, CT_KEY(summary_probe, error, STR), pr->error);
    ct_jsonl_str(j, CT_KEY(summary_probe, result, STR), pr->result);
    ct_jsonl_str(j, CT_KEY(summary_probe, verdict, STR), pr->verdict);
    ct_jsonl_close(j);
}

static void image(ct_jsonl *j, const ct_image_note *im)
{
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_str(j, CT_KEY(summary_image, api, STR), im->api);
    ct_jsonl_str(j, CT_KEY(summary_image, error, STR), im->error);
    ct_jsonl_str(j, CT_KEY(summary_image, address, STR), im->address);
    ct_jsonl_str(j, CT_KEY(summary_image, path, STR), im->path);
    ct_jsonl_str(j, CT_KEY(summary_image, kernel, STR), im->kernel);
    ct_jsonl_str(j, CT_KEY(summary_image, form, STR), im->form);
    ct_jsonl_str(j, CT_KEY(summary_image, status, STR), im->status);
    strv(j, CT_KEY(summary_image, holds, STRS), &im->holds);
    strv(j, CT_KEY(summary_image, kernels, STRS), &im->kernels);
    ct_jsonl_int(j, CT_KEY(summary_image, kernels_total, INT), im->kernels_total);
    ct_jsonl_str(j, CT_KEY(summary_image, device, STR), im->device);
    ct_jsonl_str(j, CT_KEY(summary_image, device_cc, STR), im->device_cc);
    ct_jsonl_str(j, CT_KEY(summary_image, fit, STR), im->fit);
    ct_jsonl_str(j, CT_KEY(summary_image, why, STR), im->why);
    ct_jsonl_int(j, CT_KEY(summary_image, number, INT), im->number);
    ct_jsonl_bool(j, CT_KEY(summary_image, stand_in, BOOL), im->stand_in);
    ct_jsonl_close(j);
}

static void suspect(ct_jsonl *j, const ct_suspect *s)
{
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_str(j, CT_KEY(summary_suspect, api, STR), s->api);
    ct_jsonl_str(j, CT_KEY(summary_suspect, kernel, STR), s->kernel);
    ct_jsonl_str(j, CT_KEY(summary_suspect, graph, STR), s->graph);
    ct_jsonl_int(j, CT_KEY(summary_suspect, launch, INT), s->launch);
    ct_jsonl_str(j, CT_KEY(summary_suspect, stream, STR), s->stream);
    dims(j, CT_KEY(summary_suspect, grid, DIMS), s->has_dims, s->grid);
    dims(j, CT_KEY(summary_suspect, block, DIMS), s->has_dims, s->block);
    ct_jsonl_int(j, CT_KEY(summary_suspect, thread, INT), s->thread);
    ct_jsonl_bool(j, CT_KEY(summary_suspect, prime, BOOL), s->prime);
    ct_jsonl_str(j, CT_KEY(summary_suspect, repro, STR), s->repro);
    ct_jsonl_close(j);
}

static void exit_event(ct_jsonl *j, const ct_process *p)
{
    const char *key = CT_KEY(summary_process, exit, OBJ);
    if (!p->has_exit) {
        ct_jsonl_null(j, key);
        return;
    }
    ct_jsonl_open_object(j, key);
    ct_jsonl_int(j, CT_KEY(summary_exit, status, INT), p->exit.status);
    ct_jsonl_int(j, CT_KEY(summary_exit, program_status, INT), p->exit.program_status);
    ct_jsonl_close(j);
}

static void process(ct_jsonl *j, const ct_process *p)
{
    ct_counts c = ct_process_counts(p);
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_int(j, CT_KEY(summary_process, pid, INT), p->pid);
    ct_jsonl_str(j, CT_KEY(summary_process, report, STR), p->file);
    strv(j, CT_KEY(summary_process, argv, STRS), &p->argv);
    if (p->has_driver)
        ct_jsonl_int(j, CT_KEY(summary_process, driver_version, INT), p->driver_version);
    else
        ct_jsonl_null(j, CT_KEY(summary_process, driver_version, INT));
    ct_jsonl_str(j, CT_KEY(summary_process, cutaint_version, STR), p->cutaint_version);
    ct_jsonl_bool(j, CT_KEY(summary_process, complete, BOOL), p->has_exit);
    exit_event(j, p);
    ct_jsonl_bool(j, CT_KEY(summary_process, context_lost, BOOL), p->context_lost);
    ct_jsonl_str(j, CT_KEY(summary_process, context_lost_reason, STR), p->lost_reason);
    ct_jsonl_bool(j, CT_KEY(summary_process, context_lost_simulated, BOOL), p->lost_simulated);
    ct_jsonl_open_array(j, CT_KEY(summary_process, context_lost_suspects, OBJS));
    for (size_t i = 0; i < p->n_suspects; i++)
        suspect(j, &p->suspects[i]);
    ct_jsonl_close(j);
    ct_jsonl_uint(j, CT_KEY(summary_process, context_lost_suspects_total, INT), p->suspects_total);
    counts(j, CT_KEY(summary_process, counts, OBJ), &c);
    ct_jsonl_open_array(j, CT_KEY(summary_process, failures, OBJS));
    for (size_t i = 0; i < p->n_failures; i++)
        failure(j, &p->failures[i]);
    ct_jsonl_close(j);
    ct_jsonl_open_array(j, CT_KEY(summary_process, probes, OBJS));
    for (size_t i = 0; i < p->n_probes; i++)
        probe(j, &p->probes[i]);
    ct_jsonl_close(j);
    ct_jsonl_open_array(j, CT_KEY(summary_process, images, OBJS));
    for (size_t i = 0; i < p->n_images; i++)
        image(j, &p->images[i]);
    ct_jsonl_close(j);
    ct_jsonl_close(j);
}

static void file_note(ct_jsonl *j, const ct_file_note *n)
{
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_str(j, CT_KEY(summary_file, path, STR), n->path);
    ct_jsonl_uint(j, CT_KEY(summary_file, lines, INT), n->lines);
    ct_jsonl_uint(j, CT_KEY(summary_file, corrupt, INT), n->corrupt.count);
    ct_jsonl_uint(j, CT_KEY(summary_file, malformed, INT), n->malformed.count);
    ct_jsonl_uint(j, CT_KEY(summary_file, too_long, INT), n->too_long.count);
    ct_jsonl_uint(j, CT_KEY(summary_file, unknown_events, INT), n->unknown);
    ct_jsonl_bool(j, CT_KEY(summary_file, truncated, BOOL), n->truncated);
    ct_jsonl_int(j, CT_KEY(summary_file, newer_format, INT), n->newer_format);
    ct_jsonl_close(j);
}

void ct_render_json(FILE *out, const ct_report *r)
{
    char buf[4096];
    ct_jsonl j;
    size_t lost = 0;
    ct_counts total = ct_report_counts(r);
    ct_jsonl_begin_stream(&j, buf, sizeof buf, to_file, out);
    ct_jsonl_open_array(&j, CT_KEY(summary, files, OBJS));
    for (size_t i = 0; i < r->n_files; i++)
        file_note(&j, &r->files[i]);
    ct_jsonl_close(&j);
    ct_jsonl_open_array(&j, CT_KEY(summary, processes, OBJS));
    for (size_t i = 0; i < r->n_procs; i++) {
        process(&j, &r->procs[i]);
        lost += r->procs[i].context_lost;
    }
    ct_jsonl_close(&j);
    ct_jsonl_open_object(&j, CT_KEY(summary, totals, OBJ));
    ct_jsonl_uint(&j, CT_KEY(summary_totals, processes, INT), r->n_procs);
    ct_jsonl_uint(&j, CT_KEY(summary_totals, contexts_lost, INT), lost);
    ct_jsonl_close(&j);
    counts(&j, CT_KEY(summary, counts, OBJ), &total);
    ct_jsonl_end(&j);
}
