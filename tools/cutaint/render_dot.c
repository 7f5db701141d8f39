/*
 * render_dot.c - the report as a Graphviz digraph: one cluster per process;
 * nodes for failures (red), skip groups (amber), refused reads (blue),
 * unusable images (violet), a lost context (dark red) and its prime
 * suspects (rose); edges follow the taint: image -> root -> skip -> ... ->
 * refused read, and prime suspect -> lost context.
 *
 * Owns: node naming and edge derivation.  A refused read's "path" (root,
 * then each skip) gives the chain; a path element names a skip group by its
 * kernel (or, for a copy, its API).  Skips no path mentions hang off their
 * root.  Invariants: node ids are generated from indices, never from report
 * text; labels go through ct_put_dot; each edge is emitted once.
 */
#include "render.h"

#include "textout.h"
#include "util.h"

#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define ROOT (-1)

typedef struct edge {
    long from, to; /* ROOT or a skip group index */
} edge;

typedef struct edges {
    edge *v;
    size_t n, cap;
} edges;

/* Adds from -> to unless present; true if it was new. */
static bool add_edge(edges *e, long from, long to)
{
    for (size_t i = 0; i < e->n; i++)
        if (e->v[i].from == from && e->v[i].to == to)
            return false;
    *CT_PUSH(e->v, e->n, e->cap) = (edge){from, to};
    return true;
}

static long group_named(const ct_failure *f, const char *name)
{
    for (size_t i = 0; i < f->n_skips; i++) {
        const ct_skip_group *g = &f->skips[i];
        const char *what = g->kernel ? g->kernel : g->api;
        if (what && strcmp(what, name) == 0)
            return (long)i;
    }
    return ROOT;
}

static void node_id(FILE *out, size_t proc, const ct_failure *f, char kind, long index)
{
    assert(index >= ROOT && "node ids are made from indices");
    uint64_t magnitude = f->id < 0 ? 0 - (uint64_t)f->id : (uint64_t)f->id;
    fprintf(out, "p%zu_f%" PRIu64, proc, magnitude);
    if (f->id < 0)
        fputc('n', out);
    if (index != ROOT)
        fprintf(out, "_%c%ld", kind, index);
}

static void put_edge(FILE *out, size_t proc, const ct_failure *f, char from_kind, long from, char to_kind, long to)
{
    fputs("    ", out);
    node_id(out, proc, f, from_kind, from);
    fputs(" -> ", out);
    node_id(out, proc, f, to_kind, to);
    fputs(";\n", out);
}

/* The skip chain of one read; returns the node the read hangs off. */
static long read_chain(const ct_failure *f, const ct_read *rd, edges *e, bool *reached)
{
    long prev = ROOT;
    for (size_t i = 1; i < rd->path.n; i++) {
        long g = group_named(f, rd->path.v[i]);
        if (g == ROOT || g == prev)
            continue;
        add_edge(e, prev, g);
        reached[g] = true;
        prev = g;
    }
    return prev;
}

static void failure_edges(FILE *out, size_t proc, const ct_failure *f)
{
    edges e = {0};
    bool *reached = ct_xcalloc(f->n_skips, sizeof *reached);
    long *hang = ct_xcalloc(f->n_reads, sizeof *hang);
    for (size_t i = 0; i < f->n_reads; i++)
        hang[i] = read_chain(f, &f->reads[i], &e, reached);
    for (size_t i = 0; i < f->n_skips; i++)
        if (!reached[i])
            add_edge(&e, ROOT, (long)i);
    for (size_t i = 0; i < e.n; i++) {
        assert(e.v[i].to != ROOT && e.v[i].from != e.v[i].to && (size_t)e.v[i].to < f->n_skips &&
               "an edge goes down to a skip group of this failure");
        put_edge(out, proc, f, 's', e.v[i].from, 's', e.v[i].to);
    }
    for (size_t i = 0; i < f->n_reads; i++)
        put_edge(out, proc, f, 's', hang[i], 'r', (long)i);
    free(e.v);
    free(reached);
    free(hang);
}

/* ---- nodes ---------------------------------------------------------------- */

static void open_node(FILE *out, size_t proc, const ct_failure *f, char kind, long index)
{
    fputs("    ", out);
    node_id(out, proc, f, kind, index);
    fputs(" [label=\"", out);
}

static void close_node(FILE *out, const char *fill)
{
    fprintf(out, "\", fillcolor=\"%s\"];\n", fill);
}

static void failure_node(FILE *out, size_t proc, const ct_process *p, const ct_failure *f)
{
    open_node(out, proc, f, 'f', ROOT);
    fprintf(out, "failure #%" PRId64 "\\n", f->id);
    ct_put_dot(out, f->described ? ct_failure_what(f) : "(not in the log)");
    if (f->described) {
        fputs("\\n", out);
        ct_put_dot(out, f->error);
    }
    if (f->launch)
        fprintf(out, "\\nlaunch #%" PRId64, f->launch);
    if (f->last_launch > f->launch)
        fprintf(out, ", latest #%" PRId64, f->last_launch);
    if (f->occurrences > 1)
        fprintf(out, "\\n%" PRIu64 " occurrences", f->occurrences);
    if (f->has_image && !ct_process_image(p, f->image)) /* else an edge says it */
        fprintf(out, "\\nfrom unusable image #%" PRId64 " (not in this report)", f->image);
    close_node(out, "#f4b6b6");
}

