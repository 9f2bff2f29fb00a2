/* The strict JSON reader (see sjson.h). */
#include "util/sjson.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SJ_MAX_DEPTH 32

typedef struct sj_scan {
    const char *s, *p, *end;
    char *err;
    size_t errlen;
} sj_scan_t;

static bool sj_fail(sj_scan_t *sc, const char *what)
{
    snprintf(sc->err, sc->errlen, "bad JSON at byte %zu: %s", (size_t)(sc->p - sc->s), what);
    return false;
}

static void sj_ws(sj_scan_t *sc)
{
    while (sc->p < sc->end && (*sc->p == ' ' || *sc->p == '\t' || *sc->p == '\n' ||
                               *sc->p == '\r'))
        sc->p++;
}

static bool sj_string(sj_scan_t *sc)
{
    sc->p++;   /* opening quote */
    while (sc->p < sc->end) {
        unsigned char c = (unsigned char)*sc->p;
        if (c == '"') {
            sc->p++;
            return true;
        }
        if (c < 0x20)
            return sj_fail(sc, "control character in a string");
        if (c == '\\') {
            if (++sc->p >= sc->end)
                break;
            char e = *sc->p;
            if (e == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (sc->p + i >= sc->end || !isxdigit((unsigned char)sc->p[i]))
                        return sj_fail(sc, "bad \\u escape");
                sc->p += 4;
            } else if (!strchr("\"\\/bfnrt", e)) {
                return sj_fail(sc, "bad escape");
            }
        }
        sc->p++;
    }
    return sj_fail(sc, "unterminated string");
}

static bool sj_number(sj_scan_t *sc)
{
    const char *q = sc->p;
    if (q < sc->end && *q == '-')
        q++;
    if (q >= sc->end || !isdigit((unsigned char)*q))
        return sj_fail(sc, "bad number");
    if (*q == '0')
        q++;
    else
        while (q < sc->end && isdigit((unsigned char)*q))
            q++;
    if (q < sc->end && *q == '.') {
        q++;
        if (q >= sc->end || !isdigit((unsigned char)*q))
            return sj_fail(sc, "bad number");
        while (q < sc->end && isdigit((unsigned char)*q))
            q++;
    }
    if (q < sc->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < sc->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= sc->end || !isdigit((unsigned char)*q))
            return sj_fail(sc, "bad number");
        while (q < sc->end && isdigit((unsigned char)*q))
            q++;
    }
    sc->p = q;
    return true;
}

static bool sj_word(sj_scan_t *sc, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(sc->end - sc->p) < n || memcmp(sc->p, w, n) != 0)
        return sj_fail(sc, "unexpected character");
    sc->p += n;
    return true;
}

static bool sj_value(sj_scan_t *sc, int depth)
{
    sj_ws(sc);
    if (sc->p >= sc->end)
        return sj_fail(sc, "value expected");
    char c = *sc->p;
    if (c == '"')
        return sj_string(sc);
    if (c == '-' || isdigit((unsigned char)c))
        return sj_number(sc);
    if (c == 't')
        return sj_word(sc, "true");
    if (c == 'f')
        return sj_word(sc, "false");
    if (c == 'n')
        return sj_word(sc, "null");
    if (c != '{' && c != '[')
        return sj_fail(sc, "unexpected character");
    if (depth >= SJ_MAX_DEPTH)
        return sj_fail(sc, "nested too deep");
    char close = c == '{' ? '}' : ']';
    sc->p++;
    sj_ws(sc);
    if (sc->p < sc->end && *sc->p == close) {
        sc->p++;
        return true;
    }
    for (;;) {
        if (close == '}') {
            sj_ws(sc);
            if (sc->p >= sc->end || *sc->p != '"')
                return sj_fail(sc, "member name expected");
            if (!sj_string(sc))
                return false;
            sj_ws(sc);
            if (sc->p >= sc->end || *sc->p != ':')
                return sj_fail(sc, "':' expected");
            sc->p++;
        }
        if (!sj_value(sc, depth + 1))
            return false;
        sj_ws(sc);
        if (sc->p < sc->end && *sc->p == ',') {
            sc->p++;
            continue;
        }
        if (sc->p < sc->end && *sc->p == close) {
            sc->p++;
            return true;
        }
        return sj_fail(sc, close == '}' ? "',' or '}' expected" : "',' or ']' expected");
    }
}

