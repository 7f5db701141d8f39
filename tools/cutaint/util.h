/*
 * util.h - the few helpers every part of the cutaint command shares:
 * allocation that cannot return NULL, growing arrays, plurals.
 *
 * Invariant: the command is a short-lived tool, so running out of memory is
 * reported once ("cutaint: out of memory") and ends it with status 2 rather
 * than being threaded through every caller.
 */
#ifndef CT_TOOL_UTIL_H
#define CT_TOOL_UTIL_H

#include <stddef.h>

void *ct_xmalloc(size_t size);
void *ct_xcalloc(size_t n, size_t size);
/* Copies n bytes and terminates them; NUL bytes inside become '?', so the
 * result is a C string that says as much as the data did. */
char *ct_xstrndup(const char *s, size_t n);
char *ct_xstrdup(const char *s);
/* Makes room for one more element in *array (of *n used, *cap allocated). */
void ct_grow(void **array, size_t *n, size_t *cap, size_t elem);
#define CT_PUSH(array, n, cap) (ct_grow((void **)&(array), &(n), &(cap), sizeof *(array)), &(array)[(n)++])

/* "s" unless count is one. */
const char *ct_plural(unsigned long long count);

#endif
