/*
 * test_bindings.c - which memory a launch binds, and how a write releases it:
 * const inputs of a failed launch stay readable; a host write or memset makes
 * exactly the bytes it covers readable again; interior pointers resolve to
 * their allocation (covering the rest of it from the pointer); pointers
 * inside a by-value struct and inside the `extra` packed buffer are tracked
 * in both directions; a launch over a tainted float* is skipped unless
 * CUTAINT_ARGS makes it write-only.  One table row per scenario run.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "harness.h"

#define REFUSED(label) "read " label ": CUDA_ERROR_INVALID_VALUE bytes=0xff"

typedef struct binding_case {
    const char *scenario;
    const char *env; /* one extra variable, or NULL */
    const char *lines[12];
} binding_case;

static const binding_case cases[] = {
    {"const_input",
     NULL,
     {"launch saxpy x y: CUDA_ERROR_INVALID_VALUE",
      "read x: CUDA_SUCCESS first=1 last=1", /* const float* x: not written, not tainted */
      REFUSED("y")}},
    {"rewrite",
     NULL,
     {"write x: CUDA_SUCCESS", "read x: CUDA_SUCCESS first=5 last=5", "memset y: CUDA_SUCCESS",
      "read y: CUDA_SUCCESS first=6 last=6", "read z first half: CUDA_SUCCESS first=7 last=7", REFUSED("z second half"),
      REFUSED("z before memset"), "read z after memset: CUDA_SUCCESS first=7 last=0"}},
    {"interior",
     NULL,
     {"launch fill big+2N: CUDA_ERROR_INVALID_VALUE", "read big[0,N): CUDA_SUCCESS first=1 last=1",
      "read big[N,2N): CUDA_SUCCESS first=1 last=1", /* before the pointer: untouched */
      REFUSED("big[2N,3N)"), REFUSED("big[3N,4N)"),  /* the rest of the allocation from the pointer */
      "launch saxpy big+3N y: CUDA_SUCCESS", REFUSED("y")}},
    {"struct",
     NULL,
     {"launch copy_pair a b: CUDA_ERROR_INVALID_VALUE", REFUSED("b"), /* Pair.out, written through the struct */
      "launch fill c: CUDA_ERROR_INVALID_VALUE", "launch copy_pair c d: CUDA_SUCCESS", /* Pair.in tainted: skipped */
      REFUSED("d")}},
    {"extra",
     NULL,
     {"launch fill(extra) x: CUDA_ERROR_INVALID_VALUE", "read z: CUDA_SUCCESS first=8 last=8", REFUSED("x"),
      "launch saxpy(extra) x y: CUDA_SUCCESS", REFUSED("y")}},
    /* fill(float* out): a non-const pointer may be read, so a fill over a
     * tainted buffer is skipped (conservative default) ... */
    {"refill", NULL, {"launch fill x: CUDA_ERROR_INVALID_VALUE", "launch fill x again: CUDA_SUCCESS", REFUSED("x")}},
    /* ... unless CUTAINT_ARGS declares it write-only: then it runs and
     * its success releases the taint. */
    {"refill",
     "CUTAINT_ARGS=_Z4fillPfif=w,-,-",
     {"launch fill x again: CUDA_SUCCESS", "read x: CUDA_SUCCESS first=2 last=2"}},
    {"refill", "CUTAINT_ARGS=fill=w,-,-", {"read x: CUDA_SUCCESS first=2 last=2"}},
};

ParameterizedTestParameters(bindings, scenario)
{
    return H_ROWS(cases);
}

ParameterizedTest(int *row, bindings, scenario)
{
    const binding_case *c = &cases[*row];
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {c->scenario}, .env = {c->env}}, &r);
    h_expect_ended(&r);
    cr_log_info("scenario %s %s", c->scenario, c->env ? c->env : "");
    h_expect_lines(&r, c->lines);
    cr_expect_eq(r.status, 0, "%s: exit status %d", c->scenario, r.status);
    h_free(&r);
}

/* The same scenarios without the shim, for contrast: every refused line
 * above is a stale or garbage read there, served as success. */
ParameterizedTestParameters(bindings, baseline_serves_garbage)
{
    return H_ROWS(cases);
}

ParameterizedTest(int *row, bindings, baseline_serves_garbage)
{
    const binding_case *c = &cases[*row];
    h_result r;
    h_exec_baseline(&(h_run){.client = CT_CLIENT_LINKED, .args = {c->scenario}}, &r);
    h_expect_ended(&r);
    cr_expect(h_count_containing(r.out, "read ") >= 1, "%s: no reads?\n%s", c->scenario, r.out);
    cr_expect_eq(h_count_containing(r.out, "CUDA_ERROR_INVALID_VALUE bytes="), 0,
                 "%s: without the shim no read fails:\n%s", c->scenario, r.out);
    h_free(&r);
}
