/* Frames: the unit on every transport (pipe, file, broker).
 *
 *   u32 magic FRAME_MAGIC | u32 payload length | u32 CRC32(payload) | payload
 *
 * (little endian), payload = a zlib stream. This module knows the envelope
 * and the compression; what the compressed bytes mean is the caller's
 * (engine/record.h puts one game record in each frame). A .gzr file and a
 * worker's records pipe are both plain sequences of frames.
 *
 * Writing: frame_out_begin, frame_out_put the raw bytes, frame_out_finish.
 * Reading: frame_open checks the envelope; frame_in_* inflates the payload
 * piecewise (a zip bomb costs no memory). frame_stream_t cuts a byte
 * stream (file or pipe) into frames. */
#ifndef GZ_ENGINE_FRAME_H
#define GZ_ENGINE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FRAME_MAGIC 0x31465a47u     /* "GZF1" little endian */
#define FRAME_HEADER_BYTES 12
#define FRAME_MAX_PAYLOAD (4u << 20) /* larger length fields are rejected */

typedef enum {
    FRAME_OK = 0,      /* a whole frame, *consumed bytes used */
    FRAME_NEED_MORE,   /* a valid prefix: give more bytes */
    FRAME_BAD,         /* corrupt: err says why, skip *consumed bytes and retry */
} frame_status_t;

/* Whether buf's first bytes (up to 4) match FRAME_MAGIC, i.e. a frame could
 * start there. */
bool frame_at_magic(const uint8_t *buf, size_t len);

/* Distance from buf to the next place a frame could start (1..len). */
size_t frame_resync(const uint8_t *buf, size_t len);

/* Check the envelope of the frame at the front of buf: magic, length <=
 * FRAME_MAX_PAYLOAD, CRC32. FRAME_OK: the payload is buf[FRAME_HEADER_BYTES
 * .. +*plen) and *consumed covers the whole frame. FRAME_BAD: *consumed is
 * the distance to the next possible magic. FRAME_NEED_MORE: *consumed 0. */
frame_status_t frame_open(const uint8_t *buf, size_t len, size_t *consumed, uint32_t *plen,
                          char *err, size_t errlen);

/* A heartbeat: a frame with an empty payload (no zlib stream), which
 * frame_open accepts with *plen 0. Transports use it to say "alive". */
void frame_heartbeat(uint8_t header[FRAME_HEADER_BYTES]);

/* ---- writing one frame ---- */

typedef struct frame_out frame_out_t;

/* Start a frame in *buf (grown with realloc to hold the worst case for
 * raw_bytes of input; caller frees *buf). NULL with err when raw_bytes
 * could not fit FRAME_MAX_PAYLOAD or memory runs out. */
frame_out_t *frame_out_begin(uint8_t **buf, size_t *cap, size_t raw_bytes, char *err,
                             size_t errlen);
/* Append raw bytes (at most raw_bytes in all); 0 or -1. */
int frame_out_put(frame_out_t *o, const void *p, size_t len);
/* CRC32 of every raw byte put so far. */
uint32_t frame_out_crc(const frame_out_t *o);
/* Finish the zlib stream and the header; frees o. Returns the frame length,
 * or 0 with err (then *buf holds nothing useful). */
size_t frame_out_finish(frame_out_t *o, char *err, size_t errlen);
/* Drop an unfinished frame; NULL is a no-op. */
void frame_out_abort(frame_out_t *o);

/* ---- reading one frame's payload ---- */

typedef struct frame_in frame_in_t;

/* Inflate payload[plen] (which must outlive the reader); NULL with err. */
frame_in_t *frame_in_begin(const uint8_t *payload, uint32_t plen, char *err, size_t errlen);
/* The next n (<= 64) raw bytes, valid until the next call; NULL with err
 * when the data ends early or zlib finds it corrupt. */
const uint8_t *frame_in_get(frame_in_t *in, size_t n, char *err, size_t errlen);
/* CRC32 of every raw byte returned so far. */
uint32_t frame_in_crc(frame_in_t *in);
/* 0 when nothing follows (no raw bytes, no zlib data, no payload bytes);
 * else -1 with err. */
int frame_in_end(frame_in_t *in, char *err, size_t errlen);
void frame_in_free(frame_in_t *in);

/* ---- cutting a byte stream into frames ---- */

/* Bytes from a file or a pipe, in whatever pieces they arrive, cut into
 * frames. Memory is bounded: at most one frame (FRAME_HEADER_BYTES +
 * FRAME_MAX_PAYLOAD) plus one read is buffered. Byte offsets count from the
 * stream's start. A stretch of garbage is reported once, at the byte where
 * it starts, however the bytes were cut (the same count for a file read in
 * one go and a pipe read byte by byte). */
typedef struct frame_stream frame_stream_t;

frame_stream_t *frame_stream_create(void);
void frame_stream_free(frame_stream_t *fs);

/* read() what fd has now into the stream. > 0: bytes read; 0: end of file;
 * -1: nothing now (EAGAIN on a nonblocking fd); -2: read error or out of
 * memory (errno set). */
ssize_t frame_stream_fill(frame_stream_t *fs, int fd);
/* Give bytes directly (tests, in-memory sources); 0 or -1 out of memory. */
int frame_stream_put(frame_stream_t *fs, const void *data, size_t len);

/* The next frame held. 1: a frame, *frame and *framelen (header included, valid
 * until the next call), *off its byte offset (off may be NULL); 0: need
 * more bytes (or, after frame_stream_set_eof, the end); -1: bad bytes
 * skipped, err says "bad frame at byte N: why" (call again). */
int frame_stream_next(frame_stream_t *fs, const uint8_t **frame, size_t *framelen, uint64_t *off,
                      char *err, size_t errlen);
/* Tell the stream a frame it returned turned out bad inside (a valid CRC
 * around an invalid payload): garbage right after it counts anew. */
void frame_stream_mark_bad(frame_stream_t *fs);

/* Declare the end of the stream: from now on frame_stream_next reports a
 * truncated tail ("bad frame at byte N: truncated ...") as -1 and skips to
 * the next possible magic in it (a torn frame may be followed by whole
 * ones), and returns 0 only once nothing is left. */
void frame_stream_set_eof(frame_stream_t *fs);
/* Bytes held that are not yet a whole frame. */
size_t frame_stream_pending(const frame_stream_t *fs);
/* Drop whatever is held (a dead writer's partial frame); offsets go on. */
void frame_stream_clear(frame_stream_t *fs);

#endif
