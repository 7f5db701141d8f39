/*
 * images.c - kernel images: what the program loads as kernel code, and
 * what cutaint says when the driver cannot use one.
 *
 * A load the driver refuses (a build for another GPU: CUDA_ERROR_NO_BINARY_
 * FOR_GPU), or a kernel lookup it fails, is not yet a failure of work:
 * programs try a cubin and fall back to PTX, probe for optional kernels and
 * carry images they never launch.  So it is said, not counted as a root:
 * cutaint reads the image (core/image.h) and writes one warn line and one
 * `image` event naming what the image holds, what the device is, and what
 * the device could do with it.  The first launch of one of its kernels is
 * where the harm is done: for NVIDIA's runtime, which would fail that
 * launch itself, the refusal is answered with a stand-in (core's
 * ct_stand_in_rule, standins.c), so that the launch reaches cutaint.
 *
 * A load that succeeds is read once, while its image surely exists (the
 * program may free it as soon as the load returns), for the parameter
 * directions its PTX states (core/ptx.h, docs/IMAGES.md); the registry
 * keeps what was read, and where the image lies.  A lookup failing later
 * (the first use of a kernel the driver lacks) is told from what was kept,
 * never by reading the whole image again: the first use stays cheap
 * however large the image (tools/bench's first_use).
 *
 * Invariants:
 * - Every ct_image made here is reference-counted (shared_image): the
 *   registry's kept read is lent to a failed lookup while the registry may
 *   forget it, and is freed by the last holder.
 * - An image is read only after the driver refused it or a lookup in it
 *   (then only when nothing was kept of its load), or at a load that
 *   succeeded, through process_vm_readv on this process (the pointer may be garbage:
 *   a refused read is an unreadable image, never a fault), or from its
 *   file; at most as far as its headers state; never written.
 * - The registry changes under images_lock; no driver call and no image
 *   read is made while it is held.
 * - The registry is keyed by the lifetime of a module's or library's handle
 *   (core/lifetimes.h, ct_g.images), never by the handle: the driver may
 *   hand a handle it just unloaded to another thread's load at once, and a
 *   load starts a new lifetime.  An unload forgets the lifetime it ended,
 *   after the driver said so; one the driver refuses forgets nothing.  A
 *   load forgets the lifetime its handle had before (a module gone with its
 *   context, unseen): the registry holds at most one lifetime a handle.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ct_hash.h"
#include "image.h"
#include "kernels.h"
#include "shim.h"
#include "signature.h"

/* A ct_image with its holders' count: the registry's and each lookup's
 * borrowing it.  The image is first: a shared_image's ct_image is it. */
typedef struct shared_image {
    ct_image img;
    atomic_uint holders;
} shared_image;

/* A new image to read into, held once; NULL when out of memory. */
static ct_image *new_image(void)
{
    shared_image *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    atomic_init(&s->holders, 1);
    return &s->img;
}

static ct_image *hold(ct_image *img)
{
    if (img) {
        unsigned had = atomic_fetch_add(&((shared_image *)(void *)img)->holders, 1);
        assert(had > 0 && "only a held image is lent: the last holder may have freed it");
        (void)had;
    }
    return img;
}

/* One holder less; the last frees it. */
static void release(ct_image *img)
{
    shared_image *s = (shared_image *)(void *)img;
    if (!s)
        return;
    unsigned had = atomic_fetch_sub(&s->holders, 1);
    assert(had > 0 && "an image is released once per holder");
    if (had != 1)
        return;
    ct_image_free(&s->img);
    free(s);
}

/* What a loaded module or library was made from: an image in memory
 * (address) or a file (path). */
typedef struct loaded {
    uint64_t lifetime; /* of the module's or library's handle */
    uint64_t address;
    char *path;
    bool runtime;     /* NVIDIA's runtime's own image (preserved): a failed lookup in it may be stood in for */
    ct_image *read;   /* read at load with its PTX's directions (owned); NULL when it could not be */
    uint64_t library; /* a library's module: the library's lifetime, whose entry holds what was read */
    UT_hash_handle hh;
} loaded;

static loaded *images; /* by lifetime */
static pthread_mutex_t images_lock = PTHREAD_MUTEX_INITIALIZER;

void ct_images_atfork_child(void)
{
    pthread_mutex_init(&images_lock, NULL);
}

