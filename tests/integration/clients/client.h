/*
 * client.h: what the scenario and lifecycle clients share, so the tests
 * drive and parse them one way: the scenario table and main()'s dispatch
 * (`client SCENARIO [ARG...]`), and the one line a client prints for what a
 * read brought back: "read LABEL: ERROR bytes=0xNN" when every byte is the
 * same (the poison, or stale fill), else "read LABEL: ERROR first=F
 * last=L" (floats).
 */
#ifndef CLIENT_H
#define CLIENT_H

#include <stdio.h>
#include <string.h>

static inline void client_describe(const char *label, const char *error, const unsigned char *host, size_t bytes)
{
    size_t same = 1;
    while (same < bytes && host[same] == host[0])
        same++;
    if (same == bytes || bytes < sizeof(float)) {
        printf("read %s: %s bytes=0x%02x\n", label, error, host[0]);
        return;
    }
    float first, last;
    memcpy(&first, host, sizeof first);
    memcpy(&last, host + (bytes / sizeof(float) - 1) * sizeof(float), sizeof last);
    printf("read %s: %s first=%g last=%g\n", label, error, first, last);
}

typedef struct client_scenario {
    const char *name;
    int (*run)(int argc, char **argv);
} client_scenario;

/* Run the scenario argv[1] names with the arguments after it, once setup
 * ran; usage on stderr and 2 for an unknown or missing name. */
static inline int client_main(int argc, char **argv, const client_scenario *scenarios, size_t n,
                              void (*setup)(void))
{
    for (size_t i = 0; argc > 1 && i < n; i++) {
        if (strcmp(argv[1], scenarios[i].name) == 0) {
            setvbuf(stdout, NULL, _IOLBF, 0);
            setup();
            return scenarios[i].run(argc - 2, argv + 2);
        }
    }
    fprintf(stderr, "usage: %s SCENARIO [ARG]; scenarios:", argv[0]);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " %s", scenarios[i].name);
    fprintf(stderr, "\n");
    return 2;
}

#endif
