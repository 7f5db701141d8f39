/*
 * schema_tables.c - holds docs/REPORT.md to the one table of events and
 * fields (core/schema.def).
 *
 *   schema_tables FILE           check: exit 1 naming each difference
 *   schema_tables --write FILE   rewrite FILE's tables from the table
 *
 * Each record of the table has, in FILE, a block
 *
 *   <!-- schema: RECORD -->
 *   | key | type | meaning |
 *   ...
 *   <!-- /schema -->
 *
 * holding exactly the rows the table makes, and every record but the
 * envelope a heading "### `RECORD` — TITLE".  A field added to the table
 * and not documented fails the check, as does a documented field the table
 * lacks, a block naming a record the table does not have, and a row whose
 * type or meaning differs.  --write fixes all but missing blocks and
 * headings, which are prose a person places.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

#define OPEN_MARK "<!-- schema: "
#define CLOSE_MARK "<!-- /schema -->"

typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        if (!t->s) {
            perror("schema_tables");
            exit(2);
        }
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static void puts_text(text *t, const char *s)
{
    put(t, s, strlen(s));
}

static int record_index(const char *name, size_t len)
{
    for (int r = 0; r < CT_RECORDS; r++)
        if (strlen(ct_schema_records[r].name) == len && memcmp(ct_schema_records[r].name, name, len) == 0)
            return r;
    return -1;
}

static void row(text *t, const ct_schema_field *f)
{
    puts_text(t, "| `");
    puts_text(t, f->key);
    puts_text(t, "` | ");
    puts_text(t, ct_schema_type_text(f->type));
    puts_text(t, " | ");
    puts_text(t, f->meaning);
    puts_text(t, " |\n");
}

/* The rows the table makes for record r, header included. */
static void table_of(text *t, int r)
{
    puts_text(t, "| key | type | meaning |\n|---|---|---|\n");
    for (size_t i = 0; i < ct_schema_n_fields; i++)
        if ((int)ct_schema_fields[i].record == r)
            row(t, &ct_schema_fields[i]);
}

static const char *find_line(const char *from, const char *start, size_t n)
{
    for (const char *p = from; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, start, n) == 0)
            return p;
    return NULL;
}

/* The key of a row "| `key` | ...", or NULL. */
static bool row_key(const char *line, const char **key, size_t *len)
{
    if (strncmp(line, "| `", 3) != 0)
        return false;
    const char *end = strchr(line + 3, '`');
    const char *nl = strchr(line, '\n');
    if (!end || (nl && end > nl))
        return false;
    *key = line + 3;
    *len = (size_t)(end - *key);
    return true;
}

static bool has_field(int r, const char *key, size_t len)
{
    for (size_t i = 0; i < ct_schema_n_fields; i++)
        if ((int)ct_schema_fields[i].record == r && strlen(ct_schema_fields[i].key) == len &&
            memcmp(ct_schema_fields[i].key, key, len) == 0)
            return true;
    return false;
}

/* Says how the documented rows [body, end) differ from the table's. */
static void tell_differences(const char *path, int r, const char *body, const char *end, const char *want)
{
    const char *name = ct_schema_records[r].name;
    for (const char *p = body; p < end; p = strchr(p, '\n') + 1) {
        const char *key;
        size_t len;
        if (!row_key(p, &key, &len))
            continue;
        if (!has_field(r, key, len)) {
            fprintf(stderr, "%s: %s: `%.*s` is documented but core/schema.def has no such field\n", path, name,
                    (int)len, key);
            continue;
        }
        size_t n = (size_t)(strchr(p, '\n') - p) + 1;
        const char *same = want;
        while ((same = strstr(same, "| `")) && strncmp(same, p, n) != 0)
            same++;
        if (!same)
            fprintf(stderr, "%s: %s: `%.*s`: its type or meaning differs from core/schema.def's\n", path, name,
                    (int)len, key);
    }
    for (size_t i = 0; i < ct_schema_n_fields; i++) {
        const ct_schema_field *f = &ct_schema_fields[i];
        char needle[128];
        snprintf(needle, sizeof needle, "| `%s` |", f->key);
        if ((int)f->record != r)
            continue;
        const char *p = body;
        while ((p = strstr(p, needle)) && p < end && p != body && p[-1] != '\n')
            p++;
        if (!p || p >= end)
            fprintf(stderr, "%s: %s: `%s` is in core/schema.def but not documented\n", path, name, f->key);
    }
}

