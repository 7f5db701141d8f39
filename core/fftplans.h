/*
 * fftplans.h - the cuFFT plans cutaint saw made: each plan handle's shape
 * (ct_fft_plan, plain numbers: no CUDA header), recorded when the library
 * made it and forgotten when it was destroyed, so that an execution's
 * extents come from its plan (core/rules.h, ct_lib_fft_bytes).
 *
 * Invariants:
 * - A lookup takes no lock and allocates nothing: a seqlock per slot; it
 *   never returns a plan torn by a concurrent record or forget.
 * - Records and forgets are serialised by one spin flag (plans are made
 *   and destroyed rarely, and never while the flag is held elsewhere in
 *   the same thread: nothing inside calls out).
 * - A handle is in at most one slot, within CT_FFT_PROBE of its home; a
 *   table with no free slot there records nothing (an execution on that
 *   plan then keeps the unknown plan's extents).
 */
#ifndef CT_FFTPLANS_H
#define CT_FFTPLANS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rules.h"

#define CT_FFT_SLOTS 512 /* a power of two */
#define CT_FFT_PROBE 16
#define CT_FFT_WORDS (sizeof(ct_fft_plan) / sizeof(int64_t))

typedef struct ct_fft_slot {
    _Atomic uint32_t seq;               /* odd while written */
    _Atomic int64_t key;                /* 0: free; else the handle + 2^32 */
    _Atomic int64_t word[CT_FFT_WORDS]; /* the plan, word by word */
} ct_fft_slot;

/* Zero-initialised: empty (static storage needs no constructor). */
typedef struct ct_fft_plans {
    atomic_flag writing;
    ct_fft_slot slot[CT_FFT_SLOTS];
} ct_fft_plans;

/* handle's plan is now p (a remake replaces it); false: no room. */
bool ct_fft_plans_record(ct_fft_plans *t, int handle, const ct_fft_plan *p);
/* handle has no plan (destroyed); nothing when it had none. */
void ct_fft_plans_forget(ct_fft_plans *t, int handle);
/* handle's plan into *p; false: none recorded. */
bool ct_fft_plans_find(ct_fft_plans *t, int handle, ct_fft_plan *p);

#endif