/* ---- reading an image safely -------------------------------------------- */

static bool fetch_memory(void *ctx, uint64_t offset, void *dst, size_t len)
{
    uint64_t base = *(const uint64_t *)ctx;
    struct iovec to = {dst, len}, from = {(void *)(uintptr_t)(base + offset), len};
    return len == 0 || process_vm_readv(getpid(), &to, 1, &from, 1, 0) == (ssize_t)len;
}

static bool fetch_file(void *ctx, uint64_t offset, void *dst, size_t len)
{
    int fd = *(const int *)ctx;
    for (size_t done = 0; done < len;) {
        ssize_t n = pread(fd, (char *)dst + done, len - done, (off_t)(offset + done));
        if (n <= 0 && !(n < 0 && errno == EINTR))
            return false;
        done += n > 0 ? (size_t)n : 0;
    }
    return true;
}

/* Reads the image at address (at most size bytes, 0: what its headers
 * say), or in the file at path; with its PTX's directions or not. */
static void read_image_as(ct_image *img, uint64_t address, uint64_t size, const char *path, bool directions)
{
    if (path) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            memset(img, 0, sizeof *img);
            img->status = CT_IMAGE_UNREADABLE;
        } else {
            ct_image_read_file(img, fetch_file, &fd, (uint64_t)st.st_size, directions);
        }
        if (fd >= 0)
            close(fd);
        return;
    }
    /* Offsets from the image's address, so that a wrapper's pointer to its
     * fatbin (an address) is an offset too. */
    if (directions)
        ct_image_read_directions(img, fetch_memory, &address, size, &address);
    else
        ct_image_read_at(img, fetch_memory, &address, size, address);
}

static void read_image(ct_image *img, uint64_t address, uint64_t size, const char *path)
{
    read_image_as(img, address, size, path, false);
}

/* A loaded image, read for its directions, on the heap; NULL when out of
 * memory or unreadable (its kernels' roles then come from their
 * signatures). */
static ct_image *read_loaded(uint64_t address, const char *path)
{
    ct_image *img = new_image();
    if (!img)
        return NULL;
    read_image_as(img, address, 0, path, true);
    if (img->status == CT_IMAGE_OK)
        return img;
    release(img);
    return NULL;
}

/* ---- what the device is ---------------------------------------------------- */

typedef struct device_facts {
    char name[128];
    unsigned cc; /* major * 10 + minor; 0 unknown */
} device_facts;

static device_facts current_device(void)
{
    device_facts d = {"", 0};
    __typeof__(&cuCtxGetDevice) get_device = CT_HELPER(cuCtxGetDevice);
    __typeof__(&cuDeviceGetAttribute) attribute = CT_HELPER(cuDeviceGetAttribute);
    __typeof__(&cuDeviceGetName) get_name = CT_HELPER(cuDeviceGetName);
    CUdevice dev;
    int major = 0, minor = 0;
    if (!get_device || get_device(&dev) != CUDA_SUCCESS)
        return d;
    if (attribute && attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS &&
        attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS && major > 0 &&
        minor >= 0 && minor < 10)
        d.cc = (unsigned)(major * 10 + minor);
    if (!get_name || get_name(d.name, (int)sizeof d.name, dev) != CUDA_SUCCESS)
        d.name[0] = '\0';
    d.name[sizeof d.name - 1] = '\0';
    return d;
}

/* ---- saying it ---------------------------------------------------------------- */

/* The image at address (or in the file at path) read, on the heap: the
 * caller's to free (release); NULL when out of memory (said). */
static ct_image *read_refused(const ct_call *call, uint64_t address, uint64_t size, const char *path)
{
    ct_image *img = new_image();
    if (!img) {
        ct_log(CT_LOG_WARN, "%s failed with %s; out of memory to read the image", ct_entries[call->id].name,
               ct_cu_error_name(call->result));
        return NULL;
    }
    read_image(img, address, size, path);
    return img;
}

/* The next image event's number, from 1. */
static uint32_t next_number(void)
{
    return (uint32_t)atomic_fetch_add(&ct_g.unusable_images, 1) + 1;
}

