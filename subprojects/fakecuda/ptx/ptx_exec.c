/*
 * ptx_exec.c: runs a launch of a decoded PTX kernel (ptx_ir.h) on the CPU,
 * with the semantics of a GPU: the grid's blocks one after another, each
 * block's warps of 32 lanes in lockstep, bar.sync across a block's warps.
 *
 * Written from NVIDIA's PTX ISA document.
 * - A warp runs the lanes at the lowest program counter together (the
 *   "min-PC" rule): lanes that diverge at a branch run apart and meet again
 *   where their paths join, which for the structured code compilers emit
 *   is the branch's post-dominator. A warp-wide instruction (shfl, vote,
 *   match, redux, activemask) sees the lanes that run it together.
 * - A block's warps run round-robin in slices of FC_SLICE warp-
 *   instructions (a slice ends early where the warp waits at a barrier or
 *   exits); when every warp left waits, the barrier opens.
 * - Memory: global and const addresses are device addresses, reached only
 *   through the launch's device() mapping (never a raw host pointer), so a
 *   bad address is CUDA_ERROR_ILLEGAL_ADDRESS, not a crash. Shared, local,
 *   the kernel's parameters and the device heap are windows of the generic
 *   space above every host and device address (FC_WIN_*).
 * Invariants:
 * - A launch stops at its first fault and returns it; the fault code is one
 *   of fakecuda_kernel.h's or ptx.h's.
 * - An instruction fakecuda does not implement fails the launch with one
 *   stderr line naming it: never a wrong answer.
 * - Nothing outside the launch's own buffers is written but device memory
 *   (through device()) and the device heap.
 */
#include "ptx.h"
#include "ptx_ir.h"
#include "ptx_tex.h"
#include "ptx_sync.h"

#include <assert.h>
#include <ctype.h>
#include <fenv.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define FC_WIN_SHARED (1ull << 48)
#define FC_WIN_LOCAL (2ull << 48)
#define FC_WIN_PARAM (3ull << 48)
#define FC_WIN_HEAP (4ull << 48)
#define FC_WIN_GRID (5ull << 48) /* a cooperative grid's workspace */
#define FC_WIN_SIZE (1ull << 48)
#define FC_LOCAL_BYTES (32u * 1024u) /* per thread: frames of .local and .param */
#define FC_MAX_DEPTH 64u             /* call depth */
#define FC_HEAP_BYTES ((size_t)8 << 20)
#define FC_SLICE 64u               /* warp-instructions a warp runs before the next warp's turn */
#define FC_WINDOWS 8               /* allocations a launch remembers (device_bytes) */
#define FC_MAX_EXTENT (1ull << 40) /* the longest allocation extent device_bytes learns */

/* ---- the launch's state -------------------------------------------------------- */

typedef struct frame {
    const ptx_func *fn;
    uint64_t *r;       /* nregs * 32: register i of lane l at r[i * 32 + l] */
    uint32_t live;     /* lanes still running this frame */
    uint32_t returned; /* lanes that left it by ret */
    uint32_t cur_mask; /* the lanes at cur_pc, which run next */
    uint32_t cur_pc;
    bool conv;          /* cur_mask and other_min are current (false: pick again) */
    uint32_t other_min; /* the lowest PC of the runnable lanes outside cur_mask */
    uint32_t pc[32];    /* PCs of lanes outside cur_mask */
    uint64_t local_base;
    int32_t ret_sym; /* the caller's slot for the return value, or -1 */
} frame;

typedef struct warp {
    frame stack[FC_MAX_DEPTH];
    unsigned depth;
    uint32_t blocked; /* lanes waiting at a barrier */
    uint32_t carry;   /* .cc carry flags, one bit per lane */
    unsigned id;
    uint16_t tid[3][32];
    uint64_t clock;
} warp;

typedef struct wrange {
    uint64_t lo, hi;
} wrange;

typedef struct run {
    const fc_ptx_module *m;
    const ptx_func *kernel;
    const struct fakecuda_launch *l;
    unsigned ctaid[3];
    unsigned char *shared;
    uint64_t shared_bytes;
    unsigned char *local; /* FC_LOCAL_BYTES per thread of the block */
    int fault;
    uint64_t steps, step_limit; /* warp-instructions run; FAKECUDA_PTX_STEPS (0: no limit) */
    uint64_t thread_steps;      /* thread-instructions run (lanes of each warp-instruction) */
    /* the write log (FAKECUDA_WRITE_LOG), or NULL */
    wrange *writes;
    size_t nwrites, wcap;
    bool logging;
    ptx_grid *grid; /* a cooperative launch's grid, or NULL */
    bool yield;     /* the running warp reached a polling point: run the others */
    /* the allocations device() mapped, most recently used first */
    struct dwindow {
        uint64_t lo, hi; /* the allocation's whole extent [lo, hi) */
        unsigned char *host;
    } win[FC_WINDOWS];
    unsigned nwin;
} run;

/* ---- the device heap (malloc/free) ------------------------------------------------ */

