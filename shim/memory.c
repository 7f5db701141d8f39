/*
 * memory.c - allocations (virtual memory mappings and managed memory
 * included; pinned host memory remembered), frees and unmaps, host writes, reads to the host (batches
 * too) and device copies, as core operations.  What a read refuses and
 * poisons and when a copy is skipped are core's rules (core/rules.h); this
 * file turns driver arguments into their numbers and their verdicts into
 * driver answers.
 *
 * Granularity: copies and memsets know their byte extent, so they taint and
 * release exact byte ranges: a pitched 2D/3D shape row by row, never its
 * gaps.  A few rows live in the call, up to CT_CALL_RANGES in the thread's
 * scratch (scratch.c), more on the heap (such a write moves far more bytes
 * than its rows cost); past CT_TALL_ROWS_MAX rows, or with no heap, the
 * bounding span, which a failure taints and a success never releases, and
 * which opens no scope (a scope over the span would displace the failures
 * its gaps carry).  A tall source is checked by its bounding span: a skip
 * too many, never one too few.  A read to the host is checked, counted and
 * poisoned row by row whatever its height: exactly the bytes it reads and
 * the bytes it would have written.
 *
 * Invariants:
 * - A read is refused only when core says a byte of it carries a failure;
 *   while nothing is tainted anywhere, reads cost one atomic load.
 * - A refused read never reaches the driver, returns the root failure's
 *   CUresult, and fills the host destination with the poison byte, but only
 *   memory known to be host memory (never a device address).
 * - Memory the shim did not see allocated passes through untouched.
 * - A batch runs whole or is answered whole (see "batches" below).
 * - A refusal made while malloc fails is described all the same (one spare
 *   description, taken in turn), poisoned, counted and reported.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shim.h"
#include "summary.h"

/* The description a refusal gets when malloc says no (it is large: never
 * on the stack): one per process, held by one refusal at a time. */
static ct_refusal spare_refusal;
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;

static ct_refusal *refusal_get(void)
{
    ct_refusal *r = malloc(sizeof *r);
    if (r)
        return r;
    pthread_mutex_lock(&spare_lock);
    return &spare_refusal;
}

static void refusal_put(ct_refusal *r)
{
    if (r == &spare_refusal)
        pthread_mutex_unlock(&spare_lock);
    else
        free(r);
}

/* ---- memory the host reads without the driver: the honest limit ------- */
/* Host loads of managed memory, and of pinned host memory (cuMemAllocHost,
 * cuMemHostAlloc, cuMemHostRegister: on a unified address space the device
 * reaches it by the host's own pointer, or by cuMemHostGetDevicePointer's),
 * never call the driver, so they cannot be refused: the first time a
 * failure's outputs reach either, the log says so.  Each kind is
 * remembered in a store of its own, made at its first allocation:
 * programs without it pay one load per free, and only failures look
 * further.  Managed memory is also tracked as device memory (its copies
 * are checked); pinned memory is not (its copies pass unchecked, as for
 * any memory cutaint did not see allocated). */
typedef struct host_visible {
    _Atomic(ct_store *) store;
    atomic_bool told;
    bool also_tracked; /* an allocation in ct_g.store too: it must be that same one */
    const char *said;  /* the warn line; %llx base, %llu bytes */
} host_visible;

static host_visible managed = {
    .also_tracked = true,
    .said = "managed allocation 0x%llx (%llu bytes) carries a failure: copies of it are refused, but host "
            "loads of managed memory never reach the driver, so cutaint cannot refuse them (said once)",
};
static host_visible pinned = {
    .said = "pinned host memory 0x%llx (%llu bytes) was to be written by failed work: the bytes it did not write "
            "hold no data, but host loads of it never reach the driver and copies of it are not tracked, so "
            "cutaint cannot refuse them (said once)",
};

static void remember_visible(host_visible *hv, uint64_t base, uint64_t size)
{
    if (base == 0 || size == 0 || atomic_load(&hv->told))
        return;
    ct_store *m = atomic_load(&hv->store);
    if (!m) {
        ct_store *fresh = ct_store_new(CUDA_ERROR_UNKNOWN);
        if (!fresh)
            return;
        if (!atomic_compare_exchange_strong(&hv->store, &m, fresh))
            ct_store_free(fresh);
        else
            m = fresh;
    }
    ct_store_alloc(m, base, size, 0);
}

static void forget_visible(host_visible *hv, uint64_t base)
{
    ct_store *m = atomic_load_explicit(&hv->store, memory_order_relaxed);
    if (CT_UNLIKELY(m != NULL))
        ct_store_free_alloc(m, base);
}

/* w has just taken a failure (or would have: pinned memory is no tracked
 * allocation).  A managed allocation a destroyed context left behind counts
 * only where the live allocation has the same base and size. */
static void tell_if_visible(host_visible *hv, const ct_range *w, size_t n)
{
    ct_store *m = atomic_load_explicit(&hv->store, memory_order_relaxed);
    if (!m || atomic_load(&hv->told))
        return;
    for (size_t i = 0; i < n; i++) {
        uint64_t base, size, live_base, live_size;
        if (!ct_store_resolve(m, w[i].addr, &base, &size))
            continue;
        if (hv->also_tracked && (!ct_store_resolve(ct_g.store, w[i].addr, &live_base, &live_size) ||
                                 live_base != base || live_size != size))
            continue;
        if (atomic_exchange(&hv->told, true))
            return;
        ct_log(CT_LOG_WARN, hv->said, (unsigned long long)base, (unsigned long long)size);
        return;
    }
}