/* The image event of a refusal, numbered. */
static void say(const ct_call *call, const ct_image *img, uint64_t address, const char *path, const char *kernel,
                uint32_t number, bool stand_in)
{
    device_facts dev = current_device();
    ct_event_image(&(ct_image_report){.api = ct_entries[call->id].name,
                                      .error = (int)call->result,
                                      .address = path ? 0 : address,
                                      .path = path,
                                      .kernel = kernel,
                                      .image = img,
                                      .device = dev.name[0] ? dev.name : NULL,
                                      .cc = dev.cc,
                                      .number = number,
                                      .stand_in = stand_in});
}

static void tell(const ct_call *call, uint64_t address, uint64_t size, const char *path, const char *kernel)
{
    ct_image *img = read_refused(call, address, size, path);
    if (img)
        say(call, img, address, path, kernel, next_number(), false);
    release(img);
}

/* ---- stand-ins: which refusals are answered for the runtime ------------------ */

/* What the driver's code says of the image (core's ct_stand_in_rule). */
static ct_load_refusal refusal_of(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_JIT_COMPILATION_DISABLED: return CT_REFUSED_IMAGE;
    case CUDA_ERROR_NOT_FOUND: return CT_REFUSED_KERNEL;
    default: return CT_REFUSED_OTHER;
    }
}

/* NVIDIA's runtime loads its own image as a __fatBinC_Wrapper_t with
 * CU_LIBRARY_BINARY_IS_PRESERVED set (measured: docs/DESIGN.md,
 * "Stand-ins"); the options are read safely, as the image is, for the
 * driver has refused the call and its arrays may be garbage. */
static bool preserved(const CUlibraryOption *options, void *const *values, unsigned n)
{
    for (unsigned i = 0; options && values && i < n && i < 64; i++) {
        CUlibraryOption option;
        uint64_t value = 0, base = 0;
        if (!fetch_memory(&base, (uint64_t)(uintptr_t)(options + i), &option, sizeof option) ||
            !fetch_memory(&base, (uint64_t)(uintptr_t)(values + i), &value, sizeof(void *)))
            return false;
        if (option == CU_LIBRARY_BINARY_IS_PRESERVED)
            return value != 0;
    }
    return false;
}

static atomic_bool told_ahead;

/* Does the driver load modules eagerly?  Asked once (cuModuleGetLoadingMode;
 * a driver without it loads eagerly, as before CUDA 11.7). */
static bool loads_eagerly(void)
{
    static atomic_int eager = -1;
    int known = atomic_load(&eager);
    if (known >= 0)
        return known;
    __typeof__(&cuModuleGetLoadingMode) mode_of = CT_HELPER(cuModuleGetLoadingMode);
    CUmoduleLoadingMode mode = CU_MODULE_EAGER_LOADING;
    if (mode_of && mode_of(&mode) != CUDA_SUCCESS)
        mode = CU_MODULE_EAGER_LOADING;
    atomic_store(&eager, mode == CU_MODULE_EAGER_LOADING);
    return mode == CU_MODULE_EAGER_LOADING;
}

/* Does the rule answer this refusal with a stand-in? */
static bool stands_in_for(const ct_call *call, bool lookup, bool runtime_image)
{
    ct_stand_in_facts facts = {.refused = refusal_of(call->result), .lookup = lookup, .runtime_image = runtime_image};
    if (ct_stand_in_rule(&facts) == CT_DRIVER_ANSWERS)
        return false; /* the driver asked only where it matters, the library ahead (dlsym over every entry point) too */
    facts.eager = loads_eagerly();
    if (ct_stand_in_rule(&facts) == CT_DRIVER_ANSWERS)
        return false;
    const char *ahead = ct_chain_library_ahead();
    facts.library_ahead = ahead != NULL;
    if (ct_stand_in_rule(&facts) == CT_STAND_IN)
        return true;
    if (!atomic_exchange(&told_ahead, true))
        ct_log(CT_LOG_WARN,
               "%s is loaded ahead of libcutaint.so: the runtime is left the driver's %s, so the "
               "launches of that image's kernels never reach cutaint and reads of what they were to write are "
               "not refused (said once)",
               ahead, ct_cu_error_name(call->result));
    return false;
}

/* ---- the registry ------------------------------------------------------------ */

static void forget_entry(loaded *e)
{
    if (!e)
        return;
    release(e->read);
    free(e->path);
    free(e);
}

