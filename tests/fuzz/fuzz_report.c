/* fuzz_report: `cutaint report`'s reader (jsonr + report.c) on arbitrary
 * bytes (truncated, corrupt and huge lines), then every renderer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_text.h"
#include "jsonr.h"
#include "render.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* one line on its own through the JSON reader */
    char *line = fuzz_text(data, size);
    jsonr_doc doc = {0};
    const char *why = NULL;
    if (jsonr_parse(&doc, line, size, &why)) {
        const jv *root = jsonr_root(&doc);
        for (const jv *v = jsonr_first(&doc, root); v; v = jsonr_next(&doc, v))
            (void)jsonr_get(&doc, v, "event");
        (void)jsonr_get(&doc, root, "pid");
    }
    jsonr_free(&doc);
    free(line);

    /* the whole input as a report file */
    if (size == 0)
        return 0; /* fmemopen() refuses an empty buffer */
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    ct_report r;
    memset(&r, 0, sizeof r);
    if (ct_report_read(&r, f, "fuzz.jsonl") == 0) {
        FILE *out = fopen("/dev/null", "w");
        ct_render_text(out, &r);
        ct_render_dot(out, &r);
        ct_render_json(out, &r);
        (void)ct_report_counts(&r);
        for (size_t i = 0; i < r.n_procs; i++) {
            (void)ct_process_counts(&r.procs[i]);
            (void)ct_process_loss_cause(&r.procs[i]);
        }
        fclose(out);
    }
    ct_report_free(&r);
    fclose(f);
    return 0;
}
