/*
 * lifetimes.c - driver handles and their lifetime ids (lifetimes.h): a hash
 * of handle -> current id and ends in flight, under one mutex.
 *
 * Invariants (besides lifetimes.h's):
 * - An entry is in the table iff its handle has a current lifetime; ending
 *   counts the ends of that lifetime in flight, and an entry whose ending
 *   is above 0 was not removed by an end of another id.
 * - Ids come from one process-wide counter, so two tables never share one.
 */
#include "lifetimes.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "ct_hash.h"

typedef struct lifetime {
    uint64_t handle;
    uint64_t id;
    unsigned ending; /* ends of this id in flight */
    UT_hash_handle hh;
} lifetime;

struct ct_lifetimes {
    pthread_mutex_t lock;
    lifetime *by_handle;
};

static atomic_uint_fast64_t next_id = 1;

static uint64_t new_id(void)
{
    return CT_LIFETIME_TAG | atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
}

ct_lifetimes *ct_lifetimes_new(void)
{
    ct_lifetimes *l = calloc(1, sizeof *l);
    if (l)
        pthread_mutex_init(&l->lock, NULL);
    return l;
}

void ct_lifetimes_free(ct_lifetimes *l)
{
    if (!l)
        return;
    lifetime *e, *next;
    HASH_ITER(hh, l->by_handle, e, next)
    {
        HASH_DELETE(hh, l->by_handle, e);
        free(e);
    }
    pthread_mutex_destroy(&l->lock);
    free(l);
}

void ct_lifetimes_atfork_child(ct_lifetimes *l)
{
    if (l)
        pthread_mutex_init(&l->lock, NULL);
}

static lifetime *find_locked(ct_lifetimes *l, uint64_t handle)
{
    lifetime *e;
    HASH_FIND(hh, l->by_handle, &handle, sizeof handle, e);
    return e;
}

/* handle's entry e (NULL: it has none yet, as the caller's find_locked
 * just said), now naming a new lifetime; NULL when out of memory. */
static lifetime *start_locked(ct_lifetimes *l, uint64_t handle, lifetime *e)
{
    assert(e == find_locked(l, handle) && "e is handle's entry as found under this hold of the lock");
    if (!e) {
        if (!(e = malloc(sizeof *e)))
            return NULL;
        e->handle = handle;
        HASH_ADD(hh, l->by_handle, handle, sizeof e->handle, e);
        if (!ct_hash_added(&e->hh)) {
            free(e);
            return NULL;
        }
    }
    e->id = new_id();
    e->ending = 0; /* the ends in flight were of the old id */
    return e;
}

/* When a look at a handle starts a new lifetime: never, at first sight,
 * also while an end is in flight, always. */
typedef enum { START_NEVER, START_UNKNOWN, START_AMBIGUOUS, START_ALWAYS } start_when;

/* *before: the id the handle had before the look (0: none). */
static uint64_t lookup(ct_lifetimes *l, uint64_t handle, start_when when, bool ending, uint64_t *before)
{
    *before = 0;
    if (!l || !handle)
        return 0;
    pthread_mutex_lock(&l->lock);
    lifetime *e = find_locked(l, handle);
    *before = e ? e->id : 0;
    if (when == START_ALWAYS || (when != START_NEVER && (!e || (when == START_AMBIGUOUS && e->ending))))
        e = start_locked(l, handle, e);
    if (e && ending)
        e->ending++;
    uint64_t id = e ? e->id : 0;
    pthread_mutex_unlock(&l->lock);
    assert((!id || ((id & CT_LIFETIME_TAG) && !(id >> 63))) && "every id carries the tag, and not the map's mark");
    return id;
}

uint64_t ct_lifetime_born(ct_lifetimes *l, uint64_t handle, uint64_t *replaced)
{
    return lookup(l, handle, START_ALWAYS, false, replaced);
}

uint64_t ct_lifetime_of(ct_lifetimes *l, uint64_t handle)
{
    uint64_t before;
    return lookup(l, handle, START_UNKNOWN, false, &before);
}

uint64_t ct_lifetime_find(ct_lifetimes *l, uint64_t handle)
{
    uint64_t before;
    return lookup(l, handle, START_NEVER, false, &before);
}

uint64_t ct_lifetime_retained(ct_lifetimes *l, uint64_t handle)
{
    uint64_t before;
    return lookup(l, handle, START_AMBIGUOUS, false, &before);
}

uint64_t ct_lifetime_ending(ct_lifetimes *l, uint64_t handle)
{
    uint64_t before;
    return lookup(l, handle, START_NEVER, true, &before);
}

void ct_lifetime_ended(ct_lifetimes *l, uint64_t handle, uint64_t id, bool gone)
{
    if (!l || !handle || !id)
        return;
    pthread_mutex_lock(&l->lock);
    lifetime *e = find_locked(l, handle);
    if (e && e->id == id) {
        assert(e->ending > 0 && "an end comes after its ct_lifetime_ending");
        e->ending--;
        if (gone) {
            HASH_DELETE(hh, l->by_handle, e);
            free(e);
        }
    }
    pthread_mutex_unlock(&l->lock);
}

size_t ct_lifetimes_count(ct_lifetimes *l)
{
    if (!l)
        return 0;
    pthread_mutex_lock(&l->lock);
    size_t n = HASH_COUNT(l->by_handle);
    pthread_mutex_unlock(&l->lock);
    return n;
}
