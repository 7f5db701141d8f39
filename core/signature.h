/*
 * signature.h - what a kernel's mangled name says about its parameters.
 *
 * `_Z5saxpyifPKfPf` demangles (libiberty) to saxpy(int, float, float const*,
 * float*): a pointer to const is read only, a plain pointer is read and
 * written, a class passed by value may hold pointers in any aligned word.
 * Unmangled (extern "C") names say nothing: CT_EPARSE.
 *
 * Invariants: never reads past the terminator of its input; bounded output
 * (names longer than the buffers are truncated, parameter lists longer than
 * CT_SIG_MAX_PARAMS give CT_EPARSE rather than a partial answer).
 */
#ifndef CT_SIGNATURE_H
#define CT_SIGNATURE_H

#include <stddef.h>
#include <stdint.h>

#define CT_SIG_MAX_PARAMS 64
#define CT_SIG_NAME_MAX 256

typedef enum {
    CT_PARAM_VALUE = 0, /* arithmetic, enum: never a binding */
    CT_PARAM_CONST_PTR, /* T const*: read only */
    CT_PARAM_PTR,       /* T*, T**: read and written */
    CT_PARAM_AGGREGATE, /* class/struct/union by value: scan its words */
} ct_param_kind;

typedef struct ct_signature {
    char demangled[CT_SIG_NAME_MAX]; /* whole demangled text, truncated */
    char base[CT_SIG_NAME_MAX];      /* qualified name without the parameter list */
    unsigned n_params;
    uint8_t kind[CT_SIG_MAX_PARAMS]; /* ct_param_kind */
} ct_signature;

/* Demangle and classify.  CT_OK, CT_EPARSE (not a mangled function name or
 * unreadable), CT_EINVAL (NULL). */
int ct_signature_from_mangled(const char *mangled, ct_signature *out);
/* Classify an already demangled "name(type, type...)" text (the part the
 * fuzzer drives).  Same codes. */
int ct_signature_from_demangled(const char *demangled, ct_signature *out);

#endif
