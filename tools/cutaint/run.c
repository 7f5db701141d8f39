/*
 * run.c - `cutaint run [OPTIONS] -- PROGRAM [ARGS...]`: the option table,
 * parsing, validation and help; spawn.c runs the program, summary.c
 * reports on it.
 *
 * Owns: the one table of options (name, value, variable, check, help).
 * Parsing, validation, the environment and --help all read it.
 *
 * Invariants:
 * - A value is accepted exactly when the shim would accept it: keyword,
 *   byte and path values go through core's ct_config_load, --inject and
 *   --args through ct_inject_parse / ct_args_parse (for their precise
 *   column-level reasons).  CUTAINT_* variables inherited from the
 *   environment are checked the same way.  Any mistake: one line, the usage
 *   line, status 2, and the program is not run.
 * - Option values and environment text reach messages only through
 *   ct_put_text (never as a format string).
 */
#include "run.h"

#include "commands.h"
#include "config.h"
#include "errnames.h"
#include "textout.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef bool (*value_check)(const char *env, const char *value, char *why, size_t cap);

typedef struct run_option {
    const char *name;    /* without the leading "--" */
    char short_name;     /* -q, -h; 0 for none */
    const char *metavar; /* NULL for a flag */
    const char *env;     /* the variable a valued option sets */
    value_check check;
    const char *accepted; /* what check accepts, for messages */
    const char *help;
} run_option;

static bool check_config(const char *env, const char *value, char *why, size_t cap);
static bool check_inject(const char *env, const char *value, char *why, size_t cap);
static bool check_args(const char *env, const char *value, char *why, size_t cap);

static const run_option options[CT_RUN_OPTS] = {
    [CT_OPT_REPORT] = {"report", 0, "FILE", "CUTAINT_REPORT", check_config, "a path shorter than 1024 bytes",
                       "write the JSON Lines report to FILE ('%p' becomes the pid: one file per\n"
                       "process that calls the driver, the summary reads them all); default: a\n"
                       "new file cutaint-XXXXXX.jsonl in $TMPDIR (or /tmp), named in the summary\n"
                       "(removed if no process called the driver)"},
    [CT_OPT_INJECT] = {"inject", 0, "SPEC", "CUTAINT_INJECT", check_inject, NULL,
                       "inject faults: KIND:PATTERN[#N[+]][=EFFECT][;...], KIND launch (a kernel\n"
                       "name glob) or api (a cu* name glob); #N the Nth match, #N+ that and every\n"
                       "later one; EFFECT a CUresult (name, short name or number) or context_lost;\n"
                       "e.g. 'launch:*saxpy*#2=ILLEGAL_ADDRESS' or 'api:cuMemcpyDtoH*=context_lost'"},
    [CT_OPT_ARGS] = {"args", 0, "SPEC", "CUTAINT_ARGS", check_args, NULL,
                     "declare kernel parameter roles: GLOB=ROLE[,ROLE]...[;...], ROLE r, w, rw,\n"
                     "- (not memory) or empty (decided from the signature); e.g. 'scale=rw,-'"},
    [CT_OPT_EXIT_STATUS] = {"exit-status", 0, "N", "CUTAINT_EXIT_STATUS", check_config, "a status 0..255",
                            "exit status when the CUDA context was lost (default 70; 0 keeps the\n"
                            "program's own)"},
    [CT_OPT_ERROR_EXITCODE] = {"error-exitcode", 0, "N", "CUTAINT_ERROR_EXITCODE", check_config,
                               "a status 1..255 (0: off)",
                               "exit status of a process that refused or failed a read and would have\n"
                               "exited 0 (default: off), as compute-sanitizer's --error-exitcode;\n"
                               "cutaint itself exits N when any process of the run did and the\n"
                               "program's status is 0.  A lost context's status (--exit-status) wins\n"
                               "over N"},
    [CT_OPT_HEALTH_FILE] = {"health-file", 0, "FILE", "CUTAINT_HEALTH_FILE", check_config,
                            "a path shorter than 1024 bytes",
                            "written with the reason the moment the context is lost (removed at start\n"
                            "if left by an earlier run); for liveness probes: test ! -e FILE"},
    [CT_OPT_METRICS_FILE] = {"metrics-file", 0, "FILE", "CUTAINT_METRICS_FILE", check_config,
                             "a path shorter than 1024 bytes",
                             "keep FILE ('%p': pid) rewritten with the counts in Prometheus text format\n"
                             "(failures, skips, refused reads and bytes, context lost), at every event\n"
                             "and at exit; for node_exporter's textfile collector: DIR/job-%p.prom"},
    [CT_OPT_LOG] = {"log", 0, "LEVEL", "CUTAINT_LOG", check_config, "warn, off, error, info or debug",
                    "the shim's log level: off, error, warn (default), info, debug"},
    [CT_OPT_LOG_FILE] = {"log-file", 0, "FILE", "CUTAINT_LOG_FILE", check_config, "a path shorter than 1024 bytes",
                         "write the shim's log lines to FILE instead of stderr ('%p': pid)"},
    [CT_OPT_POISON] = {"poison", 0, "off|BYTE", "CUTAINT_POISON", check_config, "off or a byte 0..255 (e.g. 0xff)",
                       "fill the host buffer of a refused read with BYTE (default 0xff) or\n"
                       "leave it untouched (off)"},
    [CT_OPT_ON_SKIP] = {"on-skip", 0, "propagate|error", "CUTAINT_ON_SKIP", check_config, "propagate or error",
                        "a launch skipped because its input is tainted returns success and the\n"
                        "read fails later (propagate, default), or the root failure's error at\n"
                        "once (error)"},
    [CT_OPT_ON_CONTEXT_LOSS] = {"on-context-loss", 0, "continue|exit|abort", "CUTAINT_ON_CONTEXT_LOSS", check_config,
                                "continue, exit or abort",
                                "when the context is lost: keep running and exit 70 at the end (continue,\n"
                                "default), exit at once with that status (exit), or abort() for a core"},
    [CT_OPT_FAKECUDA] = {"fakecuda", 0, NULL, NULL, NULL, NULL,
                         "run on fakecuda, the CPU emulation of libcuda.so.1 (no GPU needed)"},
    [CT_OPT_QUIET] = {"quiet", 'q', NULL, NULL, NULL, NULL, "print no summary (and make no temporary report)"},
    [CT_OPT_HELP] = {"help", 'h', NULL, NULL, NULL, NULL, "this page"},
};

