/*
 * report.c - reads cutaint JSON Lines reports into the model of report.h.
 *
 * Owns: the bounded line reader, the event table (one handler per event
 * name: it reads its record with the generated reader, schema_read.h, and
 * keeps what the model holds), the folding of skips and refused reads into
 * their groups, and the model's memory.  Invariants: see report.h; in
 * particular a line is held only up to CT_REPORT_LINE_MAX bytes, a bad line
 * changes nothing but the file's counters (a whole event glued after a
 * damaged line's fragment is read: glued_tail), and values of the wrong
 * JSON type read as absent instead of failing the line (a reader that
 * rejects a whole event over one odd field would hide the failure it
 * describes).
 */
#include "report.h"

#include "jsonr.h"
#include "util.h"
#include "jsonl.h"
#include "schema_read.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 65536

/* ---- bounded line reader -------------------------------------------- */

typedef struct line_reader {
    FILE *f;
    char chunk[CHUNK];
    size_t pos, len;
    bool eof;
    int err;
    char *line; /* the current line, NUL-terminated */
    size_t n, cap;
    bool too_long; /* the current line was cut off: skip it */
    bool newline;  /* the current line ended with '\n' */
    char *tail;    /* a copy of a glued line's last event (glued_tail) */
    size_t tail_cap;
} line_reader;

static void line_append(line_reader *lr, const char *p, size_t n)
{
    if (lr->too_long)
        return;
    if (lr->n + n > CT_REPORT_LINE_MAX) {
        lr->too_long = true;
        lr->n = 0;
        return;
    }
    if (lr->n + n + 1 > lr->cap) {
        size_t cap = lr->cap ? lr->cap : 256;
        while (cap < lr->n + n + 1)
            cap *= 2;
        char *grown = realloc(lr->line, cap);
        if (!grown) {
            lr->too_long = true; /* cannot hold it: treat as over-long */
            lr->n = 0;
            return;
        }
        lr->line = grown;
        lr->cap = cap;
    }
    memcpy(lr->line + lr->n, p, n);
    lr->n += n;
    assert(lr->n <= CT_REPORT_LINE_MAX && lr->n < lr->cap && "a line is held up to the limit, with room for its NUL");
}

static bool refill(line_reader *lr)
{
    lr->pos = 0;
    lr->len = fread(lr->chunk, 1, sizeof lr->chunk, lr->f);
    if (lr->len == 0) {
        lr->eof = true;
        if (ferror(lr->f))
            lr->err = errno ? errno : EIO;
    }
    return lr->len > 0;
}

