/*
 * test_signature.c - parameter kinds from mangled kernel names
 * (core/signature.h).
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "ct_status.h"
#include "signature.h"

enum { V = CT_PARAM_VALUE, C = CT_PARAM_CONST_PTR, P = CT_PARAM_PTR, A = CT_PARAM_AGGREGATE };

typedef struct sig_case {
    const char *text;
    const char *base;
    unsigned n;
    uint8_t kind[16];
} sig_case;

static void check(const sig_case *c, bool mangled)
{
    ct_signature s;
    int rc = mangled ? ct_signature_from_mangled(c->text, &s) : ct_signature_from_demangled(c->text, &s);
    cr_assert_eq(rc, CT_OK, "%s", c->text);
    cr_assert_str_eq(s.base, c->base, "%s", c->text);
    cr_assert_eq(s.n_params, c->n, "%s: %u params", c->text, s.n_params);
    for (unsigned i = 0; i < c->n; i++)
        cr_assert_eq(s.kind[i], c->kind[i], "%s: param %u is %d", c->text, i, s.kind[i]);
}

Test(signature, mangled_kernels)
{
    static const sig_case cases[] = {
        {"_Z5saxpyifPKfPf", "saxpy", 4, {V, V, C, P}},
        {"_Z6gatherPfPKfPKii", "gather", 4, {P, C, C, V}},
        {"_Z9copy_pair4Pair", "copy_pair", 1, {A}},
        {"_Z5emptyPvS_S_S_", "empty", 4, {P, P, P, P}},
        {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_"
         "6detail5ArrayIPcLi1EEEEEviT0_T1_",
         "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
         "at::detail::Array<char*, 1> >",
         3,
         {V, A, A}},
        {"_ZN12_GLOBAL__N_14kernEPf", "(anonymous namespace)::kern", 1, {P}},
        {"_Z3fooPKPf", "foo", 1, {C}}, /* float* const*: the array is read */
        {"_Z3fooPKPKf", "foo", 1, {C}},
        {"_Z3fooRKf", "foo", 1, {C}},
        {"_Z3fooPVKf", "foo", 1, {C}},
        {"_Z3foov", "foo", 0, {0}},
        {"_Z3fooDn", "foo", 1, {V}},
        {"_Z4kernIiEvPT_", "kern<int>", 1, {P}},
        {"_ZN3fooclEi", "foo::operator()", 1, {V}},
        {"_ZN3FooltEi", "Foo::operator<", 1, {V}},
        {"_Z3fooi.cold", "foo", 1, {V}},
        {"_Z3fooi.cold.part.0", "foo", 1, {V}},
        {"_Z3foo6__halfPS_", "foo", 2, {V, P}},
        {"_Z1fPFviE", "f", 1, {A}},
        {"_Z3fooIXltLi1ELi2EEEvPf", "foo<(1)<(2)>", 1, {P}},
        {"_Z1kcahstijlmxyfdbe", "k", 15, {V, V, V, V, V, V, V, V, V, V, V, V, V, V, V}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(&cases[i], true);
}

