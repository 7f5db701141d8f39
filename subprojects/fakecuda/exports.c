/*
 * exports.c: defines every entry point fakecuda emulates, from the rows of
 * api.def; the other exported names are unsupported.c's weak stubs.
 *
 * Each entry point is the same three steps: fc_enter() (teardown, cuInit,
 * sticky fault and api: fault injection, in that order), the implementation,
 * and fc_leave() (an injected "=fault" that queued no work is queued now),
 * counted in fc_calls_in while it runs (for an exit from a signal handler).
 * Invariants: the definitions are checked against cuda.h's real prototypes
 * by the compiler, and each name against entry_points.h (FC_ID_<name>).
 */
#include "fakecuda.h"
#include "api.def"

#include <assert.h>

#define FC_DEFINE(name, cls, params, call)                                                                    \
    CUresult CUDAAPI name params                                                                              \
    {                                                                                                         \
        assert(fc_api_rows[FC_ID_##name].fn == (void *)name && "fc_api_rows[FC_ID_<name>] describes <name>"); \
        fc_calls_in++;                                                                                        \
        CUresult fc_r = fc_enter(FC_ID_##name, cls);                                                          \
        if (fc_r == CUDA_SUCCESS)                                                                             \
            fc_r = fc_leave(call);                                                                            \
        fc_calls_in--;                                                                                        \
        return fc_r;                                                                                          \
    }
FC_API(FC_DEFINE)
#undef FC_DEFINE
