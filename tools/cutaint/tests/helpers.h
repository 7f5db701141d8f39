/*
 * helpers.h - what the cutaint command's tests share: reading a data file
 * into the model, rendering into a string, running a program and getting
 * its exit status.
 */
#ifndef CT_TOOL_TEST_HELPERS_H
#define CT_TOOL_TEST_HELPERS_H

#include "render.h"
#include "report.h"

#include <stddef.h>

/* Reads tests/data/NAME into r (asserting it could be read). */
void read_data(ct_report *r, const char *name);
/* The whole output of one renderer, NUL-terminated; free() it. */
char *render_to_string(const ct_report *r, ct_format format, size_t *len);
/* Runs argv (no shell) with stdin from `input` (NULL: /dev/null) and
 * stdout/stderr to `output` (NULL: /dev/null); returns the exit status, or
 * 128 + signal. */
int run_argv(char *const argv[], const char *input, const char *output);

#endif
