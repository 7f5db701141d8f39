/*
 * config.h - every CUTAINT_ variable (libcutaint(7), man/libcutaint.7), parsed
 * once into one struct, plus the two small grammars: CUTAINT_ARGS (per-kernel
 * parameter roles) and CUTAINT_INJECT (fault injection).
 *
 * Invariants:
 * - A malformed value produces exactly one diagnostic naming the variable,
 *   the value and what is accepted, and leaves that variable at its default;
 *   the other variables are unaffected.
 * - Parsing never allocates and never reads past a terminator; every field
 *   is bounded (long values are an error, not a truncation).
 * - Environment text is data: it is never used as a format string.
 * - ct_inject_check is thread-safe (atomic counters) and allocation-free.
 */
#ifndef CT_CONFIG_H
#define CT_CONFIG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CT_PATH_MAX 1024
#define CT_PATTERN_MAX 128
#define CT_ARGS_MAX_RULES 32
#define CT_ARGS_MAX_PARAMS 64
#define CT_INJECT_MAX_RULES 16
#define CT_DIAG_MAX 512

typedef enum { CT_LOG_OFF, CT_LOG_ERROR, CT_LOG_WARN, CT_LOG_INFO, CT_LOG_DEBUG } ct_log_level;
typedef enum { CT_SKIP_PROPAGATE, CT_SKIP_ERROR } ct_on_skip;
typedef enum { CT_LOSS_CONTINUE, CT_LOSS_EXIT, CT_LOSS_ABORT } ct_on_loss;

/* CUTAINT_ARGS="GLOB=ROLE,ROLE...;GLOB=..."  ROLE: r | w | rw | - */
typedef enum {
    CT_ROLE_DEFAULT = 0, /* not given: the signature rules decide */
    CT_ROLE_IGNORE,      /* "-": never a binding */
    CT_ROLE_READ,        /* "r" */
    CT_ROLE_WRITE,       /* "w": written without being read (no skip on taint) */
    CT_ROLE_READWRITE,   /* "rw" */
    CT_ROLE_STORE,       /* not in the grammar: the kernel's PTX stores through it and never loads
                          * (core/ptx.h).  Written somewhere, extent unknown: no skip on its taint,
                          * tainted when the launch fails, not released when it succeeds (only a
                          * retry's success releases it) */
} ct_role;

typedef struct ct_arg_rule {
    char glob[CT_PATTERN_MAX];
    unsigned n_roles;
    uint8_t role[CT_ARGS_MAX_PARAMS]; /* ct_role */
} ct_arg_rule;

typedef struct ct_arg_rules {
    unsigned n;
    ct_arg_rule rule[CT_ARGS_MAX_RULES];
} ct_arg_rules;

/* CUTAINT_INJECT="KIND:PATTERN[#N[+]][=EFFECT];..."  see libcutaint(7). */
typedef enum { CT_INJECT_LAUNCH, CT_INJECT_API } ct_inject_kind;

typedef struct ct_inject_rule {
    ct_inject_kind kind;
    char pattern[CT_PATTERN_MAX];
    uint64_t nth;              /* 1-based */
    bool and_later;            /* "#N+": the Nth and every later match */
    bool context_loss;         /* EFFECT "context_lost" */
    int error;                 /* CUresult returned instead of calling the driver */
    atomic_uint_fast64_t seen; /* matching calls so far */
} ct_inject_rule;

typedef struct ct_inject_rules {
    unsigned n;
    ct_inject_rule rule[CT_INJECT_MAX_RULES];
} ct_inject_rules;

typedef struct ct_config {
    bool disable;               /* CUTAINT_DISABLE=1 */
    ct_log_level log;           /* CUTAINT_LOG */
    char log_file[CT_PATH_MAX]; /* "" = stderr; %p -> pid */
    char report[CT_PATH_MAX];   /* "" = no report */
    int poison;                 /* -1 = off, else the byte */
    ct_on_skip on_skip;
    ct_on_loss on_context_loss;
    int exit_status;    /* 0..255; 0 leaves the program's own */
    int error_exitcode; /* 1..255: status of a process that refused a read and would exit 0; 0 off */
    char health_file[CT_PATH_MAX];
    char metrics_file[CT_PATH_MAX]; /* "" = none; %p -> pid */
    ct_arg_rules args;
    ct_inject_rules inject;
} ct_config;

/* The driver's error codes as the CUTAINT_INJECT grammar needs them.  Core
 * knows no CUDA: the shim's table (shim/errnames.h) is handed to every
 * parse that reads an effect. */
typedef struct ct_error_vocab {
    int (*parse)(const char *text, int *code); /* a name or number; CT_OK or CT_EPARSE */
    int success;                               /* "no error": an effect may not name it */
    int launch_default;                        /* launch:PATTERN without =EFFECT */
    int api_default;                           /* api:PATTERN without =EFFECT */
    int context_lost;                          /* what =context_lost makes the call return */
} ct_error_vocab;

typedef const char *(*ct_getenv_fn)(const char *name, void *ctx);
typedef void (*ct_diag_fn)(const char *message, void *ctx);

void ct_config_defaults(ct_config *out);
/* Reads every variable through get (NULL: getenv), CUTAINT_INJECT's effects
 * through errors (required); each malformed one is reported through diag
 * (may be NULL) as one line without a trailing newline, and left at its
 * default.  Returns how many were malformed (0 = all good). */
int ct_config_load(ct_config *out, const ct_error_vocab *errors, ct_getenv_fn get, ct_diag_fn diag, void *ctx);
/* Reports each CUTAINT_* entry of envp that names no known variable (a typo
 * silently ignored would be worse).  Returns how many. */
int ct_config_check_unknown(char *const *envp, ct_diag_fn diag, void *ctx);

/* The grammars on their own (the fuzzers and the cutaint command use them).
 * CT_OK or CT_EPARSE with a one-line reason in err. */
int ct_args_parse(const char *text, ct_arg_rules *out, char *err, size_t errcap);
int ct_inject_parse(const char *text, const ct_error_vocab *errors, ct_inject_rules *out, char *err, size_t errcap);

/* The first rule whose glob matches either name (mangled or demangled base;
 * either may be NULL), or NULL. */
const ct_arg_rule *ct_args_match(const ct_arg_rules *rules, const char *name, const char *alt_name);
/* An api rule no name of names (every entry point the shim wraps, with its
 * family) matches can never fire; a launch rule always may. */
bool ct_inject_rule_unreachable(const ct_inject_rule *rule, const char *const *names, size_t n);
/* Count one call against every rule of `kind` matching name or alt_name and
 * return the rule that fires on this call, or NULL. */
const ct_inject_rule *ct_inject_check(ct_inject_rules *rules, ct_inject_kind kind, const char *name,
                                      const char *alt_name);

#endif
