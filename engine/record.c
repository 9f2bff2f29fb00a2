/* Game records: the in-memory record, its serialised form and its frames.
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
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define RECORD_MAGIC 0x31525a47u   /* "GZR1" little endian */
#define REC_HEADER_BYTES 22
#define REC_ID_BYTES 16         /* version 2: worker id, game sequence */
#define REC_PLY_BYTES 9
#define REC_VISIT_BYTES 4
#define REC_CRC_BYTES 4
#define REC_FLAGS_KNOWN (RECORD_FLAG_RESIGNED | RECORD_FLAG_NO_RESIGN)
#define CHUNK 4096

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

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

void record_clear(game_record_t *r, rule_t rule, int size, uint32_t model_gen)
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

/* Grow the arrays to hold nplies plies and nvisits visits; 0 or -1. */
static int record_reserve(game_record_t *r, uint32_t nplies, uint32_t nvisits)
{
    if (nplies > r->cap_plies) {
        uint32_t cap = r->cap_plies ? r->cap_plies : 64;
        while (cap < nplies)
            cap *= 2;
        record_ply_t *p = realloc(r->plies, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        r->plies = p;
        r->cap_plies = cap;
    }
    if (nvisits > r->cap_visits) {
        uint32_t cap = r->cap_visits ? r->cap_visits : 1024;
        while (cap < nvisits)
            cap *= 2;
        record_visit_t *v = realloc(r->visits, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        r->visits = v;
        r->cap_visits = cap;
    }
    return 0;
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
    dst->rule = src->rule;
    dst->size = src->size;
    dst->result = src->result;
    dst->flags = src->flags;
    dst->model_gen = src->model_gen;
    dst->worker_id = src->worker_id;
    dst->game_seq = src->game_seq;
    dst->nplies = src->nplies;
    dst->nvisits = src->nvisits;
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
        set_err(err, errlen, "record: rule %u unknown", rule);
        return -1;
    }
    if (size < BOARD_MIN || size > BOARD_MAX) {
        set_err(err, errlen, "record: board size %u outside %d..%d", size, BOARD_MIN, BOARD_MAX);
        return -1;
    }
    if (result > RESULT_DRAW) {
        set_err(err, errlen, "record: result %u unknown", result);
        return -1;
    }
    if (flags & ~REC_FLAGS_KNOWN) {
        set_err(err, errlen, "record: unknown flags 0x%02x", flags);
        return -1;
    }
    if (nplies > size * size) {
        set_err(err, errlen, "record: %u plies on a %ux%u board", (unsigned)nplies, size, size);
        return -1;
    }
    if ((uint64_t)nvisits > (uint64_t)nplies * size * size) {
        set_err(err, errlen, "record: %u visit entries for %u plies", (unsigned)nvisits,
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
        set_err(err, errlen, "record: ply %u move %d off the board", (unsigned)i + 1, move);
        return -1;
    }
    if (full > 1) {
        set_err(err, errlen, "record: ply %u full flag %u not 0 or 1", (unsigned)i + 1, full);
        return -1;
    }
    if (!isfinite(value) || value < -1.0f || value > 1.0f) {
        set_err(err, errlen, "record: ply %u root value %g outside [-1,1]", (unsigned)i + 1,
                (double)value);
        return -1;
    }
    if ((int)nvisits > npoints) {
        set_err(err, errlen, "record: ply %u has %u visit entries for %d points", (unsigned)i + 1,
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
            set_err(err, errlen, "record: ply %u visit %u at point %d off the board",
                    (unsigned)i + 1, k + 1, m);
            return -1;
        }
        if (seen[m] == stamp) {
            set_err(err, errlen, "record: ply %u lists point %d twice", (unsigned)i + 1, m);
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
            set_err(err, errlen, "record: ply %u visits start at %u, expected %u", (unsigned)i + 1,
                    (unsigned)p->visit_off, (unsigned)off);
            return -1;
        }
        if ((uint64_t)off + p->nvisits > r->nvisits) {
            set_err(err, errlen, "record: ply %u visits run past the %u entries", (unsigned)i + 1,
                    (unsigned)r->nvisits);
            return -1;
        }
        if (check_visits(i, &r->visits[off], p->nvisits, npoints, seen, i + 1, err, errlen) != 0)
            return -1;
        off += p->nvisits;
    }
    if (off != r->nvisits) {
        set_err(err, errlen, "record: plies use %u visit entries, record holds %u",
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
            set_err(err, errlen, "ply %u: the game was already over (%s)", (unsigned)i + 1,
                    result_str((result_t)b.result));
            return -1;
        }
        for (unsigned k = 0; k < p->nvisits; k++) {
            int m = r->visits[p->visit_off + k].move;
            if (b.cells[m] != STONE_EMPTY) {
                move_format_xy(m, r->size, xy, sizeof xy);
                set_err(err, errlen, "ply %u: visits on occupied point %s", (unsigned)i + 1, xy);
                return -1;
            }
        }
        move_status_t st = board_play(&b, p->move);
        if (st != MOVE_OK) {
            move_format_xy(p->move, r->size, xy, sizeof xy);
            set_err(err, errlen, "ply %u: move %s is illegal: %s", (unsigned)i + 1, xy,
                    move_status_str(st));
            return -1;
        }
    }
    if (r->flags & RECORD_FLAG_RESIGNED) {
        /* The side to move after the last ply resigned: the game must still be
         * open and one colour must have won. */
        if (board_over(&b)) {
            set_err(err, errlen, "resigned game ends in a finished position (%s)",
                    result_str((result_t)b.result));
            return -1;
        }
        if (r->result != RESULT_BLACK && r->result != RESULT_WHITE) {
            set_err(err, errlen, "resigned game has result %s",
                    result_str((result_t)r->result));
            return -1;
        }
        return 0;
    }
    if (r->result != b.result) {
        set_err(err, errlen, "result %s does not match the final position (%s)",
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

/* ---- encoder: serialise in CHUNK pieces straight into deflate ---- */

typedef struct zout {
    z_stream zs;
    uint8_t chunk[CHUNK];
    size_t n;           /* bytes waiting in chunk */
    uLong crc;          /* inner CRC of everything serialised so far */
} zout_t;

/* Feed the chunk to deflate; its output buffer holds deflateBound bytes,
 * so deflate always takes all of it. */
static int zout_flush(zout_t *z)
{
    if (z->n == 0)
        return 0;
    z->crc = crc32(z->crc, z->chunk, (uInt)z->n);
    z->zs.next_in = z->chunk;
    z->zs.avail_in = (uInt)z->n;
    int ret = deflate(&z->zs, Z_NO_FLUSH);
    z->n = 0;
    return (ret == Z_OK && z->zs.avail_in == 0) ? 0 : -1;
}

static int zout_put(zout_t *z, const uint8_t *p, size_t len)
{
    if (z->n + len > CHUNK && zout_flush(z) != 0)
        return -1;
    memcpy(z->chunk + z->n, p, len);
    z->n += len;
    return 0;
}

static size_t serial_bytes(uint32_t nplies, uint32_t nvisits)
{
    return REC_HEADER_BYTES + REC_ID_BYTES + (size_t)nplies * REC_PLY_BYTES + (size_t)nvisits * REC_VISIT_BYTES +
           REC_CRC_BYTES;
}

size_t frame_encode(const game_record_t *r, uint8_t **buf, size_t *cap, char *err, size_t errlen)
{
    if (record_check(r, err, errlen) != 0)
        return 0;
    size_t slen = serial_bytes(r->nplies, r->nvisits);
    zout_t *z = malloc(sizeof *z);
    if (!z) {
        set_err(err, errlen, "frame: out of memory");
        return 0;
    }
    memset(&z->zs, 0, sizeof z->zs);
    z->n = 0;
    z->crc = crc32(0L, Z_NULL, 0);
    if (deflateInit(&z->zs, Z_DEFAULT_COMPRESSION) != Z_OK) {
        set_err(err, errlen, "frame: zlib deflateInit failed");
        goto out_free_z;
    }
    size_t need = FRAME_HEADER_BYTES + deflateBound(&z->zs, (uLong)slen);
    if (need > FRAME_HEADER_BYTES + FRAME_MAX_PAYLOAD) {
        set_err(err, errlen, "frame: record too large (%zu bytes)", slen);
        goto out_end_deflate;
    }
    if (*cap < need) {
        uint8_t *nb = realloc(*buf, need);
        if (!nb) {
            set_err(err, errlen, "frame: out of memory");
            goto out_end_deflate;
        }
        *buf = nb;
        *cap = need;
    }
    z->zs.next_out = *buf + FRAME_HEADER_BYTES;
    z->zs.avail_out = (uInt)(need - FRAME_HEADER_BYTES);

    uint8_t t[REC_HEADER_BYTES];
    put_u32(t, RECORD_MAGIC);
    put_u16(t + 4, RECORD_VERSION);
    t[6] = r->rule;
    t[7] = r->size;
    t[8] = r->result;
    t[9] = r->flags;
    put_u32(t + 10, r->model_gen);
    put_u32(t + 14, r->nplies);
    put_u32(t + 18, r->nvisits);
    int bad = zout_put(z, t, REC_HEADER_BYTES);
    put_u64(t, r->worker_id);
    put_u64(t + 8, r->game_seq);
    bad = bad || zout_put(z, t, REC_ID_BYTES);
    for (uint32_t i = 0; i < r->nplies && !bad; i++) {
        const record_ply_t *p = &r->plies[i];
        put_u16(t, (uint16_t)p->move);
        t[2] = p->full;
        put_u32(t + 3, float_bits(p->root_value));
        put_u16(t + 7, p->nvisits);
        bad = zout_put(z, t, REC_PLY_BYTES);
    }
    for (uint32_t i = 0; i < r->nvisits && !bad; i++) {
        put_u16(t, (uint16_t)r->visits[i].move);
        put_u16(t + 2, r->visits[i].count);
        bad = zout_put(z, t, REC_VISIT_BYTES);
    }
    if (!bad)
        bad = zout_flush(z);
    if (!bad) {
        put_u32(z->chunk, (uint32_t)z->crc);
        z->zs.next_in = z->chunk;
        z->zs.avail_in = REC_CRC_BYTES;
        bad = deflate(&z->zs, Z_FINISH) != Z_STREAM_END;
    }
    if (bad) {
        set_err(err, errlen, "frame: zlib deflate failed");
        goto out_end_deflate;
    }
    size_t plen = z->zs.total_out;
    deflateEnd(&z->zs);
    free(z);
    put_u32(*buf, FRAME_MAGIC);
    put_u32(*buf + 4, (uint32_t)plen);
    put_u32(*buf + 8, (uint32_t)crc32(0L, *buf + FRAME_HEADER_BYTES, (uInt)plen));
    return FRAME_HEADER_BYTES + plen;

out_end_deflate:
    deflateEnd(&z->zs);
out_free_z:
    free(z);
    return 0;
}

/* ---- decoder: inflate in CHUNK pieces, never more than the fields need ---- */

typedef struct zin {
    z_stream zs;
    uint8_t chunk[CHUNK];
    size_t pos, have;   /* chunk[pos..have) not yet parsed */
    size_t crc_from;    /* chunk[crc_from..pos) parsed but not yet in crc */
    uLong crc;
    int ended;          /* inflate reached the end of the zlib stream */
} zin_t;

static int zin_fill(zin_t *z, char *err, size_t errlen)
{
    z->crc = crc32(z->crc, z->chunk + z->crc_from, (uInt)(z->pos - z->crc_from));
    size_t keep = z->have - z->pos;
    memmove(z->chunk, z->chunk + z->pos, keep);
    z->pos = 0;
    z->crc_from = 0;
    z->have = keep;
    if (z->ended) {
        set_err(err, errlen, "record: data ends early");
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
        set_err(err, errlen, "zlib: compressed data truncated");
    else if (ret == Z_MEM_ERROR)
        set_err(err, errlen, "zlib: out of memory");
    else
        set_err(err, errlen, "zlib: %s", z->zs.msg ? z->zs.msg : "corrupt data");
    return -1;
}

/* Next n (<= 64) bytes of the serialised record. */
static const uint8_t *zin_get(zin_t *z, size_t n, char *err, size_t errlen)
{
    while (z->have - z->pos < n)
        if (zin_fill(z, err, errlen) != 0)
            return NULL;
    const uint8_t *p = z->chunk + z->pos;
    z->pos += n;
    return p;
}

static uLong zin_crc(zin_t *z)
{
    z->crc = crc32(z->crc, z->chunk + z->crc_from, (uInt)(z->pos - z->crc_from));
    z->crc_from = z->pos;
    return z->crc;
}

/* Whether nothing follows: no serialised bytes, no zlib data, no payload bytes. */
static int zin_at_end(zin_t *z, char *err, size_t errlen)
{
    if (z->have != z->pos) {
        set_err(err, errlen, "record: trailing bytes after the record");
        return -1;
    }
    while (!z->ended) {
        uint8_t extra[16];
        z->zs.next_out = extra;
        z->zs.avail_out = sizeof extra;
        int ret = inflate(&z->zs, Z_NO_FLUSH);
        if (z->zs.avail_out != sizeof extra) {
            set_err(err, errlen, "record: trailing bytes after the record");
            return -1;
        }
        if (ret == Z_STREAM_END) {
            z->ended = 1;
        } else if (ret != Z_OK) {
            set_err(err, errlen, "zlib: %s",
                    ret == Z_BUF_ERROR ? "compressed data truncated"
                                       : (z->zs.msg ? z->zs.msg : "corrupt data"));
            return -1;
        }
    }
    if (z->zs.avail_in != 0) {
        set_err(err, errlen, "frame: %u bytes after the zlib stream", z->zs.avail_in);
        return -1;
    }
    return 0;
}

static int decode_payload(const uint8_t *payload, uint32_t plen, game_record_t *out, char *err,
                          size_t errlen)
{
    zin_t *z = malloc(sizeof *z);
    if (!z) {
        set_err(err, errlen, "frame: out of memory");
        return -1;
    }
    memset(&z->zs, 0, sizeof z->zs);
    z->pos = z->have = z->crc_from = 0;
    z->crc = crc32(0L, Z_NULL, 0);
    z->ended = 0;
    z->zs.next_in = (Bytef *)payload;
    z->zs.avail_in = plen;
    int rc = -1;
    if (inflateInit(&z->zs) != Z_OK) {
        set_err(err, errlen, "zlib: inflateInit failed");
        goto out_free_z;
    }
    const uint8_t *p = zin_get(z, REC_HEADER_BYTES, err, errlen);
    if (!p)
        goto out_end_inflate;
    if (get_u32(p) != RECORD_MAGIC) {
        set_err(err, errlen, "record: bad magic 0x%08x", (unsigned)get_u32(p));
        goto out_end_inflate;
    }
    unsigned version = get_u16(p + 4);
    if (version < 1 || version > RECORD_VERSION) {
        set_err(err, errlen, "record: version %u, this build reads versions 1 to %d", version,
                RECORD_VERSION);
        goto out_end_inflate;
    }
    unsigned rule = p[6], size = p[7], result = p[8], flags = p[9];
    uint32_t gen = get_u32(p + 10), nplies = get_u32(p + 14), nvisits = get_u32(p + 18);
    if (check_header(rule, size, result, flags, nplies, nvisits, err, errlen) != 0)
        goto out_end_inflate;
    uint64_t worker_id = 0, game_seq = 0;
    if (version >= 2) {
        p = zin_get(z, REC_ID_BYTES, err, errlen);
        if (!p)
            goto out_end_inflate;
        worker_id = get_u64(p);
        game_seq = get_u64(p + 8);
    }
    if (record_reserve(out, nplies, nvisits) != 0) {
        set_err(err, errlen, "record: out of memory");
        goto out_end_inflate;
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
        p = zin_get(z, REC_PLY_BYTES, err, errlen);
        if (!p)
            goto out_end_inflate;
        int move = (int16_t)get_u16(p);
        float value = bits_float(get_u32(p + 3));
        unsigned nv = get_u16(p + 7);
        if (check_ply(i, move, p[2], value, nv, npoints, err, errlen) != 0)
            goto out_end_inflate;
        if (off + nv > nvisits) {
            set_err(err, errlen, "record: ply %u visits run past the %u entries", (unsigned)i + 1,
                    (unsigned)nvisits);
            goto out_end_inflate;
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
        set_err(err, errlen, "record: plies use %u visit entries, header says %u",
                (unsigned)off, (unsigned)nvisits);
        goto out_end_inflate;
    }
    for (uint32_t i = 0; i < nvisits; i++) {
        p = zin_get(z, REC_VISIT_BYTES, err, errlen);
        if (!p)
            goto out_end_inflate;
        out->visits[i].move = (int16_t)get_u16(p);
        out->visits[i].count = get_u16(p + 2);
    }
    uLong want = zin_crc(z);
    p = zin_get(z, REC_CRC_BYTES, err, errlen);
    if (!p)
        goto out_end_inflate;
    if (get_u32(p) != (uint32_t)want) {
        set_err(err, errlen, "record: checksum mismatch");
        goto out_end_inflate;
    }
    if (zin_at_end(z, err, errlen) != 0)
        goto out_end_inflate;
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
    goto out_end_inflate;

out_empty:
    out->nplies = 0;
    out->nvisits = 0;
out_end_inflate:
    inflateEnd(&z->zs);
out_free_z:
    free(z);
    return rc;
}

/* ---- frames ---- */

static const uint8_t frame_magic_bytes[4] = {
    FRAME_MAGIC & 0xff, (FRAME_MAGIC >> 8) & 0xff, (FRAME_MAGIC >> 16) & 0xff, FRAME_MAGIC >> 24,
};

/* Whether buf[0..len) could be the start of a frame's magic. */
static int magic_prefix(const uint8_t *buf, size_t len)
{
    return memcmp(buf, frame_magic_bytes, len < 4 ? len : 4) == 0;
}

bool frame_at_magic(const uint8_t *buf, size_t len)
{
    return magic_prefix(buf, len);
}

/* Distance from buf to the next place a frame could start (>= 1). */
static size_t frame_resync(const uint8_t *buf, size_t len)
{
    for (size_t i = 1; i < len; i++)
        if (buf[i] == frame_magic_bytes[0] && magic_prefix(buf + i, len - i))
            return i;
    return len;
}

frame_status_t frame_decode(const uint8_t *buf, size_t len, size_t *consumed,
                            game_record_t *out, char *err, size_t errlen)
{
    *consumed = 0;
    if (len == 0)
        return FRAME_NEED_MORE;
    if (!magic_prefix(buf, len)) {
        set_err(err, errlen, "bad magic (not a frame start)");
        *consumed = frame_resync(buf, len);
        return FRAME_BAD;
    }
    if (len < FRAME_HEADER_BYTES)
        return FRAME_NEED_MORE;
    uint32_t plen = get_u32(buf + 4);
    if (plen > FRAME_MAX_PAYLOAD) {
        set_err(err, errlen, "payload length %u over the limit %u", (unsigned)plen,
                (unsigned)FRAME_MAX_PAYLOAD);
        *consumed = frame_resync(buf, len);
        return FRAME_BAD;
    }
    if (len - FRAME_HEADER_BYTES < plen)
        return FRAME_NEED_MORE;
    const uint8_t *payload = buf + FRAME_HEADER_BYTES;
    if ((uint32_t)crc32(0L, payload, plen) != get_u32(buf + 8)) {
        set_err(err, errlen, "crc mismatch");
        *consumed = frame_resync(buf, len);
        return FRAME_BAD;
    }
    /* The CRC vouches for the length, so a bad record skips the whole frame. */
    *consumed = FRAME_HEADER_BYTES + (size_t)plen;
    if (decode_payload(payload, plen, out, err, errlen) != 0)
        return FRAME_BAD;
    return FRAME_OK;
}

int frame_write(FILE *f, const game_record_t *r, char *err, size_t errlen)
{
    uint8_t *buf = NULL;
    size_t cap = 0;
    size_t n = frame_encode(r, &buf, &cap, err, errlen);
    int rc = -1;
    if (n == 0)
        goto out_free_buf;
    if (fwrite(buf, 1, n, f) != n) {
        set_err(err, errlen, "write failed: %s", strerror(errno));
        goto out_free_buf;
    }
    rc = 0;
out_free_buf:
    free(buf);
    return rc;
}

/* ---- file reader ---- */

struct frame_reader {
    FILE *f;
    uint8_t *buf;
    size_t cap, start, end;   /* buf[start..end) read but not yet decoded */
    uint64_t off;             /* file offset of buf[start] */
    int eof;
    int in_bad;               /* the last result was a bad frame */
};

frame_reader_t *frame_reader_open(const char *path, char *err, size_t errlen)
{
    frame_reader_t *fr = calloc(1, sizeof *fr);
    if (!fr) {
        set_err(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    fr->f = fopen(path, "rb");
    if (!fr->f) {
        set_err(err, errlen, "%s: %s", path, strerror(errno));
        goto out_free_fr;
    }
    fr->cap = 64 * 1024;
    fr->buf = malloc(fr->cap);
    if (!fr->buf) {
        set_err(err, errlen, "%s: out of memory", path);
        goto out_close;
    }
    return fr;

out_close:
    fclose(fr->f);
out_free_fr:
    free(fr);
    return NULL;
}

void frame_reader_free(frame_reader_t *fr)
{
    if (!fr)
        return;
    fclose(fr->f);
    free(fr->buf);
    free(fr);
}

/* Read more of the file; 0, or -1 on a read error. Sets eof at the end. */
static int reader_fill(frame_reader_t *fr, char *err, size_t errlen)
{
    if (fr->start > 0) {
        memmove(fr->buf, fr->buf + fr->start, fr->end - fr->start);
        fr->end -= fr->start;
        fr->start = 0;
    }
    if (fr->end == fr->cap) {
        /* A frame never exceeds the header plus the largest payload. */
        size_t ncap = fr->cap * 2;
        if (ncap > FRAME_HEADER_BYTES + FRAME_MAX_PAYLOAD)
            ncap = FRAME_HEADER_BYTES + FRAME_MAX_PAYLOAD;
        assert(ncap > fr->cap);
        uint8_t *nb = realloc(fr->buf, ncap);
        if (!nb) {
            set_err(err, errlen, "out of memory");
            return -1;
        }
        fr->buf = nb;
        fr->cap = ncap;
    }
    size_t n = fread(fr->buf + fr->end, 1, fr->cap - fr->end, fr->f);
    fr->end += n;
    if (n == 0) {
        if (ferror(fr->f)) {
            /* Report once and then end, rather than retry forever. */
            set_err(err, errlen, "read error at byte %llu: %s",
                    (unsigned long long)(fr->off + fr->end - fr->start), strerror(errno));
            fr->eof = 1;
            return -1;
        }
        fr->eof = 1;
    }
    return 0;
}

int frame_reader_next(frame_reader_t *fr, game_record_t *out, char *err, size_t errlen)
{
    char why[200];
    for (;;) {
        size_t avail = fr->end - fr->start, used = 0;
        const uint8_t *p = fr->buf + fr->start;
        frame_status_t st = frame_decode(p, avail, &used, out, why, sizeof why);
        if (st == FRAME_OK) {
            fr->start += used;
            fr->off += used;
            fr->in_bad = 0;
            return 1;
        }
        if (st == FRAME_BAD) {
            /* Garbage that goes on past what the last read brought in is
             * the stretch already reported. */
            int more_of_same = fr->in_bad && !magic_prefix(p, avail);
            if (!more_of_same)
                set_err(err, errlen, "bad frame at byte %llu: %s", (unsigned long long)fr->off,
                        why);
            fr->start += used;
            fr->off += used;
            fr->in_bad = 1;
            if (more_of_same)
                continue;
            return -1;
        }
        if (fr->eof) {
            if (avail == 0)
                return 0;
            if (avail < FRAME_HEADER_BYTES)
                set_err(err, errlen, "bad frame at byte %llu: truncated header (%zu bytes)",
                        (unsigned long long)fr->off, avail);
            else
                set_err(err, errlen,
                        "bad frame at byte %llu: truncated (payload %u bytes, %zu in file)",
                        (unsigned long long)fr->off, (unsigned)get_u32(p + 4),
                        avail - FRAME_HEADER_BYTES);
            used = frame_resync(p, avail);
            fr->start += used;
            fr->off += used;
            fr->in_bad = 1;
            return -1;
        }
        if (reader_fill(fr, why, sizeof why) != 0) {
            set_err(err, errlen, "%s", why);
            return -1;
        }
    }
}