void ct_tell_if_host_visible(const ct_range *w, size_t n)
{
    tell_if_visible(&managed, w, n);
    tell_if_visible(&pinned, w, n);
}

void ct_after_alloc_managed(ct_call *call, uint64_t base, uint64_t size)
{
    ct_after_alloc(call, base, size);
    if (call->result == CUDA_SUCCESS)
        remember_visible(&managed, base, size);
}

void ct_after_alloc_pinned(ct_call *call, const void *host, uint64_t size)
{
    ct_after_plain(call);
    if (call->result == CUDA_SUCCESS)
        remember_visible(&pinned, (uint64_t)(uintptr_t)host, size);
}

bool ct_before_free_pinned(ct_call *call, const void *host)
{
    (void)call;
    forget_visible(&pinned, (uint64_t)(uintptr_t)host);
    return true;
}

/* Off a unified address space the device pointer of pinned memory is not
 * the host's: it is remembered as pinned memory of its own, ending with the
 * host pointer's (forgotten when the driver reuses it, by the store). */
void ct_after_host_device_pointer(ct_call *call, uint64_t device, const void *host)
{
    ct_after_plain(call);
    ct_store *m = atomic_load_explicit(&pinned.store, memory_order_relaxed);
    uint64_t h = (uint64_t)(uintptr_t)host, base, size;
    if (call->result != CUDA_SUCCESS || !m || device == 0 || device == h || !ct_store_resolve(m, h, &base, &size))
        return;
    remember_visible(&pinned, device - (h - base), size);
}

static void remember_alloc(uint64_t base, uint64_t size, uint64_t context)
{
    if (ct_store_alloc(ct_g.store, base, size, context) != 0)
        ct_log(CT_LOG_WARN,
               "out of memory tracking the allocation at 0x%llx; reads of it "
               "will not be checked",
               (unsigned long long)base);
}

/* An allocation belongs to the context current on the allocating thread:
 * that context's end frees it (context.c). */
void ct_after_alloc(ct_call *call, uint64_t base, uint64_t size)
{
    if (call->result == CUDA_SUCCESS && base != 0 && size != 0)
        remember_alloc(base, size, ct_current_context());
}

void ct_after_alloc_pitch(ct_call *call, uint64_t base, uint64_t pitch, uint64_t height)
{
    ct_after_alloc(call, base, pitch * height);
}

/* ---- virtual memory ---------------------------------------------------- */
/* A mapping belongs to its reservation, not to a context (the driver ties
 * neither to one): a context's end forgets no mapping, and the mappings of
 * one reservation side by side are one run in core.  Reservations are few
 * and long-lived: a small list under its own lock, out of every hot path.
 * A mapping in a reservation cutaint did not see made is its own owner, so
 * it joins nothing. */
typedef struct reservation {
    uint64_t base, size;
} reservation;
static reservation *reservations;
static size_t n_reservations, cap_reservations;
static pthread_mutex_t reservations_lock = PTHREAD_MUTEX_INITIALIZER;

void ct_after_reserve(ct_call *call, uint64_t base, uint64_t size)
{
    if (call->result != CUDA_SUCCESS || base == 0 || size == 0)
        return;
    pthread_mutex_lock(&reservations_lock);
    if (n_reservations == cap_reservations) {
        size_t cap = cap_reservations ? 2 * cap_reservations : 16;
        reservation *grown = realloc(reservations, cap * sizeof *grown);
        if (grown) {
            reservations = grown;
            cap_reservations = cap;
        }
    }
    if (n_reservations < cap_reservations)
        reservations[n_reservations++] = (reservation){base, size};
    pthread_mutex_unlock(&reservations_lock);
}

/* The reservation holding addr, as an owner: its base, else addr itself. */
static uint64_t reservation_of(uint64_t addr)
{
    uint64_t owner = addr;
    pthread_mutex_lock(&reservations_lock);
    for (size_t i = 0; i < n_reservations; i++)
        if (addr - reservations[i].base < reservations[i].size)
            owner = reservations[i].base;
    pthread_mutex_unlock(&reservations_lock);
    return owner;
}

void ct_after_address_free(ct_call *call, uint64_t base, uint64_t size)
{
    ct_after_unmap(call, base, size);
    if (call->result != CUDA_SUCCESS)
        return;
    pthread_mutex_lock(&reservations_lock);
    for (size_t i = 0; i < n_reservations; i++)
        if (reservations[i].base == base) {
            reservations[i] = reservations[--n_reservations];
            break;
        }
    pthread_mutex_unlock(&reservations_lock);
}

void ct_memory_atfork_child(void)
{
    pthread_mutex_init(&spare_lock, NULL);
    pthread_mutex_init(&reservations_lock, NULL);
}

void ct_after_map(ct_call *call, uint64_t base, uint64_t size)
{
    if (call->result != CUDA_SUCCESS || base == 0 || size == 0)
        return;
    if (ct_store_map(ct_g.store, base, size, reservation_of(base)) != 0)
        ct_log(CT_LOG_WARN, "out of memory tracking the mapping at 0x%llx; reads of it will not be checked",
               (unsigned long long)base);
}

