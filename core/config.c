/*
 * config.c - the CUTAINT_ environment variables, parsed once into a
 * ct_config, and the CUTAINT_ARGS / CUTAINT_INJECT grammars.
 *
 * Owns: the table of known variables (name, parser, accepted values, the
 * default as the diagnostic names it), the diagnostics, the two grammars and
 * the injection counters.  The error codes an effect names come from the
 * caller's ct_error_vocab (the shim's, from the toolkit): core knows no CUDA.
 *
 * Invariants:
 * - One malformed variable gives exactly one diagnostic line (no newline) of
 *   the form  cutaint: NAME='VALUE' is not valid: WHY; using the default D
 *   and keeps its default; every other variable still parses.
 * - Environment text is data: it reaches messages only as a "%s" argument,
 *   cut to a bounded length with control and non-ASCII bytes shown as '?',
 *   so a value can neither forge a second line nor drive a terminal.
 * - No heap: the grammars parse (pointer, length) spans of the caller's
 *   text into fixed-size fields; anything that does not fit is an error.
 * - A grammar that fails leaves its output empty (no rule of a half-parsed
 *   text ever takes effect).
 * - ct_inject_check gives each matching call its own ordinal with one
 *   atomic fetch-add, so "#N" fires exactly once however many threads race.
 */
#include "config.h"

#include "ct_status.h"
#include "text.h"

#include <assert.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* How much of an outside value a message repeats. */
#define SHOWN_MAX 80

#define STR(x) #x
#define XSTR(x) STR(x)

/* ---- views of the caller's text (more in text.h) ------------------------- */

/* Take the next sep-separated piece off *rest (the whole rest if none). */
static ct_text next_piece(ct_text *rest, char sep)
{
    const char *end = memchr(rest->p, sep, rest->n);
    ct_text piece = {rest->p, end ? (size_t)(end - rest->p) : rest->n};
    size_t used = end ? piece.n + 1 : piece.n;
    assert(used <= rest->n && "a piece and its separator lie within the rest");
    rest->p += used;
    rest->n -= used;
    return piece;
}

/* The part of whole after the character at mark. */
static ct_text span_after(const char *mark, ct_text whole)
{
    return (ct_text){mark + 1, (size_t)(whole.p + whole.n - (mark + 1))};
}

static const char *last_of(ct_text s, char c)
{
    for (size_t i = s.n; i > 0; i--)
        if (s.p[i - 1] == c)
            return s.p + i - 1;
    return NULL;
}

static bool span_is(ct_text s, const char *word)
{
    return strlen(word) == s.n && strncasecmp(s.p, word, s.n) == 0;
}

/* A keyword and the value it stands for; lists end with { NULL }. */
typedef struct ct_word {
    const char *word;
    int value;
} ct_word;

/* Keywords match whole and in any case. */
static bool find_word(const ct_word *words, ct_text token, int *value)
{
    for (; words && words->word; words++)
        if (span_is(token, words->word)) {
            *value = words->value;
            return true;
        }
    return false;
}

/* Copy s into a NUL-terminated field of cap bytes; false if it does not fit. */
static bool span_copy(char *dst, size_t cap, ct_text s)
{
    if (s.n >= cap)
        return false;
    memcpy(dst, s.p, s.n);
    dst[s.n] = '\0';
    return true;
}

/* Outside text as a message may show it: at most SHOWN_MAX bytes ("..."
 * marks a cut), printable ASCII only. */
