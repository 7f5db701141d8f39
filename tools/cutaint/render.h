/*
 * render.h - the three views of a read report: a text tree for people,
 * Graphviz DOT of the same graph, and a merged JSON summary for programs.
 *
 * Invariants: renderers only read the model; all report text goes through
 * textout.h; every view shows every process, failure, skip group and
 * refused read in the model, in log order.
 */
#ifndef CT_TOOL_RENDER_H
#define CT_TOOL_RENDER_H

#include "report.h"

#include <stdio.h>

typedef enum { CT_FORMAT_TEXT, CT_FORMAT_DOT, CT_FORMAT_JSON } ct_format;

void ct_render(FILE *out, const ct_report *r, ct_format format);
void ct_render_text(FILE *out, const ct_report *r);
void ct_render_dot(FILE *out, const ct_report *r);
void ct_render_json(FILE *out, const ct_report *r);

/* Shared wording. */
/* What failed: the kernel for a launch, else the API. */
const char *ct_failure_what(const ct_failure *f);
/* "1 root failure, 2 skipped launches, 1 refused read" into buf. */
void ct_counts_phrase(char *buf, size_t cap, const ct_counts *c);
/* The sum of every process's counts. */
ct_counts ct_report_counts(const ct_report *r);
/* Writes the argv of p (or "(no start event)") as one line of text. */
void ct_put_command(FILE *out, const ct_process *p);

#endif
