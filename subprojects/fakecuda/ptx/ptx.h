/*
 * ptx.h: fakecuda's PTX executor, as the rest of fakecuda sees it.
 *
 * fc_ptx_parse decodes a module's PTX text once (ptx_parse.c); a kernel of
 * it then runs, at a sync point, through the kernel-plugin ABI
 * (fakecuda_kernel.h): fc_ptx_launch is a fakecuda_kernel_fn whose user
 * pointer is a fc_ptx_kernel. It reaches device memory only through the
 * launch's device() mapping, and depends on nothing else of fakecuda.
 * Invariants: a parsed module is read-only until fc_ptx_free, so launches
 * on several threads may share it; a launch returns FAKECUDA_KERNEL_OK or
 * one fault code (FC_PTX_* or the ABI's), never crashes the host on a bad
 * address.
 * Asserted in: ptx_exec.c.
 */
#ifndef FC_PTX_H
#define FC_PTX_H

#include "../fakecuda_kernel.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fc_ptx_module fc_ptx_module;

/* The faults a launch returns beyond the ABI's (CUresult values). */
#define FC_PTX_ASSERT 710              /* CUDA_ERROR_ASSERT */
#define FC_PTX_ILLEGAL_INSTRUCTION 715 /* CUDA_ERROR_ILLEGAL_INSTRUCTION */
#define FC_PTX_TIMEOUT 702             /* CUDA_ERROR_LAUNCH_TIMEOUT: past FAKECUDA_PTX_STEPS */

/* The text's module, or NULL with the reason in err. */
fc_ptx_module *fc_ptx_parse(const char *text, size_t n, char *err, size_t errlen);
void fc_ptx_free(fc_ptx_module *m);

/* The module's kernels (.entry functions with a body), by index i < count. */
unsigned fc_ptx_kernel_count(const fc_ptx_module *m);
/* Kernel i's name, its parameters' count and layout (offsets and sizes). */
const char *fc_ptx_kernel_name(const fc_ptx_module *m, unsigned i);
unsigned fc_ptx_kernel_params(const fc_ptx_module *m, unsigned i, struct fakecuda_param *out, unsigned max);

/* The module's .global and .const variables, which fakecuda places in
   device memory before any launch: count, then each one's name, size and
   initial bytes (NULL for zeros), and where it was placed. */
unsigned fc_ptx_var_count(const fc_ptx_module *m);
bool fc_ptx_var(const fc_ptx_module *m, unsigned i, const char **name, uint64_t *size, const unsigned char **init);
void fc_ptx_var_place(fc_ptx_module *m, unsigned i, uint64_t device_address);

/* What a launch's user pointer names. */
typedef struct fc_ptx_kernel {
    const fc_ptx_module *module;
    unsigned func; /* index of the .entry among the module's functions */
} fc_ptx_kernel;

/* Kernel i as a launchable: fills k. */
void fc_ptx_kernel_at(const fc_ptx_module *m, unsigned i, fc_ptx_kernel *k);

/* Runs one launch of the kernel launch->user names (a fc_ptx_kernel). */
int fc_ptx_launch(const struct fakecuda_launch *launch);
/* The same for a cooperative launch: every block resident at once, and
   the grid workspace cooperative groups' grid sync uses (ptx_sync.h). */
int fc_ptx_launch_cooperative(const struct fakecuda_launch *launch);

/* The byte size of a ptx_type (ptx_ir.h). */
unsigned ptx_type_size(int type);

#endif
