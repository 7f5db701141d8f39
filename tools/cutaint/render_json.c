/*
 * render_json.c - the merged summary of every report read, as one JSON
 * object on one line (pipe it to jq for people):
 *
 *   {"files":[...], "processes":[{"pid":..,"counts":{..},"failures":[
 *      {..,"skips":[..],"refused_reads":[..]}],"probes":[..],..}],
 *    "totals":{..}}
 *
 * Owns: the summary's schema (documented in README.md).  Invariants: the
 * output is valid JSON (strings through ct_put_json); keys are fixed
 * literals; absent optional values are null, never missing, so consumers
 * need no existence checks.
 */
#include "render.h"

#include "textout.h"

#include <inttypes.h>

/* A tiny writer: tracks whether a comma is due at each depth. */
#define JW_DEPTH 12 /* the summary nests 8 deep */

typedef struct jw {
    FILE *out;
    int depth;
    bool first[JW_DEPTH];
} jw;

static void jw_key(jw *w, const char *key)
{
    if (!w->first[w->depth])
        fputc(',', w->out);
    w->first[w->depth] = false;
    if (key)
        fprintf(w->out, "\"%s\":", key);
}

static void jw_open(jw *w, const char *key, char bracket)
{
    jw_key(w, key);
    fputc(bracket, w->out);
    w->first[++w->depth] = true;
}

static void jw_close(jw *w, char bracket)
{
    w->depth--;
    fputc(bracket, w->out);
}

static void jw_str(jw *w, const char *key, const char *value)
{
    jw_key(w, key);
    ct_put_json(w->out, value);
}

static void jw_int(jw *w, const char *key, int64_t value)
{
    jw_key(w, key);
    fprintf(w->out, "%" PRId64, value);
}

static void jw_uint(jw *w, const char *key, uint64_t value)
{
    jw_key(w, key);
    fprintf(w->out, "%" PRIu64, value);
}

static void jw_bool(jw *w, const char *key, bool value)
{
    jw_key(w, key);
    fputs(value ? "true" : "false", w->out);
}

static void jw_null(jw *w, const char *key)
{
    jw_key(w, key);
    fputs("null", w->out);
}

static void jw_strv(jw *w, const char *key, const ct_strv *v)
{
    jw_open(w, key, '[');
    for (size_t i = 0; i < v->n; i++)
        jw_str(w, NULL, v->v[i]);
    jw_close(w, ']');
}

static void jw_dims(jw *w, const char *key, bool has, const int64_t d[3])
{
    if (!has) {
        jw_null(w, key);
        return;
    }
    jw_open(w, key, '[');
    for (int i = 0; i < 3; i++)
        jw_int(w, NULL, d[i]);
    jw_close(w, ']');
}

/* ---- the model -------------------------------------------------------------- */

static void counts(jw *w, const char *key, const ct_counts *c)
{
    jw_open(w, key, '{');
    jw_uint(w, "failures", c->failures);
    jw_uint(w, "occurrences", c->occurrences);
    jw_uint(w, "skips", c->skips);
    jw_uint(w, "skipped_copies", c->skipped_copies);
    jw_uint(w, "refused_reads", c->refused_reads);
    jw_close(w, '}');
}

static void skip(jw *w, const ct_skip_group *g)
{
    jw_open(w, NULL, '{');
    jw_str(w, "api", g->api);
    jw_str(w, "kernel", g->kernel);
    jw_uint(w, "count", g->count);
    jw_int(w, "first_launch", g->first_launch);
    jw_int(w, "last_launch", g->last_launch);
    jw_str(w, "needed", g->needed);
    jw_int(w, "produced", g->produced);
    jw_close(w, '}');
}

static void refused_read(jw *w, const ct_read *rd)
{
    jw_open(w, NULL, '{');
    jw_str(w, "api", rd->api);
    jw_str(w, "address", rd->address);
    jw_int(w, "bytes", rd->bytes);
    jw_str(w, "error", rd->error);
    jw_str(w, "returned", rd->returned);
    jw_int(w, "code", rd->code);
    jw_bool(w, "poisoned", rd->poisoned);
    jw_open(w, "failures", '[');
    for (size_t i = 0; i < rd->n_failures; i++)
        jw_int(w, NULL, rd->failures[i]);
    jw_close(w, ']');
    jw_strv(w, "path", &rd->path);
    jw_close(w, '}');
}

