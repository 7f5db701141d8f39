/*
 * launch.c - kernel launches: which kernel, which of its parameters are
 * device pointers and in which direction, asking core's ct_launch_skip_rule
 * (core/rules.h) whether to skip one whose input carries a failure.
 *
 * What a kernel is (name, parameter layout, roles) is kernels.c's: this file
 * asks for it only when a launch needs it.
 *
 * Invariants:
 * - Nothing is decoded on the happy path: while no byte carries a failure a
 *   launch has no input to check, and a launch that succeeded has nothing to
 *   release.  Parameters are decoded only when taint exists somewhere or the
 *   launch failed (the caller's kernelParams are still valid then).
 * - Never read beyond what is known of kernelParams: no layout and no
 *   signature means the launch touches no tracked memory (logged once),
 *   and a handle the driver reused is never decoded with the layout of the
 *   kernel it used to be (kernels.c).
 * - A skipped launch is not handed to the driver; its outputs take the root
 *   failure's id, never a new one.
 * - A parameter only stored through (CT_ROLE_STORE: its PTX says so) is an
 *   output, never an input: a failure taints it, a success leaves what it
 *   carries unless the launch retries the refused one that left it.
 * - A launch the driver refused at once leaves its key (function,
 *   parameter bytes, threads) on its failure, and one whose inputs carry
 *   only what such a launch was to write is a retry (core's
 *   ct_launch_skip_rule): handed to the driver, its success releases its
 *   outputs.  Keys are made only then, never on the happy path.
 * - A launch opens no provisional write scope, whether or not taint exists
 *   elsewhere: its outputs are tainted when the driver reports the failure,
 *   by the same rule whatever unrelated memory carries.  A successful launch
 *   decoded while taint existed releases its outputs: it is their last
 *   writer.  (Copies and memsets, whose extent is exact, do open one.)
 * - Launch numbers are unique and increase along each thread.  They are
 *   handed out one at a time, so they are exactly the order cutaint saw
 *   launches in, while threads do not launch at the same time (one
 *   launching thread, or threads taking turns, as PyTorch's main and
 *   autograd threads do).  Threads launching at once would fight over the
 *   counter's cache line on every launch, and their order is not
 *   reproducible anyway: a thread that finds another's numbers between
 *   INTERLEAVED_TO_BLOCK of its launches in a row takes its next
 *   NUMBER_BLOCK numbers at once, then probes one at a time again.
 */
#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ct_hash.h"
#include "inflight.h"
#include "kernels.h"
#include "shim.h"
#include "summary.h"

#define CT_MAX_EXTRA_PAIRS 16
#define INTERLEAVED_TO_BLOCK 8
#define NUMBER_BLOCK 256

/* Alone on its cache line (a 64-aligned struct is 64 bytes long), as
 * every launch may write it. */
static struct {
    _Alignas(64) atomic_uint_fast64_t next;
} launches_numbered;
/* A thread's launch numbers (within current: the launch's one TLS block). */
typedef struct numbering {
    uint64_t last;
    union {
        struct {
            uint32_t left;        /* numbers of a block taken after last, not yet handed out */
            uint32_t interleaved; /* launches in a row that found a gap before them */
        };
        uint64_t either; /* 0: neither (the common launch: one test) */
    };
} numbering;

/* What the launch in flight on this thread needs between before and after.
 * Its bindings live in the thread's scratch (scratch.c), taken only when a
 * launch is decoded: with none, in and out are empty.  decoded: in and out
 * are known, and a success releases out.  kernel_known: kernel was looked
 * up for this launch (else it is an earlier launch's). */
static CT_HOT_TLS struct {
    ct_flight_slot *slot; /* the launch, copied into its thread's ring (inflight.h) */
    ct_kernel *kernel;
    uint64_t seq;
    union {
        struct {
            bool decoded, kernel_known;
        };
        uint32_t fresh; /* 0: neither, as a launch begins (one store) */
    };
    unsigned n_in, n_out;
    unsigned n_release;     /* out[0, n_release) a success releases; the rest are stores (CT_ROLE_STORE) */
    ct_range *in, *out;     /* valid once decoded */
    ct_failure_id retrying; /* valid once decoded: the failure this launch retries, 0 none */
    numbering numbering;    /* beside the rest: the launch's one TLS address */
} current;