static const char usage[] = "usage: cutaint run [OPTIONS] -- PROGRAM [ARGS...]  (cutaint run --help)";

const char *ct_run_option_env(ct_run_opt opt)
{
    return options[opt].env;
}

/* ---- checks ------------------------------------------------------------ */

typedef struct one_var {
    const char *name, *value;
} one_var;

static const char *one_var_get(const char *name, void *ctx)
{
    const one_var *v = ctx;
    return strcmp(name, v->name) == 0 ? v->value : NULL;
}

/* The shim's own parser decides; the table says what it accepts. */
static bool check_config(const char *env, const char *value, char *why, size_t cap)
{
    ct_config cfg;
    one_var var = {env, value};
    (void)why, (void)cap;
    return ct_config_load(&cfg, &ct_cuda_errors, one_var_get, NULL, &var) == 0;
}

static bool check_inject(const char *env, const char *value, char *why, size_t cap)
{
    static ct_inject_rules rules; /* large; not needed after the check */
    (void)env;
    return ct_inject_parse(value, &ct_cuda_errors, &rules, why, cap) == 0;
}

static bool check_args(const char *env, const char *value, char *why, size_t cap)
{
    static ct_arg_rules rules;
    (void)env;
    return ct_args_parse(value, &rules, why, cap) == 0;
}

static int bad_value(const run_option *o, const char *value, const char *why)
{
    fprintf(stderr, "cutaint run: --%s '", o->name);
    ct_put_text(stderr, value, "");
    fputs(why[0] ? "' is not valid: " : "' is not valid: expected ", stderr);
    ct_put_text(stderr, why[0] ? why : o->accepted, "");
    fputc('\n', stderr);
    return ct_usage_line(usage);
}

static int check_value(const run_option *o, const char *value)
{
    char why[CT_DIAG_MAX] = "";
    if (!*value) {
        fprintf(stderr, "cutaint run: --%s needs a non-empty value\n", o->name);
        return ct_usage_line(usage);
    }
    return o->check(o->env, value, why, sizeof why) ? 0 : bad_value(o, value, why);
}

/* ---- the inherited environment ----------------------------------------- */

typedef struct env_view {
    const ct_run_request *req;
    int bad;
} env_view;

