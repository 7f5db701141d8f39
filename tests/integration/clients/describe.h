/*
 * describe.h: the one line a client prints for what a read brought back,
 * shared by the scenario and lifecycle clients so the tests parse one
 * format: "read LABEL: ERROR bytes=0xNN" when every byte is the same (the
 * poison, or stale fill), else "read LABEL: ERROR first=F last=L" (floats).
 */
#ifndef CLIENT_DESCRIBE_H
#define CLIENT_DESCRIBE_H

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

#endif