static struct {
    pthread_mutex_t lock;
    unsigned char *base;
    struct hblock {
        uint64_t off, size;
    } * blk; /* sorted by off */
    size_t n, cap;
} heap = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t heap_alloc(uint64_t size)
{
    if (size == 0 || size > FC_HEAP_BYTES)
        return 0;
    size = (size + 15) & ~(uint64_t)15;
    pthread_mutex_lock(&heap.lock);
    uint64_t at = 0, got = 0;
    if (!heap.base) {
        void *p = mmap(NULL, FC_HEAP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        heap.base = p == MAP_FAILED ? NULL : p;
    }
    size_t i = 0;
    for (; heap.base && i <= heap.n; i++) {
        uint64_t end = i < heap.n ? heap.blk[i].off : FC_HEAP_BYTES;
        if (end - at >= size)
            break;
        if (i < heap.n)
            at = heap.blk[i].off + heap.blk[i].size;
    }
    if (heap.base && i <= heap.n && (heap.n < heap.cap || (heap.cap = heap.cap ? 2 * heap.cap : 64, true))) {
        struct hblock *b = realloc(heap.blk, heap.cap * sizeof *b);
        if (b) {
            heap.blk = b;
            memmove(&b[i + 1], &b[i], (heap.n - i) * sizeof *b);
            b[i] = (struct hblock){at, size};
            heap.n++;
            got = FC_WIN_HEAP + at;
        }
    }
    pthread_mutex_unlock(&heap.lock);
    return got;
}

static void heap_free(uint64_t addr)
{
    pthread_mutex_lock(&heap.lock);
    for (size_t i = 0; i < heap.n; i++)
        if (FC_WIN_HEAP + heap.blk[i].off == addr) {
            memmove(&heap.blk[i], &heap.blk[i + 1], (heap.n - i - 1) * sizeof *heap.blk);
            heap.n--;
            break;
        }
    pthread_mutex_unlock(&heap.lock);
}

/* ---- lanes and values ------------------------------------------------------------- */

#define LANES(mask) for (uint32_t lm_ = (mask), l; lm_ && (l = (unsigned)__builtin_ctz(lm_), 1); lm_ &= lm_ - 1)

#define FULL_WARP 0xffffffffu

/* The functions made of whole-warp loops are compiled twice on x86-64, for
   the baseline and for x86-64-v3 (AVX2, FMA: per-lane variable shifts,
   256-bit lanes, fused multiply-add without a libm call), the loader
   picking the one the CPU runs. Not under ThreadSanitizer or
   AddressSanitizer: the loader runs a clone's resolver while it relocates
   the library, before the sanitizer's runtime is initialised, and the
   instrumented resolver crashes there (rel_model under TSan died in
   _dl_relocate_object). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__) && \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define WARP_LOOPS __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define WARP_LOOPS
#endif

/* Runs the statement (the variadic argument) for each lane l of mask: on a
   converged warp as a plain loop over the 32 lanes, which the compiler
   unrolls and vectorises, else lane by lane. */
#define EACH_LANE(mask, ...)                    \
    do {                                        \
        uint32_t em_ = (mask);                  \
        if (em_ == FULL_WARP) {                 \
            for (uint32_t l = 0; l < 32; l++) { \
                __VA_ARGS__;                    \
            }                                   \
        } else {                                \
            LANES(em_)                          \
            {                                   \
                __VA_ARGS__;                    \
            }                                   \
        }                                       \
    } while (0)

static inline unsigned tbits(int ty)
{
    return ptx_type_size(ty) * 8u;
}

static inline bool tsigned(int ty)
{
    return ty >= PT_S8 && ty <= PT_S64;
}

static inline bool tfloat(int ty)
{
    return ty == PT_F32 || ty == PT_F64 || ty == PT_F16 || ty == PT_BF16 || ty == PT_F16X2 || ty == PT_BF16X2;
}

static inline uint64_t zx(uint64_t v, unsigned bits)
{
    return bits >= 64 ? v : v & ((1ull << bits) - 1);
}

static inline int64_t sx(uint64_t v, unsigned bits)
{
    return bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}

static inline float as_f(uint64_t v)
{
    float f;
    uint32_t b = (uint32_t)v;
    memcpy(&f, &b, 4);
    return f;
}

static inline uint64_t of_f(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static inline double as_d(uint64_t v)
{
    double d;
    memcpy(&d, &v, 8);
    return d;
}

static inline uint64_t of_d(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

/* IEEE binary16 and bfloat16 to and from float (round to nearest even). */
static float h2f(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f)
        return as_f(s | 0x7f800000u | m << 13);
    if (e == 0) {
        float f = ldexpf((float)m, -24);
        return s ? -f : f;
    }
    return as_f(s | (e + 112) << 23 | m << 13);
}

static uint16_t f2h(float f)
{
    uint32_t b = (uint32_t)of_f(f), s = (b >> 16) & 0x8000u;
    float a = fabsf(f);
    if (isnan(f))
        return (uint16_t)(s | 0x7e00u);
    if (a >= 65520.0f)
        return (uint16_t)(s | 0x7c00u);
    if (a < 6.103515625e-05f) { /* subnormal: multiples of 2^-24 */
        float q = nearbyintf(a * 16777216.0f);
        return (uint16_t)(s | (uint32_t)q);
    }
    int e;
    float m = frexpf(a, &e);           /* a = m * 2^e, m in [0.5, 1) */
    float q = nearbyintf(m * 2048.0f); /* 11 significant bits */
    if (q >= 2048.0f) {
        q /= 2;
        e++;
    }
    return (uint16_t)(s | (uint32_t)(e + 14) << 10 | ((uint32_t)q & 0x3ff));
}

static float bf2f(uint16_t h)
{
    return as_f((uint32_t)h << 16);
}

static uint16_t f2bf(float f)
{
    uint32_t b = (uint32_t)of_f(f);
    if (isnan(f))
        return (uint16_t)((b >> 16) | 0x40);
    return (uint16_t)((b + 0x7fffu + ((b >> 16) & 1)) >> 16);
}

/* ---- faults and messages ---------------------------------------------------------------- */

static void launch_error(run *x, const ptx_insn *in, const char *what)
{
    if (!x->fault)
        fprintf(stderr, "fakecuda: PTX kernel %s: line %u: %s; the launch fails\n", x->kernel->name, in ? in->line : 0,
                what);
    if (!x->fault)
        x->fault = FAKECUDA_KERNEL_LAUNCH_FAILED;
}

static void unsupported(run *x, const ptx_insn *in)
{
    static const char *const names[] = {
#define PTX_OP(name, t) t,
#include "ptx_ops.def"
#undef PTX_OP
    };
    char what[256];
    if (in->op == PI_UNSUPPORTED)
        snprintf(what, sizeof what, "instruction not supported: %s", in->text);
    else
        snprintf(what, sizeof what, "instruction not supported: %s (type %u, modifiers %#x)", names[in->op], in->type,
                 in->mods);
    launch_error(x, in, what);
}

/* ---- memory -------------------------------------------------------------------------------- */

static void log_write(run *x, uint64_t a, uint64_t n)
{
    if (x->nwrites && x->writes[x->nwrites - 1].hi == a) {
        x->writes[x->nwrites - 1].hi = a + n;
        return;
    }
    if (x->nwrites == x->wcap) {
        size_t cap = x->wcap ? 2 * x->wcap : 256;
        wrange *w = realloc(x->writes, cap * sizeof *w);
        if (!w)
            return;
        x->writes = w;
        x->wcap = cap;
    }
    x->writes[x->nwrites++] = (wrange){a, a + n};
}

/* The largest k <= limit for which mapped(x, a, n, k) holds, knowing it holds
   for k = 0 and fails past some k (monotone): doubling, then bisection. */
static uint64_t largest_mapped(run *x, uint64_t a, uint64_t n, uint64_t limit,
                               bool (*mapped)(run *, uint64_t, uint64_t, uint64_t))
{
    uint64_t ok = 0, bad = 0;
    for (uint64_t k = 1; !bad; k *= 2) {
        if (k > limit)
            k = limit;
        if (k <= ok)
            return ok;
        if (mapped(x, a, n, k))
            ok = k;
        else
            bad = k;
    }
    while (bad - ok > 1) {
        uint64_t mid = ok + (bad - ok) / 2;
        if (mapped(x, a, n, mid))
            ok = mid;
        else
            bad = mid;
    }
    return ok;
}

static bool mapped_above(run *x, uint64_t a, uint64_t n, uint64_t k)
{
    return x->l->device(a, (size_t)(n + k)) != NULL;
}

static bool mapped_below(run *x, uint64_t a, uint64_t n, uint64_t k)
{
    return x->l->device(a - k, (size_t)(n + k)) != NULL;
}

/* The host bytes of device range [a, a + n), or NULL outside every
   allocation. A miss learns the whole extent of the allocation around the
   range from device() (one allocation's bytes are contiguous on the host)
   and keeps it among the launch's most recently used, so the lanes and
   instructions that follow in the same allocations need no lookup. */
static unsigned char *device_bytes(run *x, uint64_t a, uint64_t n)
{
    struct dwindow *win = x->win;
    for (unsigned i = 0; i < x->nwin; i++)
        if (a >= win[i].lo && a < win[i].hi && n <= win[i].hi - a) {
            if (i) {
                struct dwindow hit = win[i];
                memmove(&win[1], &win[0], i * sizeof *win);
                win[0] = hit;
            }
            return win[0].host + (a - win[0].lo);
        }
    unsigned char *h = x->l->device(a, (size_t)n);
    if (!h)
        return NULL;
    uint64_t above = largest_mapped(x, a, n, FC_MAX_EXTENT, mapped_above);
    uint64_t below = largest_mapped(x, a, n, a < FC_MAX_EXTENT ? a : FC_MAX_EXTENT, mapped_below);
    unsigned char *low = x->l->device(a - below, (size_t)(below + n));
    assert(low && low + below == h); /* the allocation is contiguous on the host */
    if (x->nwin < FC_WINDOWS)
        x->nwin++;
    memmove(&win[1], &win[0], (x->nwin - 1) * sizeof *win);
    win[0] = (struct dwindow){a - below, a + n + above, low};
    return h;
}

/* The host bytes of n bytes at address a of space sp for lane l, or NULL with the fault set. */
static unsigned char *mem(run *x, unsigned thread, int sp, uint64_t a, unsigned n, bool write)
{
    if (n > 1 && !(n & (n - 1)) && (a & (n - 1))) {
        x->fault = FAKECUDA_KERNEL_MISALIGNED_ADDRESS;
        return NULL;
    }
    if (sp == PS_GENERIC || sp == PS_GLOBAL || sp == PS_CONST) {
        if (a >= FC_WIN_SHARED && a < FC_WIN_SHARED + FC_WIN_SIZE && sp == PS_GENERIC) {
            sp = PS_SHARED;
            a -= FC_WIN_SHARED;
        } else if (a >= FC_WIN_LOCAL && a < FC_WIN_LOCAL + FC_WIN_SIZE && sp == PS_GENERIC) {
            sp = PS_LOCAL;
            a -= FC_WIN_LOCAL;
        } else if (a >= FC_WIN_PARAM && a < FC_WIN_PARAM + FC_WIN_SIZE && sp == PS_GENERIC) {
            sp = PS_PARAM;
        } else if (a >= FC_WIN_GRID && a < FC_WIN_GRID + FC_WIN_SIZE && x->grid && sp != PS_CONST) {
            unsigned char *p = ptx_grid_workspace(x->grid, a - FC_WIN_GRID, n);
            if (!p)
                goto bad;
            return p;
        } else if (a >= FC_WIN_HEAP && a < FC_WIN_HEAP + FC_HEAP_BYTES && heap.base) {
            return a - FC_WIN_HEAP + n <= FC_HEAP_BYTES ? heap.base + (a - FC_WIN_HEAP) : NULL;
        } else {
            if (sp == PS_CONST && write)
                goto bad;
            unsigned char *p = device_bytes(x, a, n);
            if (!p)
                goto bad;
            if (write && x->logging)
                log_write(x, a, n);
            return p;
        }
    }
    switch (sp) {
    case PS_SHARED:
        if (a + n > x->shared_bytes || a + n < a)
            goto bad;
        return x->shared + a;
    case PS_LOCAL:
        if (a + n > FC_LOCAL_BYTES || a + n < a)
            goto bad;
        return x->local + (size_t)thread * FC_LOCAL_BYTES + a;
    case PS_PARAM:
        if (a >= FC_WIN_PARAM) {
            a -= FC_WIN_PARAM;
            if (write || a + n > x->l->params_size || a + n < a)
                goto bad;
            return (unsigned char *)x->l->params + a;
        }
        if (a + n > FC_LOCAL_BYTES || a + n < a)
            goto bad;
        return x->local + (size_t)thread * FC_LOCAL_BYTES + a;
    default: break;
    }
bad:
    x->fault = FAKECUDA_KERNEL_ILLEGAL_ADDRESS;
    return NULL;
}

static inline uint64_t load_n(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    memcpy(&v, p, n);
    return v;
}

/* ---- operands -------------------------------------------------------------------------------- */

static uint64_t sym_addr(const run *x, const frame *f, int32_t s)
{
    const ptx_sym *y = &f->fn->sym[s];
    switch (y->kind) {
    case SYM_VAR: return x->m->var_addr[y->index];
    case SYM_KPARAM: return FC_WIN_PARAM + y->offset;
    default: return f->local_base + y->offset;
    }
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t sreg(const run *x, const warp *w, int r, unsigned l)
{
    const struct fakecuda_launch *L = x->l;
    switch (r) {
    case SR_TID_X: return w->tid[0][l];
    case SR_TID_Y: return w->tid[1][l];
    case SR_TID_Z: return w->tid[2][l];
    case SR_NTID_X: return L->block.x;
    case SR_NTID_Y: return L->block.y;
    case SR_NTID_Z: return L->block.z;
    case SR_CTAID_X: return x->ctaid[0];
    case SR_CTAID_Y: return x->ctaid[1];
    case SR_CTAID_Z: return x->ctaid[2];
    case SR_NCTAID_X: return L->grid.x;
    case SR_NCTAID_Y: return L->grid.y;
    case SR_NCTAID_Z: return L->grid.z;
    case SR_LANEID: return l;
    case SR_WARPID: return w->id;
    case SR_NWARPID: return 64;
    case SR_SMID: return 0;
    case SR_NSMID: return 1;
    case SR_GRIDID: return 1;
    case SR_CLOCK: return (uint32_t)w->clock;
    case SR_CLOCK64: return w->clock;
    case SR_GLOBALTIMER: return now_ns();
    case SR_LANEMASK_EQ: return 1u << l;
    case SR_LANEMASK_LT: return (1u << l) - 1;
    case SR_LANEMASK_LE: return (uint32_t)((2ull << l) - 1);
    case SR_LANEMASK_GT: return ~(uint32_t)((2ull << l) - 1);
    case SR_LANEMASK_GE: return ~((1u << l) - 1);
    case SR_DYN_SMEM: return L->shared_bytes;
    case SR_TOTAL_SMEM: return x->shared_bytes;
    case SR_ENVREG1: return x->grid ? FC_WIN_GRID >> 32 : 0;
    case SR_ENVREG2: return 0;
    default: return 0;
    }
}

static inline uint64_t val(const run *x, const warp *w, const frame *f, const ptx_opnd *o, unsigned l)
{
    switch (o->kind) {
    case PO_REG: return f->r[(size_t)o->reg * 32 + l];
    case PO_IMM: return o->imm;
    case PO_SREG: return sreg(x, w, o->reg, l);
    case PO_SYM: return sym_addr(x, f, o->sym);
    case PO_FUNC: return ptx_func_address((unsigned)o->imm);
    default: return 0;
    }
}

static inline void put(frame *f, const ptx_opnd *o, unsigned l, uint64_t v)
{
    if (o->kind == PO_REG)
        f->r[(size_t)o->reg * 32 + l] = v;
}

/* A predicate operand, "!p" negating it. */
static inline bool pval(const run *x, const warp *w, const frame *f, const ptx_opnd *o, unsigned l)
{
    return (val(x, w, f, o, l) != 0) != o->neg;
}

static inline uint64_t addr_of(const run *x, const frame *f, const ptx_opnd *o, unsigned l)
{
    uint64_t a = o->imm;
    if (o->reg >= 0)
        a += f->r[(size_t)o->reg * 32 + l];
    else if (o->sym >= 0)
        a += sym_addr(x, f, o->sym);
    return a;
}

/* Operand o of every lane of exec: the register's own lanes, or its values
   gathered into tmp (one dispatch per warp, not per lane). */
static inline const uint64_t *lanes_of(const run *x, const warp *w, const frame *f, const ptx_opnd *o, uint32_t exec,
                                       uint64_t *tmp)
{
    if (o->kind == PO_REG)
        return &f->r[(size_t)o->reg * 32];
    if (o->kind == PO_IMM || (o->kind == PO_SREG && o->reg >= SR_NTID_X && o->reg <= SR_NCTAID_Z)) {
        uint64_t v = o->kind == PO_IMM ? o->imm : sreg(x, w, o->reg, 0); /* the same in every lane */
        for (unsigned l = 0; l < 32; l++)
            tmp[l] = v;
    } else if (o->kind == PO_SREG && o->reg <= SR_TID_Z) {
        const uint16_t *tid = w->tid[o->reg - SR_TID_X];
        EACH_LANE(exec, tmp[l] = tid[l]);
    } else {
        LANES(exec) tmp[l] = val(x, w, f, o, l);
    }
    return tmp;
}

/* The common integer operations (no carry, saturation or high half) on
   whole warps, each a typed loop: what -O3 address arithmetic is made of. */
WARP_LOOPS static bool int_fast(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    if (in->mods & (PM_CC | PM_SAT | PM_HI) || in->o[0].kind != PO_REG || in->type == PT_PRED)
        return false;
    unsigned bits = tbits(in->type);
    if (bits != 32 && bits != 64)
        return false;
    bool wide = in->mods & PM_WIDE;
    if (wide && (bits != 32 || (in->op != PI_MUL && in->op != PI_MAD)))
        return false;
    uint64_t mask = bits == 64 ? ~0ull : 0xffffffffull, ta[32], tb[32], tc[32];
    uint64_t *d = &f->r[(size_t)in->o[0].reg * 32];
    const uint64_t *a, *b, *c = NULL;
    switch (in->op) {
    case PI_ADD:
    case PI_SUB:
    case PI_MUL:
    case PI_AND:
    case PI_OR:
    case PI_XOR:
    case PI_SHL:
    case PI_SHR:
    case PI_MIN:
    case PI_MAX: break;
    case PI_MAD: c = lanes_of(x, w, f, &in->o[3], exec, tc); break;
    default: return false;
    }
    a = lanes_of(x, w, f, &in->o[1], exec, ta);
    b = lanes_of(x, w, f, &in->o[2], exec, tb);
    bool sgn = tsigned(in->type);
    if (wide) { /* 32 x 32 -> 64 bits */
        if (sgn && in->op == PI_MUL)
            EACH_LANE(exec, d[l] = (uint64_t)((int64_t)(int32_t)a[l] * (int32_t)b[l]));
        else if (sgn)
            EACH_LANE(exec, d[l] = (uint64_t)((int64_t)(int32_t)a[l] * (int32_t)b[l]) + c[l]);
        else if (in->op == PI_MUL)
            EACH_LANE(exec, d[l] = (uint64_t)(uint32_t)a[l] * (uint32_t)b[l]);
        else
            EACH_LANE(exec, d[l] = (uint64_t)(uint32_t)a[l] * (uint32_t)b[l] + c[l]);
        return true;
    }
    switch (in->op) {
    case PI_ADD: EACH_LANE(exec, d[l] = (a[l] + b[l]) & mask); break;
    case PI_SUB: EACH_LANE(exec, d[l] = (a[l] - b[l]) & mask); break;
    case PI_MUL: EACH_LANE(exec, d[l] = (a[l] * b[l]) & mask); break;
    case PI_MAD: EACH_LANE(exec, d[l] = (a[l] * b[l] + c[l]) & mask); break;
    case PI_AND: EACH_LANE(exec, d[l] = a[l] & b[l] & mask); break;
    case PI_OR: EACH_LANE(exec, d[l] = (a[l] | b[l]) & mask); break;
    case PI_XOR: EACH_LANE(exec, d[l] = (a[l] ^ b[l]) & mask); break;
    case PI_SHL: EACH_LANE(exec, d[l] = (uint32_t)b[l] >= bits ? 0 : (a[l] << (uint32_t)b[l]) & mask); break;
    case PI_SHR:
        if (sgn && bits == 32)
            EACH_LANE(exec, d[l] = (uint32_t)((int32_t)a[l] >> ((uint32_t)b[l] > 31 ? 31 : (uint32_t)b[l])));
        else if (sgn)
            EACH_LANE(exec, d[l] = (uint64_t)((int64_t)a[l] >> ((uint32_t)b[l] > 63 ? 63 : (uint32_t)b[l])));
        else
            EACH_LANE(exec, d[l] = (uint32_t)b[l] >= bits ? 0 : (a[l] & mask) >> (uint32_t)b[l]);
        break;
    case PI_MIN:
    case PI_MAX: {
        bool mx = in->op == PI_MAX;
        if (sgn && bits == 32)
            EACH_LANE(exec, int32_t p = (int32_t)a[l], q = (int32_t)b[l]; d[l] = (uint32_t)((p < q) != mx ? p : q));
        else if (sgn)
            EACH_LANE(exec, int64_t p = (int64_t)a[l], q = (int64_t)b[l]; d[l] = (uint64_t)((p < q) != mx ? p : q));
        else
            EACH_LANE(exec, uint64_t p = a[l] & mask, q = b[l] & mask; d[l] = (p < q) != mx ? p : q);
        break;
    }
    default: return false;
    }
    return true;
}

/* ---- arithmetic ------------------------------------------------------------------------------- */

static inline float ftz32(float v, bool ftz)
{
    return ftz && fpclassify(v) == FP_SUBNORMAL ? copysignf(0.0f, v) : v;
}

static inline double ftz64(double v, bool ftz)
{
    return ftz && fpclassify(v) == FP_SUBNORMAL ? copysign(0.0, v) : v;
}

/* A float result as the instruction writes it: .ftz, .sat, .relu. */
static uint64_t fout(const ptx_insn *in, int ty, double v)
{
    bool ftz = in->mods & PM_FTZ;
    if (in->mods & PM_SAT)
        v = isnan(v) ? 0.0 : v < 0 ? 0.0 : v > 1 ? 1.0 : v;
    if ((in->mods & PM_RELU) && (v < 0 || isnan(v)))
        v = isnan(v) ? v : 0.0;
    switch (ty) {
    case PT_F32: return of_f(ftz32((float)v, ftz));
    case PT_F64: return of_d(v);
    case PT_F16: return f2h((float)v);
    case PT_BF16: return f2bf((float)v);
    default: return 0;
    }
}

static double fin(const ptx_insn *in, int ty, uint64_t b)
{
    bool ftz = in->mods & PM_FTZ;
    switch (ty) {
    case PT_F32: return ftz32(as_f(b), ftz);
    case PT_F64: return ftz64(as_d(b), ftz);
    case PT_F16: return h2f((uint16_t)b);
    case PT_BF16: return bf2f((uint16_t)b);
    default: return 0;
    }
}

static int fe_mode(int rnd)
{
    switch (rnd) {
    case PR_RZ:
    case PR_RZI: return FE_TOWARDZERO;
    case PR_RM:
    case PR_RMI: return FE_DOWNWARD;
    case PR_RP:
    case PR_RPI: return FE_UPWARD;
    default: return FE_TONEAREST;
    }
}

/* The element type and count of a packed float type (f16x2: f16, 2). */
static int elem_type(int ty, unsigned *count)
{
    *count = ty == PT_F16X2 || ty == PT_BF16X2 ? 2 : 1;
    return ty == PT_F16X2 ? PT_F16 : ty == PT_BF16X2 ? PT_BF16 : ty;
}

/* One float operation on element values (a, b, c). */
static double fop(const ptx_insn *in, int ty, double a, double b, double c, bool *bad)
{
    switch (in->op) {
    case PI_ADD: return ty == PT_F32 ? (double)((float)a + (float)b) : a + b;
    case PI_SUB: return ty == PT_F32 ? (double)((float)a - (float)b) : a - b;
    case PI_MUL: return ty == PT_F32 ? (double)((float)a * (float)b) : a * b;
    case PI_FMA:
    case PI_MAD: return ty == PT_F64 ? fma(a, b, c) : (double)fmaf((float)a, (float)b, (float)c);
    case PI_DIV: return ty == PT_F32 ? (double)((float)a / (float)b) : a / b;
    case PI_MIN: return ty == PT_F32 ? (double)fminf((float)a, (float)b) : fmin(a, b);
    case PI_MAX: return ty == PT_F32 ? (double)fmaxf((float)a, (float)b) : fmax(a, b);
    case PI_ABS: return fabs(a);
    case PI_NEG: return -a;
    case PI_RCP: return ty == PT_F32 ? (double)(1.0f / (float)a) : 1.0 / a;
    case PI_SQRT: return ty == PT_F32 ? (double)sqrtf((float)a) : sqrt(a);
    case PI_RSQRT: return ty == PT_F32 ? (double)(1.0f / sqrtf((float)a)) : 1.0 / sqrt(a);
    case PI_SIN: return (double)sinf((float)a);
    case PI_COS: return (double)cosf((float)a);
    case PI_LG2: return (double)log2f((float)a);
    case PI_EX2: return (double)exp2f((float)a);
    case PI_TANH: return ty == PT_F32 ? (double)tanhf((float)a) : tanh(a);
    case PI_COPYSIGN: return copysign(b, a);
    default: *bad = true; return 0;
    }
}

/* Float arithmetic on scalar or packed types: unary, binary or ternary by opcode. */
WARP_LOOPS static bool float_fast(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec);

static bool float_op(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    if (float_fast(x, w, f, in, exec))
        return true;
    unsigned count;
    int et = elem_type(in->type, &count);
    unsigned eb = tbits(et);
    bool directed = in->rnd > PR_RN;
    int saved = directed ? fegetround() : 0;
    if (directed)
        fesetround(fe_mode(in->rnd));
    bool bad = false;
    LANES(exec)
    {
        uint64_t A = val(x, w, f, &in->o[1], l), B = in->nops > 2 ? val(x, w, f, &in->o[2], l) : 0,
                 C = in->nops > 3 ? val(x, w, f, &in->o[3], l) : 0, out = 0;
        for (unsigned e = 0; e < count; e++) {
            unsigned sh = e * eb;
            double a = fin(in, et, zx(A >> sh, eb)), b = fin(in, et, zx(B >> sh, eb)), c = fin(in, et, zx(C >> sh, eb));
            double r = fop(in, et, a, b, c, &bad);
            out |= zx(fout(in, et, r), eb) << sh;
        }
        put(f, &in->o[0], l, out);
    }
    if (directed)
        fesetround(saved);
    if (bad)
        unsupported(x, in);
    return !bad;
}

static bool cmp_int(int c, uint64_t a, uint64_t b, bool sgn, unsigned bits)
{
    int64_t sa = sx(a, bits), sb = sx(b, bits);
    uint64_t ua = zx(a, bits), ub = zx(b, bits);
    switch (c) {
    case PC_EQ: return ua == ub;
    case PC_NE: return ua != ub;
    case PC_LT: return sgn ? sa < sb : ua < ub;
    case PC_LE: return sgn ? sa <= sb : ua <= ub;
    case PC_GT: return sgn ? sa > sb : ua > ub;
    case PC_GE: return sgn ? sa >= sb : ua >= ub;
    case PC_LO: return ua < ub;
    case PC_LS: return ua <= ub;
    case PC_HI: return ua > ub;
    case PC_HS: return ua >= ub;
    default: return false;
    }
}

static bool cmp_float(int c, double a, double b)
{
    bool un = isnan(a) || isnan(b);
    switch (c) {
    case PC_EQ: return !un && a == b;
    case PC_NE: return !un && a != b;
    case PC_LT: return !un && a < b;
    case PC_LE: return !un && a <= b;
    case PC_GT: return !un && a > b;
    case PC_GE: return !un && a >= b;
    case PC_EQU: return un || a == b;
    case PC_NEU: return un || a != b;
    case PC_LTU: return un || a < b;
    case PC_LEU: return un || a <= b;
    case PC_GTU: return un || a > b;
    case PC_GEU: return un || a >= b;
    case PC_NUM: return !un;
    case PC_NAN: return un;
    default: return false;
    }
}

static bool compare(const ptx_insn *in, int ty, uint64_t a, uint64_t b)
{
    if (tfloat(ty)) {
        unsigned n;
        int et = elem_type(ty, &n);
        return cmp_float(in->sub, fin(in, et, a), fin(in, et, b));
    }
    return cmp_int(in->sub, a, b, tsigned(ty), tbits(ty));
}

/* f32 and f64 arithmetic without .ftz/.sat/.relu, on whole warps. */
WARP_LOOPS static bool float_fast(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    if ((in->mods & (PM_FTZ | PM_SAT | PM_RELU)) || in->rnd > PR_RP || in->o[0].kind != PO_REG ||
        (in->type != PT_F32 && in->type != PT_F64))
        return false;
    uint64_t ta[32], tb[32], tc[32];
    const uint64_t *a = NULL, *b = NULL, *c = NULL;
    uint64_t *d = &f->r[(size_t)in->o[0].reg * 32];
    switch (in->op) {
    case PI_FMA:
    case PI_MAD: c = lanes_of(x, w, f, &in->o[3], exec, tc); /* fall through */
    case PI_ADD:
    case PI_SUB:
    case PI_MUL:
    case PI_DIV:
    case PI_MIN:
    case PI_MAX: b = lanes_of(x, w, f, &in->o[2], exec, tb); /* fall through */
    case PI_NEG:
    case PI_ABS: a = lanes_of(x, w, f, &in->o[1], exec, ta); break;
    default: return false;
    }
#define FLOAT_CASES(AS, OF, FMA, MIN, MAX, ABS)                                        \
    switch (in->op) {                                                                  \
    case PI_ADD: EACH_LANE(exec, d[l] = OF(AS(a[l]) + AS(b[l]))); break;               \
    case PI_SUB: EACH_LANE(exec, d[l] = OF(AS(a[l]) - AS(b[l]))); break;               \
    case PI_MUL: EACH_LANE(exec, d[l] = OF(AS(a[l]) * AS(b[l]))); break;               \
    case PI_DIV: EACH_LANE(exec, d[l] = OF(AS(a[l]) / AS(b[l]))); break;               \
    case PI_FMA:                                                                       \
    case PI_MAD: EACH_LANE(exec, d[l] = OF(FMA(AS(a[l]), AS(b[l]), AS(c[l])))); break; \
    case PI_MIN: EACH_LANE(exec, d[l] = OF(MIN(AS(a[l]), AS(b[l])))); break;           \
    case PI_MAX: EACH_LANE(exec, d[l] = OF(MAX(AS(a[l]), AS(b[l])))); break;           \
    case PI_NEG: EACH_LANE(exec, d[l] = OF(-AS(a[l]))); break;                         \
    default: EACH_LANE(exec, d[l] = OF(ABS(AS(a[l])))); break;                         \
    }
    bool directed = in->rnd > PR_RN; /* .rz/.rm/.rp: the mode is set once for the warp */
    int saved = directed ? fegetround() : 0;
    if (directed)
        fesetround(fe_mode(in->rnd));
    if (in->type == PT_F32) {
        FLOAT_CASES(as_f, of_f, fmaf, fminf, fmaxf, fabsf)
    } else {
        FLOAT_CASES(as_d, of_d, fma, fmin, fmax, fabs)
    }
#undef FLOAT_CASES
    if (directed)
        fesetround(saved);
    return true;
}

/* One comparison over the warp, as CV converts the operands; false for a
   comparison the type has not. */
#define COMPARE_LANES(CV)                                                                        \
    switch (cmp) {                                                                               \
    case PC_EQ: EACH_LANE(exec, d[l] = CV(a[l]) == CV(b[l])); break;                             \
    case PC_NE: EACH_LANE(exec, d[l] = CV(a[l]) < CV(b[l]) || CV(a[l]) > CV(b[l])); break;       \
    case PC_LT: EACH_LANE(exec, d[l] = CV(a[l]) < CV(b[l])); break;                              \
    case PC_LE: EACH_LANE(exec, d[l] = CV(a[l]) <= CV(b[l])); break;                             \
    case PC_GT: EACH_LANE(exec, d[l] = CV(a[l]) > CV(b[l])); break;                              \
    case PC_GE: EACH_LANE(exec, d[l] = CV(a[l]) >= CV(b[l])); break;                             \
    case PC_EQU: EACH_LANE(exec, d[l] = !(CV(a[l]) < CV(b[l]) || CV(a[l]) > CV(b[l]))); break;   \
    case PC_NEU: EACH_LANE(exec, d[l] = !(CV(a[l]) == CV(b[l]))); break;                         \
    case PC_LTU: EACH_LANE(exec, d[l] = !(CV(a[l]) >= CV(b[l]))); break;                         \
    case PC_LEU: EACH_LANE(exec, d[l] = !(CV(a[l]) > CV(b[l]))); break;                          \
    case PC_GTU: EACH_LANE(exec, d[l] = !(CV(a[l]) <= CV(b[l]))); break;                         \
    case PC_GEU: EACH_LANE(exec, d[l] = !(CV(a[l]) < CV(b[l]))); break;                          \
    case PC_NUM: EACH_LANE(exec, d[l] = CV(a[l]) == CV(a[l]) && CV(b[l]) == CV(b[l])); break;    \
    case PC_NAN: EACH_LANE(exec, d[l] = !(CV(a[l]) == CV(a[l]) && CV(b[l]) == CV(b[l]))); break; \
    default: return false;                                                                       \
    }

#define CV_S16(v) ((int16_t)(v))
#define CV_U16(v) ((uint16_t)(v))
#define CV_S32(v) ((int32_t)(v))
#define CV_U32(v) ((uint32_t)(v))
#define CV_S64(v) ((int64_t)(v))
#define CV_U64(v) ((uint64_t)(v))

/* setp without a combining operation on 32- and 64-bit integers and f32/f64:
   a typed loop per comparison. */
WARP_LOOPS static bool setp_fast(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    int ty = in->type, cmp = in->sub;
    if (in->sub2 || in->o[PTX_MAX_OPS - 1].kind != PO_NONE || in->o[0].kind != PO_REG)
        return false;
    bool fl = ty == PT_F32 || ty == PT_F64;
    unsigned bits = tbits(ty);
    if (fl ? (in->mods & PM_FTZ) : tfloat(ty) || bits < 16 || bits > 64)
        return false;
    bool sgn = tsigned(ty);
    if (!fl && cmp >= PC_LO && cmp <= PC_HS) { /* the unsigned comparisons: lo, ls, hi, hs */
        sgn = false;
        cmp = cmp - PC_LO + PC_LT;
    } else if (!fl && cmp > PC_GE) {
        return false;
    }
    uint64_t ta[32], tb[32];
    uint64_t *d = &f->r[(size_t)in->o[0].reg * 32];
    const uint64_t *a = lanes_of(x, w, f, &in->o[1], exec, ta), *b = lanes_of(x, w, f, &in->o[2], exec, tb);
    if (ty == PT_F32) {
        COMPARE_LANES(as_f)
    } else if (ty == PT_F64) {
        COMPARE_LANES(as_d)
    } else if (bits == 16) {
        if (sgn) {
            COMPARE_LANES(CV_S16)
        } else {
            COMPARE_LANES(CV_U16)
        }
    } else if (bits == 32) {
        if (sgn) {
            COMPARE_LANES(CV_S32)
        } else {
            COMPARE_LANES(CV_U32)
        }
    } else if (sgn) {
        COMPARE_LANES(CV_S64)
    } else {
        COMPARE_LANES(CV_U64)
    }
    return true;
}

#undef COMPARE_LANES
#undef CV_S16
#undef CV_U16
#undef CV_S32
#undef CV_U32
#undef CV_S64
#undef CV_U64

static uint64_t sat_signed(__int128 v, unsigned bits)
{
    __int128 hi = ((__int128)1 << (bits - 1)) - 1, lo = -hi - 1;
    return (uint64_t)(v > hi ? hi : v < lo ? lo : v);
}

/* Integer add/sub/mul/mad/min/max/div/rem/abs/neg and the bit operations. */
static bool int_op(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    if (int_fast(x, w, f, in, exec))
        return true;
    int ty = in->type;
    unsigned bits = tbits(ty);
    bool sgn = tsigned(ty);
    bool wide = in->mods & PM_WIDE, hi = in->mods & PM_HI;
    unsigned ob = wide ? 2 * bits : bits;
    LANES(exec)
    {
        uint64_t a = val(x, w, f, &in->o[1], l), b = in->nops > 2 ? val(x, w, f, &in->o[2], l) : 0,
                 c = in->nops > 3 ? val(x, w, f, &in->o[3], l) : 0, r;
        __int128 sa = sx(a, bits), sb = sx(b, bits);
        unsigned __int128 ua = zx(a, bits), ub = zx(b, bits);
        bool cin = (w->carry >> l) & 1;
        switch (in->op) {
        case PI_ADD:
        case PI_ADDC: {
            unsigned __int128 s = ua + ub + (in->op == PI_ADDC && cin);
            if ((in->mods & PM_SAT) && sgn)
                r = sat_signed(sa + sb, bits);
            else
                r = (uint64_t)s;
            if (in->mods & PM_CC)
                w->carry = (w->carry & ~(1u << l)) | (uint32_t)((s >> bits) & 1) << l;
            break;
        }
        case PI_SUB:
        case PI_SUBC: {
            unsigned __int128 s = ua - ub - (in->op == PI_SUBC && cin);
            if ((in->mods & PM_SAT) && sgn)
                r = sat_signed(sa - sb, bits);
            else
                r = (uint64_t)s;
            if (in->mods & PM_CC) /* the borrow */
                w->carry = (w->carry & ~(1u << l)) | (uint32_t)((s >> bits) & 1) << l;
            break;
        }
        case PI_MUL:
        case PI_MAD:
        case PI_MADC: {
            unsigned __int128 p = sgn ? (unsigned __int128)(sa * sb) : ua * ub;
            if (wide)
                r = (uint64_t)p;
            else if (hi)
                r = (uint64_t)(p >> bits);
            else
                r = (uint64_t)p;
            if (in->op != PI_MUL) {
                unsigned __int128 s = (unsigned __int128)zx(r, ob) + zx(c, ob) + (in->op == PI_MADC && cin);
                if ((in->mods & PM_SAT) && sgn && hi)
                    r = sat_signed((__int128)sx(r, ob) + sx(c, ob), ob);
                else
                    r = (uint64_t)s;
                if (in->mods & PM_CC)
                    w->carry = (w->carry & ~(1u << l)) | (uint32_t)((s >> ob) & 1) << l;
            }
            break;
        }
        case PI_MUL24:
        case PI_MAD24: {
            __int128 p = sgn ? (__int128)sx(a, 24) * sx(b, 24) : (__int128)(zx(a, 24) * zx(b, 24));
            r = hi ? (uint64_t)(p >> 16) : (uint64_t)p;
            if (in->op == PI_MAD24)
                r += c;
            break;
        }
        case PI_DIV:
            if (ub == 0)
                r = ~0ull;
            else if (sgn)
                r = (uint64_t)(sa / sb);
            else
                r = (uint64_t)(ua / ub);
            break;
        case PI_REM:
            if (ub == 0)
                r = a;
            else if (sgn)
                r = (uint64_t)(sa % sb);
            else
                r = (uint64_t)(ua % ub);
            break;
        case PI_MIN: r = sgn ? (uint64_t)(sa < sb ? sa : sb) : (uint64_t)(ua < ub ? ua : ub); break;
        case PI_MAX: r = sgn ? (uint64_t)(sa > sb ? sa : sb) : (uint64_t)(ua > ub ? ua : ub); break;
        case PI_ABS: r = (uint64_t)(sa < 0 ? -sa : sa); break;
        case PI_NEG: r = (uint64_t)-sa; break;
        case PI_AND: r = a & b; break;
        case PI_OR: r = a | b; break;
        case PI_XOR: r = a ^ b; break;
        case PI_NOT: r = ty == PT_PRED ? !a : ~a; break;
        case PI_CNOT: r = zx(a, bits) == 0; break;
        case PI_SHL: r = zx(b, 32) >= bits ? 0 : a << zx(b, 32); break;
        case PI_SHR: {
            uint64_t n = zx(b, 32);
            if (sgn)
                r = (uint64_t)(sa >> (n >= bits ? bits - 1 : n));
            else
                r = n >= bits ? 0 : (uint64_t)(ua >> n);
            break;
        }
        case PI_POPC: r = (uint64_t)__builtin_popcountll(zx(a, bits)); break;
        case PI_CLZ: r = zx(a, bits) ? (uint64_t)__builtin_clzll(zx(a, bits)) - (64 - bits) : bits; break;
        case PI_BREV: {
            uint64_t v = zx(a, bits), o = 0;
            for (unsigned i = 0; i < bits; i++)
                o |= ((v >> i) & 1) << (bits - 1 - i);
            r = o;
            break;
        }
        case PI_BFIND: {
            uint64_t v = sgn && sa < 0 ? ~zx(a, bits) : zx(a, bits);
            v = zx(v, bits);
            if (!v)
                r = 0xffffffffu;
            else {
                unsigned pos = 63u - (unsigned)__builtin_clzll(v);
                r = in->sub ? bits - 1 - pos : pos;
            }
            break;
        }
        case PI_BFE: {
            unsigned pos = (unsigned)(b & 0xff), len = (unsigned)(c & 0xff);
            uint64_t v = zx(a, bits);
            uint64_t field = pos >= bits ? 0 : v >> pos;
            if (len < 64)
                field &= (1ull << len) - 1;
            unsigned top = pos + len - 1 < bits ? pos + len - 1 : bits - 1;
            bool sbit = sgn && len && ((len == 0) ? 0 : (sx(a, bits) >> top) & 1);
            if (sgn && len && len < 64 && sbit)
                field |= ~((1ull << len) - 1);
            r = len == 0 ? (sgn && sa < 0 && 0 ? ~0ull : 0) : field;
            break;
        }
        case PI_BFI: {
            uint64_t d = val(x, w, f, &in->o[4], l);
            unsigned pos = (unsigned)(c & 0xff), len = (unsigned)(d & 0xff);
            uint64_t mask = len >= 64 ? ~0ull : ((1ull << len) - 1);
            mask = pos >= bits ? 0 : mask << pos;
            r = (b & ~mask) | ((a << (pos & 63)) & mask);
            break;
        }
        default: unsupported(x, in); return false;
        }
        put(f, &in->o[0], l, ty == PT_PRED ? (r & 1) : zx(r, ob));
    }
    return true;
}

/* cvt d.type, a.type2 with its rounding and saturation. */
static uint64_t convert(const ptx_insn *in, uint64_t a, bool *bad)
{
    int dt = in->type, st = in->type2;
    unsigned db = tbits(dt), sb = tbits(st);
    if (!tfloat(dt) && !tfloat(st)) {
        if (in->mods & PM_SAT) {
            __int128 v = tsigned(st) ? (__int128)sx(a, sb) : (__int128)zx(a, sb);
            __int128 lo = tsigned(dt) ? -((__int128)1 << (db - 1)) : 0;
            __int128 hi = tsigned(dt) ? ((__int128)1 << (db - 1)) - 1 : (((__int128)1 << db) - 1);
            return zx((uint64_t)(v < lo ? lo : v > hi ? hi : v), db);
        }
        uint64_t v = tsigned(st) ? (uint64_t)sx(a, sb) : zx(a, sb);
        return tsigned(dt) && db < 64 ? zx(v, db) : zx(v, db);
    }
    if (tfloat(st) && !tfloat(dt)) { /* float to integer: round, then saturate */
        double v = fin(in, st, a);
        switch (in->rnd) {
        case PR_RNI:
        case PR_RN: v = nearbyint(v); break;
        case PR_RMI:
        case PR_RM: v = floor(v); break;
        case PR_RPI:
        case PR_RP: v = ceil(v); break;
        default: v = trunc(v); break;
        }
        if (isnan(v))
            return 0;
        if (tsigned(dt)) {
            double lo = -ldexp(1.0, (int)db - 1), hi = ldexp(1.0, (int)db - 1);
            int64_t r = v <= lo   ? (int64_t)(db == 64 ? INT64_MIN : (int64_t)lo)
                        : v >= hi ? (db == 64 ? INT64_MAX : (int64_t)hi - 1)
                                  : (int64_t)v;
            return zx((uint64_t)r, db);
        }
        double hi = ldexp(1.0, (int)db);
        uint64_t r = v <= 0 ? 0 : v >= hi ? (db == 64 ? UINT64_MAX : (uint64_t)hi - 1) : (uint64_t)v;
        return r;
    }
    bool directed = in->rnd != PR_NONE && in->rnd != PR_RN && in->rnd != PR_RNI;
    int saved = directed ? fegetround() : 0;
    uint64_t out;
    if (!tfloat(st)) { /* integer to float */
        if (directed)
            fesetround(fe_mode(in->rnd));
        double v;
        if (dt == PT_F32)
            v = tsigned(st) ? (double)(float)sx(a, sb) : (double)(float)zx(a, sb);
        else
            v = tsigned(st) ? (double)sx(a, sb) : (double)zx(a, sb);
        out = fout(in, dt, v);
    } else { /* float to float */
        double v = fin(in, st, a);
        switch (in->rnd) {
        case PR_RNI: v = nearbyint(v); break;
        case PR_RZI: v = trunc(v); break;
        case PR_RMI: v = floor(v); break;
        case PR_RPI: v = ceil(v); break;
        default:
            if (directed)
                fesetround(fe_mode(in->rnd));
            break;
        }
        if (dt == PT_F32 && st == PT_F64)
            v = (double)(float)v;
        out = fout(in, dt, v);
    }
    if (directed)
        fesetround(saved);
    (void)bad;
    return out;
}

/* The common conversions (integer widths, integer to and from f32, f32 to
   and from f64; no .sat or .ftz) as typed loops over the warp. */
WARP_LOOPS static bool cvt_fast(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    int dt = in->type, st = in->type2;
    if ((in->mods & (PM_SAT | PM_FTZ | PM_RELU)) || in->o[0].kind != PO_REG)
        return false;
    uint64_t ta[32];
    const uint64_t *a = lanes_of(x, w, f, &in->o[1], exec, ta);
    uint64_t *d = &f->r[(size_t)in->o[0].reg * 32];
    unsigned db = tbits(dt), sb = tbits(st);
    bool nearest = in->rnd == PR_NONE || in->rnd == PR_RN;
    if (!tfloat(dt) && !tfloat(st)) {
        unsigned sh = 64 - sb;
        uint64_t mask = db >= 64 ? ~0ull : (1ull << db) - 1;
        if (tsigned(st))
            EACH_LANE(exec, d[l] = (uint64_t)((int64_t)(a[l] << sh) >> sh) & mask);
        else
            EACH_LANE(exec, d[l] = ((a[l] << sh) >> sh) & mask);
        return true;
    }
    if (dt == PT_F32 && sb == 32 && !tfloat(st) && nearest) {
        if (tsigned(st))
            EACH_LANE(exec, d[l] = of_f((float)(int32_t)a[l]));
        else
            EACH_LANE(exec, d[l] = of_f((float)(uint32_t)a[l]));
        return true;
    }
    if (st == PT_F32 && db == 32 && !tfloat(dt) && in->rnd == PR_RZI) { /* truncate, saturate, NaN is 0 */
        if (tsigned(dt))
            EACH_LANE(exec, float v = as_f(a[l]); d[l] = (uint32_t)(v != v                ? 0
                                                                    : v <= -2147483648.0f ? INT32_MIN
                                                                    : v >= 2147483648.0f  ? INT32_MAX
                                                                                          : (int32_t)v));
        else
            EACH_LANE(exec, float v = as_f(a[l]); d[l] = v != v || v <= 0.0f  ? 0
                                                         : v >= 4294967296.0f ? UINT32_MAX
                                                                              : (uint32_t)v);
        return true;
    }
    if (dt == PT_F64 && st == PT_F32) {
        EACH_LANE(exec, d[l] = of_d((double)as_f(a[l])));
        return true;
    }
    if (dt == PT_F32 && st == PT_F64 && nearest) {
        EACH_LANE(exec, d[l] = of_f((float)as_d(a[l])));
        return true;
    }
    return false;
}

/* ---- loads, stores, atomics -------------------------------------------------------------------- */

static unsigned thread_of(const warp *w, unsigned l)
{
    return w->id * 32 + l;
}

/* The value a load of n bytes of type ty puts in a register. */
static inline uint64_t extend(uint64_t v, int ty, unsigned n)
{
    return tsigned(ty) ? (uint64_t)sx(v, n * 8) : v;
}

/* The host bytes each lane of exec reaches at operand ao, when the warp's
   whole span of addresses is aligned and lies in one allocation, the
   block's shared memory or the threads' local memory: one check for the
   warp. False leaves the access to the lane-by-lane path (mem), which
   also raises the faults. */
WARP_LOOPS static bool lane_hosts(run *x, const warp *w, const frame *f, const ptx_insn *in, const ptx_opnd *ao,
                                  uint32_t exec, unsigned bytes, bool store, unsigned char **hp)
{
    uint64_t at[32], lo = UINT64_MAX, hi = 0, any = 0;
    if (ao->kind != PO_ADDR)
        return false;
    if (ao->reg >= 0) {
        const uint64_t *r = &f->r[(size_t)ao->reg * 32];
        uint64_t imm = ao->imm;
        EACH_LANE(exec, at[l] = r[l] + imm; lo = at[l] < lo ? at[l] : lo; hi = at[l] > hi ? at[l] : hi; any |= at[l]);
    } else { /* the same address in every lane */
        uint64_t a = ao->imm + (ao->sym >= 0 ? sym_addr(x, f, ao->sym) : 0);
        EACH_LANE(exec, at[l] = a);
        lo = hi = any = a;
    }
    if ((any & (bytes - 1)) || hi + bytes < hi)
        return false;
    int sp = in->space;
    uint64_t off = 0;
    if (sp == PS_GENERIC) {
        if (hi < FC_WIN_SHARED) {
            sp = PS_GLOBAL;
        } else if (lo >= FC_WIN_SHARED && hi < FC_WIN_SHARED + FC_WIN_SIZE) {
            sp = PS_SHARED;
            off = FC_WIN_SHARED;
        } else if (lo >= FC_WIN_LOCAL && hi < FC_WIN_LOCAL + FC_WIN_SIZE) {
            sp = PS_LOCAL;
            off = FC_WIN_LOCAL;
        } else if (lo >= FC_WIN_PARAM && hi < FC_WIN_PARAM + FC_WIN_SIZE) {
            sp = PS_PARAM;
        } else {
            return false;
        }
    }
    if (sp == PS_PARAM) { /* the kernel's parameters (read-only), or a frame's .param slots in local memory */
        if (lo >= FC_WIN_PARAM) {
            if (store || hi - FC_WIN_PARAM + bytes > x->l->params_size)
                return false;
            unsigned char *params = (unsigned char *)x->l->params;
            EACH_LANE(exec, hp[l] = params + (at[l] - FC_WIN_PARAM));
            return true;
        }
        if (hi >= FC_WIN_PARAM)
            return false;
        sp = PS_LOCAL;
    }
    switch (sp) {
    case PS_CONST:
        if (store)
            return false;
        /* fall through */
    case PS_GLOBAL: {
        unsigned char *h = device_bytes(x, lo, hi - lo + bytes);
        if (!h)
            return false;
        EACH_LANE(exec, hp[l] = h + (at[l] - lo));
        if (store && x->logging)
            LANES(exec) log_write(x, at[l], bytes);
        return true;
    }
    case PS_SHARED:
        if (hi - off + bytes > x->shared_bytes)
            return false;
        EACH_LANE(exec, hp[l] = x->shared + (at[l] - off));
        return true;
    case PS_LOCAL: {
        if (hi - off + bytes > FC_LOCAL_BYTES)
            return false;
        unsigned char *mine = x->local + (size_t)w->id * 32 * FC_LOCAL_BYTES;
        EACH_LANE(exec, hp[l] = mine + (size_t)l * FC_LOCAL_BYTES + (at[l] - off));
        return true;
    }
    default: return false;
    }
}

/* Lanes of exec load (or store) register r's lanes from (to) hp[lane] + at. */
WARP_LOOPS static void lanes_move(uint64_t *r, unsigned char *const *hp, uint32_t exec, unsigned es, unsigned at,
                                  bool store, bool sgn)
{
#define MOVE_LANES(T, S)                                                                     \
    if (store)                                                                               \
        EACH_LANE(exec, T v = (T)r[l]; memcpy(hp[l] + at, &v, sizeof v));                    \
    else if (sgn)                                                                            \
        EACH_LANE(exec, S v; memcpy(&v, hp[l] + at, sizeof v); r[l] = (uint64_t)(int64_t)v); \
    else                                                                                     \
        EACH_LANE(exec, T v; memcpy(&v, hp[l] + at, sizeof v); r[l] = v);
    switch (es) {
    case 1: MOVE_LANES(uint8_t, int8_t) break;
    case 2: MOVE_LANES(uint16_t, int16_t) break;
    case 4: MOVE_LANES(uint32_t, int32_t) break;
    default: MOVE_LANES(uint64_t, int64_t) break;
    }
#undef MOVE_LANES
}

/* ld/st of whole warps through lane_hosts; false: the lane-by-lane path. */
static bool ld_st_fast(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec, bool store, unsigned es,
                       unsigned n)
{
    const ptx_opnd *ao = &in->o[store ? 0 : 1], *vo = &in->o[store ? 1 : 0];
    unsigned char *hp[32];
    if ((vo->kind != PO_REG && vo->kind != PO_VEC && !(store && vo->kind == PO_IMM)) ||
        !lane_hosts(x, w, f, in, ao, exec, es * n, store, hp))
        return false;
    bool sgn = tsigned(in->type);
    if (vo->kind == PO_VEC) {
        for (unsigned i = 0; i < n; i++)
            if (vo->regs[i] >= 0)
                lanes_move(&f->r[(size_t)vo->regs[i] * 32], hp, exec, es, i * es, store, sgn);
        return true;
    }
    uint64_t imm[32];
    uint64_t *r = vo->kind == PO_REG ? &f->r[(size_t)vo->reg * 32] : imm;
    if (vo->kind == PO_IMM)
        for (unsigned l = 0; l < 32; l++)
            imm[l] = vo->imm;
    lanes_move(r, hp, exec, es, 0, store, sgn);
    return true;
}

static void ld_st(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec, bool store)
{
    unsigned es = ptx_type_size(in->type), n = in->vec ? in->vec : 1;
    const ptx_opnd *ao = &in->o[store ? 0 : 1], *vo = &in->o[store ? 1 : 0];
    if (es == 0 || es > 8) {
        unsupported(x, in);
        return;
    }
    if (ld_st_fast(x, w, f, in, exec, store, es, n))
        return;
    if (n == 1 && vo->kind == PO_REG) { /* a scalar: one register per lane */
        uint64_t *r = &f->r[(size_t)vo->reg * 32];
        bool sgn = tsigned(in->type);
        LANES(exec)
        {
            unsigned char *p = mem(x, thread_of(w, l), in->space, addr_of(x, f, ao, l), es, store);
            if (!p)
                return;
            if (store)
                memcpy(p, &r[l], es);
            else
                r[l] = sgn ? (uint64_t)sx(load_n(p, es), es * 8) : load_n(p, es);
        }
        return;
    }
    LANES(exec)
    {
        unsigned char *p = mem(x, thread_of(w, l), in->space, addr_of(x, f, ao, l), es * n, store);
        if (!p)
            return;
        for (unsigned i = 0; i < n; i++) {
            const ptx_opnd *e = vo;
            ptx_opnd tmp;
            if (vo->kind == PO_VEC) {
                if (vo->regs[i] < 0)
                    continue;
                tmp = (ptx_opnd){.kind = PO_REG, .reg = vo->regs[i]};
                e = &tmp;
            }
            if (store) {
                uint64_t v = val(x, w, f, e, l);
                memcpy(p + i * es, &v, es);
            } else {
                put(f, e, l, extend(load_n(p + i * es, es), in->type, es));
            }
        }
    }
}

static uint64_t atomic_apply(run *x, const ptx_insn *in, uint64_t old, uint64_t b, uint64_t c)
{
    int ty = in->type;
    unsigned bits = tbits(ty);
    if (tfloat(ty)) {
        if (in->sub == PA_EXCH)
            return b;
        double o = fin(in, ty, old), v = fin(in, ty, b);
        switch (in->sub) {
        case PA_ADD: return fout(in, ty, ty == PT_F32 ? (double)((float)o + (float)v) : o + v);
        case PA_MIN: return fout(in, ty, fmin(o, v));
        case PA_MAX: return fout(in, ty, fmax(o, v));
        default: unsupported(x, in); return old;
        }
    }
    bool sgn = tsigned(ty);
    int64_t so = sx(old, bits), sb = sx(b, bits);
    uint64_t uo = zx(old, bits), ub = zx(b, bits);
    switch (in->sub) {
    case PA_ADD: return old + b;
    case PA_MIN: return sgn ? (uint64_t)(so < sb ? so : sb) : (uo < ub ? uo : ub);
    case PA_MAX: return sgn ? (uint64_t)(so > sb ? so : sb) : (uo > ub ? uo : ub);
    case PA_INC: return uo >= ub ? 0 : uo + 1;
    case PA_DEC: return uo == 0 || uo > ub ? ub : uo - 1;
    case PA_EXCH: return b;
    case PA_CAS: return uo == ub ? c : old;
    case PA_AND: return old & b;
    case PA_OR: return old | b;
    case PA_XOR: return old ^ b;
    default: unsupported(x, in); return old;
    }
}

/* atom d, [a], b[, c]; red [a], b. Lanes apply in lane order: one thread runs the launch. */
static void atomic_op(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    bool red = in->op == PI_RED;
    unsigned n = ptx_type_size(in->type);
    const ptx_opnd *ao = &in->o[red ? 0 : 1];
    if ((n != 4 && n != 8 && !(n == 2 && tfloat(in->type))) || in->vec > 1) {
        unsupported(x, in);
        return;
    }
    unsigned char *hp[32];
    if (lane_hosts(x, w, f, in, ao, exec, n, true, hp)) { /* the warp's addresses checked at once */
        uint64_t tb[32], tc[32];
        const uint64_t *b = lanes_of(x, w, f, &in->o[red ? 1 : 2], exec, tb),
                       *c = in->nops > 3 ? lanes_of(x, w, f, &in->o[3], exec, tc) : NULL;
        uint64_t *d = !red && in->o[0].kind == PO_REG ? &f->r[(size_t)in->o[0].reg * 32] : NULL;
        if (in->sub == PA_ADD && n == 4 && !tfloat(in->type)) { /* atomicAdd: histograms, counters */
            LANES(exec)
            {
                uint32_t old, sum;
                memcpy(&old, hp[l], 4);
                sum = old + (uint32_t)b[l];
                memcpy(hp[l], &sum, 4);
                if (d)
                    d[l] = old;
            }
            return;
        }
        LANES(exec)
        {
            uint64_t old = load_n(hp[l], n), v = atomic_apply(x, in, old, b[l], c ? c[l] : 0);
            if (x->fault)
                return;
            memcpy(hp[l], &v, n);
            if (d)
                d[l] = old;
        }
        return;
    }
    LANES(exec)
    {
        unsigned char *p = mem(x, thread_of(w, l), in->space, addr_of(x, f, ao, l), n, true);
        if (!p)
            return;
        uint64_t old = load_n(p, n), b = val(x, w, f, &in->o[red ? 1 : 2], l),
                 c = in->nops > 3 ? val(x, w, f, &in->o[3], l) : 0;
        uint64_t v = atomic_apply(x, in, old, b, c);
        if (x->fault)
            return;
        memcpy(p, &v, n);
        if (!red)
            put(f, &in->o[0], l, old);
    }
}

/* ---- warp-wide operations ----------------------------------------------------------------------- */

static void shfl(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    uint64_t ta[32], tb[32], tc[32], a[32];
    const uint64_t *av = lanes_of(x, w, f, &in->o[1], exec, ta), *bv = lanes_of(x, w, f, &in->o[2], exec, tb),
                   *cv = lanes_of(x, w, f, &in->o[3], exec, tc);
    EACH_LANE(exec, a[l] = av[l]); /* the sources, before the destination (maybe the same register) changes */
    LANES(exec)
    {
        uint32_t b = (uint32_t)bv[l] & 31, c = (uint32_t)cv[l];
        uint32_t seg = (c >> 8) & 31, maxl = (l & seg) | (c & 31 & ~seg), minl = l & seg;
        int j;
        bool ok;
        switch (in->sub) {
        case PSH_UP:
            j = (int)l - (int)b;
            ok = j >= (int)maxl;
            break;
        case PSH_DOWN:
            j = (int)l + (int)b;
            ok = j <= (int)maxl;
            break;
        case PSH_BFLY:
            j = (int)(l ^ b);
            ok = j <= (int)maxl;
            break;
        default:
            j = (int)(minl | (b & ~seg));
            ok = j <= (int)maxl;
            break;
        }
        if (!ok || j < 0 || j > 31 || !((exec >> j) & 1))
            j = (int)l;
        put(f, &in->o[0], l, zx(a[j], 32));
        if (in->o[PTX_MAX_OPS - 1].kind == PO_REG)
            put(f, &in->o[PTX_MAX_OPS - 1], l, ok);
    }
}

/* vote.sync d, p, membermask: over the lanes of the membermask that run it. */
static void vote(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    uint32_t votes = 0;
    LANES(exec) if (pval(x, w, f, &in->o[1], l)) votes |= 1u << l;
    LANES(exec)
    {
        uint32_t group = in->nops > 2 ? (uint32_t)val(x, w, f, &in->o[2], l) & exec : exec, ballot = votes & group;
        uint64_t r;
        switch (in->sub) {
        case PV_ALL: r = ballot == group; break;
        case PV_ANY: r = ballot != 0; break;
        case PV_UNI: r = ballot == 0 || ballot == group; break;
        default: r = ballot; break;
        }
        put(f, &in->o[0], l, r);
    }
}

static void match(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    uint64_t a[32] = {0};
    unsigned bits = tbits(in->type);
    LANES(exec) a[l] = zx(val(x, w, f, &in->o[1], l), bits);
    bool all = true;
    LANES(exec) all = all && a[l] == a[__builtin_ctz(exec)];
    LANES(exec)
    {
        uint32_t same = 0;
        for (uint32_t m = exec; m; m &= m - 1)
            if (a[__builtin_ctz(m)] == a[l])
                same |= 1u << __builtin_ctz(m);
        put(f, &in->o[0], l, in->sub == 1 ? same : all ? exec : 0);
        if (in->o[PTX_MAX_OPS - 1].kind == PO_REG)
            put(f, &in->o[PTX_MAX_OPS - 1], l, all);
    }
}

/* redux.sync d, a, membermask: each lane reduces over the lanes of its
   membermask that run it (labeled partitions pass a subset of the warp). */
static void redux(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    bool sgn = tsigned(in->type);
    uint64_t v[32] = {0};
    LANES(exec) v[l] = zx(val(x, w, f, &in->o[1], l), 32);
    LANES(exec)
    {
        uint32_t group = (uint32_t)val(x, w, f, &in->o[2], l) & exec;
        uint64_t acc = v[l];
        for (uint32_t m = group & ~(1u << l); m; m &= m - 1) {
            uint64_t e = v[__builtin_ctz(m)];
            switch (in->sub) {
            case PA_ADD: acc += e; break;
            case PA_AND: acc &= e; break;
            case PA_OR: acc |= e; break;
            case PA_XOR: acc ^= e; break;
            case PA_MIN: acc = sgn ? ((int32_t)e < (int32_t)acc ? e : acc) : (e < acc ? e : acc); break;
            case PA_MAX: acc = sgn ? ((int32_t)e > (int32_t)acc ? e : acc) : (e > acc ? e : acc); break;
            default: unsupported(x, in); return;
            }
        }
        put(f, &in->o[0], l, zx(acc, 32));
    }
}

/* ---- device printf and assert ---------------------------------------------------------------- */

/* The NUL-terminated string at generic address a (at most cap-1 bytes). */
static bool read_string(run *x, unsigned thread, uint64_t a, char *out, size_t cap)
{
    size_t i = 0;
    for (; i + 1 < cap; i++) {
        unsigned char *p = mem(x, thread, PS_GENERIC, a + i, 1, false);
        if (!p)
            return false;
        if (!(out[i] = (char)*p))
            return true;
    }
    out[i] = '\0';
    return true;
}

/* vprintf(format, args): the arguments packed each at its own alignment. */
static void device_printf(run *x, unsigned thread, uint64_t fmt_a, uint64_t args_a, FILE *out)
{
    char fmt[4096], line[8192];
    if (!read_string(x, thread, fmt_a, fmt, sizeof fmt))
        return;
    size_t used = 0, off = 0;
    for (const char *c = fmt; *c && used < sizeof line - 1;) {
        if (*c != '%') {
            line[used++] = *c++;
            continue;
        }
        const char *start = c++;
        while (*c && strchr("-+ #0", *c))
            c++;
        while (*c && (isdigit((unsigned char)*c) || *c == '.' || *c == '*'))
            c++;
        int longs = 0;
        while (*c && strchr("hlLqjzt", *c)) {
            longs += *c == 'l' || *c == 'L' || *c == 'q' || *c == 'j' || *c == 'z' || *c == 't';
            c++;
        }
        char conv = *c ? *c++ : '\0';
        char spec[64];
        size_t sl = (size_t)(c - start) < sizeof spec - 4 ? (size_t)(c - start) : sizeof spec - 4;
        memcpy(spec, start, sl);
        spec[sl] = '\0';
        char piece[4200];
        unsigned size = 0;
        if (conv == '%') {
            snprintf(piece, sizeof piece, "%%");
        } else if (strchr("diouxXc", conv) && conv) {
            size = longs ? 8 : 4;
        } else if (strchr("eEfFgGaA", conv) && conv) {
            size = 8;
        } else if (conv == 's' || conv == 'p') {
            size = 8;
        } else {
            snprintf(piece, sizeof piece, "%s", spec);
        }
        if (size) {
            off = (off + size - 1) / size * size;
            unsigned char *p = mem(x, thread, PS_GENERIC, args_a + off, size, false);
            off += size;
            if (!p)
                return;
            uint64_t v = load_n(p, size);
            /* rebuild the spec with a host length modifier of our own */
            char hs[64];
            size_t k = 0;
            for (size_t i = 0; i < sl && k < sizeof hs - 4; i++)
                if (!strchr("hlLqjzt", spec[i]))
                    hs[k++] = spec[i];
            hs[k] = '\0';
            if (strchr("diouxX", conv)) {
                hs[k - 1] = 'l';
                hs[k] = 'l';
                hs[k + 1] = conv;
                hs[k + 2] = '\0';
                if (conv == 'd' || conv == 'i')
                    snprintf(piece, sizeof piece, hs, size == 8 ? (long long)v : (long long)(int32_t)v);
                else
                    snprintf(piece, sizeof piece, hs,
                             size == 8 ? (unsigned long long)v : (unsigned long long)(uint32_t)v);
            } else if (conv == 'c') {
                snprintf(piece, sizeof piece, hs, (int)v);
            } else if (conv == 's') {
                char s[4096];
                if (!v)
                    snprintf(s, sizeof s, "(null)");
                else if (!read_string(x, thread, v, s, sizeof s))
                    return;
                snprintf(piece, sizeof piece, hs, s);
            } else if (conv == 'p') {
                snprintf(piece, sizeof piece, hs, (void *)(uintptr_t)v);
            } else {
                snprintf(piece, sizeof piece, hs, as_d(v));
            }
        }
        for (const char *q = piece; *q && used < sizeof line - 1;)
            line[used++] = *q++;
    }
    fwrite(line, 1, used, out);
}

static void device_assert(run *x, warp *w, unsigned l, const uint64_t *args)
{
    char msg[1024] = "?", file[1024] = "?", func[1024] = "?";
    unsigned t = thread_of(w, l);
    read_string(x, t, args[0], msg, sizeof msg);
    read_string(x, t, args[1], file, sizeof file);
    read_string(x, t, args[3], func, sizeof func);
    fflush(stdout);
    fprintf(stderr, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n", file,
            (unsigned)args[2], func, x->ctaid[0], x->ctaid[1], x->ctaid[2], w->tid[0][l], w->tid[1][l], w->tid[2][l],
            msg);
    x->fault = FC_PTX_ASSERT;
}

/* ---- calls ------------------------------------------------------------------------------------- */

/* The argument symbols of a call (the PO_VEC chain of operands 2..). */
static unsigned call_args(const ptx_insn *in, int32_t *out)
{
    unsigned n = 0;
    for (unsigned i = 2; i < in->nops; i++)
        for (unsigned k = 0; k < in->o[i].vec; k++)
            out[n++] = in->o[i].regs[k];
    return n;
}

static bool builtin_call(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec, const ptx_func *g)
{
    int32_t args[4 * PTX_MAX_OPS];
    unsigned n = call_args(in, args);
    static const unsigned want[] =
        {[PB_VPRINTF] = 2, [PB_ASSERTFAIL] = 5, [PB_MALLOC] = 1, [PB_FREE] = 1, [PB_SETCOND] = 2};
    if (n < want[g->builtin]) {
        launch_error(x, in, "call of a built-in function with too few arguments");
        return false;
    }
    LANES(exec)
    {
        unsigned t = thread_of(w, l);
        uint64_t v[5] = {0};
        for (unsigned i = 0; i < want[g->builtin]; i++) {
            const ptx_sym *s = &f->fn->sym[args[i]];
            unsigned size = (g->builtin == PB_ASSERTFAIL && i == 2) || (g->builtin == PB_SETCOND && i == 1) ? 4 : 8;
            unsigned char *p =
                mem(x, t, s->space == PS_LOCAL ? PS_LOCAL : PS_PARAM, sym_addr(x, f, args[i]), size, false);
            if (!p)
                return false;
            v[i] = load_n(p, size);
        }
        uint64_t ret = 0;
        switch (g->builtin) {
        case PB_VPRINTF: device_printf(x, t, v[0], v[1], stdout); break;
        case PB_ASSERTFAIL: device_assert(x, w, l, v); return false;
        case PB_MALLOC: ret = heap_alloc(v[0]); break;
        case PB_SETCOND: {
            unsigned char *cell = mem(x, t, PS_GLOBAL, v[0], 4, true);
            uint32_t value = (uint32_t)v[1];
            if (cell)
                memcpy(cell, &value, sizeof value);
            break;
        }
        default: heap_free(v[0]); break;
        }
        if (x->fault)
            return false;
        if (in->o[0].kind == PO_SYM) {
            unsigned char *p = mem(x, t, PS_PARAM, sym_addr(x, f, in->o[0].sym), g->builtin == PB_MALLOC ? 8 : 4, true);
            if (!p)
                return false;
            memcpy(p, &ret, g->builtin == PB_MALLOC ? 8 : 4);
        }
    }
    return true;
}

/* tex: each lane's fetch (ptx_tex.c) into the destination vector. */
static void tex(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    LANES(exec)
    {
        uint32_t c[3] = {0, 0, 0}, out[4];
        for (unsigned k = 0; k < in->sub; k++)
            c[k] = (uint32_t)f->r[(size_t)in->o[2].regs[k] * 32 + l];
        x->fault = fc_ptx_tex_fetch(x->l, val(x, w, f, &in->o[1], l), in->sub, c, in->type2 == PT_S32,
                                    in->type == PT_F32, out);
        if (x->fault)
            return;
        for (unsigned k = 0; k < 4; k++)
            if (in->o[0].regs[k] >= 0)
                f->r[(size_t)in->o[0].regs[k] * 32 + l] = out[k];
    }
}

/* Copies n bytes between two frame addresses in each lane's local memory. */
static bool frame_copy(run *x, warp *w, uint32_t lanes, uint64_t to, uint64_t from, uint64_t n)
{
    if (n == 0)
        return true;
    LANES(lanes)
    {
        unsigned char *d = mem(x, thread_of(w, l), PS_LOCAL, to, 1, true),
                      *s = mem(x, thread_of(w, l), PS_LOCAL, from, 1, false);
        if (!d || !s || to + n > FC_LOCAL_BYTES || from + n > FC_LOCAL_BYTES) {
            x->fault = FAKECUDA_KERNEL_ILLEGAL_ADDRESS;
            return false;
        }
        memmove(d, s, n);
    }
    return true;
}

/* The function a call names, or through a register (ptx_call.c) the one
   its lanes' address names; NULL with the launch failed. */
static const ptx_func *callee(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    if (in->o[1].kind == PO_FUNC)
        return &x->m->func[in->o[1].imm];
    uint64_t a = val(x, w, f, &in->o[1], (unsigned)__builtin_ctz(exec));
    LANES(exec)
    if (val(x, w, f, &in->o[1], l) != a) {
        launch_error(x, in, "indirect call whose lanes call different functions");
        return NULL;
    }
    int32_t i = ptx_func_at(x->m, a);
    if (i < 0) {
        launch_error(x, in, "indirect call of an address that is no .func");
        return NULL;
    }
    return &x->m->func[i];
}

static bool push_frame(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    const ptx_func *g = callee(x, w, f, in, exec);
    if (!g)
        return false;
    if (g->builtin)
        return builtin_call(x, w, f, in, exec, g);
    if (!g->defined || g->error) {
        char what[512];
        snprintf(what, sizeof what, "call of %s, which %s", g->name, g->error ? g->error : "has no body");
        launch_error(x, in, what);
        return false;
    }
    if (w->depth == FC_MAX_DEPTH) {
        launch_error(x, in, "call stack too deep");
        return false;
    }
    uint64_t base = (f->local_base + f->fn->frame_bytes + 15) & ~(uint64_t)15;
    if (base + g->frame_bytes > FC_LOCAL_BYTES) {
        launch_error(x, in, "local memory (the call stack) exhausted");
        return false;
    }
    int32_t args[4 * PTX_MAX_OPS];
    unsigned n = call_args(in, args);
    if (n != g->nparams) {
        launch_error(x, in, "call with a wrong argument count");
        return false;
    }
    uint64_t *r = calloc((size_t)g->nregs * 32 + 1, sizeof *r);
    if (!r) {
        launch_error(x, in, "out of memory");
        return false;
    }
    for (unsigned i = 0; i < n; i++)
        if (!frame_copy(x, w, exec, base + g->param[i].offset, sym_addr(x, f, args[i]), g->param[i].size)) {
            free(r);
            return false;
        }
    frame *c = &w->stack[w->depth++];
    *c = (frame){.fn = g,
                 .r = r,
                 .live = exec,
                 .other_min = UINT32_MAX,
                 .cur_mask = exec,
                 .cur_pc = 0,
                 .conv = true,
                 .local_base = base,
                 .ret_sym = in->o[0].kind == PO_SYM ? in->o[0].sym : -1};
    return true;
}

/* The frame on top has no live lane left: return to the caller. */
static void pop_frame(run *x, warp *w)
{
    frame *c = &w->stack[--w->depth], *f = &w->stack[w->depth - 1];
    if (c->ret_sym >= 0 && c->fn->nret)
        frame_copy(x, w, c->returned, sym_addr(x, f, c->ret_sym), c->local_base + c->fn->ret[0].offset,
                   c->fn->ret[0].size);
    free(c->r);
    f->conv = false;
}

/* ---- one instruction ------------------------------------------------------------------------------ */

static void mov(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    unsigned bits = tbits(in->type);
    const ptx_opnd *d = &in->o[0], *a = &in->o[1];
    if (a->kind == PO_VEC || d->kind == PO_VEC) { /* packing and unpacking */
        const ptx_opnd *v = a->kind == PO_VEC ? a : d;
        unsigned eb = bits / v->vec;
        uint64_t emask = eb >= 64 ? ~0ull : (1ull << eb) - 1, tmp[32], whole[32] = {0};
        if (a->kind == PO_VEC) { /* element by element, each over the warp */
            for (unsigned i = 0; i < v->vec; i++)
                if (v->regs[i] >= 0) { /* a sink "_" and an immediate 0 read as 0 */
                    const uint64_t *e = &f->r[(size_t)v->regs[i] * 32];
                    unsigned at = i * eb;
                    EACH_LANE(exec, whole[l] |= (e[l] & emask) << at);
                }
            if (d->kind == PO_REG) {
                uint64_t *t = &f->r[(size_t)d->reg * 32];
                EACH_LANE(exec, t[l] = whole[l]);
            }
            return;
        }
        const uint64_t *src = lanes_of(x, w, f, a, exec, tmp);
        EACH_LANE(exec, whole[l] = src[l]); /* before any element is written */
        for (unsigned i = 0; i < v->vec; i++)
            if (v->regs[i] >= 0) {
                uint64_t *e = &f->r[(size_t)v->regs[i] * 32];
                unsigned at = i * eb;
                EACH_LANE(exec, e[l] = (whole[l] >> at) & emask);
            }
        return;
    }
    if (d->kind == PO_REG && in->type != PT_PRED) {
        uint64_t tmp[32];
        const uint64_t *s = lanes_of(x, w, f, a, exec, tmp);
        uint64_t *t = &f->r[(size_t)d->reg * 32];
        uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
        EACH_LANE(exec, t[l] = s[l] & mask);
        return;
    }
    LANES(exec) put(f, d, l, in->type == PT_PRED ? pval(x, w, f, a, l) : zx(val(x, w, f, a, l), bits));
}

static void cvta(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    uint64_t win = in->space == PS_SHARED  ? FC_WIN_SHARED
                   : in->space == PS_LOCAL ? FC_WIN_LOCAL
                                           : 0; /* global and const: generic is the address; param: windowed */
    LANES(exec)
    {
        uint64_t a = val(x, w, f, &in->o[1], l);
        if (in->space == PS_PARAM)
            put(f, &in->o[0], l, a);
        else
            put(f, &in->o[0], l, zx((in->mods & PM_TO) ? a - win : a + win, tbits(in->type)));
    }
}

static uint64_t prmt(uint32_t a, uint32_t b, uint32_t c, int mode)
{
    uint64_t bytes = (uint64_t)b << 32 | a, r = 0;
    if (mode) { /* the special modes */
        static const uint8_t sel[6][4][4] = {
            {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}}, /* f4e */
            {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}}, /* b4e */
            {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}}, /* rc8 */
            {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}}, /* ecl */
            {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}}, /* ecr */
            {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}}, /* rc16 */
        };
        for (unsigned i = 0; i < 4; i++)
            r |= ((bytes >> (8 * sel[mode - 1][c & 3][i])) & 0xff) << (8 * i);
        return r;
    }
    for (unsigned i = 0; i < 4; i++) {
        unsigned s = (c >> (4 * i)) & 0xf;
        uint64_t byte = (bytes >> (8 * (s & 7))) & 0xff;
        if (s & 8)
            byte = (byte & 0x80) ? 0xff : 0;
        r |= byte << (8 * i);
    }
    return r;
}

