/*
 * events.c - the report's events, for tools (docs/REPORT.md), each said in
 * the log for people (log.c) as it is written.
 *
 * Report events are one JSON line each, one write(2), at the moment they
 * happen.  Each fills its record's struct (core/schema_write.h) and the
 * generated writer writes it.
 *
 * Owns: the report's sink, whether this process wrote its start event, the
 * program's argv (for start and the repro lines) and the thread ids events
 * name.
 *
 * Invariants:
 * - Log formats are literals of this file or log.c; outside text (kernel
 *   names, paths, argv) travels only as %s arguments (escaped by log.c) or
 *   escaped JSON strings.
 * - Nothing here runs on the happy path except the start and exit events.
 * - The report is opened at the start event, which a process writes when
 *   it first reaches the driver (ct_reached_driver).  A process that never
 *   does writes no event at all, not even exit.
 * - The report goes through a sink (core/files.h), as the log does: never
 *   into a descriptor the program took over, never waiting on a full pipe,
 *   never one file with the log; a sink that cannot be opened or written
 *   is said once, on stderr, and counted in the metrics; while an exit
 *   interrupted cutaint on its thread no line waits for the sink's lock
 *   (log.c).
 */
#include <assert.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "errnames.h"
#include "files.h"
#include "image.h"
#include "kernels.h"
#include "jsonl.h"
#include "schema_write.h"
#include "ct_status.h"
#include "signature.h"
#include "shim.h"

#define CT_REPEATS_SHOWN 10
#define CT_EVENT_MAX 8192
#define CT_BACKTRACE_MAX 24

static ct_sink report_sink;
static atomic_bool start_written;
static atomic_uint repeats_logged;
static int saved_argc;
static char **saved_argv;
static __thread uint64_t thread_id;

bool ct_events_started(void)
{
    return atomic_load(&start_written);
}

void ct_events_set_argv(int argc, char **argv)
{
    saved_argc = argc;
    saved_argv = argv;
}

uint64_t ct_thread_id(void)
{
    if (!thread_id)
        thread_id = (uint64_t)syscall(SYS_gettid);
    return thread_id;
}

int64_t ct_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

const char *ct_cu_error_name(CUresult r)
{
    const char *name = ct_error_name((int)r);
    return name ? name : "CUDA_ERROR_UNKNOWN";
}

/* ---- the sinks ------------------------------------------------------------ */

/* The report and the log never share a file with each other, and neither
 * with the program's stdout; the report neither with its stderr (the log's
 * lines belong there anyway).  The log yields: refused when its file is the
 * report's (its lines go to stderr, nothing is lost); the report is refused
 * only when the log already writes into that file. */
static void keep_apart(void)
{
    ct_log_apart_from(&report_sink);
}

void ct_events_configure(void)
{
    ct_log_configure();
    ct_sink_init(&report_sink, ct_g.cfg.report);
    keep_apart();
}

void ct_events_output_counts(ct_metrics *m)
{
    ct_log_output_counts(m);
    ct_output_counts(&m->outputs[CT_OUTPUT_REPORT], &report_sink);
}

/* ---- the report ---------------------------------------------------------------- */

static bool begin(ct_jsonl *j, char *buf, const char *event)
{
    if (!ct_sink_live(&report_sink))
        return false;
    assert(atomic_load(&start_written) && "no event of a process precedes its start");
    ct_jsonl_begin(j, buf, CT_EVENT_MAX, event, ct_now_ns(), (long)getpid());
    return true;
}

static void emit(ct_jsonl *j)
{
    size_t len = ct_jsonl_end(j);
    ct_sink_result r = ct_sink_write(&report_sink, j->buf, len, ct_output_may_wait());
    ct_tell_sink_trouble(&report_sink, r, "CUTAINT_REPORT", "no report will be written");
}

static ct_dims dims(const uint32_t d[3])
{
    return (ct_dims){{d[0], d[1], d[2]}};
}

/* How many of argv the start event names: up to the first NULL. */
static size_t argv_count(void)
{
    size_t n = 0;
    while (saved_argv && (int)n < saved_argc && saved_argv[n])
        n++;
    return n;
}

