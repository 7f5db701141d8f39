/*
 * init.c - the shim's life: configuration at load, fork, exit.
 *
 * Configuration is read once, in the constructor (or by whichever wrapper
 * runs first, should another library's constructor call the driver before
 * ours ran); the hot path never calls getenv.  Loading makes no CUDA call:
 * the driver is loaded lazily by the first wrapper that needs it.
 *
 * Under `cutaint run` or a cluster-wide preload every process of a job loads
 * the shim - sh, ls, a compiler, nvidia-smi.  Loading therefore touches no
 * file: the report, the log file and the health file are dealt with when a
 * process first reaches the driver (ct_reached_driver), so a process that
 * never calls it leaves no trace.
 *
 * Invariants:
 * - A malformed variable is reported once and left at its default.
 * - Under secure execution (AT_SECURE: a setuid or setgid program) no
 *   CUTAINT_ variable is read, as glibc ignores its own (secure_getenv): an
 *   unprivileged user must not choose where a privileged program writes.
 * - Every output path is made absolute once, at load, against the working
 *   directory then: a later chdir() of the program moves none of them.
 * - %p in an output path is the pid of the process that writes it: the
 *   four paths are expanded from their templates at load and again in
 *   every forked child (output_paths), before anything there writes.
 * - A health file left at the configured path by an earlier process is
 *   removed when this program first reaches the driver (and logged), so a
 *   restarted service is not condemned for its predecessor; only a regular
 *   file that starts with cutaint's marker is, whoever owns it: anything
 *   else is left untouched, with one line.  A forked child continues its
 *   parent and removes nothing.
 * - After fork, the child's locks are usable and its thread ids fresh; it
 *   has reached the driver only once it calls it.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "errnames.h"
#include "files.h"
#include "flight.h"
#include "shim.h"

extern char **environ;

/* No store's gate until init makes the store: no thread's slot passes it. */
ct_shim ct_g = {.scope_gate = {CT_SCOPE_NO_STORE, NULL, NULL}};
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static atomic_bool reached;        /* this process has reached the driver */
static atomic_bool health_checked; /* this program image cleared a stale health file */
static pthread_mutex_t reach_lock = PTHREAD_MUTEX_INITIALIZER;

static void env_diag(const char *message, void *ctx)
{
    (void)ctx;
    ct_stderr_line(message);
}

static const char *secure_get(const char *name, void *ctx)
{
    (void)ctx;
    const char *value = secure_getenv(name);
    assert((!value || getauxval(AT_SECURE) == 0) && "no CUTAINT_ variable is read under secure execution");
    return value;
}

/* A configured path made absolute against cwd; one that cannot be is
 * dropped with a line. */
static void absolute_path(char *path, const char *cwd, const char *variable)
{
    char resolved[CT_PATH_MAX], line[256];
    if (!path[0] || ct_path_absolute(path, cwd, resolved, sizeof resolved) == 0) {
        if (path[0])
            memcpy(path, resolved, sizeof resolved);
        return;
    }
    snprintf(line, sizeof line, "cutaint: %s is relative and the working directory is %s; ignored", variable,
             cwd ? "too long to prefix" : "unknown");
    ct_stderr_line(line);
    path[0] = '\0';
}

/* The output paths whose %p names the process: each variable's value made
 * absolute at load, before %p, kept here; load, then every forked child,
 * expands them all into ct_g.cfg, where every writer reads its path.  One
 * table, so no output can miss a fork. */
static const struct output_path {
    const char *variable;
    char *path; /* in ct_g.cfg */
} output_paths[] = {
    {"CUTAINT_LOG_FILE", ct_g.cfg.log_file},
    {"CUTAINT_REPORT", ct_g.cfg.report},
    {"CUTAINT_HEALTH_FILE", ct_g.cfg.health_file},
    {"CUTAINT_METRICS_FILE", ct_g.cfg.metrics_file},
};
#define N_OUTPUT_PATHS (sizeof output_paths / sizeof output_paths[0])
static char path_templates[N_OUTPUT_PATHS][CT_PATH_MAX];

/* Each output path made absolute against cwd and kept as its template. */
static void resolve_paths(void)
{
    char cwd[CT_PATH_MAX];
    const char *at = getcwd(cwd, sizeof cwd);
    for (size_t i = 0; i < N_OUTPUT_PATHS; i++) {
        absolute_path(output_paths[i].path, at, output_paths[i].variable);
        assert((!output_paths[i].path[0] || output_paths[i].path[0] == '/') &&
               "every output path is made absolute at load, or dropped");
        memcpy(path_templates[i], output_paths[i].path, CT_PATH_MAX);
    }
}

/* %p in each template becomes this process's pid; a path that no longer
 * fits is dropped with a line. */
static void expand_paths(void)
{
    char line[256];
    for (size_t i = 0; i < N_OUTPUT_PATHS; i++) {
        char *path = output_paths[i].path;
        if (!path_templates[i][0] || ct_path_expand(path_templates[i], getpid(), path, CT_PATH_MAX) == 0)
            continue;
        path[0] = '\0';
        snprintf(line, sizeof line, "cutaint: %s is too long once expanded; ignored", output_paths[i].variable);
        ct_stderr_line(line);
    }
}

/* Also sweeps the temporaries killed processes left in the directories of
 * the health and metrics files, whatever %p made their names. */
