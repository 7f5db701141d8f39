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
 * - A health file left at the configured path by an earlier process is
 *   removed when this program first reaches the driver (and logged), so a
 *   restarted service is not condemned for its predecessor; a forked child
 *   continues its parent and removes nothing.
 * - After fork, the child's locks are usable and its thread ids fresh; it
 *   has reached the driver only once it calls it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errnames.h"
#include "files.h"
#include "shim.h"

extern char **environ;

ct_shim ct_g;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static atomic_bool reached;          /* this process has reached the driver */
static atomic_bool health_checked;   /* this program image cleared a stale health file */
static pthread_mutex_t reach_lock = PTHREAD_MUTEX_INITIALIZER;

static void env_diag(const char *message, void *ctx)
{
    (void)ctx;
    dprintf(STDERR_FILENO, "==%d== %s\n", (int)getpid(), message);
}

/* Expand %p in a configured path, in place; an impossible path is dropped. */
static void expand_path(char *path, const char *variable)
{
    char expanded[CT_PATH_MAX];
    if (!path[0])
        return;
    if (ct_path_expand(path, getpid(), expanded, sizeof expanded) != 0) {
        dprintf(STDERR_FILENO, "==%d== cutaint: %s is too long once expanded; ignored\n", (int)getpid(), variable);
        path[0] = '\0';
        return;
    }
    memcpy(path, expanded, sizeof expanded);
}

static void clear_old_health_file(void)
{
    if (!ct_g.cfg.health_file[0])
        return;
    if (ct_health_clear(ct_g.cfg.health_file) == 1)
        ct_log(CT_LOG_WARN, "removed the health file %s left by an earlier process", ct_g.cfg.health_file);
}

static void atfork_child(void)
{
    ct_store_atfork_child(ct_g.store);
    ct_kernels_atfork_child();
    ct_graphs_atfork_child();
    ct_memory_atfork_child();
    ct_events_after_fork();
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

static void load(void)
{
    ct_config_load(&ct_g.cfg, &ct_cuda_errors, NULL, env_diag, NULL); /* NULL: getenv */
    ct_config_check_unknown(environ, env_diag, NULL);
    ct_g.latch = ct_latch_global();
    if (ct_g.cfg.disable)
        return;
    ct_g.store = ct_store_new(CUDA_ERROR_UNKNOWN);
    if (!ct_g.store) {
        env_diag("cutaint: out of memory at start; running as a pure pass-through", NULL);
        ct_g.cfg.disable = true;
        return;
    }
    memcpy(ct_g.report_template, ct_g.cfg.report, sizeof ct_g.report_template);
    expand_path(ct_g.cfg.log_file, "CUTAINT_LOG_FILE");
    expand_path(ct_g.cfg.report, "CUTAINT_REPORT");
    expand_path(ct_g.cfg.health_file, "CUTAINT_HEALTH_FILE");
    ct_metrics_configure(ct_g.cfg.metrics_file);
    pthread_atfork(NULL, NULL, atfork_child);
    on_exit(ct_on_exit, NULL);
}

void ct_ensure_ready(void)
{
    if (CT_UNLIKELY(atomic_load_explicit(&ct_g.ready, memory_order_acquire) != 2)) {
        pthread_once(&load_once, load);
        atomic_store_explicit(&ct_g.ready, 2, memory_order_release);
    }
}

/* glibc passes argc/argv to constructors of shared objects. */
__attribute__((constructor)) static void ct_shim_load(int argc, char **argv, char **envp)
{
    (void)envp;
    ct_events_set_argv(argc, argv);
    ct_ensure_ready();
}
