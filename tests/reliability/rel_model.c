/*
 * rel_model.c - end-to-end model check of cutaint (issue 8).
 *
 * Generates random driver-API programs (alloc, free, HtoD, memset, DtoD,
 * launches of fakecuda's built-in kernels with const / non-const / interior /
 * struct / `extra` bindings, some as a graph of one kernel node, DtoH, syncs; a context that goes - destroyed,
 * reset or released - and another taking its place, whose new allocations
 * fakecuda places at the old addresses; a module unloaded and another
 * loaded, whose kernels take the old handles in another order) with random
 * failures (launch-time
 * errors fakecuda returns at once, FAKECUDA_FAULTS codes, CUTAINT_INJECT
 * launch and api specs), runs each one in a child process under the shim on
 * fakecuda, and checks every result against a reference model that runs in
 * the same process on host memory.  Some allocations are cut into regions
 * (include/cutaint.h), each a kernel pointer's extent, and region ops give
 * one back and take it anew, carrying nothing.  Retry ops launch the last refused launch
 * again (docs/DESIGN.md, "Retries"): valid with as many threads in all, with
 * fewer, with another value, after the same failure reached a const input of
 * it, or refused once more; the model decides retries by the documented rule
 * (intact failures, attempts, carried bytes within the outputs) and asserts
 * that no retry it runs reads bytes a skip left stale (its own per-byte
 * record of skipped work), so the rule is checked sound as well as followed:
 *   - a read is refused iff some byte read carries a failure (its last writer
 *     failed or was skipped); the refusal returns the root failure's code, the
 *     host buffer holds the poison byte, and the report's refused_read names
 *     the model's root failure id and failure set;
 *   - a served read returns exactly the bytes the model holds;
 *   - every failure / skip / retry event of the report is one the model
 *     predicted;
 *   - no context is latched but in a loss program, whose exit status is 70
 *     (cutaint's), any other's its own.
 * Loss programs (about 3 in 10, one thread only): after its ops the program
 * synchronises the context, makes two streams (blocking, non-blocking) and
 * runs a short tail: empty launches on the three streams (legacy, blocking,
 * non-blocking), proofs (cuCtxSynchronize, cuStreamSynchronize of a created
 * stream, a synchronous cuMemcpyDtoH on the legacy stream), a launch of
 * fakecuda's crash, a few more launches and stream syncs (a sync whose
 * drain reaches crash surfaces it: fakecuda runs one queue in submission
 * order), and ends with the sync that surfaces it.  The model numbers every
 * launch as cutaint does (every cuLaunchKernel*, skipped or failed too; a
 * graph launch takes none) and applies docs/DESIGN.md "Suspects"'s proof
 * rules; the context_lost event must list exactly the model's suspects
 * (launch numbers, kernels, streams, order, prime flags) and total.
 *
 * Half the programs (odd program seeds) load their module as PTX text whose
 * code does what fakecuda's kernels do with their pointers (ptx_module), so
 * cutaint takes the parameters' roles from it (docs/IMAGES.md, "Parameter
 * directions"): outputs only stored through are no inputs and keep their
 * taint through a success that is no retry; the model follows the same
 * roles. They also launch select_fill, a real kernel of that module that
 * no built-in names, so fakecuda's PTX executor runs its code (the child
 * turns FAKECUDA_PTX on) and its write oracle (FAKECUDA_WRITE_LOG, next to
 * the report) logs the bytes each launch wrote: every line must be, in
 * order, the ranges the model wrote for the next select_fill launch the
 * driver accepted (oracle_check), or the program fails.
 * Modes:
 *   rel_model [--programs N] [--ops M] [--seed S]      parent: N programs
 *   rel_model --threads T [--ops M] [--seed S]         T threads, one process
 *   rel_model --child PSEED --ops M [--keep i,j,...]   one program (internal)
 * Environment: REL_SEED, REL_PROGRAMS, REL_OPS, REL_THREADS override the
 * defaults; REL_SOAK=1 multiplies programs by 50; REL_NO_LOSS=1 makes no
 * loss programs.
 * Schedules: the model predicts every return code on fakecuda's
 * deterministic schedule (FAKECUDA_SCHEDULE=sync, as meson's "model"
 * test runs it), where a kernel's fault surfaces at the sync the model
 * names. On the asynchronous one it surfaces at whichever call comes
 * next, so there only the programs without a loss can be predicted
 * (REL_NO_LOSS=1, meson's "model_async"): every op's result is then
 * decided at its call, whenever the queued work runs.
 * A failing program is minimised (ddmin over its op list) and printed with
 * the command that replays it.
 */

#include <cuda.h>

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cutaint.h"

#include "jsonr.h"
#include "rel_env.h"

#ifndef REL_SHIM
#error "REL_SHIM must name libcutaint.so"
#endif
#ifndef REL_FAKECUDA_DIR
#error "REL_FAKECUDA_DIR must name fakecuda's directory"
#endif

#define MAX_SLOTS 16
#define MAX_FAIL 4096
#define FC_STALE 0x5A
#define POISON 0xff

/* ---------------------------------------------------------------- rng -- */
static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static uint32_t rnd(uint64_t *s, uint32_t n)
{
    return n ? (uint32_t)(splitmix(s) % n) : 0;
}

/* ------------------------------------------------------------ kernels -- */
enum { K_FILL, K_SAXPY, K_GATHER, K_COPY_PAIR, K_REDUCE, K_SCALE, K_COUNT_FILL, K_EMPTY, K_N };
/* A real kernel, no built-in's: fakecuda's PTX executor runs select_fill's
 * code from ptx_module (PTX programs only, FAKECUDA_PTX=on), and its write
 * oracle (FAKECUDA_WRITE_LOG) says which bytes each launch wrote. */
enum { K_SELECT = K_N, K_ALL };

/* What a "foreign" pointer points at: host memory, which no device
 * allocation can overlap (a fixed number could land in fakecuda's arena,
 * whose place moves with ASLR, and hit another thread's buffer). */
static char foreign_bytes[4096];
static const char *k_mangled[K_ALL] = {"_Z4fillPfif",         "_Z5saxpyifPKfPf",  "_Z6gatherPfPKfPKii",
                                       "_Z9copy_pair4Pair",   "_Z6reducePKfPfi",  "scale",
                                       "_Z10count_fillPKiPf", "_Z5emptyPvS_S_S_", "select_fill"};
static const char *k_base[K_ALL] = {"fill",  "saxpy",      "gather", "copy_pair",  "reduce",
                                    "scale", "count_fill", "empty",  "select_fill"};

/* ------------------------------------------------------- configuration -- */
typedef struct inject_rule {
    bool launch; /* else api */
    char pattern[64];
    unsigned nth;
    bool later;
    int error;
    unsigned long seen;
} inject_rule;

typedef struct prog_cfg {
    unsigned n_ct, n_fc;
    inject_rule ct[3]; /* CUTAINT_INJECT */
    inject_rule fc[2]; /* FAKECUDA_FAULTS */
    char ct_env[512], fc_env[512];
} prog_cfg;

