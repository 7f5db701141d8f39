/*
 * heap.h - private to core: how core counts the heap it holds.
 *
 * Owns: the cost model behind ct_allocmap_bytes and ct_store_bytes, which
 * charges what glibc really takes (a header word and 16-byte rounding), so
 * a "bytes per allocation" budget includes the allocator's share.
 *
 * Invariants:
 * - uthash comes from ct_hash.h (non-fatal out-of-memory mode), here as in
 *   every other file.
 */
#ifndef CT_HEAP_H
#define CT_HEAP_H

#include <stdbool.h>
#include <stddef.h>

#include "ct_hash.h"

_Static_assert(HASH_NONFATAL_OOM == 1, "uthash comes from ct_hash.h, in non-fatal out-of-memory mode");

static inline size_t ct_heap_cost(size_t bytes)
{
    size_t chunk = (bytes + 8 + 15) & ~(size_t)15;
    return chunk < 32 ? 32 : chunk;
}

/* The table and bucket array behind a uthash head (0 for an empty one). */
static inline size_t ct_hash_cost(const UT_hash_handle *head_hh)
{
    if (!head_hh || !head_hh->tbl)
        return 0;
    return ct_heap_cost(sizeof(UT_hash_table)) + ct_heap_cost(head_hh->tbl->num_buckets * sizeof(UT_hash_bucket));
}

#endif
