/*
 * ptx_sync.c: mbarrier objects and cooperative grids for the PTX executor
 * (ptx_sync.h says what each keeps). Written from NVIDIA's PTX ISA
 * document (mbarrier, cp.async.mbarrier.arrive, %envreg).
 *
 * An mbarrier object, as fakecuda lays out its 64 bits: pending arrivals
 * (bits 0-20), expected arrivals (21-41), the transaction count (42-62, a
 * 21-bit two's complement number) and the current phase's parity (63). The
 * phase completes when no arrival and no transaction is pending: the
 * parity flips and the pending count is the expected count again. A state
 * that an arrive returns is the object as it was before that arrive, so a
 * wait on it is complete once the parity differs.
 *
 * A cooperative grid runs each block on a thread of its own, all resident,
 * and passes one baton among them: a block runs until a polling point,
 * then the next live block in turn runs, so a block spinning on a word that
 * another block will write lets that block run (the GPU runs them at once;
 * the order of what they do in between is one of a GPU's).
 */
#include "ptx_sync.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MB_FIELD_BITS 21u
#define MB_FIELD_MASK ((1ull << MB_FIELD_BITS) - 1)
#define MB_MAX_COUNT ((1u << 20) - 1u)

typedef struct mbar {
    uint32_t pending, expected;
    int32_t tx;
    unsigned phase;
} mbar;

static mbar mb_read(uint64_t v)
{
    uint32_t tx = (uint32_t)(v >> (2 * MB_FIELD_BITS)) & MB_FIELD_MASK;
    return (mbar){.pending = (uint32_t)(v & MB_FIELD_MASK),
                  .expected = (uint32_t)(v >> MB_FIELD_BITS) & MB_FIELD_MASK,
                  .tx = (tx & (1u << (MB_FIELD_BITS - 1))) ? (int32_t)tx - (int32_t)(1u << MB_FIELD_BITS) : (int32_t)tx,
                  .phase = (unsigned)(v >> 63)};
}

static uint64_t mb_write(mbar b)
{
    return (uint64_t)b.pending | (uint64_t)b.expected << MB_FIELD_BITS |
           ((uint64_t)(uint32_t)b.tx & MB_FIELD_MASK) << (2 * MB_FIELD_BITS) | (uint64_t)b.phase << 63;
}

static void mb_complete_if_done(mbar *b)
{
    if (b->pending == 0 && b->tx == 0) {
        b->phase ^= 1u;
        b->pending = b->expected;
    }
}

static const char *mb_arrive(mbar *b, uint64_t count, bool drop)
{
    if (count == 0 || count > b->pending)
        return "mbarrier arrive with more arrivals than are pending (or on an object never initialised)";
    if (drop)
        b->expected -= (uint32_t)count;
    b->pending -= (uint32_t)count;
    mb_complete_if_done(b);
    return NULL;
}

static const char *mb_tx(mbar *b, int64_t delta)
{
    int64_t tx = (int64_t)b->tx + delta;
    if (tx > (int64_t)MB_MAX_COUNT || tx < -(int64_t)MB_MAX_COUNT)
        return "mbarrier transaction count out of range";
    b->tx = (int32_t)tx;
    return NULL;
}

int ptx_mbarrier_addr_operand(int op)
{
    switch (op) {
    case PMB_INIT:
    case PMB_EXPECT_TX:
    case PMB_COMPLETE_TX:
    case PMB_INVAL:
    case PMB_CP_ARRIVE:
    case PMB_CP_ARRIVE_NOINC: return 0;
    case PMB_PENDING_COUNT: return -1;
    default: return 1;
    }
}

const char *ptx_mbarrier_apply(int op, unsigned flags, uint64_t *obj, uint64_t arg, uint64_t *out)
{
    if (op == PMB_PENDING_COUNT) {
        *out = mb_read(arg).pending;
        return NULL;
    }
    mbar b = mb_read(*obj);
    const char *err = NULL;
    *out = *obj;
    switch (op) {
    case PMB_INIT:
        if (arg == 0 || arg > MB_MAX_COUNT)
            return "mbarrier.init with a count outside 1 to 2^20-1";
        b = (mbar){.pending = (uint32_t)arg, .expected = (uint32_t)arg};
        break;
    case PMB_ARRIVE:
    case PMB_ARRIVE_DROP:
        if (flags & PMBF_EXPECT_TX) { /* arrive.expect_tx: the operand is the tx-count, one arrival */
            err = mb_tx(&b, (int64_t)(uint32_t)arg);
            arg = 1;
        }
        if (!err)
            err = mb_arrive(&b, arg, op == PMB_ARRIVE_DROP);
        break;
    case PMB_EXPECT_TX: err = mb_tx(&b, (int64_t)(uint32_t)arg); break;
    case PMB_COMPLETE_TX:
        err = mb_tx(&b, -(int64_t)(uint32_t)arg);
        if (!err)
            mb_complete_if_done(&b);
        break;
    case PMB_TEST_WAIT:
    case PMB_TRY_WAIT: {
        unsigned waited = (flags & PMBF_PARITY) ? (unsigned)(arg & 1u) : (unsigned)(arg >> 63);
        *out = b.phase != waited;
        return NULL;
    }
    case PMB_INVAL: b = (mbar){0}; break;
    case PMB_CP_ARRIVE: /* pending + 1, then the copies' arrive: they are complete already */ return NULL;
    case PMB_CP_ARRIVE_NOINC: err = mb_arrive(&b, 1, false); break;
    default: return "mbarrier operation not supported";
    }
    if (err)
        return err;
    *obj = mb_write(b);
    return NULL;
}

