/* Every status code has its own static name, and an unknown one is named
 * too, so a log line can always print what it was handed. */
#include <criterion/criterion.h>
#include <string.h>

#include "ct_status.h"

Test(status, every_code_has_a_distinct_name)
{
    const int codes[] = {CT_OK, CT_EINVAL, CT_ENOMEM, CT_EEXIST, CT_ENOENT, CT_ETAINTED, CT_EPARSE, CT_EIO};
    const size_t n = sizeof(codes) / sizeof(codes[0]);
    for (size_t i = 0; i < n; i++) {
        const char *name = ct_status_name(codes[i]);
        cr_assert_not_null(name);
        cr_assert_str_neq(name, ct_status_name(12345), "code %d has no name", codes[i]);
        for (size_t j = 0; j < i; j++)
            cr_assert_str_neq(name, ct_status_name(codes[j]));
    }
}

Test(status, names_say_what_happened)
{
    cr_assert_str_eq(ct_status_name(CT_OK), "ok");
    cr_assert_str_eq(ct_status_name(CT_ETAINTED), "tainted");
    cr_assert_str_eq(ct_status_name(CT_ENOENT), "no such entry");
}

Test(status, unknown_codes_are_named_not_null)
{
    cr_assert_str_eq(ct_status_name(-999), "unknown status");
    cr_assert_str_eq(ct_status_name(7), "unknown status");
}
