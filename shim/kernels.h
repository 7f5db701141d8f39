/*
 * kernels.h - private to the shim: the kernel registry (kernels.c) and what
 * launch.c reads of a kernel to decode a launch.
 */
#ifndef CT_KERNELS_H
#define CT_KERNELS_H

#include "ct_hash.h"
#include "shim.h"

typedef struct ct_param {
    uint32_t offset, size;
    uint8_t role; /* ct_role, never CT_ROLE_DEFAULT once described */
    bool scan;    /* aggregate or unknown type: every aligned word may be a pointer */
} ct_param;

typedef struct ct_kernel {
    uint64_t handle;
    uint64_t owner;      /* the module or library it came from; 0 unknown */
    uint64_t context;    /* the context of a module's function; 0 for a library's kernel */
    const char *mangled; /* interned; NULL until known */
    const char *pretty;  /* demangled signature, or the name as is */
    const char *base;    /* qualified name without parameters */
    atomic_bool described;
    bool layout_known;
    const char *roles;      /* interned "rw,r,-": each parameter's role (kernels.c, roles_text) */
    const char *roles_from; /* "ptx", "signature" or "size": what decided the roles (CUTAINT_ARGS aside) */
    unsigned n_params;
    ct_param *params;
    UT_hash_handle hh;
    struct ct_kernel *next_spare;
} ct_kernel;

/* The kernel behind a function handle, described on first use (name,
 * layout, roles); NULL when out of memory. */
ct_kernel *ct_kernel_for(CUfunction f);

/* A kernel the driver never loaded (a stand-in's, standins.c): named
 * mangled, owned by owner, described from img (its layout, else the mangled
 * signature) without asking the driver. */
struct ct_image;
void ct_kernel_offline(uint64_t handle, const char *mangled, uint64_t owner, const struct ct_image *img);
/* The described entry of handle, or NULL; never asks the driver. */
ct_kernel *ct_kernel_described(uint64_t handle);
/* Take out the kernels of a module or library; how many. */
size_t ct_kernels_forget_owner(uint64_t owner);

/* The number of the calling thread's latest kernel launch (0: none yet):
 * a graph launch is ordered after it among the suspects. */
uint64_t ct_launch_number_last(void);

/* The launch in flight on the calling thread (CUTAINT_INJECT's simulated
 * loss names it): its number, stream, grid and block. */
void ct_launch_in_flight(uint64_t *seq, uint64_t *stream, uint32_t grid[3], uint32_t block[3]);

/* A graph's kernel node decoded as a launch of k with these parameters
 * (launch.c): its inputs and outputs, valid until the thread's next launch.
 * The first *n_release outputs are released by a success; the rest are
 * stores of unknown extent (CT_ROLE_STORE), tainted by a failure only. */
void ct_launch_bindings(ct_kernel *k, void **params, void **extra, const ct_range **in, unsigned *n_in,
                        const ct_range **out, unsigned *n_out, unsigned *n_release);

#endif
