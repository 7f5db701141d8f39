/*
 * host.c - programs that do to their own process what real programs do,
 * for test_host.c: cutaint must never write into their files, follow their
 * chdir(), or hang their exit.  `client_host SCENARIO [ARG...]`; linked with
 * -lcuda.  Each prints the client.h lines the tests read.
 *
 *   close_stderr FILE     closes fd 2, opens FILE (it becomes fd 2), then a
 *                         failed launch read back (cutaint logs)
 *   close_fds FILE        after the first driver call closes every fd >= 3,
 *                         opens FILE (it becomes fd 3), then the same
 *   chdir_crash DIR       mkdir and chdir(DIR), then a kernel destroys the context
 *   sigterm_in_event      a SIGTERM handler calls exit(3); a failed launch
 *                         (CUTAINT_INJECT) makes cutaint write its metrics,
 *                         where the test's rename(2) hook raises SIGTERM
 *   sigterm_in_hostfn     the same handler; a host function the driver runs
 *                         inside cuStreamSynchronize raises SIGTERM
 *   fork_fail N           N forked children each fail a launch and read it
 *   fork_reread           a failed launch read back, then again by a forked
 *                         child
 *   fork_crash            a forked child's kernel destroys the context; the
 *                         parent waits for it, prints its status and runs on
 *   disk_full_midline B   once the report holds its start event, a file size
 *                         limit (RLIMIT_FSIZE, SIGXFSZ ignored) leaves B more
 *                         bytes, as a full disk would: a failed launch read
 *                         back; then the limit lifted (space came back) and
 *                         another
 *   secure                a failed launch read back, and what the loader
 *                         said of secure execution (AT_SECURE)
 *   read_unwritable       a refused read into a read-only page and into a
 *                         PROT_NONE page (as cuMemcpy and cuMemcpyDtoH):
 *                         poisoning must not fault
 */
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"

#define N 1024
#define BYTES (N * sizeof(float))

static CUcontext ctx;
static CUfunction k_fill, k_crash;

static void setup(void)
{
    CUmodule mod;
    client_primary_and_module(&ctx, &mod);
    check("fill", cuModuleGetFunction(&k_fill, mod, "_Z4fillPfif"));
    check("crash", cuModuleGetFunction(&k_crash, mod, "_Z5crashPf"));
}

/* fill(x) with a block of `block` threads (2048 fails at launch). */
static CUresult fill(CUdeviceptr x, unsigned block)
{
    int n = N;
    float v = 7.0f;
    void *params[] = {&x, &n, &v};
    return cuLaunchKernel(k_fill, (N + block - 1) / block, 1, 1, block, 1, 1, 0, NULL, params, NULL);
}

static void read_back(const char *label, CUdeviceptr x)
{
    unsigned char host[BYTES];
    memset(host, 0x11, sizeof host);
    describe(label, cuMemcpyDtoH(host, x, BYTES), host, BYTES);
}

/* A launch that fails, its output read back: cutaint refuses the read. */
static void failed_launch_read(const char *label)
{
    CUdeviceptr x;
    check("cuMemAlloc", cuMemAlloc(&x, BYTES));
    say("launch fill x", fill(x, 2048));
    read_back(label, x);
    say("free", cuMemFree(x));
}

static int sc_close_stderr(int argc, char **argv)
{
    if (argc < 1)
        return 2;
    close(STDERR_FILENO);
    int fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    printf("data file fd %d\n", fd);
    failed_launch_read("x");
    return 0;
}

static int sc_close_fds(int argc, char **argv)
{
    if (argc < 1)
        return 2;
    /* A daemon's habit: nothing inherited stays open (fd 0-2 kept). */
    for (int fd = 3; fd < 4096; fd++)
        close(fd);
    int fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    printf("data file fd %d\n", fd);
    failed_launch_read("x");
    return 0;
}

