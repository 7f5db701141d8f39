/*
 * loadonly.c - a program that loads libcuda.so.1 and never calls it, as a
 * library probing for a GPU does.  Output: "loaded" or "not loaded"; exit 0.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    puts(dlopen("libcuda.so.1", RTLD_NOW) ? "loaded" : "not loaded");
    return 0;
}
