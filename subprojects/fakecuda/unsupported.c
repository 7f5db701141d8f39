/*
 * unsupported.c: every entry point of entry_points.h, as a weak definition
 * that answers CUDA_ERROR_NOT_SUPPORTED, and the table of all of them.
 *
 * The emulated entry points (exports.c) are strong definitions of the same
 * names, so the linker keeps those and these stand in for the rest: a
 * loader that resolves a long list of names (ffmpeg, GStreamer, NVIDIA's
 * runtime) finds every one, and learns at the call which are not emulated.
 * With FAKECUDA_LOG=debug each such name is logged on stderr the first time
 * it is called.
 * Invariants: this file never includes cuda.h (the stubs' prototype is not
 * cuda.h's); a stub ignores its arguments, which the C calling convention
 * allows, and touches no state but its logged-once flag.
 */
#include "entry.h"
#include "log.h"

#include <assert.h>
#include <stdatomic.h>

#ifdef __cuda_cuda_h__
#error "unsupported.c must not see cuda.h: its stubs' prototype is not cuda.h's"
#endif

#define FC_NOT_SUPPORTED 801 /* CUDA_ERROR_NOT_SUPPORTED */

static atomic_bool logged[FC_API_COUNT];

int fc_unsupported(unsigned api_id)
{
    assert(api_id < FC_API_COUNT && "a stub passes its own FC_ID_<name>");
    if (api_id < FC_API_COUNT && fc_debug_on() && !atomic_exchange(&logged[api_id], true))
        fc_debug("%s is not emulated: CUDA_ERROR_NOT_SUPPORTED", fc_api_rows[api_id].name);
    return FC_NOT_SUPPORTED;
}

#define FC_STUB(name, base, since, pt)                          \
    __attribute__((weak, visibility("default"))) int name(void) \
    {                                                           \
        return fc_unsupported(FC_ID_##name);                    \
    }
FC_ENTRY_POINTS(FC_STUB)
#undef FC_STUB

const fc_api_row fc_api_rows[FC_API_COUNT] = {
#define FC_ROW(name, base, since, pt) {#name, base, since, pt, (void *)name},
    FC_ENTRY_POINTS(FC_ROW)
#undef FC_ROW
};