/* The next line (possibly empty) or false at the end of the file. */
static bool next_line(line_reader *lr)
{
    lr->n = 0;
    lr->too_long = false;
    lr->newline = false;
    bool any = false;
    for (;;) {
        if (lr->pos == lr->len && (lr->eof || !refill(lr)))
            break;
        any = true;
        const char *start = lr->chunk + lr->pos;
        const char *nl = memchr(start, '\n', lr->len - lr->pos);
        size_t piece = nl ? (size_t)(nl - start) : lr->len - lr->pos;
        line_append(lr, start, piece);
        lr->pos += piece + (nl != NULL);
        if (nl) {
            lr->newline = true;
            break;
        }
    }
    assert((lr->line || lr->n == 0) && "a held line has its buffer");
    assert((!lr->too_long || lr->n == 0) && "an over-long line is not held");
    if (lr->line)
        lr->line[lr->n] = '\0';
    return any;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

/* ---- what the model keeps of a value ---------------------------------- */

typedef struct event_in {
    const jsonr_doc *doc;
    const jv *obj;
} event_in;

static char *dup_text(ct_text t)
{
    return t.str ? ct_xstrndup(t.str, t.len) : NULL;
}

/* The strings of an array node (NULL: none); other elements are skipped. */
static void get_strv(const jsonr_doc *doc, const jv *arr, ct_strv *out)
{
    for (const jv *e = jsonr_first(doc, arr); e; e = jsonr_next(doc, e))
        if (e->type == JV_STRING)
            *CT_PUSH(out->v, out->n, out->cap) = ct_xstrndup(e->str, e->len);
}

/* Keeps both dims; has: whether both were there (else they are not shown). */
static bool get_dims(bool has, const ct_dims *grid, const ct_dims *block, int64_t g[3], int64_t b[3])
{
    memcpy(g, grid->d, sizeof grid->d);
    memcpy(b, block->d, sizeof block->d);
    return has;
}

/* ---- model lookups ------------------------------------------------------- */

static ct_process *find_process(ct_report *r, long pid)
{
    for (size_t i = r->n_procs; i > 0; i--)
        if (r->procs[i - 1].pid == pid)
            return &r->procs[i - 1];
    return NULL;
}

static ct_process *new_process(ct_report *r, long pid, const char *file)
{
    ct_process *p = CT_PUSH(r->procs, r->n_procs, r->cap_procs);
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->file = file;
    return p;
}

static ct_failure *find_failure(ct_process *p, int64_t id)
{
    for (size_t i = 0; i < p->n_failures; i++)
        if (p->failures[i].id == id)
            return &p->failures[i];
    return NULL;
}

/* The failure with this id, created as an undescribed placeholder if the
 * log has not described it (yet). */
static ct_failure *failure_for(ct_process *p, int64_t id)
{
    ct_failure *f = find_failure(p, id);
    if (f)
        return f;
    f = CT_PUSH(p->failures, p->n_failures, p->cap_failures);
    memset(f, 0, sizeof *f);
    f->id = id;
    f->occurrences = 1;
    f->seq = p->seq;
    return f;
}

/* ---- events -------------------------------------------------------------- */

static void on_start(ct_process *p, const event_in *in)
{
    ct_in_start v;
    ct_read_start(in->doc, in->obj, &v);
    p->has_start = true;
    p->format_version = CT_OR(&v, start, format_version, 1);
    get_strv(in->doc, v.argv, &p->argv);
    p->has_driver = CT_HAS(&v, start, driver_version);
    p->driver_version = v.driver_version;
    p->cutaint_version = dup_text(v.cutaint_version);
}

static void describe_failure(ct_failure *f, const jsonr_doc *doc, const ct_in_failure *v, size_t seq)
{
    f->described = true;
    f->seq = seq;
    f->api = dup_text(v->api);
    f->kernel = dup_text(v->kernel);
    f->error = dup_text(v->error);
    f->status = dup_text(v->status);
    f->code = v->code;
    f->launch = v->launch;
    f->has_dims =
        get_dims(CT_HAS(v, failure, grid) && CT_HAS(v, failure, block), &v->grid, &v->block, f->grid, f->block);
    f->stream = dup_text(v->stream);
    f->thread = v->thread;
    f->injected = v->injected;
    f->repro = dup_text(v->repro);
    get_strv(doc, v->backtrace, &f->backtrace);
    f->has_image = CT_HAS(v, failure, image); /* null or absent: none */
    f->image = v->image;
}

/* The facts of a pool event, or of a failure's own pool object. */
static void read_pool(ct_failure *f, const ct_in_pool *v)
{
    f->pool = true;
    f->pool_size = v->size;
    f->pool_covered = v->covered;
    f->pool_pointers = v->pointers;
}

static void on_failure(ct_process *p, const event_in *in)
{
    ct_in_failure v;
    ct_read_failure(in->doc, in->obj, &v);
    ct_failure *f = failure_for(p, v.id);
    if (f->described) {
        f->occurrences++; /* a repeat written as its own line */
        return;
    }
    describe_failure(f, in->doc, &v, p->seq);
    if (v.pool) {
        ct_in_pool pool;
        ct_read_pool(in->doc, v.pool, &pool);
        read_pool(f, &pool);
    }
}

static void on_pool(ct_process *p, const event_in *in)
{
    ct_in_pool v;
    ct_read_pool(in->doc, in->obj, &v);
    read_pool(failure_for(p, v.failure), &v);
}

/* A folded failure happened again: its count and latest launch move on. */
static void on_repeat(ct_process *p, const event_in *in)
{
    ct_in_repeat v;
    ct_read_repeat(in->doc, in->obj, &v);
    ct_failure *f = failure_for(p, v.failure);
    f->occurrences =
        v.occurrences > 0 && (uint64_t)v.occurrences > f->occurrences ? (uint64_t)v.occurrences : f->occurrences + 1;
    if (v.launch > f->last_launch)
        f->last_launch = v.launch;
}

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static ct_skip_group *skip_group_for(ct_failure *f, const char *api, const char *kernel)
{
    for (size_t i = 0; i < f->n_skips; i++) {
        ct_skip_group *g = &f->skips[i];
        if (same_text(g->kernel, kernel) && (kernel || same_text(g->api, api)))
            return g;
    }
    return NULL;
}

static void on_skip(ct_process *p, const event_in *in)
{
    ct_in_skip v;
    ct_read_skip(in->doc, in->obj, &v);
    ct_failure *f = failure_for(p, v.failure);
    char *api = dup_text(v.api);
    char *kernel = dup_text(v.kernel);
    int64_t launch = v.launch;
    ct_skip_group *g = skip_group_for(f, api, kernel);
    p->skip_events++;
    if (g) {
        g->count++;
        g->last_launch = launch;
        free(api);
        free(kernel);
        return;
    }
    g = CT_PUSH(f->skips, f->n_skips, f->cap_skips);
    *g = (ct_skip_group){.api = api,
                         .kernel = kernel,
                         .count = 1,
                         .first_launch = launch,
                         .last_launch = launch,
                         .needed = dup_text(v.needed),
                         .produced = v.produced};
}

static void get_ids(const jsonr_doc *doc, const jv *arr, ct_read *rd)
{
    if (!arr)
        return;
    rd->failures = ct_xcalloc(arr->count, sizeof *rd->failures);
    for (const jv *e = jsonr_first(doc, arr); e; e = jsonr_next(doc, e))
        if (e->type == JV_NUMBER && e->is_int) {
            assert(rd->n_failures < arr->count && "an array's count is its elements");
            rd->failures[rd->n_failures++] = e->i;
        }
}

static bool same_path(const ct_strv *a, const ct_strv *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i], b->v[i]) != 0)
            return false;
    return true;
}

