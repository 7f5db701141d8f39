/*
 * helpers.c - shared test helpers (see helpers.h).  Programs are started
 * with posix_spawn, never through a shell.
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

void read_data(ct_report *r, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", CT_TEST_DATA, name);
    FILE *f = fopen(path, "re");
    cr_assert_not_null(f, "cannot open %s", path);
    cr_assert_eq(ct_report_read(r, f, name), 0);
    fclose(f);
}

char *render_to_string(const ct_report *r, ct_format format, size_t *len)
{
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    cr_assert_not_null(out);
    ct_render(out, r, format);
    fclose(out);
    if (len)
        *len = n;
    return text;
}

int run_argv(char *const argv[], const char *input, const char *output)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, input ? input : "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, output ? output : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    extern char **environ;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "cannot start %s", argv[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}
