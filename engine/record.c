/* Game records: the in-memory record, its serialised form, and the record
 * in a frame (engine/frame.h holds the envelope and the compression).
 *
 * Serialised record (the zlib-compressed frame payload), little endian:
 *   u32 RECORD_MAGIC | u16 RECORD_VERSION | u8 rule | u8 size | u8 result |
 *   u8 flags | u32 model_gen | u32 nplies | u32 nvisits |
 *   (version 2 only) u64 worker_id | u64 game_seq |
 *   nplies x (i16 move | u8 full | u32 root_value bits | u16 nvisits) |
 *   nvisits x (i16 move | u16 count) |
 *   u32 CRC32 of every byte before it
 * The inner CRC catches a payload that was corrupted before it was
 * compressed (the frame CRC and zlib's Adler-32 would both be valid then).
 * visit_off is not stored: each ply's visits follow the previous ply's. */
#include "engine/record.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

#define RECORD_MAGIC 0x31525a47u   /* "GZR1" little endian */
#define REC_HEADER_BYTES 22
#define REC_ID_BYTES 16         /* version 2: worker id, game sequence */
#define REC_PLY_BYTES 9
#define REC_VISIT_BYTES 4
#define REC_CRC_BYTES 4
#define REC_FLAGS_KNOWN (RECORD_FLAG_RESIGNED | RECORD_FLAG_NO_RESIGN | RECORD_FLAG_OPENING)

/* ---- the in-memory record ---- */

void record_init(game_record_t *r)
{
    memset(r, 0, sizeof *r);
    r->size = BOARD_DEFAULT;
}

void record_free(game_record_t *r)
{
    if (!r)
        return;
    free(r->plies);
    free(r->visits);
    record_init(r);
}

void record_clear(game_record_t *r, rule_t rule, int size, uint64_t model_gen)
{
    assert(rule >= 0 && rule < RULE_COUNT);
    assert(size >= BOARD_MIN && size <= BOARD_MAX);
    r->rule = (uint8_t)rule;
    r->size = (uint8_t)size;
    r->result = RESULT_NONE;
    r->flags = 0;
    r->model_gen = model_gen;
    r->worker_id = 0;
    r->game_seq = 0;
    r->nplies = 0;
    r->nvisits = 0;
}

/* Grow the array *buf of *cap elements of size elem to hold need, doubling
 * from first; 0 or -1 (the array as it was). */
static int grow(void **buf, uint32_t *cap, uint32_t need, uint32_t first, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t c = *cap ? *cap : first;
    while (c < need)
        c *= 2;
    void *p = realloc(*buf, (size_t)c * elem);
    if (!p)
        return -1;
    *buf = p;
    *cap = c;
    return 0;
}

/* Grow the arrays to hold nplies plies and nvisits visits; 0 or -1. */
static int record_reserve(game_record_t *r, uint32_t nplies, uint32_t nvisits)
{
    void *plies = r->plies, *visits = r->visits;
    int rc = grow(&plies, &r->cap_plies, nplies, 64, sizeof *r->plies);
    r->plies = plies;
    if (rc == 0)
        rc = grow(&visits, &r->cap_visits, nvisits, 1024, sizeof *r->visits);
    r->visits = visits;
    return rc;
}

int record_add_ply(game_record_t *r, int move, int full, float root_value,
                   const record_visit_t *visits, int nvisits)
{
    int npoints = r->size * r->size;
    assert(move >= 0 && move < npoints);
    assert(nvisits >= 0 && nvisits <= npoints);
    assert(nvisits == 0 || visits);
    if (record_reserve(r, r->nplies + 1, r->nvisits + (uint32_t)nvisits) != 0)
        return -1;
    record_ply_t *p = &r->plies[r->nplies++];
    p->move = (int16_t)move;
    p->full = full ? 1 : 0;
    p->root_value = root_value;
    p->visit_off = r->nvisits;
    p->nvisits = (uint16_t)nvisits;
    if (nvisits > 0)
        memcpy(&r->visits[r->nvisits], visits, (size_t)nvisits * sizeof *visits);
    r->nvisits += (uint32_t)nvisits;
    return 0;
}

