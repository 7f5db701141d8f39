/*
 * taint.h - the failure store: allocations, the failures they carry, and the
 * operations every intercepted driver call is translated into.
 *
 * The model (docs/DESIGN.md, "The model"): a byte range *carries* a failure when
 * the work that was to write it did not run.  Reads of carried bytes are
 * refused; launches and device copies whose inputs are carried are skipped and
 * pass the same failure on to their outputs.
 *
 * Invariants:
 * - Set, never add: tainting a range with the failure it already carries is a
 *   no-op; with another failure, the old claim on those bytes is released
 *   first.  A byte carries at most one failure.
 * - A failure is freed the moment no byte carries it (reference count of
 *   claims).  Dropping detail under a cap never drops a claim.
 * - enter_write taints before the work runs, as far as anyone can see; only
 *   exit_write's success path releases.  A scope that never exits leaves
 *   its write set tainted.  A scope of a few ranges is kept out of the store
 *   (in a slot of its own) until another operation takes the store's lock,
 *   which first places every open scope as enter_write would have; so what
 *   any operation sees and changes is what it would with every scope placed
 *   at entry.  Until then ct_store_tainted() is true and no lock-free check
 *   answers "clean".
 * - Addresses outside every known allocation are ignored by writes and never
 *   cause a refusal (memory the shim did not see allocated passes through).
 *   A refusal has none to name: the shim refuses only reads lying wholly in
 *   one known allocation (one running past its end is the driver's to
 *   reject).
 * - Thread-safe: every function takes the store's lock for its own
 *   duration - shared when it only looks (read_failure, resolve, the checks
 *   before written and a report-less check_written), alone otherwise - and
 *   calls nothing outside core while holding it.  ct_store_tainted() is a
 *   lock-free read for the hot path, and so is every check whose ranges
 *   reach no allocation that carries a claim (read_failure, written, a
 *   report-less check_written): a summary of those allocations answers it
 *   without the lock and without writing anything shared (summary.h).
 * - No heap allocation on the paths a happy program takes once warm
 *   (enter_write/exit_write with success, read_failure, written,
 *   check_written): failure records and claim arrays are recycled.
 */
#ifndef CT_TAINT_H
#define CT_TAINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "failures.h"

typedef struct ct_store ct_store;

/* Byte range [addr, addr+len).  CT_TO_END: to the end of addr's allocation
 * (a kernel pointer argument, whose extent nobody knows). */
typedef struct ct_range {
    uint64_t addr;
    uint64_t len;
} ct_range;
#define CT_TO_END UINT64_MAX

/* unknown_error: the error code (the driver's "unknown error": core knows
 * no CUDA, the shim passes it) a skip's outputs carry when its root failure
 * was released before the skip could pass it on. */
ct_store *ct_store_new(int unknown_error);
void ct_store_free(ct_store *s);
/* After fork(), in the child: make the store's lock usable again. */
void ct_store_atfork_child(ct_store *s);

/* --- allocations ------------------------------------------------------ */
/* owner: what the allocation belongs to (the shim passes its CUDA context),
 * 0 when unknown.  allocmap.h codes. */
int ct_store_alloc(ct_store *s, uint64_t base, uint64_t size, uint64_t owner);
int ct_store_free_alloc(ct_store *s, uint64_t base); /* CT_OK, CT_ENOENT */
/* The owner is gone (its context destroyed): forget every allocation of it
 * with its claims; a failure no byte carries any more is released (what was
 * reported stays reported).  Owner 0 forgets nothing.  Returns how many. */
size_t ct_store_forget_owner(ct_store *s, uint64_t owner);
/* A virtual memory mapping: an allocation that joins the mappings of the
 * same owner abutting it into one run (taint.c, "runs"), so a kernel
 * pointer into it runs to the end of the run and a read within the run is
 * checked as one.  allocmap.h codes. */
int ct_store_map(ct_store *s, uint64_t base, uint64_t size, uint64_t owner);
/* An address range ended (a virtual memory mapping unmapped, a reservation
 * freed): forget every allocation lying wholly inside [addr, addr+len) with
 * its claims, as forget_owner does, and carve the range out of a run that
 * straddles it (the rest of the run, and its claims, stay).  Returns how
 * many allocations it changed. */