static const struct {
    int code;
    const char *name;
} ct_errors[] = {{719, "CUDA_ERROR_LAUNCH_FAILED"},
                 {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
                 {2, "CUDA_ERROR_OUT_OF_MEMORY"},
                 {1, "CUDA_ERROR_INVALID_VALUE"},
                 {999, "CUDA_ERROR_UNKNOWN"}};
static const struct {
    int code;
    const char *name;
} fc_errors[] = {{701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
                 {1, "CUDA_ERROR_INVALID_VALUE"},
                 {2, "CUDA_ERROR_OUT_OF_MEMORY"}};
static const char *ct_api_patterns[] = {"cuMemcpyHtoD",      "cuMemsetD8",   "cuMemsetD32",
                                        "cuMemcpyDtoD",      "cuMemcpyDtoH", "cuMemAlloc",
                                        "cuMemcpyHtoDAsync", "cuMemcpy*",    "cuMemsetD2D8"};
static const char *fc_api_names[] = {"cuMemcpyHtoD_v2", "cuMemsetD8_v2", "cuMemcpyDtoD_v2", "cuMemsetD32_v2"};

static void make_cfg(uint64_t pseed, prog_cfg *c)
{
    uint64_t s = pseed ^ 0xc0ffee;
    memset(c, 0, sizeof *c);
    if (rnd(&s, 10) < 7) {
        c->n_ct = 1 + rnd(&s, 3);
        for (unsigned i = 0; i < c->n_ct; i++) {
            inject_rule *r = &c->ct[i];
            r->launch = rnd(&s, 3) != 0;
            if (r->launch) {
                unsigned k = rnd(&s, K_N + 1);
                snprintf(r->pattern, sizeof r->pattern, "%s", k == K_N ? "*a*" : k_base[k]);
            } else {
                snprintf(r->pattern, sizeof r->pattern, "%s",
                         ct_api_patterns[rnd(&s, sizeof ct_api_patterns / sizeof *ct_api_patterns)]);
            }
            r->nth = 1 + rnd(&s, 12);
            r->later = rnd(&s, 12) == 0;
            unsigned e = rnd(&s, 5);
            r->error = ct_errors[e].code;
            size_t len = strlen(c->ct_env);
            snprintf(c->ct_env + len, sizeof c->ct_env - len, "%s%s:%s#%u%s=%s", i ? ";" : "",
                     r->launch ? "launch" : "api", r->pattern, r->nth, r->later ? "+" : "", ct_errors[e].name);
        }
    }
    if (rnd(&s, 10) < 4) {
        c->n_fc = 1 + rnd(&s, 2);
        for (unsigned i = 0; i < c->n_fc; i++) {
            inject_rule *r = &c->fc[i];
            r->launch = rnd(&s, 2) != 0;
            if (r->launch) {
                unsigned k = rnd(&s, K_N + 1);
                snprintf(r->pattern, sizeof r->pattern, "%s", k == K_N ? "_Z*" : k_mangled[k]);
            } else {
                snprintf(r->pattern, sizeof r->pattern, "%s", fc_api_names[rnd(&s, 4)]);
            }
            r->nth = 1 + rnd(&s, 10);
            r->later = false;
            unsigned e = rnd(&s, 3);
            r->error = fc_errors[e].code;
            size_t len = strlen(c->fc_env);
            snprintf(c->fc_env + len, sizeof c->fc_env - len, "%s%s:%s#%u=%s", i ? ";" : "",
                     r->launch ? "launch" : "api", r->pattern, r->nth, fc_errors[e].name);
        }
    }
}

/* CUTAINT_INJECT counting: every matching rule counts, the first that fires wins. */
static int ct_inject_fire(prog_cfg *c, bool launch, const char *name, const char *alt)
{
    int fired = 0;
    for (unsigned i = 0; i < c->n_ct; i++) {
        inject_rule *r = &c->ct[i];
        if (r->launch != launch)
            continue;
        if (fnmatch(r->pattern, name, 0) != 0 && !(alt && fnmatch(r->pattern, alt, 0) == 0))
            continue;
        r->seen++;
        bool fires = r->later ? r->seen >= r->nth : r->seen == r->nth;
        if (fires && !fired)
            fired = r->error;
    }
    return fired;
}

/* FAKECUDA_FAULTS counting (launch: fnmatch on the mangled name; api: the exported name). */
static int fc_fault_fire(prog_cfg *c, bool launch, const char *name)
{
    int fired = 0;
    for (unsigned i = 0; i < c->n_fc; i++) {
        inject_rule *r = &c->fc[i];
        if (r->launch != launch)
            continue;
        if (launch ? fnmatch(r->pattern, name, 0) != 0 : strcmp(r->pattern, name) != 0)
            continue;
        r->seen++;
        if (r->seen == r->nth && !fired)
            fired = r->error;
    }
    return fired;
}

/* ----------------------------------------------------------- programs -- */
enum {
    OP_ALLOC,
    OP_FREE,
    OP_HTOD,
    OP_MEMSET,
    OP_DTOD,
    OP_LAUNCH,
    OP_DTOH,
    OP_SYNC,
    OP_CONTEXT,
    OP_UNLOAD,
    OP_RETRY,
    OP_REGION,
    OP_N
};
static const char *op_names[OP_N] = {"alloc", "free", "htod",    "memset", "dtod",  "launch",
                                     "dtoh",  "sync", "context", "unload", "retry", "region"};
typedef struct op {
    uint8_t kind;
    uint32_t r[12];
} op;

static void gen_ops(uint64_t pseed, unsigned n, op *ops)
{
    static const uint8_t weights[OP_N] = {8, 3, 14, 8, 10, 26, 20, 3, 1, 1, 4, 2};
    uint64_t s = pseed;
    for (unsigned i = 0; i < n; i++) {
        unsigned w = rnd(&s, 100), k = 0;
        while (k < OP_N - 1 && w >= weights[k]) {
            w -= weights[k];
            k++;
        }
        ops[i].kind = (uint8_t)k;
        for (int j = 0; j < 12; j++)
            ops[i].r[j] = (uint32_t)splitmix(&s);
    }
}

/* --------------------------------------------------------------- model -- */
typedef struct slot {
    bool live;
    CUdeviceptr base;
    uint64_t size;
    uint8_t *data;
    uint32_t *taint; /* model failure id per byte, 0 = written */
    uint8_t *stale;  /* 1: a skip's output since the last successful write: the bytes lack work that never ran */
    /* A window of virtual memory (op_alloc_run): two granules mapped side by
     * side from run, the window straddling the seam between them.  0: a
     * cuMemAlloc allocation. */
    CUdeviceptr run;
    CUmemGenericAllocationHandle handle[2];
    bool mapped[2];
    /* Cut into regions of this many bytes (include/cutaint.h; the last may
     * be shorter): a kernel pointer's extent is the rest of its region.
     * 0: none. */
    uint64_t region;
} slot;

/* Where a kernel pointer at offset off of s stops: its region's end, or
 * the slot's. */
static uint64_t extent_end(const slot *s, uint64_t off)
{
    if (!s->region)
        return s->size;
    uint64_t end = (off / s->region + 1) * s->region;
    return end < s->size ? end : s->size;
}

/* What makes a launch the same work again (docs/DESIGN.md, "Retries"):
 * the function handle, the parameter bytes (compared whole), threads in all. */
#define ATTEMPTS_KEPT 4
typedef struct attempt {
    uint64_t fn;
    unsigned char bytes[64];
    size_t len;
    uint64_t threads;
} attempt;

typedef struct mfail {
    int error;
    unsigned long occurrences;
    char api[48];
    char kernel[32]; /* base name; "" for none */
    /* every occurrence a launch refused at once over bytes carrying nothing
     * or intact failures, and no skip passed it on */
    bool intact;
    unsigned n_att;
    attempt att[ATTEMPTS_KEPT]; /* oldest first */
} mfail;

typedef struct binding {
    CUdeviceptr p;
    bool write;  /* non-const: read and written */
    bool stored; /* ... unless the module's PTX says only stored through: written, extent unknown */
} binding;

/* Everything a launch passes and the model needs to run it again: a
 * retry repeats a refused one's description (op_retry). */
typedef struct launch_desc {
    unsigned k;
    unsigned char params[64];
    size_t poff[4], psz[4];
    unsigned np;
    binding bind[4];
    unsigned nb;
    slot where[4]; /* each binding's slot as it was (base, size) */
    int n;
    float fv;
    uint64_t grid;
    unsigned block, smem, how;
    bool invalid;
    uint64_t av2; /* elements from the second pointer on: what gather and count_fill may index */
} launch_desc;

typedef struct checker {
    int tid;            /* -1: single-threaded program */
    bool strict_report; /* check the report line by line */
    bool ptx;           /* its module is PTX text: the kernels' directions come from it (ptx_module) */
    prog_cfg cfg;
    slot s[MAX_SLOTS];
    mfail *f; /* f[id], id from 1 */
    unsigned n_fail;
    /* expected events of the current op */
    unsigned exp_new[8], n_exp_new;
    unsigned exp_repeat[8], n_exp_repeat;
    unsigned exp_skip_root[8], n_exp_skip;
    unsigned exp_retry[8], n_exp_retry;
    bool minted_fresh, fold_was_intact; /* what the last mint found */
    uint64_t retries;
    launch_desc refused; /* the last launch refused at once, for op_retry */
    bool has_refused;
    int rep_fd;
    char *rep_buf;
    size_t rep_len, rep_cap;
    uint64_t checked_reads, refused_reads, launches, skips, failures;
    /* loss programs: launch numbers as cutaint gives them, the tail's launches */
    uint64_t launch_no;
    struct msus {
        uint64_t launch;
        int stream; /* 0 legacy, 1 blocking, 2 non-blocking */
        bool crash, proven;
    } sus[64];
    unsigned n_sus;
    CUstream tstream[3];
    bool expect_loss, got_loss, lost;
    char err[1024];
    bool failed;
    /* threads mode */
    CUfunction fn[K_ALL];
    CUdeviceptr shared_const;
    uint64_t shared_const_size;
    uint8_t *shared_const_data;
    /* the write oracle: its log, what was read of it, and the lines the
       model expects there, one per select_fill launch the driver accepted */
    const char *oracle;
    long oracle_at;
    char **oracle_want;
    size_t n_oracle_want, oracle_next, oracle_cap;
} checker;

static void fail(checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(checker *c, const char *fmt, ...)
{
    if (c->failed)
        return;
    c->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
}

static slot *slot_of(checker *c, CUdeviceptr p, uint64_t *off)
{
    for (int i = 0; i < MAX_SLOTS; i++)
        if (c->s[i].live && p >= c->s[i].base && p < c->s[i].base + c->s[i].size) {
            *off = p - c->s[i].base;
            return &c->s[i];
        }
    return NULL;
}

static int pick_slot(checker *c, uint32_t r)
{
    for (int i = 0; i < MAX_SLOTS; i++) {
        int j = (int)((r + (uint32_t)i) % MAX_SLOTS);
        if (c->s[j].live)
            return j;
    }
    return -1;
}

static bool fail_live(checker *c, unsigned id)
{
    for (int i = 0; i < MAX_SLOTS; i++)
        if (c->s[i].live)
            for (uint64_t b = 0; b < c->s[i].size; b++)
                if (c->s[i].taint[b] == id)
                    return true;
    return false;
}

/* A write set: ranges [addr, addr+len) in a slot (len to the end for a pointer). */
typedef struct wrange {
    int slot;
    uint64_t off, len;
} wrange;

/* The failure a scope pins: the lowest id among failures whose last bytes
 * w overwrites (core/taint.c pin_to_scope). */
static unsigned pinned_by_scope(checker *c, const wrange *w, unsigned n)
{
    if (c->tid >= 0)
        return 0;
    static uint32_t remaining[MAX_FAIL + 1];
    static uint8_t *seen[MAX_SLOTS];
    memset(remaining, 0, sizeof remaining);
    for (int i = 0; i < MAX_SLOTS; i++)
        if (c->s[i].live)
            for (uint64_t b = 0; b < c->s[i].size; b++)
                if (c->s[i].taint[b] && c->s[i].taint[b] <= MAX_FAIL)
                    remaining[c->s[i].taint[b]]++;
    for (int i = 0; i < MAX_SLOTS; i++) {
        free(seen[i]);
        seen[i] = c->s[i].live ? calloc(c->s[i].size, 1) : NULL;
    }
    unsigned pinned = 0;
    for (unsigned k = 0; k < n; k++) {
        slot *s = &c->s[w[k].slot];
        for (uint64_t b = w[k].off; b < w[k].off + w[k].len && b < s->size; b++) {
            if (seen[w[k].slot][b])
                continue;
            seen[w[k].slot][b] = 1;
            uint32_t id = s->taint[b];
            if (id && id <= MAX_FAIL && --remaining[id] == 0 && (!pinned || id < pinned))
                pinned = id;
        }
    }
    return pinned;
}

static bool in_ranges(const wrange *w, unsigned n, int slot, uint64_t b)
{
    for (unsigned k = 0; k < n; k++)
        if (w[k].slot == slot && b >= w[k].off && b - w[k].off < w[k].len)
            return true;
    return false;
}

/* Does any byte outside the scope w carry id?  (A write scope displaces
 * whatever its own bytes carried when it opened.) */
static bool live_outside(checker *c, unsigned id, const wrange *w, unsigned n)
{
    for (int i = 0; i < MAX_SLOTS; i++)
        if (c->s[i].live)
            for (uint64_t b = 0; b < c->s[i].size; b++)
                if (c->s[i].taint[b] == id && !in_ranges(w, n, i, b))
                    return true;
    return false;
}

/* Mint or fold a failure (api, kernel, error) as core/taint.c does: folds
 * into a live failure of the same kind.  A write scope (w, n) displaced its
 * own bytes' failures when it opened and keeps only the one it pins; a
 * launch (n == 0) opens none. */
static unsigned mint(checker *c, const char *api, const char *kernel, int error, unsigned pinned, const wrange *w,
                     unsigned n)
{
    if (c->tid < 0) {
        for (unsigned id = 1; id <= c->n_fail; id++) {
            mfail *f = &c->f[id];
            if (f->error == error && strcmp(f->api, api) == 0 && strcmp(f->kernel, kernel ? kernel : "") == 0 &&
                (id == pinned || (n ? live_outside(c, id, w, n) : fail_live(c, id)))) {
                f->occurrences++;
                if (c->n_exp_repeat < 8)
                    c->exp_repeat[c->n_exp_repeat++] = id;
                c->minted_fresh = false;
                c->fold_was_intact = f->intact;
                f->intact = false; /* a refused launch sets it again (refused_launch) */
                return id;
            }
        }
    }
    if (c->n_fail + 1 >= MAX_FAIL) {
        fail(c, "model: too many failures");
        return 0;
    }
    unsigned id = ++c->n_fail;
    c->f[id].error = error;
    c->f[id].occurrences = 1;
    c->f[id].intact = false;
    c->f[id].n_att = 0;
    c->minted_fresh = true;
    snprintf(c->f[id].api, sizeof c->f[id].api, "%s", api);
    snprintf(c->f[id].kernel, sizeof c->f[id].kernel, "%s", kernel ? kernel : "");
    if (c->n_exp_new < 8)
        c->exp_new[c->n_exp_new++] = id;
    c->failures++;
    return id;
}

/* w's bytes carry id from now on (0: written, and so no longer stale). */
static void set_taint(checker *c, const wrange *w, unsigned n, unsigned id)
{
    for (unsigned k = 0; k < n; k++) {
        slot *s = &c->s[w[k].slot];
        for (uint64_t b = w[k].off; b < w[k].off + w[k].len && b < s->size; b++) {
            s->taint[b] = id;
            if (!id)
                s->stale[b] = 0;
        }
    }
}

/* Work reading root's bytes was skipped: w takes root, lacks what the work
 * would have written, and root is intact no more. */
static void skipped(checker *c, const wrange *w, unsigned n, unsigned root)
{
    set_taint(c, w, n, root);
    for (unsigned k = 0; k < n; k++) {
        slot *s = &c->s[w[k].slot];
        for (uint64_t b = w[k].off; b < w[k].off + w[k].len && b < s->size; b++)
            s->stale[b] = 1;
    }
    c->f[root].intact = false;
    c->exp_skip_root[c->n_exp_skip++] = root;
    c->skips++;
}

/* Every byte of w carries nothing or an intact failure. */
static bool footprint_intact(checker *c, const wrange *w, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        slot *s = &c->s[w[k].slot];
        for (uint64_t b = w[k].off; b < w[k].off + w[k].len && b < s->size; b++)
            if (s->taint[b] && !c->f[s->taint[b]].intact)
                return false;
    }
    return true;
}

static bool same_work(const attempt *a, const attempt *b)
{
    return a->fn == b->fn && a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

/* A launch refused at once minted or folded id over out (before out took
 * it): its attempt is kept, the fewest threads of the same work's, the
 * oldest dropped past ATTEMPTS_KEPT; intact as docs/DESIGN.md says. */
static void refused_launch(checker *c, unsigned id, const attempt *a, bool over_intact)
{
    mfail *f = &c->f[id];
    f->intact = over_intact && (c->minted_fresh || c->fold_was_intact);
    attempt kept = *a;
    unsigned i = 0;
    while (i < f->n_att && !same_work(&f->att[i], a))
        i++;
    if (i < f->n_att) {
        if (f->att[i].threads < kept.threads)
            kept.threads = f->att[i].threads;
    } else if (f->n_att == ATTEMPTS_KEPT) {
        i = 0;
    } else {
        f->n_att++;
    }
    memmove(&f->att[i], &f->att[i + 1], (f->n_att - 1 - i) * sizeof *f->att);
    f->att[f->n_att - 1] = kept;
}

/* A launch (a) whose inputs carry a failure: a retry?  Every carried byte
 * it reads lies in its outputs and carries an intact failure one of whose
 * attempts it repeats with at least as many threads. */
static bool retries(checker *c, const attempt *a, const wrange *in, unsigned nin, const wrange *out, unsigned nout)
{
    for (unsigned k = 0; k < nin; k++) {
        slot *s = &c->s[in[k].slot];
        for (uint64_t b = in[k].off; b < in[k].off + in[k].len && b < s->size; b++) {
            unsigned t = s->taint[b];
            if (!t)
                continue;
            const mfail *f = &c->f[t];
            bool repeats = false;
            for (unsigned i = 0; i < f->n_att && !repeats; i++)
                repeats = same_work(&f->att[i], a) && a->threads >= f->att[i].threads;
            if (!f->intact || !repeats || !in_ranges(out, nout, in[k].slot, b))
                return false;
        }
    }
    return true;
}

/* Does any byte of w lack work that never ran? */
static bool any_stale(checker *c, const wrange *w, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        slot *s = &c->s[w[k].slot];
        for (uint64_t b = w[k].off; b < w[k].off + w[k].len && b < s->size; b++)
            if (s->stale[b])
                return true;
    }
    return false;
}

/* Lowest failure id carried by any byte of w, 0 if none. */
static unsigned oldest(checker *c, const wrange *w, unsigned n)
{
    unsigned best = 0;
    for (unsigned k = 0; k < n; k++) {
        slot *s = &c->s[w[k].slot];
        for (uint64_t b = w[k].off; b < w[k].off + w[k].len && b < s->size; b++)
            if (s->taint[b] && (!best || s->taint[b] < best))
                best = s->taint[b];
    }
    return best;
}

/* ------------------------------------------------------------ report -- */
/* The model's suspects in the report's order: streams by their oldest
 * unproven launch, oldest first on each; prime[i]: first on its stream. */
static unsigned model_suspects(const checker *c, unsigned *idx, bool *prime)
{
    int order[3], n_order = 0;
    for (unsigned i = 0; i < c->n_sus; i++) {
        if (c->sus[i].proven)
            continue;
        bool seen = false;
        for (int j = 0; j < n_order; j++)
            seen |= order[j] == c->sus[i].stream;
        if (!seen)
            order[n_order++] = c->sus[i].stream;
    }
    unsigned n = 0;
    for (int j = 0; j < n_order; j++) {
        bool first = true;
        for (unsigned i = 0; i < c->n_sus; i++)
            if (!c->sus[i].proven && c->sus[i].stream == order[j]) {
                prime[n] = first;
                idx[n++] = i;
                first = false;
            }
    }
    return n;
}

static void suspects_text(const checker *c, char *buf, size_t cap)
{
    unsigned idx[64];
    bool prime[64];
    unsigned n = model_suspects(c, idx, prime);
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < n && len + 40 < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s#%" PRIu64 "%s@%d%s", i ? " " : "", c->sus[idx[i]].launch,
                                c->sus[idx[i]].crash ? "crash" : "empty", c->sus[idx[i]].stream, prime[i] ? "*" : "");
}

/* The context_lost event against the model's suspects, exactly. */
static void check_suspects(checker *c, const jsonr_doc *doc, const jv *ev, const char *what)
{
    unsigned idx[64];
    bool prime[64];
    unsigned n = model_suspects(c, idx, prime);
    char model[512];
    suspects_text(c, model, sizeof model);
    const jv *arr = jsonr_get(doc, ev, "suspects"), *total = jsonr_get(doc, ev, "suspects_total");
    if (!total || total->i != (int64_t)n) {
        fail(c, "%s: context_lost suspects_total %" PRId64 ", model %u [%s]", what, total ? total->i : -1, n, model);
        return;
    }
    unsigned i = 0;
    for (const jv *e = arr ? jsonr_first(doc, arr) : NULL; e; e = jsonr_next(doc, e), i++) {
        const jv *l = jsonr_get(doc, e, "launch"), *p = jsonr_get(doc, e, "prime");
        const jv *k = jsonr_get(doc, e, "kernel"), *st = jsonr_get(doc, e, "stream");
        if (i >= n) {
            fail(c, "%s: context_lost lists a suspect #%" PRId64 " past the model's %u [%s]", what, l ? l->i : -1, n,
                 model);
            return;
        }
        const struct msus *m = &c->sus[idx[i]];
        const char *base = m->crash ? "crash" : "empty";
        size_t bl = strlen(base);
        char sname[32];
        snprintf(sname, sizeof sname, "0x%llx", (unsigned long long)(uintptr_t)c->tstream[m->stream]);
        bool kok = k && k->type == JV_STRING && k->len > bl && !memcmp(k->str, base, bl) && k->str[bl] == '(';
        bool sok = st && st->type == JV_STRING && st->len == strlen(sname) && !memcmp(st->str, sname, st->len);
        if (!l || l->i != (int64_t)m->launch || !p || (p->type == JV_TRUE) != prime[i] || !kok || !sok) {
            fail(c,
                 "%s: context_lost suspect %u is launch #%" PRId64 " %.*s on %.*s prime %s, model #%" PRIu64
                 " %s on %s prime %s [model: %s]",
                 what, i, l ? l->i : -1, k && k->type == JV_STRING ? (int)k->len : 1,
                 k && k->type == JV_STRING ? k->str : "?", st && st->type == JV_STRING ? (int)st->len : 1,
                 st && st->type == JV_STRING ? st->str : "?", p && p->type == JV_TRUE ? "true" : "false", m->launch,
                 base, sname, prime[i] ? "true" : "false", model);
            return;
        }
    }
    if (i != (n < 16 ? n : 16))
        fail(c, "%s: context_lost lists %u suspects, model %u [%s]", what, i, n, model);
}

/* Reads the report lines written since the last call and checks them
 * against the events this op was expected to produce. */
static void check_report(checker *c, const char *what, int refused_code, unsigned root, const wrange *rd)
{
    if (!c->strict_report || c->rep_fd < 0 || c->failed)
        goto done;
    for (;;) {
        if (c->rep_cap - c->rep_len < 65536) {
            c->rep_cap = c->rep_cap * 2 + 65536;
            c->rep_buf = realloc(c->rep_buf, c->rep_cap);
        }
        ssize_t n = read(c->rep_fd, c->rep_buf + c->rep_len, c->rep_cap - c->rep_len);
        if (n <= 0)
            break;
        c->rep_len += (size_t)n;
    }
    unsigned got_new = 0, got_repeat = 0, got_skip = 0, got_retry = 0, got_refused = 0;
    size_t start = 0;
    jsonr_doc doc = {0};
    for (size_t i = 0; i < c->rep_len; i++) {
        if (c->rep_buf[i] != '\n')
            continue;
        char *line = c->rep_buf + start;
        size_t len = i - start;
        start = i + 1;
        const char *why = NULL;
        if (!jsonr_parse(&doc, line, len, &why)) {
            fail(c, "%s: report line does not parse (%s)", what, why ? why : "?");
            break;
        }
        const jv *root_v = jsonr_root(&doc);
        const jv *ev = jsonr_get(&doc, root_v, "event");
        if (!ev || ev->type != JV_STRING)
            continue;
        char evs[32] = "";
        snprintf(evs, sizeof evs, "%.*s", (int)ev->len, ev->str);
        if (strcmp(evs, "failure") == 0) {
            const jv *id = jsonr_get(&doc, root_v, "id"), *code = jsonr_get(&doc, root_v, "code");
            const jv *kern = jsonr_get(&doc, root_v, "kernel"), *api = jsonr_get(&doc, root_v, "api");
            if (got_new >= c->n_exp_new) {
                fail(c, "%s: unexpected failure event id %" PRId64, what, id ? id->i : -1);
                break;
            }
            unsigned want = c->exp_new[got_new++];
            mfail *f = &c->f[want];
            if (!id || id->i != (int64_t)want || !code || code->i != f->error) {
                fail(c, "%s: failure event id %" PRId64 " code %" PRId64 ", model: id %u code %d", what,
                     id ? id->i : -1, code ? code->i : -1, want, f->error);
                break;
            }
            if (!api || api->type != JV_STRING || strlen(f->api) != api->len || memcmp(api->str, f->api, api->len)) {
                fail(c, "%s: failure %u api %.*s, model %s", what, want, api ? (int)api->len : 0, api ? api->str : "",
                     f->api);
                break;
            }
            size_t kl = strlen(f->kernel);
            bool kok = kl == 0 ? (kern && kern->type == JV_NULL)
                               : (kern && kern->type == JV_STRING && kern->len >= kl &&
                                  !memcmp(kern->str, f->kernel, kl) && (kern->len == kl || kern->str[kl] == '('));
            if (!kok) {
                fail(c, "%s: failure %u kernel %.*s, model %s", what, want,
                     kern && kern->type == JV_STRING ? (int)kern->len : 4,
                     kern && kern->type == JV_STRING ? kern->str : "null", f->kernel);
                break;
            }
        } else if (strcmp(evs, "repeat") == 0) {
            const jv *fid = jsonr_get(&doc, root_v, "failure"), *occ = jsonr_get(&doc, root_v, "occurrences");
            if (got_repeat >= c->n_exp_repeat) {
                fail(c, "%s: unexpected repeat of failure %" PRId64, what, fid ? fid->i : -1);
                break;
            }
            unsigned want = c->exp_repeat[got_repeat++];
            if (!fid || fid->i != (int64_t)want || !occ || occ->i != (int64_t)c->f[want].occurrences) {
                fail(c, "%s: repeat of failure %" PRId64 " (%" PRId64 " occurrences), model %u (%lu)", what,
                     fid ? fid->i : -1, occ ? occ->i : -1, want, c->f[want].occurrences);
                break;
            }
        } else if (strcmp(evs, "skip") == 0) {
            const jv *fid = jsonr_get(&doc, root_v, "failure");
            if (got_skip >= c->n_exp_skip) {
                fail(c, "%s: unexpected skip event (failure %" PRId64 ")", what, fid ? fid->i : -1);
                break;
            }
            unsigned want = c->exp_skip_root[got_skip++];
            if (!fid || fid->i != (int64_t)want) {
                fail(c, "%s: skip propagates failure %" PRId64 ", model %u", what, fid ? fid->i : -1, want);
                break;
            }
        } else if (strcmp(evs, "retry") == 0) {
            const jv *fid = jsonr_get(&doc, root_v, "failure");
            if (got_retry >= c->n_exp_retry) {
                fail(c, "%s: unexpected retry event (failure %" PRId64 ")", what, fid ? fid->i : -1);
                break;
            }
            unsigned want = c->exp_retry[got_retry++];
            if (!fid || fid->i != (int64_t)want) {
                fail(c, "%s: retry of failure %" PRId64 ", model %u", what, fid ? fid->i : -1, want);
                break;
            }
        } else if (strcmp(evs, "refused_read") == 0) {
            got_refused++;
            const jv *r = jsonr_get(&doc, root_v, "root"), *code = jsonr_get(&doc, root_v, "code");
            const jv *fl = jsonr_get(&doc, root_v, "failures");
            if (!root || !r || r->i != (int64_t)root || !code || code->i != refused_code) {
                fail(c, "%s: refused_read root %" PRId64 " code %" PRId64 ", model root %u code %d", what,
                     r ? r->i : -1, code ? code->i : -1, root, refused_code);
                break;
            }
            /* the failure set: every id the model says the bytes carry */
            unsigned model_set = 0;
            for (unsigned id = 1; id <= c->n_fail; id++) {
                bool carried = false;
                slot *s = &c->s[rd->slot];
                for (uint64_t b = rd->off; b < rd->off + rd->len && !carried; b++)
                    carried = s->taint[b] == id;
                model_set += carried;
            }
            unsigned listed = 0;
            for (const jv *e = fl ? jsonr_first(&doc, fl) : NULL; e; e = jsonr_next(&doc, e)) {
                listed++;
                bool carried = false;
                slot *s = &c->s[rd->slot];
                for (uint64_t b = rd->off; b < rd->off + rd->len && !carried; b++)
                    carried = e->i > 0 && s->taint[b] == (uint32_t)e->i;
                if (!carried) {
                    fail(c, "%s: refused_read lists failure %" PRId64 " the bytes do not carry", what, e->i);
                    break;
                }
            }
            if (!c->failed && listed != (model_set < 8 ? model_set : 8) && listed != model_set)
                fail(c, "%s: refused_read lists %u failures, model %u", what, listed, model_set);
        } else if (strcmp(evs, "context_lost") == 0) {
            if (!c->expect_loss || c->got_loss) {
                fail(c, "%s: context_lost latched", what);
                break;
            }
            c->got_loss = true;
            check_suspects(c, &doc, root_v, what);
            if (c->failed)
                break;
        }
    }
    jsonr_free(&doc);
    memmove(c->rep_buf, c->rep_buf + start, c->rep_len - start);
    c->rep_len -= start;
    if (!c->failed && got_new != c->n_exp_new)
        fail(c, "%s: %u failure events, model %u", what, got_new, c->n_exp_new);
    if (!c->failed && got_repeat != c->n_exp_repeat)
        fail(c, "%s: %u repeat events, model %u", what, got_repeat, c->n_exp_repeat);
    if (!c->failed && got_skip != c->n_exp_skip)
        fail(c, "%s: %u skip events, model %u", what, got_skip, c->n_exp_skip);
    if (!c->failed && got_retry != c->n_exp_retry)
        fail(c, "%s: %u retry events, model %u", what, got_retry, c->n_exp_retry);
    if (!c->failed && got_refused != (refused_code ? 1u : 0u))
        fail(c, "%s: %u refused_read events, model %u", what, got_refused, refused_code ? 1u : 0u);
done:
    c->n_exp_new = c->n_exp_repeat = c->n_exp_skip = c->n_exp_retry = 0;
}

/* --------------------------------------------------------- executing -- */
static void expect_rc(checker *c, const char *what, CUresult got, int want)
{
    if ((int)got != want)
        fail(c, "%s returned %d, model %d", what, (int)got, want);
}

static bool is_nan_word(const uint8_t *p)
{
    float f;
    memcpy(&f, p, 4);
    return isnan(f);
}

/* Served bytes against the model; NaN words compare equal (payloads may differ). */
static void compare_bytes(checker *c, const char *what, const slot *s, uint64_t off, const uint8_t *got, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        if (got[i] == s->data[off + i])
            continue;
        uint64_t w = (off + i) & ~3ULL;
        if (w >= off && w + 4 <= off + n && w + 4 <= s->size && is_nan_word(s->data + w) &&
            is_nan_word(got + (w - off)))
            continue;
        fail(c, "%s: served byte %" PRIu64 " (offset %" PRIu64 ") is 0x%02x, model 0x%02x", what, i, off + i, got[i],
             s->data[off + i]);
        return;
    }
}

