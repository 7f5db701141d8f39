/*
 * test_config.c - the CUTAINT_ variables, the CUTAINT_ARGS and CUTAINT_INJECT
 * grammars and the injection counters (core/config.h).
 */
#include <criterion/criterion.h>

#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ct_status.h"
#include "errnames.h"

/* Effects in the driver's words: the vocabulary the shim hands core. */
static int inject_parse(const char *text, ct_inject_rules *out, char *err, size_t errcap)
{
    return ct_inject_parse(text, &ct_cuda_errors, out, err, errcap);
}

/* ---- a fake environment and a diagnostic sink ------------------------- */

#define MAX_VARS 16
#define MAX_DIAGS 16

typedef struct env {
    const char *name[MAX_VARS];
    const char *value[MAX_VARS];
    unsigned n;
    char diag[MAX_DIAGS][CT_DIAG_MAX];
    unsigned n_diag;
} env;

static const char *env_get(const char *name, void *ctx)
{
    env *e = ctx;
    for (unsigned i = 0; i < e->n; i++)
        if (strcmp(e->name[i], name) == 0)
            return e->value[i];
    return NULL;
}

static void env_diag(const char *message, void *ctx)
{
    env *e = ctx;
    cr_assert_lt(e->n_diag, MAX_DIAGS);
    cr_assert_null(strchr(message, '\n'), "a diagnostic is one line: %s", message);
    snprintf(e->diag[e->n_diag++], CT_DIAG_MAX, "%s", message);
}

static void env_set(env *e, const char *name, const char *value)
{
    e->name[e->n] = name;
    e->value[e->n++] = value;
}

static int load(env *e, ct_config *c)
{
    return ct_config_load(c, &ct_cuda_errors, env_get, env_diag, e);
}

static void assert_defaults(const ct_config *c)
{
    ct_config d;
    ct_config_defaults(&d);
    cr_assert_eq(c->disable, d.disable);
    cr_assert_eq(c->log, d.log);
    cr_assert_str_eq(c->log_file, d.log_file);
    cr_assert_str_eq(c->report, d.report);
    cr_assert_eq(c->poison, d.poison);
    cr_assert_eq(c->on_skip, d.on_skip);
    cr_assert_eq(c->on_context_loss, d.on_context_loss);
    cr_assert_eq(c->exit_status, d.exit_status);
    cr_assert_eq(c->error_exitcode, 0);
    cr_assert_str_eq(c->health_file, d.health_file);
    cr_assert_eq(c->args.n, 0);
    cr_assert_eq(c->inject.n, 0);
}

/* ---- defaults and valid values ---------------------------------------- */

Test(config, defaults_are_design_md_first_values)
{
    ct_config c;
    ct_config_defaults(&c);
    cr_assert_not(c.disable);
    cr_assert_eq(c.log, CT_LOG_WARN);
    cr_assert_str_empty(c.log_file);
    cr_assert_str_empty(c.report);
    cr_assert_eq(c.poison, 0xff);
    cr_assert_eq(c.on_skip, CT_SKIP_PROPAGATE);
    cr_assert_eq(c.on_context_loss, CT_LOSS_CONTINUE);
    cr_assert_eq(c.exit_status, 70);
    cr_assert_str_empty(c.health_file);
}

