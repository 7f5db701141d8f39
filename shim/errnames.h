/*
 * errnames.h - CUresult codes as names and back, for log lines, reports and
 * the CUTAINT_INJECT grammar.  The table comes from cuda.h's enum, so it
 * cannot drift from the toolkit; it lives on the shim's side because core
 * knows no CUDA.  Built as its own small library (meson: errnames_dep) so
 * the cutaint command and the tests use the same table as the shim.
 */
#ifndef CT_ERRNAMES_H
#define CT_ERRNAMES_H

#include "config.h"
#include "rules.h"

/* "CUDA_ERROR_INVALID_VALUE", or NULL for a code cuda.h does not name. */
const char *ct_error_name(int code);
/* Writes the name, or "CUresult 1234" for an unnamed code; returns buf. */
const char *ct_error_label(int code, char *buf, unsigned cap);
/* Accepts a full name, a name without the CUDA_ERROR_ prefix (any case), or
 * a decimal number.  CT_OK or CT_EPARSE. */
int ct_error_parse(const char *text, int *code);

/* What core's CUTAINT_INJECT grammar reads effects with: ct_error_parse,
 * and the driver's codes for success, the defaults (launch: LAUNCH_FAILED,
 * api: UNKNOWN) and context_lost (ILLEGAL_ADDRESS). */
extern const ct_error_vocab ct_cuda_errors;
/* What the probe's answers mean, by kind (core/rules.h, ct_answer_rule). */
extern const ct_answer_kinds ct_cuda_answers;

#endif