static bool same_failures(const ct_read *a, const ct_read *b)
{
    return a->n_failures == b->n_failures &&
           (!a->n_failures || memcmp(a->failures, b->failures, a->n_failures * sizeof *a->failures) == 0);
}

/* Reads of one failure that tell the same story (report.h): the root is
 * theirs already, address and bytes may differ. */
static bool same_story(const ct_read *a, const ct_read *b)
{
    return same_text(a->api, b->api) && same_text(a->returned, b->returned) && a->poisoned == b->poisoned &&
           same_failures(a, b) && same_path(&a->path, &b->path);
}

/* Bytes summed without overflowing, whatever a hostile report says. */
static int64_t add_bytes(int64_t sum, int64_t bytes)
{
    int64_t total;
    if (__builtin_add_overflow(sum, bytes, &total))
        return bytes > 0 ? INT64_MAX : INT64_MIN;
    return total;
}

/* Puts the failure's newest read into the group of its story, or a new
 * one; the newest group first, as reads of one story tend to come
 * together. */
static void group_read(ct_failure *f)
{
    size_t last = f->n_reads - 1;
    const ct_read *rd = &f->reads[last];
    for (size_t i = f->n_read_groups; i > 0; i--) {
        ct_read_group *g = &f->read_groups[i - 1];
        if (same_story(&f->reads[g->first], rd)) {
            g->count++;
            g->bytes = add_bytes(g->bytes, rd->bytes);
            return;
        }
    }
    *CT_PUSH(f->read_groups, f->n_read_groups, f->cap_read_groups) =
        (ct_read_group){.first = last, .count = 1, .bytes = rd->bytes};
}

