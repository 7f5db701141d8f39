/*
 * test_perf.c - the happy path makes no heap allocation and no system call
 * inside cutaint (docs/PERFORMANCE.md).
 *
 * perf_client makes 1000 launches, 1000 DtoH and 1000 HtoD copies of each
 * kind between marker system calls, once with LD_PRELOAD=counter and once
 * with LD_PRELOAD=counter:libcutaint.so.  This test runs it under ptrace
 * (PTRACE_GET_SYSCALL_INFO: no architecture-specific registers) and counts
 * the system calls its thread enters between the markers; counter.c counts
 * the heap allocations.  fakecuda does work of its own (it may allocate or
 * lock), so the test compares: with cutaint, both counts must be exactly
 * what they are without it.
 *
 * Two regimes: no taint anywhere, and taint on an unrelated buffer.  Where
 * ptrace is not permitted (some containers), the system call half is
 * skipped with a message; the allocation half still runs.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf_marks.h"

typedef struct counts {
    bool traced; /* system calls were counted */
    long syscalls[PERF_N_OPS];
    long allocs[PERF_N_OPS];
    int exit_status;
} counts;

static void parse_output(const char *out, counts *c)
{
    for (int op = 0; op < PERF_N_OPS; op++) {
        char key[32];
        snprintf(key, sizeof key, "op=%s allocs=", perf_op_names[op]);
        const char *at = strstr(out, key);
        c->allocs[op] = at ? atol(at + strlen(key)) : -1;
    }
}

/* Run the client with LD_PRELOAD=preload, counting system calls between the
 * markers when ptrace allows. */
static counts run_client(const char *preload, bool taint)
{
    counts c = {0};
    int out[2];
    cr_assert_eq(pipe(out), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        setenv("LD_PRELOAD", preload, 1);
        setenv("LD_LIBRARY_PATH", PERF_FAKECUDA_DIR, 1);
        setenv("CUTAINT_LOG", "off", 1);
        unsetenv("CUTAINT_REPORT");
        /* The metrics file is written at events and exit only: on, it must
         * add nothing to the happy path either. */
        setenv("CUTAINT_METRICS_FILE", "/tmp/cutaint-perf-%p.prom", 1);
        bool traced = ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0;
        if (traced)
            raise(SIGSTOP);
        char *argv[] = {(char *)PERF_CLIENT, taint ? (char *)"--taint" : NULL, NULL};
        execv(PERF_CLIENT, argv);
        _exit(127);
    }
    close(out[1]);

    char metrics[64];
    snprintf(metrics, sizeof metrics, "/tmp/cutaint-perf-%ld.prom", (long)pid);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    c.traced = WIFSTOPPED(status);
    int region = -1;
    if (c.traced) {
        ptrace(PTRACE_SETOPTIONS, pid, NULL,
               (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC));
        int deliver = 0;
        for (;;) {
            if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)deliver) != 0)
                break;
            deliver = 0;
            if (waitpid(pid, &status, 0) != pid || WIFEXITED(status) || WIFSIGNALED(status))
                break;
            if (!WIFSTOPPED(status))
                continue;
            int sig = WSTOPSIG(status);
            if (sig == (SIGTRAP | 0x80)) {
                struct __ptrace_syscall_info info;
                memset(&info, 0, sizeof info);
                if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof info, &info) <= 0 ||
                    info.op != PTRACE_SYSCALL_INFO_ENTRY)
                    continue;
                bool is_mark = info.entry.nr == SYS_write && (int)info.entry.args[0] == -1;
                long code = (long)info.entry.args[2];
                if (is_mark && code >= PERF_MARK_BEGIN && code < PERF_MARK_BEGIN + PERF_N_OPS)
                    region = (int)(code - PERF_MARK_BEGIN);
                else if (is_mark && code >= PERF_MARK_END && code < PERF_MARK_END + PERF_N_OPS)
                    region = -1;
                else if (region >= 0)
                    c.syscalls[region]++;
            } else if (sig != SIGTRAP) {
                deliver = sig; /* the program's own signal */
            }
        }
    }
    if (!WIFEXITED(status) && !WIFSIGNALED(status))
        waitpid(pid, &status, 0);
    c.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

    char buf[4096];
    size_t len = 0;
    ssize_t n;
    while (len < sizeof buf - 1 && (n = read(out[0], buf + len, sizeof buf - 1 - len)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    close(out[0]);
    parse_output(buf, &c);
    cr_log_info("preload=%s taint=%d traced=%d: %s", preload, taint, c.traced, buf);
    unlink(metrics);
    return c;
}

static void compare(bool taint)
{
    counts without = run_client(PERF_COUNTER, taint);
    counts with = run_client(PERF_COUNTER ":" PERF_SHIM, taint);
    cr_assert_eq(without.exit_status, 0, "perf_client without cutaint exited %d", without.exit_status);
    cr_assert_eq(with.exit_status, 0, "perf_client under cutaint exited %d", with.exit_status);
    for (int op = 0; op < PERF_N_OPS; op++) {
        cr_assert_geq(without.allocs[op], 0, "no allocation count for %s", perf_op_names[op]);
        cr_expect_eq(with.allocs[op], without.allocs[op],
                     "%s (taint elsewhere: %s): 1000 calls made %ld heap allocations under cutaint, "
                     "%ld without it",
                     perf_op_names[op], taint ? "yes" : "no", with.allocs[op], without.allocs[op]);
        if (with.traced && without.traced)
            cr_expect_eq(with.syscalls[op], without.syscalls[op],
                         "%s (taint elsewhere: %s): 1000 calls made %ld system calls under cutaint, "
                         "%ld without it",
                         perf_op_names[op], taint ? "yes" : "no", with.syscalls[op], without.syscalls[op]);
    }
    if (without.traced)
        cr_assert_eq(without.syscalls[PERF_OP_CONTROL], 1000,
                     "the tracer counted %ld of the control's 1000 system calls", without.syscalls[PERF_OP_CONTROL]);
    for (int op = 0; op < PERF_N_OPS; op++)
        cr_log_info("%s taint=%d: syscalls without %ld, with %ld; allocations without %ld, with %ld", perf_op_names[op],
                    taint, without.syscalls[op], with.syscalls[op], without.allocs[op], with.allocs[op]);
    if (!with.traced || !without.traced)
        cr_log_warn("ptrace is not permitted here: system calls were not counted");
}

Test(perf, happy_path_adds_no_allocation_or_syscall, .timeout = 60)
{
    compare(false);
}

Test(perf, taint_elsewhere_adds_no_allocation_or_syscall, .timeout = 60)
{
    compare(true);
}
