/*
 * exit_on_signal.c: a program whose SIGTERM handler calls exit(), killed
 * at a random moment while it works on the asynchronous schedule, always
 * ends: fakecuda's destructor never waits for what the interrupted thread
 * holds (queue.c, fc_queue_shutdown), as a driver would not.
 *
 * Run bare, it runs itself RUNS times as "work" (no shim), sends SIGTERM
 * between 0 and 3 ms after the work began, and gives each run HANG_MS to
 * end with the handler's status; one that does not is a hang, killed.
 * HANG_MS is far above a run's time (milliseconds) because a run starved
 * of CPU on a loaded machine once took over 3 s: a hang is for ever.
 * Exit status 0 only if every run ended with the handler's status (it
 * stops early at ENOUGH_HANGS hangs).
 */
#include <cuda.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUNS 200
#define HANG_MS 10000
#define ENOUGH_HANGS 10 /* then it stops: red is red, and each hang costs HANG_MS */
#define HANDLER_STATUS 3
#define READY_FD 3 /* the work says on it that it started */

static void exit_on_term(int sig)
{
    (void)sig;
    exit(HANDLER_STATUS); /* not async-signal-safe, and common: the hazard under test */
}

static void CUDA_CB nothing(void *user)
{
    (void)user;
}

static void need(const char *what, CUresult r)
{
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "work: %s failed: %d\n", what, (int)r);
        _exit(1);
    }
}

/* Queues work and waits for it, forever: the signal lands in a call, in a
   wait, or between calls, while the worker runs items. */
static int work(void)
{
    CUcontext ctx;
    CUstream s;
    CUdeviceptr d;
    static unsigned char host[4096];
    signal(SIGTERM, exit_on_term);
    need("cuInit", cuInit(0));
    need("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, 0));
    need("cuCtxSetCurrent", cuCtxSetCurrent(ctx));
    need("cuStreamCreate", cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    need("cuMemAlloc", cuMemAlloc(&d, sizeof host));
    need("cuStreamSynchronize", cuStreamSynchronize(s));
    if (write(READY_FD, "r", 1) != 1)
        _exit(1);
    for (unsigned i = 0;; i++) {
        cuMemsetD8Async(d, (unsigned char)i, sizeof host, s);
        cuLaunchHostFunc(s, nothing, NULL);
        cuMemcpyDtoHAsync(host, d, sizeof host, s);
        cuStreamQuery(s);
        if (i % 4 == 0)
            cuStreamSynchronize(s);
        if (i % 16 == 0) {
            CUdeviceptr t;
            if (cuMemAlloc(&t, 256) == CUDA_SUCCESS)
                cuMemFree(t);
        }
    }
}

static void sleep_us(long us)
{
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* Whether pid ended within ms (1), not (0), or cannot be waited for (-1);
 * *status is its wait status when it ended. */
static int ended_within(pid_t pid, long ms, int *status)
{
    for (long until = now_ms() + ms;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return 1;
        if (r < 0)
            return -1;
        if (now_ms() > until)
            return 0;
        sleep_us(200);
    }
}

static pid_t start_work(const char *self, int *ready)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        if (dup2(fds[1], READY_FD) < 0)
            _exit(1);
        setenv("FAKECUDA_SCHEDULE", "async", 1);
        execl(self, self, "work", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    *ready = fds[0];
    return pid;
}

/* One run: 1 if it ended with the handler's status, 0 if it hung, -1 otherwise. */
static int one_run(const char *self, unsigned *seed)
{
    int ready, status = 0;
    pid_t pid = start_work(self, &ready);
    if (pid < 0)
        return -1;
    struct pollfd p = {.fd = ready, .events = POLLIN};
    char byte;
    int started = poll(&p, 1, HANG_MS) == 1 && read(ready, &byte, 1) == 1;
    close(ready);
    if (started) {
        sleep_us(rand_r(seed) % 3000);
        kill(pid, SIGTERM);
    }
    int ended = ended_within(pid, HANG_MS, &status);
    if (ended == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return 0;
    }
    if (!started || ended < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != HANDLER_STATUS) {
        fprintf(stderr, "a run %s with wait status 0x%x\n", started ? "ended" : "never started", status);
        return -1;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "work") == 0)
        return work();
    unsigned seed = (unsigned)time(NULL), hung = 0, other = 0;
    int runs = 0;
    while (runs < RUNS && hung < ENOUGH_HANGS) {
        int r = one_run("/proc/self/exe", &seed);
        hung += r == 0;
        other += r < 0;
        runs++;
    }
    printf("%d runs whose SIGTERM handler calls exit(): %u hung (killed after %d ms), %u ended otherwise\n", runs, hung,
           HANG_MS, other);
    return hung || other ? 1 : 0;
}
