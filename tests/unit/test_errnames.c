/*
 * test_errnames.c - CUresult names and parsing (shim/errnames.h).
 */
#include <criterion/criterion.h>

#include <cuda.h>
#include <stdio.h>
#include <string.h>

#include "ct_status.h"
#include "errnames.h"

Test(errnames, names_come_from_cuda_h)
{
    cr_assert_str_eq(ct_error_name(CUDA_SUCCESS), "CUDA_SUCCESS");
    cr_assert_str_eq(ct_error_name(CUDA_ERROR_INVALID_VALUE), "CUDA_ERROR_INVALID_VALUE");
    cr_assert_str_eq(ct_error_name(700), "CUDA_ERROR_ILLEGAL_ADDRESS");
    cr_assert_str_eq(ct_error_name(CUDA_ERROR_LAUNCH_FAILED), "CUDA_ERROR_LAUNCH_FAILED");
    cr_assert_str_eq(ct_error_name(CUDA_ERROR_DEINITIALIZED), "CUDA_ERROR_DEINITIALIZED");
    cr_assert_str_eq(ct_error_name(CUDA_ERROR_UNKNOWN), "CUDA_ERROR_UNKNOWN");
    cr_assert_null(ct_error_name(12345));
    cr_assert_null(ct_error_name(-1));
}

Test(errnames, every_name_round_trips_in_every_spelling)
{
    int named = 0;
    for (int code = 0; code < 1000; code++) {
        const char *name = ct_error_name(code);
        if (!name)
            continue;
        named++;
        int parsed = -1;
        cr_assert_eq(ct_error_parse(name, &parsed), CT_OK, "%s", name);
        cr_assert_eq(parsed, code);
        const char *short_name = strncmp(name, "CUDA_ERROR_", 11) == 0 ? name + 11 : name + 5;
        char lower[128];
        size_t i = 0;
        for (; short_name[i] && i < sizeof lower - 1; i++)
            lower[i] = (char)(short_name[i] | 0x20 * (short_name[i] >= 'A' && short_name[i] <= 'Z'));
        lower[i] = '\0';
        parsed = -1;
        cr_assert_eq(ct_error_parse(lower, &parsed), CT_OK, "%s", lower);
        cr_assert_eq(parsed, code, "%s", lower);
        char number[16];
        snprintf(number, sizeof number, "%d", code);
        cr_assert_eq(ct_error_parse(number, &parsed), CT_OK);
        cr_assert_eq(parsed, code);
    }
    cr_assert_geq(named, 90, "the table holds cuda.h's enum (got %d names)", named);
}

Test(errnames, parse_spellings)
{
    static const struct {
        const char *text;
        int code;
    } good[] = {
        {"CUDA_ERROR_ILLEGAL_ADDRESS", 700},
        {"ILLEGAL_ADDRESS", 700},
        {"illegal_address", 700},
        {"Cuda_Error_Illegal_Address", 700},
        {"700", 700},
        {"0", 0},
        {"success", 0},
        {"CUDA_SUCCESS", 0},
        {"12345", 12345},
        {"launch_failed", CUDA_ERROR_LAUNCH_FAILED},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int code = -1;
        cr_assert_eq(ct_error_parse(good[i].text, &code), CT_OK, "%s", good[i].text);
        cr_assert_eq(code, good[i].code, "%s", good[i].text);
    }
}

Test(errnames, parse_refuses_everything_else)
{
    static const char *const bad[] = {
        "",
        "CUDA_ERROR_",
        "ILLEGAL",
        "700x",
        "-1",
        "+700",
        " 700",
        "700 ",
        "ILLEGAL_ADDRESS ",
        "99999999999",
        "2147483648",
        "0x2bc",
        "CUDA_ERROR_ILLEGAL_ADDRESSX",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int code = -7;
        cr_assert_eq(ct_error_parse(bad[i], &code), CT_EPARSE, "'%s'", bad[i]);
        cr_assert_eq(code, -7, "'%s' wrote the code", bad[i]);
    }
    int code;
    cr_assert_eq(ct_error_parse(NULL, &code), CT_EPARSE);
    cr_assert_eq(ct_error_parse("700", NULL), CT_EPARSE);
}

Test(errnames, label_names_or_numbers_and_fits)
{
    char buf[64];
    cr_assert_eq(ct_error_label(700, buf, sizeof buf), buf);
    cr_assert_str_eq(buf, "CUDA_ERROR_ILLEGAL_ADDRESS");
    cr_assert_str_eq(ct_error_label(12345, buf, sizeof buf), "CUresult 12345");
    char small[8];
    cr_assert_str_eq(ct_error_label(700, small, sizeof small), "CUDA_ER");
    cr_assert_str_eq(ct_error_label(700, NULL, 0), "");
}
