/*
 * heap.h - private to core: how core counts the heap it holds, and the one
 * uthash configuration every core file shares.
 *
 * Owns: the cost model behind ct_allocmap_bytes and ct_store_bytes, which
 * charges what glibc really takes (a header word and 16-byte rounding), so
 * a "bytes per allocation" budget includes the allocator's share.
 *
 * Invariants:
 * - Every core file that uses uthash includes it through here.
 * - uthash runs in non-fatal OOM mode: a failed add leaves the table as it
 *   was and the element's hh.tbl NULL (ct_hash_added), never exits.
 */
#ifndef CT_HEAP_H
#define CT_HEAP_H

#include <stdbool.h>
#include <stddef.h>

#define HASH_NONFATAL_OOM 1
#include <uthash.h>
/* uthash doubles its buckets when any chain reaches this length.  At its
 * default of 10 the bucket array costs up to 20 bytes per allocation just
 * after a doubling, which breaks the 128-byte budget at some counts; at 20
 * it stays under 6.  Longer chains cost little: in the allocation map only
 * frees walk them (launches resolve addresses through its tree), and the
 * failure table's sequential ids spread evenly over its buckets. */
#undef HASH_BKT_CAPACITY_THRESH
#define HASH_BKT_CAPACITY_THRESH 20U

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
    return ct_heap_cost(sizeof(UT_hash_table)) +
           ct_heap_cost(head_hh->tbl->num_buckets * sizeof(UT_hash_bucket));
}

static inline bool ct_hash_added(const UT_hash_handle *hh)
{
    return hh->tbl != NULL;
}

#endif
