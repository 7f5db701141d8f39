/*
 * test_suspects.c - a lost context's suspects (docs/DESIGN.md "Suspects"):
 * the context_lost event lists exactly the launches on that context that
 * nothing proved finished, streams by their oldest, oldest first on each,
 * the first on each stream prime; each with its api, kernel, launch number,
 * stream, grid, block, launching thread and compute-sanitizer line.
 *
 * The scenarios (clients/scenarios.c, sus_*) run on fakecuda's
 * deterministic schedule (H_SYNC), which runs queued work only at a sync
 * point: a launch of crash answers CUDA_SUCCESS, and the next synchronise
 * CUDA_ERROR_ILLEGAL_ADDRESS, as a real GPU's asynchronous fault may; a
 * query answers success. The suspects are predicted exactly from which
 * call proved what, which on the asynchronous schedule depends on timing
 * (a query may answer CUDA_ERROR_NOT_READY, a fault surface earlier).  Each proof is checked with the
 * unproven case beside it (a stream not synchronised, no wait on the
 * event, a non-blocking stream, a per-thread default stream), so that
 * dropping a proof, or taking one where none was made, shows.  Also: a
 * simulated loss names only the injected call; the log and the health
 * file name the prime suspects; a loss first seen by a query or at exit
 * names them too; a healthy run names none.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define ILLEGAL "CUDA_ERROR_ILLEGAL_ADDRESS"
#define CRASH "crash(float*)"
#define FILL "fill(float*, int, float)"

/* One suspect as expected: stream and thread are names the client printed
 * ("stream s1=0x...", "thread A=TID"); stream "0" is a default stream. */
typedef struct want {
    const char *kernel;
    int launch;
    const char *stream;
    const char *thread;
    bool prime;
} want;

typedef struct sus_case {
    const char *name;
    const char *client;
    const char *api; /* every suspect's */
    const char *args[2];
    const char *inject; /* an environment entry, or NULL */
    int n;
    want want[4];
} sus_case;

#define L CT_CLIENT_LINKED
#define P CT_CLIENT_PTDS
#define R CT_CLIENT_RUNTIME
#define LK "cuLaunchKernel"
#define PK "cuLaunchKernel_ptsz"