void ct_event_start(int driver_version)
{
    if (atomic_exchange(&start_written, true))
        return;
    ct_metrics_start(driver_version);
    char buf[CT_EVENT_MAX];
    ct_jsonl j;
    if (!begin(&j, buf, CT_EVENT(start)))
        return;
    ct_write_start(&j, &(ct_out_start){.nulls = driver_version ? 0 : CT_FIELD_BIT(start, driver_version),
                                       .argv = ct_out_strings_of((const char *const *)saved_argv, argv_count()),
                                       .driver_version = driver_version,
                                       .cutaint_version = CT_VERSION,
                                       .format_version = CT_REPORT_FORMAT_VERSION});
    emit(&j);
}

/* The child writes its own start event when it calls the driver. */
void ct_events_after_fork(void)
{
    thread_id = 0;
    atomic_store(&start_written, false);
    ct_log_after_fork();
    ct_sink_atfork_child(&report_sink);
}

void ct_events_follow_paths(void)
{
    ct_log_follow_path();
    ct_output_follows(&report_sink, ct_g.cfg.report);
    keep_apart();
}

/* Host frames of the failing call, outside this library, symbolised with
 * dladdr (no allocation, no external tool). */
typedef struct host_frames {
    void *frame[CT_BACKTRACE_MAX];
    Dl_info self;
} host_frames;

static const char *host_frame(const void *items, size_t i, char *frame, size_t cap)
{
    const host_frames *h = items;
    Dl_info info;
    if (!dladdr(h->frame[i], &info))
        snprintf(frame, cap, "%p", h->frame[i]);
    else if (info.dli_fbase == h->self.dli_fbase)
        return NULL;
    else if (info.dli_sname)
        snprintf(frame, cap, "%s+0x%lx (%s)", info.dli_sname,
                 (unsigned long)((char *)h->frame[i] - (char *)info.dli_saddr), info.dli_fname);
    else
        snprintf(frame, cap, "%s+0x%lx", info.dli_fname, (unsigned long)((char *)h->frame[i] - (char *)info.dli_fbase));
    return frame;
}

static ct_out_strings backtrace_of(host_frames *h)
{
    int n = backtrace(h->frame, CT_BACKTRACE_MAX);
    dladdr((void *)backtrace_of, &h->self);
    return (ct_out_strings){h, n > 0 ? (size_t)n : 0, host_frame};
}

/* The compute-sanitizer line that replays launch `seq` (launches are counted
 * in the order cutaint saw them: exact unless threads launch concurrently;
 * see launch.c). */
void ct_repro_line(uint64_t seq, char *line, size_t cap)
{
    assert(seq > 0 && "launches are numbered from 1");
    int n = snprintf(line, cap, "compute-sanitizer --tool memcheck --launch-skip %llu --launch-count 1",
                     (unsigned long long)(seq - 1));
    for (int i = 0; i < saved_argc && saved_argv && saved_argv[i] && n > 0 && (size_t)n < cap; i++)
        n += snprintf(line + n, cap - (size_t)n, " %s", saved_argv[i]);
}

#define POOL_ADVICE                                                                                            \
    "declare each tensor with CUTAINT_REGION_ALLOC (include/cutaint.h), or give each tensor an allocation of " \
    "its own (PyTorch: PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync; docs/POOLS.md)"

/* A pool event, or (absent: its failure) a failure's pool object. */
static void write_pool(ct_jsonl *j, ct_failure_id id, const ct_pool_facts *p, uint64_t absent)
{
    ct_write_pool(j, &(ct_out_pool){.absent = absent,
                                    .failure = id,
                                    .allocation = p->allocation,
                                    .size = (int64_t)p->size,
                                    .from = p->from,
                                    .covered = (int64_t)p->covered,
                                    .pointers = p->pointers,
                                    .advice = POOL_ADVICE});
}

static void pool_object(ct_jsonl *j, const void *items, size_t i)
{
    (void)i;
    write_pool(j, 0, items, CT_FIELD_BIT(pool, failure));
}

