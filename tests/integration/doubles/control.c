/*
 * control.c - the test doubles' one order at a time (control.h): the
 * client names the entry point and the status, the double takes it at its
 * next call.  Single-threaded clients only.
 */
#include "control.h"

#include <string.h>

static char pending[64];
static int pending_status;

__attribute__((visibility("default"))) void double_fail_next(const char *name, int status)
{
    strncpy(pending, name, sizeof pending - 1);
    pending_status = status;
}

__attribute__((visibility("default"))) int double_take_failure(const char *name, int *status)
{
    if (strcmp(pending, name) != 0)
        return 0;
    pending[0] = '\0';
    *status = pending_status;
    return 1;
}