size_t ct_store_forget_range(ct_store *s, uint64_t addr, uint64_t len);
/* The allocation holding addr: fills base/size (either may be NULL). */
bool ct_store_resolve(ct_store *s, uint64_t addr, uint64_t *base, uint64_t *size);
size_t ct_store_alloc_count(ct_store *s);
size_t ct_store_bytes(ct_store *s); /* heap bytes the store holds now */

/* --- regions ------------------------------------------------------------
 * A region is the program's own allocation inside a driver allocation (a
 * pool's tensor: include/cutaint.h).  A kernel pointer into a region runs
 * to the region's end, not the allocation's; a region taken anew carries
 * nothing; one given back is the allocation's again, with what its bytes
 * carry.  Regions go with the allocation holding them (freed, forgotten
 * with its owner, replaced by one the driver handed out over it, its
 * mapping unmapped).  ct_region_rule (rules.h) decides each call; a refused
 * call changes nothing. */
typedef enum ct_region_verdict {
    CT_REGION_DONE,      /* taken (an allocation) or given back (a free) */
    CT_REGION_EMPTY,     /* no bytes, or a range past 2^64 */
    CT_REGION_OUTSIDE,   /* not wholly inside one allocation cutaint knows */
    CT_REGION_OVERLAPS,  /* some of it is already a live region */
    CT_REGION_UNKNOWN,   /* a free of no live region's base */
    CT_REGION_NO_MEMORY, /* the store could not hold it (the store's own answer) */
} ct_region_verdict;

ct_region_verdict ct_store_region_alloc(ct_store *s, uint64_t base, uint64_t size);
ct_region_verdict ct_store_region_free(ct_store *s, uint64_t base);
size_t ct_store_region_count(ct_store *s);

/* Where a kernel pointer's taint runs (CT_TO_END from addr): the
 * allocation holding addr, and the end of the extent, which is the
 * region's when addr lies in one. */
typedef struct ct_extent {
    uint64_t allocation, size; /* the allocation (or run) */
    uint64_t end;              /* one past the extent's last byte */
    bool in_region;
} ct_extent;
bool ct_store_extent(ct_store *s, uint64_t addr, ct_extent *out);

/* Lock-free: is any byte anywhere carrying a failure?  False means reads and
 * launches have nothing to check. */
bool ct_store_tainted(const ct_store *s);
/* The store's lock-free summary of the allocations carrying claims, for a
 * caller that checks words one at a time as it finds them (summary.h's
 * looks); the same for the store's whole life. */
struct ct_summary;
const struct ct_summary *ct_store_summary(const ct_store *s);
/* Intern a name (kernel names) for ever; NULL when out of memory. */
const char *ct_store_intern(ct_store *s, const char *name);

/* --- the operations (docs/DESIGN.md table) --------------------------------- */

/* Taint every known range of w with a fresh provisional failure described by
 * `provisional` alone (its error is what a read of the range will be refused
 * with; its description holds that and the api, nothing more).
 * Returns the provisional id, or 0 when w is empty.  The id is given before
 * anyone knows what w touches: one touching no known allocation is never
 * live.  Pass it to ct_exit_write, once, from the same thread.  Where the
 * scope is kept meanwhile is ct_scope_rule's (rules.h). */
ct_failure_id ct_enter_write(ct_store *s, const ct_range *w, size_t n, ct_scope_desc provisional);

/* Did the scope given this provisional id wait in its thread's slot (out
 * of the store until someone looked), rather than being placed at once?
 * Arithmetic on the id alone (slot scopes' ids have a range of their own),
 * for tests and diagnostics. */
bool ct_scope_waits_in_slot(ct_failure_id provisional);

/* What settling a failure was: its first occurrence (minted), or one more
 * of a live failure of the same kind (folded). */
typedef struct ct_occurrence {
    bool is_new;           /* minted by this call */
    uint64_t count;        /* occurrences so far, this one included */
    uint64_t first_launch; /* the first occurrence's launch number, 0 if none */
} ct_occurrence;

/* Settle a scope.  failed == NULL: the work was handed over, w is written
 * (every claim on it released, whoever made it), unless the scope was given
 * no id (provisional 0: it touched no known allocation, so nothing it
 * writes carries a claim).  Otherwise the real failure
 * (minted or folded) replaces the provisional one on w.  Returns the real
 * failure id (0 on success); *occ (may be NULL) says which occurrence of it
 * this was (all zero on success). */
