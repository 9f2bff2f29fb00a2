#include "engine/frame.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "util/util.h"

#define CHUNK 4096

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/* ---- the envelope ---- */

static const uint8_t frame_magic_bytes[4] = {
    FRAME_MAGIC & 0xff, (FRAME_MAGIC >> 8) & 0xff, (FRAME_MAGIC >> 16) & 0xff, FRAME_MAGIC >> 24,
};

bool frame_at_magic(const uint8_t *buf, size_t len)
{
    return memcmp(buf, frame_magic_bytes, len < 4 ? len : 4) == 0;
}

size_t frame_resync(const uint8_t *buf, size_t len)
{
    for (size_t i = 1; i < len; i++)
        if (buf[i] == frame_magic_bytes[0] && frame_at_magic(buf + i, len - i))
            return i;
    return len;
}

frame_status_t frame_open(const uint8_t *buf, size_t len, size_t *consumed, uint32_t *plen,
                          char *err, size_t errlen)
{
    *consumed = 0;
    if (len == 0)
        return FRAME_NEED_MORE;
    if (!frame_at_magic(buf, len)) {
        util_errf(err, errlen, "bad magic (not a frame start)");
        *consumed = frame_resync(buf, len);
        return FRAME_BAD;
    }
    if (len < FRAME_HEADER_BYTES)
        return FRAME_NEED_MORE;
    uint32_t n = get_u32(buf + 4);
    if (n > FRAME_MAX_PAYLOAD) {
        util_errf(err, errlen, "payload length %u over the limit %u", (unsigned)n,
                  (unsigned)FRAME_MAX_PAYLOAD);
        *consumed = frame_resync(buf, len);
        return FRAME_BAD;
    }
    if (len - FRAME_HEADER_BYTES < n)
        return FRAME_NEED_MORE;
    if ((uint32_t)crc32(0L, buf + FRAME_HEADER_BYTES, n) != get_u32(buf + 8)) {
        util_errf(err, errlen, "crc mismatch");
        *consumed = frame_resync(buf, len);
        return FRAME_BAD;
    }
    /* The CRC vouches for the length, so a bad payload skips the whole frame. */
    *consumed = FRAME_HEADER_BYTES + (size_t)n;
    *plen = n;
    return FRAME_OK;
}

void frame_heartbeat(uint8_t header[FRAME_HEADER_BYTES])
{
    put_u32(header, FRAME_MAGIC);
    put_u32(header + 4, 0);
    put_u32(header + 8, (uint32_t)crc32(0L, Z_NULL, 0));
}

/* ---- writer: raw bytes in CHUNK pieces straight into deflate ---- */

struct frame_out {
    z_stream zs;
    uint8_t *frame;     /* the caller's buffer */
    uint8_t chunk[CHUNK];
    size_t n;           /* bytes waiting in chunk */
    uLong crc;          /* CRC of the raw bytes already given to deflate */
};

frame_out_t *frame_out_begin(uint8_t **buf, size_t *cap, size_t raw_bytes, char *err,
                             size_t errlen)
{
    frame_out_t *o = malloc(sizeof *o);
    if (!o) {
        util_errf(err, errlen, "frame: out of memory");
        return NULL;
    }
    memset(&o->zs, 0, sizeof o->zs);
    o->n = 0;
    o->crc = crc32(0L, Z_NULL, 0);
    if (deflateInit(&o->zs, Z_DEFAULT_COMPRESSION) != Z_OK) {
        util_errf(err, errlen, "frame: zlib deflateInit failed");
        goto out_free_o;
    }
    size_t need = FRAME_HEADER_BYTES + deflateBound(&o->zs, (uLong)raw_bytes);
    if (need > FRAME_HEADER_BYTES + FRAME_MAX_PAYLOAD) {
        util_errf(err, errlen, "frame: record too large (%zu bytes)", raw_bytes);
        goto out_end_deflate;
    }
    if (*cap < need) {
        uint8_t *nb = realloc(*buf, need);
        if (!nb) {
            util_errf(err, errlen, "frame: out of memory");
            goto out_end_deflate;
        }
        *buf = nb;
        *cap = need;
    }
    o->frame = *buf;
    o->zs.next_out = *buf + FRAME_HEADER_BYTES;
    o->zs.avail_out = (uInt)(need - FRAME_HEADER_BYTES);
    return o;

out_end_deflate:
    deflateEnd(&o->zs);
out_free_o:
    free(o);
    return NULL;
}

