/*
 * run_reports.c - which report files one `cutaint run` left, and reading
 * them all for the summary.
 *
 * A report path without %p is one file every process of the run appended
 * to.  With %p each process that reached the driver wrote its own file, and
 * the program itself may not be among them (a shell, a launcher such as
 * torchrun or srun, a Python parent that only spawns workers): the summary
 * then reads every file in that directory whose name the template matches
 * (%p standing for a pid) and which was written since the run began.
 *
 * Owns: matching a file name against a report template.
 * Invariants:
 * - Only files modified at or after the run's start are read (the kernel
 *   stamps files with the coarse real-time clock, which is what `began` is
 *   read from), so reports of earlier runs in the same directory are left
 *   out unless a process of this run appended to them.
 * - %p in the directory part is not searched: the summary then reads the
 *   program's own file only.
 */
#include "run.h"

#include "files.h"

#include <assert.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Does name match the template base, where %p stands for one or more
 * digits, %% for a '%' and anything else for itself? */
static bool base_matches(const char *base, const char *name)
{
    if (base[0] == '%' && base[1] == 'p') {
        if (*name < '0' || *name > '9')
            return false;
        for (const char *p = name; *p >= '0' && *p <= '9'; p++)
            if (base_matches(base + 2, p + 1))
                return true;
        return false;
    }
    if (base[0] == '%' && base[1] == '%')
        return *name == '%' && base_matches(base + 2, name + 1);
    if (*base != *name)
        return false;
    return *base == '\0' || base_matches(base + 1, name + 1);
}

static bool written_since(const char *path, const struct timespec *began)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    return st.st_mtim.tv_sec > began->tv_sec ||
           (st.st_mtim.tv_sec == began->tv_sec && st.st_mtim.tv_nsec >= began->tv_nsec);
}

static bool read_file(ct_report *r, const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    int err = ct_report_read(r, f, path);
    fclose(f);
    return err == 0;
}

/* Every file of the run matching the template; how many were read. */
static size_t read_matching(ct_report *r, const char *tmpl, const struct timespec *began)
{
    const char *slash = strrchr(tmpl, '/');
    assert(slash && !memmem(tmpl, (size_t)(slash - tmpl), "%p", 2) && "a directory holding %p is not searched");
    char dir[PATH_MAX];
    size_t dir_len = slash ? (size_t)(slash - tmpl) : 0;
    if (dir_len >= sizeof dir)
        return 0;
    memcpy(dir, tmpl, dir_len);
    dir[dir_len] = '\0';
    struct dirent **names;
    int n = scandir(dir_len ? dir : "/", &names, NULL, alphasort);
    size_t read = 0;
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        int len = snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        if (len > 0 && (size_t)len < sizeof path && base_matches(slash + 1, names[i]->d_name) &&
            written_since(path, began) && read_file(r, path))
            read++;
        free(names[i]);
    }
    if (n >= 0)
        free(names);
    return read;
}

size_t ct_run_reports_read(const ct_run_outcome *o, ct_report *r)
{
    memset(r, 0, sizeof *r);
    const char *slash = strrchr(o->report_template, '/');
    if (slash && strstr(slash, "%p") && !memmem(o->report_template, (size_t)(slash - o->report_template), "%p", 2))
        return read_matching(r, o->report_template, &o->began);
    return o->report[0] && read_file(r, o->report) ? 1 : 0;
}
