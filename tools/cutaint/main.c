/*
 * main.c - the cutaint command: dispatches to run, report or demo, and
 * prints the overview page (cutaint --help) and the version.
 *
 * Owns: the command table.  Invariant: every subcommand answers --help and
 * exits 2 on a usage error.
 */
#include "commands.h"

#include "ct_paths.h"

#include <string.h>

_Static_assert(CT_EXIT_USAGE == 2, "a usage error exits 2, as every help page says");

static const char overview[] = "NAME\n"
                               "    cutaint - make GPU failures loud, traceable and impossible to read as data\n"
                               "\n"
                               "SYNOPSIS\n"
                               "    cutaint run [OPTIONS] -- PROGRAM [ARGS...]\n"
                               "    cutaint report [--format text|dot|json] FILE...\n"
                               "    cutaint demo\n"
                               "    cutaint COMMAND --help\n"
                               "    cutaint --version\n"
                               "\n"
                               "DESCRIPTION\n"
                               "    cutaint runs an unmodified CUDA program with libcutaint.so preloaded\n"
                               "    between it and the driver.  When a kernel launch or copy fails, the\n"
                               "    memory it was to write carries that failure: later launches reading it\n"
                               "    are skipped, and a device-to-host read of those bytes is refused with\n"
                               "    the root failure's error (the host buffer is filled with a poison\n"
                               "    byte) instead of returning stale data.  A destroyed CUDA context is\n"
                               "    latched and turns the exit status into 70.  Everything is written to a\n"
                               "    JSON Lines report as it happens.\n"
                               "\n"
                               "COMMANDS\n"
                               "    run      run a program under the shim and summarise what failed\n"
                               "    report   render one or more reports as a tree, Graphviz DOT or JSON\n"
                               "    demo     show the whole story on a bundled program, no GPU needed\n"
                               "\n"
                               "    'cutaint COMMAND --help' describes each command.\n";

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"run", ct_cmd_run},
    {"report", ct_cmd_report},
    {"demo", ct_cmd_demo},
};

static const char usage[] = "usage: cutaint run|report|demo [ARGS...]  (cutaint --help)";

int main(int argc, char **argv)
{
    if (argc < 2)
        return ct_usage_error(usage, "cutaint: no command given", NULL);
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(overview, stdout);
        return CT_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("cutaint %s\n", CT_VERSION);
        return CT_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    return ct_usage_error(usage, "cutaint: unknown command", cmd);
}