static bool testp(int sub, double v)
{
    switch (sub) {
    case 1: return isfinite(v);
    case 2: return isinf(v);
    case 3: return !isnan(v);
    case 4: return isnan(v);
    case 5: return isnormal(v);
    default: return fpclassify(v) == FP_SUBNORMAL;
    }
}

/* cp.async [dst], [src], cp-size[, src-size]: done at once (the launch runs
   in program order, so a copy is complete before any wait for it); bytes
   past src-size are zeros. */
static void cp_async(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    LANES(exec)
    {
        unsigned size = (unsigned)val(x, w, f, &in->o[2], l);
        unsigned from = in->nops > 3 && in->o[3].kind != PO_SINK ? (unsigned)val(x, w, f, &in->o[3], l) : size;
        if ((size != 4 && size != 8 && size != 16) || from > size) {
            launch_error(x, in, "cp.async with a size other than 4, 8 or 16");
            return;
        }
        unsigned char *d = mem(x, thread_of(w, l), PS_SHARED, addr_of(x, f, &in->o[0], l), size, true);
        const unsigned char *s =
            from ? mem(x, thread_of(w, l), PS_GLOBAL, addr_of(x, f, &in->o[1], l), from, false) : d;
        if (!d || !s)
            return;
        memmove(d, s, from);
        memset(d + from, 0, size - from);
    }
}

