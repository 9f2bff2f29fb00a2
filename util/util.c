#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

double util_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void util_prefault(void *p, size_t bytes)
{
    volatile char *c = p;
    for (size_t i = 0; i < bytes; i += 4096)
        c[i] = 0;
}

void util_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int util_fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

int util_mkdir(const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
        util_errf(err, errlen, "%s exists and is not a directory", path);
        return -1;
    }
    util_errf(err, errlen, "cannot create %s: %s", path, strerror(errno));
    return -1;
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int util_write_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp) {
        util_errf(err, errlen, "%s: path too long", path);
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        util_errf(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
        return -1;
    }
    if (write_all(fd, data, len) != 0) {
        util_errf(err, errlen, "%s: write failed: %s", tmp, strerror(errno));
        goto out_close;
    }
    if (fsync(fd) != 0) {
        util_errf(err, errlen, "%s: fsync failed: %s", tmp, strerror(errno));
        goto out_close;
    }
    if (close(fd) != 0) {
        util_errf(err, errlen, "%s: close failed: %s", tmp, strerror(errno));
        goto out_unlink;
    }
    if (rename(tmp, path) != 0) {
        util_errf(err, errlen, "%s: rename failed: %s", path, strerror(errno));
        goto out_unlink;
    }
    /* The rename is durable only once the directory is synced. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    util_fsync_dir(dirname(dir));
    return 0;

out_close:
    close(fd);
out_unlink:
    unlink(tmp);
    return -1;
}

const char *util_json_str(const char *s, char *buf, size_t len)
{
    size_t n = 0;
    buf[n++] = '"';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        size_t k;
        if (c == '"' || c == '\\')
            k = (size_t)snprintf(esc, sizeof esc, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            k = (size_t)snprintf(esc, sizeof esc, "\\u%04x", c);
        else {
            esc[0] = (char)c;
            k = 1;
        }
        if (n + k + 2 > len)
            break;
        memcpy(buf + n, esc, k);
        n += k;
    }
    buf[n++] = '"';
    buf[n] = '\0';
    return buf;
}

int util_spawn(pid_t *pid, const char *exe, char *const argv[], const util_spawn_fd_t *fds,
               int nfds, bool new_pgroup)
{
    extern char **environ;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc != 0)
        return rc;
    rc = posix_spawnattr_init(&attr);
    if (rc != 0)
        goto out_free_actions;
    for (int i = 0; i < nfds && rc == 0; i++)
        rc = fds[i].path ? posix_spawn_file_actions_addopen(&fa, fds[i].target, fds[i].path,
                                                            fds[i].flags, 0644)
                         : posix_spawn_file_actions_adddup2(&fa, fds[i].fd, fds[i].target);
    sigset_t none, deflt;
    sigemptyset(&none);
    sigemptyset(&deflt);
    sigaddset(&deflt, SIGPIPE);
    sigaddset(&deflt, SIGINT);
    sigaddset(&deflt, SIGTERM);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(&attr, &none);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(&attr, &deflt);
    if (rc == 0 && new_pgroup) {
        rc = posix_spawnattr_setpgroup(&attr, 0);
        flags |= POSIX_SPAWN_SETPGROUP;
    }
    if (rc == 0)
        rc = posix_spawnattr_setflags(&attr, flags);
    if (rc == 0)
        rc = posix_spawn(pid, exe, &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
out_free_actions:
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

uint64_t util_random_u64(void)
{
    uint64_t v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &v, sizeof v) != (ssize_t)sizeof v)
            v = 0;
        close(fd);
    }
    if (v == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        v = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^
            ((uint64_t)getpid() << 32);
    }
    return v | 1;
}

void util_catch_stop_signals(void (*handler)(int), struct sigaction old[2])
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, old ? &old[0] : NULL);
    sigaction(SIGTERM, &sa, old ? &old[1] : NULL);
}

void util_restore_stop_signals(const struct sigaction old[2])
{
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
}

const char *util_name_of(const char *const names[], int n, int k)
{
    return k >= 0 && k < n && names[k] ? names[k] : "?";
}

int util_name_find(const char *const names[], int n, const char *s)
{
    for (int k = 0; s && k < n; k++)
        if (names[k] && strcmp(s, names[k]) == 0)
            return k;
    return -1;
}

void util_json_write(FILE *f, const char *s)
{
    char buf[8192];
    fputs(util_json_str(s, buf, sizeof buf), f);
}