static void say_pool(ct_failure_id id, const ct_pool_facts *p)
{
    ct_log(CT_LOG_WARN,
           "allocation 0x%llx (%llu bytes) looks like a pool: the program reached it through %u "
           "distinct pointers, and failure #%u now covers the %llu bytes from 0x%llx to its end; for precision %s",
           (unsigned long long)p->allocation, (unsigned long long)p->size, p->pointers, id,
           (unsigned long long)p->covered, (unsigned long long)p->from, POOL_ADVICE);
}

void ct_event_pool(ct_failure_id id, const ct_pool_facts *p)
{
    say_pool(id, p);
    char buf[CT_EVENT_MAX];
    ct_jsonl j;
    if (!begin(&j, buf, CT_EVENT(pool)))
        return;
    write_pool(&j, id, p, 0);
    emit(&j);
}

void ct_event_failure(ct_failure_id id, const ct_failure_desc *d, bool injected, const ct_kernel *k,
                      const ct_pool_facts *pool)
{
    if (d->kernel)
        ct_log(CT_LOG_WARN,
               "failure #%u: %s failed with %s (%s, launch #%llu, grid %ux%ux%u, block %ux%ux%u)%s; "
               "its outputs hold no data until rewritten",
               id, d->kernel, ct_cu_error_name((CUresult)d->error), d->api, (unsigned long long)d->launch_seq,
               d->grid[0], d->grid[1], d->grid[2], d->block[0], d->block[1], d->block[2],
               injected ? " [injected]" : "");
    else if (d->status) {
        char text[128];
        ct_log(CT_LOG_WARN, "failure #%u: %s %s %s; the bytes it was to write hold no data until rewritten", id, d->api,
               ct_lib_status_reported(d) ? "reported" : "returned", ct_lib_status_text(d, text, sizeof text));
    } else
        ct_log(CT_LOG_WARN, "failure #%u: %s failed with %s%s; the bytes it was to write hold no data until rewritten",
               id, d->api, ct_cu_error_name((CUresult)d->error), injected ? " [injected]" : "");
    ct_metrics_failure_event(d);
    char buf[CT_EVENT_MAX];
    ct_jsonl j;
    if (!begin(&j, buf, CT_EVENT(failure)))
        return;
    bool repro = d->kernel && d->launch_seq, roles = k && k->roles;
    char repro_line[4096];
    if (repro)
        ct_repro_line(d->launch_seq, repro_line, sizeof repro_line);
    host_frames frames;
    char status[128];
    if (d->status)
        ct_lib_status_text(d, status, sizeof status);
    ct_write_failure(&j,
                     &(ct_out_failure){.absent =
                                           (d->kernel ? 0
                                                      : CT_FIELD_BIT(failure, grid) | CT_FIELD_BIT(failure, block)) |
                                           (repro ? 0 : CT_FIELD_BIT(failure, repro)) |
                                           (roles ? 0
                                                  : CT_FIELD_BIT(failure, roles) | CT_FIELD_BIT(failure, roles_from)),
                                       .nulls = (d->image ? 0 : CT_FIELD_BIT(failure, image)) |
                                                (pool ? 0 : CT_FIELD_BIT(failure, pool)) |
                                                (d->status ? 0 : CT_FIELD_BIT(failure, status)),
                                       .id = id,
                                       .api = d->api,
                                       .kernel = d->kernel,
                                       .error = ct_cu_error_name((CUresult)d->error),
                                       .code = d->error,
                                       .status = status,
                                       .launch = (int64_t)d->launch_seq,
                                       .grid = dims(d->grid),
                                       .block = dims(d->block),
                                       .stream = d->stream,
                                       .thread = (int64_t)d->thread,
                                       .injected = injected,
                                       .repro = repro_line,
                                       .backtrace = backtrace_of(&frames),
                                       .roles = roles ? k->roles : NULL,
                                       .roles_from = roles ? k->roles_from : NULL,
                                       .image = d->image,
                                       .pool = {pool, 1, pool_object}});
    emit(&j);
    if (pool)
        say_pool(id, pool);
}

