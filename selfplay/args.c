#include "selfplay/args.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void args_print_help(const cmd_help_t *h, const arg_spec_t *specs, int nspecs)
{
    printf("usage: %s\n\n%s\n", h->usage, h->summary);
    if (nspecs > 0)
        printf("\noptions:\n");
    for (int i = 0; i < nspecs; i++) {
        const setting_t *s = specs[i].row;
        if (s->flags & SETTING_HIDDEN)
            continue;
        char dflt[128] = "";
        bool resume = (s->flags & SETTING_RESUME) && h->by == BY_TRAIN;
        if (specs[i].flags & ARG_REQUIRED)
            snprintf(dflt, sizeof dflt, " (required)");
        else if (s->def && s->def[0] && s->type != SET_FLAG)
            snprintf(dflt, sizeof dflt, " (default %s%s)", s->def,
                     resume ? "; may change on resume" : "");
        else if (resume)
            snprintf(dflt, sizeof dflt, " (may change on resume)");
        printf("  --%-14s %s%s%s%s\n", s->opt, s->arg, s->arg[0] ? "  " : "", s->help, dflt);
    }
    printf("  --%-14s %s\n", "help", "show this help");
}

int args_count(const arg_spec_t *specs, int max)
{
    int n = 0;
    while (n < max && specs[n].row)
        n++;
    return n;
}

int args_append(arg_spec_t *out, const arg_spec_t *specs, int n)
{
    memcpy(out, specs, sizeof *specs * (size_t)n);
    return n;
}

bool args_given(const arg_spec_t *specs, int nspecs, setting_id_t id)
{
    for (int i = 0; i < nspecs; i++)
        if (specs[i].row == &settings_table[id])
            return specs[i].given;
    return false;
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

void args_defaults(arg_spec_t *specs, int nspecs)
{
    for (int i = 0; i < nspecs; i++) {
        const setting_t *s = specs[i].row;
        const char *why;
        if (specs[i].flags & ARG_TEXT)
            continue;
        if (s->type == SET_FLAG)
            *(bool *)specs[i].dst = false;
        else if (s->def && settings_parse(s, s->def, specs[i].dst, &why) != 0)
            assert(!"a default of the settings table does not parse");
    }
}

/* val into s's dst; ARGS_OK, or args_fail's code with the reason. */
static int set_value(const cmd_help_t *h, const arg_spec_t *a, const char *val)
{
    const setting_t *s = a->row;
    const char *why;
    if (a->flags & ARG_TEXT) {
        *(const char **)a->dst = val;
        return ARGS_OK;
    }
    if (settings_parse(s, val, a->dst, &why) == 0)
        return ARGS_OK;
    if (strcmp(why, "out of range") == 0) {
        char range[64];   /* 1..1000000, not 1..1e+06 */
        settings_format_range(s, range, sizeof range);
        return args_fail(h, "--%s must be in %s, got %s", s->opt, range, val);
    }
    switch (s->type) {
    case SET_INT: return args_fail(h, "--%s wants an integer, got '%s'", s->opt, val);
    case SET_DOUBLE: return args_fail(h, "--%s wants a number, got '%s'", s->opt, val);
    case SET_U64: return args_fail(h, "--%s wants a non-negative integer, got '%s'", s->opt, val);
    case SET_RULE: return args_fail(h, "unknown rule '%s' (freestyle, standard, renju)", val);
    case SET_CHOICE: return args_fail(h, "--%s must be %s, got '%s'", s->opt, why, val);
    default: return args_fail(h, "--%s: %s", s->opt, why);
    }
}

static const arg_spec_t *find_option(const arg_spec_t *specs, int nspecs, const char *name,
                                     size_t nlen)
{
    for (int k = 0; k < nspecs; k++)
        if (strlen(specs[k].row->opt) == nlen && strncmp(specs[k].row->opt, name, nlen) == 0)
            return &specs[k];
    return NULL;
}

int args_parse(const cmd_help_t *h, arg_spec_t *specs, int nspecs, int argc, char **argv,
               char **pos, int maxpos, int *npos)
{
    for (int i = 0; i < nspecs; i++) {
        /* the table says which commands take a row; a command takes each once */
        assert(!h->by || (specs[i].row->by & h->by));
        assert(find_option(specs, i, specs[i].row->opt, strlen(specs[i].row->opt)) == NULL);
        specs[i].given = false;
    }
    args_defaults(specs, nspecs);
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
        arg_spec_t *s = (arg_spec_t *)find_option(specs, nspecs, name, nlen);
        if (!s)
            return args_fail(h, "unknown option '--%.*s'", (int)nlen, name);
        const char *val = NULL;
        if (s->row->type == SET_FLAG) {
            if (eq)
                return args_fail(h, "--%s takes no value", s->row->opt);
            val = "";
        } else if (eq) {
            val = eq + 1;
        } else {
            if (i + 1 >= argc)
                return args_fail(h, "--%s needs a value", s->row->opt);
            val = argv[++i];
        }
        int rc = set_value(h, s, val);
        if (rc != ARGS_OK)
            return rc;
        s->given = true;
    }
    for (int i = 0; i < nspecs; i++)
        if ((specs[i].flags & ARG_REQUIRED) && !specs[i].given)
            return args_fail(h, "--%s is required", specs[i].row->opt);
    if (npos)
        *npos = np;
    return ARGS_OK;
}