int sj_check(const char *s, size_t n, char *err, size_t errlen)
{
    sj_scan_t sc = {s, s, s + n, err, errlen};
    if (memchr(s, '\0', n))
        return snprintf(err, errlen, "bad JSON: a NUL byte"), -1;
    if (!sj_value(&sc, 0))
        return -1;
    sj_ws(&sc);
    if (sc.p != sc.end)
        return sj_fail(&sc, "trailing characters"), -1;
    return 0;
}

static sj_kind_t sj_kind_at(char c)
{
    switch (c) {
    case '"': return SJ_STR;
    case '{': return SJ_OBJ;
    case '[': return SJ_ARR;
    case 't': case 'f': return SJ_BOOL;
    case 'n': return SJ_NULL;
    default: return SJ_NUM;
    }
}

bool sj_next(const sj_val_t *c, const char **pos, sj_val_t *key, sj_val_t *val)
{
    if (c->kind != SJ_ARR && c->kind != SJ_OBJ)
        return false;
    char err[8];
    const char *end = c->p + c->n - 1;   /* the closing bracket */
    sj_scan_t sc = {c->p, *pos ? *pos : c->p + 1, end, err, sizeof err};
    sj_ws(&sc);
    if (sc.p < end && *sc.p == ',') {
        sc.p++;
        sj_ws(&sc);
    }
    if (sc.p >= end)
        return false;
    if (c->kind == SJ_OBJ) {
        const char *k = sc.p;
        if (!sj_string(&sc))
            return false;
        if (key)
            *key = (sj_val_t){SJ_STR, k, (size_t)(sc.p - k)};
        sj_ws(&sc);
        sc.p++;   /* ':' (checked by sj_check) */
        sj_ws(&sc);
    }
    const char *v = sc.p;
    if (!sj_value(&sc, 1))
        return false;
    *val = (sj_val_t){sj_kind_at(*v), v, (size_t)(sc.p - v)};
    *pos = sc.p;
    return true;
}

bool sj_get(const char *s, size_t n, const char *key, sj_val_t *out)
{
    char err[8];
    sj_scan_t sc = {s, s, s + n, err, sizeof err};
    sj_ws(&sc);
    const char *start = sc.p;
    if (sc.p >= sc.end || *sc.p != '{' || !sj_value(&sc, 0))
        return false;
    sj_val_t obj = {SJ_OBJ, start, (size_t)(sc.p - start)}, k, v;
    size_t klen = strlen(key);
    const char *pos = NULL;
    while (sj_next(&obj, &pos, &k, &v))
        if (k.n - 2 == klen && memcmp(k.p + 1, key, klen) == 0) {
            *out = v;
            return true;
        }
    return false;
}

/* v as a double: false when it is not a number or not finite. */
static bool sj_double(const sj_val_t *v, double *out)
{
    if (v->kind != SJ_NUM || v->n > 40)
        return false;
    char buf[48];
    memcpy(buf, v->p, v->n);
    buf[v->n] = '\0';
    char *end;
    double d = strtod(buf, &end);
    if (*end || !isfinite(d))
        return false;
    *out = d;
    return true;
}

bool sj_int(const sj_val_t *v, long lo, long hi, long *out)
{
    double d;
    if (!sj_double(v, &d) || d != floor(d) || d < (double)lo || d > (double)hi)
        return false;
    *out = (long)d;
    return true;
}

bool sj_str(const sj_val_t *v, char *buf, size_t len)
{
    if (v->kind != SJ_STR || v->n < 2)
        return false;
    size_t k = 0;
    for (size_t i = 1; i + 1 < v->n; i++) {
        char c = v->p[i];
        if (c == '\\') {
            c = v->p[++i];
            if (c != '"' && c != '\\' && c != '/')
                return false;
        } else if ((unsigned char)c < 0x20 || (unsigned char)c > 0x7e) {
            return false;
        }
        if (k + 1 >= len)
            return false;
        buf[k++] = c;
    }
    buf[k] = '\0';
    return true;
}