/* What the program will see: an option overrides the inherited variable. */
static const char *env_view_get(const char *name, void *ctx)
{
    const env_view *v = ctx;
    for (int i = 0; i < CT_RUN_OPTS; i++)
        if (options[i].env && v->req->set[i] && strcmp(options[i].env, name) == 0)
            return v->req->value[i];
    return getenv(name);
}

/* Core's line ends "; using the default ..." - cutaint refuses instead. */
static void env_diag(const char *message, void *ctx)
{
    env_view *v = ctx;
    const char *cut = strstr(message, "; using the default");
    size_t n = cut ? (size_t)(cut - message) : strlen(message);
    fputs("cutaint run: from the environment: ", stderr);
    if (strncmp(message, "cutaint: ", 9) == 0) {
        message += 9;
        n -= 9;
    }
    fwrite(message, 1, n, stderr);
    fputc('\n', stderr);
    v->bad++;
}

static int check_environment(const ct_run_request *req)
{
    ct_config cfg;
    env_view view = {req, 0};
    ct_config_load(&cfg, &ct_cuda_errors, env_view_get, env_diag, &view);
    return view.bad ? ct_usage_error(usage, "cutaint run: fix or unset that variable", NULL) : 0;
}

/* ---- parsing ------------------------------------------------------------ */

/* "--name[=value]" or "-c" (flags only). */
static const run_option *find_option(const char *arg, const char *eq)
{
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    bool is_short = arg[1] != '-';
    for (int i = 0; i < CT_RUN_OPTS; i++) {
        const run_option *o = &options[i];
        if (is_short ? len == 2 && o->short_name && arg[1] == o->short_name
                     : strlen(o->name) == len - 2 && strncmp(o->name, arg + 2, len - 2) == 0)
            return o;
    }
    return NULL;
}

/* Parses argv[*i] (and maybe its value); 0 or an exit status. */
static int parse_option(int argc, char **argv, int *i, ct_run_request *req)
{
    const char *arg = argv[*i];
    const char *eq = strchr(arg, '=');
    const run_option *o = find_option(arg, eq);
    if (!o)
        return ct_usage_error(usage, "cutaint run: unknown option", argv[*i]);
    int index = (int)(o - options);
    req->set[index] = true;
    if (!o->metavar) {
        if (eq)
            return ct_usage_error(usage, "cutaint run: this option takes no value", argv[*i]);
        return 0;
    }
    if (!eq && *i + 1 == argc) {
        fprintf(stderr, "cutaint run: --%s needs a value (%s)\n", o->name, o->metavar);
        return ct_usage_line(usage);
    }
    req->value[index] = eq ? eq + 1 : argv[++*i];
    return check_value(o, req->value[index]);
}