static void skip_node(FILE *out, size_t proc, const ct_failure *f, long i)
{
    const ct_skip_group *g = &f->skips[i];
    open_node(out, proc, f, 's', i);
    if (g->count == 1)
        fprintf(out, "skipped %s", g->kernel ? "launch" : "copy");
    else
        fprintf(out, "skipped %" PRIu64 " %s", g->count, g->kernel ? "launches" : "copies");
    if (g->kernel && g->first_launch)
        fprintf(out, " #%" PRId64, g->first_launch);
    if (g->count > 1 && g->kernel)
        fprintf(out, "..#%" PRId64, g->last_launch);
    fputs("\\n", out);
    ct_put_dot(out, g->kernel ? g->kernel : g->api);
    close_node(out, "#fbe3a6");
}

static void read_node(FILE *out, size_t proc, const ct_failure *f, long i)
{
    const ct_read *rd = &f->reads[i];
    open_node(out, proc, f, 'r', i);
    fputs("refused read\\n", out);
    ct_put_dot(out, rd->api);
    fprintf(out, "\\n%" PRId64 " bytes at ", rd->bytes);
    ct_put_dot(out, rd->address);
    fputs("\\n-> returned ", out);
    ct_put_dot(out, rd->returned);
    close_node(out, "#b9d3f2");
}

static void failure_graph(FILE *out, size_t proc, const ct_process *p, const ct_failure *f)
{
    failure_node(out, proc, p, f);
    for (size_t i = 0; i < f->n_skips; i++)
        skip_node(out, proc, f, (long)i);
    for (size_t i = 0; i < f->n_reads; i++)
        read_node(out, proc, f, (long)i);
    failure_edges(out, proc, f);
}

/* An unusable image, and an edge to each failure that descends from it. */
static void image_node(FILE *out, size_t proc, const ct_process *p, size_t i)
{
    const ct_image_note *im = &p->images[i];
    fprintf(out, "    p%zu_i%zu [label=\"unusable image #%" PRId64 "\\n", proc, i, im->number);
    ct_put_dot(out, im->api);
    fputs("\\n", out);
    ct_put_dot(out, im->error);
    if (im->stand_in)
        fputs("\\nstand-in: its launches fail", out);
    close_node(out, "#d7c9ea");
    for (size_t k = 0; k < p->n_failures; k++) {
        const ct_failure *f = &p->failures[k];
        if (!f->has_image || ct_process_image(p, f->image) != im)
            continue;
        fprintf(out, "    p%zu_i%zu -> ", proc, i);
        node_id(out, proc, f, 'f', ROOT);
        fputs(";\n", out);
    }
}

static void lost_node(FILE *out, size_t proc, const ct_process *p)
{
    fprintf(out, "    p%zu_lost [label=\"CONTEXT LOST%s\\n", proc, p->lost_simulated ? " (simulated)" : "");
    ct_put_dot(out, p->lost_reason);
    fputs("\", fillcolor=\"#c0392b\", fontcolor=\"white\"];\n", out);
    const ct_failure *cause = ct_process_loss_cause(p);
    if (cause) {
        fputs("    ", out);
        node_id(out, proc, cause, 'f', ROOT);
        fprintf(out, " -> p%zu_lost;\n", proc);
    }
}

/* Each prime suspect of a loss, and an edge from it to the lost context:
 * where to look first (the others are in the text and JSON views). */
static void suspect_nodes(FILE *out, size_t proc, const ct_process *p)
{
    for (size_t i = 0; i < p->n_suspects; i++) {
        const ct_suspect *s = &p->suspects[i];
        if (!s->prime)
            continue;
        fprintf(out, "    p%zu_suspect%zu [label=\"prime suspect\\n", proc, i);
        if (s->kernel) {
            ct_put_dot(out, s->kernel);
            if (s->launch)
                fprintf(out, "\\nlaunch #%" PRId64, s->launch);
        } else {
            fputs("graph ", out);
            ct_put_dot(out, s->graph);
            fputs("\\n", out);
            ct_put_dot(out, s->api);
        }
        fputs("\\non stream ", out);
        ct_put_dot(out, s->stream);
        close_node(out, "#e8a09a");
        fprintf(out, "    p%zu_suspect%zu -> p%zu_lost;\n", proc, i, proc);
    }
}

static void process_graph(FILE *out, size_t proc, const ct_process *p)
{
    fprintf(out, "  subgraph cluster_p%zu {\n    label=\"pid %ld: ", proc, p->pid);
    for (size_t i = 0; i < p->argv.n; i++) {
        fputs(i ? " " : "", out);
        ct_put_dot(out, p->argv.v[i]);
    }
    fputs(p->has_exit ? "\";\n" : " (no exit event)\";\n", out);
    for (size_t i = 0; i < p->n_failures; i++)
        failure_graph(out, proc, p, &p->failures[i]);
    for (size_t i = 0; i < p->n_images; i++)
        image_node(out, proc, p, i);
    if (p->context_lost) {
        lost_node(out, proc, p);
        suspect_nodes(out, proc, p);
    }
    if (!p->n_failures && !p->context_lost)
        fprintf(out, "    p%zu_clean [label=\"no failures\", fillcolor=\"#c8e6c9\"];\n", proc);
    fputs("  }\n", out);
}

void ct_render_dot(FILE *out, const ct_report *r)
{
    fputs("digraph cutaint {\n"
          "  rankdir=LR;\n"
          "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n",
          out);
    for (size_t i = 0; i < r->n_procs; i++)
        process_graph(out, i, &r->procs[i]);
    fputs("}\n", out);
}
