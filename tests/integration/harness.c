/*
 * harness.c - runs a client under a controlled environment and reads its
 * JSON Lines report (see harness.h).  The environment is built from nothing:
 * only PATH, the sanitizers' options, the loader variables the run asks for
 * and the run's own extras reach the client, so no CUTAINT_ variable of the
 * caller leaks in.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CT_SHIM
#define CT_SHIM ""
#endif
#ifndef CT_FAKECUDA_DIR
#define CT_FAKECUDA_DIR ""
#endif

static void die(const char *what)
{
    fprintf(stderr, "harness: %s: %s\n", what, strerror(errno));
    abort();
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (d == NULL)
        die("strdup");
    return d;
}

/* ---- environment ----------------------------------------------------------- */
typedef struct env_list {
    char *v[H_MAX_ENV + 16];
    int n;
} env_list;

static void env_add(env_list *e, const char *key, const char *value)
{
    size_t len = strlen(key) + strlen(value) + 2;
    char *s = malloc(len);
    if (s == NULL)
        die("malloc");
    snprintf(s, len, "%s=%s", key, value);
    e->v[e->n++] = s;
}

/* text with every "@DIR@" replaced by dir (malloc'd). */
static char *subst_dir(const char *kv, const char *dir)
{
    char buf[2048];
    size_t o = 0;
    for (const char *p = kv; *p && o + 1 < sizeof buf;) {
        if (strncmp(p, "@DIR@", 5) == 0) {
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s", dir);
            p += 5;
        } else {
            buf[o++] = *p++;
        }
    }
    buf[o < sizeof buf ? o : sizeof buf - 1] = '\0';
    return xstrdup(buf);
}

static void env_add_subst(env_list *e, const char *kv, const char *dir)
{
    e->v[e->n++] = subst_dir(kv, dir);
}

static void build_env(const h_run *run, const h_result *res, env_list *e)
{
    static const char *const passed[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS", "LSAN_OPTIONS"};
    e->n = 0;
    env_add(e, "PATH", "/usr/local/bin:/usr/bin:/bin");
    for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++)
        if (getenv(passed[i]) != NULL)
            env_add(e, passed[i], getenv(passed[i]));
    if (run->no_driver)
        env_add(e, "LD_LIBRARY_PATH", h_path(res, "empty"));
    else
        env_add(e, "LD_LIBRARY_PATH", CT_FAKECUDA_DIR);
    if (!run->no_shim) {
        char preload[1024];
        snprintf(preload, sizeof preload, "%s%s%s", run->preload_first ? run->preload_first : "",
                 run->preload_first ? " " : "", CT_SHIM);
        env_add(e, "LD_PRELOAD", preload);
        if (!run->no_report)
            env_add(e, "CUTAINT_REPORT", res->report);
    }
    for (int i = 0; i < H_MAX_ENV && run->env[i] != NULL; i++)
        env_add_subst(e, run->env[i], res->dir);
    e->v[e->n] = NULL;
}

/* ---- running ---------------------------------------------------------------- */
typedef struct sink {
    char *buf;
    size_t len, cap;
    int fd;
} sink;

