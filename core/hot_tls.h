/*
 * hot_tls.h - the storage class of the thread-locals read on every
 * intercepted call (core's lookup cache, the shim's launch state).
 *
 * libcutaint.so is loaded at start (LD_PRELOAD), so its TLS sits in the
 * static block whatever the model, and initial-exec saves the
 * __tls_get_addr call the default model makes on each access.  The price:
 * dlopen() of the library is refused ("cannot allocate memory in static TLS
 * block") - an interposer loaded late could not interpose anyway.
 */
#ifndef CT_HOT_TLS_H
#define CT_HOT_TLS_H

#define CT_HOT_TLS _Thread_local __attribute__((tls_model("initial-exec")))

#endif
