/* fuzz_ptx: the PTX direction reader (core/ptx.h) on arbitrary text.  The
 * input's first line names the entry asked for; the rest is the text, in a
 * buffer of its own with no NUL added, so that AddressSanitizer sees any
 * read past its length.  Each answer is held to ptx.h's promises: -1 or a
 * count of at most CT_PTX_MAX_PARAMS, every direction within BOTH, dirs
 * untouched on -1 and past the count, the same count and first directions
 * with less room or none; and a prefix of the text that is answered at all
 * is answered as the whole is (nothing after the body counts). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

#define ROOM 64
#define UNTOUCHED 0xee

static int ask(const char *text, size_t len, const char *entry, uint8_t *dirs)
{
    memset(dirs, UNTOUCHED, ROOM);
    int n = ct_ptx_directions(text, len, entry, dirs, ROOM);
    if (n < -1 || n > CT_PTX_MAX_PARAMS)
        abort();
    for (int i = 0; i < ROOM; i++)
        if (i < n ? dirs[i] > CT_PTX_BOTH : dirs[i] != UNTOUCHED)
            abort();
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *eol = memchr(data, '\n', size < 256 ? size : 256);
    size_t name = eol ? (size_t)(eol - data) : 0, len = eol ? size - name - 1 : size;
    char entry[256];
    memcpy(entry, data, name);
    entry[name] = '\0';
    char *text = malloc(len ? len : 1);
    if (!text)
        abort();
    memcpy(text, data + size - len, len);
    uint8_t dirs[ROOM], few[2], prefix[ROOM];
    int n = ask(text, len, entry, dirs);
    few[1] = UNTOUCHED;
    if (ct_ptx_directions(text, len, entry, few, 1) != n || (n > 0 && few[0] != dirs[0]) || few[1] != UNTOUCHED ||
        ct_ptx_directions(text, len, entry, NULL, 0) != n)
        abort();
    int cut = ask(text, len / 2, entry, prefix);
    if (cut >= 0 && (cut != n || memcmp(prefix, dirs, (size_t)(n < ROOM ? n : ROOM)) != 0))
        abort();
    free(text);
    return 0;
}
