/*
 * ct_status.h - the integer status codes every core function returns.
 *
 * Owns: the meaning of a core return value.  Zero is success; every failure
 * is a distinct negative number so callers can switch on it and tests can
 * assert the exact reason.  Core never returns CUresult values: CUDA codes
 * travel only as data (ct_failure_desc.error).
 */
#ifndef CT_STATUS_H
#define CT_STATUS_H

enum {
    CT_OK = 0,
    CT_EINVAL = -1,   /* an argument is out of its domain (NULL, size 0, overflow) */
    CT_ENOMEM = -2,   /* the heap said no; nothing was changed */
    CT_EEXIST = -3,   /* already present */
    CT_ENOENT = -4,   /* not present (an address the map never saw) */
    CT_ETAINTED = -5, /* a read would return bytes no successful work wrote */
    CT_EPARSE = -6,   /* outside text does not follow its grammar */
    CT_EIO = -7,      /* a system call on a log, report or health file failed */
};

/* A short, static, human name for a status ("tainted", "no such entry"). */
const char *ct_status_name(int status);

#endif