static void clear_old_health_file(void)
{
    const char *health = ct_g.cfg.health_file;
    if (health[0]) {
        char why[CT_WHY_MAX] = "";
        int rc = ct_marked_clear(health, CT_HEALTH_MARKER, why, sizeof why);
        if (rc == 1)
            ct_log(CT_LOG_WARN, "removed the health file %s left by an earlier process", health);
        else if (rc < 0)
            ct_log(CT_LOG_WARN, "CUTAINT_HEALTH_FILE %s %s: it is left untouched, and is no health file of cutaint's",
                   health, why);
        ct_marked_sweep(health);
    }
    if (ct_g.cfg.metrics_file[0])
        ct_marked_sweep(ct_g.cfg.metrics_file);
}

/* Secure execution: said once when the environment holds CUTAINT_ variables. */
static void tell_secure(void)
{
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "CUTAINT_", 8) == 0) {
            ct_stderr_line("cutaint: secure execution (a setuid or setgid program): every CUTAINT_ variable "
                           "is ignored");
            return;
        }
}

/* Injection rules for entry points cutaint does not wrap can never fire. */
static void tell_unreachable_rules(void)
{
    const char *names[2 * CT_N_ENTRIES];
    for (int i = 0; i < CT_N_ENTRIES; i++) {
        names[2 * i] = ct_entries[i].name;
        names[2 * i + 1] = ct_entries[i].family;
    }
    for (unsigned i = 0; i < ct_g.cfg.inject.n; i++) {
        const ct_inject_rule *rule = &ct_g.cfg.inject.rule[i];
        if (!ct_inject_rule_unreachable(rule, names, 2 * CT_N_ENTRIES))
            continue;
        char line[CT_PATTERN_MAX + 160];
        snprintf(line, sizeof line,
                 "cutaint: CUTAINT_INJECT rule api:%s can never fire: cutaint wraps no entry "
                 "point or family of that name",
                 rule->pattern);
        ct_stderr_line(line);
    }
}

static void atfork_child(void)
{
    ct_g.forked = true;
    ct_store_atfork_child(ct_g.store);
    ct_lifetimes_atfork_child(ct_g.contexts);
    ct_lifetimes_atfork_child(ct_g.images);
    ct_lifetimes_atfork_child(ct_g.execs);
    ct_lifetimes_atfork_child(ct_g.events);
    ct_lifetimes_atfork_child(ct_g.streams);
    ct_reported_atfork_child(ct_g.reported);
    ct_kernels_atfork_child();
    ct_images_atfork_child();
    ct_stand_ins_atfork_child();
    ct_inflight_atfork_child();
    ct_graphs_atfork_child();
    ct_memory_atfork_child();
    ct_events_after_fork();
    expand_paths(); /* after the line above: stderr's lock is the child's */
    ct_events_follow_paths();
    ct_metrics_atfork_child();
    pthread_mutex_init(&reach_lock, NULL);
    atomic_store(&reached, false);
    ct_driver_atfork_child();
}

/* A second thread arriving while the first writes the start event waits for
 * it, so no event of this process can precede its start. */
void ct_reached_driver(int driver_version)
{
    if (atomic_load_explicit(&reached, memory_order_acquire) || ct_g.cfg.disable)
        return;
    pthread_mutex_lock(&reach_lock);
    if (!atomic_load_explicit(&reached, memory_order_relaxed)) {
        if (!atomic_exchange(&health_checked, true)) {
            clear_old_health_file();
            ct_chain_check_order();
        }
        ct_event_start(driver_version);
        atomic_store_explicit(&reached, true, memory_order_release);
    }
    pthread_mutex_unlock(&reach_lock);
}

bool ct_was_reached(void)
{
    return atomic_load_explicit(&reached, memory_order_acquire);
}

static void load(void)
{
    ct_log_stderr_at_load();
    bool secure = getauxval(AT_SECURE) != 0;
    ct_config_load(&ct_g.cfg, &ct_cuda_errors, secure_get, env_diag, NULL);
    if (secure)
        tell_secure();
    else
        ct_config_check_unknown(environ, env_diag, NULL);
    tell_unreachable_rules();
    ct_g.latch = ct_latch_global();
    if (ct_g.cfg.disable)
        return;
    ct_g.store = ct_store_new(CUDA_ERROR_UNKNOWN);
    ct_g.summary = ct_store_summary(ct_g.store);
    ct_g.scope_gate = ct_store_scope_gate(ct_g.store);
    ct_g.flight = ct_flight_new(ct_inflight_streams);
    ct_g.reported = ct_reported_new(); /* NULL: no devInfo is ever checked */
    ct_g.contexts = ct_lifetimes_new();
    ct_g.images = ct_lifetimes_new();
    ct_g.execs = ct_lifetimes_new();
    ct_g.events = ct_lifetimes_new();
    ct_g.streams = ct_lifetimes_new();
    if (!ct_g.store || !ct_g.flight || !ct_g.contexts || !ct_g.images || !ct_g.execs || !ct_g.events || !ct_g.streams) {
        env_diag("cutaint: out of memory at start; running as a pure pass-through", NULL);
        ct_g.cfg.disable = true;
        return;
    }
    resolve_paths();
    expand_paths();
    ct_events_configure();
    pthread_atfork(NULL, NULL, atfork_child);
    on_exit(ct_on_exit, NULL);
}

void ct_ensure_ready_slow(void)
{
    pthread_once(&load_once, load);
    atomic_store_explicit(&ct_g.ready, 2, memory_order_release);
}

/* glibc passes argc/argv to constructors of shared objects. */
__attribute__((constructor)) static void ct_shim_load(int argc, char **argv, char **envp)
{
    (void)envp;
    ct_events_set_argv(argc, argv);
    ct_ensure_ready();
    if (!ct_g.cfg.disable) {
        ct_chain_arm_bypass_check();
        ct_arm_exit_check();
    }
}
