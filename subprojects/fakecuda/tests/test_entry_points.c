/*
 * test_entry_points.c: every entry point of the toolkit's libcuda.so is
 * exported by fakecuda and links; the ones fakecuda does not emulate answer
 * CUDA_ERROR_NOT_SUPPORTED, and FAKECUDA_LOG=debug names each once.
 *
 * Deliberately without cuda.h: the table declares every name as a plain
 * function, as a loader that links -lcuda or dlsyms a list of names sees it.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <dlfcn.h>
#include <stdlib.h>

#include "entry_points.h"

#define DECLARE(name, base, since, pt) extern int name(void);
FC_ENTRY_POINTS(DECLARE)
#undef DECLARE

static const struct {
    const char *name;
    int (*fn)(void);
} linked[] = {
#define ROW(name, base, since, pt) {#name, name},
    FC_ENTRY_POINTS(ROW)
#undef ROW
};

Test(entry_points, every_name_links_and_is_exported)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(lib, "libcuda.so.1 is not loaded");
    cr_assert_eq(sizeof linked / sizeof linked[0], FC_ENTRY_POINT_COUNT);
    for (size_t i = 0; i < FC_ENTRY_POINT_COUNT; i++)
        cr_assert_eq(dlsym(lib, linked[i].name), (void *)linked[i].fn, "%s", linked[i].name);
    dlclose(lib);
}

/* cuMipmappedArrayCreate and cuSurfObjectCreate are entry points fakecuda leaves unemulated. */
Test(entry_points, unemulated_names_are_not_supported)
{
    cr_assert_eq(cuMipmappedArrayCreate(), 801);
    cr_assert_eq(cuSurfObjectCreate(), 801);
}

static void debug_log(void)
{
    setenv("FAKECUDA_LOG", "debug", 1);
    cr_redirect_stderr();
}

Test(entry_points, debug_log_names_each_unemulated_call_once, .init = debug_log)
{
    cuMipmappedArrayCreate();
    cuMipmappedArrayCreate();
    cuSurfObjectCreate();
    fflush(stderr);
    cr_assert_stderr_eq_str("fakecuda: cuMipmappedArrayCreate is not emulated: CUDA_ERROR_NOT_SUPPORTED\n"
                            "fakecuda: cuSurfObjectCreate is not emulated: CUDA_ERROR_NOT_SUPPORTED\n");
}

Test(entry_points, silent_without_debug_log, .init = cr_redirect_stderr)
{
    unsetenv("FAKECUDA_LOG");
    cr_assert_eq(cuMipmappedArrayCreate(), 801);
    fflush(stderr);
    cr_assert_stderr_eq_str("");
}