/* The launch in flight, as its slot holds it. */
static inline CUfunction launch_f(void)
{
    return (CUfunction)(uintptr_t)current.slot->launch.what;
}
static inline CUstream launch_stream(void)
{
    return (CUstream)(uintptr_t)current.slot->launch.stream;
}
static inline void **launch_params(void)
{
    return (void **)(uintptr_t)current.slot->launch.params;
}
static inline void **launch_extra(void)
{
    return (void **)(uintptr_t)current.slot->launch.extra;
}

/* ct_flight_launch is laid out as ct_launch: a launch is copied whole. */
_Static_assert(sizeof(ct_flight_launch) == sizeof(ct_launch), "ct_flight_launch is a ct_launch");
_Static_assert(offsetof(ct_flight_launch, what) == offsetof(ct_launch, f) &&
                   offsetof(ct_flight_launch, grid) == offsetof(ct_launch, grid) &&
                   offsetof(ct_flight_launch, block) == offsetof(ct_launch, block) &&
                   offsetof(ct_flight_launch, stream) == offsetof(ct_launch, stream) &&
                   offsetof(ct_flight_launch, params) == offsetof(ct_launch, params) &&
                   offsetof(ct_flight_launch, extra) == offsetof(ct_launch, extra),
               "ct_flight_launch is a ct_launch");

/* The launch copied into slot s, which then holds it for the after hook. */
static inline void hold(ct_flight_slot *s, const ct_launch *launch)
{
    memcpy(&s->launch, launch, sizeof s->launch);
    current.slot = s;
}

/* ---- bindings ----------------------------------------------------------- */

/* Every pointer word a launch passes, each with its parameter's role: the
 * decoder's own copy, kept in registers while it binds.  Words past cap
 * are counted, not kept: the caller binds again in a room that fits. */
typedef struct bindings {
    ct_range *bound;
    uint8_t *roles;
    unsigned n, cap;
} bindings;

/* Inlined into each decoder: a launch with taint elsewhere binds every
 * pointer parameter, a few instructions each. */
#define CT_INLINE inline __attribute__((always_inline))

static CT_INLINE void bind(bindings *b, uint64_t value, uint8_t role)
{
    if (value == 0)
        return;
    if (b->n < b->cap) {
        b->bound[b->n] = (ct_range){value, CT_TO_END};
        b->roles[b->n] = role;
    }
    b->n++;
}

/* Every 8-byte-aligned word of bytes [0, size) placed at buffer offset `at`. */
static CT_INLINE void bind_words(bindings *b, const unsigned char *bytes, uint64_t at, uint64_t size, uint8_t role)
{
    uint64_t first = (8 - at % 8) % 8;
    for (uint64_t i = first; i + 8 <= size; i += 8) {
        uint64_t word;
        memcpy(&word, bytes + i, sizeof word);
        bind(b, word, role);
    }
}

static CT_INLINE void bind_param(bindings *b, const ct_param *p, const unsigned char *value)
{
    if (!value || p->role == CT_ROLE_IGNORE || p->size < 8)
        return;
    if (p->scan) {
        bind_words(b, value, p->offset, p->size, p->role);
    } else {
        uint64_t word;
        memcpy(&word, value, sizeof word);
        bind(b, word, p->role);
    }
}

static unsigned bind_params(const ct_kernel *k, void **params, const ct_words *room)
{
    bindings b = {room->bound, room->roles, 0, room->cap};
    for (unsigned i = 0; i < k->n_params; i++)
        bind_param(&b, &k->params[i], params[i]);
    return b.n;
}

/* The packed buffer of `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE
 * pairs) and its size; NULL with none or an empty one. */
