/*
 * exports.c: generates every exported cu* entry point, and the row table
 * describing them, from the single list in api.def.
 *
 * Each entry point is the same three steps: fc_enter() (teardown, cuInit,
 * sticky fault and api: fault injection, in that order), the implementation,
 * and fc_leave() (an injected "=fault" that queued no work is queued now).
 * Invariants: fc_api_rows[FC_ID_<name>] describes <name>; the definitions
 * are checked against cuda.h's real prototypes by the compiler.
 */
#include "fakecuda.h"
#include "api.def"

enum fc_api_id {
#define FC_ENUM(name, base, since, pt, cls, params, call) FC_ID_##name,
    FC_API(FC_ENUM)
#undef FC_ENUM
    FC_API_COUNT
};

#define FC_DEFINE(name, base, since, pt, cls, params, call) \
    CUresult CUDAAPI name params                            \
    {                                                       \
        CUresult fc_r = fc_enter(FC_ID_##name);             \
        if (fc_r != CUDA_SUCCESS)                           \
            return fc_r;                                    \
        return fc_leave(call);                              \
    }
FC_API(FC_DEFINE)
#undef FC_DEFINE

const fc_api_row fc_api_rows[] = {
#define FC_ROW(name, base, since, pt, cls, params, call) {#name, base, since, pt, cls, (void *)name},
    FC_API(FC_ROW)
#undef FC_ROW
};

const unsigned fc_api_count = FC_API_COUNT;