static void sink_read(sink *s)
{
    if (s->cap - s->len < 4096) {
        s->cap = s->cap * 2 + 8192;
        s->buf = realloc(s->buf, s->cap);
        if (s->buf == NULL)
            die("realloc");
    }
    ssize_t n = read(s->fd, s->buf + s->len, s->cap - s->len - 1);
    if (n > 0) {
        s->len += (size_t)n;
    } else if (n == 0 || errno != EINTR) {
        close(s->fd);
        s->fd = -1;
    }
    s->buf[s->len] = '\0';
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Temporary directories not yet freed, removed at exit too: a failed
 * assertion ends a test before its h_free. */
#define H_MAX_DIRS 32
static char pending[H_MAX_DIRS][256];

static void remove_tree(const char *path);

static void remove_pending(void)
{
    for (int i = 0; i < H_MAX_DIRS; i++)
        if (pending[i][0] != '\0' && getenv("CUTAINT_IT_KEEP") == NULL)
            remove_tree(pending[i]);
}

static void track_dir(const char *dir, bool add)
{
    static bool registered;
    if (!registered)
        registered = atexit(remove_pending) == 0;
    for (int i = 0; i < H_MAX_DIRS; i++) {
        if (add && pending[i][0] == '\0') {
            snprintf(pending[i], sizeof pending[i], "%s", dir);
            return;
        }
        if (!add && strcmp(pending[i], dir) == 0) {
            pending[i][0] = '\0';
            return;
        }
    }
}

void h_exec(const h_run *run, h_result *res)
{
    memset(res, 0, sizeof *res);
    snprintf(res->dir, sizeof res->dir, "/tmp/cutaint-it-XXXXXX");
    if (mkdtemp(res->dir) == NULL)
        die("mkdtemp");
    track_dir(res->dir, true);
    snprintf(res->report, sizeof res->report, "%s/report.jsonl", res->dir);
    if (mkdir(h_path(res, "empty"), 0700) != 0)
        die("mkdir");

    env_list env;
    build_env(run, res, &env);
    char *argv[H_MAX_ARGS + 2] = {(char *)run->client};
    for (int i = 0; i < H_MAX_ARGS && run->args[i] != NULL; i++)
        argv[i + 1] = subst_dir(run->args[i], res->dir);

    int po[2], pe[2];
    if (pipe(po) != 0 || pipe(pe) != 0)
        die("pipe");
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        setpgid(0, 0); /* a hang is killed with everything it forked */
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        char *cwd = run->cwd ? subst_dir(run->cwd, res->dir) : NULL;
        if (cwd && chdir(cwd) != 0) {
            fprintf(stderr, "harness: chdir %s: %s\n", cwd, strerror(errno));
            _exit(127);
        }
        if (run->run_as && (setgroups(0, NULL) != 0 || setgid(run->run_as) != 0 || setuid(run->run_as) != 0)) {
            fprintf(stderr, "harness: cannot become uid %u: %s\n", run->run_as, strerror(errno));
            _exit(126);
        }
        execve(run->client, argv, env.v);
        fprintf(stderr, "harness: execve %s: %s\n", run->client, strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(po[1]), close(pe[1]);
    for (int i = 0; i < env.n; i++)
        free(env.v[i]);
    for (int i = 1; argv[i] != NULL; i++)
        free(argv[i]);

    sink s[2] = {{.fd = po[0]}, {.fd = pe[0]}};
    for (int i = 0; i < 2; i++) {
        s[i].cap = 8192;
        if ((s[i].buf = malloc(s[i].cap)) == NULL)
            die("malloc");
        s[i].buf[0] = '\0';
    }
    double deadline = now_s() + (run->timeout_s > 0 ? run->timeout_s : 60);
    bool killed = false;
    while (s[0].fd >= 0 || s[1].fd >= 0) {
        struct pollfd pf[2] = {{.fd = s[0].fd, .events = POLLIN}, {.fd = s[1].fd, .events = POLLIN}};
        int left_ms = (int)((deadline - now_s()) * 1000);
        if (left_ms <= 0 && !res->timed_out) {
            res->timed_out = true;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
        }
        int r = poll(pf, 2, left_ms > 0 ? left_ms : 1000);
        if (r < 0 && errno != EINTR)
            die("poll");
        for (int i = 0; i < 2; i++)
            if (s[i].fd >= 0 && (pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                sink_read(&s[i]);
        if (run->kill_on != NULL && !killed && strstr(s[0].buf, run->kill_on) != NULL) {
            usleep((useconds_t)run->kill_delay_ms * 1000);
            kill(pid, SIGKILL);
            killed = true;
        }
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(st)) {
        res->signal = WTERMSIG(st);
        res->status = 128 + res->signal;
    } else {
        res->status = WEXITSTATUS(st);
    }
    res->out = s[0].buf;
    res->err = s[1].buf;
}

void h_exec_baseline(const h_run *run, h_result *res)
{
    h_run copy = *run;
    copy.no_shim = true;
    h_exec(&copy, res);
}

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL) {
        unlink(path);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
        remove_tree(sub);
    }
    closedir(d);
    rmdir(path);
}

void h_free(h_result *res)
{
    free(res->out);
    free(res->err);
    res->out = res->err = NULL;
    if (res->dir[0] != '\0' && getenv("CUTAINT_IT_KEEP") == NULL)
        remove_tree(res->dir);
    track_dir(res->dir, false);
}

const char *h_path(const h_result *res, const char *name)
{
    static __thread char buf[4][512];
    static __thread int next;
    char *b = buf[next++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", res->dir, name);
    return b;
}

/* ---- captured text ------------------------------------------------------------ */
bool h_has_line(const char *text, const char *line)
{
    size_t len = strlen(line);
    for (const char *p = text; p != NULL && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, line, len) == 0 && (p[len] == '\n' || p[len] == '\0'))
            return true;
    return false;
}

int h_count_lines(const char *text)
{
    int n = 0;
    for (const char *p = text; *p; p++)
        if (*p == '\n' || p[1] == '\0')
            n++;
    return n;
}

int h_count_lines_with(const char *text, const char *const *needles)
{
    int n = 0;
    char line[4096];
    for (const char *p = text; p != NULL && *p;) {
        size_t len = strcspn(p, "\n");
        size_t keep = len < sizeof line ? len : sizeof line - 1;
        memcpy(line, p, keep);
        line[keep] = '\0';
        bool all = true;
        for (const char *const *k = needles; *k != NULL && all; k++)
            all = strstr(line, *k) != NULL;
        n += all;
        p = p[len] ? p + len + 1 : NULL;
    }
    return n;
}

int h_count_containing(const char *text, const char *needle)
{
    return h_count_lines_with(text, (const char *const[]){needle, NULL});
}

const char *h_line_containing(const char *text, const char *needle)
{
    static __thread char buf[1024];
    const char *hit = strstr(text, needle);
    if (hit == NULL)
        return "";
    const char *start = hit;
    while (start > text && start[-1] != '\n')
        start--;
    size_t len = strcspn(start, "\n");
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    memcpy(buf, start, len);
    buf[len] = '\0';
    return buf;
}

void h_stale_health_file(h_stale *st, const char *text)
{
    snprintf(st->dir, sizeof st->dir, "/tmp/cutaint-health-XXXXXX");
    cr_assert(mkdtemp(st->dir) != NULL);
    snprintf(st->path, sizeof st->path, "%s/health", st->dir);
    snprintf(st->env, sizeof st->env, "CUTAINT_HEALTH_FILE=%s", st->path);
    FILE *f = fopen(st->path, "w");
    cr_assert(f != NULL);
    fputs(text, f);
    fclose(f);
}

void h_stale_free(const h_stale *st)
{
    unlink(st->path);
    rmdir(st->dir);
}

char *h_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2048)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (buf != NULL)
        buf[len] = '\0';
    return buf;
}