static const unsigned char *extra_buffer(void **extra, size_t *size)
{
    const unsigned char *buffer = NULL;
    *size = 0;
    for (unsigned i = 0; i < 2 * CT_MAX_EXTRA_PAIRS && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buffer = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
            *size = *(const size_t *)extra[i + 1];
    }
    return *size ? buffer : NULL;
}

static unsigned bind_extra(const ct_kernel *k, void **extra, const ct_words *room)
{
    bindings b = {room->bound, room->roles, 0, room->cap};
    size_t size;
    const unsigned char *buffer = extra_buffer(extra, &size);
    if (!buffer)
        return 0;
    if (!k->layout_known) {
        bind_words(&b, buffer, 0, size, CT_ROLE_READWRITE);
        return b.n;
    }
    for (unsigned i = 0; i < k->n_params; i++)
        if (k->params[i].offset + (uint64_t)k->params[i].size <= size)
            bind_param(&b, &k->params[i], buffer + k->params[i].offset);
    return b.n;
}

/* Parameter i's pointer word, for the summary's looks: false when it has
 * none; *scanned when its words are found by scanning (left to bind()). */
static CT_INLINE bool param_word(const ct_kernel *k, void **params, unsigned i, uint64_t *word, bool *scanned)
{
    const ct_param *p = &k->params[i];
    const unsigned char *value = params[i];
    if (!value || p->role == CT_ROLE_IGNORE || p->size < 8)
        return false;
    *scanned = p->scan;
    if (!p->scan)
        memcpy(word, value, sizeof *word);
    return true;
}

/* The common launch while taint exists elsewhere, checked as its words are
 * read: none starts in a granule the store's summary counts (summary.h),
 * so nothing needs binding.  Scanned parameters are left to bind().
 * False: bind and ask the store. */
static bool words_clean(const ct_kernel *k, void **params)
{
    const ct_summary *sm = ct_g.summary;
    ct_summary_look look;
    if (!sm || !ct_summary_look_begin(sm, &look))
        return false;
    uint64_t word = 0;
    bool scanned;
    if (look.filter)
        for (unsigned i = 0; i < k->n_params; i++)
            if (param_word(k, params, i, &word, &scanned) && (scanned || ct_summary_filter_hit(look.filter, word)))
                return false;
    return ct_summary_look_end(sm, &look);
}

/* The launch's pointer words into room; how many it passes (more than
 * room->cap: not all of them are there). */
static unsigned bind_into(const ct_words *room)
{
    const ct_kernel *k = current.kernel;
    if (launch_params())
        return bind_params(k, launch_params(), room);
    if (launch_extra())
        return bind_extra(k, launch_extra(), room);
    return 0;
}

/* The thread's heap room made to hold n words (one block: bound, in, out,
 * then the roles); false when the heap says no. */
static bool grow_wide(ct_scratch *s, unsigned n)
{
    if (s->wide.cap >= n)
        return true;
    char *block = malloc((size_t)n * (3 * sizeof(ct_range) + 1));
    if (!block)
        return false;
    free(s->wide.bound);
    ct_range *r = (ct_range *)block;
    s->wide = (ct_words){r, r + n, r + 2 * (size_t)n, (uint8_t *)(r + 3 * (size_t)n), n};
    return true;
}

/* The launch's pointer words, every one of them: in the scratch's room of
 * CT_MAX_BINDINGS, and past it in the thread's heap room (said once).
 * *w says where they are; how many.  0 when the heap cannot hold them:
 * the launch then goes unchecked, as one without scratch does (said once). */
