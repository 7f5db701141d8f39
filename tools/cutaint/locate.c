/*
 * locate.c - the search order of locate.h, with the build and install
 * paths meson baked into ct_paths.h.
 */
#include "locate.h"

#include "ct_paths.h"
#include "textout.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

const ct_place ct_place_shim = {
    "libcutaint.so", "CUTAINT_LIB", CT_SHIM_BUILD, CT_SHIM_INSTALL, NULL,
};
const ct_place ct_place_fakecuda = {
    "the fakecuda driver", "CUTAINT_FAKECUDA_DIR", CT_FAKECUDA_BUILD, CT_FAKECUDA_INSTALL, "libcuda.so.1",
};
const ct_place ct_place_demo = {
    "the demo program", NULL, CT_DEMO_BUILD, CT_DEMO_INSTALL, NULL,
};

static bool present(const ct_place *place, const char *path)
{
    if (!path || !*path)
        return false;
    if (!place->inside)
        return access(path, R_OK) == 0;
    char file[4096];
    int n = snprintf(file, sizeof file, "%s/%s", path, place->inside);
    return n > 0 && (size_t)n < sizeof file && access(file, R_OK) == 0;
}

const char *ct_locate(const ct_place *place)
{
    assert(place->what && place->build && place->install && "a place is looked for in its build, then install path");
    const char *override = place->env ? getenv(place->env) : NULL;
    if (override && *override) {
        if (present(place, override))
            return override;
        fprintf(stderr, "cutaint: %s=", place->env);
        ct_put_text(stderr, override, "");
        fprintf(stderr, " does not hold %s\n", place->inside ? place->inside : place->what);
        return NULL;
    }
    if (present(place, place->build))
        return place->build;
    if (present(place, place->install))
        return place->install;
    fprintf(stderr, "cutaint: cannot find %s (looked in %s and %s%s%s)\n", place->what, place->build, place->install,
            place->env ? "; set " : "", place->env ? place->env : "");
    return NULL;
}