static void on_refused_read(ct_process *p, const event_in *in)
{
    ct_in_refused_read v;
    ct_read_refused_read(in->doc, in->obj, &v);
    ct_read rd = {.api = dup_text(v.api),
                  .address = dup_text(v.address),
                  .bytes = v.bytes,
                  .error = dup_text(v.error),
                  .code = v.code,
                  .returned = dup_text(v.returned),
                  .poisoned = v.poisoned};
    if (!rd.returned && rd.error) /* written before "returned" existed: error was both */
        rd.returned = ct_xstrdup(rd.error);
    get_ids(in->doc, v.failures, &rd);
    get_strv(in->doc, v.path, &rd.path);
    ct_failure *f = failure_for(p, CT_OR(&v, refused_read, root, rd.n_failures ? rd.failures[0] : 0));
    *CT_PUSH(f->reads, f->n_reads, f->cap_reads) = rd;
    group_read(f);
    p->read_events++;
}

static void on_probe(ct_process *p, const event_in *in)
{
    ct_in_probe v;
    ct_read_probe(in->doc, in->obj, &v);
    *CT_PUSH(p->probes, p->n_probes, p->cap_probes) = (ct_probe){.after = dup_text(v.after),
                                                                 .error = dup_text(v.error),
                                                                 .result = dup_text(v.result),
                                                                 .verdict = dup_text(v.verdict)};
}

static void on_image(ct_process *p, const event_in *in)
{
    ct_in_image v;
    ct_read_image(in->doc, in->obj, &v);
    ct_image_note *im = CT_PUSH(p->images, p->n_images, p->cap_images);
    *im = (ct_image_note){.api = dup_text(v.api),
                          .error = dup_text(v.error),
                          .address = dup_text(v.address),
                          .path = dup_text(v.path),
                          .kernel = dup_text(v.kernel),
                          .form = dup_text(v.form),
                          .status = dup_text(v.status),
                          .fit = dup_text(v.fit),
                          .kernels_total = v.kernels_total,
                          .device = dup_text(v.device),
                          .device_cc = dup_text(v.device_cc),
                          .why = dup_text(v.why),
                          /* written before the key existed: numbered in order, from 1 */
                          .number = CT_OR(&v, image, number, (int64_t)p->n_images),
                          .stand_in = v.stand_in};
    get_strv(in->doc, v.holds, &im->holds);
    get_strv(in->doc, v.kernels, &im->kernels);
}

static void get_suspect(ct_suspect *s, const jsonr_doc *doc, const jv *obj)
{
    ct_in_suspect v;
    ct_read_suspect(doc, obj, &v);
    *s = (ct_suspect){.api = dup_text(v.api),
                      .kernel = dup_text(v.kernel),
                      .graph = dup_text(v.graph),
                      .launch = v.launch,
                      .stream = dup_text(v.stream),
                      .thread = v.thread,
                      .prime = v.prime,
                      .repro = dup_text(v.repro)};
    s->has_dims =
        get_dims(CT_HAS(&v, suspect, grid) && CT_HAS(&v, suspect, block), &v.grid, &v.block, s->grid, s->block);
}

/* The suspects a loss names, the first CT_SUSPECTS_MAX of them kept, and
 * how many there were; an event without the keys (older) has none. */
static void get_suspects(ct_process *p, const jsonr_doc *doc, const ct_in_context_lost *v)
{
    const jv *arr = v->suspects;
    int64_t total = v->suspects_total;
    bool has_total = CT_HAS(v, context_lost, suspects_total);
    p->has_suspects = arr || has_total;
    if (arr)
        p->suspects = ct_xcalloc(arr->count < CT_SUSPECTS_MAX ? arr->count : CT_SUSPECTS_MAX, sizeof *p->suspects);
    for (const jv *e = jsonr_first(doc, arr); e; e = jsonr_next(doc, e)) {
        if (e->type != JV_OBJECT)
            continue;
        if (p->n_suspects == CT_SUSPECTS_MAX) {
            p->suspects_dropped++;
            continue;
        }
        get_suspect(&p->suspects[p->n_suspects++], doc, e);
    }
    assert(p->n_suspects <= CT_SUSPECTS_MAX && "what is kept is bounded");
    uint64_t listed = p->n_suspects + p->suspects_dropped;
    p->suspects_total = total > 0 && (uint64_t)total > listed ? (uint64_t)total : listed;
}