static unsigned bind_launch(ct_scratch *room, ct_words *w)
{
    static atomic_bool told_wide, told_unchecked;
    *w = (ct_words){room->bound, room->in, room->out, room->roles, CT_MAX_BINDINGS};
    unsigned n = bind_into(w);
    if (n <= CT_MAX_BINDINGS)
        return n;
    if (!grow_wide(room, n)) {
        if (!atomic_exchange(&told_unchecked, true))
            ct_log(CT_LOG_WARN,
                   "out of memory for the %u pointer words %s passes: its launches go unchecked "
                   "(said once)",
                   n, current.kernel->pretty);
        return 0;
    }
    if (!atomic_exchange(&told_wide, true))
        ct_log(CT_LOG_INFO,
               "%s passes %u pointer words, more than the %d a launch holds in its room: the rest "
               "are held on the heap, every one checked and tainted by its role (said once)",
               current.kernel->pretty, n, CT_MAX_BINDINGS);
    *w = room->wide;
    return bind_into(w);
}

/* The n bound words as inputs and outputs, by role: the outputs a success
 * releases first, the stores after them. */
static void split(const ct_words *w, unsigned n)
{
    current.decoded = true;
    current.retrying = 0;
    current.in = w->in;
    current.out = w->out;
    current.n_in = current.n_out = 0;
    for (unsigned i = 0; i < n; i++) {
        uint8_t role = w->roles[i];
        if (role == CT_ROLE_READ || role == CT_ROLE_READWRITE)
            current.in[current.n_in++] = w->bound[i];
        if (role == CT_ROLE_WRITE || role == CT_ROLE_READWRITE)
            current.out[current.n_out++] = w->bound[i];
    }
    current.n_release = current.n_out;
    for (unsigned i = 0; i < n; i++)
        if (w->roles[i] == CT_ROLE_STORE)
            current.out[current.n_out++] = w->bound[i];
}

/* Without a kernel or scratch the launch goes unchecked: nothing bound. */
static ct_scratch *room_to_decode(void)
{
    return current.kernel ? ct_thread_scratch() : NULL;
}

static void decode(void)
{
    ct_scratch *room = room_to_decode();
    current.decoded = true;
    current.retrying = 0;
    current.n_in = current.n_out = current.n_release = 0;
    ct_words w;
    if (room) {
        unsigned n = bind_launch(room, &w);
        split(&w, n);
    }
}

/* ---- the launch ------------------------------------------------------------ */

static ct_failure_desc describe_launch(const ct_call *call, CUresult error)
{
    ct_failure_desc d = ct_describe(call, error);
    d.kernel = current.kernel ? current.kernel->pretty : NULL;
    d.launch_seq = current.seq;
    memcpy(d.grid, current.slot->launch.grid, sizeof d.grid);
    memcpy(d.block, current.slot->launch.block, sizeof d.block);
    d.stream = current.slot->launch.stream;
    return d;
}

/* What makes the launch in flight the same work again (core/failures.h):
 * its function, its kernel's name and parameter bytes as its layout reads
 * them, its threads. */
static ct_launch_key launch_key(void)
{
    const ct_kernel *k = current.kernel;
    const ct_flight_launch *l = &current.slot->launch;
    uint64_t h = CT_FNV_OFFSET, total = 0;
    if (k && k->pretty)
        h = ct_fnv1a(h, k->pretty, strlen(k->pretty));
    void **params = launch_params(), **extra = launch_extra();
    for (unsigned i = 0; k && params && i < k->n_params; i++) {
        h = ct_fnv1a(h, params[i], params[i] ? k->params[i].size : 0);
        total += params[i] ? k->params[i].size : 0;
    }
    size_t size = 0;
    const unsigned char *buffer = k && !params && extra ? extra_buffer(extra, &size) : NULL;
    if (buffer) {
        h = ct_fnv1a(h, buffer, size);
        total += size;
    }
    return (ct_launch_key){l->what, ct_launch_key_end(h, total), ct_launch_threads(l->grid, l->block)};
}

/* What core's ct_retry_rule asks of this launch, reading in, writing out. */
static ct_retry_facts retry_facts(const ct_range *in, unsigned n_in, const ct_range *out, unsigned n_out)
{
    return (ct_retry_facts){
        .key = launch_key(),
        .in = in,
        .n_in = n_in,
        .out = out,
        .n_out = n_out,
        .context_lost = ct_latch_is_set(ct_g.latch),
    };
}

