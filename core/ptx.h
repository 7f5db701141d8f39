/*
 * ptx.h - which of a PTX kernel's parameters it loads through, stores
 * through, or both, read from its .entry's body without the driver.
 *
 * Owns: a flow-insensitive reading of one .entry body: every value that
 * comes from a parameter (ld.param) and every register computed from one,
 * through any instruction, over all of its assignments, and what the body
 * does with them: uses them as load or store addresses, or lets them
 * escape (stores them as data, passes them to a call, hands them to an
 * instruction this reader does not know), which counts as both.
 *
 * Invariants:
 * - Sound over-approximation: a parameter is UNUSED or LOADS only when no
 *   reading of the body could store through it; in doubt it is BOTH.  A
 *   value read from memory is memory contents, not the pointer it was read
 *   through: a pointer loaded from a parameter's buffer is no parameter.
 * - The answer is the body's, read whole, or none (-1): a body whose braces
 *   do not close, a comment or string left open, a directive or statement
 *   this reader cannot read, or a table past its cap says nothing, never a
 *   guess.
 * - Never reads past len (nor past a NUL before it: PTX ends at its NUL)
 *   and allocates at most its caps' worth, freed before it returns; the
 *   text is only read.
 */
#ifndef CT_PTX_H
#define CT_PTX_H

#include <stddef.h>
#include <stdint.h>

/* A bit set: LOADS | STORES is BOTH. */
typedef enum ct_ptx_dir {
    CT_PTX_UNUSED = 0, /* never an address, never escapes */
    CT_PTX_LOADS = 1,
    CT_PTX_STORES = 2,
    CT_PTX_BOTH = 3,
} ct_ptx_dir;

/* An entry's parameters read (ptxas allows 32764 bytes of them). */
#define CT_PTX_MAX_PARAMS 4096
/* Registers and symbols one body names, with one node per instruction
 * whose destinations and sources are both several. */
#define CT_PTX_MAX_NAMES (1u << 20)
/* Derivations (destination from source) one body makes. */
#define CT_PTX_MAX_EDGES (1u << 22)

/* For the .entry named `entry` (its mangled name) in the PTX text
 * [ptx, ptx + len): the direction of each of its parameters into
 * dirs[0..cap) (a parameter that is never used as an address, pointer or
 * not, is CT_PTX_UNUSED).  Returns the number of parameters (may exceed
 * cap: only cap were written), or -1 when the entry is not there or its
 * body cannot be read whole (then nothing is known and dirs is untouched). */
int ct_ptx_directions(const char *ptx, size_t len, const char *entry, uint8_t *dirs, unsigned cap);

#endif
