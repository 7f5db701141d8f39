/*
 * locate.h - finding what the cutaint command needs at run time: the shim
 * (libcutaint.so), the fakecuda driver directory and the demo program.
 *
 * Invariant: each is looked for in a fixed order - an environment override,
 * then the build tree the command was configured in, then the install
 * location - and the first that exists wins.  An override that names
 * nothing is an error, not a silent fall-through: the user asked for it.
 */
#ifndef CT_TOOL_LOCATE_H
#define CT_TOOL_LOCATE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ct_place {
    const char *what;    /* "libcutaint.so", for messages */
    const char *env;     /* override variable, or NULL */
    const char *build;   /* path in the build tree */
    const char *install; /* path after `meson install` */
    const char *inside;  /* for a directory: the file that must be in it */
} ct_place;

extern const ct_place ct_place_shim;
extern const ct_place ct_place_fakecuda;
extern const ct_place ct_place_demo;

/* The path found, or NULL after one line on stderr saying where it looked. */
const char *ct_locate(const ct_place *place);

#endif