/* The thread's launch in flight, for ct_launch_skip_rule. */
static void current_retry_facts(const void *launch, ct_retry_facts *f)
{
    (void)launch;
    *f = retry_facts(current.in, current.n_in, current.out, current.n_out);
}

/* Does this launch retry the refused launch whose failure in carries,
 * writing out (core's ct_retry_rule)?  *retried: that failure. */
static bool retries_into(const ct_range *in, unsigned n_in, const ct_range *out, unsigned n_out, ct_failure_id *retried)
{
    ct_retry_facts f = retry_facts(in, n_in, out, n_out);
    return ct_retry_rule(ct_g.store, &f, retried);
}

static bool skip(ct_call *call, ct_failure_id root, int error)
{
    ct_skip_desc s = {
        .kernel = current.kernel ? current.kernel->pretty : NULL,
        .roles = current.kernel ? current.kernel->roles : NULL,
        .roles_from = current.kernel ? current.kernel->roles_from : NULL,
        .launch_seq = current.seq,
        .needed = current.n_in ? current.in[0].addr : 0,
    };
    for (unsigned i = 0; i < current.n_in; i++) {
        if (ct_read_failure(ct_g.store, &current.in[i], 1, NULL) == root) {
            s.needed = current.in[i].addr;
            break;
        }
    }
    ct_settle_skip(call, root, error, &s, current.out, current.n_out);
    return false;
}

/* A launch whose words reach a claim: split, and skipped when an input
 * carries a failure.  Out of line, so the common launch keeps a small
 * frame. */
__attribute__((noinline)) static bool check_inputs(ct_call *call, const ct_words *w, unsigned n)
{
    split(w, n);
    ct_pool_met(current.out, current.n_out, current.in, current.n_in);
    ct_failure_id root = 0;
    int error = 0;
    if (ct_launch_skip_rule(ct_g.store, current.in, current.n_in, ct_has_current_context, current_retry_facts, NULL,
                            &root, &error, &current.retrying) == CT_SKIP)
        return skip(call, root, error);
    return true;
}

/* next_launch_number, in a block or after gaps. */
__attribute__((noinline)) static uint64_t next_launch_number_rare(void)
{
    if (current.numbering.left) {
        current.numbering.left--;
        return ++current.numbering.last;
    }
    uint64_t take = current.numbering.interleaved >= INTERLEAVED_TO_BLOCK ? NUMBER_BLOCK : 1;
    uint64_t n = atomic_fetch_add_explicit(&launches_numbered.next, take, memory_order_relaxed) + 1;
    assert(n > current.numbering.last && "launch numbers increase along each thread");
    current.numbering.interleaved = take > 1 || n == current.numbering.last + 1 ? 0 : current.numbering.interleaved + 1;
    current.numbering.last = n;
    current.numbering.left = (uint32_t)(take - 1);
    return n;
}

static inline uint64_t next_launch_number(void)
{
    if (CT_UNLIKELY(current.numbering.either != 0))
        return next_launch_number_rare();
    /* No block, and the last launch found no gap: the rare path's, one at a
     * time (a gap: the number before this one is not this thread's last). */
    uint64_t before = atomic_fetch_add_explicit(&launches_numbered.next, 1, memory_order_relaxed);
    assert(before >= current.numbering.last && "launch numbers increase along each thread");
    if (CT_UNLIKELY(before != current.numbering.last))
        current.numbering.interleaved = 1;
    return current.numbering.last = before + 1;
}

uint64_t ct_launch_number_last(void)
{
    return current.numbering.last;
}

void ct_launch_in_flight(uint64_t *seq, uint64_t *stream, uint32_t grid[3], uint32_t block[3])
{
    *seq = current.seq;
    *stream = current.slot->launch.stream;
    memcpy(grid, current.slot->launch.grid, sizeof current.slot->launch.grid);
    memcpy(block, current.slot->launch.block, sizeof current.slot->launch.block);
}

