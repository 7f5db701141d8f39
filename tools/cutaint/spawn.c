/*
 * spawn.c - ct_run_execute: the environment for the shim, fork/exec, and
 * waiting with signal forwarding.
 *
 * Owns: LD_PRELOAD / LD_LIBRARY_PATH composition, the temporary report,
 * and cutaint's signal dispositions while the program runs.
 *
 * Invariants:
 * - No shell: the program is exec'd directly from its argv.
 * - The shim goes first in LD_PRELOAD and fakecuda first in LD_LIBRARY_PATH,
 *   ahead of whatever the user already had there.
 * - Relative report, log, health and metrics paths are made absolute, so a program
 *   that changes directory still writes where the user (and the summary)
 *   looks.
 * - CUTAINT_LIB and CUTAINT_FAKECUDA_DIR are the command's own variables:
 *   the program does not inherit them (the shim would call them unknown).
 * - Only signals sent by a process (si_code <= 0) are forwarded: one typed
 *   at the terminal already reached the program's process group, and
 *   forwarding it would deliver it twice.
 * - Exec failure is reported through a close-on-exec pipe, so cutaint
 *   knows the program never started (no report, no summary).
 * - A temporary report no process wrote to (none reached the driver) is
 *   removed; one the user named is always left.
 */
#include "run.h"

#include "config.h"
#include "files.h"
#include "locate.h"
#include "report.h"
#include "textout.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define N_FORWARDED (sizeof forwarded / sizeof forwarded[0])

static volatile sig_atomic_t child_pid;

static void forward(int sig, siginfo_t *info, void *ucontext)
{
    (void)ucontext;
    if (child_pid > 0 && info->si_code <= 0)
        kill((pid_t)child_pid, sig);
}

static void install_forwarding(struct sigaction old[N_FORWARDED])
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaction(forwarded[i], &sa, &old[i]);
}

static void restore_signals(const struct sigaction old[N_FORWARDED])
{
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaction(forwarded[i], &old[i], NULL);
}

/* ---- the environment ------------------------------------------------------ */

static bool absolute(const char *path, char *out, size_t cap)
{
    char cwd[PATH_MAX];
    int n = path[0] == '/' || !getcwd(cwd, sizeof cwd) ? snprintf(out, cap, "%s", path)
                                                       : snprintf(out, cap, "%s/%s", cwd, path);
    return n >= 0 && (size_t)n < cap;
}

/* name=first[:old] */
static bool prepend(const char *name, const char *first)
{
    const char *old = getenv(name);
    size_t n = strlen(first) + (old ? strlen(old) + 1 : 0) + 1;
    char *value = malloc(n);
    if (!value)
        return false;
    snprintf(value, n, "%s%s%s", first, old && *old ? ":" : "", old ? old : "");
    bool ok = setenv(name, value, 1) == 0;
    assert((!ok || strncmp(getenv(name), first, strlen(first)) == 0) && "ours goes ahead of what the user had");
    free(value);
    return ok;
}

/* The report the summary will read: --report, or a new temporary file
 * unless nobody would look at it (--quiet without --error-exitcode). */
static bool choose_report(const ct_run_request *req, char *out, size_t cap)
{
    out[0] = '\0';
    if (req->set[CT_OPT_REPORT])
        return absolute(req->value[CT_OPT_REPORT], out, cap);
    if (req->set[CT_OPT_QUIET] && !req->set[CT_OPT_ERROR_EXITCODE])
        return true;
    const char *dir = getenv("TMPDIR");
    int n = snprintf(out, cap, "%s/cutaint-XXXXXX.jsonl", dir && *dir ? dir : "/tmp");
    if (n < 0 || (size_t)n >= cap)
        return false;
    int fd = mkstemps(out, 6);
    if (fd < 0) {
        fprintf(stderr, "cutaint run: cannot create a report in %s: %s\n", dir && *dir ? dir : "/tmp", strerror(errno));
        return false;
    }
    close(fd);
    return true;
}

static bool is_path_option(int opt)
{
    return opt == CT_OPT_REPORT || opt == CT_OPT_LOG_FILE || opt == CT_OPT_HEALTH_FILE || opt == CT_OPT_METRICS_FILE;
}

static bool set_option_variables(const ct_run_request *req, const char *report)
{
    char path[PATH_MAX];
    for (int i = 0; i < CT_RUN_OPTS; i++) {
        const char *env = ct_run_option_env((ct_run_opt)i);
        const char *value = req->value[i];
        if (!env || !req->set[i] || i == CT_OPT_REPORT)
            continue;
        if (is_path_option(i) && absolute(value, path, sizeof path))
            value = path;
        if (setenv(env, value, 1) != 0)
            return false;
    }
    return !*report || setenv("CUTAINT_REPORT", report, 1) == 0;
}

