/*
 * test_cli.c - the built cutaint command from the outside: usage errors
 * exit 2 without running the program, reports render with status 0, an
 * unreadable report is status 2, and every command answers --help.
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CUTAINT CT_TEST_CUTAINT

static char marker[64];

static void setup(void)
{
    snprintf(marker, sizeof marker, "/tmp/cutaint-cli-%ld.marker", (long)getpid());
    unlink(marker);
}

static void teardown(void)
{
    unlink(marker);
}

TestSuite(cli, .init = setup, .fini = teardown);

/* cutaint run OPTION... -- touch MARKER: must exit 2 and leave no marker. */
static void refused(const char *opt, const char *value)
{
    char *argv[] = {CUTAINT, "run", (char *)opt, (char *)value, "--", "/usr/bin/touch", marker, NULL};
    if (!value) {
        argv[3] = "--";
        argv[4] = "/usr/bin/touch";
        argv[5] = marker;
        argv[6] = NULL;
    }
    cr_expect_eq(run_argv(argv, NULL, NULL), 2, "%s %s was not refused", opt, value ? value : "");
    cr_expect_neq(access(marker, F_OK), 0, "the program ran despite %s", opt);
}

Test(cli, bad_run_options_exit_2_and_run_nothing)
{
    refused("--bogus", NULL);
    refused("--log", "loud");
    refused("--log=", NULL);
    refused("--poison", "256");
    refused("--poison", "0xfff");
    refused("--on-skip", "ignore");
    refused("--on-context-loss", "retry");
    refused("--exit-status", "300");
    refused("--exit-status", "-1");
    refused("--inject", "launch:foo#0");
    refused("--inject", "teleport:x");
    refused("--inject", "launch:x=NOT_AN_ERROR");
    refused("--args", "kernel=zz");
    refused("--fakecuda=1", NULL);
    refused("-x", NULL);
}

Test(cli, bad_inherited_variable_exits_2)
{
    setenv("CUTAINT_ON_SKIP", "maybe", 1);
    refused("--quiet", NULL);
    unsetenv("CUTAINT_ON_SKIP");
}

Test(cli, missing_operands_exit_2)
{
    char *no_program[] = {CUTAINT, "run", "--quiet", NULL};
    cr_expect_eq(run_argv(no_program, NULL, NULL), 2);
    char *no_value[] = {CUTAINT, "run", "--report", NULL};
    cr_expect_eq(run_argv(no_value, NULL, NULL), 2);
    char *no_file[] = {CUTAINT, "report", NULL};
    cr_expect_eq(run_argv(no_file, NULL, NULL), 2);
    char *no_command[] = {CUTAINT, NULL};
    cr_expect_eq(run_argv(no_command, NULL, NULL), 2);
    char *unknown[] = {CUTAINT, "frobnicate", NULL};
    cr_expect_eq(run_argv(unknown, NULL, NULL), 2);
}

Test(cli, report_statuses)
{
    char demo[4096];
    snprintf(demo, sizeof demo, "%s/demo.jsonl", CT_TEST_DATA);
    static const char *const formats[] = {"text", "dot", "json"};
    for (size_t i = 0; i < 3; i++) {
        char *argv[] = {CUTAINT, "report", "--format", (char *)formats[i], demo, NULL};
        cr_expect_eq(run_argv(argv, NULL, NULL), 0, "--format %s", formats[i]);
    }
    char *from_stdin[] = {CUTAINT, "report", "-", NULL};
    cr_expect_eq(run_argv(from_stdin, demo, NULL), 0);
    char *bad_format[] = {CUTAINT, "report", "--format", "svg", demo, NULL};
    cr_expect_eq(run_argv(bad_format, NULL, NULL), 2);
    char *missing[] = {CUTAINT, "report", demo, "/nonexistent/report.jsonl", NULL};
    cr_expect_eq(run_argv(missing, NULL, NULL), 2);
    char *directory[] = {CUTAINT, "report", "/", NULL};
    cr_expect_eq(run_argv(directory, NULL, NULL), 2);
}

Test(cli, every_command_has_help)
{
    static const char *const commands[] = {"run", "report", "demo"};
    char *top[] = {CUTAINT, "--help", NULL};
    cr_expect_eq(run_argv(top, NULL, NULL), 0);
    for (size_t i = 0; i < 3; i++) {
        char *argv[] = {CUTAINT, (char *)commands[i], "--help", NULL};
        cr_expect_eq(run_argv(argv, NULL, NULL), 0, "%s --help", commands[i]);
    }
}