/* graphs.c's kernel nodes: the launch's decoder, through this thread's
 * record (no launch is in flight on the thread then). */
void ct_launch_bindings(ct_kernel *k, void **params, void **extra, const ct_range **in, unsigned *n_in,
                        const ct_range **out, unsigned *n_out, unsigned *n_release)
{
    current.kernel = k;
    current.kernel_known = true;
    static CT_HOT_TLS ct_flight_slot node; /* a node, not a launch: never kept */
    hold(&node, &(ct_launch){.params = params, .extra = extra});
    decode();
    *in = current.in, *n_in = current.n_in, *out = current.out, *n_out = current.n_out;
    *n_release = current.n_release;
}

/* A launch with taint somewhere or injection rules: out of line, so the
 * happy path's frame stays small. */
__attribute__((noinline)) static bool before_checked(ct_call *call, bool tainted)
{
    current.kernel = ct_kernel_for(launch_f());
    current.kernel_known = true;
    call->kernel = current.kernel ? current.kernel->pretty : NULL;
    if (current.kernel && ct_call_inject(call, CT_INJECT_LAUNCH, current.kernel->mangled, current.kernel->base))
        return true; /* settled as a failure by ct_after_launch */
    if (!tainted)
        return true;
    /* Most launches while taint exists elsewhere: no word they pass reaches
     * a claim, so no input carries a failure and no output has one to
     * release.  Only a launch that touches taint is split into inputs and
     * outputs. */
    if (current.kernel && launch_params() && words_clean(current.kernel, launch_params()))
        return true;
    ct_scratch *room = room_to_decode();
    ct_words w = {0};
    unsigned n = room ? bind_launch(room, &w) : 0;
    if (!ct_read_failure(ct_g.store, w.bound, n, NULL))
        return true;
    return check_inputs(call, &w, n);
}

/* A launch whose inputs and outputs are known (decoded), settled as a
 * failure with call->result: its outputs take it.  image: the image event
 * of the stand-in launched (standins.c), 0 for a launch the driver failed. */
static void settle_failure(ct_call *call, uint32_t image)
{
    if (!current.decoded)
        decode();
    ct_failure_desc failed = describe_launch(call, call->result);
    failed.image = image;
    ct_launch_key key = launch_key();
    ct_settle_refused_launch(call, current.out, current.n_out, current.in, current.n_in, &failed, &key, current.kernel);
    call->kernel = failed.kernel;
}

/* A launch of a stand-in's kernel fails here, as a launch the driver failed
 * at once, with the error the driver gave its image: the runtime makes of
 * it the error the program had without cutaint.  Whatever its inputs
 * carry, it is not skipped: a skip would answer otherwise.  Captured or
 * not: the driver never sees it, so no graph will hold it.  False when f
 * is no stand-in. */
__attribute__((noinline)) static bool launched_stand_in(ct_call *call, const ct_launch *launch)
{
    CUresult error;
    uint32_t image;
    if (!ct_stand_in_answer((uint64_t)(uintptr_t)launch->f, &error, &image))
        return false;
    hold(ct_inflight_claim(), launch); /* never committed: the driver never sees it */
    current.seq = next_launch_number();
    current.fresh = 0;
    current.kernel = ct_kernel_described((uint64_t)(uintptr_t)launch->f);
    current.kernel_known = true;
    call->kernel = current.kernel ? current.kernel->pretty : NULL;
    call->result = error;
    call->answered = true; /* nothing reached the driver: no probe */
    settle_failure(call, image);
    return true;
}

/* The launch copied into slot s and numbered: checked when taint exists
 * somewhere or injection rules do. */
static inline bool begun(ct_call *call, const ct_launch *launch, ct_flight_slot *s)
{
    hold(s, launch);
    current.seq = next_launch_number();
    current.fresh = 0; /* not decoded, its kernel not looked up */
    /* Injection rules first: then only call lives across the store's call. */
    if (CT_UNLIKELY(ct_g.cfg.inject.n != 0))
        return before_checked(call, ct_summary_tainted(ct_g.summary));
    if (!ct_summary_tainted(ct_g.summary))
        return true;
    return before_checked(call, true);
}

