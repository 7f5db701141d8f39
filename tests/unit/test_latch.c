/*
 * test_latch.c - the probe verdict, the first-writer-wins latch and the exit
 * status mapping (core/latch.h).
 */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "latch.h"

#define THREADS 8

static const char gemm_reason[] = "cuLaunchKernel(gemm) failed (CUDA_ERROR_ILLEGAL_ADDRESS), and a synchronize issued "
                                  "afterwards also failed (CUDA_ERROR_ILLEGAL_ADDRESS) \u2014 the CUDA context is "
                                  "destroyed; errors of this class are sticky: every later driver call in this process "
                                  "returns the same status.";

/* True if text is valid UTF-8 (no cut character at the end). */
static bool valid_utf8(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    while (*s) {
        size_t n = *s < 0x80 ? 1 : *s >= 0xF0 ? 4 : *s >= 0xE0 ? 3 : *s >= 0xC0 ? 2 : 0;
        if (n == 0)
            return false;
        for (size_t i = 1; i < n; i++)
            if ((s[i] & 0xC0) != 0x80)
                return false;
        s += n;
    }
    return true;
}

Test(classify, probe_success_is_isolated_whatever_the_error)
{
    char reason[CT_REASON_MAX] = "stale";
    cr_assert_eq(ct_classify("cuLaunchKernel(gemm)", "CUDA_ERROR_ILLEGAL_ADDRESS", NULL, reason, sizeof reason),
                 CT_ISOLATED);
    cr_assert_str_empty(reason);
}

Test(classify, probe_failure_is_context_lost_with_operator_reason)
{
    char reason[CT_REASON_MAX];
    cr_assert_eq(ct_classify("cuLaunchKernel(gemm)", "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_ILLEGAL_ADDRESS", reason,
                             sizeof reason),
                 CT_CONTEXT_LOST);
    cr_assert_str_eq(reason, gemm_reason);
}

Test(classify, only_the_probe_decides)
{
    /* A "benign" error with a failed probe is a loss; a fatal-looking one
     * with a working probe is not. */
    char reason[CT_REASON_MAX];
    cr_assert_eq(ct_classify("cuMemAlloc_v2", "CUDA_ERROR_OUT_OF_MEMORY", "CUDA_ERROR_UNKNOWN", reason, sizeof reason),
                 CT_CONTEXT_LOST);
    cr_assert_eq(ct_classify("cuMemAlloc_v2", "CUDA_ERROR_LAUNCH_FAILED", NULL, reason, sizeof reason), CT_ISOLATED);
}

Test(classify, the_check_at_exit_names_what_the_query_said)
{
    char reason[CT_REASON_MAX] = "stale";
    cr_assert_eq(ct_classify_at_exit(NULL, reason, sizeof reason), CT_ISOLATED);
    cr_assert_str_empty(reason);
    cr_assert_eq(ct_classify_at_exit("CUDA_ERROR_ILLEGAL_ADDRESS", reason, sizeof reason), CT_CONTEXT_LOST);
    cr_assert(strstr(reason, "at exit") == reason, "%s", reason);
    cr_assert(strstr(reason, "CUDA_ERROR_ILLEGAL_ADDRESS") != NULL, "%s", reason);
    cr_assert(strstr(reason, "sticky") != NULL, "%s", reason);
    for (size_t cap = 1; cap < 200; cap++) {
        char small[200];
        ct_classify_at_exit("CUDA_ERROR_ILLEGAL_ADDRESS", small, cap);
        cr_assert(strlen(small) < cap && valid_utf8(small), "cap %zu", cap);
    }
}

Test(classify, missing_names_and_small_buffers_are_safe)
{
    char reason[CT_REASON_MAX];
    cr_assert_eq(ct_classify(NULL, NULL, "X", reason, sizeof reason), CT_CONTEXT_LOST);
    cr_assert(strstr(reason, "a driver call failed (unknown error)") == reason);
    cr_assert_eq(ct_classify("op", "e", "p", NULL, 0), CT_CONTEXT_LOST);
    /* Every cut lands on a character boundary, including inside the dash. */
    for (size_t cap = 1; cap < 120; cap++) {
        char small[120];
        memset(small, 'Z', sizeof small);
        ct_classify("cuLaunchKernel(gemm)", "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_ILLEGAL_ADDRESS", small, cap);
        cr_assert_lt(strlen(small), cap);
        cr_assert(valid_utf8(small), "cap %zu cut a character", cap);
        cr_assert_eq(strncmp(small, gemm_reason, strlen(small)), 0);
    }
}

Test(latch, open_until_set_then_keeps_the_first_reason)
{
    ct_latch l;
    ct_latch_init(&l);
    cr_assert_not(ct_latch_is_set(&l));
    cr_assert_null(ct_latch_reason(&l));
    cr_assert(ct_latch_set(&l, "first"));
    cr_assert(ct_latch_is_set(&l));
    cr_assert_str_eq(ct_latch_reason(&l), "first");
    cr_assert_not(ct_latch_set(&l, "second"));
    cr_assert_str_eq(ct_latch_reason(&l), "first");
}

