/*
 * errnames.c - CUresult codes as names and back.
 *
 * Owns: the one table of CUresult names, and the vocabulary (ct_cuda_errors)
 * core's CUTAINT_INJECT grammar is handed.  Each entry is written once, as the
 * cuda.h enumerator itself (ENTRY stringifies it), so a misspelt or removed
 * name fails to compile instead of drifting.  Enumerators added after CUDA
 * 12.0 sit behind CUDA_VERSION guards so older toolkits still build; on those
 * the newer codes print as "CUresult N".
 *
 * Invariants: lookups never allocate; parsing accepts only whole tokens
 * (no trailing text, no sign, no overflow).
 */
#include "errnames.h"

#include "ct_status.h"

#include <assert.h>
#include <cuda.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct ct_errname {
    int code;
    const char *name;
} ct_errname;

#define ENTRY(enumerator)              \
    {                                  \
        (int)(enumerator), #enumerator \
    }

static const ct_errname ct_errnames[] = {
    ENTRY(CUDA_SUCCESS),
    ENTRY(CUDA_ERROR_INVALID_VALUE),
    ENTRY(CUDA_ERROR_OUT_OF_MEMORY),
    ENTRY(CUDA_ERROR_NOT_INITIALIZED),
    ENTRY(CUDA_ERROR_DEINITIALIZED),
    ENTRY(CUDA_ERROR_PROFILER_DISABLED),
    ENTRY(CUDA_ERROR_PROFILER_NOT_INITIALIZED),
    ENTRY(CUDA_ERROR_PROFILER_ALREADY_STARTED),
    ENTRY(CUDA_ERROR_PROFILER_ALREADY_STOPPED),
    ENTRY(CUDA_ERROR_STUB_LIBRARY),
    ENTRY(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER),
    ENTRY(CUDA_ERROR_DEVICE_UNAVAILABLE),
    ENTRY(CUDA_ERROR_NO_DEVICE),
    ENTRY(CUDA_ERROR_INVALID_DEVICE),
    ENTRY(CUDA_ERROR_DEVICE_NOT_LICENSED),
    ENTRY(CUDA_ERROR_INVALID_IMAGE),
    ENTRY(CUDA_ERROR_INVALID_CONTEXT),
    ENTRY(CUDA_ERROR_CONTEXT_ALREADY_CURRENT),
    ENTRY(CUDA_ERROR_MAP_FAILED),
    ENTRY(CUDA_ERROR_UNMAP_FAILED),
    ENTRY(CUDA_ERROR_ARRAY_IS_MAPPED),
    ENTRY(CUDA_ERROR_ALREADY_MAPPED),
    ENTRY(CUDA_ERROR_NO_BINARY_FOR_GPU),
    ENTRY(CUDA_ERROR_ALREADY_ACQUIRED),
    ENTRY(CUDA_ERROR_NOT_MAPPED),
    ENTRY(CUDA_ERROR_NOT_MAPPED_AS_ARRAY),
    ENTRY(CUDA_ERROR_NOT_MAPPED_AS_POINTER),
    ENTRY(CUDA_ERROR_ECC_UNCORRECTABLE),
    ENTRY(CUDA_ERROR_UNSUPPORTED_LIMIT),
    ENTRY(CUDA_ERROR_CONTEXT_ALREADY_IN_USE),
    ENTRY(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED),
    ENTRY(CUDA_ERROR_INVALID_PTX),
    ENTRY(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT),
    ENTRY(CUDA_ERROR_NVLINK_UNCORRECTABLE),
    ENTRY(CUDA_ERROR_JIT_COMPILER_NOT_FOUND),
    ENTRY(CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
    ENTRY(CUDA_ERROR_JIT_COMPILATION_DISABLED),
    ENTRY(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY),
#if CUDA_VERSION >= 12030
    ENTRY(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC),
#endif
#if CUDA_VERSION >= 12090
    ENTRY(CUDA_ERROR_CONTAINED),
#endif
    ENTRY(CUDA_ERROR_INVALID_SOURCE),
    ENTRY(CUDA_ERROR_FILE_NOT_FOUND),
    ENTRY(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND),
    ENTRY(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED),
    ENTRY(CUDA_ERROR_OPERATING_SYSTEM),
    ENTRY(CUDA_ERROR_INVALID_HANDLE),
    ENTRY(CUDA_ERROR_ILLEGAL_STATE),
#if CUDA_VERSION >= 12030
    ENTRY(CUDA_ERROR_LOSSY_QUERY),
#endif
    ENTRY(CUDA_ERROR_NOT_FOUND),
    ENTRY(CUDA_ERROR_NOT_READY),
    ENTRY(CUDA_ERROR_ILLEGAL_ADDRESS),
    ENTRY(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES),
    ENTRY(CUDA_ERROR_LAUNCH_TIMEOUT),
    ENTRY(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING),
    ENTRY(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED),
    ENTRY(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED),
    ENTRY(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE),
    ENTRY(CUDA_ERROR_CONTEXT_IS_DESTROYED),
    ENTRY(CUDA_ERROR_ASSERT),
    ENTRY(CUDA_ERROR_TOO_MANY_PEERS),
    ENTRY(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED),
    ENTRY(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED),
    ENTRY(CUDA_ERROR_HARDWARE_STACK_ERROR),
    ENTRY(CUDA_ERROR_ILLEGAL_INSTRUCTION),
    ENTRY(CUDA_ERROR_MISALIGNED_ADDRESS),
    ENTRY(CUDA_ERROR_INVALID_ADDRESS_SPACE),
    ENTRY(CUDA_ERROR_INVALID_PC),
    ENTRY(CUDA_ERROR_LAUNCH_FAILED),
    ENTRY(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE),
#if CUDA_VERSION >= 12090
    ENTRY(CUDA_ERROR_TENSOR_MEMORY_LEAK),
#endif
    ENTRY(CUDA_ERROR_NOT_PERMITTED),
    ENTRY(CUDA_ERROR_NOT_SUPPORTED),
    ENTRY(CUDA_ERROR_SYSTEM_NOT_READY),
    ENTRY(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH),
    ENTRY(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE),
    ENTRY(CUDA_ERROR_MPS_CONNECTION_FAILED),
    ENTRY(CUDA_ERROR_MPS_RPC_FAILURE),
    ENTRY(CUDA_ERROR_MPS_SERVER_NOT_READY),
    ENTRY(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED),
    ENTRY(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED),
    ENTRY(CUDA_ERROR_MPS_CLIENT_TERMINATED),
    ENTRY(CUDA_ERROR_CDP_NOT_SUPPORTED),
    ENTRY(CUDA_ERROR_CDP_VERSION_MISMATCH),
    ENTRY(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED),
    ENTRY(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
    ENTRY(CUDA_ERROR_STREAM_CAPTURE_MERGE),
    ENTRY(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED),
    ENTRY(CUDA_ERROR_STREAM_CAPTURE_UNJOINED),
    ENTRY(CUDA_ERROR_STREAM_CAPTURE_ISOLATION),
    ENTRY(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT),
    ENTRY(CUDA_ERROR_CAPTURED_EVENT),
    ENTRY(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD),
    ENTRY(CUDA_ERROR_TIMEOUT),
    ENTRY(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE),
    ENTRY(CUDA_ERROR_EXTERNAL_DEVICE),
    ENTRY(CUDA_ERROR_INVALID_CLUSTER_SIZE),
#if CUDA_VERSION >= 12040
    ENTRY(CUDA_ERROR_FUNCTION_NOT_LOADED),
#endif
#if CUDA_VERSION >= 12040
    ENTRY(CUDA_ERROR_INVALID_RESOURCE_TYPE),
#endif
#if CUDA_VERSION >= 12040
    ENTRY(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION),
#endif
#if CUDA_VERSION >= 12060
    ENTRY(CUDA_ERROR_KEY_ROTATION),
#endif
    ENTRY(CUDA_ERROR_UNKNOWN),
};

#undef ENTRY

#define N_ERRNAMES (sizeof ct_errnames / sizeof ct_errnames[0])

const char *ct_error_name(int code)
{
    for (size_t i = 0; i < N_ERRNAMES; i++)
        if (ct_errnames[i].code == code)
            return ct_errnames[i].name;
    return NULL;
}

const char *ct_error_label(int code, char *buf, unsigned cap)
{
    if (!buf || cap == 0)
        return "";
    const char *name = ct_error_name(code);
    if (name)
        snprintf(buf, cap, "%s", name);
    else
        snprintf(buf, cap, "CUresult %d", code);
    return buf;
}

/* "CUDA_ERROR_ILLEGAL_ADDRESS" -> "ILLEGAL_ADDRESS"; "CUDA_SUCCESS" -> "SUCCESS". */
static const char *short_name(const char *name)
{
    static const char *const prefixes[] = {"CUDA_ERROR_", "CUDA_"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(name, prefixes[i], n) == 0)
            return name + n;
    }
    return name;
}

static int parse_decimal(const char *text, int *code)
{
    long long value = 0;
    if (!*text)
        return CT_EPARSE;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9')
            return CT_EPARSE;
        value = value * 10 + (*p - '0');
        if (value > INT_MAX)
            return CT_EPARSE;
    }
    assert(value >= 0 && value <= INT_MAX && "a whole decimal token, no sign, no overflow");
    *code = (int)value;
    return CT_OK;
}