static void gen_data(uint32_t seed, uint8_t *buf, uint64_t n)
{
    uint64_t s = seed;
    unsigned mode = rnd(&s, 8);
    for (uint64_t i = 0; i < n; i += 4) {
        uint8_t w[4];
        if (mode < 4) {
            float f = (float)((int)rnd(&s, 129) - 64) / 2.0f;
            memcpy(w, &f, 4);
        } else if (mode < 7) {
            int32_t v = (int32_t)rnd(&s, 48);
            memcpy(w, &v, 4);
        } else {
            uint32_t v = (uint32_t)splitmix(&s);
            memcpy(w, &v, 4);
        }
        for (int j = 0; j < 4 && i + j < n; j++)
            buf[i + j] = w[j];
    }
}

/* Random aligned sub-range [off, off+len) of a slot; len may be 0 only if min_len is 0. */
static void pick_range(const slot *s, uint32_t r1, uint32_t r2, unsigned align, uint64_t *off, uint64_t *len)
{
    uint64_t units = s->size / align;
    if (units == 0) {
        *off = *len = 0;
        return;
    }
    uint64_t o = r1 % units;
    uint64_t max = units - o;
    uint64_t l = (r2 % 4 == 0) ? max : 1 + (r2 >> 2) % max;
    *off = o * align;
    *len = l * align;
}

/* A live slot of size bytes at base, holding fresh memory: stale bytes,
 * carrying nothing. */
static void fill_slot(slot *s, CUdeviceptr base, uint64_t size)
{
    s->live = true;
    s->base = base;
    s->size = size;
    s->data = malloc(size);
    s->taint = calloc(size, sizeof *s->taint);
    s->stale = calloc(size, 1);
    memset(s->data, FC_STALE, size);
}

/* A run of two granules mapped side by side, one allocation to cutaint
 * and one range to the driver: the slot is the whole run, so a kernel
 * pointer in the first granule reaches the second and a read across the
 * seam is checked as one.  The children ask fakecuda for small granules
 * (FAKECUDA_VMM_GRANULARITY), so the model follows every byte. */
#define MODEL_GRANULE "4096"
static size_t model_granule;

static void op_alloc_run(checker *c, int sl)
{
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED, .location = {CU_MEM_LOCATION_TYPE_DEVICE, 0}};
    if (!model_granule &&
        cuMemGetAllocationGranularity(&model_granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS)
        return;
    slot *s = &c->s[sl];
    CUdeviceptr run;
    if (cuMemAddressReserve(&run, 2 * model_granule, 0, 0, 0) != CUDA_SUCCESS)
        return;
    CUmemAccessDesc access = {.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0},
                              .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    for (int i = 0; i < 2; i++) {
        expect_rc(c, "cuMemCreate", cuMemCreate(&s->handle[i], model_granule, &prop, 0), 0);
        expect_rc(c, "cuMemMap", cuMemMap(run + i * model_granule, model_granule, 0, s->handle[i], 0), 0);
        s->mapped[i] = true;
    }
    expect_rc(c, "cuMemSetAccess", cuMemSetAccess(run, 2 * model_granule, &access, 1), 0);
    s->run = run;
    fill_slot(s, run, 2 * model_granule);
}

/* Unmap granule i of a run slot: the slot keeps the other's bytes only
 * (their claims too: an unmap carves out exactly its own). */
static void unmap_granule(checker *c, slot *s, int i)
{
    CUdeviceptr seam = s->run + model_granule;
    expect_rc(c, "cuMemUnmap", cuMemUnmap(s->run + (CUdeviceptr)i * model_granule, model_granule), 0);
    s->mapped[i] = false;
    uint64_t keep_from = i == 0 ? seam - s->base : 0, keep_to = i == 0 ? s->size : seam - s->base;
    memmove(s->data, s->data + keep_from, keep_to - keep_from);
    memmove(s->taint, s->taint + keep_from, (keep_to - keep_from) * sizeof *s->taint);
    memmove(s->stale, s->stale + keep_from, keep_to - keep_from);
    s->base += keep_from;
    s->size = keep_to - keep_from;
}

static void free_run(checker *c, slot *s)
{
    for (int i = 0; i < 2; i++) {
        if (s->mapped[i])
            expect_rc(c, "cuMemUnmap", cuMemUnmap(s->run + (CUdeviceptr)i * model_granule, model_granule), 0);
        expect_rc(c, "cuMemRelease", cuMemRelease(s->handle[i]), 0);
    }
    expect_rc(c, "cuMemAddressFree", cuMemAddressFree(s->run, 2 * model_granule), 0);
}

/* A pool's tensors: s cut into regions of r bytes, each declared. */
static void cut_into_regions(checker *c, slot *s, uint64_t r)
{
    for (uint64_t off = 0; off < s->size; off += r) {
        uint64_t len = s->size - off < r ? s->size - off : r;
        int got = CUTAINT_REGION_ALLOC(s->base + off, len);
        if (got != CUTAINT_REGION_DONE)
            fail(c, "CUTAINT_REGION_ALLOC(0x%llx, %llu) answered %d", (unsigned long long)(s->base + off),
                 (unsigned long long)len, got);
    }
    s->region = r;
}

