/*
 * procaddr.c: cuGetProcAddress / cuGetProcAddress_v2 (cuGetExportTable is
 * private.c's).
 *
 * The mapping is the real driver's: for a base name, the variant returned
 * is the newest one whose "since" version (api.def, after cudaTypedefs.h's
 * PFN_<name>_v<version>) is <= the requested CUDA version; with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM the _ptds/_ptsz variants
 * compete too and win a tie. So "cuMemAlloc" at 12000 is cuMemAlloc_v2,
 * below 3020 the legacy cuMemAlloc, and "cuGetProcAddress" at >= 12000 is
 * the 5-argument cuGetProcAddress_v2.
 * Invariants: a lookup that finds nothing stores NULL in *pfn (refused
 * arguments, CUDA_ERROR_INVALID_VALUE, leave it untouched); a name
 * fakecuda does not export is CUDA_ERROR_NOT_FOUND / SYMBOL_NOT_FOUND, a
 * name whose every variant is newer than the requested version
 * CUDA_ERROR_NOT_FOUND / VERSION_NOT_SUFFICIENT, and a version above the
 * driver's CUDA_ERROR_INVALID_VALUE (as documented in cuda.h).
 */
#include "fakecuda.h"

#include <assert.h>
#include <string.h>

#define FC_PROC_FLAGS (CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)

static bool fc_better(const fc_api_row *cand, const fc_api_row *best)
{
    return !best || cand->since > best->since || (cand->since == best->since && cand->per_thread);
}

CUresult fc_get_proc_address(const char *sym, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    if (!sym || !pfn || version <= 0 || version > fc_reported_driver_version() || (flags & ~(cuuint64_t)FC_PROC_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    bool per_thread = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, known = false;
    const fc_api_row *best = NULL;
    for (unsigned i = 0; i < FC_API_COUNT; i++) {
        const fc_api_row *r = &fc_api_rows[i];
        if (strcmp(r->base, sym) != 0)
            continue;
        known = true;
        if (r->since <= version && (!r->per_thread || per_thread) && fc_better(r, best))
            best = r;
    }
    assert((!best || (best->fn && best->since <= version)) && "a lookup returns a variant of that version or older");
    *pfn = best ? best->fn : NULL;
    if (status)
        *status = best    ? CU_GET_PROC_ADDRESS_SUCCESS
                  : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                          : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return best ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