/* A launch while stand-ins or captures exist, or whose thread has no ring
 * yet or a ring to prune first: out of line, so that the common launch calls
 * nothing but ct_summary_tainted. */
__attribute__((noinline)) static bool before_launch_rare(ct_call *call, const ct_launch *launch)
{
    if (CT_UNLIKELY(ct_stand_ins_exist()) && launched_stand_in(call, launch))
        return false;
    if (ct_captured(call, launch->stream)) /* recorded, not run: the graph launch is checked */
        return true;
    return begun(call, launch, ct_inflight_claim());
}

bool ct_before_launch(ct_call *call, const ct_launch *launch)
{
    ct_flight_slot *s;
    /* Neither stand-ins nor captures: one test of both. */
    if (CT_UNLIKELY((atomic_load_explicit(&ct_stand_ins_made, memory_order_relaxed) |
                     atomic_load_explicit(&ct_captures_live, memory_order_relaxed)) != 0) ||
        CT_UNLIKELY(!(s = ct_inflight_claim_fast())))
        return before_launch_rare(call, launch);
    return begun(call, launch, s);
}

bool ct_before_launch_ex(ct_call *call, const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
    ct_launch launch = {.f = f, .params = params, .extra = extra};
    if (config)
        launch = (ct_launch){f,
                             {config->gridDimX, config->gridDimY, config->gridDimZ},
                             {config->blockDimX, config->blockDimY, config->blockDimZ},
                             config->hStream,
                             params,
                             extra};
    return ct_before_launch(call, &launch);
}

/* A launch that succeeded and stores through parameters of unknown extent
 * leaves what they carry, unless it retries the refused launch whose
 * failure they carry: then it wrote what that launch was to write. */
static void release_stores(void)
{
    const ct_range *stores = current.out + current.n_release;
    unsigned n = current.n_out - current.n_release;
    ct_failure_id retried = 0;
    if (!ct_read_failure(ct_g.store, stores, n, NULL) || !retries_into(stores, n, stores, n, &retried))
        return;
    ct_written(ct_g.store, stores, n);
    if (!current.retrying)
        current.retrying = retried;
}

/* A decoded launch that succeeded is the last writer of the outputs it
 * releases; a retry says what it cleared.  Out of line, so the after hook
 * reaches it by a tail call and saves no register. */
__attribute__((noinline)) static void release_outputs(void)
{
    ct_written(ct_g.store, current.out, current.n_release);
    if (CT_UNLIKELY(current.n_out > current.n_release))
        release_stores();
    if (CT_UNLIKELY(current.retrying))
        ct_event_retry(current.retrying, current.kernel ? current.kernel->pretty : NULL, current.seq);
}

/* A launch the driver failed: settled as a failure.  A launch that
 * succeeded whose thread has no ring or no known context: committed the
 * long way.  Out of line, so that the common after hook calls nothing but
 * ct_written. */
__attribute__((noinline)) static void after_launch_rare(ct_call *call)
{
    if (call->result == CUDA_SUCCESS) {
        ct_inflight_commit_slow(current.slot, call->id, current.seq, CT_FLIGHT_LAUNCH);
        if (current.decoded)
            release_outputs();
        return;
    }
    if (!current.kernel_known || !current.kernel)
        current.kernel = ct_kernel_for(launch_f());
    current.kernel_known = true;
    settle_failure(call, 0);
}

void ct_after_launch(ct_call *call)
{
    if (CT_UNLIKELY(call->result != CUDA_SUCCESS) ||
        CT_UNLIKELY(!ct_inflight_commit_fast(current.slot, call->id, current.seq, CT_FLIGHT_LAUNCH))) {
        after_launch_rare(call);
        return;
    }
    if (current.decoded)
        release_outputs();
}
