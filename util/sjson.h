/* A small, strict JSON reader (RFC 8259) for flat request objects: serve's
 * request bodies and status.json, analyze's queries. Validation of a whole
 * text, lookup and iteration of members, and checked conversions. Nothing
 * is allocated; values are spans of the caller's text, valid as long as it. */
#ifndef GZ_UTIL_SJSON_H
#define GZ_UTIL_SJSON_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { SJ_NULL, SJ_BOOL, SJ_NUM, SJ_STR, SJ_ARR, SJ_OBJ } sj_kind_t;

/* A value inside a JSON text: kind and the bytes it spans. */
typedef struct sj_val {
    sj_kind_t kind;
    const char *p;
    size_t n;
} sj_val_t;

/* Whether s[0..n) is exactly one JSON value (whitespace around it allowed),
 * nesting at most 32 deep, without NUL bytes. -1 with err naming the byte
 * offset and what was wrong, else 0. */
int sj_check(const char *s, size_t n, char *err, size_t errlen);
/* The member `key` of the object s[0..n) (which passed sj_check); with a
 * key given twice, the first. false when s is not an object or has no such
 * key. */
bool sj_get(const char *s, size_t n, const char *key, sj_val_t *out);
/* The next element of the array or member of the object c (a value of a
 * text that passed sj_check): *pos NULL starts at the first; *key (key
 * may be NULL) gets a member's name as a string value, quotes included
 * (left alone for arrays). false after the last one. */
bool sj_next(const sj_val_t *c, const char **pos, sj_val_t *key, sj_val_t *val);
/* An integral number in [lo, hi]; false otherwise (also for 1.5, 1e99, "3"). */
bool sj_int(const sj_val_t *v, long lo, long hi, long *out);
/* A string without escapes other than \" \\ \/, printable ASCII, that fits
 * in buf (len includes the NUL); false otherwise. */
bool sj_str(const sj_val_t *v, char *buf, size_t len);

#endif
