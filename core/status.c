/*
 * status.c - names for the status codes of ct_status.h.
 *
 * Owns: the one string per code that logs and test failures print.  Names
 * are static and never NULL, so a caller can print any int it was handed.
 */
#include "ct_status.h"

const char *ct_status_name(int status)
{
    switch (status) {
    case CT_OK: return "ok";
    case CT_EINVAL: return "invalid argument";
    case CT_ENOMEM: return "out of memory";
    case CT_EEXIST: return "already exists";
    case CT_ENOENT: return "no such entry";
    case CT_ETAINTED: return "tainted";
    case CT_EPARSE: return "parse error";
    case CT_EIO: return "I/O error";
    default: return "unknown status";
    }
}