/* A polling point (nanosleep, a failed mbarrier wait, a strong load in a
   cooperative grid): the warp lets its block's other warps run, and in a
   cooperative grid the block lets the other blocks run. */
static void poll(run *x, bool grid)
{
    x->yield = true;
    if (grid && x->grid) {
        ptx_grid_yield(x->grid);
        if (!x->fault)
            x->fault = ptx_grid_fault(x->grid);
    }
}

/* mbarrier.* and cp.async.mbarrier.arrive: each lane's operation on its
   object in lane order (ptx_sync.c computes them). */
static void mbarrier(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    int op = in->op == PI_CP ? (in->sub == 5 ? PMB_CP_ARRIVE : PMB_CP_ARRIVE_NOINC) : in->sub;
    int at = ptx_mbarrier_addr_operand(op), arg_at = at < 0 ? 1 : at + 1;
    bool wait = op == PMB_TEST_WAIT || op == PMB_TRY_WAIT, incomplete = false;
    LANES(exec)
    {
        uint64_t obj = 0, out = 0;
        unsigned char *p = NULL;
        if (at >= 0) {
            if (!(p = mem(x, thread_of(w, l), in->space, addr_of(x, f, &in->o[at], l), 8, !wait)))
                return;
            memcpy(&obj, p, 8);
        }
        uint64_t arg = arg_at < in->nops ? val(x, w, f, &in->o[arg_at], l) : 1;
        const char *err = ptx_mbarrier_apply(op, in->sub2, &obj, arg, &out);
        if (err) {
            launch_error(x, in, err);
            return;
        }
        if (p && !wait)
            memcpy(p, &obj, 8);
        if (at != 0)
            put(f, &in->o[0], l, out);
        incomplete |= wait && !out;
    }
    if (incomplete)
        poll(x, true);
}

