/*
 * commands.h - the subcommands of the cutaint command, and the exit
 * statuses they share.
 *
 * Invariant: a usage error (bad option, bad value, missing operand) is one
 * line naming the problem plus one usage line on stderr, and status
 * CT_EXIT_USAGE; nothing is run or rendered.
 * Asserted in: usage.c.
 */
#ifndef CT_TOOL_COMMANDS_H
#define CT_TOOL_COMMANDS_H

#include <stdio.h>

enum {
    CT_EXIT_OK = 0,
    CT_EXIT_DEMO_FAILED = 1, /* demo: the story did not play out */
    CT_EXIT_USAGE = 2,       /* bad usage, unreadable report, setup missing */
};

int ct_cmd_run(int argc, char **argv);
int ct_cmd_report(int argc, char **argv);
int ct_cmd_demo(int argc, char **argv);

/* Prints "cutaint CMD: MESSAGE" and the command's usage line on stderr;
 * returns CT_EXIT_USAGE.  message is a fixed text; detail (may be NULL) is
 * outside text and is shown sanitised, after a colon. */
int ct_usage_error(const char *usage, const char *message, const char *detail);
/* Prints just the usage line on stderr; returns CT_EXIT_USAGE. */
int ct_usage_line(const char *usage);

#endif
