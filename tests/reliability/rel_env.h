/*
 * rel_env.h - how the reliability programs put a process under the shim:
 * fakecuda first on the library path, libcutaint.so preloaded after
 * REL_PRELOAD_FIRST (a sanitizer runtime, which must come first), and
 * cutaint's log off.  Call it before exec().  REL_FAKECUDA_DIR and REL_SHIM
 * come from meson (rel_defs).
 */
#ifndef REL_ENV_H
#define REL_ENV_H

#include <stdio.h>
#include <stdlib.h>

static void rel_preload_env(void)
{
    const char *old = getenv("LD_LIBRARY_PATH");
    char llp[4096];
    snprintf(llp, sizeof llp, "%s%s%s", REL_FAKECUDA_DIR, old ? ":" : "", old ? old : "");
    setenv("LD_LIBRARY_PATH", llp, 1);
    const char *first = getenv("REL_PRELOAD_FIRST");
    char pre[4096];
    snprintf(pre, sizeof pre, "%s%s%s", first ? first : "", first ? " " : "", REL_SHIM);
    setenv("LD_PRELOAD", pre, 1);
    setenv("CUTAINT_LOG", "off", 1);
}

#endif