/* Stream-ordered memory comes from a pool, not a context: it outlives one. */
void ct_after_alloc_ordered(ct_call *call, uint64_t base, uint64_t size)
{
    if (call->result == CUDA_SUCCESS && base != 0 && size != 0)
        remember_alloc(base, size, 0);
}

/* Forgotten before the driver frees it: once the driver has, another thread
 * may be handed the same address, and forgetting it afterwards would forget
 * that thread's new allocation.  A free the driver refuses (a pointer it
 * does not know) was not a live allocation to begin with. */
bool ct_before_free(ct_call *call, uint64_t base)
{
    (void)call;
    if (base != 0) {
        ct_store_free_alloc(ct_g.store, base);
        if (ct_reported_waiting(ct_g.reported)) /* inline: none waits, as a rule */
            ct_reported_forget(ct_g.reported, base);
        forget_visible(&managed, base);
    }
    return true;
}

/* The mappings inside a range the driver ended, with their taint.  Unlike
 * a free, forgotten only once the driver agreed: an unmap or a reservation
 * free it refuses (a size that is not whole mappings, a reservation still
 * mapped) leaves live mappings whose taint must stay; the addresses are the
 * program's own reservation, so no other thread is handed them meanwhile.
 * A mapping straddling the range's end was not the call's to end. */
void ct_after_unmap(ct_call *call, uint64_t addr, uint64_t size)
{
    if (call->result == CUDA_SUCCESS)
        ct_store_forget_range(ct_g.store, addr, size);
}

/* ---- write scopes ------------------------------------------------------ */

static void enter_scope(ct_call *call)
{
    if (call->n_writes == 0 || call->writes_kind == CT_WRITES_SPAN)
        return;
    /* No clock, no thread id: a provisional failure is reported only as
     * "had not finished", and every copy pays for it. */
    ct_scope_desc provisional = {CT_PROVISIONAL_ERROR, ct_entries[call->id].name};
    call->provisional = ct_enter_write(ct_g.store, call->writes, call->n_writes, provisional);
}

/* The call's write set is settled: a tall one's rows go back to the heap. */
static void drop_writes(ct_call *call)
{
    if (call->writes_kind == CT_WRITES_HEAP)
        free(call->writes);
    call->writes_kind = CT_WRITES_ROOM;
    call->n_writes = 0;
}

/* A failed write's scope, settled by settle.c, which reports it.  Out of
 * line: a success pays no frame for the description. */
__attribute__((noinline)) static void settle_failed_write(ct_call *call)
{
    ct_failure_desc failed = ct_describe(call, call->result);
    ct_settle_writes(call, call->writes, call->n_writes, &failed);
}

/* A write scope closes here, as enter_scope opened it. */
void ct_after_write(ct_call *call)
{
    if (call->n_writes == 0)
        return;
    if (call->result != CUDA_SUCCESS)
        settle_failed_write(call);
    else if (call->writes_kind != CT_WRITES_SPAN) /* the span's gaps were not written */
        ct_exit_write(ct_g.store, call->provisional, call->writes, call->n_writes, NULL, NULL);
    drop_writes(call);
}

/* How many ranges a side's rows are tracked as: one per row up to
 * CT_CALL_RANGES rows, one bounding span beyond. */
static unsigned side_ranges_needed(const ct_side *s)
{
    const ct_rows *r = &s->rows;
    if (!s->device || r->width == 0 || r->height == 0 || r->depth == 0)
        return 0;
    uint64_t rows = r->height * r->depth;
    return rows == 1 || r->pitch == r->width || rows > CT_CALL_RANGES ? 1 : (unsigned)rows;
}

/* The n ranges of side_ranges_needed(s) into out: the bounding span, or
 * the rows (ct_side_rows, the one row walk). */
static void side_ranges(const ct_side *s, ct_range *out, unsigned n)
{
    if (n == 0)
        return;
    if (n == 1) {
        const ct_rows *r = &s->rows;
        uint64_t last_row = (r->depth - 1) * r->slice + (r->height - 1) * r->pitch;
        out[0] = (ct_range){r->addr, last_row + r->width};
        return;
    }
    ct_side_rows(s, 0, out, n);
}

/* Room for n ranges: `few` for up to CT_CALL_INLINE_RANGES, else the
 * thread's scratch row `many` picks; NULL when it cannot be had. */
static ct_range *room_for(unsigned n, ct_range *few, size_t many)
{
    if (n <= CT_CALL_INLINE_RANGES)
        return few;
    ct_scratch *scratch = ct_thread_scratch();
    return scratch ? (ct_range *)((char *)scratch + many) : NULL;
}

/* How many rows a side's device bytes are: 1 for a dense one; more than
 * CT_TALL_ROWS_MAX (or a product that overflows) as CT_TALL_ROWS_MAX + 1. */