/* A preload list separates entries with ':' or ' '; a path holding either
 * cannot be put in it. */
static bool preloadable(const char *lib)
{
    if (!strpbrk(lib, ": "))
        return true;
    fputs("cutaint run: cannot preload ", stderr);
    ct_put_text(stderr, lib, "");
    fputs(": LD_PRELOAD cannot hold a path with ':' or ' ' (set CUTAINT_LIB)\n", stderr);
    return false;
}

static int prepare_environment(const ct_run_request *req, char *report, size_t cap)
{
    const char *lib = ct_locate(&ct_place_shim);
    if (!lib || !preloadable(lib))
        return 2;
    char lib_abs[PATH_MAX];
    const char *fake = req->set[CT_OPT_FAKECUDA] ? ct_locate(&ct_place_fakecuda) : NULL;
    if (req->set[CT_OPT_FAKECUDA] && !fake)
        return 2;
    if (!absolute(lib, lib_abs, sizeof lib_abs) || !choose_report(req, report, cap))
        return 2;
    bool ok = prepend("LD_PRELOAD", lib_abs) && set_option_variables(req, report) &&
              (!fake || prepend("LD_LIBRARY_PATH", fake));
    if (!ok) {
        fprintf(stderr, "cutaint run: cannot set the environment: %s\n", strerror(errno));
        return 2;
    }
    unsetenv(ct_place_shim.env);
    unsetenv(ct_place_fakecuda.env);
    assert(!getenv(ct_place_shim.env) && !getenv(ct_place_fakecuda.env) && "the program does not inherit these");
    return 0;
}

/* No process of the run reached the driver: the temporary report stayed
 * empty, and nobody will want it. */
static void remove_if_empty(ct_run_outcome *out)
{
    struct stat st;
    if (stat(out->report, &st) == 0 && st.st_size == 0 && unlink(out->report) == 0) {
        out->report[0] = out->report_template[0] = '\0';
        out->report_removed = true;
        out->report_temporary = false;
    }
}

/* ---- fork, exec, wait -------------------------------------------------- */

static void exec_child(char **program, int report_fd)
{
    assert(program && program[0] && "no shell: the program's own argv");
    execvp(program[0], program);
    int err = errno;
    if (write(report_fd, &err, sizeof err) < 0)
        _exit(127);
    _exit(err == ENOENT ? 127 : 126);
}

/* 0 if the program started, else the errno that stopped it. */
static int started(int fd)
{
    int err = 0;
    ssize_t n;
    do
        n = read(fd, &err, sizeof err);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof err ? err : 0;
}

static int wait_child(pid_t pid, ct_run_outcome *out)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return errno;
    out->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    out->status = out->program_status = out->signal ? 128 + out->signal : WEXITSTATUS(status);
    return 0;
}

static int cannot_execute(const char *program, int err)
{
    fputs("cutaint run: cannot execute ", stderr);
    ct_put_text(stderr, program, "");
    fprintf(stderr, ": %s\n", strerror(err));
    return err == ENOENT ? 127 : 126;
}

static int spawn(char **program, ct_run_outcome *out)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return cannot_execute(program[0], errno);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return cannot_execute(program[0], errno);
    }
    if (pid == 0) {
        close(pipefd[0]);
        exec_child(program, pipefd[1]);
    }
    child_pid = pid;
    out->pid = pid;
    close(pipefd[1]);
    int err = started(pipefd[0]);
    close(pipefd[0]);
    int waited = wait_child(pid, out);
    child_pid = 0;
    if (err)
        return cannot_execute(program[0], err);
    out->ran = waited == 0;
    return waited ? cannot_execute(program[0], waited) : 0;
}

int ct_run_execute(const ct_run_request *req, ct_run_outcome *out)
{
    char report[PATH_MAX];
    struct sigaction old[N_FORWARDED];
    memset(out, 0, sizeof *out);
    int rc = prepare_environment(req, report, sizeof report);
    if (rc)
        return rc;
    install_forwarding(old);
    snprintf(out->report_template, sizeof out->report_template, "%s", report);
    clock_gettime(CLOCK_REALTIME_COARSE, &out->began);
    rc = spawn(req->program, out);
    restore_signals(old);
    if (rc && *report && !req->set[CT_OPT_REPORT])
        unlink(report); /* the program never ran: nothing will ever be in it */
    if (!rc && *report && ct_path_expand(report, (pid_t)out->pid, out->report, sizeof out->report) != 0)
        snprintf(out->report, sizeof out->report, "%s", report);
    out->report_temporary = !rc && *report && !req->set[CT_OPT_REPORT];
    if (out->report_temporary)
        remove_if_empty(out);
    assert(!(out->report_removed && req->set[CT_OPT_REPORT]) && "a report the user named is always left");
    assert(!(rc && out->ran) && "a program that did not start has no outcome");
    return rc;
}