int record_copy(game_record_t *dst, const game_record_t *src)
{
    if (record_reserve(dst, src->nplies, src->nvisits) != 0)
        return -1;
    /* every field of src but the arrays, which stay dst's own */
    game_record_t own = *dst;
    *dst = *src;
    dst->plies = own.plies;
    dst->visits = own.visits;
    dst->cap_plies = own.cap_plies;
    dst->cap_visits = own.cap_visits;
    if (src->nplies)
        memcpy(dst->plies, src->plies, (size_t)src->nplies * sizeof *src->plies);
    if (src->nvisits)
        memcpy(dst->visits, src->visits, (size_t)src->nvisits * sizeof *src->visits);
    return 0;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

int record_equal(const game_record_t *a, const game_record_t *b)
{
    if (a->rule != b->rule || a->size != b->size || a->result != b->result ||
        a->flags != b->flags || a->model_gen != b->model_gen || a->worker_id != b->worker_id ||
        a->game_seq != b->game_seq || a->nplies != b->nplies ||
        a->nvisits != b->nvisits)
        return 0;
    for (uint32_t i = 0; i < a->nplies; i++) {
        const record_ply_t *p = &a->plies[i], *q = &b->plies[i];
        if (p->move != q->move || p->full != q->full ||
            float_bits(p->root_value) != float_bits(q->root_value) ||
            p->visit_off != q->visit_off || p->nvisits != q->nvisits)
            return 0;
    }
    for (uint32_t i = 0; i < a->nvisits; i++)
        if (a->visits[i].move != b->visits[i].move || a->visits[i].count != b->visits[i].count)
            return 0;
    return 1;
}

/* ---- field checks shared by the encoder and the decoder ---- */

static int check_header(unsigned rule, unsigned size, unsigned result, unsigned flags,
                        uint32_t nplies, uint32_t nvisits, char *err, size_t errlen)
{
    if (rule >= RULE_COUNT) {
        util_errf(err, errlen, "record: rule %u unknown", rule);
        return -1;
    }
    if (size < BOARD_MIN || size > BOARD_MAX) {
        util_errf(err, errlen, "record: board size %u outside %d..%d", size, BOARD_MIN, BOARD_MAX);
        return -1;
    }
    if (result > RESULT_DRAW) {
        util_errf(err, errlen, "record: result %u unknown", result);
        return -1;
    }
    if (flags & ~REC_FLAGS_KNOWN) {
        util_errf(err, errlen, "record: unknown flags 0x%02x", flags);
        return -1;
    }
    if (nplies > size * size) {
        util_errf(err, errlen, "record: %u plies on a %ux%u board", (unsigned)nplies, size, size);
        return -1;
    }
    if ((uint64_t)nvisits > (uint64_t)nplies * size * size) {
        util_errf(err, errlen, "record: %u visit entries for %u plies", (unsigned)nvisits,
                (unsigned)nplies);
        return -1;
    }
    return 0;
}

/* Checks one ply's own fields (not its visits). */
static int check_ply(uint32_t i, int move, unsigned full, float value, unsigned nvisits,
                     int npoints, char *err, size_t errlen)
{
    if (move < 0 || move >= npoints) {
        util_errf(err, errlen, "record: ply %u move %d off the board", (unsigned)i + 1, move);
        return -1;
    }
    if (full > 1) {
        util_errf(err, errlen, "record: ply %u full flag %u not 0 or 1", (unsigned)i + 1, full);
        return -1;
    }
    if (!isfinite(value) || value < -1.0f || value > 1.0f) {
        util_errf(err, errlen, "record: ply %u root value %g outside [-1,1]", (unsigned)i + 1,
                (double)value);
        return -1;
    }
    if ((int)nvisits > npoints) {
        util_errf(err, errlen, "record: ply %u has %u visit entries for %d points", (unsigned)i + 1,
                nvisits, npoints);
        return -1;
    }
    return 0;
}

/* Checks one ply's visit list: points on the board, each at most once.
 * seen is a scratch array of BOARD_CELLS stamps; stamp is unique per ply. */
static int check_visits(uint32_t i, const record_visit_t *v, unsigned n, int npoints,
                        uint32_t *seen, uint32_t stamp, char *err, size_t errlen)
{
    for (unsigned k = 0; k < n; k++) {
        int m = v[k].move;
        if (m < 0 || m >= npoints) {
            util_errf(err, errlen, "record: ply %u visit %u at point %d off the board",
                    (unsigned)i + 1, k + 1, m);
            return -1;
        }
        if (seen[m] == stamp) {
            util_errf(err, errlen, "record: ply %u lists point %d twice", (unsigned)i + 1, m);
            return -1;
        }
        seen[m] = stamp;
    }
    return 0;
}

/* Every structural invariant of an in-memory record (what decode guarantees). */
static int record_check(const game_record_t *r, char *err, size_t errlen)
{
    if (check_header(r->rule, r->size, r->result, r->flags, r->nplies, r->nvisits, err,
                     errlen) != 0)
        return -1;
    int npoints = r->size * r->size;
    uint32_t seen[BOARD_CELLS] = {0};
    uint32_t off = 0;
    for (uint32_t i = 0; i < r->nplies; i++) {
        const record_ply_t *p = &r->plies[i];
        if (check_ply(i, p->move, p->full, p->root_value, p->nvisits, npoints, err, errlen) != 0)
            return -1;
        if (p->visit_off != off) {
            util_errf(err, errlen, "record: ply %u visits start at %u, expected %u", (unsigned)i + 1,
                    (unsigned)p->visit_off, (unsigned)off);
            return -1;
        }
        if ((uint64_t)off + p->nvisits > r->nvisits) {
            util_errf(err, errlen, "record: ply %u visits run past the %u entries", (unsigned)i + 1,
                    (unsigned)r->nvisits);
            return -1;
        }
        if (check_visits(i, &r->visits[off], p->nvisits, npoints, seen, i + 1, err, errlen) != 0)
            return -1;
        off += p->nvisits;
    }
    if (off != r->nvisits) {
        util_errf(err, errlen, "record: plies use %u visit entries, record holds %u",
                (unsigned)off, (unsigned)r->nvisits);
        return -1;
    }
    return 0;
}

int record_validate(const game_record_t *r, char *err, size_t errlen)
{
    if (record_check(r, err, errlen) != 0)
        return -1;
    board_t b;
    board_init(&b, r->size, (rule_t)r->rule);
    char xy[16];
    for (uint32_t i = 0; i < r->nplies; i++) {
        const record_ply_t *p = &r->plies[i];
        if (board_over(&b)) {
            util_errf(err, errlen, "ply %u: the game was already over (%s)", (unsigned)i + 1,
                    result_str((result_t)b.result));
            return -1;
        }
        for (unsigned k = 0; k < p->nvisits; k++) {
            int m = r->visits[p->visit_off + k].move;
            if (b.cells[m] != STONE_EMPTY) {
                move_format_xy(m, r->size, xy, sizeof xy);
                util_errf(err, errlen, "ply %u: visits on occupied point %s", (unsigned)i + 1, xy);
                return -1;
            }
        }
        move_status_t st = board_play(&b, p->move);
        if (st != MOVE_OK) {
            move_format_xy(p->move, r->size, xy, sizeof xy);
            util_errf(err, errlen, "ply %u: move %s is illegal: %s", (unsigned)i + 1, xy,
                    move_status_str(st));
            return -1;
        }
    }
    if (r->flags & RECORD_FLAG_RESIGNED) {
        /* The side to move after the last ply resigned: the game must still be
         * open and one colour must have won. */
        if (board_over(&b)) {
            util_errf(err, errlen, "resigned game ends in a finished position (%s)",
                    result_str((result_t)b.result));
            return -1;
        }
        if (r->result != RESULT_BLACK && r->result != RESULT_WHITE) {
            util_errf(err, errlen, "resigned game has result %s",
                    result_str((result_t)r->result));
            return -1;
        }
        result_t winner = b.to_move == STONE_BLACK ? RESULT_WHITE : RESULT_BLACK;
        if (r->result != winner) {
            /* a forged or corrupted result: the side that resigned cannot win */
            util_errf(err, errlen, "resigned game records %s as the winner, but %s was to "
                      "move after ply %u and resigned", result_str((result_t)r->result),
                      b.to_move == STONE_BLACK ? "black" : "white", (unsigned)r->nplies);
            return -1;
        }
        return 0;
    }
    if (r->result != b.result) {
        util_errf(err, errlen, "result %s does not match the final position (%s)",
                result_str((result_t)r->result), result_str((result_t)b.result));
        return -1;
    }
    return 0;
}

/* ---- little-endian helpers ---- */

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void put_u64(uint8_t *p, uint64_t v)
{
    put_u32(p, (uint32_t)v);
    put_u32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) | ((uint64_t)get_u32(p + 4) << 32);
}