static void on_context_lost(ct_process *p, const event_in *in)
{
    if (p->context_lost)
        return; /* the latch is set once: the first reason wins */
    ct_in_context_lost v;
    ct_read_context_lost(in->doc, in->obj, &v);
    p->context_lost = true;
    p->lost_reason = dup_text(v.reason);
    p->lost_simulated = v.simulated;
    p->lost_seq = p->seq;
    get_suspects(p, in->doc, &v);
}

static void on_exit_event(ct_process *p, const event_in *in)
{
    ct_in_exit v;
    ct_read_exit(in->doc, in->obj, &v);
    p->has_exit = true;
    p->exit = (ct_exit){.status = v.status,
                        .program_status = v.program_status,
                        .failures = v.failures,
                        .occurrences = v.occurrences,
                        .skips = v.skips,
                        .retries = CT_OR(&v, exit, retries, -1),
                        .refused_reads = v.refused_reads,
                        .failed_reads = v.failed_reads,
                        .unusable_images = CT_OR(&v, exit, unusable_images, -1),
                        .context_lost = v.context_lost};
}

static void on_retry(ct_process *p, const event_in *in)
{
    ct_in_retry v;
    ct_read_retry(in->doc, in->obj, &v);
    ct_failure *f = failure_for(p, v.failure);
    if (!f->retries++)
        f->retry_launch = v.launch;
    p->retry_events++;
}

static const struct {
    const char *name;
    void (*handle)(ct_process *p, const event_in *in);
} events[] = {
    {CT_EVENT(start), on_start},
    {CT_EVENT(failure), on_failure},
    {CT_EVENT(repeat), on_repeat},
    {CT_EVENT(skip), on_skip},
    {CT_EVENT(retry), on_retry},
    {CT_EVENT(pool), on_pool},
    {CT_EVENT(refused_read), on_refused_read},
    {CT_EVENT(probe), on_probe},
    {CT_EVENT(image), on_image},
    {CT_EVENT(context_lost), on_context_lost},
    {CT_EVENT(exit), on_exit_event},
};

/* ---- one line ------------------------------------------------------------ */

static void count_bad(ct_skipped *kind, uint64_t line)
{
    if (!kind->count++)
        kind->first = line;
}

static void dispatch(ct_report *r, ct_file_note *note, const event_in *in, uint64_t line)
{
    ct_in_envelope envelope;
    ct_read_envelope(in->doc, in->obj, &envelope);
    const ct_text *name = &envelope.event;
    int64_t pid = envelope.pid;
    if (!CT_HAS(&envelope, envelope, event) || !CT_HAS(&envelope, envelope, pid) || pid < 0 ||
        pid > (int64_t)0x7fffffff) {
        count_bad(&note->malformed, line);
        return;
    }
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
        if (strlen(events[i].name) != name->len || memcmp(events[i].name, name->str, name->len) != 0)
            continue;
        ct_process *p = find_process(r, (long)pid);
        bool restart = events[i].handle == on_start && p && p->has_start;
        if (!p || restart)
            p = new_process(r, (long)pid, note->path);
        assert(p->pid == pid && (events[i].handle != on_start || !p->has_start) &&
               "a pid's events go to its latest process; a second start begins a new one");
        p->seq++;
        events[i].handle(p, in);
        if (events[i].handle == on_start && p->format_version > CT_REPORT_FORMAT_VERSION &&
            p->format_version > note->newer_format)
            note->newer_format = p->format_version;
        return;
    }
    note->unknown++;
}

/* Where the last event written into the line begins, past its start; 0 if
 * none.  Every line cutaint writes begins so, and a quote inside a string
 * is escaped, so only another line can begin there: the whole line of one
 * process glued onto a fragment another left when a full disk cut its
 * write (docs/REPORT.md). */