/* Checks (or, writing, rewrites into out) every block of doc; counts the
 * problems.  seen[r]: record r's block was met. */
static int blocks(const char *path, const char *doc, bool writing, text *out, bool seen[CT_RECORDS])
{
    int problems = 0;
    const char *p = doc;
    for (const char *open; (open = find_line(p, OPEN_MARK, strlen(OPEN_MARK)));) {
        const char *name = open + strlen(OPEN_MARK);
        const char *name_end = strstr(name, " -->");
        const char *body = strchr(open, '\n');
        const char *close = body ? find_line(body + 1, CLOSE_MARK, strlen(CLOSE_MARK)) : NULL;
        if (!name_end || !body || !close) {
            fprintf(stderr, "%s: an unclosed %s block\n", path, OPEN_MARK);
            return problems + 1;
        }
        body++;
        int r = record_index(name, (size_t)(name_end - name));
        put(out, p, (size_t)(body - p));
        if (r < 0) {
            fprintf(stderr, "%s: a block for `%.*s`, which core/schema.def does not have\n", path,
                    (int)(name_end - name), name);
            problems++;
            put(out, body, (size_t)(close - body));
        } else {
            text want = {0};
            table_of(&want, r);
            if (seen[r]) {
                fprintf(stderr, "%s: %s has two blocks\n", path, ct_schema_records[r].name);
                problems++;
            }
            seen[r] = true;
            if ((size_t)(close - body) != want.len || memcmp(body, want.s, want.len) != 0) {
                if (!writing)
                    tell_differences(path, r, body, close, want.s);
                problems += !writing;
            }
            put(out, want.s, want.len);
            free(want.s);
        }
        p = close;
    }
    puts_text(out, p);
    return problems;
}

/* Every record but the envelope is introduced by "### `NAME` — TITLE". */
static int headings(const char *path, const char *doc)
{
    int problems = 0;
    for (int r = 0; r < CT_RECORDS; r++) {
        if (r == CT_RECORD_envelope)
            continue;
        char heading[512];
        snprintf(heading, sizeof heading, "### `%s` — %s\n", ct_schema_records[r].name, ct_schema_records[r].title);
        if (!find_line(doc, heading, strlen(heading))) {
            fprintf(stderr, "%s: no heading \"%.*s\" (core/schema.def's title)\n", path, (int)strlen(heading) - 1,
                    heading);
            problems++;
        }
    }
    return problems;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(2);
    }
    text t = {0};
    char chunk[4096];
    for (size_t n; (n = fread(chunk, 1, sizeof chunk, f)) > 0;)
        put(&t, chunk, n);
    fclose(f);
    return t.s ? t.s : calloc(1, 1);
}

int main(int argc, char **argv)
{
    bool writing = argc == 3 && strcmp(argv[1], "--write") == 0;
    if (argc != 2 && !writing) {
        fprintf(stderr, "usage: %s [--write] docs/REPORT.md\n", argv[0]);
        return 2;
    }
    const char *path = argv[argc - 1];
    char *doc = slurp(path);
    text out = {0};
    bool seen[CT_RECORDS] = {false};
    int problems = blocks(path, doc, writing, &out, seen);
    for (int r = 0; r < CT_RECORDS; r++)
        if (!seen[r]) {
            fprintf(stderr, "%s: no block for %s (%s%s -->)\n", path, ct_schema_records[r].name, OPEN_MARK,
                    ct_schema_records[r].name);
            problems++;
        }
    problems += headings(path, doc);
    if (writing) {
        FILE *f = fopen(path, "w");
        if (!f || fwrite(out.s, 1, out.len, f) != out.len || fclose(f) != 0) {
            perror(path);
            return 2;
        }
    }
    if (problems)
        fprintf(stderr, "%s: %d difference%s from core/schema.def%s\n", path, problems, problems == 1 ? "" : "s",
                writing ? "" : " (rows: `schema_tables --write` rewrites them from the table)");
    else if (!writing)
        printf("%s: every record and field of core/schema.def, and nothing else\n", path);
    free(doc);
    free(out.s);
    return problems ? 1 : 0;
}
