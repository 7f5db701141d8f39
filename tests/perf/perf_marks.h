/* perf_marks.h - what perf_client and test_perf.c agree on. */
#ifndef CT_PERF_MARKS_H
#define CT_PERF_MARKS_H

/* control: CALLS getppid() system calls, to prove the counting counts */
enum { PERF_OP_LAUNCH, PERF_OP_DTOH, PERF_OP_HTOD, PERF_OP_CONTROL, PERF_N_OPS };
static const char *const perf_op_names[PERF_N_OPS] = {"launch", "dtoh", "htod", "control"};
#define PERF_MARK_BEGIN 0x43540100L /* the count argument of write(-1, NULL, count) */
#define PERF_MARK_END 0x43540200L

#endif
