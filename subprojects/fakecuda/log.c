/*
 * log.c: FAKECUDA_LOG=debug, a trace on stderr of every entry-point call
 * and every private-table request and call, for finding out what a program
 * (NVIDIA's runtime above all) asks of the driver.
 *
 * Invariants: the variable is read once, at the first line that might be
 * logged; with it unset nothing is ever printed and each check is one
 * atomic load. Any other value than "debug" is reported once and ignored.
 */
#include "fakecuda.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static atomic_bool log_debug;

static void fc_log_load(void)
{
#ifndef NDEBUG
    static bool log_read;
    assert(!log_read && "FAKECUDA_LOG is read once");
    log_read = true;
#endif
    const char *env = getenv("FAKECUDA_LOG");
    if (!env || !*env)
        return;
    if (strcmp(env, "debug") == 0)
        atomic_store(&log_debug, true);
    else
        fprintf(stderr, "fakecuda: FAKECUDA_LOG=%s ignored (the only level is 'debug')\n", env);
}

bool fc_debug_on(void)
{
    pthread_once(&log_once, fc_log_load);
    return atomic_load_explicit(&log_debug, memory_order_relaxed);
}

void fc_debug(const char *fmt, ...)
{
    if (!fc_debug_on())
        return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* One fprintf per line, so lines of concurrent threads do not interleave. */
    fprintf(stderr, "fakecuda: %s\n", line);
}