static uint64_t rows_in(const ct_side *s)
{
    const ct_rows *r = &s->rows;
    uint64_t rows;
    if (!s->device || r->width == 0 || r->height == 0 || r->depth == 0)
        return 0;
    bool dense = r->pitch == r->width && (r->depth == 1 || r->slice == r->pitch * r->height);
    if (dense)
        return 1;
    if (__builtin_mul_overflow(r->height, r->depth, &rows) || rows > CT_TALL_ROWS_MAX)
        return CT_TALL_ROWS_MAX + 1;
    return rows;
}

/* A tall write's rows on the heap; the span when they cannot be had. */
static void set_tall_writes(ct_call *call, const ct_side *dst, uint64_t rows)
{
    ct_range *heap = rows <= CT_TALL_ROWS_MAX ? malloc(rows * sizeof *heap) : NULL;
    if (!heap) {
        call->writes = call->inline_writes;
        call->writes_kind = CT_WRITES_SPAN;
        call->n_writes = 1;
        side_ranges(dst, call->writes, 1);
        return;
    }
    call->writes = heap;
    call->writes_kind = CT_WRITES_HEAP;
    call->n_writes = ct_side_rows(dst, 0, heap, (unsigned)rows);
}

/* The call's write set: dst's rows exactly (none without room: unchecked). */
static void set_writes(ct_call *call, const ct_side *dst)
{
    uint64_t rows = rows_in(dst);
    if (rows > CT_CALL_RANGES) {
        set_tall_writes(call, dst, rows);
        return;
    }
    call->writes = room_for((unsigned)rows, call->inline_writes, offsetof(ct_scratch, writes));
    call->n_writes = call->writes ? ct_side_rows(dst, 0, call->writes, (unsigned)rows) : 0;
}

static ct_side linear(uint64_t addr, uint64_t bytes)
{
    return (ct_side){.device = true, .rows = {.addr = addr, .width = bytes, .pitch = bytes, .height = 1, .depth = 1}};
}

static bool begin_write(ct_call *call, const ct_side *dst)
{
    set_writes(call, dst);
    enter_scope(call);
    return true;
}

/* The inline scope's failure: the one range in the call, settled as a
 * shaped write's. */
void ct_after_linear_write_failed(ct_call *call, uint64_t dst, uint64_t bytes)
{
    call->writes = call->inline_writes;
    call->inline_writes[0] = (ct_range){dst, bytes};
    settle_failed_write(call);
}

bool ct_before_memset_2d(ct_call *call, uint64_t dst, uint64_t pitch, uint64_t width, uint64_t height, unsigned bits)
{
    uint64_t row = width * (bits / 8);
    ct_side s = {.device = true, .rows = {.addr = dst, .width = row, .pitch = pitch, .height = height, .depth = 1}};
    return begin_write(call, &s);
}

/* ---- reads to the host -------------------------------------------------- */

/* Whether host_dst may be filled: plain host memory, not device memory the
 * shim never saw allocated (a unified copy's destination can be either). */
static bool is_host_memory(uint64_t host_dst)
{
    __typeof__(&cuPointerGetAttribute) attr = CT_HELPER(cuPointerGetAttribute);
    unsigned type = 0;
    if (!attr || attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)host_dst) != CUDA_SUCCESS)
        return true; /* the driver does not know it: pageable host memory */
    return type == CU_MEMORYTYPE_HOST;
}

/* A clean host destination of a batch answered whole: core gives it an
 * extent, and the driver (asked only then) says it is host memory. */
static bool poisonable(const ct_side *host)
{
    return ct_poison_rows(&host->rows) != 0 && is_host_memory(host->rows.addr);
}

/* ---- poisoning that cannot fault ---------------------------------------- */
/* The poison goes where the program said host memory is, and a program may
 * be wrong (a garbage pointer, a device address a driver cannot classify):
 * the driver would have returned an error, so cutaint must not fault there
 * either.  It writes through the kernel (process_vm_writev on its own
 * process), which refuses a page that cannot be written instead of
 * raising SIGSEGV; where the kernel refuses the call itself (seccomp,
 * ENOSYS), a plain memset of what the caller judged host memory. */
#define POISON_CHUNK 4096
static unsigned char poison_bytes[POISON_CHUNK];
static pthread_once_t poison_once = PTHREAD_ONCE_INIT;
static atomic_bool no_vm_writev;

static void fill_poison_bytes(void)
{
    memset(poison_bytes, ct_g.cfg.poison, sizeof poison_bytes);
}

/* [p, p+len) filled with the poison byte; how many bytes it could write. */
static uint64_t safe_fill(uint64_t p, uint64_t len)
{
    pthread_once(&poison_once, fill_poison_bytes);
    uint64_t done = 0;
    while (done < len && !atomic_load_explicit(&no_vm_writev, memory_order_relaxed)) {
        size_t n = len - done < POISON_CHUNK ? (size_t)(len - done) : POISON_CHUNK;
        struct iovec from = {poison_bytes, n}, to = {(void *)(uintptr_t)(p + done), n};
        ssize_t w = process_vm_writev(getpid(), &from, 1, &to, 1, 0);
        if (w > 0) {
            done += (uint64_t)w;
            continue;
        }
        if (w < 0 && (errno == ENOSYS || errno == EPERM))
            atomic_store(&no_vm_writev, true);
        else
            return done; /* EFAULT: not memory the program could have had written */
    }
    if (done < len)
        memset((void *)(uintptr_t)(p + done), ct_g.cfg.poison, len - done);
    return len;
}