static void failure(jw *w, const ct_failure *f)
{
    jw_open(w, NULL, '{');
    jw_int(w, "id", f->id);
    jw_bool(w, "described", f->described);
    jw_str(w, "api", f->api);
    jw_str(w, "kernel", f->kernel);
    jw_str(w, "error", f->error);
    jw_int(w, "code", f->code);
    jw_int(w, "launch", f->launch);
    jw_dims(w, "grid", f->has_dims, f->grid);
    jw_dims(w, "block", f->has_dims, f->block);
    jw_str(w, "stream", f->stream);
    jw_int(w, "thread", f->thread);
    jw_bool(w, "injected", f->injected);
    jw_uint(w, "occurrences", f->occurrences);
    jw_int(w, "last_launch", f->last_launch > f->launch ? f->last_launch : f->launch);
    jw_str(w, "repro", f->repro);
    jw_strv(w, "backtrace", &f->backtrace);
    jw_open(w, "skips", '[');
    for (size_t i = 0; i < f->n_skips; i++)
        skip(w, &f->skips[i]);
    jw_close(w, ']');
    jw_open(w, "refused_reads", '[');
    for (size_t i = 0; i < f->n_reads; i++)
        refused_read(w, &f->reads[i]);
    jw_close(w, ']');
    jw_close(w, '}');
}

static void probe(jw *w, const ct_probe *pr)
{
    jw_open(w, NULL, '{');
    jw_str(w, "after", pr->after);
    jw_str(w, "error", pr->error);
    jw_str(w, "result", pr->result);
    jw_str(w, "verdict", pr->verdict);
    jw_close(w, '}');
}

static void exit_event(jw *w, const ct_process *p)
{
    if (!p->has_exit) {
        jw_null(w, "exit");
        return;
    }
    jw_open(w, "exit", '{');
    jw_int(w, "status", p->exit.status);
    jw_int(w, "program_status", p->exit.program_status);
    jw_close(w, '}');
}

static void process(jw *w, const ct_process *p)
{
    ct_counts c = ct_process_counts(p);
    jw_open(w, NULL, '{');
    jw_int(w, "pid", p->pid);
    jw_str(w, "report", p->file);
    jw_strv(w, "argv", &p->argv);
    if (p->has_driver)
        jw_int(w, "driver_version", p->driver_version);
    else
        jw_null(w, "driver_version");
    jw_str(w, "cutaint_version", p->cutaint_version);
    jw_bool(w, "complete", p->has_exit);
    exit_event(w, p);
    jw_bool(w, "context_lost", p->context_lost);
    jw_str(w, "context_lost_reason", p->lost_reason);
    jw_bool(w, "context_lost_simulated", p->lost_simulated);
    counts(w, "counts", &c);
    jw_open(w, "failures", '[');
    for (size_t i = 0; i < p->n_failures; i++)
        failure(w, &p->failures[i]);
    jw_close(w, ']');
    jw_open(w, "probes", '[');
    for (size_t i = 0; i < p->n_probes; i++)
        probe(w, &p->probes[i]);
    jw_close(w, ']');
    jw_close(w, '}');
}

static void file_note(jw *w, const ct_file_note *n)
{
    jw_open(w, NULL, '{');
    jw_str(w, "path", n->path);
    jw_uint(w, "lines", n->lines);
    jw_uint(w, "corrupt", n->corrupt.count);
    jw_uint(w, "malformed", n->malformed.count);
    jw_uint(w, "too_long", n->too_long.count);
    jw_uint(w, "unknown_events", n->unknown);
    jw_bool(w, "truncated", n->truncated);
    jw_int(w, "newer_format", n->newer_format);
    jw_close(w, '}');
}

void ct_render_json(FILE *out, const ct_report *r)
{
    jw w = { .out = out, .first = { true } };
    size_t lost = 0;
    ct_counts total = ct_report_counts(r);
    jw_open(&w, NULL, '{');
    jw_open(&w, "files", '[');
    for (size_t i = 0; i < r->n_files; i++)
        file_note(&w, &r->files[i]);
    jw_close(&w, ']');
    jw_open(&w, "processes", '[');
    for (size_t i = 0; i < r->n_procs; i++) {
        process(&w, &r->procs[i]);
        lost += r->procs[i].context_lost;
    }
    jw_close(&w, ']');
    jw_open(&w, "totals", '{');
    jw_uint(&w, "processes", r->n_procs);
    jw_uint(&w, "contexts_lost", lost);
    jw_close(&w, '}');
    counts(&w, "counts", &total);
    jw_close(&w, '}');
    fputc('\n', out);
}
