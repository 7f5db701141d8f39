/*
 * standins.c - stand-ins: library and kernel handles cutaint makes up for
 * NVIDIA's runtime when the driver refused the runtime's image, or a kernel
 * in it, so that the runtime goes on to make the launch (docs/DESIGN.md,
 * "Stand-ins").
 *
 * Refused, the runtime fails the program's launch itself and never calls
 * the driver: cutaint would see no launch, and the program's next read of
 * the buffer the kernel was to write would be served stale.  Answered with
 * a stand-in, the runtime looks the kernel up in it and launches it with
 * the program's arguments; that launch fails here with the error the load
 * or lookup had (the deferred error), which the runtime turns into the
 * very error the program got before, and its outputs take the failure
 * (launch.c).  Every other call on a stand-in answers the deferred error
 * too, as the runtime's own failed load made every call on the image fail,
 * but two (core's ct_stand_in_call_rule): cuKernelGetFunction of a stand-in
 * kernel answers the kernel itself, and a graph kernel node given one is
 * answered as the driver answers cuKernelGetFunction of the handle the
 * stand-in replaced, as the runtime's node path asks without cutaint.
 *
 * Invariants:
 * - A stand-in's handle is the address of its own entry, and entries are
 *   never freed: no handle the driver hands out can equal one while the
 *   process lives, and a stand-in stays one after its library's unload
 *   (then answering CUDA_ERROR_INVALID_HANDLE, as for any unloaded handle).
 * - A stand-in never reaches the driver.  Every wrapper of an entry point
 *   that takes a library, kernel or function handle asks ct_not_stand_in
 *   first (intercept.def; tests/integration/check_handles.py holds the list
 *   to cuda.h); no stand-in module is ever handed out; cutaint's own driver
 *   calls never take one (kernels.c describes a stand-in's kernel from its
 *   image).  Stand-ins are made only while nothing is loaded ahead of
 *   libcutaint.so (chain.c): such a library could pass one on unseen.
 * - What a stand-in kernel replaced is never a stand-in (an earlier one's
 *   replaced is taken instead): asking the driver of it passes none on.
 * - At most CT_STAND_INS_MAX entries are made; past them the driver's
 *   error is the runtime's, as without cutaint (said once).
 * - The registry changes under stand_ins_lock, and no driver call is made
 *   while it is held.  While no stand-in was ever made, asking costs one
 *   relaxed atomic load.
 */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

#include "ct_hash.h"
#include "image.h"
#include "kernels.h"
#include "shim.h"

#define CT_STAND_INS_MAX 65536

typedef struct stand_in {
    uint64_t handle;   /* the entry's own address */
    bool kernel;       /* else a library */
    bool unloaded;     /* its library was unloaded */
    CUresult error;    /* the deferred error */
    uint32_t image;    /* the image event's number */
    uint64_t library;  /* a kernel's library: a stand-in, or a real one whose lookup failed */
    uint64_t replaced; /* a kernel's: the handle the runtime held where it got the stand-in */
    ct_image *img;     /* a stand-in library's image, read at its load: its kernels' layouts */
    UT_hash_handle hh;
} stand_in;

atomic_uint ct_stand_ins_made;
static stand_in *stand_ins; /* by handle */
static pthread_mutex_t stand_ins_lock = PTHREAD_MUTEX_INITIALIZER;

void ct_stand_ins_atfork_child(void)
{
    pthread_mutex_init(&stand_ins_lock, NULL);
}

static stand_in *find_locked(uint64_t handle)
{
    stand_in *s;
    HASH_FIND(hh, stand_ins, &handle, sizeof handle, s);
    assert((!s || s->handle == (uint64_t)(uintptr_t)s) && "a stand-in's handle is its own address");
    return s;
}

