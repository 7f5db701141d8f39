/*
 * scratch.c - each thread's scratch: the room a call needs only when
 * something is wrong or unusual (a launch's decoded bindings while taint
 * exists, a pitched copy's many rows), kept off the wrappers' stacks and out
 * of the static TLS block every thread of the program pays for.
 *
 * Invariants:
 * - Allocated the first time its thread needs it: a thread that never does
 *   never allocates (its TLS cost is one pointer).
 * - Freed when its thread exits (a pthread key's destructor), with the
 *   heap room a launch of many pointer words grew (wide).
 * - Out of memory: NULL, and the caller lets the call through unchecked;
 *   the first time in a process is logged.  Never a crash.
 */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

#include "shim.h"

static pthread_key_t at_exit;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static bool key_made;
static atomic_bool told;

static void release(void *scratch)
{
    assert(scratch == ct_mine.scratch && "the key holds its own thread's scratch");
    free(((ct_scratch *)scratch)->wide.bound);
    free(scratch);
    ct_mine.scratch = NULL;
}

static void make_key(void)
{
    key_made = pthread_key_create(&at_exit, release) == 0;
}

static ct_scratch *none(void)
{
    if (!atomic_exchange(&told, true))
        ct_log(CT_LOG_WARN, "out of memory for a thread's scratch; calls that need it go unchecked");
    return NULL;
}

ct_scratch *ct_scratch_first(void)
{
    assert(!ct_mine.scratch && "a thread's scratch is made once (ct_thread_scratch asks first)");
    pthread_once(&key_once, make_key);
    ct_scratch *s = key_made ? malloc(sizeof *s) : NULL;
    if (!s)
        return none();
    s->wide = (ct_words){0};
    if (pthread_setspecific(at_exit, s) != 0) {
        free(s);
        return none();
    }
    ct_mine.scratch = s;
    return s;
}