static const sus_case cases[] = {
    /* fill proven by cuCtxSynchronize, then crash */
    {"alone", L, LK, {"sus_alone"}, NULL, 1, {{CRASH, 2, "0", "main", true}}},
    {"alone runtime", R, LK, {"sus_alone"}, NULL, 1, {{CRASH, 2, "0", "main", true}}},
    /* crash, then fill behind it on the same stream */
    {"queued", L, LK, {"sus_queued"}, NULL, 2, {{CRASH, 1, "0", "main", true}, {FILL, 2, "0", "main", false}}},
    {"queued ptds", P, PK, {"sus_queued"}, NULL, 2, {{CRASH, 1, "0", "main", true}, {FILL, 2, "0", "main", false}}},
    /* fill on s1, s1 synchronised, crash on s2 */
    {"stream synced", L, LK, {"sus_streams", "synced"}, NULL, 1, {{CRASH, 2, "s2", "main", true}}},
    /* fill on s1, crash on s2, fill on s1: s1 first, its oldest being older */
    {"stream unsynced",
     L,
     LK,
     {"sus_streams", "unsynced"},
     NULL,
     3,
     {{FILL, 1, "s1", "main", true}, {FILL, 3, "s1", "main", false}, {CRASH, 2, "s2", "main", true}}},
    /* fill on s1, event recorded after it found complete, crash on s1 */
    {"event synchronised", L, LK, {"sus_events", "sync"}, NULL, 1, {{CRASH, 2, "s1", "main", true}}},
    {"event queried", L, LK, {"sus_events", "query"}, NULL, 1, {{CRASH, 2, "s1", "main", true}}},
    /* fill on s1, e recorded, s2 waits for e, s2 synchronised: s1 proven
     * through its record */
    {"wait on event", L, LK, {"sus_events", "wait"}, NULL, 1, {{CRASH, 3, "s1", "main", true}}},
    {"wait on event runtime", R, LK, {"sus_events", "wait"}, NULL, 1, {{CRASH, 3, "s1", "main", true}}},
    {"wait on event ptds", P, PK, {"sus_events", "wait"}, NULL, 1, {{CRASH, 3, "s1", "main", true}}},
    /* the same without the wait: s2's synchronise says nothing of s1 */
    {"no wait",
     L,
     LK,
     {"sus_events", "nowait"},
     NULL,
     2,
     {{FILL, 1, "s1", "main", true}, {CRASH, 3, "s1", "main", false}}},
    /* fills on the legacy stream and a blocking stream s, a synchronous
     * cuMemcpyDtoH, crash on the legacy stream */
    {"sync copy", L, LK, {"sus_sync_copy", "blocking"}, NULL, 1, {{CRASH, 3, "0", "main", true}}},
    {"sync copy runtime", R, LK, {"sus_sync_copy", "blocking"}, NULL, 1, {{CRASH, 3, "0", "main", true}}},
    /* the same after an earlier copy: the thread proves through the
     * context's entry it kept (shim/inflight.h) */
    {"sync copy kept", L, LK, {"sus_sync_copy", "copied"}, NULL, 1, {{CRASH, 3, "0", "main", true}}},
    /* s non-blocking: the legacy stream does not wait for it */
    {"sync copy nonblocking",
     L,
     LK,
     {"sus_sync_copy", "nonblocking"},
     NULL,
     2,
     {{FILL, 2, "s", "main", true}, {CRASH, 3, "0", "main", true}}},
    /* s blocking, under the handle of a non-blocking stream destroyed
     * before it (issue 40): the flag is not inherited */
    {"sync copy recycled stream", L, LK, {"sus_sync_copy", "recycled"}, NULL, 1, {{CRASH, 3, "0", "main", true}}},
    /* through _ptds the copy is on the thread's per-thread default stream,
     * which does not wait for s: only that stream is proven */
    {"sync copy ptds",
     P,
     PK,
     {"sus_sync_copy", "blocking"},
     NULL,
     2,
     {{FILL, 2, "s", "main", true}, {CRASH, 3, "0", "main", true}}},
    /* thread A fills and synchronises the default stream, thread B crashes */
    {"threads synced", L, LK, {"sus_threads", "synced"}, NULL, 1, {{CRASH, 2, "0", "B", true}}},
    {"threads synced ptds", P, PK, {"sus_threads", "synced"}, NULL, 1, {{CRASH, 2, "0", "B", true}}},
    /* A does not synchronise: one legacy stream, A's fill prime ... */
    {"threads unsynced",
     L,
     LK,
     {"sus_threads", "unsynced"},
     NULL,
     2,
     {{FILL, 1, "0", "A", true}, {CRASH, 2, "0", "B", false}}},
    /* ... but each thread's own per-thread default stream: two primes */
    {"threads unsynced ptds",
     P,
     PK,
     {"sus_threads", "unsynced"},
     NULL,
     2,
     {{FILL, 1, "0", "A", true}, {CRASH, 2, "0", "B", true}}},
    /* an unproven fill on the primary context; on a created one a proven
     * fill, then crash */
    {"created context", L, LK, {"sus_context"}, NULL, 1, {{CRASH, 3, "0", "main", true}}},
    {"created context runtime", R, LK, {"sus_context"}, NULL, 1, {{CRASH, 3, "0", "main", true}}},
    /* a simulated loss at fill, crash (unproven) before it: only fill */
    {"injected",
     L,
     LK,
     {"sus_queued"},
     "CUTAINT_INJECT=launch:*fill*#1=context_lost",
     1,
     {{FILL, 2, "0", "main", true}}},
    {"injected ptds",
     P,
     PK,
     {"sus_queued"},
     "CUTAINT_INJECT=launch:*fill*#1=context_lost",
     1,
     {{FILL, 2, "0", "main", true}}},
};

