/*
 * faults.c: fault injection from the environment (FAKECUDA_FAULTS; grammar
 * in README.md).
 *
 *   api:NAME#N=ACTION     the Nth call of an entry point (exported name, or
 *                         the base name of its family)
 *   launch:KERNEL#N=ACTION  the Nth launch of a kernel (fnmatch pattern
 *                         on its entry name or, for a C++ name, on its
 *                         demangled signature or name): built-in, plugin,
 *                         PTX or NVRTC kernels alike
 *   alloc#N=ACTION        the Nth device allocation
 *   N+ instead of N: the Nth and every later one.
 *   ACTION: fault | oom | CUDA_ERROR_<NAME> | a CUresult number
 *
 * A code fails the call at once and the driver does nothing else (an
 * isolated error). "fault" lets the call succeed and makes its work fault
 * when it runs (sticky CUDA_ERROR_ILLEGAL_ADDRESS at the next sync point).
 * Invariants: the variable is read once, at the first driver call; a spec
 * with any malformed rule is ignored whole, with one line on stderr; every
 * matching rule counts every call, and the first rule that fires wins.
 */
#include "fakecuda.h"

#include <assert.h>
#include <fnmatch.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FC_MAX_RULES 32
#define FC_MAX_NAME 128

typedef enum fc_target { FC_T_API, FC_T_LAUNCH, FC_T_ALLOC } fc_target;

typedef struct fc_rule {
    fc_target target;
    char name[FC_MAX_NAME];
    unsigned long nth;
    bool and_later;
    fc_action action;
    _Atomic unsigned long calls;
} fc_rule;

static fc_rule rules[FC_MAX_RULES];
static int nrules;
static pthread_once_t faults_once = PTHREAD_ONCE_INIT;
static _Thread_local bool pending_fault;

static bool fc_known_api(const char *name)
{
    for (unsigned i = 0; i < FC_API_COUNT; i++) {
        assert((i == 0 || strcmp(fc_api_rows[i - 1].name, fc_api_rows[i].name) < 0) &&
               "the rows are sorted by name, each name once");
        if (strcmp(fc_api_rows[i].name, name) == 0 || strcmp(fc_api_rows[i].base, name) == 0)
            return true;
    }
    return false;
}

static const char *fc_parse_action(const char *s, fc_target t, fc_action *a)
{
    const char *name;
    char *end;
    if (strcmp(s, "fault") == 0) {
        a->fault = true;
        return t == FC_T_ALLOC ? "an allocation cannot fault; use oom or a code" : NULL;
    }
    if (strcmp(s, "oom") == 0) {
        a->code = CUDA_ERROR_OUT_OF_MEMORY;
        return NULL;
    }
    if (fc_error_by_name(s, &a->code))
        return a->code == CUDA_SUCCESS ? "CUDA_SUCCESS is not a failure" : NULL;
    long v = strtol(s, &end, 10);
    if (*s && !*end && v > 0 && v <= 100000 && fc_get_error_name((CUresult)v, &name) == CUDA_SUCCESS) {
        a->code = (CUresult)v;
        return NULL;
    }
    return "unknown action";
}

static const char *fc_parse_target(char *s, fc_rule *r)
{
    if (strcmp(s, "alloc") == 0) {
        r->target = FC_T_ALLOC;
        return NULL;
    }
    bool api = strncmp(s, "api:", 4) == 0, launch = strncmp(s, "launch:", 7) == 0;
    if (!api && !launch)
        return "target must be api:NAME, launch:KERNEL or alloc";
    const char *name = s + (api ? 4 : 7);
    if (strlen(name) >= FC_MAX_NAME)
        return "name too long";
    strcpy(r->name, name);
    r->target = api ? FC_T_API : FC_T_LAUNCH;
    if (api && !fc_known_api(name))
        return "no such entry point";
    /* A launch: rule is not checked against the kernels known now: a
       module's kernels become known only when it is loaded, after this. */
    return launch && !*name ? "no kernel named" : NULL;
}

/* Parses one "target#N[+]=action" in place. */
static const char *fc_parse_rule(char *s, fc_rule *r)
{
    char *hash = strchr(s, '#'), *eq = strchr(s, '=');
    if (!hash || !eq || eq < hash)
        return "expected TARGET#N=ACTION";
    *hash = *eq = '\0';
    char *end;
    r->nth = strtoul(hash + 1, &end, 10);
    r->and_later = *end == '+';
    if (end == hash + 1 || r->nth == 0 || *(end + r->and_later) != '\0' || hash[1] == '-')
        return "N must be a positive count";
    const char *err = fc_parse_target(s, r);
    return err ? err : fc_parse_action(eq + 1, r->target, &r->action);
}