/* ---- encoder ---- */

static size_t serial_bytes(uint32_t nplies, uint32_t nvisits)
{
    return REC_HEADER_BYTES + REC_ID_BYTES + (size_t)nplies * REC_PLY_BYTES + (size_t)nvisits * REC_VISIT_BYTES +
           REC_CRC_BYTES;
}

size_t record_encode(const game_record_t *r, uint8_t **buf, size_t *cap, char *err, size_t errlen)
{
    if (record_check(r, err, errlen) != 0)
        return 0;
    frame_out_t *o = frame_out_begin(buf, cap, serial_bytes(r->nplies, r->nvisits), err, errlen);
    if (!o)
        return 0;
    uint8_t t[REC_HEADER_BYTES];
    put_u32(t, RECORD_MAGIC);
    put_u16(t + 4, RECORD_VERSION);
    t[6] = r->rule;
    t[7] = r->size;
    t[8] = r->result;
    t[9] = r->flags;
    put_u32(t + 10, r->model_gen > UINT32_MAX ? UINT32_MAX : (uint32_t)r->model_gen);
    put_u32(t + 14, r->nplies);
    put_u32(t + 18, r->nvisits);
    int bad = frame_out_put(o, t, REC_HEADER_BYTES);
    put_u64(t, r->worker_id);
    put_u64(t + 8, r->game_seq);
    bad = bad || frame_out_put(o, t, REC_ID_BYTES);
    for (uint32_t i = 0; i < r->nplies && !bad; i++) {
        const record_ply_t *p = &r->plies[i];
        put_u16(t, (uint16_t)p->move);
        t[2] = p->full;
        put_u32(t + 3, float_bits(p->root_value));
        put_u16(t + 7, p->nvisits);
        bad = frame_out_put(o, t, REC_PLY_BYTES);
    }
    for (uint32_t i = 0; i < r->nvisits && !bad; i++) {
        put_u16(t, (uint16_t)r->visits[i].move);
        put_u16(t + 2, r->visits[i].count);
        bad = frame_out_put(o, t, REC_VISIT_BYTES);
    }
    if (!bad) {
        put_u32(t, frame_out_crc(o));
        bad = frame_out_put(o, t, REC_CRC_BYTES);
    }
    if (bad) {
        util_errf(err, errlen, "frame: zlib deflate failed");
        frame_out_abort(o);
        return 0;
    }
    return frame_out_finish(o, err, errlen);
}

