#include "selfplay/rundir.h"
#include "engine/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void run_config_default(run_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->version = RUN_CONFIG_VERSION;
    c->rule = RULE_FREESTYLE;
    /* the board and net of the rest of the program (15x15, 6x64), the
     * search budget of `gomoku selfplay` */
    c->size = BOARD_DEFAULT;
    c->blocks = 6;
    c->channels = 64;
    c->workers = 1;
    c->parallel = 16;
    c->visits = 200;
    c->cheap_visits = 50;
    c->full_frac = 0.25;
    c->resign = 0.9;
    c->batch = 256;
    c->lr = 0.02;
    c->checkpoint_every = 100;
    c->ratio = 4.0;
    c->window = 250000;
    c->seed = 1;
    snprintf(c->device, sizeof c->device, "auto");
}

int run_mkdir(const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
        snprintf(err, errlen, "%s exists and is not a directory", path);
        return -1;
    }
    snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
    return -1;
}

int run_lock(const char *dir, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char buf[32] = {0};
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        long pid = n > 0 ? strtol(buf, NULL, 10) : 0;
        close(fd);
        if (e == EWOULDBLOCK && pid > 0)
            snprintf(err, errlen, "%s is in use by pid %ld", dir, pid);
        else if (e == EWOULDBLOCK)
            snprintf(err, errlen, "%s is in use by another process", dir);
        else
            snprintf(err, errlen, "cannot lock %s: %s", path, strerror(e));
        return -1;
    }
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int run_config_save(const run_config_t *c, const char *path, char *err, size_t errlen)
{
    char buf[2048];
    int n = snprintf(buf, sizeof buf,
                     "# gomoku train run settings, fixed when the run was created\n"
                     "version=%d\nrule=%s\nsize=%d\nblocks=%d\nchannels=%d\nworkers=%d\n"
                     "parallel=%d\nvisits=%d\ncheap_visits=%d\nfull_frac=%.17g\nresign=%.17g\nbatch=%d\nlr=%.17g\ncheckpoint_every=%d\n"
                     "ratio=%.17g\nwindow=%d\nseed=%llu\ndevice=%s\n",
                     c->version, rule_name(c->rule), c->size, c->blocks, c->channels, c->workers,
                     c->parallel, c->visits, c->cheap_visits, c->full_frac, c->resign, c->batch, c->lr, c->checkpoint_every, c->ratio,
                     c->window, (unsigned long long)c->seed, c->device);
    return util_write_atomic(path, buf, (size_t)n, err, errlen);
}

static int parse_int(const char *v, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return -1;
    *out = (int)x;
    return 0;
}

static int parse_double(const char *v, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= lo && x <= hi))
        return -1;
    *out = x;
    return 0;
}

int run_config_load(run_config_t *c, const char *path, char *err, size_t errlen)
{
    run_config_default(c);
    c->version = 0;
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    char line[512];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0 || line[0] == '#')
            continue;
        char *eq = strchr(line, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected key=value", path, lineno);
            rc = -1;
            break;
        }
        *eq = '\0';
        const char *k = line, *v = eq + 1;
        int bad = 0;
        if (strcmp(k, "version") == 0) {
            bad = parse_int(v, 1, 1000000, &c->version);
            if (!bad && c->version > RUN_CONFIG_VERSION) {
                snprintf(err, errlen, "%s: config version %d is newer than this program's %d",
                         path, c->version, RUN_CONFIG_VERSION);
                rc = -1;
                break;
            }
        } else if (strcmp(k, "rule") == 0) {
            bad = !rule_parse(v, &c->rule);
        } else if (strcmp(k, "size") == 0) {
            bad = parse_int(v, BOARD_MIN, BOARD_MAX, &c->size);
        } else if (strcmp(k, "blocks") == 0) {
            bad = parse_int(v, 0, 64, &c->blocks);
        } else if (strcmp(k, "channels") == 0) {
            bad = parse_int(v, 1, 1024, &c->channels);
        } else if (strcmp(k, "workers") == 0) {
            bad = parse_int(v, 0, 256, &c->workers);
        } else if (strcmp(k, "parallel") == 0) {
            bad = parse_int(v, 1, 4096, &c->parallel);
        } else if (strcmp(k, "visits") == 0) {
            bad = parse_int(v, 1, 1000000, &c->visits);
        } else if (strcmp(k, "cheap_visits") == 0) {
            bad = parse_int(v, 1, 1000000, &c->cheap_visits);
        } else if (strcmp(k, "full_frac") == 0) {
            bad = parse_double(v, 0.0001, 1, &c->full_frac);
        } else if (strcmp(k, "resign") == 0) {
            bad = parse_double(v, 0, 1, &c->resign);
        } else if (strcmp(k, "batch") == 0) {
            bad = parse_int(v, 1, 65536, &c->batch);
        } else if (strcmp(k, "lr") == 0) {
            bad = parse_double(v, 0, 10, &c->lr);
        } else if (strcmp(k, "checkpoint_every") == 0) {
            bad = parse_int(v, 1, 100000000, &c->checkpoint_every);
        } else if (strcmp(k, "ratio") == 0) {
            bad = parse_double(v, 0.01, 1e6, &c->ratio);
        } else if (strcmp(k, "window") == 0) {
            bad = parse_int(v, 1, 2000000000, &c->window);
        } else if (strcmp(k, "seed") == 0) {
            char *end;
            errno = 0;
            c->seed = strtoull(v, &end, 10);
            bad = errno || end == v || *end;
        } else if (strcmp(k, "device") == 0) {
            bad = strlen(v) == 0 || strlen(v) >= sizeof c->device;
            if (!bad)
                snprintf(c->device, sizeof c->device, "%s", v);
        } else {
            snprintf(err, errlen, "%s:%d: unknown key '%s'", path, lineno, k);
            rc = -1;
            break;
        }
        if (bad) {
            snprintf(err, errlen, "%s:%d: bad value for %s: '%s'", path, lineno, k, v);
            rc = -1;
            break;
        }
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        rc = -1;
    }
    if (rc == 0 && c->version == 0) {
        snprintf(err, errlen, "%s: no version line (not a gomoku run config?)", path);
        rc = -1;
    }
    fclose(f);
    return rc;
}