/* "launch #7; 3 occurrences, the first at launch #1" */
static void repeat_where(const ct_failure_desc *d, const ct_occurrence *occ, char *out, size_t cap)
{
    if (d->launch_seq && occ->first_launch)
        snprintf(out, cap, "launch #%llu; %llu occurrences, the first at launch #%llu",
                 (unsigned long long)d->launch_seq, (unsigned long long)occ->count,
                 (unsigned long long)occ->first_launch);
    else
        snprintf(out, cap, "%llu occurrences", (unsigned long long)occ->count);
}

void ct_event_repeat(ct_failure_id id, const ct_failure_desc *d, const ct_occurrence *occ, bool injected)
{
    char where[160];
    repeat_where(d, occ, where, sizeof where);
    ct_log(ct_log_nth_level(&repeats_logged, CT_REPEATS_SHOWN, "repeated failures"),
           "failure #%u repeated: %s failed again with %s (%s, %s)%s", id, d->kernel ? d->kernel : d->api,
           ct_cu_error_name((CUresult)d->error), d->api, where, injected ? " [injected]" : "");
    ct_metrics_failure_event(d); /* each occurrence is failed work */
    char buf[CT_EVENT_MAX];
    ct_jsonl j;
    if (!begin(&j, buf, CT_EVENT(repeat)))
        return;
    ct_write_repeat(&j, &(ct_out_repeat){.failure = id,
                                         .api = d->api,
                                         .kernel = d->kernel,
                                         .error = ct_cu_error_name((CUresult)d->error),
                                         .code = d->error,
                                         .launch = (int64_t)d->launch_seq,
                                         .first_launch = (int64_t)occ->first_launch,
                                         .occurrences = (int64_t)occ->count,
                                         .thread = (int64_t)d->thread,
                                         .injected = injected});
    emit(&j);
}

void ct_event_skip(ct_failure_id root, const ct_skip_desc *s)
{
    ct_log(CT_LOG_INFO, "skipped %s%s%s: its input 0x%llx carries failure #%u", s->api, s->kernel ? " of " : "",
           s->kernel ? s->kernel : "", (unsigned long long)s->needed, root);
    ct_metrics_skip_event();
    char buf[CT_EVENT_MAX];
    ct_jsonl j;
    if (!begin(&j, buf, CT_EVENT(skip)))
        return;
    ct_write_skip(&j,
                  &(ct_out_skip){.absent = (s->graph ? 0 : CT_FIELD_BIT(skip, graph) | CT_FIELD_BIT(skip, node)) |
                                           (s->roles ? 0 : CT_FIELD_BIT(skip, roles) | CT_FIELD_BIT(skip, roles_from)),
                                 .failure = root,
                                 .api = s->api,
                                 .kernel = s->kernel,
                                 .launch = (int64_t)s->launch_seq,
                                 .needed = s->needed,
                                 .graph = s->graph,
                                 .node = s->node,
                                 .produced = s->produced,
                                 .roles = s->roles,
                                 .roles_from = s->roles_from,
                                 .thread = (int64_t)s->thread});
    emit(&j);
}

void ct_event_retry(ct_failure_id retried, const char *kernel, uint64_t launch_seq)
{
    ct_log(CT_LOG_INFO, "launch #%llu of %s retried failure #%u and succeeded: its outputs no longer carry it",
           (unsigned long long)launch_seq, kernel ? kernel : "an unknown kernel", retried);
    atomic_fetch_add(&ct_g.retries, 1);
    char buf[CT_EVENT_MAX];
    ct_jsonl j;
    if (!begin(&j, buf, CT_EVENT(retry)))
        return;
    ct_write_retry(&j, &(ct_out_retry){.failure = retried,
                                       .kernel = kernel,
                                       .launch = (int64_t)launch_seq,
                                       .thread = (int64_t)ct_thread_id()});
    emit(&j);
}

/* The i-th step of a refusal's path as its event names it: the root's
 * subject, then each skip's. */
static const char *path_subject(const void *items, size_t i, char *scratch, size_t cap)
{
    (void)scratch;
    (void)cap;
    return ct_refusal_step(items, i);
}

