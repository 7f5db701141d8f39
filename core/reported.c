/*
 * reported.c - the waiting device-reported results (reported.h): a small
 * array in arrival order under one mutex, with its count beside it for the
 * lock-free look every synchronous read makes.
 *
 * Invariants:
 * - head.waiting == n, stored after every change under the lock.
 * - entries[0..n) are in arrival order: the oldest is displaced first.
 */
#include "reported.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct ct_reported_set {
    ct_reported_head head; /* first: ct_reported_waiting reads it inline */
    pthread_mutex_t lock;
    unsigned n;
    ct_reported entries[CT_REPORTED_MAX];
};

ct_reported_set *ct_reported_new(void)
{
    ct_reported_set *s = calloc(1, sizeof *s);
    if (s)
        pthread_mutex_init(&s->lock, NULL);
    return s;
}

void ct_reported_free(ct_reported_set *s)
{
    if (!s)
        return;
    pthread_mutex_destroy(&s->lock);
    free(s);
}

void ct_reported_atfork_child(ct_reported_set *s)
{
    if (s)
        pthread_mutex_init(&s->lock, NULL);
}

static bool overlaps(const ct_range *a, const ct_range *b)
{
    uint64_t a_end = a->len > UINT64_MAX - a->addr ? UINT64_MAX : a->addr + a->len;
    uint64_t b_end = b->len > UINT64_MAX - b->addr ? UINT64_MAX : b->addr + b->len;
    return a->len && b->len && a->addr < b_end && b->addr < a_end;
}

static void remove_at(ct_reported_set *s, unsigned i)
{
    assert(i < s->n);
    memmove(&s->entries[i], &s->entries[i + 1], (s->n - i - 1) * sizeof s->entries[0]);
    s->n--;
}

static void publish(ct_reported_set *s)
{
    atomic_store_explicit(&s->head.waiting, s->n, memory_order_release);
}

void ct_reported_add(ct_reported_set *s, const ct_reported *r)
{
    if (!s)
        return;
    assert(r->n_out <= CT_REPORTED_RANGES && r->n_bases <= CT_REPORTED_RANGES + 1 &&
           "a result vouches for at most CT_REPORTED_RANGES outputs");
    pthread_mutex_lock(&s->lock);
    for (unsigned i = 0; i < s->n; i++)
        if (r->info.len && s->entries[i].info.addr == r->info.addr) {
            remove_at(s, i);
            break;
        }
    if (s->n == CT_REPORTED_MAX) {
        remove_at(s, 0);
    }
    s->entries[s->n++] = *r;
    publish(s);
    pthread_mutex_unlock(&s->lock);
}

static bool touched_by(const ct_reported *r, const ct_range *read)
{
    if (overlaps(&r->info, read))
        return true;
    for (unsigned i = 0; i < r->n_out; i++)
        if (overlaps(&r->out[i], read))
            return true;
    return false;
}

bool ct_reported_take(ct_reported_set *s, const ct_range *read, ct_reported *out)
{
    if (!ct_reported_waiting(s))
        return false;
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (unsigned i = 0; i < s->n && !found; i++)
        if (touched_by(&s->entries[i], read)) {
            *out = s->entries[i];
            remove_at(s, i);
            found = true;
        }
    publish(s);
    pthread_mutex_unlock(&s->lock);
    return found;
}

static bool names_allocation(const ct_reported *r, uint64_t base)
{
    for (unsigned i = 0; i < r->n_bases; i++)
        if (r->bases[i] == base)
            return true;
    return false;
}

void ct_reported_forget(ct_reported_set *s, uint64_t base)
{
    if (!ct_reported_waiting(s) || base == 0)
        return;
    pthread_mutex_lock(&s->lock);
    for (unsigned i = 0; i < s->n;)
        if (names_allocation(&s->entries[i], base))
            remove_at(s, i);
        else
            i++;
    publish(s);
    pthread_mutex_unlock(&s->lock);
}
