/*
 * errnames.h - CUresult codes as names and back, for log lines, reports and
 * the CUTAINT_INJECT grammar.  The table comes from cuda.h's enum (types
 * only; core makes no CUDA call), so it cannot drift from the toolkit.
 */
#ifndef CT_ERRNAMES_H
#define CT_ERRNAMES_H

/* "CUDA_ERROR_INVALID_VALUE", or NULL for a code cuda.h does not name. */
const char *ct_error_name(int code);
/* Writes the name, or "CUresult 1234" for an unnamed code; returns buf. */
const char *ct_error_label(int code, char *buf, unsigned cap);
/* Accepts a full name, a name without the CUDA_ERROR_ prefix (any case), or
 * a decimal number.  CT_OK or CT_EPARSE. */
int ct_error_parse(const char *text, int *code);

#endif
