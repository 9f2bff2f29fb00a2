#include "selfplay/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void wire_buf_init(wire_buf_t *b) { memset(b, 0, sizeof *b); }

void wire_buf_free(wire_buf_t *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void wire_buf_clear(wire_buf_t *b) { b->start = b->len = 0; }

ssize_t wire_buf_fill(wire_buf_t *b, int fd)
{
    if (b->start > 0 && (b->start == b->len || b->start > b->cap / 2)) {
        memmove(b->data, b->data + b->start, b->len - b->start);
        b->len -= b->start;
        b->start = 0;
    }
    if (b->cap - b->len < 65536) {
        size_t ncap = b->cap ? b->cap * 2 : 262144;
        uint8_t *p = realloc(b->data, ncap);
        if (!p) {
            errno = ENOMEM;
            return -2;
        }
        b->data = p;
        b->cap = ncap;
    }
    for (;;) {
        ssize_t n = read(fd, b->data + b->len, b->cap - b->len);
        if (n > 0) {
            b->len += (size_t)n;
            return n;
        }
        if (n == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return -1;
        return -2;
    }
}

wire_status_t wire_buf_next(wire_buf_t *b, game_record_t *rec, const uint8_t **frame,
                            size_t *framelen, char *err, size_t errlen)
{
    size_t avail = b->len - b->start;
    if (avail == 0)
        return WIRE_NEED_MORE;
    size_t consumed = 0;
    const uint8_t *p = b->data + b->start;
    frame_status_t st = record_decode(p, avail, &consumed, rec, err, errlen);
    if (st == FRAME_NEED_MORE)
        return WIRE_NEED_MORE;
    if (consumed == 0 || consumed > avail)
        consumed = st == FRAME_BAD ? 1 : avail; /* never loop in place */
    b->start += consumed;
    if (st == FRAME_BAD)
        return WIRE_BAD;
    *frame = p;
    *framelen = consumed;
    return WIRE_FRAME;
}

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