/* ---- JSON ---------------------------------------------------------------------- */
static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    return p;
}

static const char *skip_value(const char *p, int depth);

static const char *skip_string(const char *p)
{
    if (*p++ != '"')
        return NULL;
    while (*p != '"') {
        if ((unsigned char)*p < 0x20)
            return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (strchr("0123456789abcdefABCDEF", p[i]) == NULL || p[i] == '\0')
                        return NULL;
                p += 4;
            } else if (*p == '\0' || strchr("\"\\/bfnrt", *p) == NULL) {
                return NULL;
            }
        }
        p++;
    }
    return p + 1;
}

static const char *skip_digits(const char *p)
{
    const char *s = p;
    while (*p >= '0' && *p <= '9')
        p++;
    return p == s ? NULL : p;
}

static const char *skip_number(const char *p)
{
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if ((p = skip_digits(p)) == NULL)
        return NULL;
    if (*p == '.' && (p = skip_digits(p + 1)) == NULL)
        return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        p = skip_digits(p);
    }
    return p;
}

/* Object or array: members separated by commas, closed by `close`. */
static const char *skip_container(const char *p, char close, int depth)
{
    p = ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (close == '}') {
            if ((p = skip_string(p)) == NULL)
                return NULL;
            p = ws(p);
            if (*p++ != ':')
                return NULL;
        }
        if ((p = skip_value(ws(p), depth + 1)) == NULL)
            return NULL;
        p = ws(p);
        if (*p == close)
            return p + 1;
        if (*p++ != ',')
            return NULL;
        p = ws(p);
    }
}

