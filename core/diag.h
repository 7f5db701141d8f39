/*
 * diag.h - the text of cutaint's diagnostics (the log, lines on stderr):
 * outside text in them (paths, kernel names, argv) is escaped, so that it
 * can neither forge a line ("\n==1== cutaint: ...") nor drive a terminal
 * (ESC, C1 controls).
 *
 * The form, one byte at a time, reversible:
 *   \\            a backslash
 *   \n \r \t      those three controls
 *   \xNN          (lower-case hex) every other byte of a C0 control or DEL,
 *                 of a C1 control (U+0080-U+009F: \xc2\x9b), of a line
 *                 separator or bidirectional format character (U+2028-
 *                 U+202E, U+2066-U+2069), or of no valid UTF-8 character
 *   as it is      everything else, valid UTF-8 (accents, CJK) included.
 *
 * Invariants: the output is NUL-terminated, valid UTF-8, and holds no
 * control byte; when it does not fit it is cut before a whole escape or
 * character, never inside one.  No allocation, async-signal-safe.
 */
#ifndef CT_DIAG_H
#define CT_DIAG_H

#include <stddef.h>

/* text (NUL-terminated; NULL reads as "") escaped into out (cap > 0 bytes):
 * the length written, without the NUL. */
size_t ct_diag_escape(const char *text, char *out, size_t cap);

#endif
