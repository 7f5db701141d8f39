/*
 * entry.h: the table of every entry point libcuda.so.1 exports, shared by
 * the files that define them (exports.c, with cuda.h's prototypes, for the
 * emulated ones; unsupported.c, without cuda.h, for the rest) and the files
 * that look them up (procaddr.c, faults.c).
 *
 * No CUDA header here: unsupported.c defines functions whose cuda.h
 * prototypes differ from its one-size stub, so it must not see them.
 * Invariants: fc_api_rows[FC_ID_<name>] describes <name>; the rows are
 * sorted by name and hold every name of entry_points.h, once.
 * Asserted in: exports.c, faults.c.
 */
#ifndef FAKECUDA_ENTRY_H
#define FAKECUDA_ENTRY_H

#include "entry_points.h"

#include <stdbool.h>

typedef struct fc_api_row {
    const char *name; /* exported symbol */
    const char *base; /* name cuGetProcAddress is asked for */
    int since;        /* first CUDA version whose ABI is this variant */
    bool per_thread;  /* the _ptds / _ptsz variant */
    void *fn;
} fc_api_row;

enum fc_api_id {
#define FC_ENUM(name, base, since, pt) FC_ID_##name,
    FC_ENTRY_POINTS(FC_ENUM)
#undef FC_ENUM
        FC_API_COUNT
};

extern const fc_api_row fc_api_rows[FC_API_COUNT];

/* What an entry point fakecuda does not emulate answers (and logs once). */
int fc_unsupported(unsigned api_id);

#endif