/* Fill the poison extent core gives (ct_poison_row) in host memory; false
 * when poisoning is off, there is no host pointer, or a row could not be
 * written (logged once). */
static bool poison(const ct_side *host)
{
    static atomic_bool told;
    if (ct_g.cfg.poison < 0 || host->device || !host->rows.addr)
        return false;
    ct_range row;
    bool whole = true;
    for (uint64_t i = 0; ct_poison_row(&host->rows, i, &row); i++)
        whole &= safe_fill(row.addr, row.len) == row.len;
    if (!whole && !atomic_exchange(&told, true))
        ct_log(CT_LOG_WARN,
               "a host destination at %p could not be written (not writable host memory): "
               "it was not poisoned (said once)",
               (void *)(uintptr_t)host->rows.addr);
    return whole;
}

/* A read whose bytes may carry a failure: core decides and describes in
 * one pass, into room from the heap (no lock held: the driver is asked
 * below).  Without heap it only decides, and the spare description is
 * taken once the driver has answered.  Out of line: the common read's
 * frame stays small. */
__attribute__((noinline)) static bool refuse_checked(ct_call *call, const ct_side *src, const ct_side *host,
                                                     bool check_host)
{
    const ct_rows *rows = &src->rows;
    ct_refusal *refusal = malloc(sizeof *refusal);
    if (ct_read_rule(ct_g.store, rows, &host->rows, refusal) != CT_READ_REFUSE) {
        free(refusal);
        return false;
    }
    bool host_memory = !check_host || is_host_memory(host->rows.addr);
    bool refused = true;
    if (!refusal) {
        refusal = refusal_get();
        assert(refusal && "a refusal made while malloc fails has the spare description");
        refused = ct_check_rows_written(ct_g.store, rows, refusal) != 0;
    }
    if (refused) {
        assert(refusal->n_kept > 0 && refusal->failures[0].desc.error != CUDA_SUCCESS &&
               "a refused read returns its root failure's error, never success");
        call->result = (CUresult)refusal->failures[0].desc.error;
        call->answered = true;
        bool poisoned = host_memory && poison(host);
        assert((!poisoned || (host_memory && !host->device)) && "only memory known to be host memory is poisoned");
        atomic_fetch_add(&ct_g.refused_reads, 1);
        ct_pool_met(&(ct_range){rows->addr, 1}, 1, NULL, 0);
        ct_event_refused(ct_entries[call->id].name, rows->addr, rows->width * rows->height * rows->depth, refusal,
                         call->result, poisoned);
    }
    refusal_put(refusal);
    return refused;
}

/* Refuse the read of the rows of src when any of their bytes carries a
 * failure, and poison what it would have written to host (its address 0:
 * nothing to poison); check_host: ask the driver whether that is host
 * memory first. */
static bool refuse_if_tainted(ct_call *call, const ct_side *src, const ct_side *host, bool check_host)
{
    /* While nothing is tainted anywhere a read costs one load, and while
     * taint exists elsewhere a plain read one look at the store's summary,
     * not two shapes handed to core. */
    if (!src->device || !ct_inputs_checked(ct_summary_tainted(ct_g.summary), call->injected))
        return false;
    ct_range plain = {src->rows.addr, src->rows.width};
    if (src->rows.height == 1 && src->rows.depth == 1 && !ct_read_failure(ct_g.store, &plain, 1, NULL))
        return false;
    return refuse_checked(call, src, host, check_host);
}

static ct_side host_linear(void *host, uint64_t bytes)
{
    return (ct_side){.rows = {.addr = (uintptr_t)host, .width = bytes, .pitch = bytes, .height = 1, .depth = 1}};
}

/* A linear read: refuse_if_tainted's checks, with no shape made until its
 * bytes may carry a failure (a shape whose address escapes is stored even
 * on the common path). */
/* While taint exists elsewhere, the summary's lock-free look is most reads'
 * whole check, inline here rather than behind ct_read_failure (shim.h's
 * ct_before_read asked whether anything is tainted first). */
bool ct_before_read_looking(ct_call *call, void *dst_host, uint64_t src, uint64_t bytes)
{
    ct_range plain = {src, bytes};
    if (ct_summary_clean(ct_g.summary, &plain, 1) || !ct_read_failure(ct_g.store, &plain, 1, NULL))
        return true;
    ct_side from = linear(src, bytes), to = host_linear(dst_host, bytes);
    return !refuse_checked(call, &from, &to, false);
}

/* ---- reads that failed ------------------------------------------------------ */
/* A read to the host the driver (or CUTAINT_INJECT) failed left its host
 * buffer holding whatever was there, which the program may use: it is a
 * root failure like any other (log, failure event, --error-exitcode), and
 * the host rows are poisoned where core says the copy could have written
 * them (check_host: and the driver says they are host memory). */