void ct_event_refused(const char *api, uint64_t addr, uint64_t bytes, const ct_refusal *r, int returned, bool poisoned)
{
    assert(r->n_kept > 0 && r->n_kept <= CT_REFUSAL_MAX_FAILURES && "a refusal names its root cause first");
    ct_log_refusal(api, addr, bytes, r, returned, poisoned);
    ct_metrics_refused_event(bytes);
    char buf[CT_EVENT_MAX];
    ct_jsonl j;
    if (!begin(&j, buf, CT_EVENT(refused_read)))
        return;
    const ct_failure_info *root = &r->failures[0];
    int64_t ids[CT_REFUSAL_MAX_FAILURES];
    for (size_t i = 0; i < r->n_kept; i++)
        ids[i] = r->failures[i].id;
    ct_write_refused_read(&j,
                          &(ct_out_refused_read){.absent = root->path_cut ? 0 : CT_FIELD_BIT(refused_read, path_cut),
                                                 .api = api,
                                                 .address = addr,
                                                 .bytes = (int64_t)bytes,
                                                 .failures = {ids, r->n_kept},
                                                 .root = root->id,
                                                 .error = ct_cu_error_name((CUresult)root->desc.error),
                                                 .code = root->desc.error,
                                                 .returned = ct_cu_error_name((CUresult)returned),
                                                 .path = {root, 1 + root->path_len, path_subject},
                                                 .path_cut = true,
                                                 .poisoned = poisoned,
                                                 .thread = (int64_t)ct_thread_id()});
    emit(&j);
}

void ct_event_probe(const char *after, CUresult error, CUresult probe, bool lost)
{
    ct_log(CT_LOG_INFO, "probe after %s (%s): synchronize returned %s: %s", after, ct_cu_error_name(error),
           probe == CUDA_SUCCESS ? "CUDA_SUCCESS" : ct_cu_error_name(probe),
           lost ? "the context is lost" : "the failure was isolated");
    char buf[CT_EVENT_MAX];
    ct_jsonl j;
    if (!begin(&j, buf, CT_EVENT(probe)))
        return;
    ct_write_probe(&j, &(ct_out_probe){.after = after,
                                       .error = ct_cu_error_name(error),
                                       .result = probe == CUDA_SUCCESS ? "CUDA_SUCCESS" : ct_cu_error_name(probe),
                                       .verdict = lost ? "context_lost" : "isolated"});
    emit(&j);
}

static void suspect_object(ct_jsonl *j, const void *items, size_t i)
{
    const ct_suspect_desc *s = (const ct_suspect_desc *)items + i;
    bool repro = s->kernel && s->launch;
    char line[4096];
    if (repro)
        ct_repro_line(s->launch, line, sizeof line);
    ct_write_suspect(j, &(ct_out_suspect){.api = s->api,
                                          .kernel = s->kernel,
                                          .graph = s->graph,
                                          .launch = (int64_t)s->launch,
                                          .stream = s->stream,
                                          .grid = dims(s->grid),
                                          .block = dims(s->block),
                                          .thread = (int64_t)s->thread,
                                          .prime = s->prime,
                                          .repro = repro ? line : NULL});
}

void ct_event_context_lost(const char *reason, bool simulated, const ct_suspect_desc *suspects, size_t n, size_t total)
{
    ct_metrics_context_lost_event();
    char buf[CT_EVENT_MAX];
    ct_jsonl j;
    if (!begin(&j, buf, CT_EVENT(context_lost)))
        return;
    ct_write_context_lost(&j, &(ct_out_context_lost){.reason = reason,
                                                     .simulated = simulated,
                                                     .suspects = {suspects, n, suspect_object},
                                                     .suspects_total = (int64_t)total});
    emit(&j);
}

/* ---- images the driver could not use ------------------------------------------ */