ct_failure_id ct_exit_write(ct_store *s, ct_failure_id provisional, const ct_range *w, size_t n,
                            const ct_failure_desc *failed, ct_occurrence *occ);

/* Mint (or fold) a failure and taint w with it; the scope-less form of a
 * failed write.  Returns its id; *occ as above (may be NULL). */
ct_failure_id ct_taint(ct_store *s, const ct_failure_desc *failed, const ct_range *w, size_t n, ct_occurrence *occ);

/* A launch the driver refused at once (the launch call itself returned
 * the error: nothing of it ran): ct_taint, and the failure keeps key as one
 * of its attempts.  It stays *intact* (ct_attempts_view) only while every
 * occurrence was such a launch whose outputs carried nothing, or only
 * intact failures, and no skip has passed it on: then every byte carrying
 * it still holds what it held before the launch, nothing stale. */
ct_failure_id ct_taint_refused_launch(ct_store *s, const ct_failure_desc *failed, const ct_launch_key *key,
                                      const ct_range *w, size_t n, ct_occurrence *occ);

/* What a failure says to a launch that may retry it. */
typedef struct ct_attempts_view {
    ct_failure_id id;
    bool intact;     /* see ct_taint_refused_launch */
    uint32_t n_keys; /* its newest distinct attempts, oldest first */
    const ct_launch_key *keys;
} ct_attempts_view;
typedef bool (*ct_attempts_accept)(const ct_attempts_view *f, void *ctx);

/* Under one look at the store: does every byte of in that carries a
 * failure lie within out (both clipped as every operation clips them), and
 * does accept take the failure it carries?  *oldest (may be NULL) receives
 * the oldest failure met, 0 when no byte of in carries one.  accept is
 * called under the store's lock: it must only look at its arguments. */
bool ct_carried_within(ct_store *s, const ct_range *in, size_t n_in, const ct_range *out, size_t n_out,
                       ct_attempts_accept accept, void *ctx, ct_failure_id *oldest);

/* The failure carried by any byte of r (the oldest, when several), or 0.
 * *error receives that failure's error (may be NULL). */
ct_failure_id ct_read_failure(ct_store *s, const ct_range *r, size_t n, int *error);

/* Work skipped because an input carries `root`: w takes the same failure,
 * and the skip is recorded on it.  No new id is minted. */
void ct_propagate(ct_store *s, ct_failure_id root, const ct_skip_desc *skip, const ct_range *w, size_t n);

/* Successful write of w: release every claim on those bytes. */
void ct_written(ct_store *s, const ct_range *w, size_t n);

#define CT_REFUSAL_MAX_FAILURES 8
typedef struct ct_refusal {
    size_t n_failures;                                 /* distinct failures found; may exceed the kept */
    size_t n_kept;                                     /* min(n_failures, CT_REFUSAL_MAX_FAILURES) */
    ct_failure_info failures[CT_REFUSAL_MAX_FAILURES]; /* by id; [0] is the root cause */
    uint64_t tainted_bytes;                            /* how many bytes read carry a failure */
} ct_refusal;

/* A check, never a write: it says whether r is written and describes what
 * is not, and changes nothing (ct_written releases bytes).  CT_OK when no
 * byte of r carries a failure; CT_ETAINTED otherwise, with *out describing
 * what those bytes carry (out may be NULL: the answer alone).  ct_refusal
 * is large: callers keep it off small stacks. */
int ct_check_written(ct_store *s, const ct_range *r, size_t n, ct_refusal *out);

/* The bytes a pitched copy reads: `depth` slices `slice` bytes apart, each
 * of `height` rows `pitch` bytes apart, each row `width` bytes from addr. */
typedef struct ct_rows {
    uint64_t addr, width, pitch, height, slice, depth;
} ct_rows;
/* ct_check_written over exactly the rows' bytes, however many rows (the
 * gaps between them are not read); out is required.  It too only checks
 * and describes. */
int ct_check_rows_written(ct_store *s, const ct_rows *r, ct_refusal *out);

/* Snapshot of a live failure; false when no byte carries it any more. */
bool ct_failure_get(ct_store *s, ct_failure_id id, ct_failure_info *out);
size_t ct_store_live_failures(ct_store *s);

#endif