int ct_error_parse(const char *text, int *code)
{
    if (!text || !code || !*text)
        return CT_EPARSE;
    if (*text >= '0' && *text <= '9')
        return parse_decimal(text, code);
    for (size_t i = 0; i < N_ERRNAMES; i++) {
        const char *name = ct_errnames[i].name;
        if (strcasecmp(text, name) == 0 || strcasecmp(text, short_name(name)) == 0) {
            *code = ct_errnames[i].code;
            return CT_OK;
        }
    }
    return CT_EPARSE;
}

/* No usable context to judge: a probe answering these says nothing. */
static const int no_context[] = {CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_INVALID_CONTEXT,
                                 CUDA_ERROR_CONTEXT_IS_DESTROYED};
/* Stream capture's own rules: work the capture cannot record, a stream or
 * event outside it, a capture ended wrongly. */
static const int capture[] = {
    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,  CUDA_ERROR_STREAM_CAPTURE_MERGE,
    CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,   CUDA_ERROR_STREAM_CAPTURE_UNJOINED,     CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
    CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,    CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, CUDA_ERROR_CAPTURED_EVENT,
};

const ct_answer_kinds ct_cuda_answers = {
    .success = CUDA_SUCCESS,
    .not_ready = CUDA_ERROR_NOT_READY,
    .deinitialized = CUDA_ERROR_DEINITIALIZED,
    .no_context = no_context,
    .n_no_context = sizeof no_context / sizeof *no_context,
    .capture = capture,
    .n_capture = sizeof capture / sizeof *capture,
};

const ct_error_vocab ct_cuda_errors = {
    .parse = ct_error_parse,
    .success = CUDA_SUCCESS,
    .launch_default = CUDA_ERROR_LAUNCH_FAILED,
    .api_default = CUDA_ERROR_UNKNOWN,
    .context_lost = CUDA_ERROR_ILLEGAL_ADDRESS,
};