/* ---- decoder ---- */

int record_decode_payload(const uint8_t *payload, uint32_t plen, game_record_t *out, char *err,
                          size_t errlen)
{
    frame_in_t *z = frame_in_begin(payload, plen, err, errlen);
    if (!z)
        return -1;
    int rc = -1;
    const uint8_t *p = frame_in_get(z, REC_HEADER_BYTES, err, errlen);
    if (!p)
        goto out_free_in;
    if (get_u32(p) != RECORD_MAGIC) {
        util_errf(err, errlen, "record: bad magic 0x%08x", (unsigned)get_u32(p));
        goto out_free_in;
    }
    unsigned version = get_u16(p + 4);
    if (version < 1 || version > RECORD_VERSION) {
        util_errf(err, errlen, "record: version %u, this build reads versions 1 to %d", version,
                  RECORD_VERSION);
        goto out_free_in;
    }
    unsigned rule = p[6], size = p[7], result = p[8], flags = p[9];
    uint32_t gen = get_u32(p + 10), nplies = get_u32(p + 14), nvisits = get_u32(p + 18);
    if (check_header(rule, size, result, flags, nplies, nvisits, err, errlen) != 0)
        goto out_free_in;
    uint64_t worker_id = 0, game_seq = 0;
    if (version >= 2) {
        p = frame_in_get(z, REC_ID_BYTES, err, errlen);
        if (!p)
            goto out_free_in;
        worker_id = get_u64(p);
        game_seq = get_u64(p + 8);
    }
    if (record_reserve(out, nplies, nvisits) != 0) {
        util_errf(err, errlen, "record: out of memory");
        goto out_free_in;
    }
    out->rule = (uint8_t)rule;
    out->size = (uint8_t)size;
    out->result = (uint8_t)result;
    out->flags = (uint8_t)flags;
    out->model_gen = gen;
    out->worker_id = worker_id;
    out->game_seq = game_seq;
    out->nplies = 0;
    out->nvisits = 0;
    int npoints = (int)(size * size);
    uint64_t off = 0;
    for (uint32_t i = 0; i < nplies; i++) {
        p = frame_in_get(z, REC_PLY_BYTES, err, errlen);
        if (!p)
            goto out_free_in;
        int move = (int16_t)get_u16(p);
        float value = bits_float(get_u32(p + 3));
        unsigned nv = get_u16(p + 7);
        if (check_ply(i, move, p[2], value, nv, npoints, err, errlen) != 0)
            goto out_free_in;
        if (off + nv > nvisits) {
            util_errf(err, errlen, "record: ply %u visits run past the %u entries", (unsigned)i + 1,
                    (unsigned)nvisits);
            goto out_free_in;
        }
        record_ply_t *q = &out->plies[i];
        q->move = (int16_t)move;
        q->full = p[2];
        q->root_value = value;
        q->visit_off = (uint32_t)off;
        q->nvisits = (uint16_t)nv;
        off += nv;
    }
    if (off != nvisits) {
        util_errf(err, errlen, "record: plies use %u visit entries, header says %u",
                (unsigned)off, (unsigned)nvisits);
        goto out_free_in;
    }
    for (uint32_t i = 0; i < nvisits; i++) {
        p = frame_in_get(z, REC_VISIT_BYTES, err, errlen);
        if (!p)
            goto out_free_in;
        out->visits[i].move = (int16_t)get_u16(p);
        out->visits[i].count = get_u16(p + 2);
    }
    uint32_t want = frame_in_crc(z);
    p = frame_in_get(z, REC_CRC_BYTES, err, errlen);
    if (!p)
        goto out_free_in;
    if (get_u32(p) != want) {
        util_errf(err, errlen, "record: checksum mismatch");
        goto out_free_in;
    }
    if (frame_in_end(z, err, errlen) != 0)
        goto out_free_in;
    out->nplies = nplies;
    out->nvisits = nvisits;
    uint32_t seen[BOARD_CELLS] = {0};
    for (uint32_t i = 0; i < nplies; i++) {
        const record_ply_t *q = &out->plies[i];
        if (check_visits(i, &out->visits[q->visit_off], q->nvisits, npoints, seen, i + 1, err,
                         errlen) != 0)
            goto out_empty;
    }
    rc = 0;
    goto out_free_in;

out_empty:
    out->nplies = 0;
    out->nvisits = 0;
out_free_in:
    frame_in_free(z);
    return rc;
}


