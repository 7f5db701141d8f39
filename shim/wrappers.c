/*
 * wrappers.c - every exported cu* wrapper, generated from intercept.def.
 *
 * One template (CT_WRAP) makes all of them: resolve the real function,
 * consult CUTAINT_INJECT's api: rules, let the role's `before` hook decide
 * whether the driver is called at all (it consults launch: rules first in
 * turn), call the driver, let the `after` hook settle the taint, then probe
 * on error.  Nothing here knows what a role means.
 *
 * Injection comes before cutaint's checks: an injected call fails as its
 * rule says whatever its memory carries (a read of tainted bytes is not
 * refused, a copy from them not skipped); the `before` hook still records
 * its write set, so the failure taints what the call was to write.  The
 * first rule that fires decides; later rules do not count that call.
 *
 * Invariants:
 * - Disabled (CUTAINT_DISABLE=1) or untracked calls are a plain tail of
 *   "resolve, call, return": no hook runs.
 * - An out-parameter is read only after the driver reported success
 *   (CT_OUT), so a garbage pointer the driver refused is never touched.
 * - ct_mine.wrapper_depth counts the wrappers the thread is inside, the driver
 *   call included: above 0 at exit means the exit interrupted them.
 */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inflight.h"
#include "shim.h"

#define CT_OUT(p) ((call.result == CUDA_SUCCESS && (p)) ? (uint64_t) * (p) : 0)
/* The template's small steps are part of every wrapper (a few instructions
 * each): inlined whatever the compiler thinks of the file's size. */
#define CT_INLINE inline __attribute__((always_inline))
#define CT_OUT_HANDLE(p) ((call.result == CUDA_SUCCESS && (p)) ? (uint64_t)(uintptr_t) * (p) : 0)

/* The ways out of a lost context, by family, from intercept.def's `lost`
 * column (a family once per line of it): core's rule lets them reach the
 * driver after a simulated loss (ct_survives_simulated_loss). */
#define CT_FAMILY_IF_CT_WAY_OUT(family) #family,
#define CT_FAMILY_IF_CT_FAILS(family)
static const char *const ways_out[] = {
#define CT_WRAP(name, family, lost, ...) CT_FAMILY_IF_##lost(family)
#define CT_PTDS CT_WRAP
#define CT_PTSZ CT_WRAP
#include "intercept.def"
#undef CT_WRAP
#undef CT_PTDS
#undef CT_PTSZ
};
#undef CT_FAMILY_IF_CT_WAY_OUT
#undef CT_FAMILY_IF_CT_FAILS

/* Compared only once a loss is simulated. */
static bool survives_simulated_loss(int id)
{
    return ct_survives_simulated_loss(ct_entries[id].family, ways_out, sizeof ways_out / sizeof *ways_out);
}

/* Resolve the real function and prepare the call record; NULL when there is
 * nothing to call (call->result then holds the answer). */
static CT_INLINE void *call_begin(ct_call *call, int id)
{
    ct_ensure_ready();
    call->id = id;
    call->answered = false;
    call->injected = false;
    call->inject_loss = false;
    call->per_thread = ct_entries[id].per_thread;
    call->provisional = 0;
    call->n_writes = 0;
    call->writes_kind = CT_WRITES_ROOM;
    call->kernel = NULL;
    call->tracked = !ct_g.cfg.disable;
    void *real = ct_real(id);
    if (CT_UNLIKELY(!real)) {
        call->result = ct_driver_loaded() ? CUDA_ERROR_NOT_FOUND : CT_NO_DRIVER_RESULT;
        return NULL;
    }
    return real;
}

/* A tracked call while CUTAINT_INJECT simulates a destroyed context: false
 * when the call fails as on a lost context (call->result says so). */
static CT_INLINE bool call_survives(ct_call *call)
{
    if (CT_UNLIKELY(ct_context_simulated_lost() && !survives_simulated_loss(call->id))) {
        call->result = CUDA_ERROR_ILLEGAL_ADDRESS;
        return false;
    }
    return true;
}

bool ct_call_inject_rules(ct_call *call, ct_inject_kind kind, const char *name, const char *alt)
{
    if (call->injected)
        return true;
    const ct_inject_rule *rule = ct_inject_check(&ct_g.cfg.inject, kind, name, alt);
    if (!rule)
        return false;
    call->injected = true;
    call->inject_loss = rule->context_loss;
    call->result = rule->context_loss ? CUDA_ERROR_ILLEGAL_ADDRESS : (CUresult)rule->error;
    return true;
}

/* The rule count is tested before the names are loaded: with no rule (a
 * production run) every wrapper pays one load and a branch. */
