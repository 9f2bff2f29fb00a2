/* Test helpers shared by the suites that drive training runs through the
 * real binary (check_train, check_broker): read a file a run writes, and
 * numbers from status.json. Header-only, for tests. */
#ifndef GZ_TESTS_RUN_FILES_H
#define GZ_TESTS_RUN_FILES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file as a string (malloc'd), or NULL when it cannot be opened. */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    for (;;) {
        if (n + 1024 > cap)
            s = realloc(s, cap *= 2);
        size_t r = fread(s + n, 1, cap - n - 1, f);
        if (r == 0)
            break;
        n += r;
    }
    s[n] = '\0';
    fclose(f);
    return s;
}

/* The number after "key": in a JSON text (first occurrence); -1 if absent. */
static inline long long json_num(const char *s, const char *key)
{
    if (!s)
        return -1;
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(s, pat);
    return p ? atoll(p + strlen(pat)) : -1;
}

/* json_num of RUN/status.json; -1 when absent. */
static inline long long status_num(const char *run, const char *key)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/status.json", run);
    char *s = slurp(p);
    long long v = json_num(s, key);
    free(s);
    return v;
}

#endif