static void op_alloc(checker *c, const op *o)
{
    int sl = -1;
    for (int i = 0; i < MAX_SLOTS; i++)
        if (!c->s[(o->r[0] + (uint32_t)i) % MAX_SLOTS].live) {
            sl = (int)((o->r[0] + (uint32_t)i) % MAX_SLOTS);
            break;
        }
    if (sl < 0)
        return;
    if (c->tid < 0 && o->r[4] % 6 == 0) {
        op_alloc_run(c, sl);
        return;
    }
    uint64_t size = 64 + (o->r[1] % 64) * 16 + ((o->r[2] % 8 == 0) ? 1 + o->r[3] % 3 : 0);
    int want = c->tid < 0 ? ct_inject_fire(&c->cfg, false, "cuMemAlloc_v2", "cuMemAlloc") : 0;
    CUdeviceptr p = 0;
    CUresult r = cuMemAlloc(&p, size);
    expect_rc(c, "cuMemAlloc", r, want); /* a failed allocation taints nothing and is no event */
    if (r != CUDA_SUCCESS)
        return;
    fill_slot(&c->s[sl], p, size);
    if (o->r[5] % 4 == 0)
        cut_into_regions(c, &c->s[sl], 16 * (1 + o->r[6] % 8));
}

/* A region given back to its pool and taken anew: a new tensor, carrying
 * nothing of the old one (its bytes are as they were). */
static void op_region(checker *c, const op *o)
{
    int sl = pick_slot(c, o->r[0]);
    if (sl < 0 || !c->s[sl].region)
        return;
    slot *s = &c->s[sl];
    uint64_t off = (o->r[1] % ((s->size + s->region - 1) / s->region)) * s->region, end = extent_end(s, off);
    int freed = CUTAINT_REGION_FREE(s->base + off), taken = CUTAINT_REGION_ALLOC(s->base + off, end - off);
    if (freed != CUTAINT_REGION_DONE || taken != CUTAINT_REGION_DONE)
        fail(c, "region anew at 0x%llx: answered %d, %d", (unsigned long long)(s->base + off), freed, taken);
    memset(s->taint + off, 0, (end - off) * sizeof *s->taint);
    memset(s->stale + off, 0, end - off);
}

static void drop_slot(slot *s)
{
    free(s->data);
    free(s->taint);
    free(s->stale);
    memset(s, 0, sizeof *s);
}

static void op_free(checker *c, const op *o)
{
    int sl = pick_slot(c, o->r[0]);
    if (sl < 0)
        return;
    slot *s = &c->s[sl];
    if (!s->run) {
        expect_rc(c, "cuMemFree", cuMemFree(s->base), 0);
    } else if (s->mapped[0] && s->mapped[1] && o->r[1] % 2) {
        unmap_granule(c, s, (int)(o->r[2] % 2)); /* one granule goes, the window keeps the other's part */
        return;
    } else {
        free_run(c, s);
    }
    drop_slot(s);
}

/* CUTAINT_INJECT's api: rules come first, before cutaint's checks: every
 * matching call counts, and one that fires fails as the rule says whatever
 * its memory carries (a tainted source is then neither refused nor
 * skipped). */
static int api_injected(checker *c, const char *api, const char *family)
{
    return c->tid < 0 ? ct_inject_fire(&c->cfg, false, api, family) : 0;
}

/* A write of exact bytes (HtoD, memset, a device copy that ran): scope,
 * inject (already counted: injected), driver, settle. */
static void write_settle(checker *c, const char *api, const char *fc_name, wrange w, int injected, CUresult got,
                         const uint8_t *bytes)
{
    unsigned pinned = pinned_by_scope(c, &w, 1);
    int want = injected;
    if (!want && c->tid < 0 && fc_name)
        want = fc_fault_fire(&c->cfg, false, fc_name);
    expect_rc(c, api, got, want);
    slot *s = &c->s[w.slot];
    if (want) {
        unsigned id = mint(c, api, NULL, want, pinned, &w, 1);
        set_taint(c, &w, 1, id);
    } else {
        memcpy(s->data + w.off, bytes, w.len);
        set_taint(c, &w, 1, 0);
    }
}

static void op_htod(checker *c, const op *o)
{
    int sl = pick_slot(c, o->r[0]);
    if (sl < 0)
        return;
    slot *s = &c->s[sl];
    uint64_t off, len;
    pick_range(s, o->r[1], o->r[2], o->r[3] % 8 == 0 ? 1 : 4, &off, &len);
    uint8_t *buf = malloc(len + 1);
    gen_data(o->r[4], buf, len);
    bool async = o->r[5] % 4 == 0;
    CUresult r = async ? cuMemcpyHtoDAsync(s->base + off, buf, len, 0) : cuMemcpyHtoD(s->base + off, buf, len);
    wrange w = {sl, off, len};
    if (async)
        write_settle(c, "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync_v2", w,
                     api_injected(c, "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync"), r, buf);
    else
        write_settle(c, "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2", w, api_injected(c, "cuMemcpyHtoD_v2", "cuMemcpyHtoD"), r,
                     buf);
    free(buf);
    check_report(c, "htod", 0, 0, NULL);
}

/* A pitched memset (cuMemsetD2D8): rows of width bytes, pitch apart, up to
 * 200 of them (past the shim's 64 rows in a call's room, to its heap).
 * Exactly its rows are written, or carry its failure; never the gaps. */
static void op_memset_2d(checker *c, const op *o, int sl)
{
    slot *s = &c->s[sl];
    uint64_t width = 1 + o->r[6] % (s->size < 48 ? s->size : 48);
    uint64_t pitch = width + o->r[7] % 40;
    uint64_t fit = (s->size - width) / pitch + 1; /* rows that fit from offset 0 */
    uint64_t rows = 1 + o->r[8] % (fit < 200 ? fit : 200);
    uint64_t room = s->size - ((rows - 1) * pitch + width);
    uint64_t off = o->r[9] % (room + 1);
    uint8_t value = (uint8_t)(0x20 + o->r[4] % 64);
    CUresult r = cuMemsetD2D8(s->base + off, pitch, value, width, rows);
    wrange *w = malloc(rows * sizeof *w);
    for (uint64_t i = 0; i < rows; i++)
        w[i] = (wrange){sl, off + i * pitch, width};
    const char *api = "cuMemsetD2D8_v2";
    int injected = api_injected(c, api, "cuMemsetD2D8");
    unsigned pinned = pinned_by_scope(c, w, (unsigned)rows);
    expect_rc(c, api, r, injected);
    if (injected) {
        set_taint(c, w, (unsigned)rows, mint(c, api, NULL, injected, pinned, w, (unsigned)rows));
    } else {
        for (uint64_t i = 0; i < rows; i++)
            memset(s->data + w[i].off, value, w[i].len);
        set_taint(c, w, (unsigned)rows, 0);
    }
    free(w);
    check_report(c, "memset 2D", 0, 0, NULL);
}

static void op_memset(checker *c, const op *o)
{
    int sl = pick_slot(c, o->r[0]);
    if (sl < 0)
        return;
    if (o->r[5] % 3 == 0) {
        op_memset_2d(c, o, sl);
        return;
    }
    slot *s = &c->s[sl];
    static const uint8_t v8[] = {0x00, 0x3f, 0x40, 0x41, 0x80, 0xc0, 0x42, 0x01};
    static const uint16_t v16[] = {0x0000, 0x3f80, 0x4000, 0x0001};
    static const float v32[] = {0.0f, 1.0f, -2.5f, 3.0f, 0.5f};
    unsigned elem = (unsigned[]){1, 2, 4}[o->r[3] % 3];
    uint64_t off, len;
    pick_range(s, o->r[1], o->r[2], elem, &off, &len);
    uint8_t *buf = malloc(len + 4);
    CUresult r;
    const char *api, *family;
    if (elem == 1) {
        uint8_t v = v8[o->r[4] % 8];
        memset(buf, v, len);
        r = cuMemsetD8(s->base + off, v, len);
        api = "cuMemsetD8_v2", family = "cuMemsetD8";
    } else if (elem == 2) {
        uint16_t v = v16[o->r[4] % 4];
        for (uint64_t i = 0; i < len; i += 2)
            memcpy(buf + i, &v, 2);
        r = cuMemsetD16(s->base + off, v, len / 2);
        api = "cuMemsetD16_v2", family = "cuMemsetD16";
    } else {
        float f = v32[o->r[4] % 5];
        uint32_t v;
        memcpy(&v, &f, 4);
        for (uint64_t i = 0; i < len; i += 4)
            memcpy(buf + i, &v, 4);
        r = cuMemsetD32(s->base + off, v, len / 4);
        api = "cuMemsetD32_v2", family = "cuMemsetD32";
    }
    write_settle(c, api, api, (wrange){sl, off, len}, api_injected(c, api, family), r, buf);
    free(buf);
    check_report(c, "memset", 0, 0, NULL);
}

static void op_dtod(checker *c, const op *o)
{
    int a = pick_slot(c, o->r[0]), b = pick_slot(c, o->r[1]);
    if (a < 0 || b < 0)
        return;
    slot *src = &c->s[a], *dst = &c->s[b];
    uint64_t so, dof, len;
    uint64_t maxlen = src->size < dst->size ? src->size : dst->size;
    len = 1 + o->r[2] % maxlen;
    so = o->r[3] % (src->size - len + 1);
    dof = o->r[4] % (dst->size - len + 1);
    if (a == b && so < dof + len && dof < so + len)
        return; /* overlapping copies are undefined */
    bool unified = o->r[5] % 4 == 0;
    const char *api = unified ? "cuMemcpy" : "cuMemcpyDtoD_v2", *family = unified ? "cuMemcpy" : "cuMemcpyDtoD";
    CUresult r =
        unified ? cuMemcpy(dst->base + dof, src->base + so, len) : cuMemcpyDtoD(dst->base + dof, src->base + so, len);
    wrange sr = {a, so, len}, dr = {b, dof, len};
    int injected = api_injected(c, api, family);
    unsigned root = injected ? 0 : oldest(c, &sr, 1);
    if (root) { /* skipped: the destination takes the same failure */
        expect_rc(c, api, r, 0);
        skipped(c, &dr, 1, root);
    } else { /* not overlapping (above), so the bytes copy like a host write's */
        write_settle(c, api, unified ? NULL : api, dr, injected, r, src->data + so);
    }
    check_report(c, "dtod", 0, 0, NULL);
}

/* True when it proved the legacy stream's blocking streams done: a
 * cuMemcpyDtoH the driver answered with success. */
static bool op_dtoh(checker *c, const op *o)
{
    int sl = pick_slot(c, o->r[0]);
    if (sl < 0)
        return false;
    slot *s = &c->s[sl];
    uint64_t off, len;
    pick_range(s, o->r[1], o->r[2], o->r[3] % 4 == 0 ? 1 : 4, &off, &len);
    uint8_t *buf = malloc(len + 1);
    memset(buf, 0x11, len);
    bool unified = o->r[5] % 5 == 0;
    const char *api = unified ? "cuMemcpy" : "cuMemcpyDtoH_v2", *family = unified ? "cuMemcpy" : "cuMemcpyDtoH";
    CUresult r =
        unified ? cuMemcpy((CUdeviceptr)(uintptr_t)buf, s->base + off, len) : cuMemcpyDtoH(buf, s->base + off, len);
    wrange rd = {sl, off, len};
    int injected = api_injected(c, api, family);
    unsigned root = injected ? 0 : oldest(c, &rd, 1);
    c->checked_reads++;
    int refused_code = 0;
    if (root) {
        c->refused_reads++;
        refused_code = c->f[root].error;
        if (c->tid >= 0) { /* ids are process-wide: only the refusal itself is checked */
            if (r == CUDA_SUCCESS)
                fail(c, "%s: read of tainted bytes served", api);
        } else {
            expect_rc(c, api, r, refused_code);
        }
        for (uint64_t i = 0; i < len && !c->failed; i++)
            if (buf[i] != POISON)
                fail(c, "%s: refused read: host byte %" PRIu64 " is 0x%02x, not poison", api, i, buf[i]);
    } else {
        int want = injected;
        expect_rc(c, api, r, want);
        /* A read that failed is a failure of its own (no device byte carries
         * it: it folds only into a live one), its host buffer poisoned. */
        if (want) {
            mint(c, api, NULL, want, 0, NULL, 0);
            for (uint64_t i = 0; i < len && !c->failed; i++)
                if (buf[i] != POISON)
                    fail(c, "%s: failed read: host byte %" PRIu64 " is 0x%02x, not poison", api, i, buf[i]);
        }
        if (!want && r == CUDA_SUCCESS)
            compare_bytes(c, api, s, off, buf, len);
    }
    free(buf);
    check_report(c, "dtoh", refused_code, root, &rd);
    return !unified && r == CUDA_SUCCESS;
}

/* ---- launches ---- */

static CUdeviceptr ptr_in(checker *c, uint32_t rs, uint32_t ro, unsigned elems_min, uint64_t *avail)
{
    int sl = pick_slot(c, rs);
    if (sl < 0)
        return 0;
    slot *s = &c->s[sl];
    uint64_t units = s->size / 4;
    if (units < elems_min)
        return 0;
    /* Never one past the end: that address is the next allocation's first
     * byte, and no one (cutaint included) can tell the two apart. */
    uint64_t span = units - elems_min + (elems_min > 0);
    if (span == 0)
        return 0;
    uint64_t o = (ro % 3 == 0) ? 0 : (ro >> 2) % span;
    *avail = extent_end(s, o * 4) / 4 - o; /* a kernel writes within its region */
    if (*avail < elems_min || *avail == 0)
        return 0;
    return s->base + o * 4;
}

static float *fview(checker *c, CUdeviceptr p)
{
    uint64_t off;
    slot *s = slot_of(c, p, &off);
    return s ? (float *)(void *)(s->data + off) : NULL;
}

/* One kernel node in a graph of its own, instantiated, launched on the
 * default stream and destroyed: cuGraphLaunch's answer. */
static CUresult launch_as_graph(checker *c, CUfunction f, unsigned grid, unsigned block, void **kp)
{
    CUgraph g;
    CUgraphNode node;
    CUgraphExec e;
    CUDA_KERNEL_NODE_PARAMS p = {.func = f,
                                 .gridDimX = grid,
                                 .gridDimY = 1,
                                 .gridDimZ = 1,
                                 .blockDimX = block,
                                 .blockDimY = 1,
                                 .blockDimZ = 1,
                                 .kernelParams = kp};
    if (cuGraphCreate(&g, 0) != CUDA_SUCCESS || cuGraphAddKernelNode(&node, g, NULL, 0, &p) != CUDA_SUCCESS ||
        cuGraphInstantiate(&e, g, 0) != CUDA_SUCCESS) {
        fail(c, "graph: could not build a graph of one kernel node");
        return CUDA_ERROR_UNKNOWN;
    }
    CUresult r = cuGraphLaunch(e, 0);
    if (cuGraphExecDestroy(e) != CUDA_SUCCESS || cuGraphDestroy(g) != CUDA_SUCCESS)
        fail(c, "graph: could not destroy");
    return r;
}