/* Feed the chunk to deflate; its output buffer holds deflateBound bytes,
 * so deflate always takes all of it. */
static int out_flush(frame_out_t *o)
{
    if (o->n == 0)
        return 0;
    o->crc = crc32(o->crc, o->chunk, (uInt)o->n);
    o->zs.next_in = o->chunk;
    o->zs.avail_in = (uInt)o->n;
    int ret = deflate(&o->zs, Z_NO_FLUSH);
    o->n = 0;
    return (ret == Z_OK && o->zs.avail_in == 0) ? 0 : -1;
}

int frame_out_put(frame_out_t *o, const void *p, size_t len)
{
    const uint8_t *b = p;
    while (len > 0) {
        if (o->n == CHUNK && out_flush(o) != 0)
            return -1;
        size_t k = CHUNK - o->n < len ? CHUNK - o->n : len;
        memcpy(o->chunk + o->n, b, k);
        o->n += k;
        b += k;
        len -= k;
    }
    return 0;
}

uint32_t frame_out_crc(const frame_out_t *o)
{
    return (uint32_t)crc32(o->crc, o->chunk, (uInt)o->n);
}

size_t frame_out_finish(frame_out_t *o, char *err, size_t errlen)
{
    int bad = out_flush(o) != 0;
    if (!bad)
        bad = deflate(&o->zs, Z_FINISH) != Z_STREAM_END;
    if (bad) {
        util_errf(err, errlen, "frame: zlib deflate failed");
        frame_out_abort(o);
        return 0;
    }
    size_t plen = o->zs.total_out;
    uint8_t *f = o->frame;
    frame_out_abort(o);
    put_u32(f, FRAME_MAGIC);
    put_u32(f + 4, (uint32_t)plen);
    put_u32(f + 8, (uint32_t)crc32(0L, f + FRAME_HEADER_BYTES, (uInt)plen));
    return FRAME_HEADER_BYTES + plen;
}

void frame_out_abort(frame_out_t *o)
{
    if (!o)
        return;
    deflateEnd(&o->zs);
    free(o);
}

/* ---- reader: inflate in CHUNK pieces, never more than the fields need ---- */

struct frame_in {
    z_stream zs;
    uint8_t chunk[CHUNK];
    size_t pos, have;   /* chunk[pos..have) not yet returned */
    size_t crc_from;    /* chunk[crc_from..pos) returned but not yet in crc */
    uLong crc;
    int ended;          /* inflate reached the end of the zlib stream */
};

frame_in_t *frame_in_begin(const uint8_t *payload, uint32_t plen, char *err, size_t errlen)
{
    frame_in_t *z = malloc(sizeof *z);
    if (!z) {
        util_errf(err, errlen, "frame: out of memory");
        return NULL;
    }
    memset(&z->zs, 0, sizeof z->zs);
    z->pos = z->have = z->crc_from = 0;
    z->crc = crc32(0L, Z_NULL, 0);
    z->ended = 0;
    z->zs.next_in = (Bytef *)payload;
    z->zs.avail_in = plen;
    if (inflateInit(&z->zs) != Z_OK) {
        util_errf(err, errlen, "zlib: inflateInit failed");
        free(z);
        return NULL;
    }
    return z;
}

void frame_in_free(frame_in_t *z)
{
    if (!z)
        return;
    inflateEnd(&z->zs);
    free(z);
}