/* A new entry; NULL when out of memory or past CT_STAND_INS_MAX (said once). */
static stand_in *make(bool kernel, CUresult error, uint32_t image, uint64_t library, uint64_t replaced)
{
    static atomic_bool told_full;
    if (atomic_load(&ct_stand_ins_made) >= CT_STAND_INS_MAX) {
        if (!atomic_exchange(&told_full, true))
            ct_log(CT_LOG_WARN, "%d stand-ins made: the runtime sees the driver's errors from now on (said once)",
                   CT_STAND_INS_MAX);
        return NULL;
    }
    stand_in *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    *s = (stand_in){.handle = (uint64_t)(uintptr_t)s,
                    .kernel = kernel,
                    .error = error,
                    .image = image,
                    .library = library,
                    .replaced = replaced};
    pthread_mutex_lock(&stand_ins_lock);
    /* The runtime's variable may still hold an earlier stand-in: what that
     * one replaced is what the driver would be asked of. */
    const stand_in *earlier = find_locked(replaced);
    if (earlier)
        s->replaced = earlier->replaced;
    HASH_ADD(hh, stand_ins, handle, sizeof s->handle, s);
    bool added = ct_hash_added(&s->hh);
    pthread_mutex_unlock(&stand_ins_lock);
    if (!added) {
        free(s);
        return NULL;
    }
    atomic_fetch_add(&ct_stand_ins_made, 1);
    return s;
}

/* What a call on stand-in handle answers (core's ct_stand_in_call_rule,
 * facts f but for the stand-in's own): *answer, or for CT_STAND_IN_REPLACED
 * the handle the driver is to be asked of (*replaced); false when handle is
 * no stand-in. */
static bool answer_of(uint64_t handle, ct_stand_in_call_facts f, ct_stand_in_call_verdict *verdict, CUresult *answer,
                      uint32_t *image, uint64_t *replaced)
{
    pthread_mutex_lock(&stand_ins_lock);
    const stand_in *s = find_locked(handle);
    if (s) {
        f.unloaded = s->unloaded;
        f.kernel = s->kernel;
        *verdict = ct_stand_in_call_rule(&f);
        *answer = *verdict == CT_STAND_IN_UNLOADED ? CUDA_ERROR_INVALID_HANDLE : s->error;
        *image = s->image;
        *replaced = s->replaced;
    }
    pthread_mutex_unlock(&stand_ins_lock);
    return s != NULL;
}

bool ct_stand_in_answer(uint64_t handle, CUresult *answer, uint32_t *image)
{
    ct_stand_in_call_verdict verdict;
    uint64_t replaced;
    return answer_of(handle, (ct_stand_in_call_facts){0}, &verdict, answer, image, &replaced);
}

bool ct_not_stand_in_slow(ct_call *call, uint64_t handle)
{
    uint32_t image;
    if (!ct_stand_in_answer(handle, &call->result, &image))
        return true;
    call->answered = true;
    return false;
}

/* ---- the loads and lookups they stand in for ------------------------------ */

uint64_t ct_stand_in_library(CUresult error, uint32_t image, ct_image *img)
{
    stand_in *s = make(false, error, image, 0, 0);
    if (!s)
        return 0;
    s->img = img; /* written before any lookup can find the handle: the caller has not returned it yet */
    return s->handle;
}

uint64_t ct_stand_in_kernel(uint64_t library, const char *name, CUresult error, uint32_t image, const ct_image *img,
                            uint64_t replaced)
{
    stand_in *k = name ? make(true, error, image, library, replaced) : NULL;
    if (!k)
        return 0;
    ct_kernel_offline(k->handle, name, library, img);
    return k->handle;
}

bool ct_before_library_kernel(ct_call *call, CUkernel *out, CUlibrary library, const char *name)
{
    if (!ct_stand_ins_exist())
        return true;
    uint64_t lib = (uint64_t)(uintptr_t)library;
    pthread_mutex_lock(&stand_ins_lock);
    const stand_in *s = find_locked(lib);
    bool live = s && !s->kernel && !s->unloaded;
    CUresult error = s ? s->error : CUDA_SUCCESS;
    uint32_t image = s ? s->image : 0;
    /* The image stays until the library's unload, which the runtime
     * does not race with its own lookups. */
    const ct_image *img = live ? s->img : NULL;
    pthread_mutex_unlock(&stand_ins_lock);
    if (!s)
        return true;
    call->answered = true;
    if (!live || !name || !out) {
        call->result = !live ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
        return false;
    }
    /* Without cutaint no lookup is made: the runtime keeps what it held. */
    uint64_t k = ct_stand_in_kernel(lib, name, error, image, img, (uint64_t)(uintptr_t)*out);
    call->result = k ? CUDA_SUCCESS : error;
    if (k)
        *out = (CUkernel)(uintptr_t)k;
    return false;
}

/* The library's stand-in kernels, and a stand-in library itself, answer
 * CUDA_ERROR_INVALID_HANDLE from now on. */
