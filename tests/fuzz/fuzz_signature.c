/* fuzz_signature: the demangled-signature reader on arbitrary text, and the
 * mangled path (libiberty, then the same reader) on the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "signature.h"
#include "fuzz_text.h"

static void check(const ct_signature *s)
{
    if (s->n_params > CT_SIG_MAX_PARAMS || strnlen(s->demangled, CT_SIG_NAME_MAX) == CT_SIG_NAME_MAX ||
        strnlen(s->base, CT_SIG_NAME_MAX) == CT_SIG_NAME_MAX)
        abort();
    for (unsigned i = 0; i < s->n_params; i++)
        if (s->kind[i] > CT_PARAM_AGGREGATE)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) /* libiberty's own recursion is not what is tested */
        return 0;
    char *text = fuzz_text(data, size);
    static ct_signature sig;
    if (ct_signature_from_demangled(text, &sig) == 0)
        check(&sig);
    if (ct_signature_from_mangled(text, &sig) == 0)
        check(&sig);
    free(text);
    return 0;
}