static int in_fill(frame_in_t *z, char *err, size_t errlen)
{
    z->crc = crc32(z->crc, z->chunk + z->crc_from, (uInt)(z->pos - z->crc_from));
    size_t keep = z->have - z->pos;
    memmove(z->chunk, z->chunk + z->pos, keep);
    z->pos = 0;
    z->crc_from = 0;
    z->have = keep;
    if (z->ended) {
        util_errf(err, errlen, "record: data ends early");
        return -1;
    }
    z->zs.next_out = z->chunk + keep;
    z->zs.avail_out = (uInt)(CHUNK - keep);
    int ret = inflate(&z->zs, Z_NO_FLUSH);
    z->have = CHUNK - z->zs.avail_out;
    if (ret == Z_STREAM_END) {
        z->ended = 1;
        return 0;
    }
    if (ret == Z_OK)
        return 0;
    if (ret == Z_BUF_ERROR)
        util_errf(err, errlen, "zlib: compressed data truncated");
    else if (ret == Z_MEM_ERROR)
        util_errf(err, errlen, "zlib: out of memory");
    else
        util_errf(err, errlen, "zlib: %s", z->zs.msg ? z->zs.msg : "corrupt data");
    return -1;
}

const uint8_t *frame_in_get(frame_in_t *z, size_t n, char *err, size_t errlen)
{
    assert(n <= 64);
    while (z->have - z->pos < n)
        if (in_fill(z, err, errlen) != 0)
            return NULL;
    const uint8_t *p = z->chunk + z->pos;
    z->pos += n;
    return p;
}

uint32_t frame_in_crc(frame_in_t *z)
{
    z->crc = crc32(z->crc, z->chunk + z->crc_from, (uInt)(z->pos - z->crc_from));
    z->crc_from = z->pos;
    return (uint32_t)z->crc;
}

int frame_in_end(frame_in_t *z, char *err, size_t errlen)
{
    if (z->have != z->pos) {
        util_errf(err, errlen, "record: trailing bytes after the record");
        return -1;
    }
    while (!z->ended) {
        uint8_t extra[16];
        z->zs.next_out = extra;
        z->zs.avail_out = sizeof extra;
        int ret = inflate(&z->zs, Z_NO_FLUSH);
        if (z->zs.avail_out != sizeof extra) {
            util_errf(err, errlen, "record: trailing bytes after the record");
            return -1;
        }
        if (ret == Z_STREAM_END) {
            z->ended = 1;
        } else if (ret != Z_OK) {
            util_errf(err, errlen, "zlib: %s",
                      ret == Z_BUF_ERROR ? "compressed data truncated"
                                         : (z->zs.msg ? z->zs.msg : "corrupt data"));
            return -1;
        }
    }
    if (z->zs.avail_in != 0) {
        util_errf(err, errlen, "frame: %u bytes after the zlib stream", z->zs.avail_in);
        return -1;
    }
    return 0;
}

/* ---- the stream ---- */

#define STREAM_READ 65536
#define STREAM_MAX (FRAME_HEADER_BYTES + FRAME_MAX_PAYLOAD)

struct frame_stream {
    uint8_t *buf;
    size_t cap, start, end;   /* buf[start..end) held, not yet returned */
    uint64_t off;             /* stream offset of buf[start] */
    int eof;
    int in_bad;               /* the last result was a bad frame */
};

frame_stream_t *frame_stream_create(void)
{
    return calloc(1, sizeof(frame_stream_t));
}

void frame_stream_free(frame_stream_t *fs)
{
    if (!fs)
        return;
    free(fs->buf);
    free(fs);
}

/* Room for at least `want` more bytes (fewer only when the buffer is at its
 * bound, which a frame never needs); 0 or -1 out of memory. */
