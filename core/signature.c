/*
 * signature.c - a kernel's parameter kinds, read from its mangled name.
 *
 * Owns: demangling (libiberty's cplus_demangle; we never parse the Itanium
 * grammar ourselves) and the reading of the demangled text:
 *   [RETURN-TYPE ' '] BASE '(' PARAM {',' PARAM} ')' [' [clone ...]']
 * BASE keeps namespaces and template arguments; the return type, printed
 * only for template functions, is dropped.
 *
 * Invariants:
 * - Every scan is bounded by the text's length: nothing is read past its
 *   terminator, whatever the input (the fuzzer drives
 *   ct_signature_from_demangled with arbitrary bytes).
 * - Nesting depth never goes below zero, so unbalanced input cannot make a
 *   scan skip its bounds; it only yields CT_EPARSE or a conservative kind.
 * - Doubt errs towards "may be written": an unknown type by value is
 *   AGGREGATE (scanned for pointers), never VALUE.
 * - The demangler's buffer is freed on every path.
 */
#include "signature.h"

#include "ct_status.h"
#include "text.h"

#include <assert.h>
#include <libiberty/demangle.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool ends_with(ct_text s, const char *suffix)
{
    size_t n = strlen(suffix);
    return s.n >= n && memcmp(s.p + s.n - n, suffix, n) == 0;
}

static bool starts_with(ct_text s, const char *prefix)
{
    size_t n = strlen(prefix);
    return s.n >= n && memcmp(s.p, prefix, n) == 0;
}

static bool is_ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* ---- brackets --------------------------------------------------------- */

/* Depth change for one character of a type: (), <>, [] and {} nest.  An
 * "operator<" style name is skipped by the caller before it is counted. */
static int nesting(char c)
{
    switch (c) {
    case '(':
    case '<':
    case '[':
    case '{': return 1;
    case ')':
    case '>':
    case ']':
    case '}': return -1;
    default: return 0;
    }
}

/* Length of an operator name's symbol starting at s.p (just after the word
 * "operator"), so "<<", "()", "->" or "[]" are not taken for brackets. */
static size_t operator_symbol_length(ct_text s)
{
    static const char *const symbols[] = {
        "()", "[]", "<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "->", "<", ">",
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++)
        if (starts_with(s, symbols[i]))
            return strlen(symbols[i]);
    return 0;
}

static bool operator_word_at(ct_text s, size_t i)
{
    static const char word[] = "operator";
    size_t n = sizeof word - 1;
    return s.n - i >= n && memcmp(s.p + i, word, n) == 0 && (i == 0 || !is_ident_char(s.p[i - 1])) &&
           (s.n - i == n || !is_ident_char(s.p[i + n]));
}

/* If s.p[i] starts "operator" followed by a bracket-like symbol, how many
 * characters to skip; else 0. */
static size_t operator_at(ct_text s, size_t i)
{
    if (!operator_word_at(s, i))
        return 0;
    size_t n = sizeof "operator" - 1;
    size_t skip = operator_symbol_length((ct_text){s.p + i + n, s.n - i - n});
    return skip ? n + skip : 0;
}

/* Splits s at depth-0 occurrences of sep, calling take() for each piece.
 * Returns false if take() refuses a piece. */
static bool split_top_level(ct_text s, char sep, bool (*take)(ct_text piece, void *ctx), void *ctx)
{
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i < s.n; i++) {
        size_t skip = operator_at(s, i);
        if (skip) {
            assert(skip <= s.n - i && "an operator's symbol lies within the text");
            i += skip - 1;
            continue;
        }
        if (depth == 0 && s.p[i] == sep) {
            if (!take((ct_text){s.p + start, i - start}, ctx))
                return false;
            start = i + 1;
            continue;
        }
        depth += nesting(s.p[i]);
        if (depth < 0)
            depth = 0;
    }
    return take((ct_text){s.p + start, s.n - start}, ctx);
}

/* ---- the name and the parameter list ---------------------------------- */

