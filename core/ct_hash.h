/*
 * ct_hash.h - the one place uthash is included, for core and the shim alike,
 * and the configuration every table in cutaint runs with.
 *
 * Owns: uthash's out-of-memory mode and bucket policy.
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

#include <stdbool.h>

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

/* Did the HASH_ADD just made on this element's handle succeed? */
static inline bool ct_hash_added(const UT_hash_handle *hh)
{
    return hh->tbl != NULL;
}

#endif