/* What the client printed as "KIND NAME=VALUE" (static storage), "" if not. */
static const char *printed(const char *out, const char *kind, const char *name)
{
    static char value[64];
    char key[64];
    snprintf(key, sizeof key, "%s %s=", kind, name);
    const char *line = h_line_containing(out, key);
    const char *v = strstr(line, key);
    snprintf(value, sizeof value, "%s", v ? v + strlen(key) : "");
    value[strcspn(value, "\n")] = '\0';
    return value;
}

static void expect_suspect(const sus_case *c, const h_result *r, const char *obj, int i)
{
    const want *w = &c->want[i];
    cr_expect_str_eq(h_str(obj, "api"), c->api, "%s: suspect %d: %s", c->name, i, obj);
    cr_expect_str_eq(h_str(obj, "kernel"), w->kernel, "%s: suspect %d: %s", c->name, i, obj);
    long long v = -1;
    cr_expect(h_int(obj, "launch", &v) && v == w->launch, "%s: suspect %d is launch %lld, want %d: %s", c->name, i, v,
              w->launch, obj);
    char stream[64];
    snprintf(stream, sizeof stream, "%s", strcmp(w->stream, "0") == 0 ? "0x0" : printed(r->out, "stream", w->stream));
    cr_expect(stream[0] != '\0', "%s: the client printed no stream %s:\n%s", c->name, w->stream, r->out);
    cr_expect_str_eq(h_str(obj, "stream"), stream, "%s: suspect %d, want stream %s: %s", c->name, i, w->stream, obj);
    const char *tid = printed(r->out, "thread", w->thread);
    cr_expect(tid[0] != '\0', "%s: the client printed no thread %s:\n%s", c->name, w->thread, r->out);
    cr_expect_str_eq(h_str(obj, "thread"), tid, "%s: suspect %d, want thread %s: %s", c->name, i, w->thread, obj);
    cr_expect_str_eq(h_str(obj, "prime"), w->prime ? "true" : "false", "%s: suspect %d: %s", c->name, i, obj);
    cr_expect_str_eq(h_str(obj, "graph"), "0x0", "%s: suspect %d: %s", c->name, i, obj);
    cr_expect_str_eq(h_str(obj, "grid"), "[4,1,1]", "%s: suspect %d: %s", c->name, i, obj);
    cr_expect_str_eq(h_str(obj, "block"), "[256,1,1]", "%s: suspect %d: %s", c->name, i, obj);
    char repro[128];
    snprintf(repro, sizeof repro, "compute-sanitizer --tool memcheck --launch-skip %d --launch-count 1 ",
             w->launch - 1);
    const char *got = h_str(obj, "repro");
    cr_expect(strncmp(got, repro, strlen(repro)) == 0 && strstr(got, c->args[0]) != NULL,
              "%s: suspect %d's repro \"%s\", want \"%s... %s\"", c->name, i, got, repro, c->args[0]);
}

ParameterizedTestParameters(suspects, named_exactly)
{
    return H_ROWS(cases);
}

