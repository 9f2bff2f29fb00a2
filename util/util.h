/* Small helpers every layer uses, one copy each: a seeded random number
 * generator, a monotonic clock, error message formatting, an atomic file
 * write and JSON string escaping. No allocation except where stated. */
#ifndef GZ_UTIL_UTIL_H
#define GZ_UTIL_UTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/rng.h"

/* The program's version: --version, pbrain's ABOUT, analyze's query_version. */
#define GZ_VERSION "0.1.0"

/* Milliseconds on the monotonic clock (arbitrary origin, never steps). */
double util_now_ms(void);

/* Writes one byte of each page of p[0..bytes), so that a hot path's first
 * store there takes no page fault. A large calloc's pages are the shared
 * zero page until written: a read maps it, and the first store then copies
 * it and flushes the other cores' TLBs (an IPI to each) in the middle of a
 * search. For tables read before written, such as the NN cache. */
void util_prefault(void *p, size_t bytes);

/* printf into err[errlen] when err is not NULL (the project's one-line
 * error convention). */
void util_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Replace path with data[len] atomically and durably: write PATH.tmp.PID,
 * fsync it, rename it over path, fsync the directory. A reader sees the
 * old file or the new one, never a mix, even after a crash. 0, or -1 with
 * err naming the path and the failing call (the temporary is removed). */
int util_write_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* fsync the directory dir (after a create or rename inside it); 0 or -1
 * (errno set). */
int util_fsync_dir(const char *dir);

/* Make the directory path (mode 0755; its parent must exist) unless it is
 * one already: 0, or -1 with err saying why ("cannot create PATH: ...",
 * "PATH exists and is not a directory"). */
int util_mkdir(const char *path, char *err, size_t errlen);

/* s as a JSON string literal, quotes included, into buf[len]: '"' and '\\'
 * escaped, control bytes and DEL as \u00XX. When buf is too small the text
 * is cut at a character boundary and still closed with a quote. Returns
 * buf. len >= 3. */
const char *util_json_str(const char *s, char *buf, size_t len);
/* s as a JSON string literal written to f (cut at 8 KiB like util_json_str). */
void util_json_write(FILE *f, const char *s);

/* A random nonzero 64-bit value from the kernel (/dev/urandom), or from
 * the clock and pid when that cannot be read: for ids that other runs,
 * workers or clients must not share, not for secrets. */
uint64_t util_random_u64(void);

/* Names of an enum's values as a table: names[k] for 0 <= k < n, else "?";
 * and the value named s (-1 when none; s may be NULL). */
const char *util_name_of(const char *const names[], int n, int k);
int util_name_find(const char *const names[], int n, const char *s);

/* Send SIGINT and SIGTERM to handler (calls interrupted, not restarted),
 * keeping the actions they had in old[0..1] when old is not NULL, for
 * util_restore_stop_signals. */
void util_catch_stop_signals(void (*handler)(int), struct sigaction old[2]);
void util_restore_stop_signals(const struct sigaction old[2]);

/* One descriptor of a child started by util_spawn: its fd `target` becomes
 * a duplicate of `fd` (the child's fd of that number, as the actions so
 * far left it) when path is NULL, else `path` opened with flags (mode 0644). */
typedef struct util_spawn_fd {
    int target;
    int fd;
    const char *path;
    int flags;
} util_spawn_fd_t;

/* Start exe with argv by posix_spawn (never fork: the parent may own a
 * CUDA context), its descriptors set up by fds[0..nfds) in order, other
 * descriptors as they are (open ours with O_CLOEXEC), the signal mask
 * cleared and SIGPIPE, SIGINT and SIGTERM back to their default action
 * (the parent may ignore or handle them), in a process group of its own
 * when new_pgroup. 0 with *pid set, or an errno value. */
int util_spawn(pid_t *pid, const char *exe, char *const argv[], const util_spawn_fd_t *fds,
               int nfds, bool new_pgroup);

#endif
