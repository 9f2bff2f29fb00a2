#include "selfplay/spool.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/record.h"
#include "util/util.h"
#include "selfplay/rundir.h"

struct spool {
    char dir[3072];
    int lock_fd;
    int max;
    int durable;
    uint64_t lo, hi;   /* files lo..hi-1 may exist; count of those that do */
    int count;
};

static void file_path(const spool_t *s, uint64_t n, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s/%016" PRIu64 ".gzf", s->dir, n);
}

spool_t *spool_open(const char *dir, int max, int durable, char *err, size_t errlen)
{
    if (strlen(dir) >= 3060) {   /* RUN_DIR_MAX plus /spool/worker-K */
        snprintf(err, errlen, "spool directory path too long");
        return NULL;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create spool directory %s: %s", dir, strerror(errno));
        return NULL;
    }
    spool_t *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    s->max = max;
    s->durable = durable;
    s->lock_fd = run_lock(dir, err, errlen);
    if (s->lock_fd < 0)
        goto out_free_spool;
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "cannot list %s: %s", dir, strerror(errno));
        goto out_free_spool;
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *nm = de->d_name;
        if (strstr(nm, ".gzf.tmp.")) {   /* a write killed before its rename */
            unlinkat(dirfd(d), nm, 0);
            continue;
        }
        uint64_t v;
        if (strlen(nm) != 20 || !run_numbered_name(nm, "", ".gzf", &v))
            continue;   /* frames are named by 16 digits */
        s->count++;
        if (v < lo)
            lo = v;
        if (v + 1 > hi)
            hi = v + 1;
    }
    closedir(d);
    s->lo = s->count ? lo : 0;
    s->hi = s->count ? hi : 0;
    return s;
out_free_spool:   /* the free handles a lock not taken */
    spool_free(s);
    return NULL;
}

void spool_free(spool_t *s)
{
    if (!s)
        return;
    run_unlock(s->lock_fd);   /* -1 (not taken): nothing */
    free(s);
}

int spool_count(const spool_t *s) { return s->count; }
int spool_max(const spool_t *s) { return s->max; }

/* frame into path through a temporary and a rename; fsync'd when durable. */
static int write_file(const spool_t *s, const char *path, const uint8_t *frame, size_t len,
                      char *err, size_t errlen)
{
    if (s->durable) {
        if (util_write_atomic(path, frame, len, err, errlen) != 0)
            return -1;
        util_fsync_dir(s->dir);
        return 0;
    }
    char tmp[3300];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wbe");
    if (!f) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    int ok = fwrite(frame, 1, len, f) == len;
    int e = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    if (!ok || rename(tmp, path) != 0) {
        if (ok)
            e = errno;
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(e));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int spool_put(spool_t *s, const uint8_t *frame, size_t len, uint64_t *no, char *err,
              size_t errlen)
{
    if (s->count >= s->max) {
        snprintf(err, errlen, "spool %s is full (%d games)", s->dir, s->max);
        return -1;
    }
    char p[3200];
    file_path(s, s->hi, p, sizeof p);
    if (write_file(s, p, frame, len, err, errlen) != 0)
        return -1;
    if (s->count == 0)
        s->lo = s->hi;
    if (no)
        *no = s->hi;
    s->hi++;
    s->count++;
    return 0;
}

int spool_peek(spool_t *s, uint8_t **buf, size_t *cap, size_t *len, char *err, size_t errlen)
{
    char p[3200];
    while (s->count > 0) {
        file_path(s, s->lo, p, sizeof p);
        FILE *f = fopen(p, "rbe");
        if (!f) {
            if (errno == ENOENT) {
                s->lo++; /* a gap (removed by hand): skip it */
                continue;
            }
            snprintf(err, errlen, "cannot read %s: %s", p, strerror(errno));
            spool_pop(s);
            return -1;
        }
        struct stat st;
        size_t n = 0;
        int ok = fstat(fileno(f), &st) == 0 && st.st_size > 0 &&
                 (uint64_t)st.st_size <= FRAME_HEADER_BYTES + (uint64_t)FRAME_MAX_PAYLOAD;
        if (ok) {
            n = (size_t)st.st_size;
            if (*cap < n) {
                uint8_t *nb = realloc(*buf, n);
                ok = nb != NULL;
                if (nb) {
                    *buf = nb;
                    *cap = n;
                }
            }
            ok = ok && fread(*buf, 1, n, f) == n;
        }
        fclose(f);
        if (!ok) {
            snprintf(err, errlen, "%s: unreadable or not a frame (removed)", p);
            spool_pop(s);
            return -1;
        }
        *len = n;
        return 1;
    }
    return 0;
}

void spool_pop(spool_t *s)
{
    if (s->count == 0)
        return;
    char p[3200];
    file_path(s, s->lo, p, sizeof p);
    unlink(p);
    s->lo++;
    s->count--;
}

void spool_remove(spool_t *s, uint64_t no)
{
    if (s->count == 0 || no < s->lo || no >= s->hi)
        return;
    if (no == s->lo) {
        spool_pop(s);
        return;
    }
    char p[3200];
    file_path(s, no, p, sizeof p);
    if (unlink(p) == 0)
        s->count--;   /* the gap it leaves is skipped by spool_peek */
}