ParameterizedTest(int *row, suspects, named_exactly)
{
    const sus_case *c = &cases[*row];
    h_run run = {.client = c->client, .args = {c->args[0], c->args[1]}, .env = {H_SYNC, c->inject}};

    /* The program alone: crash's launch answers success, the synchronise
     * after it the fault, and it returns 0. */
    h_result alone;
    h_exec_baseline(&(h_run){.client = c->client, .args = {c->args[0], c->args[1]}, .env = {H_SYNC}}, &alone);
    h_expect_ended(&alone);
    cr_expect_eq(alone.status, 0, "%s: the program returns 0 on its own, got %d", c->name, alone.status);
    cr_expect_eq(h_count_containing(alone.out, "launch crash: CUDA_SUCCESS"), 1, "%s:\n%s", c->name, alone.out);
    cr_expect(h_has_line(alone.out, "sync: " ILLEGAL), "%s: baseline:\n%s", c->name, alone.out);
    h_free(&alone);

    h_result r;
    h_exec(&run, &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 70, "%s: exit status %d, want 70\n--- stdout\n%s--- stderr\n%s", c->name, r.status, r.out,
                 r.err);
    cr_expect(h_has_line(r.out, "sync: " ILLEGAL), "%s:\n%s", c->name, r.out);
    if (c->args[1] && strcmp(c->args[1], "recycled") == 0)
        cr_expect(h_has_line(r.out, "handle recycled: yes"), "%s: the driver made a new handle:\n%s", c->name, r.out);
    if (c->inject) {
        cr_expect(h_has_line(r.out, "launch fill y: " ILLEGAL), "%s: the injected launch's answer:\n%s", c->name,
                  r.out);
        cr_expect(strstr(r.err, "the call CUTAINT_INJECT made lose the context"),
                  "%s: the log says the injected call is the suspect:\n%s", c->name, r.err);
    }
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_eq(h_count(&rep, "context_lost"), 1, "%s: events: %s", c->name, h_events(&rep));
    int k = h_find(&rep, "context_lost", 0);
    cr_assert(k >= 0, "%s: no context_lost: %s", c->name, h_events(&rep));
    const char *ev = rep.line[k];
    cr_expect_str_eq(h_str(ev, "simulated"), c->inject ? "true" : "false", "%s", c->name);
    long long total = -1;
    cr_expect(h_int(ev, "suspects_total", &total) && total == c->n, "%s: suspects_total %lld, want %d: %s", c->name,
              total, c->n, ev);
    int n = h_arr_len(ev, "suspects");
    cr_expect_eq(n, c->n, "%s: %d suspects listed, want %d: %s", c->name, n, c->n, ev);
    for (int i = 0; i < n && i < c->n; i++) {
        char *obj = strdup(h_arr_str(ev, "suspects", i)); /* h_str's buffers rotate */
        expect_suspect(c, &r, obj, i);
        free(obj);
    }
    h_report_free(&rep);
    h_free(&r);
}

/* The log names each prime suspect with its compute-sanitizer line, the
 * health file each prime suspect, streams in order; the one behind a prime
 * one is left to the report. */
Test(suspects, log_and_health_file_name_the_prime_ones)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"sus_streams", "unsynced"},
                    .env = {H_SYNC, "CUTAINT_HEALTH_FILE=@DIR@/health"}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 70, "exit status %d\n%s", r.status, r.err);
    char s1[64], s2[64], tid[64], fill_text[256], crash_text[256];
    snprintf(s1, sizeof s1, "%s", printed(r.out, "stream", "s1"));
    snprintf(s2, sizeof s2, "%s", printed(r.out, "stream", "s2"));
    snprintf(tid, sizeof tid, "%s", printed(r.out, "thread", "main"));
    snprintf(fill_text, sizeof fill_text,
             "prime suspect: " FILL " (cuLaunchKernel, launch #1 on stream %s, grid 4x1x1, block 256x1x1, thread %s)",
             s1, tid);
    snprintf(crash_text, sizeof crash_text,
             "prime suspect: " CRASH " (cuLaunchKernel, launch #2 on stream %s, grid 4x1x1, block 256x1x1, thread %s)",
             s2, tid);

    cr_expect_eq(h_count_containing(r.err, "prime suspect: "), 2, "two prime suspects in the log:\n%s", r.err);
    const char *f = strstr(r.err, fill_text), *k = strstr(r.err, crash_text);
    cr_expect(f != NULL, "the log lacks \"%s\":\n%s", fill_text, r.err);
    cr_expect(k != NULL, "the log lacks \"%s\":\n%s", crash_text, r.err);
    cr_expect(f == NULL || k == NULL || f < k, "s1's prime suspect (the older) first:\n%s", r.err);
    const char *const fill_replay[] = {fill_text,
                                       "replay it: compute-sanitizer --tool memcheck --launch-skip 0 "
                                       "--launch-count 1 ",
                                       "sus_streams unsynced", NULL};
    const char *const crash_replay[] = {crash_text,
                                        "replay it: compute-sanitizer --tool memcheck --launch-skip 1 "
                                        "--launch-count 1 ",
                                        "sus_streams unsynced", NULL};
    cr_expect_eq(h_count_lines_with(r.err, fill_replay), 1, "fill's replay line:\n%s", r.err);
    cr_expect_eq(h_count_lines_with(r.err, crash_replay), 1, "crash's replay line:\n%s", r.err);
    cr_expect_eq(h_count_containing(r.err, "launch #3"), 0, "the fill behind s1's prime one is no prime suspect:\n%s",
                 r.err);
    cr_expect_eq(h_count_containing(r.err, "3 suspects in all"), 1, "the count:\n%s", r.err);

    char *health = h_slurp(h_path(&r, "health"));
    cr_assert(health != NULL, "no health file\n%s", r.err);
    cr_expect(strstr(health, ILLEGAL) != NULL, "the reason:\n%s", health);
    cr_expect(h_has_line(health, fill_text), "the health file lacks \"%s\":\n%s", fill_text, health);
    cr_expect(h_has_line(health, crash_text), "the health file lacks \"%s\":\n%s", crash_text, health);
    cr_expect_eq(h_count_containing(health, "prime suspect: "), 2, "%s", health);
    const char *hf = strstr(health, fill_text), *hk = strstr(health, crash_text);
    cr_expect(hf == NULL || hk == NULL || hf < hk, "s1's prime suspect first:\n%s", health);
    free(health);
    h_free(&r);
}

