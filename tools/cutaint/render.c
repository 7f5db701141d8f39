/*
 * render.c - what the renderers share: the dispatch on format and the
 * wording of counts and of what failed, so text, DOT, the run summary and
 * the demo say the same thing the same way.
 */
#include "render.h"

#include "textout.h"
#include "util.h"

#include <assert.h>

void ct_render(FILE *out, const ct_report *r, ct_format format)
{
    static void (*const renderers[])(FILE *, const ct_report *) = {
        [CT_FORMAT_TEXT] = ct_render_text,
        [CT_FORMAT_DOT] = ct_render_dot,
        [CT_FORMAT_JSON] = ct_render_json,
    };
    assert((size_t)format < sizeof renderers / sizeof renderers[0] && renderers[format] && "every format has a view");
    renderers[format](out, r);
}

const char *ct_failure_what(const ct_failure *f)
{
    if (f->kernel)
        return f->kernel;
    return f->api ? f->api : "unknown work";
}

void ct_counts_phrase(char *buf, size_t cap, const ct_counts *c)
{
    assert(c->skipped_copies + c->skipped_calls <= c->skips &&
           "the skipped copies and library calls are among the skips");
    unsigned long long launches = c->skips - c->skipped_copies - c->skipped_calls;
    int n = snprintf(buf, cap, "%llu root failure%s", (unsigned long long)c->failures, ct_plural(c->failures));
    if (c->occurrences > c->failures && n >= 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, " (%llu occurrences)", (unsigned long long)c->occurrences);
    if (n >= 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, ", %llu skipped launch%s", launches, launches == 1 ? "" : "es");
    if (c->skipped_copies && n >= 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, ", %llu skipped cop%s", (unsigned long long)c->skipped_copies,
                      c->skipped_copies == 1 ? "y" : "ies");
    if (c->skipped_calls && n >= 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, ", %llu skipped library call%s", (unsigned long long)c->skipped_calls,
                      ct_plural(c->skipped_calls));
    if (c->retries && n >= 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, ", %llu retried launch%s", (unsigned long long)c->retries,
                      c->retries == 1 ? "" : "es");
    if (n >= 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, ", %llu refused read%s", (unsigned long long)c->refused_reads,
                      ct_plural(c->refused_reads));
    if (c->unusable_images && n >= 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, ", %llu unusable image%s", (unsigned long long)c->unusable_images,
                 ct_plural(c->unusable_images));
}

ct_counts ct_report_counts(const ct_report *r)
{
    ct_counts total = {0};
    for (size_t i = 0; i < r->n_procs; i++) {
        ct_counts c = ct_process_counts(&r->procs[i]);
        total.failures += c.failures;
        total.occurrences += c.occurrences;
        total.skips += c.skips;
        total.skipped_copies += c.skipped_copies;
        total.skipped_calls += c.skipped_calls;
        total.retries += c.retries;
        total.refused_reads += c.refused_reads;
        total.unusable_images += c.unusable_images;
    }
    return total;
}

void ct_put_command(FILE *out, const ct_process *p)
{
    if (!p->argv.n) {
        fputs(p->has_start ? "(no argv)" : "(no start event)", out);
        return;
    }
    for (size_t i = 0; i < p->argv.n; i++) {
        if (i)
            fputc(' ', out);
        ct_put_text(out, p->argv.v[i], "");
    }
}
