/*
 * textout.h - writing untrusted report text (kernel names, API names,
 * reasons, paths) to a terminal or a DOT file (JSON goes through core's
 * one writer, jsonl.h).
 *
 * Invariants: output is always valid UTF-8; control characters (C0, DEL and
 * C1) and invalid bytes never reach a terminal (they become '?'),
 * so report text can neither forge lines nor drive a
 * terminal; terminal and DOT text is cut at CT_TEXT_MAX bytes with "...".
 * Report text is only ever an argument, never a format string.
 */
#ifndef CT_TOOL_TEXTOUT_H
#define CT_TOOL_TEXTOUT_H

#include <stdio.h>

#define CT_TEXT_MAX 1024

/* Text for a terminal; NULL prints `absent`. */
void ct_put_text(FILE *out, const char *s, const char *absent);
/* The inside of a DOT double-quoted string ('"' and '\' escaped). */
void ct_put_dot(FILE *out, const char *s);

#endif