static char *fc_trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

static void fc_parse_spec(void)
{
#ifndef NDEBUG
    static bool spec_read;
    assert(!spec_read && "FAKECUDA_FAULTS is read once");
    spec_read = true;
#endif
    const char *env = getenv("FAKECUDA_FAULTS");
    char *spec = env ? strdup(env) : NULL, *save = NULL;
    int n = 0;
    for (char *tok = spec ? strtok_r(spec, ";", &save) : NULL; tok; tok = strtok_r(NULL, ";", &save)) {
        char *rule = fc_trim(tok), text[256];
        snprintf(text, sizeof text, "%s", rule);
        const char *err = !*rule ? NULL : n == FC_MAX_RULES ? "too many rules" : fc_parse_rule(rule, &rules[n]);
        if (err) {
            fprintf(stderr,
                    "fakecuda: FAKECUDA_FAULTS ignored: rule \"%s\": %s (grammar: api:NAME#N=ACTION, "
                    "launch:KERNEL#N=ACTION or alloc#N=ACTION, ';'-separated; N or N+; ACTION = fault, oom, "
                    "CUDA_ERROR_<NAME> or a code)\n",
                    text, err);
            n = 0;
            break;
        }
        n += *rule != '\0';
    }
    assert(n >= 0 && n <= FC_MAX_RULES && "at most FC_MAX_RULES rules, none if one is malformed");
    free(spec);
    nrules = n;
}

void fc_faults_load(void)
{
    pthread_once(&faults_once, fc_parse_spec);
}

static bool fc_rule_fires(fc_rule *r)
{
    unsigned long c = atomic_fetch_add(&r->calls, 1) + 1;
    return c == r->nth || (r->and_later && c > r->nth);
}

/* Whether rule r names one of the call's n names: an api: rule exactly, a
   launch: rule as an fnmatch pattern; an alloc rule has none to name. */
static bool fc_rule_names(const fc_rule *r, const char *const *names, unsigned n)
{
    if (r->target == FC_T_ALLOC)
        return true;
    for (unsigned i = 0; i < n; i++)
        if (names[i] &&
            (r->target == FC_T_LAUNCH ? fnmatch(r->name, names[i], 0) == 0 : strcmp(r->name, names[i]) == 0))
            return true;
    return false;
}

/* Counts a call against every rule that matches it; the first that fires wins. */
static fc_action fc_match(fc_target t, const char *const *names, unsigned n)
{
    fc_action out = {CUDA_SUCCESS, false};
    bool fired = false;
    for (int i = 0; i < nrules; i++) {
        fc_rule *r = &rules[i];
        bool hit = r->target == t && fc_rule_names(r, names, n);
        assert(r->nth > 0 && "every rule parsed counts from its first call");
        if (hit && fc_rule_fires(r) && !fired) {
            out = r->action;
            fired = true;
        }
    }
    return out;
}

fc_action fc_faults_api(const fc_api_row *row)
{
    const char *names[] = {row->name, row->base};
    return nrules ? fc_match(FC_T_API, names, 2) : (fc_action){CUDA_SUCCESS, false};
}

/* A kernel's names, as launch: rules match them: its entry name
   (_ZN2ns4fillEPfi), and for a C++ name its demangled signature
   (ns::fill(float*, int)) and its demangled name without parameters or
   return type (ns::fill). Demangled only while there are rules. */
fc_action fc_faults_launch(const char *kernel)
{
    if (!nrules)
        return (fc_action){CUDA_SUCCESS, false};
    bool cxx = strncmp(kernel, "_Z", 2) == 0;
    char *signature = cxx ? cplus_demangle(kernel, DMGL_PARAMS | DMGL_TYPES) : NULL;
    char *bare = cxx ? cplus_demangle(kernel, DMGL_TYPES) : NULL;
    const char *names[] = {kernel, signature, bare};
    fc_action a = fc_match(FC_T_LAUNCH, names, 3);
    free(signature);
    free(bare);
    return a;
}

fc_action fc_faults_alloc(void)
{
    return nrules ? fc_match(FC_T_ALLOC, NULL, 0) : (fc_action){CUDA_SUCCESS, false};
}

void fc_fault_pending_set(bool on)
{
    pending_fault = on;
}

bool fc_fault_pending_take(void)
{
    bool on = pending_fault;
    pending_fault = false;
    return on;
}