#define EVENT_OPENING "{\"event\":\""
static size_t glued_tail(const char *line, size_t n)
{
    size_t at = 0, k = sizeof EVENT_OPENING - 1;
    for (const char *p; n > at + 1 && (p = memmem(line + at + 1, n - at - 1, EVENT_OPENING, k));)
        at = (size_t)(p - line);
    return at;
}

/* The glued tail of the line copied aside (parsing rewrites the line in
 * place): its length, 0 when there is none. */
static size_t keep_tail(line_reader *lr)
{
    size_t at = glued_tail(lr->line, lr->n);
    if (!at)
        return 0;
    size_t n = lr->n - at;
    if (n + 1 > lr->tail_cap) {
        char *grown = realloc(lr->tail, n + 1);
        if (!grown)
            return 0;
        lr->tail = grown;
        lr->tail_cap = n + 1;
    }
    memcpy(lr->tail, lr->line + at, n + 1);
    return n;
}

static void read_line(ct_report *r, ct_file_note *note, line_reader *lr, jsonr_doc *doc, uint64_t line)
{
    if (!lr->too_long && blank(lr->line, lr->n))
        return;
    note->lines++;
    if (lr->too_long) {
        count_bad(&note->too_long, line);
        return;
    }
    size_t tail = keep_tail(lr);
    if (!jsonr_parse(doc, lr->line, lr->n, NULL)) {
        if (!lr->newline) {
            note->truncated = true; /* only the last line can lack '\n' */
            return;
        }
        count_bad(&note->corrupt, line);
        /* A damaged line is skipped; a whole event glued after it is kept. */
        if (!tail || !jsonr_parse(doc, lr->tail, tail, NULL))
            return;
    }
    event_in in = {doc, jsonr_root(doc)};
    assert(in.obj && "a line that parsed has a root");
    if (in.obj->type != JV_OBJECT) {
        count_bad(&note->malformed, line);
        return;
    }
    dispatch(r, note, &in, line);
}

int ct_report_read(ct_report *r, FILE *f, const char *path)
{
    line_reader *lr = ct_xcalloc(1, sizeof *lr);
    jsonr_doc doc = {0};
    ct_file_note *note = CT_PUSH(r->files, r->n_files, r->cap_files);
    memset(note, 0, sizeof *note);
    note->path = ct_xstrdup(path);
    lr->f = f;
    for (uint64_t line = 1; next_line(lr); line++)
        read_line(r, note, lr, &doc, line);
    int err = lr->err;
    jsonr_free(&doc);
    free(lr->line);
    free(lr->tail);
    free(lr);
    return err;
}

/* ---- queries --------------------------------------------------------------- */

ct_counts ct_process_counts(const ct_process *p)
{
    ct_counts c = {.failures = p->n_failures,
                   .skips = p->skip_events,
                   .retries = p->retry_events,
                   .refused_reads = p->read_events,
                   .unusable_images = p->n_images};
    for (size_t i = 0; i < p->n_failures; i++) {
        const ct_failure *f = &p->failures[i];
        c.occurrences += f->occurrences;
        for (size_t k = 0; k < f->n_skips; k++)
            if (f->skips[k].kernel)
                continue;
            else if (ct_is_library_call(f->skips[k].api))
                c.skipped_calls += f->skips[k].count;
            else
                c.skipped_copies += f->skips[k].count;
    }
    if (p->has_exit) {
        /* The shim counts what it may not have detailed. */
        c.failures = p->exit.failures > 0 ? (uint64_t)p->exit.failures : 0;
        c.occurrences = p->exit.occurrences > 0 ? (uint64_t)p->exit.occurrences : 0;
        c.skips = p->exit.skips > 0 ? (uint64_t)p->exit.skips : 0;
        if (p->exit.retries >= 0) /* older reports have no count: keep the events' */
            c.retries = (uint64_t)p->exit.retries;
        c.refused_reads = p->exit.refused_reads > 0 ? (uint64_t)p->exit.refused_reads : 0;
        if (p->exit.unusable_images >= 0) /* older reports have no count: keep the events' */
            c.unusable_images = (uint64_t)p->exit.unusable_images;
    }
    if (c.skipped_copies > c.skips)
        c.skipped_copies = c.skips;
    if (c.skipped_calls > c.skips - c.skipped_copies)
        c.skipped_calls = c.skips - c.skipped_copies;
    return c;
}

