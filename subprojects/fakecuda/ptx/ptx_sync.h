/*
 * ptx_sync.h: the PTX executor's synchronisation objects beyond bar.sync,
 * kept apart from the instruction loop (ptx_exec.c calls these hooks):
 * - mbarrier: the 8-byte object a kernel keeps in shared memory (its
 *   layout is ours; PTX calls it opaque), changed by one lane's operation
 *   at a time (ptx_mbarrier_apply);
 * - the grid of a cooperative launch: every block resident at once, each
 *   on a thread of its own that runs only while it holds the grid's baton
 *   (one block at a time, in turn), and the grid workspace that
 *   cooperative groups' grid sync finds through %envreg1:%envreg2.
 * Invariants: an mbarrier's pending count never exceeds its expected
 * count; exactly one block of a grid runs at any moment; a block hands the
 * baton on only at a polling point (ptx_grid_yield) or at its end.
 */
#ifndef FC_PTX_SYNC_H
#define FC_PTX_SYNC_H

#include <stdbool.h>
#include <stdint.h>

/* mbarrier operations (ptx_insn.sub) and flags (ptx_insn.sub2). */
typedef enum ptx_mbar_op {
    PMB_INIT = 1,
    PMB_ARRIVE,
    PMB_ARRIVE_DROP,
    PMB_EXPECT_TX,
    PMB_COMPLETE_TX,
    PMB_TEST_WAIT,
    PMB_TRY_WAIT,
    PMB_PENDING_COUNT,
    PMB_INVAL,
    PMB_CP_ARRIVE,       /* cp.async.mbarrier.arrive */
    PMB_CP_ARRIVE_NOINC, /* cp.async.mbarrier.arrive.noinc */
} ptx_mbar_op;

enum { PMBF_PARITY = 1u, PMBF_EXPECT_TX = 2u };

/* The operand index of the object's address for op (-1: none). */
int ptx_mbarrier_addr_operand(int op);

/* Applies one lane's operation op (flags PMBF_*) to the object *obj with
   its operand arg (count, tx-count, state or parity; 1 when the
   instruction has none): *out is the destination's value (a state, a
   wait's completion, a pending count). NULL, or why the use is invalid. */
const char *ptx_mbarrier_apply(int op, unsigned flags, uint64_t *obj, uint64_t arg, uint64_t *out);

/* ---- cooperative grids ---- */

typedef struct ptx_grid ptx_grid;

/* Runs block(arg_i) for each of n blocks, every one resident at once, one
   running at a time; args are n pointers. False when the threads could not
   be made (nothing ran). */
bool ptx_grid_run(unsigned n, void (*block)(void *arg, ptx_grid *g), void **args);

/* The running block hands the baton to the next live block and waits for
   its turn again (a polling point: a spin on memory, nanosleep, a failed
   mbarrier wait). */
void ptx_grid_yield(ptx_grid *g);

/* Set by a block that faulted: every other block stops at its next yield. */
void ptx_grid_fail(ptx_grid *g, int fault);
int ptx_grid_fault(const ptx_grid *g);

/* The grid workspace's bytes at offset off (n bytes), or NULL outside it. */
unsigned char *ptx_grid_workspace(ptx_grid *g, uint64_t off, unsigned n);
#define PTX_GRID_WORKSPACE_BYTES 16u

#endif
