/*
 * allocmap.h - the set of live device allocations, by address.
 *
 * Owns: which [base, base+size) ranges of device memory the driver handed
 * out, what each belongs to (an opaque owner: the shim's CUDA context), and
 * the per-allocation taint claims (see taint.h) stored with them.
 * One index, a B+tree ordered by base: exact lookups (a free) and interior
 * ones (any address to its allocation) in O(log n), a few nodes deep.
 *
 * Invariants:
 * - Ranges in the map never overlap.  Adding a range that overlaps live
 *   entries replaces them: the driver is the truth, and an overlap means we
 *   missed a free.
 * - Not thread-safe on its own: the store (taint.h) serialises access.
 * - Never dereferences an address; addresses are numbers.
 * - Owner 0 means "unknown": such allocations are never forgotten by owner.
 * - A mapping (insert_mapping) is an allocation marked as virtual memory
 *   mapped by the program: the store joins abutting mappings into one
 *   (taint.h, "runs").  The mark is the node's own.
 */
#ifndef CT_ALLOCMAP_H
#define CT_ALLOCMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ct_allocmap ct_allocmap;
typedef struct ct_alloc ct_alloc; /* one allocation; layout private to core */

ct_allocmap *ct_allocmap_new(void);
void ct_allocmap_free(ct_allocmap *map);

/* CT_OK, CT_EINVAL (size 0 or base+size overflows), CT_ENOMEM. */
int ct_allocmap_insert(ct_allocmap *map, uint64_t base, uint64_t size, uint64_t owner);
/* The same, marked as a mapping (ct_alloc_is_mapping). */
int ct_allocmap_insert_mapping(ct_allocmap *map, uint64_t base, uint64_t size, uint64_t owner);
/* a's size becomes size, its base kept: the caller has made sure a grown
 * range overlaps no other (claims past a shrunk end are the caller's). */
void ct_allocmap_resize(ct_allocmap *map, ct_alloc *a, uint64_t size);
/* CT_OK or CT_ENOENT when base is not the base of a live allocation. */
int ct_allocmap_remove(ct_allocmap *map, uint64_t base);
/* Remove every allocation of owner (not 0), claims released; how many. */
size_t ct_allocmap_remove_owner(ct_allocmap *map, uint64_t owner);
/* Remove every allocation lying wholly inside [addr, addr+len), claims
 * released (one straddling an end stays); how many. */
size_t ct_allocmap_remove_within(ct_allocmap *map, uint64_t addr, uint64_t len);
/* The lowest-based allocation intersecting [lo, hi), or NULL. */
ct_alloc *ct_allocmap_first_in(const ct_allocmap *map, uint64_t lo, uint64_t hi);
/* The allocation containing addr (base <= addr < base+size), or NULL. */
ct_alloc *ct_allocmap_find(const ct_allocmap *map, uint64_t addr);
uint64_t ct_alloc_base(const ct_alloc *a);
uint64_t ct_alloc_size(const ct_alloc *a);
uint64_t ct_alloc_owner(const ct_alloc *a);
bool ct_alloc_is_mapping(const ct_alloc *a);
size_t ct_allocmap_count(const ct_allocmap *map);
/* Heap bytes the map holds now (nodes, hash buckets, spilled claims). */
size_t ct_allocmap_bytes(const ct_allocmap *map);

/* How the index is spread, for the tests: the tree's height (nodes from
 * the root to a leaf, all leaves being at one depth) and its node count. */
typedef struct ct_allocmap_shape {
    size_t height;
    size_t tree_nodes;
} ct_allocmap_shape;
ct_allocmap_shape ct_allocmap_shape_of(const ct_allocmap *map);

#endif