/* The lifetime of a loaded module or library was loaded from the image at
 * address (or path); read: what was read of it (taken), or library: the
 * library it is a module of. */
static void remember(uint64_t lifetime, uint64_t address, const char *path, bool runtime, ct_image *read,
                     uint64_t library)
{
    loaded *e = calloc(1, sizeof *e);
    if (!e || (path && !(e->path = strdup(path)))) {
        free(e);
        release(read);
        return; /* a later failed lookup cannot say what the image held */
    }
    e->lifetime = lifetime;
    e->address = address;
    e->runtime = runtime;
    e->read = read;
    e->library = library;
    pthread_mutex_lock(&images_lock);
    loaded *old;
    HASH_FIND(hh, images, &lifetime, sizeof lifetime, old);
    if (old)
        HASH_DELETE(hh, images, old);
    HASH_ADD(hh, images, lifetime, sizeof e->lifetime, e);
    bool added = ct_hash_added(&e->hh);
    pthread_mutex_unlock(&images_lock);
    forget_entry(old);
    if (!added)
        forget_entry(e);
}

/* Where the image of a lifetime lies: false when cutaint did not see it
 * load.  *path, when set, is the caller's to free; *kept, when kept is
 * given, what was read of it at its load (its library's, for a library's
 * module), held for the caller (release it), or NULL. */
static bool where(uint64_t lifetime, uint64_t *address, char **path, bool *runtime, ct_image **kept)
{
    bool known = false;
    pthread_mutex_lock(&images_lock);
    loaded *e, *source = NULL;
    HASH_FIND(hh, images, &lifetime, sizeof lifetime, e);
    if (e) {
        *address = e->address;
        *runtime = e->runtime;
        *path = e->path ? strdup(e->path) : NULL;
        known = !e->path || *path;
        source = e;
        if (e->library)
            HASH_FIND(hh, images, &e->library, sizeof e->library, source);
    }
    if (kept)
        *kept = source ? hold(source->read) : NULL;
    pthread_mutex_unlock(&images_lock);
    return known;
}

/* ---- the hooks ------------------------------------------------------------- */

/* A load's new lifetime for handle.  The driver handed the handle out
 * again, so the module or library it named before is gone (with its
 * context, say, unseen): what was filed under that lifetime goes. */
static uint64_t loaded_as(uint64_t handle)
{
    uint64_t replaced;
    uint64_t lifetime = ct_lifetime_born(ct_g.images, handle, &replaced);
    if (replaced) {
        ct_images_forget(replaced);
        ct_stand_ins_unloaded(replaced);
        ct_kernels_forget_owner(replaced);
    }
    return lifetime;
}

void ct_after_image_load(ct_call *call, uint64_t handle, const void *image, const char *path)
{
    if (call->result == CUDA_SUCCESS) {
        if (handle)
            remember(loaded_as(handle), (uint64_t)(uintptr_t)image, path, false,
                     read_loaded((uint64_t)(uintptr_t)image, path), 0);
        return;
    }
    if (image || path)
        tell(call, (uint64_t)(uintptr_t)image, 0, path, NULL);
}

void ct_after_library_load(ct_call *call, CUlibrary *library, const void *code, const CUlibraryOption *options,
                           void *const *values, unsigned n_options)
{
    uint64_t address = (uint64_t)(uintptr_t)code;
    bool kept = preserved(options, values, n_options);
    if (call->result == CUDA_SUCCESS) {
        if (library && *library) {
            /* A look at the wrapper's magic, not a read of the fatbin: the healthy load stays cheap. */
            uint32_t magic = 0;
            bool wrapper = kept && fetch_memory(&address, 0, &magic, sizeof magic) && magic == CT_IMAGE_WRAPPER_MAGIC;
            remember(loaded_as((uint64_t)(uintptr_t)*library), address, NULL, wrapper, read_loaded(address, NULL), 0);
        }
        return;
    }
    ct_image *img = code ? read_refused(call, address, 0, NULL) : NULL;
    if (!img)
        return;
    bool stand_in = library && stands_in_for(call, false, kept && img->form == CT_IMAGE_WRAPPER);
    uint32_t number = next_number();
    /* The stand-in keeps the image; said after it, which reads it still. */
    uint64_t handle = stand_in ? ct_stand_in_library(call->result, number, img) : 0;
    say(call, img, address, NULL, NULL, number, handle != 0);
    if (!handle) {
        release(img);
        return;
    }
    ct_log(CT_LOG_INFO, "%s: stand-in library 0x%llx for the runtime in place of %s", ct_entries[call->id].name,
           (unsigned long long)handle, ct_cu_error_name(call->result));
    *library = (CUlibrary)(uintptr_t)handle;
    call->result = CUDA_SUCCESS;
}

