/*
 * fftplans.c - the cuFFT plan table (fftplans.h): open addressing over a
 * fixed array of seqlocked slots, read without a lock on every execution.
 *
 * Invariants (debug builds assert them):
 * - A slot's words change only between two increments of its seq, the
 *   first making it odd, under the writers' flag.
 * - A plan is copied in and out word by word through atomics: a reader
 *   racing a writer sees a changed seq and reads again, never a data race.
 */
#include "fftplans.h"

#include <assert.h>
#include <string.h>

_Static_assert(sizeof(ct_fft_plan) % sizeof(int64_t) == 0, "a plan is whole words");
_Static_assert((CT_FFT_SLOTS & (CT_FFT_SLOTS - 1)) == 0, "a power of two");

static int64_t key_of(int handle)
{
    return (int64_t)(uint32_t)handle + ((int64_t)1 << 32);
}

static unsigned home_of(int handle)
{
    return ((uint32_t)handle * 2654435761u) & (CT_FFT_SLOTS - 1);
}

static void lock(ct_fft_plans *t)
{
    while (atomic_flag_test_and_set_explicit(&t->writing, memory_order_acquire))
        ;
}

static void unlock(ct_fft_plans *t)
{
    atomic_flag_clear_explicit(&t->writing, memory_order_release);
}

/* Under the flag: the slot's key and plan become key and p (NULL: zeros). */
static void write_slot(ct_fft_slot *s, int64_t key, const ct_fft_plan *p)
{
    int64_t words[CT_FFT_WORDS] = {0};
    if (p)
        memcpy(words, p, sizeof words);
    uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    assert(seq % 2 == 0 && "a slot is written under the writers' flag only");
    atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&s->key, key, memory_order_relaxed);
    for (size_t i = 0; i < CT_FFT_WORDS; i++)
        atomic_store_explicit(&s->word[i], words[i], memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}

/* Under the flag: the slot holding key, else NULL. */
static ct_fft_slot *slot_of(ct_fft_plans *t, int handle, ct_fft_slot **free_slot)
{
    int64_t key = key_of(handle);
    unsigned home = home_of(handle);
    for (unsigned i = 0; i < CT_FFT_PROBE; i++) {
        ct_fft_slot *s = &t->slot[(home + i) & (CT_FFT_SLOTS - 1)];
        int64_t k = atomic_load_explicit(&s->key, memory_order_relaxed);
        if (k == key)
            return s;
        if (k == 0 && free_slot && !*free_slot)
            *free_slot = s;
    }
    return NULL;
}

bool ct_fft_plans_record(ct_fft_plans *t, int handle, const ct_fft_plan *p)
{
    lock(t);
    ct_fft_slot *free_slot = NULL, *s = slot_of(t, handle, &free_slot);
    if (!s)
        s = free_slot;
    if (s)
        write_slot(s, key_of(handle), p);
    unlock(t);
    return s != NULL;
}

void ct_fft_plans_forget(ct_fft_plans *t, int handle)
{
    lock(t);
    ct_fft_slot *s = slot_of(t, handle, NULL);
    if (s)
        write_slot(s, 0, NULL);
    unlock(t);
}

/* One consistent read of a slot: false when a writer was at it. */
static bool read_slot(ct_fft_slot *s, int64_t *key, int64_t *words)
{
    uint32_t before = atomic_load_explicit(&s->seq, memory_order_acquire);
    if (before % 2)
        return false;
    *key = atomic_load_explicit(&s->key, memory_order_relaxed);
    for (size_t i = 0; i < CT_FFT_WORDS; i++)
        words[i] = atomic_load_explicit(&s->word[i], memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&s->seq, memory_order_relaxed) == before;
}

bool ct_fft_plans_find(ct_fft_plans *t, int handle, ct_fft_plan *p)
{
    int64_t key = key_of(handle);
    unsigned home = home_of(handle);
    for (unsigned i = 0; i < CT_FFT_PROBE; i++) {
        ct_fft_slot *s = &t->slot[(home + i) & (CT_FFT_SLOTS - 1)];
        if (atomic_load_explicit(&s->key, memory_order_relaxed) != key)
            continue;
        int64_t k, words[CT_FFT_WORDS];
        while (!read_slot(s, &k, words))
            ;
        if (k == key) {
            memcpy(p, words, sizeof words);
            return true;
        }
    }
    return false;
}
