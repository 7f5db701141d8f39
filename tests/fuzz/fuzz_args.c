/* fuzz_args: the CUTAINT_ARGS grammar, then matching kernel names against the rules. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    static ct_arg_rules rules;
    char err[CT_DIAG_MAX];
    if (ct_args_parse(text, &rules, err, sizeof err) == 0) {
        if (rules.n > CT_ARGS_MAX_RULES)
            abort();
        for (unsigned i = 0; i < rules.n; i++)
            if (rules.rule[i].n_roles > CT_ARGS_MAX_PARAMS ||
                strnlen(rules.rule[i].glob, CT_PATTERN_MAX) == CT_PATTERN_MAX)
                abort();
        ct_args_match(&rules, "_Z5saxpyifPKfPf", "saxpy");
        ct_args_match(&rules, text, NULL);
        ct_args_match(&rules, NULL, NULL);
    } else if (strnlen(err, sizeof err) == sizeof err) {
        abort();
    }
    free(text);
    return 0;
}