static void unload_locked(uint64_t library, ct_image **img)
{
    stand_in *s, *next;
    HASH_ITER(hh, stand_ins, s, next)
    {
        /* cppcheck-suppress uninitvar ; uthash's HASH_ITER sets s before the body (a macro it does not follow) */
        if (s->handle == library || (s->kernel && s->library == library)) {
            s->unloaded = true;
            if (s->img)
                *img = s->img;
            s->img = NULL;
        }
    }
}

static void unload(uint64_t library)
{
    ct_image *img = NULL;
    pthread_mutex_lock(&stand_ins_lock);
    unload_locked(library, &img);
    pthread_mutex_unlock(&stand_ins_lock);
    ct_image_release(img);
}

void ct_stand_ins_unloaded(uint64_t library)
{
    if (ct_stand_ins_exist())
        unload(library);
}

bool ct_before_library_unload(ct_call *call, CUlibrary library)
{
    uint64_t lib = (uint64_t)(uintptr_t)library;
    if (!ct_stand_ins_exist())
        return ct_before_image_unload(call, lib);
    CUresult answer;
    uint32_t image;
    if (!ct_stand_in_answer(lib, &answer, &image))
        return ct_before_image_unload(call, lib); /* a real one: ct_stand_ins_unloaded after the driver */
    unload(lib);
    ct_kernels_forget_owner(lib);
    call->answered = true;
    call->result = answer == CUDA_ERROR_INVALID_HANDLE ? answer : CUDA_SUCCESS;
    return false;
}

/* ---- the other handles' entry points ----------------------------------------- */

bool ct_before_kernel_function(ct_call *call, CUfunction *out, CUkernel kernel)
{
    if (!ct_stand_ins_exist())
        return true;
    ct_stand_in_call_verdict verdict;
    uint32_t image;
    uint64_t replaced;
    if (!answer_of((uint64_t)(uintptr_t)kernel, (ct_stand_in_call_facts){.gets_function = true}, &verdict,
                   &call->result, &image, &replaced))
        return true;
    call->answered = true;
    if (verdict == CT_STAND_IN_ITSELF) {
        call->result = out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
        if (out)
            *out = (CUfunction)(void *)kernel;
    }
    return false;
}

/* A graph kernel node's handle: false, answered, when it is a stand-in. */
static bool not_stand_in_node(ct_call *call, uint64_t handle)
{
    ct_stand_in_call_verdict verdict;
    uint32_t image;
    uint64_t replaced;
    if (!ct_stand_ins_exist() ||
        !answer_of(handle, (ct_stand_in_call_facts){.sets_node = true}, &verdict, &call->result, &image, &replaced))
        return true;
    call->answered = true;
    if (verdict != CT_STAND_IN_REPLACED)
        return false;
    /* cutaint's own question, of a handle the driver handed out (or none):
     * never a stand-in. */
    assert(!answer_of(replaced, (ct_stand_in_call_facts){0}, &verdict, &call->result, &image, &replaced) &&
           "a stand-in replaces what the driver left, never another stand-in");
    __typeof__(&cuKernelGetFunction) get_function = ct_real(CT_ID_cuKernelGetFunction);
    CUfunction f;
    CUresult asked = get_function ? get_function(&f, (CUkernel)(uintptr_t)replaced) : CUDA_SUCCESS;
    if (asked != CUDA_SUCCESS)
        call->result = asked;
    return false;
}

bool ct_not_stand_in_nodes(ct_call *call, const CUDA_KERNEL_NODE_PARAMS *p)
{
    return !p || (not_stand_in_node(call, (uint64_t)(uintptr_t)p->func) &&
                  not_stand_in_node(call, (uint64_t)(uintptr_t)p->kern));
}

bool ct_not_stand_in_node_v1(ct_call *call, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    return !p || not_stand_in_node(call, (uint64_t)(uintptr_t)p->func);
}

bool ct_not_stand_in_node_params(ct_call *call, const CUgraphNodeParams *p)
{
    return !p || p->type != CU_GRAPH_NODE_TYPE_KERNEL ||
           (not_stand_in_node(call, (uint64_t)(uintptr_t)p->kernel.func) &&
            not_stand_in_node(call, (uint64_t)(uintptr_t)p->kernel.kern));
}

bool ct_not_stand_in_launches(ct_call *call, const CUDA_LAUNCH_PARAMS *list, unsigned n)
{
    for (unsigned i = 0; list && i < n; i++)
        if (!ct_not_stand_in(call, (uint64_t)(uintptr_t)list[i].function))
            return false;
    return true;
}