static const char *skip_value(const char *p, int depth)
{
    if (depth > 32)
        return NULL;
    switch (*p) {
    case '{': return skip_container(p, '}', depth);
    case '[': return skip_container(p, ']', depth);
    case '"': return skip_string(p);
    case 't': return strncmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f': return strncmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n': return strncmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default: return skip_number(p);
    }
}

bool h_json_valid(const char *s)
{
    s = ws(s);
    if (*s != '{')
        return false;
    const char *end = skip_value(s, 0);
    return end != NULL && *ws(end) == '\0';
}

/* The value of a top-level key: start, or NULL. */
static const char *find_key(const char *obj, const char *key)
{
    const char *p = ws(obj);
    if (*p != '{')
        return NULL;
    p = ws(p + 1);
    size_t klen = strlen(key);
    while (*p == '"') {
        const char *kend = skip_string(p);
        if (kend == NULL)
            return NULL;
        bool match = (size_t)(kend - p) == klen + 2 && strncmp(p + 1, key, klen) == 0;
        p = ws(kend);
        if (*p++ != ':')
            return NULL;
        p = ws(p);
        if (match)
            return p;
        if ((p = skip_value(p, 0)) == NULL)
            return NULL;
        p = ws(p);
        if (*p == ',')
            p = ws(p + 1);
    }
    return NULL;
}

static char *rotating(void)
{
    static __thread char buf[8][2048];
    static __thread int next;
    return buf[next++ % 8];
}

/* A value as text: strings unescaped (\uXXXX outside ASCII as '?'), others
 * as written. */
static const char *value_text(const char *v)
{
    char *out = rotating();
    if (v == NULL)
        return "<missing>";
    const char *end = skip_value(v, 0);
    if (end == NULL)
        return "<invalid>";
    size_t o = 0, cap = 2048;
    if (*v != '"') {
        size_t len = (size_t)(end - v) < cap - 1 ? (size_t)(end - v) : cap - 1;
        memcpy(out, v, len);
        out[len] = '\0';
        return out;
    }
    for (const char *p = v + 1; p < end - 1 && o + 1 < cap; p++) {
        if (*p != '\\') {
            out[o++] = *p;
            continue;
        }
        p++;
        switch (*p) {
        case 'n': out[o++] = '\n'; break;
        case 't': out[o++] = '\t'; break;
        case 'r': out[o++] = '\r'; break;
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'u': {
            unsigned c = (unsigned)strtoul((char[5]){p[1], p[2], p[3], p[4], 0}, NULL, 16);
            out[o++] = c < 0x80 ? (char)c : '?';
            p += 4;
            break;
        }
        default: out[o++] = *p; break;
        }
    }
    out[o] = '\0';
    return out;
}

const char *h_str(const char *obj, const char *key)
{
    return value_text(find_key(obj, key));
}

bool h_int(const char *obj, const char *key, long long *out)
{
    const char *v = find_key(obj, key);
    if (v == NULL || !(*v == '-' || (*v >= '0' && *v <= '9')))
        return false;
    char *end;
    *out = strtoll(v, &end, 10);
    return *end != '.' && *end != 'e' && *end != 'E';
}

