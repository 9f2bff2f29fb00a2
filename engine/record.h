/* Game records.
 *
 * A game record is one self-play (or match) game: rule, size, result, model
 * generation, and per ply the move, whether it was a full search (only
 * those train the policy), the search's root value and the root visit
 * counts as a sparse list.
 *
 * On disk and on pipes a record travels as one frame (engine/frame.h),
 * payload = zlib(serialised record). The serialised record
 * starts with its own magic and RECORD_VERSION. Every field is checked on
 * decode: a bad frame is an error with a one-line message, never a crash.
 * A .gzr file is a sequence of frames. */
#ifndef GZ_ENGINE_RECORD_H
#define GZ_ENGINE_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/board.h"
#include "engine/frame.h"

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
    uint64_t model_gen;    /* generation of the model that played it (the file keeps 32 bits:
                            * larger ones are stored as UINT32_MAX) */
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
#define RECORD_FLAG_OPENING     4u  /* began with unsearched random opening plies (no visits) */

void record_init(game_record_t *r);
void record_free(game_record_t *r);
void record_clear(game_record_t *r, rule_t rule, int size, uint64_t model_gen);
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
 * position, and its result must be a win for the side that did not resign
 * (the side to move after the last ply resigned). */
int record_validate(const game_record_t *r, char *err, size_t errlen);

/* Encode r as one frame into *buf (grown with realloc as needed, caller
 * frees); returns the frame length, or 0 on failure with err set (a record
 * whose fields record_decode would reject is refused here too). */
size_t record_encode(const game_record_t *r, uint8_t **buf, size_t *cap, char *err, size_t errlen);

/* Decode one frame from the front of buf. On FRAME_BAD, *consumed is how far
 * to skip to resynchronise (to the next possible magic; past the whole frame
 * when its CRC matched but the record inside is invalid); it is 0 on
 * FRAME_NEED_MORE. Checks: magic, length <= FRAME_MAX_PAYLOAD, CRC32, zlib
 * stream (inflated piecewise, so a zip bomb costs no memory), record magic
 * and version, every field in range, counts consistent, the record's own
 * CRC, no trailing bytes. Legality of the moves is record_validate's job.
 * *out keeps its capacity; after FRAME_BAD its contents are unspecified. */
frame_status_t record_decode(const uint8_t *buf, size_t len, size_t *consumed,
                             game_record_t *out, char *err, size_t errlen);
/* Decode a frame's payload (the envelope already checked); 0 or -1 with err. */
int record_decode_payload(const uint8_t *payload, uint32_t plen, game_record_t *out, char *err,
                          size_t errlen);

/* The next record of a frame stream (engine/frame.h): 1 with *out (and the
 * frame's bytes in *frame and *framelen when not NULL, valid until the stream's
 * next call); 0: need more bytes (or the end, after frame_stream_set_eof);
 * -1: a bad frame or a bad record inside a good frame, err says what and
 * at which byte offset; call again to go on after it. */
int record_stream_next(frame_stream_t *fs, game_record_t *out, const uint8_t **frame,
                       size_t *framelen, char *err, size_t errlen);

/* Reads records from a file, skipping bad frames, through one
 * frame_stream_t (constant memory). A stretch of garbage is reported once,
 * at the byte where it starts. */
typedef struct record_reader record_reader_t;
record_reader_t *record_reader_open(const char *path, char *err, size_t errlen);
/* 1: a record in *out; 0: end of file; -1: a bad frame, err says what and
 * at which byte offset, and the next call goes on after it. */
int record_reader_next(record_reader_t *rr, game_record_t *out, char *err, size_t errlen);
void record_reader_free(record_reader_t *rr);

/* Append one frame to an open stdio stream; 0 or -1 with err set. */
int record_write(FILE *f, const game_record_t *r, char *err, size_t errlen);

#endif
