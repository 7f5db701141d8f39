/*
 * ct_hash.h - the one place uthash is included, for core and the shim alike,
 * and the configuration every table in cutaint runs with.
 *
 * Owns: uthash's out-of-memory mode and bucket policy, and the byte hash
 * cutaint's own keys use.
 *
 * Invariants:
 * - No other file includes <uthash.h> (tests/unit/uthash_mode.sh checks).
 * - uthash runs in non-fatal OOM mode: its default (fatal) mode calls
 *   exit(-1) inside the host program when a table cannot grow.  Here a
 *   failed add leaves the table as it was and the element's hh.tbl NULL,
 *   and every add is followed by ct_hash_added(), whose false means the
 *   element is not in the table (the caller still owns it).
 */
#ifndef CT_HASH_H
#define CT_HASH_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FNV-1a over n bytes, going on from h (CT_FNV_OFFSET to begin): the hash
 * of cutaint's own keys (failure folds, launch keys, the log's stories). */
#define CT_FNV_OFFSET 0xcbf29ce484222325ULL
static inline uint64_t ct_fnv1a(uint64_t h, const void *bytes, size_t n)
{
    const unsigned char *b = bytes;
    for (size_t i = 0; b && i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

#ifdef UTHASH_H
#error "<uthash.h> was included before ct_hash.h: in its fatal mode, a full table exits the host"
#endif
#define HASH_NONFATAL_OOM 1
#include <uthash.h>
_Static_assert(HASH_NONFATAL_OOM == 1, "uthash runs in non-fatal out-of-memory mode");
/* uthash doubles its buckets when any chain reaches this length.  At its
 * default of 10 the bucket array costs up to 20 bytes per allocation just
 * after a doubling, which breaks the 128-byte budget at some counts; at 20
 * it stays under 6.  Longer chains cost little: in the allocation map only
 * frees walk them (launches resolve addresses through its tree), and the
 * failure table's sequential ids spread evenly over its buckets. */
#undef HASH_BKT_CAPACITY_THRESH
#define HASH_BKT_CAPACITY_THRESH 20U

/* Did the HASH_ADD just made on this element's handle succeed? */
static inline bool ct_hash_added(const UT_hash_handle *hh)
{
    assert(hh && "a handle an add was just made on");
    return hh->tbl != NULL;
}

#endif
