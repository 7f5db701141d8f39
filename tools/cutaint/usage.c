/*
 * usage.c - the one format of a usage error (see commands.h): what is
 * wrong on one line, the usage line under it, status 2.
 */
#include "commands.h"

#include "textout.h"

#include <assert.h>
#include <string.h>

int ct_usage_error(const char *usage_line, const char *message, const char *detail)
{
    assert(!strchr(message, '\n') && !strchr(usage_line, '\n') && "one line naming the problem, one usage line");
    fputs(message, stderr);
    if (detail) {
        fputs(": ", stderr);
        ct_put_text(stderr, detail, "");
    }
    fputc('\n', stderr);
    return ct_usage_line(usage_line);
}

int ct_usage_line(const char *usage_line)
{
    fputs(usage_line, stderr);
    fputc('\n', stderr);
    return CT_EXIT_USAGE;
}