static void show(char dst[SHOWN_MAX + 4], ct_text s)
{
    size_t n = s.n < SHOWN_MAX ? s.n : SHOWN_MAX;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s.p[i];
        dst[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    strcpy(dst + n, n < s.n ? "..." : "");
}

/* ---- grammar errors --------------------------------------------------- */

typedef struct grammar {
    const char *text; /* the whole value, for columns */
    const char *item; /* "rule" / "spec" */
    unsigned index;   /* 1-based piece number */
    ct_text piece;
    char *err;
    size_t errcap;
} grammar;

static int grammar_error(const grammar *g, const char *at, const char *expected)
{
    if (g->err && g->errcap) {
        char shown[SHOWN_MAX + 4];
        show(shown, g->piece);
        snprintf(g->err, g->errcap, "%s %u '%s', column %zu: %s", g->item, g->index, shown, (size_t)(at - g->text) + 1,
                 expected);
    }
    return CT_EPARSE;
}

/* Calls parse_item on every non-blank ';'-separated piece of text. */
static int each_piece(const char *text, const char *item, char *err, size_t errcap,
                      int (*parse_item)(grammar *g, void *out), void *out)
{
    if (err && errcap)
        err[0] = '\0';
    grammar g = {text, item, 0, {text, 0}, err, errcap};
    ct_text rest = ct_text_of(text);
    while (rest.n) {
        ct_text piece = next_piece(&rest, ';');
        g.index++;
        g.piece = ct_text_trim(piece);
        if (g.piece.n == 0)
            continue;
        int rc = parse_item(&g, out);
        if (rc != CT_OK)
            return rc;
    }
    return CT_OK;
}

/* ---- CUTAINT_ARGS ----------------------------------------------------- */

static const ct_word role_words[] = {
    {"", CT_ROLE_DEFAULT}, {"-", CT_ROLE_IGNORE},     {"r", CT_ROLE_READ},
    {"w", CT_ROLE_WRITE},  {"rw", CT_ROLE_READWRITE}, {NULL, 0},
};

static bool parse_role(ct_text token, uint8_t *role)
{
    int value;
    if (!find_word(role_words, token, &value))
        return false;
    *role = (uint8_t)value;
    return true;
}

static int parse_arg_rule(grammar *g, void *out)
{
    ct_arg_rules *rules = out;
    if (rules->n == CT_ARGS_MAX_RULES)
        return grammar_error(g, g->piece.p, "expected at most " XSTR(CT_ARGS_MAX_RULES) " rules");
    const char *eq = last_of(g->piece, '=');
    if (!eq)
        return grammar_error(g, g->piece.p, "expected GLOB=ROLE[,ROLE]...");
    ct_arg_rule *rule = &rules->rule[rules->n];
    ct_text glob = ct_text_trim((ct_text){g->piece.p, (size_t)(eq - g->piece.p)});
    if (glob.n == 0)
        return grammar_error(g, g->piece.p, "expected a kernel name glob before '='");
    if (!span_copy(rule->glob, sizeof rule->glob, glob))
        return grammar_error(g, glob.p, "expected a glob shorter than " XSTR(CT_PATTERN_MAX) " bytes");
    ct_text roles = span_after(eq, g->piece);
    rule->n_roles = 0;
    for (bool more = true; more;) {
        more = memchr(roles.p, ',', roles.n) != NULL;
        ct_text token = ct_text_trim(next_piece(&roles, ','));
        if (rule->n_roles == CT_ARGS_MAX_PARAMS)
            return grammar_error(g, token.p, "expected at most " XSTR(CT_ARGS_MAX_PARAMS) " roles");
        if (!parse_role(token, &rule->role[rule->n_roles]))
            return grammar_error(g, token.p, "expected a role r, w, rw, - or nothing (default)");
        rule->n_roles++;
    }
    assert(rule->n_roles >= 1 && rule->n_roles <= CT_ARGS_MAX_PARAMS && "a rule has 1..max roles");
    rules->n++;
    assert(rules->n <= CT_ARGS_MAX_RULES && "a full table refuses the next rule");
    return CT_OK;
}

int ct_args_parse(const char *text, ct_arg_rules *out, char *err, size_t errcap)
{
    if (!out)
        return CT_EINVAL;
    out->n = 0;
    int rc = each_piece(text, "rule", err, errcap, parse_arg_rule, out);
    if (rc != CT_OK)
        out->n = 0;
    return rc;
}

static bool glob_matches(const char *glob, const char *name, const char *alt_name)
{
    return (name && fnmatch(glob, name, 0) == 0) || (alt_name && fnmatch(glob, alt_name, 0) == 0);
}

const ct_arg_rule *ct_args_match(const ct_arg_rules *rules, const char *name, const char *alt_name)
{
    if (!rules)
        return NULL;
    unsigned n = rules->n < CT_ARGS_MAX_RULES ? rules->n : CT_ARGS_MAX_RULES;
    for (unsigned i = 0; i < n; i++)
        if (glob_matches(rules->rule[i].glob, name, alt_name))
            return &rules->rule[i];
    return NULL;
}

/* ---- CUTAINT_INJECT --------------------------------------------------- */

bool ct_inject_rule_unreachable(const ct_inject_rule *rule, const char *const *names, size_t n)
{
    if (!rule || rule->kind != CT_INJECT_API)
        return false; /* kernels are named by the program: any may come */
    for (size_t i = 0; i < n; i++)
        if (names[i] && fnmatch(rule->pattern, names[i], 0) == 0)
            return false;
    return true;
}

static bool parse_count(ct_text token, uint64_t *nth, bool *and_later)
{
    uint64_t value = 0;
    size_t i = 0;
    for (; i < token.n && token.p[i] >= '0' && token.p[i] <= '9'; i++) {
        unsigned digit = (unsigned)(token.p[i] - '0');
        if (value > (UINT64_MAX - digit) / 10)
            return false;
        value = value * 10 + digit;
    }
    if (i == 0 || value == 0)
        return false;
    ct_text tail = ct_text_trim((ct_text){token.p + i, token.n - i});
    if (tail.n > 1 || (tail.n == 1 && tail.p[0] != '+'))
        return false;
    *nth = value;
    *and_later = tail.n == 1;
    return true;
}

/* effect: the trimmed text after '=' (at: the '=', for an empty one). */
static int parse_effect(grammar *g, const char *at, ct_text effect, const ct_error_vocab *errors, ct_inject_rule *rule)
{
    char word[64];
    if (effect.n == 0)
        return grammar_error(g, at, "expected an effect after '='");
    if (span_is(effect, "context_lost")) {
        rule->context_loss = true;
        rule->error = errors->context_lost;
        return CT_OK;
    }
    if (!span_copy(word, sizeof word, effect) || errors->parse(word, &rule->error) != CT_OK)
        return grammar_error(g, effect.p,
                             "expected a CUresult (e.g. CUDA_ERROR_ILLEGAL_ADDRESS, "
                             "ILLEGAL_ADDRESS or 700) or context_lost");
    if (rule->error == errors->success)
        return grammar_error(g, effect.p, "expected an error: CUDA_SUCCESS injects nothing");
    return CT_OK;
}

/* What each_piece hands parse_inject_spec. */
typedef struct inject_out {
    ct_inject_rules *rules;
    const ct_error_vocab *errors;
} inject_out;

static int parse_inject_spec(grammar *g, void *out)
{
    ct_inject_rules *rules = ((inject_out *)out)->rules;
    const ct_error_vocab *errors = ((inject_out *)out)->errors;
    if (rules->n == CT_INJECT_MAX_RULES)
        return grammar_error(g, g->piece.p, "expected at most " XSTR(CT_INJECT_MAX_RULES) " specs");
    ct_inject_rule *rule = &rules->rule[rules->n];
    const char *colon = memchr(g->piece.p, ':', g->piece.n);
    if (!colon)
        return grammar_error(g, g->piece.p, "expected KIND:PATTERN[#N[+]][=EFFECT]");
    ct_text kind = ct_text_trim((ct_text){g->piece.p, (size_t)(colon - g->piece.p)});
    if (span_is(kind, "launch"))
        rule->kind = CT_INJECT_LAUNCH;
    else if (span_is(kind, "api"))
        rule->kind = CT_INJECT_API;
    else
        return grammar_error(g, g->piece.p, "expected launch or api before ':'");

    ct_text rest = span_after(colon, g->piece);
    rule->context_loss = false;
    rule->error = rule->kind == CT_INJECT_LAUNCH ? errors->launch_default : errors->api_default;
    const char *eq = last_of(rest, '=');
    if (eq) {
        int rc = parse_effect(g, eq, ct_text_trim(span_after(eq, rest)), errors, rule);
        if (rc != CT_OK)
            return rc;
        rest.n = (size_t)(eq - rest.p);
    }
    rule->nth = 1;
    rule->and_later = false;
    const char *hash = last_of(rest, '#');
    if (hash) {
        if (!parse_count(ct_text_trim(span_after(hash, rest)), &rule->nth, &rule->and_later))
            return grammar_error(g, hash, "expected #N or #N+ with N a whole number >= 1");
        rest.n = (size_t)(hash - rest.p);
    }
    ct_text pattern = ct_text_trim(rest);
    if (pattern.n == 0)
        return grammar_error(g, colon, "expected a name glob after ':'");
    if (!span_copy(rule->pattern, sizeof rule->pattern, pattern))
        return grammar_error(g, pattern.p, "expected a glob shorter than " XSTR(CT_PATTERN_MAX) " bytes");
    assert(rule->nth >= 1 && "#N counts from 1");
    atomic_init(&rule->seen, 0);
    rules->n++;
    assert(rules->n <= CT_INJECT_MAX_RULES && "a full table refuses the next spec");
    return CT_OK;
}

int ct_inject_parse(const char *text, const ct_error_vocab *errors, ct_inject_rules *out, char *err, size_t errcap)
{
    if (!out || !errors)
        return CT_EINVAL;
    out->n = 0;
    inject_out into = {out, errors};
    int rc = each_piece(text, "spec", err, errcap, parse_inject_spec, &into);
    if (rc != CT_OK)
        out->n = 0;
    return rc;
}

static bool inject_fires(ct_inject_rule *rule)
{
    uint64_t ordinal = atomic_fetch_add_explicit(&rule->seen, 1, memory_order_relaxed) + 1;
    return ordinal == rule->nth || (rule->and_later && ordinal > rule->nth);
}

const ct_inject_rule *ct_inject_check(ct_inject_rules *rules, ct_inject_kind kind, const char *name,
                                      const char *alt_name)
{
    if (!rules)
        return NULL;
    const ct_inject_rule *fired = NULL;
    unsigned n = rules->n < CT_INJECT_MAX_RULES ? rules->n : CT_INJECT_MAX_RULES;
    for (unsigned i = 0; i < n; i++) {
        ct_inject_rule *rule = &rules->rule[i];
        if (rule->kind != kind || !glob_matches(rule->pattern, name, alt_name))
            continue;
        /* Every matching rule counts this call, even after one has fired,
         * so each rule's #N means the Nth call matching that rule. */
        if (inject_fires(rule) && !fired)
            fired = rule;
    }
    return fired;
}

/* ---- the variables ---------------------------------------------------- */

struct ct_var;
/* Stores the parsed value in cfg, or returns CT_EPARSE leaving cfg's field
 * as it was (grammar parsers: empty) and, when it has more to say than the
 * variable's `expected` text, a reason in why. */
typedef int (*ct_value_parser)(const struct ct_var *var, ct_text text, ct_config *cfg, const ct_error_vocab *errors,
                               char *why, size_t whycap);

typedef struct ct_var {
    const char *name;
    ct_value_parser parse;
    size_t field;         /* offsetof(ct_config, ...) */
    const ct_word *words; /* keywords, ended by { NULL } */
    const char *expected;
    const char *fallback; /* the default as the message names it */
} ct_var;

_Static_assert(sizeof(ct_log_level) == sizeof(int) && sizeof(ct_on_skip) == sizeof(int) &&
                   sizeof(ct_on_loss) == sizeof(int),
               "keyword fields are stored as int");

static void *field_of(const ct_var *var, ct_config *cfg)
{
    return (char *)cfg + var->field;
}

/* Decimal or 0xNN, 0..255. */
static bool parse_byte_number(ct_text token, int *value)
{
    bool hex = token.n > 2 && token.p[0] == '0' && (token.p[1] == 'x' || token.p[1] == 'X');
    size_t i = hex ? 2 : 0;
    unsigned base = hex ? 16 : 10;
    unsigned result = 0;
    if (i == token.n)
        return false;
    for (; i < token.n; i++) {
        char c = token.p[i];
        unsigned digit = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                         : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                         : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                                : 99;
        if (digit >= base)
            return false;
        result = result * base + digit;
        if (result > 255)
            return false;
    }
    *value = (int)result;
    return true;
}

/* A keyword (or, for byte variables, a number 0..255) into an int field. */
static int parse_int_choice(const ct_var *var, ct_text text, ct_config *cfg, bool byte_too)
{
    int value;
    ct_text token = ct_text_trim(text);
    if (!find_word(var->words, token, &value) && !(byte_too && parse_byte_number(token, &value)))
        return CT_EPARSE;
    memcpy(field_of(var, cfg), &value, sizeof value);
    return CT_OK;
}

static int parse_keyword(const ct_var *var, ct_text text, ct_config *cfg, const ct_error_vocab *errors, char *why,
                         size_t whycap)
{
    (void)errors, (void)why, (void)whycap;
    return parse_int_choice(var, text, cfg, false);
}

static int parse_byte(const ct_var *var, ct_text text, ct_config *cfg, const ct_error_vocab *errors, char *why,
                      size_t whycap)
{
    (void)errors, (void)why, (void)whycap;
    return parse_int_choice(var, text, cfg, true);
}

static int parse_flag(const ct_var *var, ct_text text, ct_config *cfg, const ct_error_vocab *errors, char *why,
                      size_t whycap)
{
    (void)errors, (void)why, (void)whycap;
    int value;
    if (!find_word(var->words, ct_text_trim(text), &value))
        return CT_EPARSE;
    *(bool *)field_of(var, cfg) = value != 0;
    return CT_OK;
}

static int parse_path(const ct_var *var, ct_text text, ct_config *cfg, const ct_error_vocab *errors, char *why,
                      size_t whycap)
{
    (void)errors, (void)why, (void)whycap;
    return span_copy(field_of(var, cfg), CT_PATH_MAX, text) ? CT_OK : CT_EPARSE;
}

static int parse_args(const ct_var *var, ct_text text, ct_config *cfg, const ct_error_vocab *errors, char *why,
                      size_t whycap)
{
    (void)var, (void)errors;
    return ct_args_parse(text.p, &cfg->args, why, whycap);
}

static int parse_inject(const ct_var *var, ct_text text, ct_config *cfg, const ct_error_vocab *errors, char *why,
                        size_t whycap)
{
    (void)var;
    return ct_inject_parse(text.p, errors, &cfg->inject, why, whycap);
}

static const ct_word log_words[] = {
    {"off", CT_LOG_OFF},   {"error", CT_LOG_ERROR}, {"warn", CT_LOG_WARN},
    {"info", CT_LOG_INFO}, {"debug", CT_LOG_DEBUG}, {NULL, 0},
};
static const ct_word skip_words[] = {
    {"propagate", CT_SKIP_PROPAGATE},
    {"error", CT_SKIP_ERROR},
    {NULL, 0},
};
static const ct_word loss_words[] = {
    {"continue", CT_LOSS_CONTINUE},
    {"exit", CT_LOSS_EXIT},
    {"abort", CT_LOSS_ABORT},
    {NULL, 0},
};
static const ct_word poison_words[] = {{"off", -1}, {NULL, 0}};
static const ct_word flag_words[] = {
    {"0", 0}, {"1", 1}, {"false", 0}, {"true", 1}, {"no", 0}, {"yes", 1}, {NULL, 0},
};

#define PATH_EXPECTED "expected a path shorter than " XSTR(CT_PATH_MAX) " bytes"

static const ct_var ct_vars[] = {
    {"CUTAINT_LOG", parse_keyword, offsetof(ct_config, log), log_words, "expected warn, off, error, info or debug",
     "warn"},
    {"CUTAINT_LOG_FILE", parse_path, offsetof(ct_config, log_file), NULL, PATH_EXPECTED, "stderr"},
    {"CUTAINT_REPORT", parse_path, offsetof(ct_config, report), NULL, PATH_EXPECTED, "(no report)"},
    {"CUTAINT_POISON", parse_byte, offsetof(ct_config, poison), poison_words,
     "expected off or a byte 0..255 (e.g. 0xff)", "0xff"},
    {"CUTAINT_ON_SKIP", parse_keyword, offsetof(ct_config, on_skip), skip_words, "expected propagate or error",
     "propagate"},
    {"CUTAINT_ON_CONTEXT_LOSS", parse_keyword, offsetof(ct_config, on_context_loss), loss_words,
     "expected continue, exit or abort", "continue"},
    {"CUTAINT_EXIT_STATUS", parse_byte, offsetof(ct_config, exit_status), NULL,
     "expected a status 0..255 (0 keeps the program's own)", "70"},
    {"CUTAINT_ERROR_EXITCODE", parse_byte, offsetof(ct_config, error_exitcode), NULL,
     "expected a status 1..255 (0: off)", "(off)"},
    {"CUTAINT_HEALTH_FILE", parse_path, offsetof(ct_config, health_file), NULL, PATH_EXPECTED, "(no health file)"},
    {"CUTAINT_METRICS_FILE", parse_path, offsetof(ct_config, metrics_file), NULL, PATH_EXPECTED, "(no metrics file)"},
    {"CUTAINT_ARGS", parse_args, offsetof(ct_config, args), NULL, "expected GLOB=ROLE[,ROLE]...[;...]", "(no rules)"},
    {"CUTAINT_INJECT", parse_inject, offsetof(ct_config, inject), NULL, "expected KIND:PATTERN[#N[+]][=EFFECT][;...]",
     "(no injection)"},
    {"CUTAINT_DISABLE", parse_flag, offsetof(ct_config, disable), flag_words, "expected 0 or 1 (or false/true, no/yes)",
     "0"},
};

#define N_VARS (sizeof ct_vars / sizeof ct_vars[0])

void ct_config_defaults(ct_config *out)
{
    memset(out, 0, sizeof *out);
    out->log = CT_LOG_WARN;
    out->poison = 0xff;
    out->on_skip = CT_SKIP_PROPAGATE;
    out->on_context_loss = CT_LOSS_CONTINUE;
    out->exit_status = 70;
}

static const char *plain_getenv(const char *name, void *ctx)
{
    (void)ctx;
    return getenv(name);
}

static void report_invalid(const ct_var *var, const char *value, const char *why, ct_diag_fn diag, void *ctx)
{
    if (!diag)
        return;
    char shown[SHOWN_MAX + 4];
    char message[CT_DIAG_MAX];
    show(shown, ct_text_of(value));
    snprintf(message, sizeof message, "cutaint: %s='%s' is not valid: %s; using the default %s", var->name, shown, why,
             var->fallback);
    assert(!strchr(message, '\n') && "outside text is shown, so a diagnostic stays one line");
    diag(message, ctx);
}

int ct_config_load(ct_config *out, const ct_error_vocab *errors, ct_getenv_fn get, ct_diag_fn diag, void *ctx)
{
    ct_config_defaults(out);
    if (!get)
        get = plain_getenv;
    int malformed = 0;
    for (size_t i = 0; i < N_VARS; i++) {
        const ct_var *var = &ct_vars[i];
        const char *value = get(var->name, ctx);
        if (!value || !*value)
            continue;
        char why[CT_DIAG_MAX] = "";
        if (var->parse(var, ct_text_of(value), out, errors, why, sizeof why) == CT_OK)
            continue;
        malformed++;
        assert((var->parse != parse_args || out->args.n == 0) && (var->parse != parse_inject || out->inject.n == 0) &&
               "a grammar that fails leaves its output empty");
        report_invalid(var, value, why[0] ? why : var->expected, diag, ctx);
    }
    return malformed;
}

/* The cutaint command's own variables (tools/cutaint): which libcutaint.so
 * and which driver `cutaint run` preloads.  The shim reads neither, but a
 * process started by the command, or preloading the shim directly beside
 * it, has them in its environment: they are not typos. */
static const char *const command_vars[] = {"CUTAINT_LIB", "CUTAINT_FAKECUDA_DIR"};

static bool is_known(ct_text name)
{
    for (size_t i = 0; i < sizeof command_vars / sizeof *command_vars; i++)
        if (strlen(command_vars[i]) == name.n && memcmp(command_vars[i], name.p, name.n) == 0)
            return true;
    for (size_t i = 0; i < N_VARS; i++)
        if (strlen(ct_vars[i].name) == name.n && memcmp(ct_vars[i].name, name.p, name.n) == 0)
            return true;
    return false;
}

static void known_list(char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < N_VARS && len < cap; i++) {
        int n = snprintf(out + len, cap - len, "%s%s", i ? ", " : "", ct_vars[i].name);
        if (n < 0)
            break;
        len += (size_t)n;
    }
}

int ct_config_check_unknown(char *const *envp, ct_diag_fn diag, void *ctx)
{
    static const char prefix[] = "CUTAINT_";
    int unknown = 0;
    for (; envp && *envp; envp++) {
        if (strncmp(*envp, prefix, sizeof prefix - 1) != 0)
            continue;
        const char *eq = strchr(*envp, '=');
        ct_text name = {*envp, eq ? (size_t)(eq - *envp) : strlen(*envp)};
        if (is_known(name))
            continue;
        unknown++;
        if (!diag)
            continue;
        char shown[SHOWN_MAX + 4];
        char known[CT_DIAG_MAX / 2];
        char message[CT_DIAG_MAX];
        show(shown, name);
        known_list(known, sizeof known);
        snprintf(message, sizeof message, "cutaint: %s is not a cutaint variable (known: %s); ignored", shown, known);
        assert(!strchr(message, '\n') && "outside text is shown, so a diagnostic stays one line");
        diag(message, ctx);
    }
    return unknown;
}