static int sc_chdir_crash(int argc, char **argv)
{
    if (argc < 1 || (mkdir(argv[0], 0755) != 0 && errno != EEXIST) || chdir(argv[0]) != 0)
        return 2;
    CUdeviceptr x;
    check("cuMemAlloc", cuMemAlloc(&x, BYTES));
    void *params[] = {&x};
    say("launch crash", cuLaunchKernel(k_crash, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    say("sync", cuCtxSynchronize());
    return 0;
}

static void exit_on_term(int sig)
{
    (void)sig;
    exit(3); /* not async-signal-safe, and common: the hazard under test */
}

static int sc_sigterm_in_event(int argc, char **argv)
{
    (void)argc, (void)argv;
    signal(SIGTERM, exit_on_term);
    failed_launch_read("x");
    return 0;
}

static void CUDA_CB raise_term(void *user)
{
    (void)user;
    raise(SIGTERM);
}

static int sc_sigterm_in_hostfn(int argc, char **argv)
{
    (void)argc, (void)argv;
    signal(SIGTERM, exit_on_term);
    CUstream s;
    check("cuStreamCreate", cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    say("host function", cuLaunchHostFunc(s, raise_term, NULL));
    say("sync", cuStreamSynchronize(s));
    return 0;
}

static int sc_fork_fail(int argc, char **argv)
{
    int n = argc > 0 ? atoi(argv[0]) : 2;
    failed_launch_read("parent");
    for (int i = 0; i < n; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            failed_launch_read("child");
            _exit(0);
        }
        int status;
        waitpid(pid, &status, 0);
    }
    return 0;
}

/* A failed launch read back, then read again by a forked child. */
static int sc_fork_reread(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x;
    check("cuMemAlloc", cuMemAlloc(&x, BYTES));
    say("launch fill x", fill(x, 2048));
    read_back("parent", x);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        read_back("child", x);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    return 0;
}

/* The parent reached the driver before it forked (it holds its own context
 * and health file path); only the child loses its context. */
static int sc_fork_crash(int argc, char **argv)
{
    (void)argc, (void)argv;
    failed_launch_read("parent");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        CUdeviceptr x;
        check("cuMemAlloc", cuMemAlloc(&x, BYTES));
        void *params[] = {&x};
        say("child launch crash", cuLaunchKernel(k_crash, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
        say("child sync", cuCtxSynchronize());
        exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("child %d exited %d\n", (int)pid, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    failed_launch_read("parent again");
    return 0;
}

static int sc_disk_full_midline(int argc, char **argv)
{
    const char *report = getenv("CUTAINT_REPORT");
    struct stat st;
    struct rlimit lim;
    if (argc < 1 || !report || getrlimit(RLIMIT_FSIZE, &lim) != 0)
        return 2;
    CUdeviceptr x;
    check("cuMemAlloc", cuMemAlloc(&x, BYTES)); /* the start event is written */
    if (stat(report, &st) != 0)
        return 2;
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = {(rlim_t)st.st_size + (rlim_t)atoi(argv[0]), lim.rlim_max};
    if (setrlimit(RLIMIT_FSIZE, &small) != 0)
        return 2;
    failed_launch_read("x");
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
        return 2;
    failed_launch_read("y");
    return 0;
}

static int sc_secure(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("secure %lu euid %d\n", getauxval(AT_SECURE), (int)geteuid());
    failed_launch_read("x");
    return 0;
}

static int sc_read_unwritable(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x;
    check("cuMemAlloc", cuMemAlloc(&x, BYTES));
    say("launch fill x", fill(x, 2048));
    void *ro = mmap(NULL, BYTES, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *none = mmap(NULL, BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ro == MAP_FAILED || none == MAP_FAILED)
        return 3;
    say("read x into a read-only page", cuMemcpyDtoH(ro, x, BYTES));
    say("copy x to a PROT_NONE page", cuMemcpy((CUdeviceptr)(uintptr_t)none, x, BYTES));
    printf("still here\n");
    return 0;
}

static const client_scenario scenarios[] = {
    {"read_unwritable", sc_read_unwritable},
    {"close_stderr", sc_close_stderr},
    {"close_fds", sc_close_fds},
    {"chdir_crash", sc_chdir_crash},
    {"sigterm_in_event", sc_sigterm_in_event},
    {"sigterm_in_hostfn", sc_sigterm_in_hostfn},
    {"fork_fail", sc_fork_fail},
    {"fork_reread", sc_fork_reread},
    {"fork_crash", sc_fork_crash},
    {"disk_full_midline", sc_disk_full_midline},
    {"secure", sc_secure},
};

int main(int argc, char **argv)
{
    return client_main(argc, argv, scenarios, sizeof scenarios / sizeof scenarios[0], setup);
}