static bool describe_launch(checker *c, const op *o, launch_desc *d)
{
    unsigned k = o->r[0] % K_N;
    if (c->oracle && (o->r[0] / K_N) % 4 == 0) /* a quarter of a PTX program's launches run real code */
        k = K_SELECT;
    uint64_t av1 = 0, av2 = 0, av3 = 0;
    unsigned char *params = d->params;
    size_t *poff = d->poff, *psz = d->psz;
    unsigned np = 0;
    binding *bind = d->bind;
    unsigned nb = 0;
    int n = 0;
    float fv = (float[]){0.5f, -1.0f, 1.0f, 2.0f, 0.0f}[o->r[8] % 5];
    uint64_t threads_needed = 1;
    memset(params, 0, sizeof d->params);
#define PUT(off, v)                             \
    do {                                        \
        __typeof__(v) v_ = (v);                 \
        memcpy(params + (off), &v_, sizeof v_); \
        poff[np] = (off);                       \
        psz[np++] = sizeof v_;                  \
    } while (0)
    switch (k) {
    case K_FILL: {
        CUdeviceptr out = ptr_in(c, o->r[1], o->r[2], 0, &av1);
        if (!out)
            return false;
        n = (int)(o->r[3] % (av1 + 1));
        PUT(0, out);
        PUT(8, n);
        PUT(12, fv);
        bind[nb++] = (binding){out, true, c->ptx};
        threads_needed = (uint64_t)n;
        break;
    }
    case K_SAXPY: {
        CUdeviceptr x = ptr_in(c, o->r[1], o->r[2], 0, &av1), y = ptr_in(c, o->r[4], o->r[5], 0, &av2);
        if (!x || !y)
            return false;
        uint64_t m = av1 < av2 ? av1 : av2;
        n = (int)(o->r[3] % (m + 1));
        PUT(0, n);
        PUT(4, fv);
        PUT(8, x);
        PUT(16, y);
        bind[nb++] = (binding){x, false, false};
        bind[nb++] = (binding){y, true, false};
        threads_needed = (uint64_t)n;
        break;
    }
    case K_GATHER: {
        CUdeviceptr out = ptr_in(c, o->r[1], o->r[2], 0, &av1), in = ptr_in(c, o->r[4], o->r[5], 1, &av2),
                    idx = ptr_in(c, o->r[6], o->r[7], 0, &av3);
        if (!out || !in || !idx)
            return false;
        uint64_t m = av1 < av3 ? av1 : av3;
        n = (int)(o->r[3] % (m + 1));
        uint64_t oo, io;
        if (slot_of(c, out, &oo) == slot_of(c, idx, &io))
            return false; /* writing the indices while reading them would run off the end */
        PUT(0, out);
        PUT(8, in);
        PUT(16, idx);
        PUT(24, n);
        bind[nb++] = (binding){out, true, c->ptx};
        bind[nb++] = (binding){in, false, false};
        bind[nb++] = (binding){idx, false, false};
        threads_needed = (uint64_t)n;
        break;
    }
    case K_COPY_PAIR: {
        CUdeviceptr in = ptr_in(c, o->r[1], o->r[2], 0, &av1), out = ptr_in(c, o->r[4], o->r[5], 0, &av2);
        if (!in || !out)
            return false;
        uint64_t m = av1 < av2 ? av1 : av2;
        n = (int)(o->r[3] % (m + 1));
        /* Copied member by member into the zeroed parameters: a struct's
         * copy may leave its padding undefined, which the shim's scan of
         * the struct's words then reads (valgrind says so). */
        struct {
            CUdeviceptr in, out;
            int n;
        } pr;
        memcpy(params + offsetof(__typeof__(pr), in), &in, sizeof in);
        memcpy(params + offsetof(__typeof__(pr), out), &out, sizeof out);
        memcpy(params + offsetof(__typeof__(pr), n), &n, sizeof n);
        poff[np] = 0;
        psz[np++] = sizeof pr;
        bind[nb++] = (binding){in, true, false}; /* a pointer inside a struct: read and written */
        bind[nb++] = (binding){out, true, false};
        threads_needed = (uint64_t)n;
        break;
    }
    case K_REDUCE: {
        CUdeviceptr in = ptr_in(c, o->r[1], o->r[2], 0, &av1), out = ptr_in(c, o->r[4], o->r[5], 1, &av2);
        if (!in || !out)
            return false;
        n = (int)(o->r[3] % (av1 + 1));
        PUT(0, in);
        PUT(8, out);
        PUT(16, n);
        bind[nb++] = (binding){in, false, false};
        bind[nb++] = (binding){out, true, c->ptx};
        break;
    }
    case K_SCALE: {
        CUdeviceptr d = ptr_in(c, o->r[1], o->r[2], 0, &av1);
        if (!d)
            return false;
        n = (int)(o->r[3] % (av1 + 1));
        PUT(0, d);
        PUT(8, n);
        PUT(12, fv);
        bind[nb++] = (binding){d, true, false}; /* extern "C": read and written */
        threads_needed = (uint64_t)n;
        break;
    }
    case K_COUNT_FILL: {
        CUdeviceptr cnt = ptr_in(c, o->r[1], o->r[2], 1, &av1), out = ptr_in(c, o->r[4], o->r[5], 0, &av2);
        if (!cnt || !out)
            return false;
        PUT(0, cnt);
        PUT(8, out);
        bind[nb++] = (binding){cnt, false, false};
        bind[nb++] = (binding){out, true, c->ptx};
        break;
    }
    case K_SELECT: { /* select_fill(float *out, const int *sel, int n, float v): out[i] = v where sel[i] is odd */
        CUdeviceptr out = ptr_in(c, o->r[1], o->r[2], 0, &av1), sel = ptr_in(c, o->r[4], o->r[5], 0, &av2);
        if (!out || !sel)
            return false;
        uint64_t oo, so;
        if (slot_of(c, out, &oo) == slot_of(c, sel, &so))
            return false; /* storing into the selectors while other threads read them: no one answer */
        uint64_t m = av1 < av2 ? av1 : av2;
        n = (int)(o->r[3] % (m + 1));
        PUT(0, out);
        PUT(8, sel);
        PUT(16, n);
        PUT(20, fv);
        bind[nb++] = (binding){out, true, true}; /* its PTX only stores through it */
        bind[nb++] = (binding){sel, false, false};
        threads_needed = (uint64_t)n;
        break;
    }
    default: { /* empty(void*, void*, void*, void*): pointers may be NULL, freed or foreign */
        for (int i = 0; i < 4; i++) {
            CUdeviceptr p = 0;
            unsigned how = o->r[1 + i] % 6;
            if (how < 3)
                p = ptr_in(c, o->r[5 + i], o->r[9], 0, &av1);
            else if (how == 3) /* foreign: a host address, never inside the device arena */
                p = (CUdeviceptr)(uintptr_t)(foreign_bytes + o->r[5 + i] % sizeof foreign_bytes);
            PUT((size_t)(8 * i), p);
            if (p && how < 3 && !c->ptx) /* its PTX uses none of them */
                bind[nb++] = (binding){p, true, false};
        }
        break;
    }
    }
#undef PUT
    d->k = k;
    d->av2 = av2;
    d->np = np;
    d->nb = nb;
    d->n = n;
    d->fv = fv;
    for (unsigned i = 0; i < nb; i++) {
        uint64_t off;
        slot *s = slot_of(c, bind[i].p, &off);
        d->where[i] = s ? *s : (slot){0};
    }
    /* grid / block: valid, short (covers fewer elements), or invalid */
    unsigned block = (unsigned[]){32, 64, 128, 256}[o->r[9] % 4];
    uint64_t grid = threads_needed ? (threads_needed + block - 1) / block : 1;
    if (o->r[10] % 8 == 0 && grid > 1)
        grid--;
    unsigned smem = 0;
    bool invalid = false;
    if (o->r[10] % 29 == 1) {
        block = 2048; /* CUDA_ERROR_INVALID_VALUE from the driver at once */
        invalid = true;
    } else if (o->r[10] % 29 == 2) {
        smem = 1u << 20;
        invalid = true;
    }
    d->grid = grid;
    d->block = block;
    d->smem = smem;
    d->invalid = invalid;
    d->how = o->r[11] % 8; /* how the parameters are passed */
    return true;
}

/* The oracle line the model expects of a select_fill launch that runs:
 * the bytes of out[i] for each i < m whose selector is odd, coalesced. */
static void oracle_expect(checker *c, CUdeviceptr out, const bool *odd, uint64_t m)
{
    size_t cap = 32 + 48 * (m + 1), len = 0;
    char *line = malloc(cap);
    len += (size_t)snprintf(line, cap, "%s", k_mangled[K_SELECT]);
    for (uint64_t i = 0; i < m;) {
        if (!odd[i]) {
            i++;
            continue;
        }
        uint64_t j = i;
        while (j < m && odd[j])
            j++;
        len += (size_t)snprintf(line + len, cap - len, " 0x%llx+%llu", (unsigned long long)(out + 4 * i),
                                (unsigned long long)(4 * (j - i)));
        i = j;
    }
    if (c->n_oracle_want == c->oracle_cap) {
        c->oracle_cap = c->oracle_cap ? 2 * c->oracle_cap : 64;
        c->oracle_want = realloc(c->oracle_want, c->oracle_cap * sizeof *c->oracle_want);
    }
    c->oracle_want[c->n_oracle_want++] = line;
}

/* Every line the oracle wrote since the last look must be the next one the
 * model expects: the bytes the executor saw the kernel store are exactly
 * the bytes the model wrote (a launch that ran nowhere has no line yet). */
static void oracle_check(checker *c)
{
    if (!c->oracle || c->failed)
        return;
    FILE *f = fopen(c->oracle, "r");
    if (!f)
        return; /* nothing ran yet */
    fseek(f, c->oracle_at, SEEK_SET);
    size_t cap = 0;
    char *line = NULL;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0 && line[n - 1] == '\n') {
        line[n - 1] = '\0';
        c->oracle_at += (long)n;
        if (c->oracle_next == c->n_oracle_want) {
            fail(c, "oracle: a launch the model never made wrote: %.200s", line);
            break;
        }
        const char *want = c->oracle_want[c->oracle_next++];
        if (strcmp(line, want) != 0) {
            fail(c, "oracle: select_fill wrote [%.200s], the model expects [%.200s]", line, want);
            break;
        }
    }
    free(line);
    fclose(f);
}

static void issue_launch(checker *c, const launch_desc *d)
{
    unsigned k = d->k, np = d->np, nb = d->nb, block = d->block, smem = d->smem, how = d->how;
    uint64_t grid = d->grid;
    int n = d->n;
    float fv = d->fv;
    bool invalid = d->invalid;
    uint64_t av2 = d->av2;
    unsigned char params[64];
    memcpy(params, d->params, sizeof params);
    const size_t *poff = d->poff, *psz = d->psz;
    const binding *bind = d->bind;
    void *kp[4];
    for (unsigned i = 0; i < np; i++)
        kp[i] = params + poff[i];
    size_t bufsize = np ? poff[np - 1] + psz[np - 1] : 0;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, params, CU_LAUNCH_PARAM_BUFFER_SIZE, &bufsize,
                     CU_LAUNCH_PARAM_END};

    /* ---- the model decides before the call: ranges, inject, skip, driver ---- */
    /* out: what a success releases, then the stores (out + nrel: what a
     * failure taints too, a success only when it retries) */
    wrange in[4], out[4];
    unsigned nin = 0, nout = 0, nrel;
    for (unsigned i = 0; i < nb; i++) {
        uint64_t off;
        slot *s = slot_of(c, bind[i].p, &off);
        if (!s)
            continue;
        wrange w = {(int)(s - c->s), off, extent_end(s, off) - off};
        if (!bind[i].stored)
            in[nin++] = w;
        if (bind[i].write && !bind[i].stored)
            out[nout++] = w;
    }
    nrel = nout;
    for (unsigned i = 0; i < nb; i++) {
        uint64_t off;
        slot *s = slot_of(c, bind[i].p, &off);
        if (s && bind[i].stored)
            out[nout++] = (wrange){(int)(s - c->s), off, extent_end(s, off) - off};
    }
    /* count_fill / gather read device data to index: only launch what the model knows is in range */
    if (k == K_COUNT_FILL || k == K_GATHER) {
        CUdeviceptr ip = k == K_COUNT_FILL ? *(CUdeviceptr *)(void *)params : *(CUdeviceptr *)(void *)(params + 16);
        int cnt = k == K_COUNT_FILL ? 1 : n;
        const int32_t *iv = (const int32_t *)(const void *)fview(c, ip);
        uint64_t lim = k == K_COUNT_FILL ? av2 + 1 : av2;
        for (int i = 0; i < cnt; i++) {
            int32_t v;
            memcpy(&v, iv + i, 4);
            if (v < 0 || (uint64_t)v >= lim)
                return;
        }
    }
    /* how == 5: the launch as a graph of one kernel node, checked at
     * cuGraphLaunch like the launch (failures name cuGraphLaunch, no kernel;
     * CUTAINT_INJECT's launch rules do not count a graph's kernels, fakecuda's
     * do).  An invalid configuration is refused when the node is added. */
    bool graph = how == 5 && !invalid;
    const char *api = graph ? "cuGraphLaunch" : how == 7 ? "cuLaunchKernelEx" : "cuLaunchKernel";
    int injected = c->tid < 0 && !graph ? ct_inject_fire(&c->cfg, true, k_mangled[k], k_base[k]) : 0;
    unsigned root = injected ? 0 : oldest(c, in, nin);
    attempt key = {.fn = (uint64_t)(uintptr_t)c->fn[k], .len = bufsize, .threads = grid * block};
    memcpy(key.bytes, params, bufsize);
    unsigned retried = root && !graph && !c->lost && retries(c, &key, in, nin, out, nout) ? root : 0;
    if (retried && c->tid >= 0)
        return; /* cutaint folds failures across threads, the model does not: whether it retries is not known */
    if (retried && any_stale(c, in, nin))
        fail(c, "model: a retry of failure %u reads bytes a skip left stale", retried);
    if (retried)
        root = 0;
    int driver = 0;
    if (!injected && !root) {
        if (invalid)
            driver = CUDA_ERROR_INVALID_VALUE;
        else if (c->tid < 0)
            driver = fc_fault_fire(&c->cfg, true, k_mangled[k]);
    }

    CUresult r;
    CUfunction f = c->fn[k];
    if (graph) {
        r = launch_as_graph(c, f, (unsigned)grid, block, kp);
    } else if (how == 7) {
        CUlaunchConfig cfg = {.gridDimX = (unsigned)grid,
                              .gridDimY = 1,
                              .gridDimZ = 1,
                              .blockDimX = block,
                              .blockDimY = 1,
                              .blockDimZ = 1,
                              .sharedMemBytes = smem,
                              .hStream = 0};
        r = cuLaunchKernelEx(&cfg, f, kp, NULL);
    } else if (how == 6) {
        r = cuLaunchKernel(f, (unsigned)grid, 1, 1, block, 1, 1, smem, 0, NULL, extra);
    } else {
        r = cuLaunchKernel(f, (unsigned)grid, 1, 1, block, 1, 1, smem, 0, kp, NULL);
    }
    c->launches++;
    if (!graph) /* shim/launch.c: every launch not captured takes a number; a graph launch takes none */
        c->launch_no++;
    if (injected || driver) {
        int e = injected ? injected : driver;
        expect_rc(c, api, r, e);
        bool over_intact = footprint_intact(c, out, nout);
        unsigned id = mint(c, api, graph ? NULL : k_base[k], e, 0, NULL, 0);
        if (id && !graph) {
            refused_launch(c, id, &key, over_intact);
            c->refused = *d;
            c->has_refused = true;
        }
        set_taint(c, out, nout, id);
    } else if (root) {
        expect_rc(c, api, r, 0);
        skipped(c, out, nout, root);
    } else {
        expect_rc(c, api, r, 0);
        set_taint(c, out, nrel, 0);
        /* Stores keep what they carry, unless this launch retries it
         * (graph launches release none: docs/DESIGN.md, "Retries"). */
        unsigned stores_carry = oldest(c, out + nrel, nout - nrel);
        if (stores_carry && !graph && !c->lost && retries(c, &key, out + nrel, nout - nrel, out + nrel, nout - nrel)) {
            set_taint(c, out + nrel, nout - nrel, 0);
            if (!retried)
                retried = stores_carry;
        }
        if (retried && !graph) {
            c->exp_retry[c->n_exp_retry++] = retried;
            c->retries++;
        }
        /* run the kernel on the model's memory, exactly as fakecuda does */
        uint64_t threads = grid * block;
        uint64_t m = n <= 0 ? 0 : (uint64_t)n < threads ? (uint64_t)n : threads;
        switch (k) {
        case K_FILL: {
            float *p = fview(c, *(CUdeviceptr *)(void *)params);
            for (uint64_t i = 0; i < m; i++)
                memcpy(p + i, &fv, 4);
            break;
        }
        case K_SAXPY: {
            float *x = fview(c, *(CUdeviceptr *)(void *)(params + 8)),
                  *y = fview(c, *(CUdeviceptr *)(void *)(params + 16));
            for (uint64_t i = 0; i < m; i++) {
                float xv, yv;
                memcpy(&xv, x + i, 4);
                memcpy(&yv, y + i, 4);
                yv = fv * xv + yv;
                memcpy(y + i, &yv, 4);
            }
            break;
        }
        case K_GATHER: {
            float *outp = fview(c, *(CUdeviceptr *)(void *)params),
                  *inp = fview(c, *(CUdeviceptr *)(void *)(params + 8));
            int32_t *idx = (int32_t *)(void *)fview(c, *(CUdeviceptr *)(void *)(params + 16));
            for (uint64_t i = 0; i < m; i++) {
                int32_t v;
                memcpy(&v, idx + i, 4);
                memmove(outp + i, inp + v, 4);
            }
            break;
        }
        case K_COPY_PAIR: {
            float *ip = fview(c, *(CUdeviceptr *)(void *)params), *op_ = fview(c, *(CUdeviceptr *)(void *)(params + 8));
            if (ip && op_)
                memmove(op_, ip, m * 4);
            break;
        }
        case K_REDUCE: {
            float *ip = fview(c, *(CUdeviceptr *)(void *)params), *op_ = fview(c, *(CUdeviceptr *)(void *)(params + 8));
            double sum = 0;
            for (int i = 0; i < n; i++) {
                float v;
                memcpy(&v, ip + i, 4);
                sum += v;
            }
            float fs = (float)sum;
            memcpy(op_, &fs, 4);
            break;
        }
        case K_SCALE: {
            float *p = fview(c, *(CUdeviceptr *)(void *)params);
            for (uint64_t i = 0; i < m; i++) {
                float v;
                memcpy(&v, p + i, 4);
                v *= fv;
                memcpy(p + i, &v, 4);
            }
            break;
        }
        case K_SELECT: {
            CUdeviceptr op_ = *(CUdeviceptr *)(void *)params;
            float *p = fview(c, op_);
            const int32_t *sel = (const int32_t *)(const void *)fview(c, *(CUdeviceptr *)(void *)(params + 8));
            bool *odd = calloc(m + 1, 1);
            for (uint64_t i = 0; i < m; i++) {
                int32_t v;
                memcpy(&v, sel + i, 4);
                odd[i] = v & 1;
                if (odd[i])
                    memcpy(p + i, &fv, 4);
            }
            oracle_expect(c, op_, odd, m);
            free(odd);
            break;
        }
        case K_COUNT_FILL: {
            int32_t cnt;
            memcpy(&cnt, fview(c, *(CUdeviceptr *)(void *)params), 4);
            float *p = fview(c, *(CUdeviceptr *)(void *)(params + 8));
            for (int32_t i = 0; i < cnt; i++) {
                float v = (float)i;
                memcpy(p + i, &v, 4);
            }
            break;
        }
        default: break;
        }
    }
    check_report(c, "launch", 0, 0, NULL);
}

