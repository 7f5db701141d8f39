/*
 * report_cmd.c - `cutaint report [--format text|dot|json] FILE...`: reads
 * every report given ("-" is standard input) into one model and renders it.
 *
 * Owns: the subcommand's options and help.  Invariants: all files are read
 * before anything is rendered, so an unreadable file fails the command
 * (status 2) without half an output; showing failures is success (0).
 */
#include "commands.h"

#include "render.h"
#include "report.h"
#include "textout.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

static const char help[] = "NAME\n"
                           "    cutaint report - render cutaint JSON Lines reports\n"
                           "\n"
                           "SYNOPSIS\n"
                           "    cutaint report [--format text|dot|json] FILE...\n"
                           "\n"
                           "DESCRIPTION\n"
                           "    Reads the reports written by libcutaint.so (CUTAINT_REPORT, or the one\n"
                           "    'cutaint run' names) - one file per process of a multi-process job, or\n"
                           "    one file several processes appended to - groups the events by process,\n"
                           "    and shows for each: every root failure (kernel, error, launch number,\n"
                           "    grid and block, host backtrace, the compute-sanitizer line that\n"
                           "    replays it, the launch that retried it and succeeded), the launches\n"
                           "    and copies it caused to be skipped, the device-to-host reads it\n"
                           "    caused to be refused, the probes and any\n"
                           "    context loss, the exit status, and a verdict line.\n"
                           "\n"
                           "    Reports of killed processes are fine: a log without an exit event is\n"
                           "    marked as such, a last line cut short is ignored with a note, and\n"
                           "    corrupt or over-long lines are skipped and counted.  FILE '-' reads\n"
                           "    standard input.\n"
                           "\n"
                           "OPTIONS\n"
                           "    --format text   a tree per process, then an overall line (default)\n"
                           "    --format dot    Graphviz DOT of the same graph: failures -> skips ->\n"
                           "                    refused reads, and the lost context; render it with\n"
                           "                    'dot -Tsvg -o report.svg'\n"
                           "    --format json   one JSON object merging every file: files (with their\n"
                           "                    skipped-line counts), processes (counts, failures with\n"
                           "                    their skips and refused reads, probes, exit), totals\n"
                           "    --help          this page\n"
                           "\n"
                           "EXIT STATUS\n"
                           "    0 the reports were rendered (whatever they show); 2 usage error or a\n"
                           "    file that cannot be read.\n";

static const char usage[] = "usage: cutaint report [--format text|dot|json] FILE...";

static const struct {
    const char *name;
    ct_format format;
} formats[] = {
    {"text", CT_FORMAT_TEXT},
    {"dot", CT_FORMAT_DOT},
    {"json", CT_FORMAT_JSON},
};

static bool parse_format(const char *name, ct_format *out)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(name, formats[i].name) == 0) {
            *out = formats[i].format;
            return true;
        }
    return false;
}

/* Reads one file into r; false (after a message) if it cannot be read. */
static bool read_one(ct_report *r, const char *path)
{
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "re");
    int err = f ? ct_report_read(r, f, is_stdin ? "(stdin)" : path) : errno;
    if (f && !is_stdin)
        fclose(f);
    if (!err)
        return true;
    fputs("cutaint report: cannot read ", stderr);
    ct_put_text(stderr, path, "");
    fprintf(stderr, ": %s\n", strerror(err));
    return false;
}

int ct_cmd_report(int argc, char **argv)
{
    ct_format format = CT_FORMAT_TEXT;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(help, stdout);
            return CT_EXIT_OK;
        }
        const char *value = strncmp(a, "--format=", 9) == 0 ? a + 9 : NULL;
        if (strcmp(a, "--format") == 0) {
            if (++i == argc)
                return ct_usage_error(usage, "cutaint report: --format needs a value", NULL);
            value = argv[i];
        }
        if (value) {
            if (!parse_format(value, &format))
                return ct_usage_error(usage, "cutaint report: --format must be text, dot or json", value);
            continue;
        }
        if (a[0] == '-' && a[1] != '\0')
            return ct_usage_error(usage, "cutaint report: unknown option", a);
        break;
    }
    if (i == argc)
        return ct_usage_error(usage, "cutaint report: no report file given", NULL);
    ct_report r = {0};
    bool ok = true;
    for (; i < argc && ok; i++)
        ok = read_one(&r, argv[i]);
    if (ok) {
        assert(i == argc && "every file is read before anything is rendered");
        ct_render(stdout, &r, format);
    }
    ct_report_free(&r);
    return ok ? CT_EXIT_OK : CT_EXIT_USAGE;
}
