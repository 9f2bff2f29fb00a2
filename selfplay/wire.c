#include "selfplay/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int wire_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int wire_lines_fill(wire_lines_t *l, int fd)
{
    for (;;) {
        if (l->len == sizeof l->buf) {
            if (memchr(l->buf, '\n', l->len))
                return 0; /* let the caller take the lines first */
            l->len = 0;   /* an overlong line: drop it */
        }
        ssize_t n = read(fd, l->buf + l->len, sizeof l->buf - l->len);
        if (n > 0) {
            l->len += (size_t)n;
            continue;
        }
        if (n == 0) {
            l->eof = 1;
            return -1;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        l->eof = 1;
        return -1;
    }
}

int wire_lines_next(wire_lines_t *l, char *out, size_t outlen)
{
    char *nl = memchr(l->buf, '\n', l->len);
    if (!nl)
        return 0;
    size_t n = (size_t)(nl - l->buf);
    size_t c = n < outlen - 1 ? n : outlen - 1;
    memcpy(out, l->buf, c);
    out[c] = '\0';
    if (c > 0 && out[c - 1] == '\r')
        out[c - 1] = '\0';
    memmove(l->buf, nl + 1, l->len - n - 1);
    l->len -= n + 1;
    return 1;
}