/* A healthy run: no loss, no suspect anywhere. */
Test(suspects, none_when_healthy)
{
    static const char *const clients[] = {CT_CLIENT_LINKED, CT_CLIENT_PTDS, CT_CLIENT_RUNTIME};
    for (size_t i = 0; i < sizeof clients / sizeof clients[0]; i++) {
        h_result r;
        h_exec(&(h_run){.client = clients[i], .args = {"happy"}, .env = {"CUTAINT_HEALTH_FILE=@DIR@/health"}}, &r);
        h_expect_ended(&r);
        cr_expect_eq(r.status, 0, "%s: exit status %d\n%s", clients[i], r.status, r.err);
        cr_expect_eq(h_count_containing(r.err, "suspect"), 0, "%s:\n%s", clients[i], r.err);
        char *health = h_slurp(h_path(&r, "health"));
        cr_expect(health == NULL, "%s: a health file for a healthy run:\n%s", clients[i], health ? health : "");
        free(health);
        h_report rep;
        h_expect_report(&r, &rep);
        cr_expect_str_eq(h_events(&rep), "start,exit", "%s", clients[i]);
        cr_expect(strstr(rep.text, "suspect") == NULL, "%s: %s", clients[i], rep.text);
        h_report_free(&rep);
        h_free(&r);
    }
}

/* A loss first seen by a failing query, or by the check made at exit (a
 * call cutaint does not check, then exit(1)): the latch names the suspects
 * there too (clients/lifecycle.c, loss_then_exit: crash, then one look). */
static const char *const first_seen[] = {"stream", "event", "unwrapped"};

ParameterizedTestParameters(suspects, named_by_a_query_or_at_exit)
{
    return H_ROWS(first_seen);
}

ParameterizedTest(int *row, suspects, named_by_a_query_or_at_exit)
{
    const char *how = first_seen[*row];
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIFECYCLE, .args = {"loss_then_exit", how}, .env = {H_SYNC}}, &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 70, "%s: exit status %d\n%s", how, r.status, r.err);
    h_report rep;
    h_expect_report(&r, &rep);
    int k = h_find(&rep, "context_lost", 0);
    cr_assert(k >= 0, "%s: no context_lost: %s", how, h_events(&rep));
    long long total = -1, launch = -1;
    cr_expect(h_int(rep.line[k], "suspects_total", &total) && total == 1, "%s: %s", how, rep.line[k]);
    cr_expect_eq(h_arr_len(rep.line[k], "suspects"), 1, "%s: %s", how, rep.line[k]);
    char *obj = strdup(h_arr_str(rep.line[k], "suspects", 0));
    cr_expect_str_eq(h_str(obj, "kernel"), CRASH, "%s: %s", how, obj);
    cr_expect(h_int(obj, "launch", &launch) && launch == 1, "%s: %s", how, obj);
    cr_expect_str_eq(h_str(obj, "prime"), "true", "%s: %s", how, obj);
    free(obj);
    h_report_free(&rep);
    h_free(&r);
}