/* ---- records in frames ---- */

frame_status_t record_decode(const uint8_t *buf, size_t len, size_t *consumed,
                             game_record_t *out, char *err, size_t errlen)
{
    uint32_t plen = 0;
    frame_status_t st = frame_open(buf, len, consumed, &plen, err, errlen);
    if (st != FRAME_OK)
        return st;
    if (record_decode_payload(buf + FRAME_HEADER_BYTES, plen, out, err, errlen) != 0)
        return FRAME_BAD;
    return FRAME_OK;
}

int record_write(FILE *f, const game_record_t *r, char *err, size_t errlen)
{
    uint8_t *buf = NULL;
    size_t cap = 0;
    size_t n = record_encode(r, &buf, &cap, err, errlen);
    int rc = -1;
    if (n == 0)
        goto out_free_buf;
    if (fwrite(buf, 1, n, f) != n) {
        util_errf(err, errlen, "write failed: %s", strerror(errno));
        goto out_free_buf;
    }
    rc = 0;
out_free_buf:
    free(buf);
    return rc;
}

int record_stream_next(frame_stream_t *fs, game_record_t *out, const uint8_t **frame,
                       size_t *framelen, char *err, size_t errlen)
{
    const uint8_t *f;
    size_t flen;
    uint64_t off;
    int rc = frame_stream_next(fs, &f, &flen, &off, err, errlen);
    if (rc != 1)
        return rc;
    char why[200];
    if (record_decode_payload(f + FRAME_HEADER_BYTES, (uint32_t)(flen - FRAME_HEADER_BYTES), out,
                              why, sizeof why) != 0) {
        frame_stream_mark_bad(fs);
        util_errf(err, errlen, "bad frame at byte %llu: %s", (unsigned long long)off, why);
        return -1;
    }
    if (frame)
        *frame = f;
    if (framelen)
        *framelen = flen;
    return 1;
}