static void read_failed(ct_call *call, const ct_side *src, const ct_side *host, bool check_host)
{
    bool poisoned = ct_failed_read_poisons(ct_g.store, &src->rows, &host->rows) &&
                    (!check_host || is_host_memory(host->rows.addr)) && poison(host);
    atomic_fetch_add(&ct_g.failed_reads, 1);
    ct_failure_desc failed = ct_describe(call, call->result);
    ct_failure_id id = ct_settle_writes(call, NULL, 0, &failed);
    if (poisoned)
        ct_log(CT_LOG_WARN, "   failure #%u: the host buffer of the failed read was filled with 0x%02x", id,
               ct_g.cfg.poison);
    else
        ct_log(CT_LOG_WARN, "   failure #%u: the host buffer of the failed read was left as it was (%s)", id,
               ct_g.cfg.poison < 0 ? "CUTAINT_POISON=off" : "not memory the copy could have written");
}

void ct_read_failed(ct_call *call, void *dst_host, uint64_t src, uint64_t bytes)
{
    ct_side from = linear(src, bytes), to = host_linear(dst_host, bytes);
    read_failed(call, &from, &to, false);
}

static void copy_nd_failed(ct_call *call, ct_copy_shape shape)
{
    if (shape.dst.device || !shape.src.device || !ct_read_did_fail(call))
        ct_after_write(call);
    else
        read_failed(call, &shape.src, &shape.dst, false);
}

/* ---- device copies ------------------------------------------------------ */

/* A copy whose source carries a failure is skipped, its destination taking
 * the same failure, when core's ct_copy_rule says so. */
static bool skip_if_tainted(ct_call *call, const ct_range *src, unsigned n_src, const ct_side *dst)
{
    ct_failure_id root = 0;
    int error = 0;
    if (!ct_inputs_checked(ct_summary_tainted(ct_g.summary), call->injected) ||
        ct_copy_rule(ct_g.store, src, n_src, dst->rows.addr, ct_has_current_context, &root, &error) != CT_SKIP)
        return false;
    /* A skipped copy writes nothing: its write set is its outputs (none
     * without room: the copy goes to the driver unchecked). */
    set_writes(call, dst);
    if (call->n_writes == 0)
        return false;
    ct_skip_desc skip = {.needed = src[0].addr};
    ct_settle_skip(call, root, error, &skip, call->writes, call->n_writes);
    drop_writes(call);
    return true;
}

bool ct_before_device_copy(ct_call *call, uint64_t dst, uint64_t src, uint64_t bytes)
{
    ct_range r = {src, bytes};
    ct_side d = linear(dst, bytes);
    if (skip_if_tainted(call, &r, bytes ? 1 : 0, &d))
        return false;
    return ct_before_linear_write(call, dst, bytes);
}

bool ct_before_copy_nd(ct_call *call, ct_copy_shape shape)
{
    ct_range few[CT_CALL_INLINE_RANGES];
    unsigned n_src = side_ranges_needed(&shape.src);
    ct_range *src = room_for(n_src, few, offsetof(ct_scratch, reads));
    if (src)
        side_ranges(&shape.src, src, n_src);
    else
        n_src = 0; /* unchecked */
    if (shape.dst.device) {
        if (skip_if_tainted(call, src, n_src, &shape.dst))
            return false;
        return begin_write(call, &shape.dst);
    }
    return !refuse_if_tainted(call, &shape.src, &shape.dst, false);
}

bool ct_before_unified(ct_call *call, uint64_t dst, uint64_t src, uint64_t bytes)
{
    bool dst_device = ct_store_resolve(ct_g.store, dst, NULL, NULL);
    if (dst_device)
        return ct_before_device_copy(call, dst, src, bytes);
    ct_side from = linear(src, bytes), to = host_linear((void *)(uintptr_t)dst, bytes);
    return !refuse_if_tainted(call, &from, &to, true);
}

void ct_after_unified(ct_call *call, uint64_t dst, uint64_t src, uint64_t bytes)
{
    if (call->n_writes != 0 || !ct_read_did_fail(call) || !ct_store_resolve(ct_g.store, src, NULL, NULL) ||
        ct_store_resolve(ct_g.store, dst, NULL, NULL)) {
        ct_after_linear_write(call, dst, bytes); /* a device copy (or none cutaint tracks) */
        return;
    }
    ct_side from = linear(src, bytes), to = host_linear((void *)(uintptr_t)dst, bytes);
    read_failed(call, &from, &to, true);
}

/* ---- shapes of the 2D/3D descriptors ------------------------------------- */

static ct_side side(CUmemorytype type, uint64_t device, const void *host, uint64_t x, uint64_t y, uint64_t z,
                    uint64_t pitch, uint64_t rows_per_slice, uint64_t width, uint64_t height, uint64_t depth)
{
    uint64_t slice = pitch * rows_per_slice;
    uint64_t offset = z * slice + y * pitch + x;
    bool on_device = type == CU_MEMORYTYPE_DEVICE ||
                     (type == CU_MEMORYTYPE_UNIFIED && ct_store_resolve(ct_g.store, device, NULL, NULL));
    ct_side s = {.device = on_device,
                 .rows = {.width = width,
                          .pitch = pitch ? pitch : width,
                          .height = height,
                          .depth = depth ? depth : 1,
                          .slice = slice}};
    if (on_device)
        s.rows.addr = device + offset;
    else if ((type == CU_MEMORYTYPE_HOST || type == CU_MEMORYTYPE_UNIFIED) && host)
        s.rows.addr = (uintptr_t)host + offset;
    return s;
}

