/*
 * control.h - how a test tells the test-double CUDA libraries (blas.c,
 * rand.c, fft.c) what to answer: the next call of a named entry point
 * returns a status instead of doing its work, writing nothing.  For tests
 * only (libdouble_control.so).
 */
#ifndef DOUBLE_CONTROL_H
#define DOUBLE_CONTROL_H

/* The next call of name returns status without writing. */
void double_fail_next(const char *name, int status);
/* Whether this call of name is to fail: *status then holds what it returns
 * (and the order is used up). */
int double_take_failure(const char *name, int *status);

#endif
