/* Game records and their frames.
 *
 * A game record is one self-play (or match) game: rule, size, result, model
 * generation, and per ply the move, whether it was a full search (only
 * those train the policy), the search's root value and the root visit
 * counts as a sparse list.
 *
 * On disk and on pipes a record travels as one frame:
 *   u32 magic FRAME_MAGIC | u32 payload length | u32 CRC32(payload) | payload
 * (little endian), payload = zlib(serialised record). The serialised record
 * starts with its own magic and RECORD_VERSION. Every field is checked on
 * decode: a bad frame is an error with a one-line message, never a crash.
 * A .gzr file is a sequence of frames. */
#ifndef GZ_ENGINE_RECORD_H
#define GZ_ENGINE_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/board.h"

#define FRAME_MAGIC 0x31465a47u     /* "GZF1" little endian */
#define FRAME_HEADER_BYTES 12
#define FRAME_MAX_PAYLOAD (4u << 20) /* larger length fields are rejected */
#define RECORD_VERSION 2        /* written; version 1 (no game id) is still read */

typedef struct record_visit {
    int16_t move;    /* point index y*size+x */
    uint16_t count;  /* root visits to that child */
} record_visit_t;

typedef struct record_ply {
    int16_t move;          /* the move played */
    uint8_t full;          /* 1: full search, its visits train the policy */
    float root_value;      /* search value in [-1,1], side to move at this ply */
    uint32_t visit_off;    /* first entry in game_record_t.visits */
    uint16_t nvisits;      /* entries in game_record_t.visits */
} record_ply_t;

/* Owns its arrays; record_init/record_free pair. Plies and visits grow as
 * needed, and record_clear keeps the capacity, so a worker that reuses one
 * record allocates only while its first games grow it. */
typedef struct game_record {
    uint8_t rule;          /* rule_t */
    uint8_t size;
    uint8_t result;        /* result_t */
    uint8_t flags;         /* RECORD_FLAG_* */
    uint32_t model_gen;    /* generation of the model that played it */
    /* The game's id: (worker_id, game_seq) is unique per game, so a game a
     * broker delivers twice is stored once. 0, 0: no id (version 1 records,
     * tools that make records by hand). */
    uint64_t worker_id;
    uint64_t game_seq;
    uint32_t nplies;
    uint32_t nvisits;
    record_ply_t *plies;
    record_visit_t *visits;
    uint32_t cap_plies, cap_visits;
} game_record_t;

#define RECORD_FLAG_RESIGNED    1u  /* ended by resignation */
#define RECORD_FLAG_NO_RESIGN   2u  /* resignation disabled (false-resign measurement) */

void record_init(game_record_t *r);
void record_free(game_record_t *r);
void record_clear(game_record_t *r, rule_t rule, int size, uint32_t model_gen);
/* Append a ply; returns 0, or -1 when out of memory. */
int record_add_ply(game_record_t *r, int move, int full, float root_value,
                   const record_visit_t *visits, int nvisits);
/* Deep copy; returns 0 or -1 (out of memory). */
int record_copy(game_record_t *dst, const game_record_t *src);
/* Whether two records hold the same game, field by field. */
int record_equal(const game_record_t *a, const game_record_t *b);

/* Replay the moves under the record's rule: 0 when every move is legal and
 * the result matches the final position (or a resignation), else -1 with
 * a message in err naming the ply (numbered from 1, as `gomoku records dump`
 * shows them). A resigned game (RECORD_FLAG_RESIGNED) must end in an open
 * position with a black or white result. */
int record_validate(const game_record_t *r, char *err, size_t errlen);

/* Encode r as one frame into *buf (grown with realloc as needed, caller
 * frees); returns the frame length, or 0 on failure with err set (a record
 * whose fields frame_decode would reject is refused here too). */
size_t frame_encode(const game_record_t *r, uint8_t **buf, size_t *cap, char *err, size_t errlen);

typedef enum {
    FRAME_OK = 0,      /* *out holds the record, *consumed bytes used */
    FRAME_NEED_MORE,   /* a valid prefix: give more bytes */
    FRAME_BAD,         /* corrupt: err says why, skip *consumed bytes and retry */
} frame_status_t;

/* Decode one frame from the front of buf. On FRAME_BAD, *consumed is how far
 * to skip to resynchronise (to the next possible magic; past the whole frame
 * when its CRC matched but the record inside is invalid); it is 0 on
 * FRAME_NEED_MORE. Checks: magic, length <= FRAME_MAX_PAYLOAD, CRC32, zlib
 * stream (inflated piecewise, so a zip bomb costs no memory), record magic
 * and version, every field in range, counts consistent, the record's own
 * CRC, no trailing bytes. Legality of the moves is record_validate's job.
 * *out keeps its capacity; after FRAME_BAD its contents are unspecified. */
frame_status_t frame_decode(const uint8_t *buf, size_t len, size_t *consumed,
                            game_record_t *out, char *err, size_t errlen);

/* Whether buf's first bytes (up to 4) match FRAME_MAGIC, i.e. a frame could
 * start there. A stream reader that gets its bytes in pieces should count a
 * FRAME_BAD that comes right after another FRAME_BAD (no FRAME_OK between)
 * only if buf started at a magic: otherwise it is the same stretch of
 * garbage, cut where the bytes happened to arrive. frame_reader does this. */
bool frame_at_magic(const uint8_t *buf, size_t len);

/* Reads frames from a file, skipping bad ones. Constant memory: at most one
 * frame (FRAME_HEADER_BYTES + FRAME_MAX_PAYLOAD) is buffered. A stretch of
 * garbage is reported once, at the byte where it starts. */
typedef struct frame_reader frame_reader_t;
frame_reader_t *frame_reader_open(const char *path, char *err, size_t errlen);
/* 1: a record in *out; 0: end of file; -1: a bad frame, err says what and
 * at which byte offset, and the next call goes on after it. */
int frame_reader_next(frame_reader_t *fr, game_record_t *out, char *err, size_t errlen);
void frame_reader_free(frame_reader_t *fr);

/* Append one frame to an open stdio stream; 0 or -1 with err set. */
int frame_write(FILE *f, const game_record_t *r, char *err, size_t errlen);

#endif