#define CT_SHAPE_2D(c)                                                                                               \
    (ct_copy_shape)                                                                                                  \
    {                                                                                                                \
        side((c)->srcMemoryType, (c)->srcDevice, (c)->srcHost, (c)->srcXInBytes, (c)->srcY, 0, (c)->srcPitch, 0,     \
             (c)->WidthInBytes, (c)->Height, 1),                                                                     \
            side((c)->dstMemoryType, (c)->dstDevice, (c)->dstHost, (c)->dstXInBytes, (c)->dstY, 0, (c)->dstPitch, 0, \
                 (c)->WidthInBytes, (c)->Height, 1)                                                                  \
    }
#define CT_SHAPE_3D(c)                                                                                                \
    (ct_copy_shape)                                                                                                   \
    {                                                                                                                 \
        side((c)->srcMemoryType, (c)->srcDevice, (c)->srcHost, (c)->srcXInBytes, (c)->srcY, (c)->srcZ, (c)->srcPitch, \
             (c)->srcHeight, (c)->WidthInBytes, (c)->Height, (c)->Depth),                                             \
            side((c)->dstMemoryType, (c)->dstDevice, (c)->dstHost, (c)->dstXInBytes, (c)->dstY, (c)->dstZ,            \
                 (c)->dstPitch, (c)->dstHeight, (c)->WidthInBytes, (c)->Height, (c)->Depth)                           \
    }

static const ct_copy_shape no_shape;

ct_copy_shape ct_shape_2d(const CUDA_MEMCPY2D *c)
{
    return c ? CT_SHAPE_2D(c) : no_shape;
}
ct_copy_shape ct_shape_2d_v1(const CUDA_MEMCPY2D_v1 *c)
{
    return c ? CT_SHAPE_2D(c) : no_shape;
}
ct_copy_shape ct_shape_3d(const CUDA_MEMCPY3D *c)
{
    return c ? CT_SHAPE_3D(c) : no_shape;
}
ct_copy_shape ct_shape_3d_v1(const CUDA_MEMCPY3D_v1 *c)
{
    return c ? CT_SHAPE_3D(c) : no_shape;
}
ct_copy_shape ct_shape_3d_peer(const CUDA_MEMCPY3D_PEER *c)
{
    return c ? CT_SHAPE_3D(c) : no_shape;
}

#define CT_SHAPE_AFTER(shape, desc_t)                       \
    void shape##_after(ct_call *call, const desc_t *c)      \
    {                                                       \
        if (call->result == CUDA_SUCCESS || call->answered) \
            ct_after_write(call);                           \
        else                                                \
            copy_nd_failed(call, shape(c));                 \
    }
CT_SHAPES(CT_SHAPE_AFTER)
#undef CT_SHAPE_AFTER

/* ---- batches --------------------------------------------------------------- */
/* A batch runs whole or not at all: when a copy's source carries a failure,
 * cutaint answers for all of it (the driver would have run the clean
 * copies, but the program, told the batch failed, cannot know which did).
 * Every host destination is poisoned, a tainted read's with a refusal
 * reported; every device destination takes the root failure (one skip).
 * A batch the driver ran, like a launch, opens no provisional scope: its
 * device destinations are released or tainted once it returns, in runs of
 * CT_CALL_RANGES ranges. */

ct_batch ct_batch_linear(const CUdeviceptr *dsts, const CUdeviceptr *srcs, const size_t *sizes, size_t n)
{
    return (ct_batch){.n = dsts && srcs && sizes ? n : 0, .dsts = dsts, .srcs = srcs, .sizes = sizes};
}

ct_batch ct_batch_3d(const CUDA_MEMCPY3D_BATCH_OP *ops, size_t n)
{
    return (ct_batch){.n = ops ? n : 0, .ops = ops};
}

/* An operand: a pointer is unified (device memory if the shim tracks it),
 * an array is memory cutaint does not follow. */
static ct_side operand(const CUmemcpy3DOperand *o, const CUextent3D *x)
{
    if (o->type != CU_MEMCPY_OPERAND_TYPE_POINTER)
        return (ct_side){0};
    CUdeviceptr p = o->op.ptr.ptr;
    return side(CU_MEMORYTYPE_UNIFIED, p, (const void *)(uintptr_t)p, 0, 0, 0,
                o->op.ptr.rowLength ? o->op.ptr.rowLength : x->width,
                o->op.ptr.layerHeight ? o->op.ptr.layerHeight : x->height, x->width, x->height, x->depth);
}

static ct_copy_shape batch_copy(const ct_batch *b, size_t i)
{
    if (b->ops)
        return (ct_copy_shape){operand(&b->ops[i].src, &b->ops[i].extent), operand(&b->ops[i].dst, &b->ops[i].extent)};
    CUdeviceptr d = b->dsts[i], s = b->srcs[i];
    return (
        ct_copy_shape){side(CU_MEMORYTYPE_UNIFIED, s, (const void *)(uintptr_t)s, 0, 0, 0, 0, 0, b->sizes[i], 1, 1),
                       side(CU_MEMORYTYPE_UNIFIED, d, (const void *)(uintptr_t)d, 0, 0, 0, 0, 0, b->sizes[i], 1, 1)};
}

/* The device destinations from copy *next on, as many whole copies as fit
 * in out (CT_CALL_RANGES); advances *next past them.  0 once none is left. */