/* The i-th element of an array value, or NULL. */
static const char *array_item(const char *v, int i)
{
    if (v == NULL || *v != '[')
        return NULL;
    const char *p = ws(v + 1);
    if (*p == ']')
        return NULL;
    for (int k = 0;; k++) {
        if (k == i)
            return p;
        if ((p = skip_value(p, 0)) == NULL)
            return NULL;
        p = ws(p);
        if (*p != ',')
            return NULL;
        p = ws(p + 1);
    }
}

int h_arr_len(const char *obj, const char *key)
{
    const char *v = find_key(obj, key);
    if (v == NULL || *v != '[')
        return -1;
    int n = 0;
    while (array_item(v, n) != NULL)
        n++;
    return n;
}

const char *h_arr_str(const char *obj, const char *key, int i)
{
    return value_text(array_item(find_key(obj, key), i));
}

/* ---- the report ----------------------------------------------------------------- */
void h_report_load(const char *path, h_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->first_invalid = -1;
    rep->text = h_slurp(path);
    if (rep->text == NULL) {
        rep->missing = true;
        rep->text = xstrdup("");
    }
    int cap = 64;
    rep->line = malloc((size_t)cap * sizeof *rep->line);
    char *p = rep->text;
    while (*p) {
        char *nl = strchr(p, '\n');
        if (nl == NULL) {
            rep->truncated = true;
            break;
        }
        *nl = '\0';
        if (rep->n == cap)
            rep->line = realloc(rep->line, (size_t)(cap *= 2) * sizeof *rep->line);
        if (rep->line == NULL)
            die("realloc");
        rep->line[rep->n] = p;
        if (!h_json_valid(p)) {
            if (rep->invalid++ == 0)
                rep->first_invalid = rep->n;
        }
        rep->n++;
        p = nl + 1;
    }
}

void h_report_free(h_report *rep)
{
    free(rep->text);
    free(rep->line);
    memset(rep, 0, sizeof *rep);
}

int h_find(const h_report *rep, const char *ev, int from)
{
    for (int i = from < 0 ? 0 : from; i < rep->n; i++)
        if (strcmp(h_str(rep->line[i], "event"), ev) == 0)
            return i;
    return -1;
}

int h_count(const h_report *rep, const char *ev)
{
    int n = 0;
    for (int i = 0; i < rep->n; i++)
        n += strcmp(h_str(rep->line[i], "event"), ev) == 0;
    return n;
}

const char *h_events(const h_report *rep)
{
    static __thread char buf[4096];
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < rep->n && o < sizeof buf - 64; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? "," : "", h_str(rep->line[i], "event"));
    return buf;
}

const int h_rows[H_MAX_ROWS] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};

/* ---- Criterion assertions -------------------------------------------------------- */
void h_expect_ended(const h_result *res)
{
    cr_assert(!res->timed_out, "the client hung and was killed\n--- stdout\n%s--- stderr\n%s", res->out, res->err);
    cr_assert(res->signal == 0, "the client died of signal %d\n--- stdout\n%s--- stderr\n%s", res->signal, res->out,
              res->err);
}

void h_expect_lines(const h_result *res, const char *const *lines)
{
    for (; *lines != NULL; lines++)
        cr_expect(h_has_line(res->out, *lines), "stdout lacks the line\n  %s\n--- stdout\n%s--- stderr\n%s", *lines,
                  res->out, res->err);
}

void h_expect_report(const h_result *res, h_report *rep)
{
    h_report_load(res->report, rep);
    cr_assert(!rep->missing, "no report at %s\n--- stderr\n%s", res->report, res->err);
    cr_assert(rep->invalid == 0, "report line %d is not one JSON object:\n  %s", rep->first_invalid + 1,
              rep->first_invalid >= 0 ? rep->line[rep->first_invalid] : "");
    cr_assert(!rep->truncated, "the report's last line has no newline:\n%s", rep->text);
}