static int stream_room(frame_stream_t *fs, size_t want)
{
    if (fs->start > 0 && (fs->start == fs->end || fs->cap - fs->end < want)) {
        memmove(fs->buf, fs->buf + fs->start, fs->end - fs->start);
        fs->end -= fs->start;
        fs->start = 0;
    }
    if (fs->cap - fs->end >= want || fs->cap >= STREAM_MAX + STREAM_READ)
        return 0;
    size_t ncap = fs->cap ? fs->cap : STREAM_READ;
    while (ncap - fs->end < want && ncap < STREAM_MAX + STREAM_READ)
        ncap *= 2;
    if (ncap > STREAM_MAX + STREAM_READ)
        ncap = STREAM_MAX + STREAM_READ;
    uint8_t *nb = realloc(fs->buf, ncap);
    if (!nb)
        return -1;
    fs->buf = nb;
    fs->cap = ncap;
    return 0;
}

ssize_t frame_stream_fill(frame_stream_t *fs, int fd)
{
    if (stream_room(fs, STREAM_READ) != 0) {
        errno = ENOMEM;
        return -2;
    }
    for (;;) {
        ssize_t n = read(fd, fs->buf + fs->end, fs->cap - fs->end);
        if (n > 0) {
            fs->end += (size_t)n;
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

int frame_stream_put(frame_stream_t *fs, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        if (stream_room(fs, len < STREAM_READ ? len : STREAM_READ) != 0)
            return -1;
        size_t k = fs->cap - fs->end < len ? fs->cap - fs->end : len;
        memcpy(fs->buf + fs->end, p, k);
        fs->end += k;
        p += k;
        len -= k;
    }
    return 0;
}

int frame_stream_next(frame_stream_t *fs, const uint8_t **frame, size_t *framelen, uint64_t *off,
                      char *err, size_t errlen)
{
    char why[200];
    for (;;) {
        size_t avail = fs->end - fs->start, used = 0;
        const uint8_t *p = fs->buf + fs->start;
        uint32_t plen = 0;
        frame_status_t st = avail ? frame_open(p, avail, &used, &plen, why, sizeof why)
                                  : FRAME_NEED_MORE;
        if (st == FRAME_OK) {
            *frame = p;
            *framelen = used;
            if (off)
                *off = fs->off;
            fs->start += used;
            fs->off += used;
            fs->in_bad = 0;
            return 1;
        }
        if (st == FRAME_BAD) {
            /* Garbage that goes on past what the last read brought in is
             * the stretch already reported. */
            int more_of_same = fs->in_bad && !frame_at_magic(p, avail);
            if (!more_of_same)
                util_errf(err, errlen, "bad frame at byte %llu: %s", (unsigned long long)fs->off,
                          why);
            fs->start += used;
            fs->off += used;
            fs->in_bad = 1;
            if (more_of_same)
                continue;
            return -1;
        }
        if (!fs->eof || avail == 0)
            return 0;
        if (avail < FRAME_HEADER_BYTES)
            util_errf(err, errlen, "bad frame at byte %llu: truncated header (%zu bytes)",
                      (unsigned long long)fs->off, avail);
        else
            util_errf(err, errlen,
                      "bad frame at byte %llu: truncated (payload %u bytes, %zu in file)",
                      (unsigned long long)fs->off, (unsigned)get_u32(p + 4),
                      avail - FRAME_HEADER_BYTES);
        used = frame_resync(p, avail);
        fs->start += used;
        fs->off += used;
        fs->in_bad = 1;
        return -1;
    }
}

void frame_stream_mark_bad(frame_stream_t *fs) { fs->in_bad = 1; }

void frame_stream_set_eof(frame_stream_t *fs) { fs->eof = 1; }

size_t frame_stream_pending(const frame_stream_t *fs) { return fs->end - fs->start; }

void frame_stream_clear(frame_stream_t *fs)
{
    fs->off += fs->end - fs->start;
    fs->start = fs->end = 0;
    fs->in_bad = 0;
}
