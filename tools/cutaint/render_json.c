/*
 * render_json.c - the merged summary of every report read, as one JSON
 * object on one line (pipe it to jq for people):
 *
 *   {"files":[...], "processes":[{"pid":..,"counts":{..},"failures":[
 *      {..,"skips":[..],"refused_reads":[..]}],"probes":[..],..}],
 *    "totals":{..}}
 *
 * Owns: the summary's schema (documented in README.md).  Invariants: the
 * output is valid JSON, written by core's one JSON writer (jsonl.h,
 * streamed: the summary has no size limit and nothing in it is cut); keys
 * are fixed literals; absent optional values are null, never missing, so
 * consumers need no existence checks.
 */
#include "render.h"

#include "jsonl.h"

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
    ct_jsonl_uint(j, "failures", c->failures);
    ct_jsonl_uint(j, "occurrences", c->occurrences);
    ct_jsonl_uint(j, "skips", c->skips);
    ct_jsonl_uint(j, "skipped_copies", c->skipped_copies);
    ct_jsonl_uint(j, "refused_reads", c->refused_reads);
    ct_jsonl_close(j);
}

static void skip(ct_jsonl *j, const ct_skip_group *g)
{
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_str(j, "api", g->api);
    ct_jsonl_str(j, "kernel", g->kernel);
    ct_jsonl_uint(j, "count", g->count);
    ct_jsonl_int(j, "first_launch", g->first_launch);
    ct_jsonl_int(j, "last_launch", g->last_launch);
    ct_jsonl_str(j, "needed", g->needed);
    ct_jsonl_int(j, "produced", g->produced);
    ct_jsonl_close(j);
}

static void refused_read(ct_jsonl *j, const ct_read *rd)
{
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_str(j, "api", rd->api);
    ct_jsonl_str(j, "address", rd->address);
    ct_jsonl_int(j, "bytes", rd->bytes);
    ct_jsonl_str(j, "error", rd->error);
    ct_jsonl_str(j, "returned", rd->returned);
    ct_jsonl_int(j, "code", rd->code);
    ct_jsonl_bool(j, "poisoned", rd->poisoned);
    ct_jsonl_open_array(j, "failures");
    for (size_t i = 0; i < rd->n_failures; i++)
        ct_jsonl_int(j, NULL, rd->failures[i]);
    ct_jsonl_close(j);
    strv(j, "path", &rd->path);
    ct_jsonl_close(j);
}

static void failure(ct_jsonl *j, const ct_failure *f)
{
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_int(j, "id", f->id);
    ct_jsonl_bool(j, "described", f->described);
    ct_jsonl_str(j, "api", f->api);
    ct_jsonl_str(j, "kernel", f->kernel);
    ct_jsonl_str(j, "error", f->error);
    ct_jsonl_int(j, "code", f->code);
    ct_jsonl_int(j, "launch", f->launch);
    dims(j, "grid", f->has_dims, f->grid);
    dims(j, "block", f->has_dims, f->block);
    ct_jsonl_str(j, "stream", f->stream);
    ct_jsonl_int(j, "thread", f->thread);
    ct_jsonl_bool(j, "injected", f->injected);
    ct_jsonl_uint(j, "occurrences", f->occurrences);
    ct_jsonl_int(j, "last_launch", f->last_launch > f->launch ? f->last_launch : f->launch);
    ct_jsonl_str(j, "repro", f->repro);
    strv(j, "backtrace", &f->backtrace);
    ct_jsonl_open_array(j, "skips");
    for (size_t i = 0; i < f->n_skips; i++)
        skip(j, &f->skips[i]);
    ct_jsonl_close(j);
    ct_jsonl_open_array(j, "refused_reads");
    for (size_t i = 0; i < f->n_reads; i++)
        refused_read(j, &f->reads[i]);
    ct_jsonl_close(j);
    ct_jsonl_close(j);
}

static void probe(ct_jsonl *j, const ct_probe *pr)
{
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_str(j, "after", pr->after);
    ct_jsonl_str(j, "error", pr->error);
    ct_jsonl_str(j, "result", pr->result);
    ct_jsonl_str(j, "verdict", pr->verdict);
    ct_jsonl_close(j);
}

static void exit_event(ct_jsonl *j, const ct_process *p)
{
    const char *key = "exit";
    if (!p->has_exit) {
        ct_jsonl_null(j, key);
        return;
    }
    ct_jsonl_open_object(j, key);
    ct_jsonl_int(j, "status", p->exit.status);
    ct_jsonl_int(j, "program_status", p->exit.program_status);
    ct_jsonl_close(j);
}

static void process(ct_jsonl *j, const ct_process *p)
{
    ct_counts c = ct_process_counts(p);
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_int(j, "pid", p->pid);
    ct_jsonl_str(j, "report", p->file);
    strv(j, "argv", &p->argv);
    if (p->has_driver)
        ct_jsonl_int(j, "driver_version", p->driver_version);
    else
        ct_jsonl_null(j, "driver_version");
    ct_jsonl_str(j, "cutaint_version", p->cutaint_version);
    ct_jsonl_bool(j, "complete", p->has_exit);
    exit_event(j, p);
    ct_jsonl_bool(j, "context_lost", p->context_lost);
    ct_jsonl_str(j, "context_lost_reason", p->lost_reason);
    ct_jsonl_bool(j, "context_lost_simulated", p->lost_simulated);
    counts(j, "counts", &c);
    ct_jsonl_open_array(j, "failures");
    for (size_t i = 0; i < p->n_failures; i++)
        failure(j, &p->failures[i]);
    ct_jsonl_close(j);
    ct_jsonl_open_array(j, "probes");
    for (size_t i = 0; i < p->n_probes; i++)
        probe(j, &p->probes[i]);
    ct_jsonl_close(j);
    ct_jsonl_close(j);
}

static void file_note(ct_jsonl *j, const ct_file_note *n)
{
    ct_jsonl_open_object(j, NULL);
    ct_jsonl_str(j, "path", n->path);
    ct_jsonl_uint(j, "lines", n->lines);
    ct_jsonl_uint(j, "corrupt", n->corrupt.count);
    ct_jsonl_uint(j, "malformed", n->malformed.count);
    ct_jsonl_uint(j, "too_long", n->too_long.count);
    ct_jsonl_uint(j, "unknown_events", n->unknown);
    ct_jsonl_bool(j, "truncated", n->truncated);
    ct_jsonl_int(j, "newer_format", n->newer_format);
    ct_jsonl_close(j);
}

void ct_render_json(FILE *out, const ct_report *r)
{
    char buf[4096];
    ct_jsonl j;
    size_t lost = 0;
    ct_counts total = ct_report_counts(r);
    ct_jsonl_begin_stream(&j, buf, sizeof buf, to_file, out);
    ct_jsonl_open_array(&j, "files");
    for (size_t i = 0; i < r->n_files; i++)
        file_note(&j, &r->files[i]);
    ct_jsonl_close(&j);
    ct_jsonl_open_array(&j, "processes");
    for (size_t i = 0; i < r->n_procs; i++) {
        process(&j, &r->procs[i]);
        lost += r->procs[i].context_lost;
    }
    ct_jsonl_close(&j);
    ct_jsonl_open_object(&j, "totals");
    ct_jsonl_uint(&j, "processes", r->n_procs);
    ct_jsonl_uint(&j, "contexts_lost", lost);
    ct_jsonl_close(&j);
    counts(&j, "counts", &total);
    ct_jsonl_end(&j);
}
