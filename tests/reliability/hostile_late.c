/* hostile_late.c - loaded with dlopen after libcuda.so.1, with no dependency
 * on it, so its destructor runs after the driver's: it stands for a C++
 * static destructor that frees GPU memory while the process tears down,
 * when the driver answers CUDA_ERROR_DEINITIALIZED. */
#include <stdio.h>
#include <unistd.h>

static void (*late)(void);

void hostile_late_arm(void (*fn)(void))
{
    late = fn;
}

__attribute__((destructor)) static void hostile_late_fire(void)
{
    if (late)
        late();
}