static const char *const form_names[] = {
    [CT_IMAGE_UNKNOWN] = "unknown", [CT_IMAGE_WRAPPER] = "wrapper", [CT_IMAGE_FATBIN] = "fatbin",
    [CT_IMAGE_CUBIN] = "cubin",     [CT_IMAGE_PTX] = "ptx",
};
static const char *const status_names[] = {
    [CT_IMAGE_OK] = "ok",
    [CT_IMAGE_UNREADABLE] = "unreadable",
    [CT_IMAGE_TRUNCATED] = "truncated",
    [CT_IMAGE_MALFORMED] = "malformed",
};
static const char *const fit_names[] = {
    [CT_FIT_UNKNOWN] = "unknown",
    [CT_FIT_SASS] = "sass",
    [CT_FIT_PTX] = "ptx",
    [CT_FIT_NONE] = "none",
};

/* "sm_80", "compute_90", "sm_90a" */
static const char *entry_name(const void *items, size_t i, char *out, size_t cap)
{
    const ct_image_entry *e = &((const ct_image *)items)->entries[i];
    snprintf(out, cap, "%s_%u%s",
             e->kind == CT_ENTRY_PTX    ? "compute"
             : e->kind == CT_ENTRY_SASS ? "sm"
                                        : "other",
             e->arch, e->arch_specific ? "a" : "");
    return out;
}

/* A kernel's name for people: demangled when it can be. */
static const char *pretty(const char *mangled, ct_signature *sig)
{
    return mangled && ct_signature_from_mangled(mangled, sig) == CT_OK ? sig->demangled : mangled;
}

/* An image's kernels, demangled in sig (NULL: none could be made). */
typedef struct pretty_kernels {
    const ct_image *image;
    ct_signature *sig;
} pretty_kernels;

static const char *pretty_kernel(const void *items, size_t i, char *scratch, size_t cap)
{
    (void)scratch;
    (void)cap;
    const pretty_kernels *k = items;
    return pretty(k->image->kernels[i], k->sig);
}

/* "image 0x7f... (kernels fill(float*, int, float), ...)" or "image file
 * x.cubin": which image, named as the log names it. */
static size_t image_subject(const ct_image_report *r, char *out, size_t cap)
{
    const ct_image *img = r->image;
    int n = r->path ? snprintf(out, cap, "image file %s", r->path)
                    : snprintf(out, cap, "image 0x%llx", (unsigned long long)r->address);
    size_t len = n > 0 ? (size_t)n : 0;
    ct_signature *sig = malloc(sizeof *sig);
    for (size_t i = 0; sig && i < img->n_kernels && i < 3 && len < cap; i++) {
        n = snprintf(out + len, cap - len, "%s%s", i ? ", " : " (kernels ", pretty(img->kernels[i], sig));
        len += n > 0 ? (size_t)n : 0;
    }
    free(sig);
    if (img->n_kernels && len < cap) {
        n = snprintf(out + len, cap - len, "%s)", img->kernels_total > 3 ? ", ..." : "");
        len += n > 0 ? (size_t)n : 0;
    }
    return len < cap ? len : cap - 1;
}

/* The diagnosis in one sentence: which image, what it holds, what the
 * device is, and what the driver answered. */
static void image_why(const ct_image_report *r, const char *fit, char *out, size_t cap)
{
    char subject[512], holds[256], device[192];
    image_subject(r, subject, sizeof subject);
    if (r->image->status != CT_IMAGE_OK)
        snprintf(holds, sizeof holds, "could not be read whole (%s)", status_names[r->image->status]);
    else if (r->image->form == CT_IMAGE_UNKNOWN)
        snprintf(holds, sizeof holds, "is not a form cutaint reads (fatbin, cubin, PTX)");
    else {
        char what[200];
        ct_image_describe(r->image, what, sizeof what);
        snprintf(holds, sizeof holds, "holds %s", what);
    }
    if (r->cc)
        snprintf(device, sizeof device, "this device%s%s%s is sm_%u%s", r->device ? " (" : "",
                 r->device ? r->device : "", r->device ? ")" : "", r->cc, fit);
    else
        snprintf(device, sizeof device, "the device could not be asked");
    if (r->kernel)
        snprintf(out, cap, "%s %s; %s: %s found no kernel %s in it: %s", subject, holds, device, r->api, r->kernel,
                 ct_cu_error_name((CUresult)r->error));
    else
        snprintf(out, cap, "%s %s; %s: %s", subject, holds, device, ct_cu_error_name((CUresult)r->error));
}