static void print_help(void)
{
    fputs("NAME\n"
          "    cutaint run - run an unmodified CUDA program under libcutaint.so\n"
          "\n"
          "SYNOPSIS\n"
          "    cutaint run [OPTIONS] -- PROGRAM [ARGS...]\n"
          "\n"
          "DESCRIPTION\n"
          "    Runs PROGRAM with libcutaint.so preloaded (LD_PRELOAD, added in front of\n"
          "    any preload already set) and the CUTAINT_* variables the options name,\n"
          "    waits for it, and prints a summary on stderr: the exit status, how many\n"
          "    failures, skipped launches and refused reads the report holds, whether\n"
          "    the CUDA context was lost, the root cause and the report's path.\n"
          "    Only processes that call the driver write to the report: a shell or\n"
          "    a launcher between cutaint and the CUDA program writes nothing.\n"
          "    SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to cutaint are passed on to the\n"
          "    program (a terminal's Ctrl-C reaches both directly).\n"
          "\n"
          "OPTIONS\n",
          stdout);
    for (int i = 0; i < CT_RUN_OPTS; i++) {
        const run_option *o = &options[i];
        if (o->short_name)
            printf("    -%c, ", o->short_name);
        else
            fputs("    ", stdout);
        printf("--%s%s%s\n        ", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        for (const char *h = o->help; *h; h++) {
            putchar(*h);
            if (*h == '\n')
                fputs("        ", stdout);
        }
        putchar('\n');
    }
    fputs("\n"
          "    Every option also has its CUTAINT_* variable (see ENVIRONMENT); a\n"
          "    malformed value, given as an option or inherited, is refused with\n"
          "    status 2 and the program is not run.\n"
          "\n"
          "EXIT STATUS\n"
          "    The program's own status, which the shim makes 70 (--exit-status) when\n"
          "    the CUDA context was lost, and N (--error-exitcode) when it would have\n"
          "    been 0 but a process of the run refused or failed a read; 128+S when\n"
          "    the program was killed by signal S; 2 on a usage error or when\n"
          "    libcutaint.so cannot be found; 126 or 127 when PROGRAM cannot be\n"
          "    executed or found.\n"
          "\n"
          "ENVIRONMENT\n"
          "    CUTAINT_LIB           libcutaint.so to preload (default: the build tree\n"
          "                          cutaint was built in, then the install libdir)\n"
          "    CUTAINT_FAKECUDA_DIR  directory holding fakecuda's libcuda.so.1\n"
          "    CUTAINT_REPORT, CUTAINT_INJECT, CUTAINT_ARGS, CUTAINT_EXIT_STATUS,\n"
          "    CUTAINT_ERROR_EXITCODE, CUTAINT_HEALTH_FILE, CUTAINT_METRICS_FILE,\n"
          "    CUTAINT_LOG, CUTAINT_LOG_FILE, CUTAINT_POISON, CUTAINT_ON_SKIP,\n"
          "    CUTAINT_ON_CONTEXT_LOSS, CUTAINT_DISABLE\n"
          "                          read by the shim; an option overrides its variable\n"
          "\n"
          "EXAMPLES\n"
          "    cutaint run -- ./train --epochs 1\n"
          "    cutaint run --report /var/log/job-%p.jsonl --health-file /run/gpu-dead \\\n"
          "        -- python serve.py\n"
          "    cutaint run --inject 'launch:*gemm*#3=ILLEGAL_ADDRESS' -- ./tests\n"
          "    cutaint run --error-exitcode 9 -- make check    # CI: a refused read fails\n",
          stdout);
}

/* --error-exitcode N over the whole run: a launcher (a shell, torchrun)
 * between cutaint and the process that refused a read may lose that
 * process's N; the reports do not. */
static void apply_error_exitcode(const ct_run_request *req, ct_run_outcome *o)
{
    if (!req->set[CT_OPT_ERROR_EXITCODE] || o->status != 0)
        return;
    int n = atoi(req->value[CT_OPT_ERROR_EXITCODE]);
    if (n > 0 && ct_run_report_refused(o))
        o->status = n;
}

/* Fills req from argv (argv[0] is "run"); 0, or an exit status. */
static int parse(int argc, char **argv, ct_run_request *req)
{
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (argv[i][0] != '-' || argv[i][1] == '\0')
            break; /* the program, without "--" */
        int rc = parse_option(argc, argv, &i, req);
        if (rc)
            return rc;
    }
    if (req->set[CT_OPT_HELP])
        return 0;
    if (i == argc)
        return ct_usage_error(usage, "cutaint run: no program given", NULL);
    req->program = argv + i;
    return check_environment(req);
}

#ifndef NDEBUG
/* Whether every valued option set has a non-empty value, and each one the
   shim's configuration reads is one it accepts (run.h). */
static bool request_validated(const ct_run_request *req)
{
    for (int i = 0; i < CT_RUN_OPTS; i++) {
        const run_option *o = &options[i];
        if (!req->set[i] || !o->metavar)
            continue;
        if (!req->value[i] || !*req->value[i] ||
            (o->check == check_config && !check_config(o->env, req->value[i], NULL, 0)))
            return false;
    }
    return true;
}
#endif

int ct_cmd_run(int argc, char **argv)
{
    ct_run_request req = {0};
    ct_run_outcome outcome;
    int rc = parse(argc, argv, &req);
    if (rc)
        return rc;
    if (req.set[CT_OPT_HELP]) {
        print_help();
        return CT_EXIT_OK;
    }
    assert(request_validated(&req) && "every value is validated before ct_run_execute sees it");
    rc = ct_run_execute(&req, &outcome);
    if (rc)
        return rc;
    apply_error_exitcode(&req, &outcome);
    if (!req.set[CT_OPT_QUIET])
        ct_run_summary(stderr, &req, &outcome);
    else if (outcome.report_temporary)
        unlink(outcome.report); /* made only to decide --error-exitcode */
    return outcome.status;
}