Test(latch, latches_are_independent)
{
    ct_latch a, b;
    ct_latch_init(&a);
    ct_latch_init(&b);
    ct_latch_set(&a, "a");
    cr_assert_null(ct_latch_reason(&b));
    cr_assert_not(ct_latch_is_set(ct_latch_global()));
}

Test(latch, long_reason_is_cut_on_a_character_boundary)
{
    char reason[2 * CT_REASON_MAX];
    memset(reason, 'x', sizeof reason);
    /* Put a 3-byte character across the cut. */
    memcpy(reason + CT_REASON_MAX - 2, "\u2014", 3);
    reason[sizeof reason - 1] = '\0';
    ct_latch l;
    ct_latch_init(&l);
    ct_latch_set(&l, reason);
    cr_assert_eq(strlen(ct_latch_reason(&l)), CT_REASON_MAX - 2);
    cr_assert(valid_utf8(ct_latch_reason(&l)));
}

Test(latch, null_reason_still_latches_with_a_text)
{
    ct_latch l;
    ct_latch_init(&l);
    cr_assert(ct_latch_set(&l, NULL));
    cr_assert_str_not_empty(ct_latch_reason(&l));
}

Test(latch, global_is_one_instance_and_starts_open)
{
    /* Criterion runs each test in its own process, so setting it is safe. */
    cr_assert_eq(ct_latch_global(), ct_latch_global());
    cr_assert_null(ct_latch_reason(ct_latch_global()));
    cr_assert(ct_latch_set(ct_latch_global(), "lost"));
    cr_assert_str_eq(ct_latch_reason(ct_latch_global()), "lost");
}

typedef struct race {
    ct_latch *latch;
    pthread_barrier_t *start;
    int id;
    bool won;
    char reason[32];
    bool reader_saw_partial;
} race;

static void *set_latch(void *arg)
{
    race *r = arg;
    snprintf(r->reason, sizeof r->reason, "reason from thread %d", r->id);
    pthread_barrier_wait(r->start);
    r->won = ct_latch_set(r->latch, r->reason);
    /* Whatever a reader sees is NULL or a whole reason of some thread. */
    const char *seen = ct_latch_reason(r->latch);
    r->reader_saw_partial = seen && strncmp(seen, "reason from thread ", 19) != 0;
    return NULL;
}

Test(latch, eight_concurrent_setters_agree_on_one_winner)
{
    for (int round = 0; round < 200; round++) {
        ct_latch l;
        ct_latch_init(&l);
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, THREADS);
        pthread_t tid[THREADS];
        race r[THREADS];
        for (int i = 0; i < THREADS; i++) {
            r[i] = (race){.latch = &l, .start = &start, .id = i};
            pthread_create(&tid[i], NULL, set_latch, &r[i]);
        }
        int winners = 0, winner = -1;
        for (int i = 0; i < THREADS; i++) {
            pthread_join(tid[i], NULL);
            cr_assert_not(r[i].reader_saw_partial);
            if (r[i].won) {
                winners++;
                winner = i;
            }
        }
        pthread_barrier_destroy(&start);
        cr_assert_eq(winners, 1, "round %d: %d winners", round, winners);
        cr_assert_str_eq(ct_latch_reason(&l), r[winner].reason);
    }
}

Test(exit, reference_exit_code)
{
    cr_assert_eq(ct_exit_code(true, NULL), 0);
    cr_assert_eq(ct_exit_code(false, NULL), 1);
    cr_assert_eq(ct_exit_code(true, "lost"), CT_EXIT_GPU_FAULT);
    cr_assert_eq(ct_exit_code(false, "lost"), 70);
}

Test(exit, final_status_overrides_only_when_latched_and_enabled)
{
    cr_assert_eq(ct_final_status(0, NULL, 70), 0);
    cr_assert_eq(ct_final_status(3, NULL, 70), 3);
    cr_assert_eq(ct_final_status(0, "lost", 70), 70);
    cr_assert_eq(ct_final_status(3, "lost", 70), 70);
    cr_assert_eq(ct_final_status(3, "lost", 42), 42);
    cr_assert_eq(ct_final_status(3, "lost", 0), 3, "CUTAINT_EXIT_STATUS=0 keeps the program's");
}

Test(exit, error_exitcode_turns_only_a_refusing_zero)
{
    cr_assert_eq(ct_exit_status(0, NULL, 70, 1, 9), 9, "a refused read and status 0: N");
    cr_assert_eq(ct_exit_status(0, NULL, 70, 0, 9), 0, "nothing refused: the program's 0");
    cr_assert_eq(ct_exit_status(0, NULL, 70, 1, 0), 0, "off");
    cr_assert_eq(ct_exit_status(5, NULL, 70, 1, 9), 5, "the program's own failure is kept");
    cr_assert_eq(ct_exit_status(0, "lost", 70, 1, 9), 70, "a lost context wins");
    cr_assert_eq(ct_exit_status(0, "lost", 0, 1, 9), 9, "CUTAINT_EXIT_STATUS=0 leaves 0, which N then turns");
}