static void op_launch(checker *c, const op *o)
{
    launch_desc d;
    if (describe_launch(c, o, &d))
        issue_launch(c, &d);
}

/* saxpy refused writing its own x: the same failure (api, kernel, error)
 * over d's const input, so that d's retry reads it outside its outputs. */
static void refuse_over_x(checker *c, const launch_desc *d)
{
    launch_desc over = *d;
    memcpy(over.params + 16, over.params + 8, sizeof(CUdeviceptr));
    over.bind[1] = (binding){over.bind[0].p, true, false};
    over.where[1] = over.where[0];
    if (!over.invalid) {
        over.block = 2048;
        over.invalid = true;
    }
    issue_launch(c, &over);
}

/* The last launch refused at once, again (docs/DESIGN.md, "Retries"):
 * valid, with as many threads in all (a retry), with fewer (a near miss),
 * with another value (other work), after the failure reached a const input
 * of it (saxpy; a near miss), or refused once more (a retry refused
 * again).  Only while every slot it binds is the one it bound. */
static void op_retry(checker *c, const op *o)
{
    if (c->tid >= 0 || !c->has_refused)
        return;
    launch_desc d = c->refused;
    for (unsigned i = 0; i < d.nb; i++) {
        uint64_t off;
        const slot *s = slot_of(c, d.bind[i].p, &off);
        if (!s || s->base != d.where[i].base || s->size != d.where[i].size)
            return;
    }
    uint64_t threads = d.grid * d.block;
    unsigned variant = o->r[0] % 7;
    if (variant == 6 && d.k == K_SAXPY && d.how != 5 && d.how != 7) {
        refuse_over_x(c, &d);
        variant = 0;
    }
    size_t fv_at = d.k == K_FILL || d.k == K_SCALE ? 12 : d.k == K_SAXPY ? 4 : 0;
    if (variant != 5) { /* a configuration the driver takes */
        d.block = 32u << (o->r[1] % 4);
        d.grid = (threads + d.block - 1) / d.block;
        if (variant == 3 && threads > 32) {
            d.block = 32;
            d.grid = (threads - 1) / 32;
        }
        if (variant == 4 && fv_at) {
            d.fv += 1.0f;
            memcpy(d.params + fv_at, &d.fv, sizeof d.fv);
        }
        d.smem = 0;
        d.invalid = false;
        d.how = o->r[2] % 8;
    }
    issue_launch(c, &d);
}

/* ---- contexts and modules coming and going ---- */
/* Each thread's own: in threads mode every thread works in a context it
 * created and destroys, with modules it loads and unloads, so the driver
 * hands one thread's destroyed handles to another's next create or load. */
static __thread CUcontext g_ctx;
static __thread bool g_primary; /* g_ctx is the primary context, retained once */
static __thread CUmodule g_mod;

/* A module, and its kernels taken in an order of `order`'s choosing, so
 * that the handles of an unloaded module go to other kernels. */
/* fakecuda's built-in kernels as PTX whose code does what fakecuda's do
 * with their pointers (docs/IMAGES.md, "Parameter directions"): fill,
 * gather, reduce and count_fill only store through their outputs, saxpy
 * loads x and loads and stores y, copy_pair's struct is loaded from and
 * stored to, scale (extern "C") loads and stores, crash stores, empty uses
 * none. */