static unsigned batch_device_writes(const ct_batch *b, size_t *next, ct_range *out)
{
    unsigned n = 0;
    for (; *next < b->n; (*next)++) {
        ct_copy_shape c = batch_copy(b, *next);
        unsigned k = side_ranges_needed(&c.dst);
        if (n + k > CT_CALL_RANGES)
            break;
        side_ranges(&c.dst, out + n, k);
        n += k;
    }
    return n;
}

/* Copy i's source ranges, for core's ct_batch_rule (room: CT_CALL_RANGES). */
static unsigned batch_sources(const void *batch, size_t i, ct_range *room)
{
    ct_copy_shape c = batch_copy(batch, i);
    unsigned n = side_ranges_needed(&c.src);
    side_ranges(&c.src, room, n);
    return n;
}

bool ct_before_batch(ct_call *call, ct_batch b, size_t *fail_idx)
{
    if (b.n == 0 || !ct_inputs_checked(ct_summary_tainted(ct_g.summary), call->injected))
        return true;
    ct_scratch *scratch = ct_thread_scratch(); /* none: unchecked */
    if (!scratch)
        return true;
    ct_failure_id root = 0;
    int error = 0;
    size_t first = 0;
    if (ct_batch_rule(ct_g.store, b.n, batch_sources, &b, scratch->reads, ct_has_current_context, &root, &error,
                      &first) != CT_SKIP) /* clean, or the driver answers */
        return true;
    bool refused = false;
    int refused_code = 0;
    for (size_t i = 0; i < b.n; i++) {
        ct_copy_shape c = batch_copy(&b, i);
        if (c.dst.device)
            continue;
        if (refuse_if_tainted(call, &c.src, &c.dst, true)) {
            refused = true;
            refused_code = (int)call->result;
        } else if (poisonable(&c.dst)) {
            poison(&c.dst);
        }
    }
    ct_copy_shape at = batch_copy(&b, first);
    ct_skip_desc skip = {.needed = at.src.rows.addr};
    ct_range *w = scratch->writes;
    size_t next = 0;
    bool skipped = false;
    for (unsigned n; (n = batch_device_writes(&b, &next, w)) != 0;) {
        if (!skipped)
            ct_settle_skip(call, root, error, &skip, w, n);
        else
            ct_propagate(ct_g.store, root, &skip, w, n);
        skipped = true;
    }
    call->result = (CUresult)ct_batch_result(refused, refused_code, skipped, (int)call->result, error);
    call->answered = true;
    if (fail_idx && call->result != CUDA_SUCCESS)
        *fail_idx = first;
    return false;
}

/* A batch that failed (the driver's error or an injected one): its reads
 * to the host failed with it, each destination poisoned where the copy
 * could have written it.  unreported: the failure no device write
 * reported (NULL when one did). */
static void batch_reads_failed(ct_call *call, const ct_batch *b, const ct_failure_desc *unreported)
{
    bool any = false;
    for (size_t i = 0; i < b->n; i++) {
        ct_copy_shape c = batch_copy(b, i);
        if (c.dst.device || !c.src.device)
            continue;
        any = true;
        if (ct_failed_read_poisons(ct_g.store, &c.src.rows, &c.dst.rows) && is_host_memory(c.dst.rows.addr))
            poison(&c.dst);
    }
    if (!any)
        return;
    atomic_fetch_add(&ct_g.failed_reads, 1);
    if (unreported)
        ct_settle_writes(call, NULL, 0, unreported);
}

void ct_after_batch(ct_call *call, ct_batch b)
{
    bool ok = call->result == CUDA_SUCCESS;
    if (b.n == 0 || (ok && !ct_summary_tainted(ct_g.summary)))
        return;
    ct_scratch *scratch = ct_thread_scratch(); /* none: unchecked */
    if (!scratch)
        return;
    ct_failure_desc failed = ct_describe(call, call->result);
    ct_range *w = scratch->writes;
    size_t next = 0;
    bool settled = false;
    for (unsigned n; (n = batch_device_writes(&b, &next, w)) != 0; settled = true) {
        if (ok)
            ct_written(ct_g.store, w, n);
        else
            ct_settle_writes(call, w, n, &failed);
    }
    if (!ok)
        batch_reads_failed(call, &b, settled ? NULL : &failed);
}

uint64_t ct_side_row_count(const ct_side *s)
{
    return rows_in(s);
}

unsigned ct_side_rows(const ct_side *s, uint64_t first, ct_range *out, unsigned cap)
{
    uint64_t rows = rows_in(s);
    if (rows == 1) {
        if (first == 0 && cap)
            side_ranges(s, out, 1);
        return first == 0 && cap ? 1 : 0;
    }
    const ct_rows *r = &s->rows;
    unsigned n = 0;
    for (uint64_t i = first; i < rows && n < cap; i++)
        out[n++] = (ct_range){r->addr + i / r->height * r->slice + i % r->height * r->pitch, r->width};
    return n;
}

/* graphs.c decodes copy and memset nodes with the copies' own sides. */
unsigned ct_side_ranges(const ct_side *s, ct_range *out)
{
    unsigned n = side_ranges_needed(s);
    side_ranges(s, out, n);
    return n;
}
bool ct_poison(const ct_side *host)
{
    return poison(host);
}
