/* The trainer <-> worker pipes.
 *
 * records fd (worker -> trainer): a byte stream of frames (engine/record.h);
 * each finished game is written as one frame with wire_write_all.
 * control fd (trainer -> worker): text lines, "model GEN PATH" and "stop".
 * The trainer cuts the records stream with engine/frame.h's
 * frame_stream_t, the same reader that reads .gzr files; an empty frame
 * (frame_heartbeat) says the worker is alive. */
#ifndef GZ_SELFPLAY_WIRE_H
#define GZ_SELFPLAY_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/record.h"

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