/* ---- file reader ---- */

struct record_reader {
    int fd;
    frame_stream_t *fs;
    uint64_t read_bytes;
};

record_reader_t *record_reader_open(const char *path, char *err, size_t errlen)
{
    record_reader_t *rr = calloc(1, sizeof *rr);
    if (!rr) {
        util_errf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    rr->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (rr->fd < 0) {
        util_errf(err, errlen, "%s: %s", path, strerror(errno));
        goto out_free_reader;
    }
    rr->fs = frame_stream_create();
    if (!rr->fs) {
        util_errf(err, errlen, "%s: out of memory", path);
        goto out_free_reader;
    }
    return rr;

out_free_reader:   /* the free handles what is not open yet */
    record_reader_free(rr);
    return NULL;
}

void record_reader_free(record_reader_t *rr)
{
    if (!rr)
        return;
    if (rr->fd >= 0)
        close(rr->fd);
    frame_stream_free(rr->fs);
    free(rr);
}

int record_reader_next(record_reader_t *rr, game_record_t *out, char *err, size_t errlen)
{
    for (;;) {
        int rc = record_stream_next(rr->fs, out, NULL, NULL, err, errlen);
        if (rc != 0)
            return rc;
        if (rr->fd < 0)
            return 0;
        ssize_t n = frame_stream_fill(rr->fs, rr->fd);
        if (n > 0) {
            rr->read_bytes += (uint64_t)n;
            continue;
        }
        /* End of file, or a read error: report it once and then end,
         * rather than retry forever. */
        int e = errno;
        close(rr->fd);
        rr->fd = -1;
        frame_stream_set_eof(rr->fs);
        if (n != 0) {
            util_errf(err, errlen, "read error at byte %llu: %s",
                    (unsigned long long)rr->read_bytes, strerror(e));
            return -1;
        }
    }
}