void ct_event_image(const ct_image_report *r)
{
    const ct_image *img = r->image;
    ct_image_fit fit = r->cc ? ct_image_fit_for(img, r->cc) : CT_FIT_UNKNOWN;
    char why[1024];
    static const char *const fit_phrase[] = {
        [CT_FIT_UNKNOWN] = "",
        [CT_FIT_SASS] = ", which could run its code",
        [CT_FIT_PTX] = ", which could only JIT its PTX",
        [CT_FIT_NONE] = ", which can run none of it",
    };
    image_why(r, fit_phrase[fit], why, sizeof why);
    ct_log(CT_LOG_WARN, "%s; %s [image #%u]", why,
           r->stand_in ? "cutaint answers the runtime with a stand-in: the launches of its kernels fail where the "
                         "program makes them, and their outputs hold no data"
                       : "its kernels' launches will fail and their outputs hold no data",
           r->number);
    char buf[CT_EVENT_MAX];
    ct_jsonl j;
    if (!begin(&j, buf, CT_EVENT(image)))
        return;
    pretty_kernels kernels = {img, malloc(sizeof *kernels.sig)};
    char cc[16];
    snprintf(cc, sizeof cc, "%u.%u", r->cc / 10, r->cc % 10);
    ct_write_image(&j, &(ct_out_image){.api = r->api,
                                       .error = ct_cu_error_name((CUresult)r->error),
                                       .code = r->error,
                                       .address = r->address,
                                       .path = r->path,
                                       .kernel = r->kernel,
                                       .form = form_names[img->form],
                                       .status = status_names[img->status],
                                       .holds = {img, img->n_entries, entry_name},
                                       .kernels = {&kernels, kernels.sig ? img->n_kernels : 0, pretty_kernel},
                                       .kernels_total = img->kernels_total,
                                       .device = r->device,
                                       .device_cc = r->cc ? cc : NULL,
                                       .fit = fit_names[fit],
                                       .why = why,
                                       .thread = (int64_t)ct_thread_id(),
                                       .number = r->number,
                                       .stand_in = r->stand_in});
    free(kernels.sig);
    emit(&j);
}

void ct_event_exit(int status, int program_status)
{
    if (!atomic_load(&start_written))
        return; /* it never reached the driver: nothing to say */
    bool metrics_written = ct_metrics_exit_event();
    char buf[CT_EVENT_MAX];
    ct_jsonl j;
    if (!begin(&j, buf, CT_EVENT(exit)))
        return;
    bool interrupted = atomic_load(&ct_g.exit_interrupted);
    const char *skipped[2];
    size_t n_skipped = 0;
    if (atomic_load(&ct_g.exit_check_skipped))
        skipped[n_skipped++] = "exit_check";
    if (!metrics_written)
        skipped[n_skipped++] = "metrics_file";
    ct_write_exit(&j,
                  &(ct_out_exit){.absent =
                                     (atomic_load(&ct_g.unprotected) ? 0 : CT_FIELD_BIT(exit, unprotected)) |
                                     (interrupted ? 0 : CT_FIELD_BIT(exit, interrupted) | CT_FIELD_BIT(exit, skipped)),
                                 .status = status,
                                 .program_status = program_status,
                                 .failures = (int64_t)atomic_load(&ct_g.failures),
                                 .occurrences = (int64_t)atomic_load(&ct_g.occurrences),
                                 .skips = (int64_t)atomic_load(&ct_g.skips),
                                 .retries = (int64_t)atomic_load(&ct_g.retries),
                                 .refused_reads = (int64_t)atomic_load(&ct_g.refused_reads),
                                 .failed_reads = (int64_t)atomic_load(&ct_g.failed_reads),
                                 .context_lost = ct_latch_is_set(ct_g.latch),
                                 .unusable_images = (int64_t)atomic_load(&ct_g.unusable_images),
                                 .unprotected = true,
                                 .interrupted = true,
                                 .skipped = ct_out_strings_of(skipped, n_skipped)});
    emit(&j);
}