/* Drops the " [clone .cold]" suffixes of GCC/LLVM function clones. */
static ct_text strip_clone_suffix(ct_text s)
{
    static const char marker[] = " [clone ";
    const char *at = memmem(s.p, s.n, marker, sizeof marker - 1);
    return at ? ct_text_trim((ct_text){s.p, (size_t)(at - s.p)}) : s;
}

/* Index of the '(' that opens the parameter list: the one matching the
 * final ')'.  Only parentheses are counted, walking backwards, because '<'
 * and '>' appear unbalanced in operator names but parentheses never do. */
static bool find_param_list(ct_text s, size_t *open)
{
    if (s.n == 0 || s.p[s.n - 1] != ')')
        return false;
    int depth = 0;
    for (size_t i = s.n; i > 0; i--) {
        char c = s.p[i - 1];
        depth += c == ')' ? 1 : c == '(' ? -1 : 0;
        assert(depth >= 0 && "the walk starts at ')' and stops when depth is back to 0");
        if (depth == 0) {
            *open = i - 1;
            return true;
        }
    }
    return false;
}

/* A template function's demangled name starts with its return type: the
 * qualified name begins after the last blank outside brackets, unless that
 * blank belongs to "operator new", a conversion operator and the like. */
static ct_text drop_return_type(ct_text name)
{
    int depth = 0;
    size_t cut = 0; /* one past the blank; 0: none */
    for (size_t i = 0; i < name.n; i++) {
        if (operator_word_at(name, i))
            break; /* the rest is the operator's own name, blanks included */
        if (depth == 0 && ct_is_space(name.p[i]))
            cut = i + 1;
        depth += nesting(name.p[i]);
        if (depth < 0)
            depth = 0;
    }
    return ct_text_trim((ct_text){name.p + cut, name.n - cut});
}

/* ---- one parameter ---------------------------------------------------- */

/* The demangler's spellings of arithmetic types, plus the usual typedef
 * names for hand-written input, plus CUDA's half types (2 or 4 bytes: too
 * small to hold a device pointer). */
static const char *const value_types[] = {
    "bool",
    "char",
    "signed char",
    "unsigned char",
    "wchar_t",
    "char8_t",
    "char16_t",
    "char32_t",
    "short",
    "short int",
    "unsigned short",
    "unsigned short int",
    "int",
    "signed",
    "signed int",
    "unsigned",
    "unsigned int",
    "long",
    "long int",
    "unsigned long",
    "unsigned long int",
    "long long",
    "long long int",
    "unsigned long long",
    "unsigned long long int",
    "__int128",
    "unsigned __int128",
    "float",
    "double",
    "long double",
    "__float128",
    "_Float16",
    "std::nullptr_t",
    "decltype(nullptr)",
    "size_t",
    "ssize_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "int8_t",
    "uint8_t",
    "int16_t",
    "uint16_t",
    "int32_t",
    "uint32_t",
    "int64_t",
    "uint64_t",
    "__half",
    "__half2",
    "__nv_bfloat16",
    "__nv_bfloat162",
    "half",
    "half2",
};

static bool span_equals(ct_text s, const char *word)
{
    return strlen(word) == s.n && memcmp(s.p, word, s.n) == 0;
}

static bool ends_with_word(ct_text s, const char *word)
{
    size_t n = strlen(word);
    return ends_with(s, word) && (s.n == n || !is_ident_char(s.p[s.n - n - 1]));
}

/* Strips trailing qualifier words from the list (NULL-ended). */
static ct_text strip_trailing_words(ct_text s, const char *const *words)
{
    for (bool again = true; again;) {
        again = false;
        s = ct_text_trim(s);
        for (const char *const *w = words; *w; w++)
            if (ends_with_word(s, *w)) {
                s.n -= strlen(*w);
                again = true;
            }
    }
    return s;
}

/* Qualifiers of the parameter itself ("T* const", "T* __restrict"). */
static const char *const param_qualifiers[] = {"const", "volatile", "__restrict", "restrict", NULL};
static const char *const non_const_qualifiers[] = {"volatile", "__restrict", "restrict", NULL};

