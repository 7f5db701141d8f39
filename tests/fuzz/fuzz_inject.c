/* fuzz_inject: the CUTAINT_INJECT grammar, then counting calls against the rules. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "errnames.h"
#include "fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    static ct_inject_rules rules;
    char err[CT_DIAG_MAX];
    if (ct_inject_parse(text, &ct_cuda_errors, &rules, err, sizeof err) == 0) {
        if (rules.n > CT_INJECT_MAX_RULES)
            abort();
        for (unsigned i = 0; i < rules.n; i++)
            if (rules.rule[i].nth == 0)
                abort(); /* N is 1-based */
        for (int k = 0; k < 4; k++) {
            ct_inject_check(&rules, CT_INJECT_LAUNCH, "_Z4fillPfif", "fill");
            ct_inject_check(&rules, CT_INJECT_API, "cuMemcpyDtoH_v2", "cuMemcpyDtoH");
            ct_inject_check(&rules, CT_INJECT_API, text, NULL);
        }
    } else if (strnlen(err, sizeof err) == sizeof err) {
        abort();
    }
    free(text);
    return 0;
}
