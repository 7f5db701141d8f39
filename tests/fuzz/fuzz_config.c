/* fuzz_config: ct_config_load with arbitrary text for every CUTAINT_ variable.
 * The input is split at '\x01' bytes: segment i is the value of variable i
 * (missing segments: unset), plus ct_config_check_unknown on an envp made
 * of the same segments. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "errnames.h"
#include "fuzz_text.h"

static const char *vars[] = {"CUTAINT_LOG",     "CUTAINT_LOG_FILE",        "CUTAINT_REPORT",      "CUTAINT_POISON",
                             "CUTAINT_ON_SKIP", "CUTAINT_ON_CONTEXT_LOSS", "CUTAINT_EXIT_STATUS", "CUTAINT_HEALTH_FILE",
                             "CUTAINT_ARGS",    "CUTAINT_INJECT",          "CUTAINT_DISABLE"};
#define NVARS (sizeof vars / sizeof *vars)

typedef struct {
    char *val[NVARS];
} env;

static const char *get(const char *name, void *ctx)
{
    env *e = ctx;
    for (size_t i = 0; i < NVARS; i++)
        if (strcmp(name, vars[i]) == 0)
            return e->val[i];
    return NULL;
}

static void diag(const char *msg, void *ctx)
{
    (void)ctx;
    volatile size_t n = strlen(msg); /* must be a terminated string */
    (void)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    env e = {{0}};
    char *p = text;
    for (size_t i = 0; i < NVARS && p; i++) {
        char *sep = memchr(p, '\x01', (size_t)(text + size - p));
        if (sep)
            *sep = '\0';
        e.val[i] = p;
        p = sep ? sep + 1 : NULL;
    }
    static ct_config cfg;
    ct_config_load(&cfg, &ct_cuda_errors, get, diag, &e);
    /* the result is bounded and terminated */
    if (strnlen(cfg.log_file, CT_PATH_MAX) == CT_PATH_MAX || strnlen(cfg.report, CT_PATH_MAX) == CT_PATH_MAX ||
        cfg.poison < -1 || cfg.poison > 255 || cfg.exit_status < 0 || cfg.exit_status > 255 ||
        cfg.args.n > CT_ARGS_MAX_RULES || cfg.inject.n > CT_INJECT_MAX_RULES)
        abort();
    char *envp[NVARS + 1];
    char bufs[NVARS][64];
    size_t n = 0;
    for (size_t i = 0; i < NVARS; i++)
        if (e.val[i]) {
            size_t l = strnlen(e.val[i], 40);
            memcpy(bufs[n], "CUTAINT_", 8);
            memcpy(bufs[n] + 8, e.val[i], l);
            bufs[n][8 + l] = '\0';
            envp[n] = bufs[n];
            n++;
        }
    envp[n] = NULL;
    ct_config_check_unknown(envp, diag, NULL);
    free(text);
    return 0;
}