static const char ptx_module[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry _Z4fillPfif(.param .u64 _Z4fillPfif_param_0, .param .u32 _Z4fillPfif_param_1,"
    " .param .f32 _Z4fillPfif_param_2)\n{\n .reg .b64 %rd<4>; .reg .f32 %f<2>;\n"
    " ld.param.u64 %rd1, [_Z4fillPfif_param_0];\n ld.param.f32 %f1, [_Z4fillPfif_param_2];\n"
    " cvta.to.global.u64 %rd2, %rd1;\n st.global.f32 [%rd2], %f1;\n ret;\n}\n"
    ".visible .entry _Z5saxpyifPKfPf(.param .u32 _Z5saxpyifPKfPf_param_0, .param .f32 _Z5saxpyifPKfPf_param_1,"
    " .param .u64 _Z5saxpyifPKfPf_param_2, .param .u64 _Z5saxpyifPKfPf_param_3)\n{\n .reg .b64 %rd<5>;"
    " .reg .f32 %f<4>;\n ld.param.u64 %rd1, [_Z5saxpyifPKfPf_param_2];\n"
    " ld.param.u64 %rd2, [_Z5saxpyifPKfPf_param_3];\n cvta.to.global.u64 %rd3, %rd1;\n"
    " cvta.to.global.u64 %rd4, %rd2;\n ld.global.f32 %f1, [%rd3];\n ld.global.f32 %f2, [%rd4];\n"
    " add.f32 %f3, %f1, %f2;\n st.global.f32 [%rd4], %f3;\n ret;\n}\n"
    ".visible .entry _Z6gatherPfPKfPKii(.param .u64 _Z6gatherPfPKfPKii_param_0,"
    " .param .u64 _Z6gatherPfPKfPKii_param_1, .param .u64 _Z6gatherPfPKfPKii_param_2,"
    " .param .u32 _Z6gatherPfPKfPKii_param_3)\n{\n .reg .b64 %rd<9>; .reg .b32 %r<2>; .reg .f32 %f<2>;\n"
    " ld.param.u64 %rd1, [_Z6gatherPfPKfPKii_param_0];\n ld.param.u64 %rd2, [_Z6gatherPfPKfPKii_param_1];\n"
    " ld.param.u64 %rd3, [_Z6gatherPfPKfPKii_param_2];\n cvta.to.global.u64 %rd4, %rd3;\n"
    " ld.global.u32 %r1, [%rd4];\n cvta.to.global.u64 %rd5, %rd2;\n mul.wide.s32 %rd6, %r1, 4;\n"
    " add.s64 %rd7, %rd5, %rd6;\n ld.global.f32 %f1, [%rd7];\n cvta.to.global.u64 %rd8, %rd1;\n"
    " st.global.f32 [%rd8], %f1;\n ret;\n}\n"
    ".visible .entry _Z9copy_pair4Pair(.param .align 8 .b8 _Z9copy_pair4Pair_param_0[24])\n{\n"
    " .reg .b64 %rd<5>; .reg .f32 %f<2>;\n ld.param.u64 %rd1, [_Z9copy_pair4Pair_param_0];\n"
    " ld.param.u64 %rd2, [_Z9copy_pair4Pair_param_0+8];\n cvta.to.global.u64 %rd3, %rd1;\n"
    " cvta.to.global.u64 %rd4, %rd2;\n ld.global.f32 %f1, [%rd3];\n st.global.f32 [%rd4], %f1;\n ret;\n}\n"
    ".visible .entry _Z6reducePKfPfi(.param .u64 _Z6reducePKfPfi_param_0, .param .u64 _Z6reducePKfPfi_param_1,"
    " .param .u32 _Z6reducePKfPfi_param_2)\n{\n .reg .b64 %rd<5>; .reg .f32 %f<2>;\n"
    " ld.param.u64 %rd1, [_Z6reducePKfPfi_param_0];\n ld.param.u64 %rd2, [_Z6reducePKfPfi_param_1];\n"
    " cvta.to.global.u64 %rd3, %rd1;\n cvta.to.global.u64 %rd4, %rd2;\n ld.global.f32 %f1, [%rd3];\n"
    " st.global.f32 [%rd4], %f1;\n ret;\n}\n"
    ".visible .entry scale(.param .u64 scale_param_0, .param .u32 scale_param_1, .param .f32 scale_param_2)\n{\n"
    " .reg .b64 %rd<3>; .reg .f32 %f<4>;\n ld.param.u64 %rd1, [scale_param_0];\n"
    " ld.param.f32 %f1, [scale_param_2];\n cvta.to.global.u64 %rd2, %rd1;\n ld.global.f32 %f2, [%rd2];\n"
    " mul.f32 %f3, %f2, %f1;\n st.global.f32 [%rd2], %f3;\n ret;\n}\n"
    ".visible .entry _Z10count_fillPKiPf(.param .u64 _Z10count_fillPKiPf_param_0,"
    " .param .u64 _Z10count_fillPKiPf_param_1)\n{\n .reg .b64 %rd<5>; .reg .b32 %r<2>; .reg .f32 %f<2>;\n"
    " ld.param.u64 %rd1, [_Z10count_fillPKiPf_param_0];\n ld.param.u64 %rd2, [_Z10count_fillPKiPf_param_1];\n"
    " cvta.to.global.u64 %rd3, %rd1;\n ld.global.u32 %r1, [%rd3];\n cvt.rn.f32.s32 %f1, %r1;\n"
    " cvta.to.global.u64 %rd4, %rd2;\n st.global.f32 [%rd4], %f1;\n ret;\n}\n"
    ".visible .entry _Z5crashPf(.param .u64 _Z5crashPf_param_0)\n{\n .reg .b64 %rd<2>; .reg .f32 %f<2>;\n"
    " ld.param.u64 %rd1, [_Z5crashPf_param_0];\n mov.f32 %f1, 0f00000000;\n st.global.f32 [%rd1], %f1;\n"
    " ret;\n}\n"
    ".visible .entry _Z5emptyPvS_S_S_(.param .u64 _Z5emptyPvS_S_S__param_0, .param .u64 _Z5emptyPvS_S_S__param_1,"
    " .param .u64 _Z5emptyPvS_S_S__param_2, .param .u64 _Z5emptyPvS_S_S__param_3)\n{\n ret;\n}\n"
    /* select_fill: no built-in of that name, so the executor runs this code */
    ".visible .entry select_fill(.param .u64 out, .param .u64 sel, .param .u32 n, .param .f32 v)\n{\n"
    " .reg .pred %p<3>; .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .f32 %f<2>;\n"
    " mov.u32 %r1, %ctaid.x;\n mov.u32 %r2, %ntid.x;\n mov.u32 %r3, %tid.x;\n mad.lo.s32 %r4, %r1, %r2, %r3;\n"
    " ld.param.u32 %r5, [n];\n setp.ge.s32 %p1, %r4, %r5;\n @%p1 bra DONE;\n"
    " ld.param.u64 %rd1, [sel];\n cvta.to.global.u64 %rd2, %rd1;\n mul.wide.s32 %rd3, %r4, 4;\n"
    " add.s64 %rd4, %rd2, %rd3;\n ld.global.u32 %r6, [%rd4];\n and.b32 %r7, %r6, 1;\n"
    " setp.eq.s32 %p2, %r7, 0;\n @%p2 bra DONE;\n ld.param.u64 %rd5, [out];\n cvta.to.global.u64 %rd6, %rd5;\n"
    " add.s64 %rd7, %rd6, %rd3;\n ld.param.f32 %f1, [v];\n st.global.f32 [%rd7], %f1;\n"
    "DONE:\n ret;\n}\n";

static bool load_kernels(checker *c, uint32_t order)
{
    if (cuModuleLoadData(&g_mod, c->ptx ? (const void *)ptx_module : "fakecuda-module") != CUDA_SUCCESS)
        return false;
    unsigned start = order % K_N;
    bool backwards = (order / K_N) % 2;
    for (unsigned i = 0; i < K_N; i++) {
        unsigned k = (start + (backwards ? K_N - i : i)) % K_N;
        if (cuModuleGetFunction(&c->fn[k], g_mod, k_mangled[k]) != CUDA_SUCCESS)
            return false;
    }
    return !c->oracle || cuModuleGetFunction(&c->fn[K_SELECT], g_mod, k_mangled[K_SELECT]) == CUDA_SUCCESS;
}

/* The context goes (a created one destroyed, the primary one reset or
 * released) with all its memory, then another takes its place: created or
 * primary, with a module of its own.  A thread of threads mode has only
 * created ones: the primary context is the device's, and would go from
 * under the other threads. */
static void op_context(checker *c, const op *o)
{
    CUresult r;
    if (!g_primary)
        r = cuCtxDestroy(g_ctx);
    else if (o->r[0] % 2)
        r = cuDevicePrimaryCtxReset(0);
    else
        r = cuDevicePrimaryCtxRelease(0); /* the last reference */
    expect_rc(c, "context gone", r, 0);
    /* Its allocations go with it; virtual memory belongs to no context, and
     * its mappings (with what they carry) stay. */
    for (int i = 0; i < MAX_SLOTS; i++)
        if (c->s[i].live && !c->s[i].run)
            drop_slot(&c->s[i]);
    c->has_refused = false; /* its function is gone */
    g_primary = c->tid < 0 && o->r[1] % 2;
    r = g_primary ? cuDevicePrimaryCtxRetain(&g_ctx, 0) : cuCtxCreate(&g_ctx, NULL, 0, 0);
    if (r == CUDA_SUCCESS && g_primary)
        r = cuCtxSetCurrent(g_ctx);
    expect_rc(c, "new context", r, 0);
    if (!load_kernels(c, o->r[2]))
        fail(c, "context: the new context's module");
    check_report(c, "context", 0, 0, NULL);
}

static void op_unload(checker *c, const op *o)
{
    expect_rc(c, "cuModuleUnload", cuModuleUnload(g_mod), 0);
    c->has_refused = false; /* its function is gone */
    if (!load_kernels(c, o->r[0]))
        fail(c, "unload: the next module");
    check_report(c, "unload", 0, 0, NULL);
}

static void run_op(checker *c, const op *o)
{
    switch (o->kind) {
    case OP_ALLOC: op_alloc(c, o); break;
    case OP_FREE: op_free(c, o); break;
    case OP_HTOD: op_htod(c, o); break;
    case OP_MEMSET: op_memset(c, o); break;
    case OP_DTOD: op_dtod(c, o); break;
    case OP_LAUNCH: op_launch(c, o); break;
    case OP_DTOH: op_dtoh(c, o); break;
    case OP_CONTEXT: op_context(c, o); break;
    case OP_UNLOAD: op_unload(c, o); break;
    case OP_RETRY: op_retry(c, o); break;
    case OP_REGION: op_region(c, o); break;
    default:
        expect_rc(c, "sync", o->r[0] % 2 ? cuCtxSynchronize() : cuStreamSynchronize(0), 0);
        check_report(c, "sync", 0, 0, NULL);
        break;
    }
}

static void describe_op(const op *o, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s r=[%u %u %u %u %u %u ...]", op_names[o->kind], o->r[0], o->r[1], o->r[2], o->r[3], o->r[4],
             o->r[5]);
}

/* ---- loss programs: a crash, and the suspects the loss names ---- */
static bool loss_program(uint64_t pseed)
{
    if (getenv("REL_NO_LOSS"))
        return false;
    uint64_t s = pseed ^ 0x1055ULL;
    return rnd(&s, 10) < 3;
}

/* A proof the driver answered with success: stream -1 the context, 3 the
 * legacy stream's blocking streams (legacy and blocking), else that stream. */
static void model_prove(checker *c, int stream)
{
    for (unsigned i = 0; i < c->n_sus; i++)
        if (stream == -1 || c->sus[i].stream == stream || (stream == 3 && c->sus[i].stream != 2))
            c->sus[i].proven = true;
}

typedef struct tail_state {
    CUfunction crash_fn;
    int crash_stream;    /* -1: no crash queued */
    bool after_crash[3]; /* a launch queued on it behind crash */
} tail_state;

static void tail_launch(checker *c, tail_state *t, int st, bool crash)
{
    const char *mangled = crash ? "_Z5crashPf" : k_mangled[K_EMPTY], *base = crash ? "crash" : "empty";
    prog_cfg before = c->cfg;
    int injected = ct_inject_fire(&c->cfg, true, mangled, base);
    int driver = injected ? 0 : fc_fault_fire(&c->cfg, true, mangled);
    if ((injected || driver) && t->crash_stream >= 0) {
        /* A launch failing behind crash has the shim probe the context,
         * which may surface the loss there: not launched. */
        c->cfg = before;
        return;
    }
    CUdeviceptr z[4] = {0};
    void *kp[4] = {&z[0], &z[1], &z[2], &z[3]};
    CUresult r = cuLaunchKernel(crash ? t->crash_fn : c->fn[K_EMPTY], 1, 1, 1, 32, 1, 1, 0, c->tstream[st], kp, NULL);
    c->launches++;
    c->launch_no++;
    int e = injected ? injected : driver;
    expect_rc(c, crash ? "tail: cuLaunchKernel(crash)" : "tail: cuLaunchKernel(empty)", r, e);
    if (e) { /* failed at once: never ran, no suspect */
        mint(c, "cuLaunchKernel", base, e, 0, NULL, 0);
    } else if (c->n_sus < 64) {
        c->sus[c->n_sus++] = (struct msus){c->launch_no, st, crash, false};
        if (crash)
            t->crash_stream = st;
        else if (t->crash_stream >= 0)
            t->after_crash[st] = true;
    }
    check_report(c, crash ? "tail crash" : "tail launch", 0, 0, NULL);
}

/* Does a sync of stream st (-1: the context) drain through crash?
 * fakecuda's one queue: a stream's drain runs everything up to its last
 * item; the legacy stream's and the context's, everything. */
static bool drains_crash(const tail_state *t, int st)
{
    return t->crash_stream >= 0 && (st <= 0 || st == t->crash_stream || t->after_crash[st]);
}

/* A sync; the one that drains crash surfaces the loss, which must name
 * exactly the model's suspects.  True when the context was lost. */
static bool tail_sync(checker *c, tail_state *t, int st)
{
    bool surfaces = drains_crash(t, st);
    c->expect_loss = surfaces;
    CUresult r = st < 0 ? cuCtxSynchronize() : cuStreamSynchronize(c->tstream[st]);
    expect_rc(c, st < 0 ? "tail: cuCtxSynchronize" : "tail: cuStreamSynchronize", r,
              surfaces ? CUDA_ERROR_ILLEGAL_ADDRESS : 0);
    if (r == CUDA_SUCCESS)
        model_prove(c, st);
    check_report(c, st < 0 ? "tail ctx sync" : "tail stream sync", 0, 0, NULL);
    if (surfaces && !c->got_loss)
        fail(c, "tail: the sync that surfaced crash latched no context_lost");
    c->expect_loss = false;
    return surfaces;
}

/* The tail of a loss program (after its ops, whichever ran). */
static void loss_tail(checker *c, uint64_t pseed)
{
    uint64_t s = pseed ^ 0x7a11ULL;
    tail_state t = {.crash_stream = -1};
    expect_rc(c, "tail: cuCtxSynchronize first", cuCtxSynchronize(), 0); /* proves all before */
    check_report(c, "tail start", 0, 0, NULL);
    if (cuModuleGetFunction(&t.crash_fn, g_mod, "_Z5crashPf") != CUDA_SUCCESS ||
        cuStreamCreate(&c->tstream[1], 0) != CUDA_SUCCESS ||
        cuStreamCreate(&c->tstream[2], CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        fail(c, "tail: no crash kernel or streams");
        return;
    }
    c->tstream[0] = NULL;
    unsigned pre = rnd(&s, 9), post = rnd(&s, 5);
    for (unsigned i = 0; i < pre && !c->failed; i++) {
        unsigned w = rnd(&s, 10);
        if (w < 6) {
            tail_launch(c, &t, (int)rnd(&s, 3), false);
        } else if (w < 8) {
            tail_sync(c, &t, 1 + (int)rnd(&s, 2));
        } else if (w < 9) {
            op o = {.kind = OP_DTOH};
            for (int j = 0; j < 12; j++)
                o.r[j] = (uint32_t)splitmix(&s);
            if (op_dtoh(c, &o))
                model_prove(c, 3);
        } else {
            tail_sync(c, &t, -1);
        }
    }
    if (c->failed)
        return;
    tail_launch(c, &t, (int)rnd(&s, 3), true);
    for (unsigned i = 0; i < post && !c->failed; i++) {
        if (rnd(&s, 3) < 2) {
            tail_launch(c, &t, (int)rnd(&s, 3), false);
        } else if (tail_sync(c, &t, 1 + (int)rnd(&s, 2))) {
            c->lost = true;
            return;
        }
    }
    if (c->failed)
        return;
    int last = rnd(&s, 2) ? -1 : t.crash_stream >= 0 ? t.crash_stream : (int)rnd(&s, 3);
    c->lost = tail_sync(c, &t, last);
}

static void init_driver(checker *c)
{
    CUdevice dev;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&g_ctx, NULL, 0, dev) || !load_kernels(c, 0)) {
        fprintf(stderr, "rel_model: cannot set up the driver\n");
        exit(3);
    }
}

/* ---------------------------------------------------------- the child -- */
static int child_main(uint64_t pseed, unsigned nops, const char *keep)
{
    static checker c;
    c.tid = -1;
    bool nocheck = getenv("REL_NOCHECK") != NULL;
    c.strict_report = !nocheck;
    c.ptx = pseed % 2; /* half the programs with PTX directions */
    c.f = calloc(MAX_FAIL + 1, sizeof *c.f);
    make_cfg(pseed, &c.cfg);
    const char *rep = getenv("CUTAINT_REPORT");
    static char oracle[300];
    if (c.ptx && rep && !nocheck) { /* they also run real PTX, and read the executor's write oracle */
        snprintf(oracle, sizeof oracle, "%s.oracle", rep);
        unlink(oracle);
        setenv("FAKECUDA_PTX", "on", 1);
        setenv("FAKECUDA_WRITE_LOG", oracle, 1);
        c.oracle = oracle;
    }
    init_driver(&c);
    c.rep_fd = rep ? open(rep, O_RDONLY) : -1;
    check_report(&c, "start", 0, 0, NULL);
    op *ops = calloc(nops, sizeof *ops);
    gen_ops(pseed, nops, ops);
    bool *run = calloc(nops, 1);
    if (keep) {
        for (const char *p = keep; *p;) {
            unsigned long i = strtoul(p, (char **)&p, 10);
            if (i < nops)
                run[i] = true;
            if (*p == ',')
                p++;
            else if (*p)
                break;
        }
    } else {
        memset(run, 1, nops);
    }
    int status = 0;
    for (unsigned i = 0; i < nops && status == 0; i++) {
        if (!run[i])
            continue;
        run_op(&c, &ops[i]);
        oracle_check(&c);
        if (c.failed && nocheck) { /* kill.sh: only the event stream matters */
            c.failed = false;
            continue;
        }
        if (c.failed) {
            char d[160];
            describe_op(&ops[i], d, sizeof d);
            printf("MISMATCH op %u (%s): %s\n", i, d, c.err);
            fflush(stdout);
            status = 1;
        }
    }
    if (status == 0 && loss_program(pseed) && !nocheck) {
        loss_tail(&c, pseed);
        oracle_check(&c);
        if (c.failed) {
            char model[512];
            suspects_text(&c, model, sizeof model);
            printf("MISMATCH op %u (loss tail, model suspects [%s]): %s\n", nops, model, c.err);
            fflush(stdout);
            status = 1;
        }
    }
    if (status == 0)
        printf("OK reads=%" PRIu64 " refused=%" PRIu64 " launches=%" PRIu64 " skips=%" PRIu64 " failures=%" PRIu64
               " lost=%d retries=%" PRIu64 " oracle=%zu\n",
               c.checked_reads, c.refused_reads, c.launches, c.skips, c.failures, c.lost ? 1 : 0, c.retries,
               c.oracle_next);
    free(run);
    free(ops);
    free(c.f);
    return status;
}

/* ---------------------------------------------------------- the parent -- */
static char self_path[4096];

typedef struct child_out {
    int status; /* exit status, 128+sig */
    char line[1200];
} child_out;

static void run_child(uint64_t pseed, unsigned nops, const char *keep, child_out *out)
{
    char tmpl[] = "/tmp/rel_model.XXXXXX";
    char *dir = mkdtemp(tmpl);
    char report[256], seedarg[32], opsarg[32];
    snprintf(report, sizeof report, "%s/report.jsonl", dir);
    snprintf(seedarg, sizeof seedarg, "%" PRIu64, pseed);
    snprintf(opsarg, sizeof opsarg, "%u", nops);
    prog_cfg cfg;
    make_cfg(pseed, &cfg);
    int pfd[2];
    if (pipe(pfd) != 0)
        abort();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        rel_preload_env();
        setenv("CUTAINT_REPORT", report, 1);
        setenv("FAKECUDA_VMM_GRANULARITY", MODEL_GRANULE, 1);
        if (cfg.n_ct)
            setenv("CUTAINT_INJECT", cfg.ct_env, 1);
        else
            unsetenv("CUTAINT_INJECT");
        if (cfg.n_fc)
            setenv("FAKECUDA_FAULTS", cfg.fc_env, 1);
        else
            unsetenv("FAKECUDA_FAULTS");
        alarm(60);
        char *argv[] = {self_path, "--child", seedarg, "--ops", opsarg, keep ? "--keep" : NULL, (char *)keep, NULL};
        execv(self_path, argv);
        _exit(127);
    }
    close(pfd[1]);
    size_t len = 0;
    ssize_t n;
    char buf[4096];
    out->line[0] = '\0';
    while ((n = read(pfd[0], buf, sizeof buf)) > 0) {
        size_t take = (size_t)n < sizeof out->line - 1 - len ? (size_t)n : sizeof out->line - 1 - len;
        memcpy(out->line + len, buf, take);
        len += take;
    }
    out->line[len] = '\0';
    char *nl = strchr(out->line, '\n');
    if (nl)
        *nl = '\0';
    close(pfd[0]);
    int st;
    waitpid(pid, &st, 0);
    out->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) { /* best effort */
    }
}

