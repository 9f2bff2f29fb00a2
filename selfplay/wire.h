/* The trainer <-> worker pipes.
 *
 * records fd (worker -> trainer): a byte stream of frames (engine/record.h);
 * each finished game is written as one frame with wire_write_all.
 * control fd (trainer -> worker): text lines, "model GEN PATH" and "stop".
 *
 * wire_buf_t accumulates the bytes read from a nonblocking fd and cuts
 * them into frames; a frame cut short by the writer's death stays in the
 * buffer and is reported by wire_buf_pending. */
#ifndef GZ_SELFPLAY_WIRE_H
#define GZ_SELFPLAY_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/record.h"

typedef struct wire_buf {
    uint8_t *data;   /* owned */
    size_t start;    /* first unconsumed byte */
    size_t len;      /* bytes held, from data[0] */
    size_t cap;
} wire_buf_t;

void wire_buf_init(wire_buf_t *b);
void wire_buf_free(wire_buf_t *b);
/* Drop whatever is held (a dead writer's partial frame). */
void wire_buf_clear(wire_buf_t *b);
/* Bytes held that are not yet a whole frame. */
static inline size_t wire_buf_pending(const wire_buf_t *b) { return b->len - b->start; }

/* Read what fd has now (fd nonblocking). Returns bytes read (> 0), 0 at end
 * of file, -1 when nothing is available (EAGAIN), -2 on a read error or
 * when out of memory (errno set). */
ssize_t wire_buf_fill(wire_buf_t *b, int fd);

typedef enum { WIRE_FRAME = 0, WIRE_NEED_MORE, WIRE_BAD } wire_status_t;

/* Decode the next frame held. WIRE_FRAME: *rec holds the record and
 * frame, framelen the frame's bytes (valid until the next call);
 * WIRE_BAD: err says why and the bad bytes were skipped;
 * WIRE_NEED_MORE: fill again. */
wire_status_t wire_buf_next(wire_buf_t *b, game_record_t *rec, const uint8_t **frame,
                            size_t *framelen, char *err, size_t errlen);

/* Write all of data, retrying on EINTR and partial writes (fd blocking).
 * 0, or -1 with errno set (EPIPE when the reader is gone). */
int wire_write_all(int fd, const void *data, size_t len);

/* Control lines: accumulates bytes from a nonblocking fd. */
typedef struct wire_lines {
    char buf[8192];
    size_t len;
    int eof;
} wire_lines_t;

/* Read what is available, without blocking. Returns 0, or -1 at EOF or
 * on a read error (then eof is set). */
int wire_lines_fill(wire_lines_t *l, int fd);
/* Copy the next whole line (without '\n') into out; 1 if one was there.
 * A line longer than the buffer is dropped. */
int wire_lines_next(wire_lines_t *l, char *out, size_t outlen);

#endif