Test(config, nothing_set_or_empty_values_give_defaults)
{
    env e = {0};
    ct_config c;
    cr_assert_eq(load(&e, &c), 0);
    assert_defaults(&c);
    static const char *const names[] = {
        "CUTAINT_LOG",         "CUTAINT_LOG_FILE",       "CUTAINT_REPORT",
        "CUTAINT_POISON",      "CUTAINT_ON_SKIP",        "CUTAINT_ON_CONTEXT_LOSS",
        "CUTAINT_EXIT_STATUS", "CUTAINT_ERROR_EXITCODE", "CUTAINT_HEALTH_FILE",
        "CUTAINT_ARGS",        "CUTAINT_INJECT",         "CUTAINT_DISABLE",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        env_set(&e, names[i], "");
    cr_assert_eq(load(&e, &c), 0);
    assert_defaults(&c);
    cr_assert_eq(e.n_diag, 0);
}

Test(config, every_variable_parses_its_values)
{
    env e = {0};
    env_set(&e, "CUTAINT_LOG", "debug");
    env_set(&e, "CUTAINT_LOG_FILE", "/tmp/log.%p");
    env_set(&e, "CUTAINT_REPORT", "/tmp/report with space.jsonl");
    env_set(&e, "CUTAINT_POISON", "0x5a");
    env_set(&e, "CUTAINT_ON_SKIP", "error");
    env_set(&e, "CUTAINT_ON_CONTEXT_LOSS", "abort");
    env_set(&e, "CUTAINT_EXIT_STATUS", "0");
    env_set(&e, "CUTAINT_HEALTH_FILE", "/run/health");
    env_set(&e, "CUTAINT_ARGS", "saxpy=-,-,r,w");
    env_set(&e, "CUTAINT_INJECT", "launch:gemm#2");
    env_set(&e, "CUTAINT_DISABLE", "yes");
    ct_config c;
    cr_assert_eq(load(&e, &c), 0);
    cr_assert_eq(e.n_diag, 0);
    cr_assert_eq(c.log, CT_LOG_DEBUG);
    cr_assert_str_eq(c.log_file, "/tmp/log.%p");
    cr_assert_str_eq(c.report, "/tmp/report with space.jsonl");
    cr_assert_eq(c.poison, 0x5a);
    cr_assert_eq(c.on_skip, CT_SKIP_ERROR);
    cr_assert_eq(c.on_context_loss, CT_LOSS_ABORT);
    cr_assert_eq(c.exit_status, 0);
    cr_assert_str_eq(c.health_file, "/run/health");
    cr_assert_eq(c.args.n, 1);
    cr_assert_eq(c.inject.n, 1);
    cr_assert(c.disable);
}

typedef struct valid_case {
    const char *name, *value;
    size_t offset;
    int expected;
} valid_case;

#define INT_FIELD(c, off) (*(const int *)((const char *)(c) + (off)))

Test(config, scalar_spellings)
{
    static const valid_case cases[] = {
        {"CUTAINT_LOG", "off", offsetof(ct_config, log), CT_LOG_OFF},
        {"CUTAINT_LOG", "error", offsetof(ct_config, log), CT_LOG_ERROR},
        {"CUTAINT_LOG", "warn", offsetof(ct_config, log), CT_LOG_WARN},
        {"CUTAINT_LOG", " INFO ", offsetof(ct_config, log), CT_LOG_INFO},
        {"CUTAINT_ON_SKIP", "propagate", offsetof(ct_config, on_skip), CT_SKIP_PROPAGATE},
        {"CUTAINT_ON_CONTEXT_LOSS", "continue", offsetof(ct_config, on_context_loss), CT_LOSS_CONTINUE},
        {"CUTAINT_ON_CONTEXT_LOSS", "exit", offsetof(ct_config, on_context_loss), CT_LOSS_EXIT},
        {"CUTAINT_POISON", "off", offsetof(ct_config, poison), -1},
        {"CUTAINT_POISON", "0", offsetof(ct_config, poison), 0},
        {"CUTAINT_POISON", "255", offsetof(ct_config, poison), 255},
        {"CUTAINT_POISON", "0xFF", offsetof(ct_config, poison), 255},
        {"CUTAINT_POISON", "0x0", offsetof(ct_config, poison), 0},
        {"CUTAINT_POISON", "170", offsetof(ct_config, poison), 170},
        {"CUTAINT_EXIT_STATUS", "255", offsetof(ct_config, exit_status), 255},
        {"CUTAINT_EXIT_STATUS", "1", offsetof(ct_config, exit_status), 1},
        {"CUTAINT_EXIT_STATUS", "070", offsetof(ct_config, exit_status), 70},
        {"CUTAINT_ERROR_EXITCODE", "9", offsetof(ct_config, error_exitcode), 9},
        {"CUTAINT_ERROR_EXITCODE", "255", offsetof(ct_config, error_exitcode), 255},
        {"CUTAINT_ERROR_EXITCODE", "0", offsetof(ct_config, error_exitcode), 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        env e = {0};
        env_set(&e, cases[i].name, cases[i].value);
        ct_config c;
        cr_assert_eq(load(&e, &c), 0, "%s=%s", cases[i].name, cases[i].value);
        cr_assert_eq(INT_FIELD(&c, cases[i].offset), cases[i].expected, "%s=%s", cases[i].name, cases[i].value);
    }
}

Test(config, disable_spellings)
{
    static const struct {
        const char *value;
        bool disable;
    } cases[] = {{"1", true}, {"0", false}, {"true", true}, {"FALSE", false}, {"yes", true}, {"no", false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        env e = {0};
        env_set(&e, "CUTAINT_DISABLE", cases[i].value);
        ct_config c;
        cr_assert_eq(load(&e, &c), 0);
        cr_assert_eq(c.disable, cases[i].disable, "%s", cases[i].value);
    }
}

/* ---- malformed values -------------------------------------------------- */

static char long_path[CT_PATH_MAX + 10];

static void fill_long_path(void)
{
    memset(long_path, 'a', sizeof long_path - 1);
    long_path[0] = '/';
    long_path[sizeof long_path - 1] = '\0';
}

Test(config, each_malformed_value_gives_one_message_and_its_default, .init = fill_long_path)
{
    static const struct {
        const char *name, *value;
    } cases[] = {
        {"CUTAINT_LOG", "verbose"},
        {"CUTAINT_LOG", "warn2"},
        {"CUTAINT_LOG_FILE", long_path},
        {"CUTAINT_REPORT", long_path},
        {"CUTAINT_HEALTH_FILE", long_path},
        {"CUTAINT_POISON", "0x1ff"},
        {"CUTAINT_POISON", "256"},
        {"CUTAINT_POISON", "-1"},
        {"CUTAINT_POISON", "0x"},
        {"CUTAINT_POISON", "ff"},
        {"CUTAINT_POISON", "on"},
        {"CUTAINT_ON_SKIP", "skip"},
        {"CUTAINT_ON_CONTEXT_LOSS", "restart"},
        {"CUTAINT_EXIT_STATUS", "256"},
        {"CUTAINT_EXIT_STATUS", "off"},
        {"CUTAINT_EXIT_STATUS", "7O"},
        {"CUTAINT_ERROR_EXITCODE", "256"},
        {"CUTAINT_ERROR_EXITCODE", "yes"},
        {"CUTAINT_ERROR_EXITCODE", "-1"},
        {"CUTAINT_ARGS", "saxpy"},
        {"CUTAINT_ARGS", "saxpy=x"},
        {"CUTAINT_INJECT", "kernel:gemm"},
        {"CUTAINT_INJECT", "launch:gemm#0"},
        {"CUTAINT_DISABLE", "2"},
        {"CUTAINT_DISABLE", "on"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        env e = {0};
        /* A valid neighbour on each side still parses. */
        env_set(&e, "CUTAINT_LOG", "error");
        env_set(&e, "CUTAINT_DISABLE", "1");
        env_set(&e, "CUTAINT_EXIT_STATUS", "9");
        for (unsigned k = 0; k < e.n; k++)
            if (strcmp(e.name[k], cases[i].name) == 0)
                e.value[k] = cases[i].value;
        if (e.n == 3 && strcmp(e.name[0], cases[i].name) && strcmp(e.name[1], cases[i].name) &&
            strcmp(e.name[2], cases[i].name))
            env_set(&e, cases[i].name, cases[i].value);
        ct_config c, d;
        ct_config_defaults(&d);
        cr_assert_eq(load(&e, &c), 1, "%s=%s", cases[i].name, cases[i].value);
        cr_assert_eq(e.n_diag, 1, "%s=%s: %u messages", cases[i].name, cases[i].value, e.n_diag);
        char head[128];
        snprintf(head, sizeof head, "cutaint: %s='", cases[i].name);
        cr_assert(strncmp(e.diag[0], head, strlen(head)) == 0, "%s", e.diag[0]);
        cr_assert(strstr(e.diag[0], "is not valid: expected") || strstr(e.diag[0], "column"), "%s", e.diag[0]);
        cr_assert(strstr(e.diag[0], "; using the default "), "%s", e.diag[0]);
        /* The variable has its default, its neighbours their values. */
        bool is_log = !strcmp(cases[i].name, "CUTAINT_LOG");
        bool is_disable = !strcmp(cases[i].name, "CUTAINT_DISABLE");
        bool is_status = !strcmp(cases[i].name, "CUTAINT_EXIT_STATUS");
        cr_assert_eq(c.log, is_log ? d.log : CT_LOG_ERROR);
        cr_assert_eq(c.disable, is_disable ? d.disable : true);
        cr_assert_eq(c.exit_status, is_status ? d.exit_status : 9);
        cr_assert_eq(c.poison, d.poison);
        cr_assert_eq(c.on_skip, d.on_skip);
        cr_assert_eq(c.on_context_loss, d.on_context_loss);
        cr_assert_str_empty(c.log_file);
        cr_assert_str_empty(c.report);
        cr_assert_str_empty(c.health_file);
        cr_assert_eq(c.args.n, 0);
        cr_assert_eq(c.inject.n, 0);
        cr_assert_eq(c.error_exitcode, 0);
    }
}

Test(config, the_message_names_variable_value_and_accepted_values)
{
    env e = {0};
    env_set(&e, "CUTAINT_POISON", "0x1ff");
    ct_config c;
    load(&e, &c);
    cr_assert_str_eq(e.diag[0], "cutaint: CUTAINT_POISON='0x1ff' is not valid: expected off or "
                                "a byte 0..255 (e.g. 0xff); using the default 0xff");
    e = (env){0};
    env_set(&e, "CUTAINT_LOG", "loud");
    load(&e, &c);
    cr_assert_str_eq(e.diag[0], "cutaint: CUTAINT_LOG='loud' is not valid: expected warn, off, "
                                "error, info or debug; using the default warn");
    e = (env){0};
    env_set(&e, "CUTAINT_INJECT", "launch:gemm#0");
    load(&e, &c);
    cr_assert_str_eq(e.diag[0], "cutaint: CUTAINT_INJECT='launch:gemm#0' is not valid: spec 1 "
                                "'launch:gemm#0', column 12: expected #N or #N+ with N a whole "
                                "number >= 1; using the default (no injection)");
}

Test(config, several_malformed_values_give_one_message_each)
{
    env e = {0};
    env_set(&e, "CUTAINT_LOG", "x");
    env_set(&e, "CUTAINT_POISON", "x");
    env_set(&e, "CUTAINT_ON_SKIP", "error");
    env_set(&e, "CUTAINT_INJECT", "x");
    ct_config c;
    cr_assert_eq(load(&e, &c), 3);
    cr_assert_eq(e.n_diag, 3);
    cr_assert_eq(c.on_skip, CT_SKIP_ERROR);
}

Test(config, hostile_values_are_shown_tamed_and_never_as_a_format)
{
    env e = {0};
    env_set(&e, "CUTAINT_LOG", "%s%n%s\n\x1b[31mred");
    ct_config c;
    load(&e, &c);
    cr_assert_eq(e.n_diag, 1);
    cr_assert(strstr(e.diag[0], "'%s%n%s??[31mred'"), "%s", e.diag[0]);
    /* A huge value is cut in the message. */
    e = (env){0};
    fill_long_path();
    long_path[0] = 'x';
    env_set(&e, "CUTAINT_ON_SKIP", long_path);
    load(&e, &c);
    cr_assert_eq(e.n_diag, 1);
    cr_assert_lt(strlen(e.diag[0]), 300);
    cr_assert(strstr(e.diag[0], "...'"), "%s", e.diag[0]);
}

Test(config, a_path_just_fitting_is_kept, .init = fill_long_path)
{
    long_path[CT_PATH_MAX - 1] = '\0';
    env e = {0};
    env_set(&e, "CUTAINT_REPORT", long_path);
    ct_config c;
    cr_assert_eq(load(&e, &c), 0);
    cr_assert_str_eq(c.report, long_path);
}

Test(config, null_diag_and_real_getenv_work)
{
    setenv("CUTAINT_LOG", "info", 1);
    setenv("CUTAINT_POISON", "bad", 1);
    ct_config c;
    cr_assert_eq(ct_config_load(&c, &ct_cuda_errors, NULL, NULL, NULL), 1);
    cr_assert_eq(c.log, CT_LOG_INFO);
    cr_assert_eq(c.poison, 0xff);
}

/* ---- unknown variables ------------------------------------------------ */

Test(config, unknown_cutaint_names_are_reported)
{
    char *envp[] = {
        "PATH=/bin", "CUTAINT_LOG=warn", "CUTAINT_POSION=0", "CUTAINT_REPORT=",
        "CUTAINT_",  "CUTAINTX=1",       "CUTAINT_EXTRA",    NULL,
    };
    env e = {0};
    cr_assert_eq(ct_config_check_unknown(envp, env_diag, &e), 3);
    cr_assert_eq(e.n_diag, 3);
    static const char head[] = "cutaint: CUTAINT_POSION is not a cutaint variable (known: "
                               "CUTAINT_LOG, CUTAINT_LOG_FILE, ";
    cr_assert(strncmp(e.diag[0], head, sizeof head - 1) == 0, "%s", e.diag[0]);
    cr_assert(strstr(e.diag[0], "CUTAINT_DISABLE); ignored"), "%s", e.diag[0]);
    cr_assert(strncmp(e.diag[1], "cutaint: CUTAINT_ is not", 24) == 0, "%s", e.diag[1]);
    cr_assert(strncmp(e.diag[2], "cutaint: CUTAINT_EXTRA is not", 29) == 0, "%s", e.diag[2]);
    cr_assert_eq(ct_config_check_unknown(NULL, env_diag, &e), 0);
    cr_assert_eq(ct_config_check_unknown(envp, NULL, NULL), 3);
}

/* ---- CUTAINT_ARGS ----------------------------------------------------- */

Test(args, grammar)
{
    ct_arg_rules r;
    char err[CT_DIAG_MAX];
    cr_assert_eq(ct_args_parse(" saxpy = -, - ,r,w ; at::native::*=rw;_Z4fill*=w;", &r, err, sizeof err), CT_OK, "%s",
                 err);
    cr_assert_eq(r.n, 3);
    cr_assert_str_eq(r.rule[0].glob, "saxpy");
    cr_assert_eq(r.rule[0].n_roles, 4);
    cr_assert_eq(r.rule[0].role[0], CT_ROLE_IGNORE);
    cr_assert_eq(r.rule[0].role[1], CT_ROLE_IGNORE);
    cr_assert_eq(r.rule[0].role[2], CT_ROLE_READ);
    cr_assert_eq(r.rule[0].role[3], CT_ROLE_WRITE);
    cr_assert_str_eq(r.rule[1].glob, "at::native::*");
    cr_assert_eq(r.rule[1].n_roles, 1);
    cr_assert_eq(r.rule[1].role[0], CT_ROLE_READWRITE);
    cr_assert_str_eq(r.rule[2].glob, "_Z4fill*");
}

Test(args, empty_roles_are_default)
{
    ct_arg_rules r;
    cr_assert_eq(ct_args_parse("k=,,r,", &r, NULL, 0), CT_OK);
    cr_assert_eq(r.rule[0].n_roles, 4);
    cr_assert_eq(r.rule[0].role[0], CT_ROLE_DEFAULT);
    cr_assert_eq(r.rule[0].role[1], CT_ROLE_DEFAULT);
    cr_assert_eq(r.rule[0].role[2], CT_ROLE_READ);
    cr_assert_eq(r.rule[0].role[3], CT_ROLE_DEFAULT);
    cr_assert_eq(ct_args_parse("k=", &r, NULL, 0), CT_OK);
    cr_assert_eq(r.rule[0].n_roles, 1);
    cr_assert_eq(r.rule[0].role[0], CT_ROLE_DEFAULT);
    cr_assert_eq(ct_args_parse("", &r, NULL, 0), CT_OK);
    cr_assert_eq(r.n, 0);
    cr_assert_eq(ct_args_parse(" ; ;", &r, NULL, 0), CT_OK);
    cr_assert_eq(r.n, 0);
    cr_assert_eq(ct_args_parse(NULL, &r, NULL, 0), CT_OK);
}

Test(args, templates_with_commas_stay_in_the_glob)
{
    ct_arg_rules r;
    cr_assert_eq(ct_args_parse("foo<int, float>*=w,r", &r, NULL, 0), CT_OK);
    cr_assert_str_eq(r.rule[0].glob, "foo<int, float>*");
    cr_assert_eq(r.rule[0].n_roles, 2);
}

Test(args, errors_name_position_and_expectation)
{
    static const struct {
        const char *text, *error;
    } cases[] = {
        {"saxpy", "rule 1 'saxpy', column 1: expected GLOB=ROLE[,ROLE]..."},
        {"a=r;b=x", "rule 2 'b=x', column 7: expected a role r, w, rw, - or nothing (default)"},
        {"a=r; =w", "rule 2 '=w', column 6: expected a kernel name glob before '='"},
        {"a=r,wr", "rule 1 'a=r,wr', column 5: expected a role r, w, rw, - or nothing (default)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ct_arg_rules r;
        char err[CT_DIAG_MAX];
        cr_assert_eq(ct_args_parse(cases[i].text, &r, err, sizeof err), CT_EPARSE);
        cr_assert_str_eq(err, cases[i].error);
        cr_assert_eq(r.n, 0, "a failed parse leaves no rule");
    }
}

Test(args, limits_are_errors)
{
    char text[4096] = "";
    for (int i = 0; i < CT_ARGS_MAX_RULES + 1; i++)
        strcat(text, "k=r;");
    ct_arg_rules r;
    char err[CT_DIAG_MAX];
    cr_assert_eq(ct_args_parse(text, &r, err, sizeof err), CT_EPARSE);
    cr_assert(strstr(err, "expected at most 32 rules"), "%s", err);
    strcpy(text, "k=");
    for (int i = 0; i < CT_ARGS_MAX_PARAMS; i++)
        strcat(text, "r,");
    strcat(text, "r");
    cr_assert_eq(ct_args_parse(text, &r, err, sizeof err), CT_EPARSE);
    cr_assert(strstr(err, "expected at most 64 roles"), "%s", err);
    memset(text, 'g', CT_PATTERN_MAX);
    strcpy(text + CT_PATTERN_MAX, "=r");
    cr_assert_eq(ct_args_parse(text, &r, err, sizeof err), CT_EPARSE);
    cr_assert(strstr(err, "expected a glob shorter than 128 bytes"), "%s", err);
}

Test(args, match_either_name_first_rule_wins)
{
    ct_arg_rules r;
    cr_assert_eq(ct_args_parse("saxpy=-,-,r,w;at::native::*=rw;_Z4fill*=w;*=r", &r, NULL, 0), CT_OK);
    cr_assert_eq(ct_args_match(&r, "_Z5saxpyifPKfPf", "saxpy"), &r.rule[0]);
    cr_assert_eq(ct_args_match(&r, "_Z4fillPfi", "fill"), &r.rule[2]);
    cr_assert_eq(ct_args_match(&r, "_ZN2at6native3foo", "at::native::foo<float>"), &r.rule[1]);
    cr_assert_eq(ct_args_match(&r, "other", NULL), &r.rule[3]);
    cr_assert_eq(ct_args_match(&r, NULL, NULL), NULL);
    ct_args_parse("saxpy=r", &r, NULL, 0);
    cr_assert_null(ct_args_match(&r, "saxpy2", "saxpy2"));
    cr_assert_null(ct_args_match(NULL, "saxpy", NULL));
}

/* ---- CUTAINT_INJECT --------------------------------------------------- */

Test(inject, grammar_and_defaults)
{
    ct_inject_rules r;
    char err[CT_DIAG_MAX];
    cr_assert_eq(inject_parse("launch:gemm; api:cuMemcpyDtoH*#3+ = ILLEGAL_ADDRESS ;"
                              "launch : at::native::* # 2 = context_lost;api:cuMemAlloc=2",
                              &r, err, sizeof err),
                 CT_OK, "%s", err);
    cr_assert_eq(r.n, 4);
    cr_assert_eq(r.rule[0].kind, CT_INJECT_LAUNCH);
    cr_assert_str_eq(r.rule[0].pattern, "gemm");
    cr_assert_eq(r.rule[0].nth, 1);
    cr_assert_not(r.rule[0].and_later);
    cr_assert_eq(r.rule[0].error, CUDA_ERROR_LAUNCH_FAILED);
    cr_assert_not(r.rule[0].context_loss);

    cr_assert_eq(r.rule[1].kind, CT_INJECT_API);
    cr_assert_str_eq(r.rule[1].pattern, "cuMemcpyDtoH*");
    cr_assert_eq(r.rule[1].nth, 3);
    cr_assert(r.rule[1].and_later);
    cr_assert_eq(r.rule[1].error, CUDA_ERROR_ILLEGAL_ADDRESS);

    cr_assert_str_eq(r.rule[2].pattern, "at::native::*");
    cr_assert_eq(r.rule[2].nth, 2);
    cr_assert(r.rule[2].context_loss);
    cr_assert_eq(r.rule[2].error, CUDA_ERROR_ILLEGAL_ADDRESS);

    cr_assert_eq(r.rule[3].kind, CT_INJECT_API);
    cr_assert_eq(r.rule[3].error, CUDA_ERROR_OUT_OF_MEMORY);

    cr_assert_eq(inject_parse("api:cuLaunchKernel", &r, NULL, 0), CT_OK);
    cr_assert_eq(r.rule[0].error, CUDA_ERROR_UNKNOWN);
    cr_assert_eq(inject_parse("API:x=CUDA_ERROR_LAUNCH_TIMEOUT", &r, NULL, 0), CT_OK);
    cr_assert_eq(r.rule[0].error, CUDA_ERROR_LAUNCH_TIMEOUT);
}

/* Core knows no driver: every code an effect yields comes from the
 * vocabulary it is handed, here a made-up one. */
static int toy_parse(const char *text, int *code)
{
    if (strcmp(text, "BOOM") != 0)
        return CT_EPARSE;
    *code = 42;
    return CT_OK;
}

Test(inject, codes_come_from_the_vocabulary_handed_in)
{
    static const ct_error_vocab toy = {.parse = toy_parse,
                                       .success = 42,
                                       .launch_default = 11,
                                       .api_default = 12,
                                       .context_lost = 13};
    ct_inject_rules r;
    char err[CT_DIAG_MAX];
    cr_assert_eq(ct_inject_parse("launch:a;api:b;api:c=context_lost", &toy, &r, err, sizeof err), CT_OK, "%s", err);
    cr_assert_eq(r.rule[0].error, 11);
    cr_assert_eq(r.rule[1].error, 12);
    cr_assert_eq(r.rule[2].error, 13);
    cr_assert_eq(ct_inject_parse("api:b=BOOM", &toy, &r, err, sizeof err), CT_EPARSE,
                 "the toy's success code injects nothing");
    cr_assert_eq(ct_inject_parse("api:b=ILLEGAL_ADDRESS", &toy, &r, err, sizeof err), CT_EPARSE,
                 "a name the vocabulary does not know");
    cr_assert_eq(ct_inject_parse("api:b", NULL, &r, err, sizeof err), CT_EINVAL);
}

Test(inject, errors_name_position_and_expectation)
{
    static const struct {
        const char *text, *error;
    } cases[] = {
        {"gemm", "spec 1 'gemm', column 1: expected KIND:PATTERN[#N[+]][=EFFECT]"},
        {"kernel:gemm", "spec 1 'kernel:gemm', column 1: expected launch or api before ':'"},
        {"launch:", "spec 1 'launch:', column 7: expected a name glob after ':'"},
        {"launch:#2", "spec 1 'launch:#2', column 7: expected a name glob after ':'"},
        {"launch:g#0", "spec 1 'launch:g#0', column 9: expected #N or #N+ with N a whole number >= 1"},
        {"launch:g#", "spec 1 'launch:g#', column 9: expected #N or #N+ with N a whole number >= 1"},
        {"launch:g#2x", "spec 1 'launch:g#2x', column 9: expected #N or #N+ with N a whole number >= 1"},
        {"launch:g#2++", "spec 1 'launch:g#2++', column 9: expected #N or #N+ with N a whole number >= 1"},
        {"launch:g#99999999999999999999", "spec 1 'launch:g#99999999999999999999', column 9: "
                                          "expected #N or #N+ with N a whole number >= 1"},
        {"api:a;launch:g=", "spec 2 'launch:g=', column 15: expected an effect after '='"},
        {"launch:g=boom", "spec 1 'launch:g=boom', column 10: expected a CUresult (e.g. "
                          "CUDA_ERROR_ILLEGAL_ADDRESS, ILLEGAL_ADDRESS or 700) or context_lost"},
        {"launch:g=0", "spec 1 'launch:g=0', column 10: expected an error: CUDA_SUCCESS injects nothing"},
        {"launch:g=success", "spec 1 'launch:g=success', column 10: expected an error: "
                             "CUDA_SUCCESS injects nothing"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ct_inject_rules r;
        char err[CT_DIAG_MAX];
        cr_assert_eq(inject_parse(cases[i].text, &r, err, sizeof err), CT_EPARSE, "%s", cases[i].text);
        cr_assert_str_eq(err, cases[i].error);
        cr_assert_eq(r.n, 0);
    }
}

Test(inject, limits_are_errors)
{
    char text[4096] = "";
    for (int i = 0; i < CT_INJECT_MAX_RULES + 1; i++)
        strcat(text, "api:x;");
    ct_inject_rules r;
    char err[CT_DIAG_MAX];
    cr_assert_eq(inject_parse(text, &r, err, sizeof err), CT_EPARSE);
    cr_assert(strstr(err, "spec 17") && strstr(err, "expected at most 16 specs"), "%s", err);
    strcpy(text, "launch:");
    memset(text + 7, 'g', CT_PATTERN_MAX);
    text[7 + CT_PATTERN_MAX] = '\0';
    cr_assert_eq(inject_parse(text, &r, err, sizeof err), CT_EPARSE);
    cr_assert(strstr(err, "expected a glob shorter than 128 bytes"), "%s", err);
    /* A huge count still fits in 64 bits. */
    cr_assert_eq(inject_parse("api:x#18446744073709551615", &r, err, sizeof err), CT_OK);
    cr_assert_eq(r.rule[0].nth, UINT64_MAX);
}

static int fire_count(ct_inject_rules *r, ct_inject_kind kind, const char *name, const char *alt, int calls,
                      int *first_fire)
{
    int fired = 0;
    *first_fire = 0;
    for (int call = 1; call <= calls; call++)
        if (ct_inject_check(r, kind, name, alt)) {
            fired++;
            if (!*first_fire)
                *first_fire = call;
        }
    return fired;
}

Test(inject, fires_on_exactly_the_nth_match)
{
    ct_inject_rules r;
    cr_assert_eq(inject_parse("launch:gemm#3", &r, NULL, 0), CT_OK);
    int first;
    cr_assert_eq(fire_count(&r, CT_INJECT_LAUNCH, "_Z4gemmPf", "gemm", 10, &first), 1);
    cr_assert_eq(first, 3);
    /* Other kinds and names do not count. */
    cr_assert_eq(inject_parse("launch:gemm#2", &r, NULL, 0), CT_OK);
    cr_assert_null(ct_inject_check(&r, CT_INJECT_API, "gemm", NULL));
    cr_assert_null(ct_inject_check(&r, CT_INJECT_LAUNCH, "saxpy", "saxpy"));
    cr_assert_null(ct_inject_check(&r, CT_INJECT_LAUNCH, NULL, "gemm"));
    cr_assert_eq(ct_inject_check(&r, CT_INJECT_LAUNCH, "gemm", NULL), &r.rule[0]);
    cr_assert_null(ct_inject_check(&r, CT_INJECT_LAUNCH, "gemm", NULL));
}

Test(inject, plus_fires_on_the_nth_and_every_later)
{
    ct_inject_rules r;
    cr_assert_eq(inject_parse("api:cuMemcpyDtoH#2+", &r, NULL, 0), CT_OK);
    int first;
    /* The shim passes the exported name and the family base. */
    cr_assert_eq(fire_count(&r, CT_INJECT_API, "cuMemcpyDtoH_v2", "cuMemcpyDtoH", 10, &first), 9);
    cr_assert_eq(first, 2);
}

Test(inject, every_matching_rule_counts_and_the_first_firing_is_returned)
{
    ct_inject_rules r;
    cr_assert_eq(inject_parse("api:cuMem*#2=OUT_OF_MEMORY;api:cuMemAlloc#1", &r, NULL, 0), CT_OK);
    cr_assert_eq(ct_inject_check(&r, CT_INJECT_API, "cuMemAlloc_v2", "cuMemAlloc"), &r.rule[1]);
    cr_assert_eq(ct_inject_check(&r, CT_INJECT_API, "cuMemAlloc_v2", "cuMemAlloc"), &r.rule[0]);
    cr_assert_null(ct_inject_check(&r, CT_INJECT_API, "cuMemAlloc_v2", "cuMemAlloc"));
    cr_assert_null(ct_inject_check(NULL, CT_INJECT_API, "x", NULL));
}

#define THREADS 8
#define CALLS_PER_THREAD 20000

typedef struct counter_run {
    ct_inject_rules *rules;
    pthread_barrier_t *start;
    int fired_once, fired_plus;
} counter_run;

static void *hammer(void *arg)
{
    counter_run *run = arg;
    pthread_barrier_wait(run->start);
    for (int i = 0; i < CALLS_PER_THREAD; i++) {
        const ct_inject_rule *rule = ct_inject_check(run->rules, CT_INJECT_LAUNCH, "_Z4gemmPf", "gemm");
        run->fired_once += rule == &run->rules->rule[0];
        run->fired_plus += ct_inject_check(run->rules, CT_INJECT_API, "cuMemcpyHtoD_v2", "cuMemcpyHtoD") != NULL;
    }
    return NULL;
}

Test(inject, concurrent_checks_count_exactly)
{
    ct_inject_rules r;
    cr_assert_eq(inject_parse("launch:gemm#77777;api:cuMemcpyHtoD#100001+", &r, NULL, 0), CT_OK);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS);
    pthread_t tid[THREADS];
    counter_run runs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        runs[i] = (counter_run){&r, &start, 0, 0};
        pthread_create(&tid[i], NULL, hammer, &runs[i]);
    }
    int once = 0, plus = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(tid[i], NULL);
        once += runs[i].fired_once;
        plus += runs[i].fired_plus;
    }
    pthread_barrier_destroy(&start);
    cr_assert_eq(once, 1);
    cr_assert_eq(plus, THREADS * CALLS_PER_THREAD - 100000);
    cr_assert_eq(atomic_load(&r.rule[0].seen), THREADS * CALLS_PER_THREAD);
}

/* Random text through both grammars: no crash, no read past the end (ASan
 * builds check), and a failed parse always leaves no rule. */
Test(grammars, garbage_is_safe)
{
    static const char alphabet[] = "launchapi:=#+;,-rw*?[]!0123456789 \t_ILLEGAL_ADDRESScontext_lost";
    unsigned seed = 4242;
    for (int round = 0; round < 20000; round++) {
        char text[160];
        size_t n = (size_t)(rand_r(&seed) % (sizeof text - 1));
        for (size_t i = 0; i < n; i++)
            text[i] =
                rand_r(&seed) % 8 ? alphabet[rand_r(&seed) % (sizeof alphabet - 1)] : (char)(rand_r(&seed) % 255 + 1);
        text[n] = '\0';
        ct_arg_rules a;
        ct_inject_rules r;
        char err[CT_DIAG_MAX];
        if (ct_args_parse(text, &a, err, sizeof err) != CT_OK)
            cr_assert(a.n == 0 && strchr(err, '\n') == NULL);
        if (inject_parse(text, &r, err, sizeof err) != CT_OK)
            cr_assert(r.n == 0 && strchr(err, '\n') == NULL);
        else
            for (unsigned i = 0; i < r.n; i++)
                cr_assert(r.rule[i].nth >= 1 && r.rule[i].error != 0);
    }
}
