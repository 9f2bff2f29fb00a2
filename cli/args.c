#include "cli/args.h"
#include "util/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void args_print_help(const cmd_help_t *h, const arg_spec_t *specs, int nspecs)
{
    printf("usage: %s\n\n%s\n", h->usage, h->summary);
    if (nspecs > 0)
        printf("\noptions:\n");
    for (int i = 0; i < nspecs; i++)
        printf("  --%-14s %s\n", specs[i].name, specs[i].help ? specs[i].help : "");
    printf("  --%-14s %s\n", "help", "show this help");
}

int args_count(const arg_spec_t *specs, int max)
{
    int n = 0;
    while (n < max && specs[n].name)
        n++;
    return n;
}

int args_fail(const cmd_help_t *h, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "gomoku %s: ", h->cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: %s (see 'gomoku help %s')\n", h->usage, h->cmd);
    return ARGS_ERROR;
}

int args_precision(const cmd_help_t *h, const char *s, nn_precision_t *out)
{
    char err[128];
    if (nn_precision_parse(s, out, err, sizeof err) != 0)
        return args_fail(h, "--precision: %s", err);
    return ARGS_OK;
}

static bool in_range(const arg_spec_t *s, double v)
{
    if (s->min == 0 && s->max == 0)
        return true;
    return v >= s->min && v <= s->max;
}

static int set_value(const cmd_help_t *h, const arg_spec_t *s, const char *val)
{
    char *end;
    errno = 0;
    switch (s->kind) {
    case ARG_FLAG:
        *(bool *)s->dst = true;
        return ARGS_OK;
    case ARG_STR:
        *(const char **)s->dst = val;
        return ARGS_OK;
    case ARG_RULE:
        if (!rule_parse(val, (rule_t *)s->dst))
            return args_fail(h, "unknown rule '%s' (freestyle, standard, renju)", val);
        return ARGS_OK;
    case ARG_INT: {
        long v = strtol(val, &end, 10);
        if (errno || end == val || *end || v < -2147483647L || v > 2147483647L)
            return args_fail(h, "--%s wants an integer, got '%s'", s->name, val);
        if (!in_range(s, (double)v))
            return args_fail(h, "--%s must be in %g..%g, got %ld", s->name, s->min, s->max, v);
        *(int *)s->dst = (int)v;
        return ARGS_OK;
    }
    case ARG_U64: {
        if (val[0] == '-')
            return args_fail(h, "--%s wants a non-negative integer, got '%s'", s->name, val);
        unsigned long long v = strtoull(val, &end, 10);
        if (errno || end == val || *end)
            return args_fail(h, "--%s wants a non-negative integer, got '%s'", s->name, val);
        if (!in_range(s, (double)v))
            return args_fail(h, "--%s must be in %g..%g, got %llu", s->name, s->min, s->max, v);
        *(uint64_t *)s->dst = v;
        return ARGS_OK;
    }
    case ARG_DOUBLE: {
        double v = strtod(val, &end);
        if (errno || end == val || *end || v != v)
            return args_fail(h, "--%s wants a number, got '%s'", s->name, val);
        if (!in_range(s, v))
            return args_fail(h, "--%s must be in %g..%g, got %g", s->name, s->min, s->max, v);
        *(double *)s->dst = v;
        return ARGS_OK;
    }
    }
    return args_fail(h, "internal: bad option kind for --%s", s->name);
}

int args_parse(const cmd_help_t *h, const arg_spec_t *specs, int nspecs, int argc,
               char **argv, char **pos, int maxpos, int *npos)
{
    int np = 0;
    bool only_pos = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_pos && strcmp(a, "--") == 0) {
            only_pos = true;
            continue;
        }
        if (!only_pos && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
            args_print_help(h, specs, nspecs);
            return ARGS_HELP;
        }
        if (only_pos || strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            if (a[0] == '-' && a[1] != '\0' && !only_pos)
                return args_fail(h, "unknown option '%s'", a);
            if (np >= maxpos)
                return args_fail(h, "unexpected argument '%s'", a);
            pos[np++] = argv[i];
            continue;
        }
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const arg_spec_t *s = NULL;
        for (int k = 0; k < nspecs; k++)
            if (strlen(specs[k].name) == nlen && strncmp(specs[k].name, name, nlen) == 0)
                s = &specs[k];
        if (!s)
            return args_fail(h, "unknown option '--%.*s'", (int)nlen, name);
        const char *val = NULL;
        if (s->kind == ARG_FLAG) {
            if (eq)
                return args_fail(h, "--%s takes no value", s->name);
        } else if (eq) {
            val = eq + 1;
        } else {
            if (i + 1 >= argc)
                return args_fail(h, "--%s needs a value", s->name);
            val = argv[++i];
        }
        int rc = set_value(h, s, val);
        if (rc != ARGS_OK)
            return rc;
    }
    if (npos)
        *npos = np;
    return ARGS_OK;
}