/* cuLinkAddData / cuLinkAddFile: an input of a link the driver refused. */
void ct_after_link_input(ct_call *call, const void *data, size_t size, const char *path)
{
    if (call->result != CUDA_SUCCESS && (data || path))
        tell(call, (uint64_t)(uintptr_t)data, size, path, NULL);
}

void ct_after_module_of_library(ct_call *call, uint64_t module, uint64_t library)
{
    uint64_t address = 0;
    char *path = NULL;
    bool runtime;
    uint64_t of_library = call->result == CUDA_SUCCESS && module ? ct_lifetime_find(ct_g.images, library) : 0;
    if (of_library && where(of_library, &address, &path, &runtime, NULL))
        remember(ct_lifetime_of(ct_g.images, module), address, path, false, NULL, of_library);
    free(path);
}

void ct_image_lookup_failed(ct_call *call, uint64_t owner, const char *kernel, CUkernel *stand_in)
{
    uint64_t address = 0;
    char *path = NULL;
    bool runtime = false;
    if (call->result == CUDA_SUCCESS || call->answered)
        return;
    ct_image *img = NULL;
    if (!where(owner, &address, &path, &runtime, &img)) {
        release(img);
        ct_log(CT_LOG_WARN, "%s of %s failed with %s; cutaint did not see its module or library load",
               ct_entries[call->id].name, kernel ? kernel : "a kernel", ct_cu_error_name(call->result));
        return;
    }
    if (!img) /* nothing kept of its load (not read whole): read it now, to say why */
        img = read_refused(call, address, 0, path);
    if (!img) {
        free(path);
        return;
    }
    bool answer = stand_in && kernel && stands_in_for(call, true, runtime);
    uint32_t number = next_number();
    /* What the driver's failed lookup left is what the runtime holds without cutaint. */
    uint64_t handle =
        answer ? ct_stand_in_kernel(owner, kernel, call->result, number, img, (uint64_t)(uintptr_t)*stand_in) : 0;
    say(call, img, address, path, kernel, number, handle != 0);
    free(path);
    release(img);
    if (handle) {
        *stand_in = (CUkernel)(uintptr_t)handle;
        call->result = CUDA_SUCCESS;
    }
}

ct_image *ct_image_of(uint64_t owner)
{
    uint64_t address = 0;
    char *path = NULL;
    bool runtime = false;
    ct_image *img = NULL;
    if (!where(owner, &address, &path, &runtime, &img) || !runtime) {
        free(path);
        release(img);
        return NULL;
    }
    if (!img && (img = new_image()))
        read_image(img, address, 0, path);
    free(path);
    return img;
}

void ct_image_release(ct_image *img)
{
    release(img);
}

bool ct_before_image_unload(ct_call *call, uint64_t handle)
{
    call->subject = handle;
    call->lifetime = ct_lifetime_ending(ct_g.images, handle);
    return true;
}

void ct_images_forget(uint64_t lifetime)
{
    pthread_mutex_lock(&images_lock);
    loaded *e;
    HASH_FIND(hh, images, &lifetime, sizeof lifetime, e);
    if (e)
        HASH_DELETE(hh, images, e);
    pthread_mutex_unlock(&images_lock);
    forget_entry(e);
}

int ct_image_directions(uint64_t owner, const char *mangled, uint8_t *out, unsigned cap)
{
    unsigned cc = current_device().cc; /* a driver call: before the lock */
    int n = -1;
    pthread_mutex_lock(&images_lock);
    loaded *e;
    HASH_FIND(hh, images, &owner, sizeof owner, e);
    if (e && e->library)
        HASH_FIND(hh, images, &e->library, sizeof e->library, e);
    if (e && e->read && cc)
        n = ct_image_kernel_directions(e->read, mangled, cc, out, cap);
    pthread_mutex_unlock(&images_lock);
    return n;
}