/* ---- cooperative grids ---------------------------------------------------------------------- */

struct ptx_grid {
    pthread_mutex_t lock;
    pthread_cond_t *turn_came; /* one per block: only the block handed the baton wakes */
    unsigned n, turn;          /* the block that holds the baton */
    bool *done;
    int fault;
    bool cancelled; /* not every thread could be made: no block runs */
    void (*block)(void *arg, ptx_grid *g);
    void **args;
    unsigned char workspace[PTX_GRID_WORKSPACE_BYTES];
};

typedef struct grid_block {
    ptx_grid *g;
    unsigned index;
} grid_block;

/* Under the lock: hands the baton from block i to the next live one. */
static void pass_baton(ptx_grid *g, unsigned i)
{
    for (unsigned k = 1; k <= g->n; k++) {
        unsigned j = (i + k) % g->n;
        if (!g->done[j]) {
            g->turn = j;
            pthread_cond_signal(&g->turn_came[j]);
            return;
        }
    }
}

static void wait_turn(ptx_grid *g, unsigned i)
{
    while (g->turn != i)
        pthread_cond_wait(&g->turn_came[i], &g->lock);
}

static _Thread_local unsigned grid_self; /* the block this thread runs */

static void *block_thread(void *p)
{
    grid_block *b = p;
    ptx_grid *g = b->g;
    grid_self = b->index;
    pthread_mutex_lock(&g->lock);
    wait_turn(g, b->index);
    pthread_mutex_unlock(&g->lock);
    if (!g->cancelled)
        g->block(g->args[b->index], g);
    pthread_mutex_lock(&g->lock);
    g->done[b->index] = true;
    pass_baton(g, b->index);
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

void ptx_grid_yield(ptx_grid *g)
{
    pthread_mutex_lock(&g->lock);
    pass_baton(g, grid_self);
    wait_turn(g, grid_self);
    pthread_mutex_unlock(&g->lock);
}

void ptx_grid_fail(ptx_grid *g, int fault)
{
    if (!g->fault) /* read and written by the baton's holder only */
        g->fault = fault;
}

int ptx_grid_fault(const ptx_grid *g)
{
    return g->fault;
}

unsigned char *ptx_grid_workspace(ptx_grid *g, uint64_t off, unsigned n)
{
    return off + n <= sizeof g->workspace && off + n > off ? g->workspace + off : NULL;
}

bool ptx_grid_run(unsigned n, void (*block)(void *arg, ptx_grid *g), void **args)
{
    ptx_grid g = {.n = n, .block = block, .args = args};
    pthread_t *t = calloc(n, sizeof *t);
    grid_block *b = calloc(n, sizeof *b);
    g.done = calloc(n, sizeof *g.done);
    g.turn_came = calloc(n, sizeof *g.turn_came);
    bool ok = t && b && g.done && g.turn_came, conds = ok;
    pthread_mutex_init(&g.lock, NULL);
    for (unsigned i = 0; conds && i < n; i++)
        pthread_cond_init(&g.turn_came[i], NULL);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)1 << 20);
    pthread_mutex_lock(&g.lock); /* no block runs before all exist */
    unsigned made = 0;
    while (ok && made < n) {
        b[made] = (grid_block){&g, made};
        if (pthread_create(&t[made], &attr, block_thread, &b[made]) != 0)
            ok = false;
        else
            made++;
    }
    if (!ok && g.done) /* the made ones run nothing; the others never existed */
        for (unsigned i = made; i < n; i++)
            g.done[i] = true;
    g.cancelled = !ok;
    g.turn = 0;
    if (made)
        pthread_cond_signal(&g.turn_came[0]);
    pthread_mutex_unlock(&g.lock);
    for (unsigned i = 0; i < made; i++)
        pthread_join(t[i], NULL);
    pthread_attr_destroy(&attr);
    for (unsigned i = 0; conds && i < n; i++)
        pthread_cond_destroy(&g.turn_came[i]);
    free(g.turn_came);
    pthread_mutex_destroy(&g.lock);
    free(t);
    free(b);
    free(g.done);
    return ok;
}