/* A program passed: the child said OK, and exited with 70 (cutaint's, for
 * a lost context) iff it said its context was lost, else 0. */
static bool child_ok(const child_out *co)
{
    if (strncmp(co->line, "OK ", 3) != 0)
        return false;
    return co->status == (strstr(co->line, " lost=1") ? 70 : 0);
}

/* ddmin over the op indices that run. */
static unsigned minimise(uint64_t pseed, unsigned nops, unsigned *keep, unsigned nkeep)
{
    unsigned gran = 2, runs = 0;
    char *list = malloc((size_t)nops * 12 + 16);
    unsigned *cand = malloc(sizeof *cand * nops);
    while (nkeep >= 2 && runs < 400) {
        unsigned chunk = (nkeep + gran - 1) / gran;
        bool reduced = false;
        for (unsigned start = 0; start < nkeep && runs < 400; start += chunk) {
            /* complement of [start, start+chunk) */
            unsigned nc = 0;
            for (unsigned i = 0; i < nkeep; i++)
                if (i < start || i >= start + chunk)
                    cand[nc++] = keep[i];
            size_t len = 0;
            list[0] = '\0';
            for (unsigned i = 0; i < nc; i++)
                len += (size_t)sprintf(list + len, "%s%u", i ? "," : "", cand[i]);
            child_out co;
            run_child(pseed, nops, list, &co);
            runs++;
            if (!child_ok(&co)) {
                memcpy(keep, cand, sizeof *cand * nc);
                nkeep = nc;
                gran = gran > 2 ? gran - 1 : 2;
                reduced = true;
                break;
            }
        }
        if (!reduced) {
            if (gran >= nkeep)
                break;
            gran = gran * 2 < nkeep ? gran * 2 : nkeep;
        }
    }
    free(list);
    free(cand);
    return nkeep;
}

/* ---------------------------------------------------------- threads -- */
typedef struct tctx {
    int tid, nthreads;
    uint64_t seed;
    unsigned nops;
    checker *c;
    CUdeviceptr contended;
    uint64_t contended_size;
    CUcontext shared_ctx; /* the main thread's, holding the shared buffers */
    atomic_uint_fast64_t *provisional_refusals;
} tctx;

static void *thread_main(void *arg)
{
    tctx *t = arg;
    checker *c = t->c;
    if (cuCtxCreate(&g_ctx, NULL, 0, 0) != CUDA_SUCCESS || !load_kernels(c, (uint32_t)t->seed)) {
        fail(c, "thread %d: its context and module", t->tid);
        return NULL;
    }
    op *ops = calloc(t->nops, sizeof *ops);
    gen_ops(t->seed, t->nops, ops);
    uint64_t s = t->seed ^ 0x5eed;
    uint8_t *buf = malloc(t->contended_size > c->shared_const_size ? t->contended_size : c->shared_const_size);
    for (unsigned i = 0; i < t->nops && !c->failed; i++) {
        unsigned what = rnd(&s, 10);
        if (what == 0) { /* the shared, never-written buffer: never refused, exact */
            CUresult r = cuMemcpyDtoH(buf, c->shared_const, c->shared_const_size);
            c->checked_reads++;
            if (r != CUDA_SUCCESS)
                fail(c, "thread %d: read of the shared const buffer returned %d", t->tid, (int)r);
            else if (memcmp(buf, c->shared_const_data, c->shared_const_size) != 0)
                fail(c, "thread %d: shared const buffer bytes differ", t->tid);
        } else if (what == 1) { /* saxpy with the shared buffer as its const input */
            int sl = pick_slot(c, (uint32_t)splitmix(&s));
            if (sl < 0)
                continue;
            uint64_t extent = extent_end(&c->s[sl], 0); /* y's, to cutaint: its region when it has one */
            int n = (int)(extent / 4 < c->shared_const_size / 4 ? extent / 4 : c->shared_const_size / 4);
            float a = 1.0f;
            CUdeviceptr x = c->shared_const, y = c->s[sl].base;
            void *kp[] = {&n, &a, &x, &y};
            wrange w = {sl, 0, extent};
            unsigned root = oldest(c, &w, 1);
            CUresult r = cuLaunchKernel(c->fn[K_SAXPY], (unsigned)(n + 63) / 64, 1, 1, 64, 1, 1, 0, 0, kp, NULL);
            if (r != CUDA_SUCCESS)
                fail(c, "thread %d: saxpy with shared input returned %d", t->tid, (int)r);
            if (root) /* skipped: y takes the failure; ran: y is written */
                skipped(c, &w, 1, root);
            else
                set_taint(c, &w, 1, 0);
            if (!root) {
                for (int i = 0; i < n; i++) {
                    float xv, yv;
                    memcpy(&xv, c->shared_const_data + 4 * i, 4);
                    memcpy(&yv, c->s[sl].data + 4 * i, 4);
                    yv = a * xv + yv;
                    memcpy(c->s[sl].data + 4 * i, &yv, 4);
                }
            }
        } else if (what == 2) { /* contended buffer: exact-byte writes and reads by every thread */
            /* In the context that owns it: its one queue orders the threads'
             * work on it, as the driver's would; from their own contexts
             * fakecuda's workers would write it at once. */
            uint32_t v = 0x01010101u * (uint32_t)(t->tid + 1);
            CUcontext popped = NULL;
            if (cuCtxPushCurrent(t->shared_ctx) != CUDA_SUCCESS)
                fail(c, "thread %d: cuCtxPushCurrent of the shared context", t->tid);
            else if (rnd(&s, 2)) {
                CUresult r = cuMemsetD32(t->contended, v, t->contended_size / 4);
                if (r != CUDA_SUCCESS)
                    fail(c, "thread %d: memset of the contended buffer returned %d", t->tid, (int)r);
            } else {
                CUresult r = cuMemcpyDtoH(buf, t->contended, t->contended_size);
                c->checked_reads++;
                if (r == CUDA_ERROR_UNKNOWN) {
                    /* another thread's write was in flight over these bytes */
                    atomic_fetch_add(t->provisional_refusals, 1);
                } else if (r != CUDA_SUCCESS) {
                    fail(c, "thread %d: contended read returned %d", t->tid, (int)r);
                } else {
                    for (uint64_t i = 0; i < t->contended_size; i += 4) {
                        uint32_t w;
                        memcpy(&w, buf + i, 4);
                        if (w != 0 && (w % 0x01010101u != 0 || w / 0x01010101u > (uint32_t)t->nthreads)) {
                            fail(c, "thread %d: contended word 0x%08x was never written", t->tid, w);
                            break;
                        }
                    }
                }
            }
            if (!c->failed && (cuCtxPopCurrent(&popped) != CUDA_SUCCESS || popped != t->shared_ctx))
                fail(c, "thread %d: cuCtxPopCurrent of the shared context", t->tid);
        } else {
            run_op(c, &ops[i]);
        }
        if (c->failed) {
            char d[160];
            describe_op(&ops[i], d, sizeof d);
            fprintf(stderr, "thread %d (tid %ld) op %u (%s): %s\n", t->tid, (long)syscall(SYS_gettid), i, d, c->err);
        }
    }
    free(buf);
    free(ops);
    for (int i = 0; i < MAX_SLOTS; i++)
        if (c->s[i].live)
            cuMemFree(c->s[i].base);
    cuCtxDestroy(g_ctx);
    return NULL;
}

static int threads_main(int nthreads, uint64_t seed, unsigned nops)
{
    static checker base;
    init_driver(&base);
    /* shared buffers */
    CUdeviceptr shared, contended;
    uint64_t ssize = 1024, csize = 512;
    uint8_t *sdata = malloc(ssize);
    for (uint64_t i = 0; i < ssize; i += 4) { /* finite floats only */
        float f = (float)(i % 17);
        memcpy(sdata + i, &f, 4);
    }
    if (cuMemAlloc(&shared, ssize) || cuMemcpyHtoD(shared, sdata, ssize) || cuMemAlloc(&contended, csize) ||
        cuMemsetD8(contended, 0, csize)) {
        fprintf(stderr, "rel_model: shared buffers\n");
        return 3;
    }
    pthread_t th[64];
    tctx tc[64];
    checker *cs = calloc((size_t)nthreads, sizeof *cs);
    atomic_uint_fast64_t prov = 0;
    for (int i = 0; i < nthreads; i++) {
        cs[i] = base;
        cs[i].tid = i;
        cs[i].strict_report = false;
        cs[i].rep_fd = -1;
        cs[i].f = calloc(MAX_FAIL + 1, sizeof *cs[i].f);
        cs[i].shared_const = shared;
        cs[i].shared_const_size = ssize;
        cs[i].shared_const_data = sdata;
        cs[i].ptx = i % 2; /* half the threads' modules with PTX directions */
        tc[i] = (tctx){i, nthreads, seed * 1000003u + (uint64_t)i, nops, &cs[i], contended, csize, g_ctx, &prov};
        pthread_create(&th[i], NULL, thread_main, &tc[i]);
    }
    int rc = 0;
    uint64_t reads = 0, refused = 0, launches = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        reads += cs[i].checked_reads;
        refused += cs[i].refused_reads;
        launches += cs[i].launches;
        if (cs[i].failed)
            rc = 1;
    }
    printf("threads=%d ops/thread=%u seed=%" PRIu64 " reads=%" PRIu64 " refused=%" PRIu64 " launches=%" PRIu64
           " contended-refusals(in-flight write)=%" PRIu64 " %s\n",
           nthreads, nops, seed, reads, refused, launches, (uint64_t)prov, rc ? "FAILED" : "OK");
    return rc;
}

/* ------------------------------------------------------------- main -- */
static unsigned long env_num(const char *name, unsigned long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoul(v, NULL, 0) : dflt;
}

int main(int argc, char **argv)
{
    unsigned long programs = env_num("REL_PROGRAMS", 200), nops = env_num("REL_OPS", 200);
    unsigned long threads = env_num("REL_THREADS", 0);
    uint64_t seed = env_num("REL_SEED", 0);
    if (seed == 0)
        seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    const char *child = NULL, *keep = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--programs") && i + 1 < argc)
            programs = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--ops") && i + 1 < argc)
            nops = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--child") && i + 1 < argc)
            child = argv[++i];
        else if (!strcmp(argv[i], "--keep") && i + 1 < argc)
            keep = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--programs N] [--ops M] [--seed S] [--threads T]\n", argv[0]);
            return 2;
        }
    }
    if (child)
        return child_main(strtoull(child, NULL, 0), (unsigned)nops, keep);
    if (threads) {
        if (!getenv("REL_PRELOADED")) { /* re-exec under the shim */
            rel_preload_env();
            setenv("REL_PRELOADED", "1", 1);
            char sarg[32];
            snprintf(sarg, sizeof sarg, "%" PRIu64, seed);
            setenv("REL_SEED", sarg, 1);
            char targ[32], oarg[32];
            snprintf(targ, sizeof targ, "%lu", threads);
            snprintf(oarg, sizeof oarg, "%lu", nops);
            execl("/proc/self/exe", argv[0], "--threads", targ, "--ops", oarg, (char *)NULL);
            perror("exec");
            return 3;
        }
        if (threads > 64)
            threads = 64;
        printf("rel_model threads: REL_SEED=%" PRIu64 "\n", seed);
        int rc = threads_main((int)threads, seed, (unsigned)nops);
        return rc;
    }
    if (getenv("REL_SOAK"))
        programs *= 50;
    ssize_t l = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (l <= 0)
        return 3;
    self_path[l] = '\0';
    printf("rel_model: REL_SEED=%" PRIu64 " programs=%lu ops=%lu\n", seed, programs, nops);
    fflush(stdout);
    uint64_t reads = 0, refused = 0, launches = 0, skips = 0, failures = 0, lost = 0, retries = 0, oracle = 0;
    for (unsigned long p = 0; p < programs; p++) {
        uint64_t ps = seed * 0x100000001b3ULL + p + 1;
        child_out co;
        run_child(ps, (unsigned)nops, NULL, &co);
        if (!child_ok(&co)) {
            prog_cfg cfg;
            make_cfg(ps, &cfg);
            printf("FAIL program %lu (program seed %" PRIu64 ", status %d): %s\n  CUTAINT_INJECT='%s' "
                   "FAKECUDA_FAULTS='%s'\n",
                   p, ps, co.status, co.line, cfg.ct_env, cfg.fc_env);
            unsigned *keepv = malloc(sizeof *keepv * nops);
            unsigned nk = 0;
            unsigned last = (unsigned)nops;
            if (sscanf(co.line, "MISMATCH op %u", &last) != 1)
                last = (unsigned)nops - 1;
            for (unsigned i = 0; i <= last && i < nops; i++)
                keepv[nk++] = i;
            nk = minimise(ps, (unsigned)nops, keepv, nk);
            op *ops = calloc(nops, sizeof *ops);
            gen_ops(ps, (unsigned)nops, ops);
            printf("minimised to %u ops:\n", nk);
            char *list = malloc((size_t)nops * 12 + 1);
            size_t len = 0;
            list[0] = '\0';
            for (unsigned i = 0; i < nk; i++) {
                char d[160];
                describe_op(&ops[keepv[i]], d, sizeof d);
                printf("  #%u %s\n", keepv[i], d);
                len += (size_t)sprintf(list + len, "%s%u", i ? "," : "", keepv[i]);
            }
            run_child(ps, (unsigned)nops, list, &co);
            const char *sched = getenv("FAKECUDA_SCHEDULE");
            printf("  -> %s\nreplay: LD_PRELOAD=%s LD_LIBRARY_PATH=%s CUTAINT_REPORT=/tmp/r.jsonl CUTAINT_LOG=off "
                   "FAKECUDA_VMM_GRANULARITY=" MODEL_GRANULE " FAKECUDA_SCHEDULE=%s %s"
                   "CUTAINT_INJECT='%s' FAKECUDA_FAULTS='%s' %s --child %" PRIu64 " --ops %lu --keep %s\n",
                   co.line, REL_SHIM, REL_FAKECUDA_DIR, sched ? sched : "async",
                   getenv("REL_NO_LOSS") ? "REL_NO_LOSS=1 " : "", cfg.ct_env, cfg.fc_env, self_path, ps, nops, list);
            return 1;
        }
        unsigned long a, b, cc, d, e, f, g, h;
        if (sscanf(co.line,
                   "OK reads=%lu refused=%lu launches=%lu skips=%lu failures=%lu lost=%lu retries=%lu oracle=%lu", &a,
                   &b, &cc, &d, &e, &f, &g, &h) == 8) {
            oracle += h;
            lost += f;
            retries += g;
            reads += a;
            refused += b;
            launches += cc;
            skips += d;
            failures += e;
        }
    }
    printf("rel_model: %lu programs x %lu ops OK: %" PRIu64 " reads checked (%" PRIu64 " refused), %" PRIu64
           " launches, %" PRIu64 " skips, %" PRIu64 " retries, %" PRIu64 " failures, %" PRIu64
           " contexts lost (suspects checked), %" PRIu64 " real PTX launches' writes checked against the oracle\n",
           programs, nops, reads, refused, launches, skips, retries, failures, lost, oracle);
    return 0;
}