/* Every instruction but the control flow (warp_run's). */
WARP_LOOPS static void ptx_step(run *x, warp *w, frame *f, const ptx_insn *in, uint32_t exec)
{
    int ty = in->type;
    switch (in->op) {
    case PI_MOV: mov(x, w, f, in, exec); return;
    case PI_LD:
    case PI_LDU:
        ld_st(x, w, f, in, exec, false);
        if ((in->mods & PM_STRONG) && x->grid && in->space != PS_SHARED)
            poll(x, true);
        return;
    case PI_ST: ld_st(x, w, f, in, exec, true); return;
    case PI_CVTA: cvta(x, w, f, in, exec); return;
    case PI_TEX: tex(x, w, f, in, exec); return;
    case PI_CVT: {
        if (cvt_fast(x, w, f, in, exec))
            return;
        bool bad = false;
        LANES(exec) put(f, &in->o[0], l, convert(in, val(x, w, f, &in->o[1], l), &bad));
        return;
    }
    case PI_ADD:
    case PI_SUB:
    case PI_MUL:
    case PI_MAD:
    case PI_MIN:
    case PI_MAX:
    case PI_ABS:
    case PI_NEG:
    case PI_DIV:
        if (tfloat(ty))
            float_op(x, w, f, in, exec);
        else
            int_op(x, w, f, in, exec);
        return;
    case PI_FMA:
    case PI_RCP:
    case PI_SQRT:
    case PI_RSQRT:
    case PI_SIN:
    case PI_COS:
    case PI_LG2:
    case PI_EX2:
    case PI_TANH:
    case PI_COPYSIGN:
        if (tfloat(ty))
            float_op(x, w, f, in, exec);
        else
            unsupported(x, in);
        return;
    case PI_ADDC:
    case PI_SUBC:
    case PI_MADC:
    case PI_MUL24:
    case PI_MAD24:
    case PI_REM:
    case PI_AND:
    case PI_OR:
    case PI_XOR:
    case PI_NOT:
    case PI_CNOT:
    case PI_SHL:
    case PI_SHR:
    case PI_POPC:
    case PI_CLZ:
    case PI_BREV:
    case PI_BFIND:
    case PI_BFE:
    case PI_BFI: int_op(x, w, f, in, exec); return;
    case PI_SHF:
        LANES(exec)
        {
            uint32_t a = (uint32_t)val(x, w, f, &in->o[1], l), b = (uint32_t)val(x, w, f, &in->o[2], l),
                     c = (uint32_t)val(x, w, f, &in->o[3], l);
            unsigned n = (in->mods & PM_CLAMP) ? (c > 32 ? 32 : c) : (c & 31);
            uint64_t v = (uint64_t)b << 32 | a;
            put(f, &in->o[0], l, (in->mods & PM_SHIFTR) ? (uint32_t)(v >> n) : (uint32_t)((v << n) >> 32));
        }
        return;
    case PI_PRMT:
        LANES(exec)
        put(f, &in->o[0], l,
            prmt((uint32_t)val(x, w, f, &in->o[1], l), (uint32_t)val(x, w, f, &in->o[2], l),
                 (uint32_t)val(x, w, f, &in->o[3], l), in->sub));
        return;
    case PI_LOP3:
        LANES(exec)
        {
            uint32_t a = (uint32_t)val(x, w, f, &in->o[1], l), b = (uint32_t)val(x, w, f, &in->o[2], l),
                     c = (uint32_t)val(x, w, f, &in->o[3], l), lut = (uint32_t)val(x, w, f, &in->o[4], l), r = 0;
            for (unsigned i = 0; i < 32; i++) {
                unsigned k = ((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1);
                r |= ((lut >> k) & 1) << i;
            }
            put(f, &in->o[0], l, r);
        }
        return;
    case PI_DP4A:
        LANES(exec)
        {
            uint32_t a = (uint32_t)val(x, w, f, &in->o[1], l), b = (uint32_t)val(x, w, f, &in->o[2], l);
            int64_t acc = (int32_t)val(x, w, f, &in->o[3], l);
            bool sa = tsigned(in->type), sb = tsigned(in->type2);
            for (unsigned i = 0; i < 4; i++) {
                int64_t ea = sa ? (int8_t)(a >> (8 * i)) : (uint8_t)(a >> (8 * i));
                int64_t eb = sb ? (int8_t)(b >> (8 * i)) : (uint8_t)(b >> (8 * i));
                acc += ea * eb;
            }
            put(f, &in->o[0], l, zx((uint64_t)acc, 32));
        }
        return;
    case PI_SELP:
        if (in->o[0].kind == PO_REG && in->o[3].kind == PO_REG) {
            uint64_t ta[32], tb[32], mask = tbits(ty) >= 64 ? ~0ull : (1ull << tbits(ty)) - 1;
            const uint64_t *a = lanes_of(x, w, f, &in->o[1], exec, ta), *b = lanes_of(x, w, f, &in->o[2], exec, tb),
                           *p = &f->r[(size_t)in->o[3].reg * 32];
            uint64_t *d = &f->r[(size_t)in->o[0].reg * 32];
            bool neg = in->o[3].neg;
            EACH_LANE(exec, d[l] = ((p[l] != 0) != neg ? a[l] : b[l]) & mask);
            return;
        }
        LANES(exec)
        put(f, &in->o[0], l,
            zx(pval(x, w, f, &in->o[3], l) ? val(x, w, f, &in->o[1], l) : val(x, w, f, &in->o[2], l), tbits(ty)));
        return;
    case PI_SLCT:
        LANES(exec)
        {
            uint64_t c = val(x, w, f, &in->o[3], l);
            bool ge = in->type2 == PT_F32 ? as_f(c) >= 0.0f : sx(c, 32) >= 0;
            put(f, &in->o[0], l, zx(ge ? val(x, w, f, &in->o[1], l) : val(x, w, f, &in->o[2], l), tbits(ty)));
        }
        return;
    case PI_SETP:
    case PI_SET: {
        int ct = in->op == PI_SETP ? ty : in->type2;
        if (in->op == PI_SETP && setp_fast(x, w, f, in, exec))
            return;
        if (ct == PT_F16X2 || ct == PT_BF16X2) {
            unsupported(x, in);
            return;
        }
        LANES(exec)
        {
            bool t = compare(in, ct, val(x, w, f, &in->o[1], l), val(x, w, f, &in->o[2], l));
            bool c = in->sub2 ? pval(x, w, f, &in->o[3], l) : false;
            bool r = in->sub2 == 1 ? (t && c) : in->sub2 == 2 ? (t || c) : in->sub2 == 3 ? (t != c) : t;
            if (in->op == PI_SETP) {
                put(f, &in->o[0], l, r);
                if (in->o[PTX_MAX_OPS - 1].kind == PO_REG) {
                    bool nt = !t;
                    bool q = in->sub2 == 1 ? (nt && c) : in->sub2 == 2 ? (nt || c) : in->sub2 == 3 ? (nt != c) : nt;
                    put(f, &in->o[PTX_MAX_OPS - 1], l, q);
                }
            } else {
                put(f, &in->o[0], l, ty == PT_F32 ? (r ? of_f(1.0f) : 0) : r ? zx(~0ull, tbits(ty)) : 0);
            }
        }
        return;
    }
    case PI_TESTP: LANES(exec) put(f, &in->o[0], l, testp(in->sub, fin(in, ty, val(x, w, f, &in->o[1], l)))); return;
    case PI_ATOM:
    case PI_RED: atomic_op(x, w, f, in, exec); return;
    case PI_SHFL: shfl(x, w, f, in, exec); return;
    case PI_VOTE: vote(x, w, f, in, exec); return;
    case PI_MATCH: match(x, w, f, in, exec); return;
    case PI_REDUX: redux(x, w, f, in, exec); return;
    case PI_ACTIVEMASK: LANES(exec) put(f, &in->o[0], l, exec); return;
    case PI_NANOSLEEP: poll(x, true); return;
    case PI_MBARRIER: mbarrier(x, w, f, in, exec); return;
    case PI_MEMBAR:
    case PI_FENCE:
    case PI_PREFETCH:
    case PI_PREFETCHU: return;
    case PI_ISSPACEP:
        LANES(exec)
        {
            uint64_t a = val(x, w, f, &in->o[1], l);
            bool sh = a >= FC_WIN_SHARED && a < FC_WIN_SHARED + FC_WIN_SIZE,
                 lo = a >= FC_WIN_LOCAL && a < FC_WIN_LOCAL + FC_WIN_SIZE;
            bool r = in->space == PS_SHARED ? sh : in->space == PS_LOCAL ? lo : (!sh && !lo);
            put(f, &in->o[0], l, r);
        }
        return;
    case PI_CP:
        if (in->sub == 1)
            cp_async(x, w, f, in, exec);
        else if (in->sub >= 5)
            mbarrier(x, w, f, in, exec);
        else if (in->sub < 2) /* other copies (bulk, tensor) */
            unsupported(x, in);
        return; /* commit and wait: every copy is already complete */
    case PI_TRAP:
    case PI_BRKPT:
        fprintf(stderr, "fakecuda: PTX kernel %s: line %u: %s\n", x->kernel->name, in->line,
                in->op == PI_TRAP ? "trap" : "brkpt");
        x->fault = FC_PTX_ILLEGAL_INSTRUCTION;
        return;
    default: unsupported(x, in); return;
    }
}

/* ---- the warp's control flow ---------------------------------------------------------------- */

/* Picks the lanes that run next: the runnable ones at the lowest PC. Plain
   passes over the 32 lanes, without a branch per lane: divergent code
   reselects at every branch and every meeting point. */
WARP_LOOPS static void reselect(frame *f, uint32_t runnable)
{
    uint32_t cur = f->cur_mask, cur_pc = f->cur_pc, pcs[32], best = UINT32_MAX, second = UINT32_MAX, mask = 0;
    for (unsigned l = 0; l < 32; l++) {
        f->pc[l] = (cur >> l) & 1 ? cur_pc : f->pc[l];
        pcs[l] = (runnable >> l) & 1 ? f->pc[l] : UINT32_MAX;
        best = pcs[l] < best ? pcs[l] : best;
    }
    for (unsigned l = 0; l < 32; l++) {
        mask |= (uint32_t)(pcs[l] == best) << l;
        uint32_t other = pcs[l] == best ? UINT32_MAX : pcs[l];
        second = other < second ? other : second;
    }
    f->cur_pc = best;
    f->cur_mask = mask;
    f->other_min = second;
    f->conv = true;
}

/* Lanes leave for good (exit, or ret from the kernel). */
static void lanes_exit(warp *w, uint32_t lanes)
{
    for (unsigned d = 0; d < w->depth; d++) {
        w->stack[d].live &= ~lanes;
        w->stack[d].cur_mask &= ~lanes;
        w->stack[d].conv = false;
    }
}

/* The lanes of act whose guard predicate holds. */
static inline uint32_t guard_lanes(const frame *f, const ptx_insn *in, uint32_t act)
{
    const uint64_t *p = &f->r[(size_t)in->pred * 32];
    uint32_t holds = 0;
    for (unsigned l = 0; l < 32; l++)
        holds |= (uint32_t)(p[l] != 0) << l;
    return (in->pred_neg ? ~holds : holds) & act;
}

/* The number of lanes in a mask (no popcnt instruction in the baseline ISA). */
static inline unsigned lane_count(uint32_t m)
{
    m = m - ((m >> 1) & 0x55555555u);
    m = (m & 0x33333333u) + ((m >> 2) & 0x33333333u);
    return (((m + (m >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

/* Runs warp w for a slice of FC_SLICE warp-instructions, or until it waits at
   a barrier, finishes, or the launch faults. */
static void warp_run(run *x, warp *w)
{
    uint64_t slice_end = x->steps + FC_SLICE;
    while (!x->fault && w->depth && x->steps < slice_end) {
        frame *f = &w->stack[w->depth - 1];
        if (!f->live) {
            if (w->depth == 1)
                return;
            pop_frame(x, w);
            continue;
        }
        uint32_t runnable = f->live & ~w->blocked;
        if (!runnable)
            return;
        /* the running lanes stay the lowest PC until they reach another group's */
        if (!f->conv || (f->cur_mask & ~runnable) || f->cur_pc >= f->other_min ||
            (f->cur_mask != runnable && f->other_min == UINT32_MAX))
            reselect(f, runnable);
        if (f->cur_pc >= f->fn->ninsn) { /* fell off the end: as ret */
            launch_error(x, NULL, "control reached the end of a function");
            return;
        }
        const ptx_insn *in = &f->fn->insn[f->cur_pc];
        uint32_t act = f->cur_mask, exec = act;
        w->clock += 2;
        x->thread_steps += act == FULL_WARP ? 32 : lane_count(act);
        if (++x->steps > x->step_limit && x->step_limit) {
            fprintf(stderr, "fakecuda: PTX kernel %s ran past FAKECUDA_PTX_STEPS=%llu warp-instructions\n",
                    x->kernel->name, (unsigned long long)x->step_limit);
            x->fault = FC_PTX_TIMEOUT;
            return;
        }
        if (in->pred >= 0)
            exec = guard_lanes(f, in, act);
        uint32_t next_pc = f->cur_pc + 1;
        switch (in->op) {
        case PI_BRA: {
            uint32_t target = (uint32_t)in->o[0].imm;
            if (exec == act) {
                f->cur_pc = target;
                continue;
            }
            if (exec) {
                LANES(exec) f->pc[l] = target;
                LANES(act & ~exec) f->pc[l] = next_pc;
                f->cur_mask = 0;
                f->conv = false;
                continue;
            }
            break;
        }
        case PI_EXIT:
        case PI_RET:
            if (in->op == PI_EXIT || w->depth == 1) {
                lanes_exit(w, exec);
            } else {
                f->live &= ~exec;
                f->cur_mask &= ~exec;
                f->returned |= exec;
                f->conv = false;
            }
            f->cur_pc = next_pc;
            continue;
        case PI_CALL:
            f->cur_pc = next_pc;
            if (exec && !push_frame(x, w, f, in, exec))
                return;
            continue;
        case PI_BAR:
        case PI_BARRIER:
            if (in->sub == 4) /* bar.warp.sync: the warp runs in lockstep */
                break;
            if (in->sub == 1) /* bar.arrive: nothing waits for it here */
                break;
            if (in->sub != 0 || (in->nops > 1 && in->o[1].kind != PO_NONE)) {
                if (in->sub != 0) {
                    unsupported(x, in);
                    return;
                }
            }
            f->cur_pc = next_pc;
            w->blocked |= exec;
            f->conv = false;
            continue;
        default:
            if (exec)
                ptx_step(x, w, f, in, exec);
            if (x->yield) { /* a polling point: the block's other warps run first */
                x->yield = false;
                f->cur_pc = next_pc;
                return;
            }
            break;
        }
        f->cur_pc = next_pc;
    }
}

/* ---- blocks and the grid ------------------------------------------------------------------------ */

static bool warp_done(const warp *w)
{
    return w->depth == 0 || (w->depth == 1 && !w->stack[0].live);
}

static bool warp_waits(const warp *w)
{
    const frame *f = &w->stack[w->depth - 1];
    return f->live && !(f->live & ~w->blocked);
}

/* Runs one block: its warps round-robin, a slice at a time. */
static void run_block(run *x, warp *warps, unsigned nwarps, unsigned threads)
{
    const ptx_func *k = x->kernel;
    const struct fakecuda_launch *L = x->l;
    for (unsigned i = 0; i < nwarps; i++) {
        warp *w = &warps[i];
        unsigned n = threads - i * 32 < 32 ? threads - i * 32 : 32;
        uint32_t lanes = n == 32 ? 0xffffffffu : (1u << n) - 1;
        memset(w->stack[0].pc, 0, sizeof w->stack[0].pc);
        w->stack[0] = (frame){.fn = k,
                              .r = w->stack[0].r,
                              .live = lanes,
                              .cur_mask = lanes,
                              .conv = true,
                              .other_min = UINT32_MAX,
                              .ret_sym = -1};
        w->depth = 1;
        w->blocked = 0;
        w->carry = 0;
        w->id = i;
        for (unsigned l = 0; l < n; l++) {
            unsigned t = i * 32 + l;
            w->tid[0][l] = (uint16_t)(t % L->block.x);
            w->tid[1][l] = (uint16_t)(t / L->block.x % L->block.y);
            w->tid[2][l] = (uint16_t)(t / L->block.x / L->block.y);
        }
    }
    for (;;) {
        bool any = false;
        for (unsigned i = 0; i < nwarps && !x->fault; i++) {
            if (warp_done(&warps[i]) || warp_waits(&warps[i]))
                continue;
            warp_run(x, &warps[i]);
            any = true;
        }
        if (x->fault)
            break;
        if (any)
            continue;
        bool waiting = false;
        for (unsigned i = 0; i < nwarps; i++)
            if (!warp_done(&warps[i]) && warp_waits(&warps[i])) {
                waiting = true;
                warps[i].blocked = 0;
                warps[i].stack[warps[i].depth - 1].conv = false;
            }
        if (!waiting)
            break;
    }
    for (unsigned i = 0; i < nwarps; i++) /* frames left by a fault */
        while (warps[i].depth > 1)
            free(warps[i].stack[--warps[i].depth].r);
}

static int wrange_cmp(const void *a, const void *b)
{
    const wrange *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* FAKECUDA_WRITE_LOG: one line per launch, the kernel's name and the byte
   ranges of device memory it wrote, sorted and coalesced. */
static void write_log(run *x)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    const char *path = getenv("FAKECUDA_WRITE_LOG");
    if (!path || !*path)
        return;
    if (x->nwrites)
        qsort(x->writes, x->nwrites, sizeof *x->writes, wrange_cmp);
    size_t n = 0;
    for (size_t i = 0; i < x->nwrites; i++) {
        if (n && x->writes[i].lo <= x->writes[n - 1].hi) {
            if (x->writes[i].hi > x->writes[n - 1].hi)
                x->writes[n - 1].hi = x->writes[i].hi;
        } else {
            x->writes[n++] = x->writes[i];
        }
    }
    pthread_mutex_lock(&lock);
    FILE *out = fopen(path, "a");
    if (out) {
        fprintf(out, "%s", x->kernel->name);
        for (size_t i = 0; i < n; i++)
            fprintf(out, " 0x%llx+%llu", (unsigned long long)x->writes[i].lo,
                    (unsigned long long)(x->writes[i].hi - x->writes[i].lo));
        fprintf(out, "%s\n", x->fault ? " fault" : "");
        fclose(out);
    }
    pthread_mutex_unlock(&lock);
}

/* One block's memory: its warps' register files, shared and local memory. */
static bool block_alloc(run *x, unsigned threads, unsigned nwarps, warp **warps)
{
    *warps = calloc(nwarps, sizeof **warps);
    x->shared = calloc(1, x->shared_bytes ? x->shared_bytes : 1);
    x->local = mmap(NULL, (size_t)threads * FC_LOCAL_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    bool ok = *warps && x->shared && x->local != MAP_FAILED;
    for (unsigned i = 0; ok && i < nwarps; i++)
        ok = ((*warps)[i].stack[0].r = calloc((size_t)x->kernel->nregs * 32 + 1, sizeof(uint64_t))) != NULL;
    if (!ok)
        fprintf(stderr, "fakecuda: PTX kernel %s: out of memory; the launch fails\n", x->kernel->name);
    return ok;
}

static void block_free(run *x, unsigned threads, unsigned nwarps, warp *warps)
{
    for (unsigned i = 0; warps && i < nwarps; i++)
        free(warps[i].stack[0].r);
    free(warps);
    free(x->shared);
    if (x->local != MAP_FAILED)
        munmap(x->local, (size_t)threads * FC_LOCAL_BYTES);
}

/* Blocks one after another, reusing one block's memory. */
static void run_blocks_in_turn(run *x, unsigned threads, unsigned nwarps)
{
    const struct fakecuda_launch *L = x->l;
    warp *warps;
    if (!block_alloc(x, threads, nwarps, &warps))
        x->fault = FAKECUDA_KERNEL_LAUNCH_FAILED;
    for (unsigned z = 0; z < L->grid.z && !x->fault; z++)
        for (unsigned y = 0; y < L->grid.y && !x->fault; y++)
            for (unsigned b = 0; b < L->grid.x && !x->fault; b++) {
                x->ctaid[0] = b;
                x->ctaid[1] = y;
                x->ctaid[2] = z;
                if (x->shared_bytes)
                    memset(x->shared, 0, x->shared_bytes);
                run_block(x, warps, nwarps, threads);
            }
    block_free(x, threads, nwarps, warps);
}

/* A block of a cooperative grid: its own state and memory. */
typedef struct grid_member {
    run x;
    warp *warps;
    unsigned threads, nwarps;
} grid_member;

static void grid_member_run(void *arg, ptx_grid *g)
{
    grid_member *b = arg;
    b->x.grid = g;
    run_block(&b->x, b->warps, b->nwarps, b->threads);
    if (b->x.fault)
        ptx_grid_fail(g, b->x.fault);
}

/* A cooperative launch: every block resident at once (ptx_sync.c), each
   with its own memory; their writes and counts are the launch's. */
static void run_blocks_resident(run *x, unsigned threads, unsigned nwarps)
{
    const struct fakecuda_launch *L = x->l;
    unsigned n = L->grid.x * L->grid.y * L->grid.z, made = 0;
    grid_member *b = calloc(n, sizeof *b);
    void **args = calloc(n, sizeof *args);
    bool ok = b && args;
    for (; ok && made < n; made++) {
        b[made].x = *x;
        b[made].x.ctaid[0] = made % L->grid.x;
        b[made].x.ctaid[1] = made / L->grid.x % L->grid.y;
        b[made].x.ctaid[2] = made / L->grid.x / L->grid.y;
        b[made].threads = threads;
        b[made].nwarps = nwarps;
        args[made] = &b[made];
        if (!block_alloc(&b[made].x, threads, nwarps, &b[made].warps)) {
            block_free(&b[made].x, threads, nwarps, b[made].warps);
            ok = false;
            break;
        }
    }
    if (ok && !ptx_grid_run(n, grid_member_run, args)) {
        fprintf(stderr, "fakecuda: PTX kernel %s: cannot make its blocks' threads; the launch fails\n",
                x->kernel->name);
        ok = false;
    }
    if (!ok)
        x->fault = FAKECUDA_KERNEL_LAUNCH_FAILED;
    for (unsigned i = 0; i < made; i++) {
        run *y = &b[i].x;
        if (!x->fault)
            x->fault = y->fault; /* every block that stopped stopped on the grid's first fault */
        x->steps += y->steps;
        x->thread_steps += y->thread_steps;
        for (size_t k = 0; k < y->nwrites; k++)
            log_write(x, y->writes[k].lo, y->writes[k].hi - y->writes[k].lo);
        free(y->writes);
        block_free(y, threads, nwarps, b[i].warps);
    }
    free(b);
    free(args);
}

static int launch(const struct fakecuda_launch *L, bool cooperative)
{
    const fc_ptx_kernel *k = L->user;
    const fc_ptx_module *m = k->module;
    run x = {.m = m, .kernel = &m->func[k->func], .l = L};
    const char *log = getenv("FAKECUDA_WRITE_LOG");
    x.logging = log && *log;
    const char *steps = getenv("FAKECUDA_PTX_STEPS");
    x.step_limit = steps ? strtoull(steps, NULL, 10) : 0;
    if (x.kernel->error) {
        fprintf(stderr, "fakecuda: PTX kernel %s cannot run: %s; the launch fails\n", x.kernel->name, x.kernel->error);
        return FAKECUDA_KERNEL_LAUNCH_FAILED;
    }
    unsigned threads = L->block.x * L->block.y * L->block.z, nwarps = (threads + 31) / 32;
    x.shared_bytes = m->shared_align + L->shared_bytes;
    if (cooperative)
        run_blocks_resident(&x, threads, nwarps);
    else
        run_blocks_in_turn(&x, threads, nwarps);
    fflush(stdout);
    if (x.logging)
        write_log(&x);
    const char *stats = getenv("FAKECUDA_PTX_STATS");
    FILE *sf = stats && *stats ? fopen(stats, "a") : NULL;
    if (sf) { /* one line per launch: name, warp- and thread-instructions (tools/bench/exec_bench.c) */
        fprintf(sf, "%s %llu %llu\n", x.kernel->name, (unsigned long long)x.steps, (unsigned long long)x.thread_steps);
        fclose(sf);
    }
    free(x.writes);
    assert((x.fault == FAKECUDA_KERNEL_OK || x.fault == FAKECUDA_KERNEL_ILLEGAL_ADDRESS ||
            x.fault == FAKECUDA_KERNEL_MISALIGNED_ADDRESS || x.fault == FAKECUDA_KERNEL_LAUNCH_FAILED ||
            x.fault == FC_PTX_ASSERT || x.fault == FC_PTX_ILLEGAL_INSTRUCTION || x.fault == FC_PTX_TIMEOUT) &&
           "a launch returns one fault code of fakecuda_kernel.h's or ptx.h's");
    return x.fault;
}

int fc_ptx_launch(const struct fakecuda_launch *L)
{
    return launch(L, false);
}

int fc_ptx_launch_cooperative(const struct fakecuda_launch *L)
{
    return launch(L, true);
}

/* ---- the module, as fakecuda sees it ------------------------------------------------------------ */

static bool is_kernel(const ptx_func *f)
{
    return f->entry && f->defined;
}

unsigned fc_ptx_kernel_count(const fc_ptx_module *m)
{
    unsigned n = 0;
    for (uint32_t i = 0; i < m->nfuncs; i++)
        n += is_kernel(&m->func[i]);
    return n;
}

static const ptx_func *kernel_at(const fc_ptx_module *m, unsigned i, unsigned *index)
{
    for (uint32_t j = 0; j < m->nfuncs; j++)
        if (is_kernel(&m->func[j]) && i-- == 0) {
            if (index)
                *index = j;
            return &m->func[j];
        }
    return NULL;
}

const char *fc_ptx_kernel_name(const fc_ptx_module *m, unsigned i)
{
    const ptx_func *f = kernel_at(m, i, NULL);
    return f ? f->name : NULL;
}

unsigned fc_ptx_kernel_params(const fc_ptx_module *m, unsigned i, struct fakecuda_param *out, unsigned max)
{
    const ptx_func *f = kernel_at(m, i, NULL);
    if (!f)
        return 0;
    for (unsigned p = 0; p < f->nparams && p < max; p++)
        out[p] = (struct fakecuda_param){f->param[p].offset, f->param[p].size};
    return f->nparams;
}

void fc_ptx_kernel_at(const fc_ptx_module *m, unsigned i, fc_ptx_kernel *k)
{
    unsigned index = 0;
    kernel_at(m, i, &index);
    *k = (fc_ptx_kernel){m, index};
}

unsigned fc_ptx_var_count(const fc_ptx_module *m)
{
    return m->nvars;
}

bool fc_ptx_var(const fc_ptx_module *m, unsigned i, const char **name, uint64_t *size, const unsigned char **init)
{
    const ptx_var *v = &m->var[i];
    if (v->space == PS_SHARED || v->is_extern)
        return false;
    *name = v->name;
    *size = v->size;
    *init = v->init;
    return true;
}

void fc_ptx_var_place(fc_ptx_module *m, unsigned i, uint64_t device_address)
{
    m->var_addr[i] = device_address;
}
