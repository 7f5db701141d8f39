/*
 * demo.c - `cutaint demo`: the whole story on a machine without a GPU.
 *
 * Runs the bundled, unmodified demo program (demo/demo_saxpy.c) on fakecuda
 * under the shim - through ct_run_execute, the code path of
 * `cutaint run --fakecuda` - and shows, each under a heading for a
 * first-time user: the program's own output (the refused read), the shim's
 * log lines, the run summary, and the report tree.
 *
 * Owns: the demo's narrative.  Invariants: exit 0 only if the report holds
 * a refused read (the story played out), 1 otherwise, 2 if something it
 * needs is missing, 126 or 127 (as `cutaint run`) if the demo program
 * cannot be executed; the report is kept (its path is printed for the next
 * command to try), the temporary log is removed once shown.
 */
#include "commands.h"

#include "locate.h"
#include "render.h"
#include "report.h"
#include "run.h"
#include "textout.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help[] = "NAME\n"
                           "    cutaint demo - show what cutaint does, on a bundled program, without a GPU\n"
                           "\n"
                           "SYNOPSIS\n"
                           "    cutaint demo\n"
                           "\n"
                           "DESCRIPTION\n"
                           "    Runs cutaint-demo-saxpy, an unmodified CUDA driver-API program with a\n"
                           "    common bug (a kernel launched with too many threads per block, whose\n"
                           "    error it ignores), on fakecuda - a CPU emulation of libcuda.so.1 - with\n"
                           "    libcutaint.so preloaded, as 'cutaint run --fakecuda' would.  It shows\n"
                           "    the program's output (its read of the unwritten result refused, the\n"
                           "    buffer poisoned), the shim's log lines, the run summary and the report\n"
                           "    tree, each under a heading.  The report is kept; its path is printed.\n"
                           "\n"
                           "EXIT STATUS\n"
                           "    0 the read was refused as it should be; 1 it was not; 2 the shim,\n"
                           "    fakecuda or the demo program could not be found.\n";

static const char usage[] = "usage: cutaint demo";

static const char story[] = "The program is an ordinary CUDA driver-API program that knows nothing of\n"
                            "cutaint (tools/cutaint/demo/demo_saxpy.c).  It sets y = 2 with a `fill`\n"
                            "kernel launched with 2048 threads per block - over the limit of 1024, so\n"
                            "the launch fails with CUDA_ERROR_INVALID_VALUE - and, like much real code,\n"
                            "never checks the launch's result.  It then computes y = 3*x + y (every\n"
                            "y[i] should be 5) and copies y back to the host.  Without cutaint that\n"
                            "copy succeeds and hands back numbers nobody computed.\n";

static void heading(const char *number, const char *title)
{
    printf("\n%s %s\n", number, title);
    for (size_t i = strlen(number) + strlen(title) + 1; i > 0; i--)
        putchar('-');
    putchar('\n');
}

static bool temp_file(char *out, size_t cap, const char *suffix)
{
    const char *dir = getenv("TMPDIR");
    int n = snprintf(out, cap, "%s/cutaint-demo-XXXXXX%s", dir && *dir ? dir : "/tmp", suffix);
    if (n < 0 || (size_t)n >= cap)
        return false;
    int fd = mkstemps(out, (int)strlen(suffix));
    if (fd < 0) {
        fprintf(stderr, "cutaint demo: cannot create a temporary file: %s\n", strerror(errno));
        return false;
    }
    close(fd);
    return true;
}

static void show_log(const char *path)
{
    char line[4096];
    bool any = false;
    FILE *f = fopen(path, "re");
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        fputs("  ", stdout);
        ct_put_text(stdout, line, "");
        putchar('\n');
        any = true;
    }
    if (f)
        fclose(f);
    if (!any)
        puts("  (nothing)");
}

static void show_tree(const char *report)
{
    ct_report r = {0};
    FILE *f = fopen(report, "re");
    if (!f || ct_report_read(&r, f, report) != 0)
        puts("  (the report could not be read)");
    else
        ct_render_text(stdout, &r);
    if (f)
        fclose(f);
    ct_report_free(&r);
}

static void show_command(const char *report, const char *log, const char *program)
{
    fputs("\nIt runs here on fakecuda, a CPU emulation of the driver, with\n"
          "libcutaint.so preloaded - the same as:\n\n  cutaint run --fakecuda --report ",
          stdout);
    ct_put_text(stdout, report, "");
    fputs(" \\\n      --log-file ", stdout);
    ct_put_text(stdout, log, "");
    fputs(" -- ", stdout);
    ct_put_text(stdout, program, "");
    putchar('\n');
}

/* The run itself and everything shown after it; the demo's status. */
static int play(char *program, const char *report, const char *log)
{
    char *argv[] = {program, NULL};
    ct_run_request req = {.program = argv};
    ct_run_outcome outcome;
    req.set[CT_OPT_FAKECUDA] = true;
    req.set[CT_OPT_REPORT] = true;
    req.value[CT_OPT_REPORT] = report;
    req.set[CT_OPT_LOG_FILE] = true;
    req.value[CT_OPT_LOG_FILE] = log;

    heading("2.", "The program's own output");
    puts("Look at what the copy returned and at the bytes it left in y:\n");
    int rc = ct_run_execute(&req, &outcome);
    if (rc)
        return rc;
    heading("3.", "What cutaint logged while the program ran");
    show_log(log);
    heading("4.", "The summary `cutaint run` prints when the program ends");
    ct_run_summary(stdout, &req, &outcome);
    heading("5.", "The report, as `cutaint report` shows it");
    puts("Root failure -> the work it kept from running -> the reads it refused:\n");
    show_tree(report);
    return ct_run_report_refused(&outcome) ? CT_EXIT_OK : CT_EXIT_DEMO_FAILED;
}

static void conclusion(int status, const char *report)
{
    if (status == CT_EXIT_OK) {
        fputs("\nThe copy of y was refused with the fill's own error and y was filled with\n"
              "0xff bytes (NaN) instead of stale numbers.  Next: render the graph with\n\n"
              "  cutaint report --format dot ",
              stdout);
        ct_put_text(stdout, report, "");
        puts(" | dot -Tsvg -o demo.svg\n\nor run your own program: cutaint run -- ./your-program");
    } else if (status == CT_EXIT_DEMO_FAILED) {
        puts("\ncutaint demo: the story did not play out - the report holds no refused\n"
             "read.  Check the log lines above.");
    }
}

int ct_cmd_demo(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(help, stdout);
        return CT_EXIT_OK;
    }
    if (argc > 1)
        return ct_usage_error(usage, "cutaint demo: unexpected argument", argv[1]);
    const char *program = ct_locate(&ct_place_demo);
    char report[PATH_MAX], log[PATH_MAX];
    if (!program || !temp_file(report, sizeof report, ".jsonl"))
        return CT_EXIT_USAGE;
    if (!temp_file(log, sizeof log, ".log")) {
        unlink(report);
        return CT_EXIT_USAGE;
    }
    puts("cutaint demo: a failed kernel launch, followed to the read it poisons");
    heading("1.", "The program");
    fputs(story, stdout);
    show_command(report, log, program);
    int status = play((char *)program, report, log);
    unlink(log);
    conclusion(status, report);
    assert((status == CT_EXIT_OK || status == CT_EXIT_DEMO_FAILED || status == CT_EXIT_USAGE || status == 126 ||
            status == 127) &&
           "the demo exits 0, 1, 2, or 126/127 as `cutaint run` when the program cannot run");
    return status;
}
