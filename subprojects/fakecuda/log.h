/*
 * log.h: FAKECUDA_LOG=debug (log.c), for every fakecuda file, the ones that
 * must not see cuda.h (unsupported.c) included.
 */
#ifndef FAKECUDA_LOG_H
#define FAKECUDA_LOG_H

#include <stdbool.h>

bool fc_debug_on(void);
void fc_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