bool ct_is_library_call(const char *api)
{
    static const char *const prefixes[] = {"cublas", "curand", "cufft", "cusolver", "cusparse"};
    for (size_t i = 0; api && i < sizeof prefixes / sizeof *prefixes; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(api, prefixes[i], n) == 0 && api[n] >= 'A' && api[n] <= 'Z')
            return true;
    }
    return false;
}

const ct_failure *ct_process_failure(const ct_process *p, int64_t id)
{
    return find_failure((ct_process *)p, id);
}

const ct_image_note *ct_process_image(const ct_process *p, int64_t number)
{
    for (size_t i = 0; i < p->n_images; i++)
        if (p->images[i].number == number)
            return &p->images[i];
    return NULL;
}

const ct_failure *ct_process_loss_cause(const ct_process *p)
{
    const ct_failure *cause = NULL;
    for (size_t i = 0; p->context_lost && i < p->n_failures; i++) {
        const ct_failure *f = &p->failures[i];
        if (f->described && f->seq < p->lost_seq && (!cause || f->seq > cause->seq))
            cause = f;
    }
    return cause;
}

bool ct_file_note_any(const ct_file_note *n)
{
    return n->corrupt.count || n->malformed.count || n->too_long.count || n->truncated || n->newer_format || n->unknown;
}

/* ---- freeing ----------------------------------------------------------------- */

static void strv_free(ct_strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

static void failure_free(ct_failure *f)
{
    free(f->api);
    free(f->kernel);
    free(f->error);
    free(f->status);
    free(f->stream);
    free(f->repro);
    strv_free(&f->backtrace);
    for (size_t i = 0; i < f->n_skips; i++) {
        free(f->skips[i].api);
        free(f->skips[i].kernel);
        free(f->skips[i].needed);
    }
    free(f->skips);
    for (size_t i = 0; i < f->n_reads; i++) {
        ct_read *rd = &f->reads[i];
        free(rd->api);
        free(rd->address);
        free(rd->error);
        free(rd->returned);
        free(rd->failures);
        strv_free(&rd->path);
    }
    free(f->reads);
    free(f->read_groups);
}

static void image_note_free(ct_image_note *im)
{
    char *texts[] = {im->api,    im->error, im->address, im->path,      im->kernel, im->form,
                     im->status, im->fit,   im->device,  im->device_cc, im->why};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        free(texts[i]);
    strv_free(&im->holds);
    strv_free(&im->kernels);
}

static void suspect_free(ct_suspect *s)
{
    free(s->api);
    free(s->kernel);
    free(s->graph);
    free(s->stream);
    free(s->repro);
}

static void process_free(ct_process *p)
{
    strv_free(&p->argv);
    free(p->cutaint_version);
    for (size_t i = 0; i < p->n_failures; i++)
        failure_free(&p->failures[i]);
    free(p->failures);
    for (size_t i = 0; i < p->n_probes; i++) {
        free(p->probes[i].after);
        free(p->probes[i].error);
        free(p->probes[i].result);
        free(p->probes[i].verdict);
    }
    free(p->probes);
    for (size_t i = 0; i < p->n_images; i++)
        image_note_free(&p->images[i]);
    free(p->images);
    free(p->lost_reason);
    for (size_t i = 0; i < p->n_suspects; i++)
        suspect_free(&p->suspects[i]);
    free(p->suspects);
}

void ct_report_free(ct_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        process_free(&r->procs[i]);
    free(r->procs);
    for (size_t i = 0; i < r->n_files; i++)
        free(r->files[i].path);
    free(r->files);
    memset(r, 0, sizeof *r);
}