Test(signature, demangled_text_directly)
{
    static const sig_case cases[] = {
        {"saxpy(int, float, const float*, float*)", "saxpy", 4, {V, V, C, P}},
        {"k(const float**, float* const, float* __restrict, unsigned long long)", "k", 4, {P, P, P, V}},
        {"k(float const* __restrict, volatile int*)", "k", 2, {C, P}},
        {"k(void)", "k", 0, {0}},
        {"k( )", "k", 0, {0}},
        {"k(size_t, uint64_t, const int, __nv_bfloat16)", "k", 4, {V, V, V, V}},
        {"k(Pair<int, float*>, std::array<float, 4>)", "k", 2, {A, A}},
        {"void ns::k<(1)>(1)>(int)", "ns::k<(1)>(1)>", 1, {V}},
        {"operator new(unsigned long)", "operator new", 1, {V}},
        {"ns::operator<<(int, int)", "ns::operator<<", 2, {V, V}},
        {"ns::Foo::operator int()", "ns::Foo::operator int", 0, {0}},
        {"void k<int (*)(float), 2>(float*)", "k<int (*)(float), 2>", 1, {P}},
        {"k(float2, double4, myenum)", "k", 3, {A, A, A}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(&cases[i], false);
}

Test(signature, demangled_field_keeps_the_text)
{
    ct_signature s;
    cr_assert_eq(ct_signature_from_mangled("_Z5saxpyifPKfPf", &s), CT_OK);
    cr_assert_str_eq(s.demangled, "saxpy(int, float, float const*, float*)");
}

Test(signature, unmangled_and_non_function_names_say_nothing)
{
    static const char *const names[] = {
        "saxpy", "f", "i", "PFviE", "", "_Z", "_ZN3fooE", "_Z3foo", "__Z5saxpyifPKfPf", "_Zjunk", "_Z5saxpyifPKfP",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        ct_signature s;
        cr_assert_eq(ct_signature_from_mangled(names[i], &s), CT_EPARSE, "%s", names[i]);
        cr_assert_eq(s.n_params, 0);
    }
    ct_signature s;
    cr_assert_eq(ct_signature_from_mangled(NULL, &s), CT_EINVAL);
    cr_assert_eq(ct_signature_from_mangled("_Z1fi", NULL), CT_EINVAL);
    cr_assert_eq(ct_signature_from_demangled(NULL, &s), CT_EINVAL);
}

Test(signature, malformed_demangled_text_is_an_error)
{
    static const char *const texts[] = {
        "",        "k",      "k(",          "k)", "(int)", "k(int,,int)", "k(int,)",
        "k(,int)", "k(...)", "k(int, ...)", ")",  "()",    "k(int))",     "k(int) [clone ",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        ct_signature s;
        cr_assert_eq(ct_signature_from_demangled(texts[i], &s), CT_EPARSE, "'%s'", texts[i]);
        cr_assert_eq(s.n_params, 0);
    }
}

Test(signature, too_many_params_is_an_error_not_a_partial_answer)
{
    char text[1024] = "k(";
    for (int i = 0; i < CT_SIG_MAX_PARAMS; i++)
        strcat(text, "int, ");
    strcat(text, "int)");
    ct_signature s;
    cr_assert_eq(ct_signature_from_demangled(text, &s), CT_EPARSE);
    cr_assert_eq(s.n_params, 0);
    text[strlen(text) - 6] = ')';
    text[strlen(text) - 5] = '\0';
    cr_assert_eq(ct_signature_from_demangled(text, &s), CT_OK, "%s", text);
    cr_assert_eq(s.n_params, CT_SIG_MAX_PARAMS);
}

Test(signature, long_names_are_cut_not_overrun)
{
    char text[4 * CT_SIG_NAME_MAX];
    memset(text, 'n', sizeof text);
    strcpy(text + sizeof text - 8, "(int*)");
    ct_signature s;
    cr_assert_eq(ct_signature_from_demangled(text, &s), CT_OK);
    cr_assert_eq(strlen(s.base), CT_SIG_NAME_MAX - 1);
    cr_assert_eq(strlen(s.demangled), CT_SIG_NAME_MAX - 1);
    cr_assert_eq(s.kind[0], P);
}

/* Random bytes and random mutations of real names: no crash, no read past
 * the end (ASan builds check the latter), results within bounds. */
Test(signature, garbage_is_safe)
{
    static const char *const seeds[] = {
        "_Z5saxpyifPKfPf",
        ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_"
         "6detail5ArrayIPcLi1EEEEEviT0_T1_"),
        "void k<(1)>(1)>(int, operator<<(x), (y)",
    };
    static const char alphabet[] = "_ZNKPRSIEv0123456789ifcdlmxyab<>()[]{},*& :operator";
    unsigned seed = 12345;
    for (int round = 0; round < 20000; round++) {
        char text[200];
        size_t n = (size_t)(rand_r(&seed) % (sizeof text - 1));
        const char *base = seeds[round % 3];
        for (size_t i = 0; i < n; i++) {
            int pick = rand_r(&seed) % 4;
            text[i] = pick == 0   ? (char)(rand_r(&seed) % 255 + 1)
                      : pick == 1 ? alphabet[rand_r(&seed) % (sizeof alphabet - 1)]
                                  : base[i % strlen(base)];
        }
        text[n] = '\0';
        ct_signature s;
        int rc = ct_signature_from_demangled(text, &s);
        cr_assert(rc == CT_OK || rc == CT_EPARSE);
        cr_assert_leq(s.n_params, CT_SIG_MAX_PARAMS);
        rc = ct_signature_from_mangled(text, &s);
        cr_assert(rc == CT_OK || rc == CT_EPARSE);
        cr_assert_leq(s.n_params, CT_SIG_MAX_PARAMS);
    }
}
