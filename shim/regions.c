/*
 * regions.c - the entry points of include/cutaint.h: a program (or a
 * framework, through ctypes) says where the tensors of a pool lie.
 *
 * Translates only: core's store keeps the regions and ct_region_rule
 * decides which calls are taken (core/taint.h, "regions").  A refused
 * call is said in one line at warn and changes nothing; the answer tells
 * the caller too.
 *
 * Invariants:
 * - Never called by the driver or by cutaint: the program's own calls,
 *   from any thread, before or after the driver is loaded.
 * - A pointer is a number: never dereferenced.
 */
#include <stdio.h>

#include "shim.h"

/* What cutaint.h's CUTAINT_REGION_* answers are. */
enum { REGION_DONE = 0, REGION_REFUSED = 1 };

/* call: the call as the program made it, for the line. */
static int answer(const char *call, ct_region_verdict v)
{
    if (v == CT_REGION_DONE)
        return REGION_DONE;
    ct_log(CT_LOG_WARN, "%s ignored: %s", call, ct_region_verdict_text(v));
    return REGION_REFUSED;
}

CT_EXPORT int cutaint_shim_region_alloc(const void *base, size_t bytes)
{
    ct_ensure_ready();
    ct_region_verdict v = ct_store_region_alloc(ct_g.store, (uint64_t)(uintptr_t)base, bytes);
    char call[96];
    if (v != CT_REGION_DONE)
        snprintf(call, sizeof call, "CUTAINT_REGION_ALLOC(%p, %zu)", base, bytes);
    return answer(call, v);
}

CT_EXPORT int cutaint_shim_region_free(const void *base)
{
    ct_ensure_ready();
    ct_region_verdict v = ct_store_region_free(ct_g.store, (uint64_t)(uintptr_t)base);
    char call[64];
    if (v != CT_REGION_DONE)
        snprintf(call, sizeof call, "CUTAINT_REGION_FREE(%p)", base);
    return answer(call, v);
}