/* pointee: the type text before the last '*' or '&'. */
static bool pointee_is_const(ct_text pointee)
{
    ct_text p = strip_trailing_words(pointee, non_const_qualifiers);
    if (ends_with_word(p, "const"))
        return true;
    /* "const float" (hand-written order) is const only if no further
     * indirection follows: in "const float*" the pointee "const float*"
     * is itself a plain pointer. */
    return starts_with(p, "const ") && !memchr(p.p, '*', p.n) && !memchr(p.p, '&', p.n);
}

static ct_text without_leading_cv(ct_text s)
{
    for (;;) {
        s = ct_text_trim(s);
        if (starts_with(s, "const "))
            s = (ct_text){s.p + 6, s.n - 6};
        else if (starts_with(s, "volatile "))
            s = (ct_text){s.p + 9, s.n - 9};
        else
            return s;
    }
}

static bool is_value_type(ct_text type)
{
    type = without_leading_cv(type);
    for (size_t i = 0; i < sizeof value_types / sizeof value_types[0]; i++)
        if (span_equals(type, value_types[i]))
            return true;
    return false;
}

static ct_param_kind classify_param(ct_text param)
{
    ct_text type = strip_trailing_words(param, param_qualifiers);
    if (type.n && (type.p[type.n - 1] == '*' || type.p[type.n - 1] == '&')) {
        ct_text pointee = {type.p, type.n - 1};
        if (pointee.n && pointee.p[pointee.n - 1] == '&') /* T&& */
            pointee.n--;
        return pointee_is_const(pointee) ? CT_PARAM_CONST_PTR : CT_PARAM_PTR;
    }
    return is_value_type(type) ? CT_PARAM_VALUE : CT_PARAM_AGGREGATE;
}

/* ---- putting it together ---------------------------------------------- */

static bool take_param(ct_text piece, void *ctx)
{
    ct_signature *sig = ctx;
    ct_text param = ct_text_trim(piece);
    if (param.n == 0 || span_equals(param, "...") || sig->n_params == CT_SIG_MAX_PARAMS)
        return false;
    sig->kind[sig->n_params++] = (uint8_t)classify_param(param);
    return true;
}

static int parse_params(ct_text list, ct_signature *sig)
{
    list = ct_text_trim(list);
    if (list.n == 0 || span_equals(list, "void"))
        return CT_OK;
    return split_top_level(list, ',', take_param, sig) ? CT_OK : CT_EPARSE;
}

int ct_signature_from_demangled(const char *demangled, ct_signature *out)
{
    if (!demangled || !out)
        return CT_EINVAL;
    memset(out, 0, sizeof *out);
    ct_text whole = ct_text_trim((ct_text){demangled, strlen(demangled)});
    ct_text_copy_cut(out->demangled, sizeof out->demangled, whole);
    ct_text text = strip_clone_suffix(whole);
    size_t open;
    if (!find_param_list(text, &open))
        return CT_EPARSE;
    assert(open + 2 <= text.n && text.p[open] == '(' && "the list's '(' comes before its final ')'");
    ct_text name = drop_return_type(ct_text_trim((ct_text){text.p, open}));
    if (name.n == 0)
        return CT_EPARSE;
    ct_text_copy_cut(out->base, sizeof out->base, name);
    int rc = parse_params((ct_text){text.p + open + 1, text.n - open - 2}, out);
    if (rc != CT_OK)
        out->n_params = 0;
    assert(out->n_params <= CT_SIG_MAX_PARAMS && "take_param stops at the table's end");
    return rc;
}

int ct_signature_from_mangled(const char *mangled, ct_signature *out)
{
    if (!mangled || !out)
        return CT_EINVAL;
    memset(out, 0, sizeof *out);
    /* Only "_Z" names are C++ functions.  Anything else is an extern "C"
     * kernel whose name says nothing (and with DMGL_TYPES a name like "f"
     * would demangle as the type "float"). */
    if (strncmp(mangled, "_Z", 2) != 0)
        return CT_EPARSE;
    char *demangled = cplus_demangle(mangled, DMGL_PARAMS | DMGL_TYPES);
    if (!demangled)
        return CT_EPARSE;
    int rc = ct_signature_from_demangled(demangled, out);
    free(demangled);
    return rc;
}