static CT_INLINE bool call_injected(ct_call *call)
{
    if (__builtin_expect(ct_g.cfg.inject.n == 0, 1))
        return false;
    return ct_call_inject_rules(call, CT_INJECT_API, ct_entries[call->id].name, ct_entries[call->id].family);
}

/* An error the driver (or CUTAINT_INJECT) returned: is the context alive? */
static CUresult call_failed(ct_call *call)
{
    if (call->inject_loss)
        ct_simulate_context_loss(ct_entries[call->id].name, call->kernel);
    else
        ct_probe_after_error(ct_entries[call->id].name, call->kernel, call->result);
    return call->result;
}

/* The happy path pays a test, not a call. */
static CT_INLINE CUresult call_finish(ct_call *call)
{
    if (call->result == CUDA_SUCCESS || !call->tracked || call->answered)
        return call->result;
    return call_failed(call);
}

void ct_after_plain(ct_call *call)
{
    (void)call;
}

CT_HOT_TLS ct_thread_state ct_mine;

/* Each wrapper: its body inlined between the two depth counts. */
#define CT_WRAP(name, family, lost, params, args, before, after)              \
    typedef CUresult CUDAAPI ct_fn_##name params;                             \
    static CT_INLINE CUresult ct_body_##name params                           \
    {                                                                         \
        ct_call call;                                                         \
        ct_fn_##name *real = (ct_fn_##name *)call_begin(&call, CT_ID_##name); \
        if (!real)                                                            \
            return call.result;                                               \
        if (call.tracked) {                                                   \
            if (!call_survives(&call))                                        \
                return call.result;                                           \
            (void)call_injected(&call);                                       \
            if (!(before))                                                    \
                return call_finish(&call);                                    \
            if (call.injected)                                                \
                goto settle;                                                  \
        }                                                                     \
        call.result = real args;                                              \
    settle:                                                                   \
        if (call.tracked) {                                                   \
            after;                                                            \
        }                                                                     \
        return call_finish(&call);                                            \
    }                                                                         \
    CT_EXPORT CUresult CUDAAPI name params                                    \
    {                                                                         \
        ct_mine.wrapper_depth++;                                              \
        CUresult result = ct_body_##name args;                                \
        ct_mine.wrapper_depth--;                                              \
        return result;                                                        \
    }
#define CT_PTDS(name, family, ...) CT_WRAP(name, family, __VA_ARGS__) CT_WRAP(name##_ptds, family, __VA_ARGS__)
#define CT_PTSZ(name, family, ...) CT_WRAP(name, family, __VA_ARGS__) CT_WRAP(name##_ptsz, family, __VA_ARGS__)
#include "intercept.def"
#undef CT_WRAP
#undef CT_PTDS
#undef CT_PTSZ

const ct_entry ct_entries[CT_N_ENTRIES] = {
#define CT_ENTRY(name, family, per_thread) [CT_ID_##name] = {#name, #family, (void *)name, per_thread},
#define CT_WRAP(name, family, ...) CT_ENTRY(name, family, false)
#define CT_PTDS(name, family, ...) CT_ENTRY(name, family, false) CT_ENTRY(name##_ptds, family, true)
#define CT_PTSZ(name, family, ...) CT_ENTRY(name, family, false) CT_ENTRY(name##_ptsz, family, true)
#include "intercept.def"
    CT_WRAP(cuGetProcAddress, cuGetProcAddress) CT_WRAP(cuGetProcAddress_v2, cuGetProcAddress)
#undef CT_ENTRY
#undef CT_WRAP
#undef CT_PTDS
#undef CT_PTSZ
};

/* Names sorted once, for the dlsym hook's lookups. */
static int sorted[CT_N_ENTRIES];
static pthread_once_t sorted_once = PTHREAD_ONCE_INIT;

static int by_name(const void *a, const void *b)
{
    return strcmp(ct_entries[*(const int *)a].name, ct_entries[*(const int *)b].name);
}

static void sort_names(void)
{
    for (int i = 0; i < CT_N_ENTRIES; i++)
        sorted[i] = i;
    qsort(sorted, CT_N_ENTRIES, sizeof *sorted, by_name);
    for (int i = 1; i < CT_N_ENTRIES; i++)
        assert(by_name(&sorted[i - 1], &sorted[i]) < 0 && "entry names are unique: bsearch finds the one");
}

static int order_of_name(const void *name, const void *id)
{
    return strcmp(name, ct_entries[*(const int *)id].name);
}

int ct_entry_find(const char *name)
{
    pthread_once(&sorted_once, sort_names);
    const int *id = bsearch(name, sorted, CT_N_ENTRIES, sizeof *sorted, order_of_name);
    return id ? *id : -1;
}
