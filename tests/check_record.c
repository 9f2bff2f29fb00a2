/* Game records and frames: exact round trips of random games, random
 * corruptions that must be rejected (or decode to exactly the original),
 * resynchronisation after garbage, streaming one byte at a time, and the
 * `gomoku records` subcommand through the real binary ($GOMOKU_BIN). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "engine/board.h"
#include "engine/gamefile.h"
#include "engine/record.h"
#include "tests/testkit.h"

/* Serialised-record layout facts the corruption tests rely on (record.c). */
#define SER_VERSION_OFF 4
#define SER_CRC_BYTES 4

/* ---- random numbers (xorshift64*) ---- */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static uint32_t rng_below(uint64_t *s, uint32_t n)
{
    return (uint32_t)((rng_next(s) >> 32) % n);
}

/* ---- random legal games ---- */

static float random_value(uint64_t *s)
{
    switch (rng_below(s, 8)) {
    case 0: return 1.0f;
    case 1: return -1.0f;
    case 2: return -0.0f;
    case 3: return 0.0f;
    default: return (float)((double)rng_below(s, 2000001) / 1000000.0 - 1.0);
    }
}

/* A random legal game on a random size and rule, with random sparse visit
 * lists, values and flags. It passes record_validate: it ends in a five or
 * a full board, or is cut off and then either resigned by the side to move
 * or left unfinished. */
static void random_game(game_record_t *r, uint64_t *s)
{
    int size = BOARD_MIN + (int)rng_below(s, BOARD_MAX - BOARD_MIN + 1);
    rule_t rule = (rule_t)rng_below(s, RULE_COUNT);
    record_clear(r, rule, size, (uint32_t)rng_next(s));
    if (rng_below(s, 4) != 0) {
        r->worker_id = rng_next(s);
        r->game_seq = rng_below(s, 2) ? rng_next(s) : rng_below(s, 1000);
    }
    board_t b;
    board_init(&b, size, rule);
    int npoints = size * size;
    int empty[BOARD_CELLS], nempty = npoints;
    for (int i = 0; i < npoints; i++)
        empty[i] = i;
    int cut = rng_below(s, 3) == 0 ? (int)rng_below(s, (uint32_t)npoints) : -1;
    record_visit_t v[BOARD_CELLS];
    while (!board_over(&b) && (int)r->nplies != cut) {
        /* Visits: distinct empty points, by a partial shuffle of empty[]. */
        int nv = rng_below(s, 4) == 0 ? 0 : (int)rng_below(s, (uint32_t)(nempty < 24 ? nempty : 24) + 1);
        for (int k = 0; k < nv; k++) {
            int j = k + (int)rng_below(s, (uint32_t)(nempty - k));
            int t = empty[k];
            empty[k] = empty[j];
            empty[j] = t;
            v[k].move = (int16_t)empty[k];
            v[k].count = rng_below(s, 8) == 0 ? 65535 : (uint16_t)rng_below(s, 2000);
        }
        int pick = -1;
        for (int tries = 0; tries < 64 && pick < 0; tries++) {
            int j = (int)rng_below(s, (uint32_t)nempty);
            if (board_check_move(&b, empty[j]) == MOVE_OK)
                pick = j;
        }
        for (int j = 0; j < nempty && pick < 0; j++)
            if (board_check_move(&b, empty[j]) == MOVE_OK)
                pick = j;
        if (pick < 0)
            break;   /* black has only forbidden points left: leave it unfinished */
        int move = empty[pick];
        empty[pick] = empty[--nempty];
        ck_assert_int_eq(record_add_ply(r, move, (int)rng_below(s, 2), random_value(s), v, nv), 0);
        ck_assert_int_eq(board_play(&b, move), MOVE_OK);
    }
    if (board_over(&b)) {
        r->result = b.result;
        r->flags = rng_below(s, 2) ? RECORD_FLAG_NO_RESIGN : 0;
    } else if (rng_below(s, 2)) {
        r->result = b.to_move == STONE_BLACK ? RESULT_WHITE : RESULT_BLACK;
        r->flags = RECORD_FLAG_RESIGNED;
    } else {
        r->result = RESULT_NONE;
        r->flags = rng_below(s, 2) ? RECORD_FLAG_NO_RESIGN : 0;
    }
}

static size_t encode(const game_record_t *r, uint8_t **buf, size_t *cap)
{
    char err[256] = "";
    size_t n = record_encode(r, buf, cap, err, sizeof err);
    ck_assert_msg(n > FRAME_HEADER_BYTES, "record_encode failed: %s", err);
    return n;
}

/* ---- scanning a byte sequence as a stream ----
 * Feeds buf to record_decode in pieces of `piece` bytes (0: all at once),
 * the way a pipe reader would, and at the end treats a leftover valid
 * prefix as a truncated frame, the way the file reader does. Collects the
 * good records and the file offsets of the bad stretches. */

#define MAX_SCAN 512

typedef struct scan {
    game_record_t recs[MAX_SCAN];
    int nrecs;
    uint64_t bad_off[MAX_SCAN];
    int nbad;
} scan_t;

static void scan_init(scan_t *sc)
{
    memset(sc, 0, sizeof *sc);
    for (int i = 0; i < MAX_SCAN; i++)
        record_init(&sc->recs[i]);
}

static void scan_free(scan_t *sc)
{
    for (int i = 0; i < MAX_SCAN; i++)
        record_free(&sc->recs[i]);
}

/* Decode what acc[*start..have) holds; eof: no more bytes will come. */
static void scan_drain(scan_t *sc, const uint8_t *acc, size_t have, size_t *start, int *in_bad,
                       int eof)
{
    while (*start < have) {
        size_t avail = have - *start, used = (size_t)-1;
        char err[256] = "";
        ck_assert_int_lt(sc->nrecs, MAX_SCAN);
        frame_status_t st = record_decode(acc + *start, avail, &used, &sc->recs[sc->nrecs], err,
                                         sizeof err);
        if (st == FRAME_OK) {
            ck_assert(used >= FRAME_HEADER_BYTES && used <= avail);
            sc->nrecs++;
            *in_bad = 0;
        } else if (st == FRAME_BAD) {
            ck_assert_msg(err[0] != '\0', "FRAME_BAD without a message");
            ck_assert(used >= 1 && used <= avail);
            if (!(*in_bad && !frame_at_magic(acc + *start, avail))) {
                ck_assert_int_lt(sc->nbad, MAX_SCAN);
                sc->bad_off[sc->nbad++] = *start;
            }
            *in_bad = 1;
        } else {
            ck_assert_int_eq(st, FRAME_NEED_MORE);
            ck_assert(used == 0);
            ck_assert(frame_at_magic(acc + *start, avail));
            if (!eof)
                return;
            /* Truncated at the end: one bad frame, then look past its first byte. */
            ck_assert_int_lt(sc->nbad, MAX_SCAN);
            sc->bad_off[sc->nbad++] = *start;
            *in_bad = 1;
            used = 1;
        }
        *start += used;
    }
}

static void scan_stream(scan_t *sc, const uint8_t *buf, size_t len, size_t piece, uint64_t *rs)
{
    uint8_t *acc = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(acc);
    size_t have = 0, start = 0;
    int in_bad = 0;
    while (have < len) {
        size_t n = piece ? piece : len - have;
        if (rs)
            n = 1 + rng_below(rs, 4096);
        if (n > len - have)
            n = len - have;
        memcpy(acc + have, buf + have, n);
        have += n;
        scan_drain(sc, acc, have, &start, &in_bad, 0);
    }
    scan_drain(sc, acc, have, &start, &in_bad, 1);
    free(acc);
}

/* Reads path with record_reader: the same collection as scan_stream. */
static void scan_file(scan_t *sc, const char *path)
{
    char err[256];
    record_reader_t *fr = record_reader_open(path, err, sizeof err);
    ck_assert_msg(fr != NULL, "record_reader_open: %s", err);
    int st;
    for (;;) {
        ck_assert_int_lt(sc->nrecs, MAX_SCAN);
        err[0] = '\0';
        st = record_reader_next(fr, &sc->recs[sc->nrecs], err, sizeof err);
        if (st == 0)
            break;
        if (st == 1) {
            sc->nrecs++;
            continue;
        }
        ck_assert_int_eq(st, -1);
        unsigned long long off;
        ck_assert_msg(sscanf(err, "bad frame at byte %llu:", &off) == 1, "reader error '%s'", err);
        ck_assert_msg(strchr(err, '\n') == NULL, "multi-line error '%s'", err);
        ck_assert_int_lt(sc->nbad, MAX_SCAN);
        sc->bad_off[sc->nbad++] = off;
    }
    record_reader_free(fr);
}

/* sc read the records recs[0..nrecs) and reported bad frames at
 * bad_off[0..nbad), in that order. */
static void assert_scan_is(const scan_t *sc, const game_record_t *recs, int nrecs,
                           const uint64_t *bad_off, int nbad)
{
    ck_assert_int_eq(sc->nrecs, nrecs);
    for (int i = 0; i < nrecs; i++)
        ck_assert_msg(record_equal(&sc->recs[i], &recs[i]), "record %d differs", i);
    ck_assert_int_eq(sc->nbad, nbad);
    for (int i = 0; i < nbad; i++)
        ck_assert_msg(sc->bad_off[i] == bad_off[i], "bad frame %d reported at %llu, is at %llu",
                      i, (unsigned long long)sc->bad_off[i], (unsigned long long)bad_off[i]);
}

static void assert_same_scan(const scan_t *a, const scan_t *b)
{
    assert_scan_is(a, b->recs, b->nrecs, b->bad_off, b->nbad);
}

static char tmpdir[256];

/* ---- round trips ---- */

START_TEST(test_roundtrip_random_games)
{
    int n = asan() ? 1000 : 10000;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    game_record_t r, d, c;
    record_init(&r);
    record_init(&d);
    record_init(&c);
    uint8_t *buf = NULL;
    size_t cap = 0;
    uint64_t plies = 0, visits = 0, by_rule[RULE_COUNT] = {0}, resigned = 0;
    int sizes_seen[BOARD_MAX + 1] = {0};
    for (int i = 0; i < n; i++) {
        random_game(&r, &s);
        char err[256] = "";
        ck_assert_msg(record_validate(&r, err, sizeof err) == 0, "game %d invalid: %s", i, err);
        size_t len = encode(&r, &buf, &cap);
        size_t used = 0;
        frame_status_t st = record_decode(buf, len, &used, &d, err, sizeof err);
        ck_assert_msg(st == FRAME_OK, "game %d: decode status %d: %s", i, st, err);
        ck_assert_uint_eq(used, len);
        ck_assert_msg(record_equal(&r, &d), "game %d does not round-trip", i);
        ck_assert_int_eq(record_copy(&c, &d), 0);
        ck_assert(record_equal(&c, &r));
        plies += r.nplies;
        visits += r.nvisits;
        by_rule[r.rule]++;
        resigned += (r.flags & RECORD_FLAG_RESIGNED) != 0;
        sizes_seen[r.size] = 1;
    }
    /* The generator really covered rules, sizes and resignations. */
    for (int k = 0; k < RULE_COUNT; k++)
        ck_assert_uint_gt(by_rule[k], (uint64_t)n / 5);
    for (int sz = BOARD_MIN; sz <= BOARD_MAX; sz++)
        ck_assert_msg(sizes_seen[sz], "size %d never generated", sz);
    ck_assert_uint_gt(resigned, 0);
    ck_assert_uint_gt(plies, (uint64_t)n * 10);
    ck_assert_uint_gt(visits, plies * 3);
    free(buf);
    record_free(&r);
    record_free(&d);
    record_free(&c);
}
END_TEST

START_TEST(test_every_prefix_needs_more)
{
    uint64_t s = 7;
    game_record_t r, d;
    record_init(&r);
    record_init(&d);
    uint8_t *buf = NULL;
    size_t cap = 0;
    for (int g = 0; g < 20; g++) {
        random_game(&r, &s);
        size_t len = encode(&r, &buf, &cap);
        for (size_t k = 0; k < len; k++) {
            size_t used = 99;
            char err[64];
            ck_assert_int_eq(record_decode(buf, k, &used, &d, err, sizeof err), FRAME_NEED_MORE);
            ck_assert_uint_eq(used, 0);
        }
        size_t used = 0;
        ck_assert_int_eq(record_decode(buf, len, &used, &d, NULL, 0), FRAME_OK);
        ck_assert(record_equal(&r, &d));
    }
    free(buf);
    record_free(&r);
    record_free(&d);
}
END_TEST

START_TEST(test_empty_game_and_limits)
{
    game_record_t r, d;
    record_init(&r);
    record_init(&d);
    uint8_t *buf = NULL;
    size_t cap = 0, used;
    /* No plies at all. */
    record_clear(&r, RULE_STANDARD, 9, 0);
    size_t len = encode(&r, &buf, &cap);
    ck_assert_int_eq(record_decode(buf, len, &used, &d, NULL, 0), FRAME_OK);
    ck_assert(record_equal(&r, &d));
    /* The largest record: a full 20x20 board with every point visited at every ply. */
    record_clear(&r, RULE_FREESTYLE, BOARD_MAX, UINT32_MAX);
    record_visit_t v[BOARD_CELLS];
    for (int i = 0; i < BOARD_CELLS; i++) {
        v[i].move = (int16_t)i;
        v[i].count = (uint16_t)(i * 163);
    }
    for (int i = 0; i < BOARD_CELLS; i++)
        ck_assert_int_eq(record_add_ply(&r, i, i & 1, (float)i / BOARD_CELLS, v, BOARD_CELLS), 0);
    r.result = RESULT_DRAW;
    len = encode(&r, &buf, &cap);
    ck_assert_uint_le(len, FRAME_HEADER_BYTES + FRAME_MAX_PAYLOAD);
    ck_assert_int_eq(record_decode(buf, len, &used, &d, NULL, 0), FRAME_OK);
    ck_assert(record_equal(&r, &d));
    ck_assert_uint_eq(d.nvisits, BOARD_CELLS * BOARD_CELLS);
    free(buf);
    record_free(&r);
    record_free(&d);
}
END_TEST

/* ---- what the encoder and the validator refuse ---- */

START_TEST(test_encode_refuses_bad_records)
{
    game_record_t r;
    record_init(&r);
    uint8_t *buf = NULL;
    size_t cap = 0;
    char err[256];
    record_visit_t v[2] = {{.move = 3, .count = 5}, {.move = 4, .count = 1}};
    const float bad_values[] = {NAN, INFINITY, -INFINITY, 1.0001f, -1.5f};
    for (size_t k = 0; k < sizeof bad_values / sizeof bad_values[0]; k++) {
        record_clear(&r, RULE_FREESTYLE, 15, 1);
        ck_assert_int_eq(record_add_ply(&r, 112, 1, bad_values[k], v, 2), 0);
        err[0] = '\0';
        ck_assert_uint_eq(record_encode(&r, &buf, &cap, err, sizeof err), 0);
        ck_assert_msg(strstr(err, "root value") != NULL, "message '%s'", err);
    }
    record_clear(&r, RULE_FREESTYLE, 15, 1);
    ck_assert_int_eq(record_add_ply(&r, 112, 1, 0.5f, v, 2), 0);
    r.plies[0].move = 225;
    ck_assert_uint_eq(record_encode(&r, &buf, &cap, err, sizeof err), 0);
    ck_assert_msg(strstr(err, "off the board") != NULL, "message '%s'", err);
    r.plies[0].move = 112;
    r.visits[1].move = 3;
    ck_assert_uint_eq(record_encode(&r, &buf, &cap, err, sizeof err), 0);
    ck_assert_msg(strstr(err, "twice") != NULL, "message '%s'", err);
    r.visits[1].move = 4;
    r.plies[0].visit_off = 1;
    ck_assert_uint_eq(record_encode(&r, &buf, &cap, err, sizeof err), 0);
    r.plies[0].visit_off = 0;
    r.result = 7;
    ck_assert_uint_eq(record_encode(&r, &buf, &cap, err, sizeof err), 0);
    r.result = RESULT_NONE;
    r.flags = 0x80;
    ck_assert_uint_eq(record_encode(&r, &buf, &cap, err, sizeof err), 0);
    r.flags = 0;
    r.size = 4;
    ck_assert_uint_eq(record_encode(&r, &buf, &cap, err, sizeof err), 0);
    r.size = 15;
    r.rule = RULE_COUNT;
    ck_assert_uint_eq(record_encode(&r, &buf, &cap, err, sizeof err), 0);
    r.rule = RULE_FREESTYLE;
    ck_assert_uint_gt(record_encode(&r, &buf, &cap, err, sizeof err), 0);
    free(buf);
    record_free(&r);
}
END_TEST

START_TEST(test_validate_replays_rules)
{
    game_record_t r;
    record_init(&r);
    char err[256];
    /* Black makes five on row 7 of a 15x15 board: x = 3..7, white below. */
    record_clear(&r, RULE_FREESTYLE, 15, 0);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(record_add_ply(&r, 7 * 15 + 3 + i, 1, 0.0f, NULL, 0), 0);
        if (i < 4)
            ck_assert_int_eq(record_add_ply(&r, 8 * 15 + 3 + i, 1, 0.0f, NULL, 0), 0);
    }
    r.result = RESULT_BLACK;
    ck_assert_msg(record_validate(&r, err, sizeof err) == 0, "%s", err);
    r.result = RESULT_WHITE;
    ck_assert_int_eq(record_validate(&r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "does not match") != NULL, "message '%s'", err);
    r.result = RESULT_BLACK;
    r.flags = RECORD_FLAG_RESIGNED;   /* a resignation after the game was over */
    ck_assert_int_eq(record_validate(&r, err, sizeof err), -1);
    r.flags = 0;
    /* A move after the five. */
    ck_assert_int_eq(record_add_ply(&r, 0, 1, 0.0f, NULL, 0), 0);
    ck_assert_int_eq(record_validate(&r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "ply 10") != NULL, "message '%s'", err);
    /* A stone on an occupied point. */
    record_clear(&r, RULE_FREESTYLE, 15, 0);
    ck_assert_int_eq(record_add_ply(&r, 112, 1, 0.0f, NULL, 0), 0);
    ck_assert_int_eq(record_add_ply(&r, 112, 1, 0.0f, NULL, 0), 0);
    ck_assert_int_eq(record_validate(&r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "ply 2") && strstr(err, "7,7"), "message '%s'", err);
    /* Visits on an occupied point. */
    record_clear(&r, RULE_FREESTYLE, 15, 0);
    record_visit_t v = {.move = 112, .count = 3};
    ck_assert_int_eq(record_add_ply(&r, 112, 1, 0.0f, NULL, 0), 0);
    ck_assert_int_eq(record_add_ply(&r, 113, 1, 0.0f, &v, 1), 0);
    ck_assert_int_eq(record_validate(&r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "occupied") != NULL, "message '%s'", err);
    /* Renju: black's double-three at 7,7 (stones at 5,7 6,7 and 7,5 7,6) is refused. */
    record_clear(&r, RULE_RENJU, 15, 0);
    const int moves[] = {7 * 15 + 5, 0, 7 * 15 + 6, 2, 5 * 15 + 7, 4, 6 * 15 + 7, 6, 7 * 15 + 7};
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(record_add_ply(&r, moves[i], 1, 0.0f, NULL, 0), 0);
    ck_assert_int_eq(record_validate(&r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "ply 9") != NULL, "message '%s'", err);
    r.rule = RULE_FREESTYLE;
    ck_assert_msg(record_validate(&r, err, sizeof err) == 0, "%s", err);
    record_free(&r);
}
END_TEST

/* A resignation is by the side to move after the last ply: a record that
 * names that side the winner is forged (or corrupted), CRC or not. */
START_TEST(test_validate_resigner_cannot_win)
{
    game_record_t r;
    record_init(&r);
    char err[256];
    for (int nplies = 0; nplies <= 3; nplies++) {
        record_clear(&r, RULE_FREESTYLE, 15, 0);
        for (int i = 0; i < nplies; i++)
            ck_assert_int_eq(record_add_ply(&r, 7 * 15 + i, 1, 0.0f, NULL, 0), 0);
        r.flags = RECORD_FLAG_RESIGNED;
        bool black_resigned = nplies % 2 == 0;
        r.result = black_resigned ? RESULT_WHITE : RESULT_BLACK;
        ck_assert_msg(record_validate(&r, err, sizeof err) == 0, "%d plies: %s", nplies, err);
        r.result = black_resigned ? RESULT_BLACK : RESULT_WHITE;
        ck_assert_int_eq(record_validate(&r, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "resigned") && strstr(err, black_resigned ? "black was to move"
                                                                         : "white was to move"),
                      "message '%s'", err);
        /* the encoder takes it (it checks fields, not the game), the CRC holds,
         * and only validation refuses it */
        uint8_t *buf = NULL;
        size_t cap = 0, used = 0;
        size_t n = record_encode(&r, &buf, &cap, err, sizeof err);
        ck_assert_uint_gt(n, 0);
        game_record_t d;
        record_init(&d);
        ck_assert_int_eq(record_decode(buf, n, &used, &d, err, sizeof err), FRAME_OK);
        ck_assert_int_eq(record_validate(&d, err, sizeof err), -1);
        record_free(&d);
        free(buf);
    }
    record_free(&r);
}
END_TEST

/* ---- corruptions ---- */

/* Inflate a frame's payload into the serialised record (test-side zlib). */
static uint8_t *frame_serial(const uint8_t *frame, size_t len, size_t *slen)
{
    /* Room for one extra byte: the corruptions may append one. */
    for (size_t cap = 16384;; cap *= 2) {
        uint8_t *out = malloc(cap + 1);
        ck_assert_ptr_nonnull(out);
        uLongf n = cap;
        int rc = uncompress(out, &n, frame + FRAME_HEADER_BYTES, len - FRAME_HEADER_BYTES);
        if (rc == Z_OK) {
            *slen = n;
            return out;
        }
        ck_assert_int_eq(rc, Z_BUF_ERROR);
        free(out);
    }
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Compress serial and frame it with a correct length and CRC; returns the length. */
static size_t frame_from_serial(const uint8_t *serial, size_t slen, uint8_t *out, size_t cap)
{
    uLongf n = cap - FRAME_HEADER_BYTES;
    ck_assert_int_eq(compress2(out + FRAME_HEADER_BYTES, &n, serial, slen, 6), Z_OK);
    put32(out, FRAME_MAGIC);
    put32(out + 4, (uint32_t)n);
    put32(out + 8, (uint32_t)crc32(0L, out + FRAME_HEADER_BYTES, (uInt)n));
    return FRAME_HEADER_BYTES + n;
}

/* SERIAL (SLEN bytes, changed by a test) with its trailing CRC made valid
 * again, framed into OUT (CAP bytes); returns the frame's length. */
static size_t reframe_serial(uint8_t *serial, size_t slen, uint8_t *out, size_t cap)
{
    put32(serial + slen - SER_CRC_BYTES,
          (uint32_t)crc32(0L, serial, (uInt)(slen - SER_CRC_BYTES)));
    return frame_from_serial(serial, slen, out, cap);
}

/* A random game (SEED) encoded: its frame into *FRAME (*LEN bytes; malloc'd)
 * and the frame's serialised record returned (*SLEN bytes; malloc'd). */
static uint8_t *random_serial(uint64_t seed, uint8_t **frame, size_t *len, size_t *slen)
{
    game_record_t r;
    record_init(&r);
    random_game(&r, &seed);
    size_t cap = 0;
    *frame = NULL;
    *len = encode(&r, frame, &cap);
    record_free(&r);
    return frame_serial(*frame, *len, slen);
}

static void fix_frame_crc(uint8_t *frame, size_t len)
{
    put32(frame + 8, (uint32_t)crc32(0L, frame + FRAME_HEADER_BYTES,
                                     (uInt)(len - FRAME_HEADER_BYTES)));
}

enum {
    C_BITFLIP,        /* 1..8 random bits anywhere */
    C_TRUNCATE,       /* cut inside magic, length, crc, payload, last byte */
    C_GARBAGE,        /* overwrite a random stretch with random bytes */
    C_INSERT,         /* insert random bytes inside the frame */
    C_APPEND,         /* the frame is intact, garbage follows */
    C_LENGTH,         /* wrong length field */
    C_ZCRC,           /* corrupt compressed payload, recompute the frame CRC */
    C_SERIAL,         /* corrupt the serialised record, recompress, valid frame */
    C_KINDS
};

START_TEST(test_random_corruptions)
{
    int n = asan() ? 1000 : 10000;
    enum { POOL = 48 };
    uint64_t s = 0xc0ffee;
    game_record_t pool[POOL];
    uint8_t *enc[POOL];
    size_t enc_len[POOL];
    for (int i = 0; i < POOL; i++) {
        record_init(&pool[i]);
        random_game(&pool[i], &s);
        size_t cap = 0;
        enc[i] = NULL;
        enc_len[i] = encode(&pool[i], &enc[i], &cap);
    }
    size_t wcap = 8 << 20;
    uint8_t *w = malloc(wcap);
    ck_assert_ptr_nonnull(w);
    scan_t *sc = malloc(sizeof *sc);
    ck_assert_ptr_nonnull(sc);
    scan_init(sc);
    char path[512];
    make_tmppath(tmpdir, sizeof tmpdir, path, sizeof path, "c.gzr");
    int accepted[C_KINDS] = {0}, rejected[C_KINDS] = {0};
    for (int it = 0; it < n; it++) {
        int g = (int)rng_below(&s, POOL), kind = it % C_KINDS;
        const uint8_t *f = enc[g];
        size_t len = enc_len[g], wl = len;
        memcpy(w, f, len);
        int must_reject = 1;   /* only C_APPEND and no-op changes may decode */
        switch (kind) {
        case C_BITFLIP: {
            int nb = 1 + (int)rng_below(&s, 8);
            for (int k = 0; k < nb; k++)
                w[rng_below(&s, (uint32_t)len)] ^= (uint8_t)(1u << rng_below(&s, 8));
            must_reject = memcmp(w, f, len) != 0;
            break;
        }
        case C_TRUNCATE: {
            static const int cuts[][2] = {{1, 4}, {4, 8}, {8, 12}, {12, 0}, {-1, 0}};
            int c = (int)rng_below(&s, 5);
            if (cuts[c][0] < 0)
                wl = len - 1;
            else if (cuts[c][1] == 0)
                wl = FRAME_HEADER_BYTES + rng_below(&s, (uint32_t)(len - FRAME_HEADER_BYTES));
            else
                wl = (size_t)cuts[c][0] + rng_below(&s, (uint32_t)(cuts[c][1] - cuts[c][0]));
            break;
        }
        case C_GARBAGE: {
            size_t at = rng_below(&s, (uint32_t)len);
            size_t k = 1 + rng_below(&s, (uint32_t)(len - at < 64 ? len - at : 64));
            for (size_t j = 0; j < k; j++)
                w[at + j] = (uint8_t)rng_next(&s);
            must_reject = memcmp(w, f, len) != 0;
            break;
        }
        case C_INSERT: {
            size_t at = rng_below(&s, (uint32_t)len);
            size_t k = 1 + rng_below(&s, 64);
            memmove(w + at + k, w + at, len - at);
            for (size_t j = 0; j < k; j++)
                w[at + j] = (uint8_t)rng_next(&s);
            wl = len + k;
            /* The frame's bytes are all there, shifted: it may only decode if
             * the inserted bytes landed in front of an intact frame. */
            must_reject = at > 0;
            break;
        }
        case C_APPEND: {
            size_t k = 1 + rng_below(&s, 200);
            for (size_t j = 0; j < k; j++)
                w[len + j] = (uint8_t)rng_next(&s);
            wl = len + k;
            must_reject = 0;
            break;
        }
        case C_LENGTH: {
            uint32_t plen = (uint32_t)(len - FRAME_HEADER_BYTES), nl;
            switch (rng_below(&s, 5)) {
            case 0: nl = 0; break;
            case 1: nl = plen - 1 - rng_below(&s, plen); break;
            case 2: nl = plen + 1 + rng_below(&s, 1000); break;
            case 3: nl = FRAME_MAX_PAYLOAD + 1 + rng_below(&s, 1000); break;
            default: nl = (uint32_t)rng_next(&s); break;
            }
            if (nl == plen)
                nl++;
            put32(w + 4, nl);
            if (rng_below(&s, 2) && nl < plen) {
                /* A CRC that matches the shortened payload. */
                put32(w + 8, (uint32_t)crc32(0L, w + FRAME_HEADER_BYTES, nl));
            }
            break;
        }
        case C_ZCRC: {
            size_t plen = len - FRAME_HEADER_BYTES;
            int nb = 1 + (int)rng_below(&s, 4);
            for (int k = 0; k < nb; k++)
                w[FRAME_HEADER_BYTES + rng_below(&s, (uint32_t)plen)] ^=
                    (uint8_t)(1u << rng_below(&s, 8));
            fix_frame_crc(w, len);
            /* Flips in the padding bits of deflate's last byte change nothing
             * inflate reads, so such a frame may decode, but only to the original. */
            must_reject = 0;
            break;
        }
        case C_SERIAL: {
            size_t slen;
            uint8_t *ser = frame_serial(f, len, &slen);
            switch (rng_below(&s, 4)) {
            case 0:
                ser[rng_below(&s, (uint32_t)slen)] ^= (uint8_t)(1u << rng_below(&s, 8));
                break;
            case 1:
                slen = rng_below(&s, (uint32_t)slen);
                break;
            case 2:
                ser[slen] = (uint8_t)rng_next(&s);
                slen++;
                break;
            default: {
                size_t at = rng_below(&s, (uint32_t)slen);
                ser[at] = (uint8_t)rng_next(&s);
                break;
            }
            }
            size_t olen;
            uint8_t *o2 = frame_serial(f, len, &olen);
            must_reject = !(olen == slen && memcmp(o2, ser, slen) == 0);
            free(o2);
            wl = frame_from_serial(ser, slen, w, wcap);
            free(ser);
            break;
        }
        }
        /* Decode it as a stream, all at once. */
        sc->nrecs = sc->nbad = 0;
        scan_stream(sc, w, wl, 0, NULL);
        ck_assert_int_le(sc->nrecs, 1);
        if (sc->nrecs == 1) {
            ck_assert_msg(record_equal(&sc->recs[0], &pool[g]),
                          "iteration %d kind %d: decoded to a different game", it, kind);
            ck_assert_msg(!must_reject, "iteration %d kind %d: corrupt frame accepted", it, kind);
            accepted[kind]++;
        } else {
            ck_assert_int_ge(sc->nbad, 1);
            rejected[kind]++;
        }
        /* Every 13th also through the file reader: the same verdict. */
        if (it % 13 == 0) {
            write_file(path, w, wl, "wb");
            scan_t *fs = malloc(sizeof *fs);
            ck_assert_ptr_nonnull(fs);
            scan_init(fs);
            scan_file(fs, path);
            ck_assert_int_eq(fs->nrecs, sc->nrecs);
            ck_assert_int_eq(fs->nbad, sc->nbad);
            scan_free(fs);
            free(fs);
        }
    }
    /* Each kind was exercised and nearly every real corruption rejected. */
    for (int k = 0; k < C_KINDS; k++) {
        if (k == C_APPEND)
            ck_assert_int_eq(accepted[k], n / C_KINDS);
        else
            ck_assert_msg(rejected[k] > 9 * (accepted[k] + rejected[k]) / 10,
                          "kind %d: %d rejected, %d accepted", k, rejected[k], accepted[k]);
    }
    ck_assert_int_eq(accepted[C_TRUNCATE], 0);
    ck_assert_int_eq(accepted[C_LENGTH], 0);
    remove_tree(tmpdir);
    scan_free(sc);
    free(sc);
    free(w);
    for (int i = 0; i < POOL; i++) {
        free(enc[i]);
        record_free(&pool[i]);
    }
}
END_TEST

/* A corrupted serialised record whose own checksum is recomputed too is a
 * different record, not a damaged one: the decoder must then either reject
 * it or return a record that keeps every invariant (so it re-encodes and
 * round-trips). */
START_TEST(test_forged_records_keep_invariants)
{
    int n = asan() ? 1000 : 4000;
    uint64_t s = 99;
    game_record_t r, d, d2;
    record_init(&r);
    record_init(&d);
    record_init(&d2);
    uint8_t *buf = NULL, *buf2 = NULL;
    size_t cap = 0, cap2 = 0;
    size_t wcap = 8 << 20;
    uint8_t *w = malloc(wcap);
    ck_assert_ptr_nonnull(w);
    int ok = 0, bad = 0;
    for (int it = 0; it < n; it++) {
        if (it % 50 == 0)
            random_game(&r, &s);
        size_t len = encode(&r, &buf, &cap), slen;
        uint8_t *ser = frame_serial(buf, len, &slen);
        int nb = 1 + (int)rng_below(&s, 3);
        for (int k = 0; k < nb; k++) {
            size_t at = rng_below(&s, (uint32_t)(slen - SER_CRC_BYTES));
            if (rng_below(&s, 2))
                ser[at] ^= (uint8_t)(1u << rng_below(&s, 8));
            else
                ser[at] = (uint8_t)rng_next(&s);
        }
        size_t wl = reframe_serial(ser, slen, w, wcap);
        free(ser);
        size_t used;
        char err[256] = "";
        frame_status_t st = record_decode(w, wl, &used, &d, err, sizeof err);
        if (st == FRAME_BAD) {
            ck_assert(err[0] != '\0');
            ck_assert_uint_eq(used, wl);
            bad++;
            continue;
        }
        ck_assert_int_eq(st, FRAME_OK);
        size_t l2 = record_encode(&d, &buf2, &cap2, err, sizeof err);
        ck_assert_msg(l2 > 0, "decoded record breaks an invariant: %s", err);
        ck_assert_int_eq(record_decode(buf2, l2, &used, &d2, NULL, 0), FRAME_OK);
        ck_assert(record_equal(&d, &d2));
        ok++;
    }
    ck_assert_int_gt(bad, n / 10);
    ck_assert_int_gt(ok, 0);
    free(w);
    free(buf);
    free(buf2);
    record_free(&r);
    record_free(&d);
    record_free(&d2);
}
END_TEST

/* A version 1 frame as the build before game ids wrote it: a 7x7
 * freestyle game of 9 plies won by black in column 3, generation 3. */
static const uint8_t v1_frame[] = {
    0x47, 0x5a, 0x46, 0x31, 0x5a, 0x00, 0x00, 0x00, 0x83, 0xba, 0x6f, 0x43,
    0x78, 0x9c, 0x73, 0x8f, 0x0a, 0x32, 0x64, 0x64, 0x60, 0x60, 0x67, 0x64,
    0x60, 0x66, 0x60, 0x60, 0xe0, 0x04, 0x62, 0x0e, 0x20, 0x96, 0x60, 0x00,
    0x8a, 0x35, 0xec, 0x63, 0x62, 0x90, 0x64, 0x00, 0x03, 0x26, 0x06, 0x41,
    0xb0, 0x88, 0x1d, 0x13, 0x83, 0x10, 0x88, 0x0f, 0x92, 0xe2, 0x02, 0x89,
    0x80, 0x00, 0x37, 0x58, 0xc4, 0x8e, 0x81, 0x41, 0x1e, 0xa2, 0x8b, 0x81,
    0x41, 0x81, 0x01, 0x0a, 0x98, 0x21, 0xba, 0x40, 0x06, 0xb2, 0x82, 0x8d,
    0x91, 0x84, 0xd2, 0x82, 0x50, 0x5a, 0x08, 0x4a, 0x47, 0x26, 0xfc, 0xb6,
    0x05, 0x00, 0xc6, 0x61, 0x0a, 0x4f,
};

START_TEST(test_version1_still_reads)
{
    game_record_t d;
    record_init(&d);
    char err[256] = "";
    size_t used = 0;
    ck_assert_int_eq(record_decode(v1_frame, sizeof v1_frame, &used, &d, err, sizeof err),
                     FRAME_OK);
    ck_assert_uint_eq(used, sizeof v1_frame);
    ck_assert_int_eq(d.rule, RULE_FREESTYLE);
    ck_assert_int_eq(d.size, 7);
    ck_assert_int_eq(d.result, RESULT_BLACK);
    ck_assert_uint_eq(d.model_gen, 3);
    ck_assert_uint_eq(d.nplies, 9);
    ck_assert_int_eq(d.plies[8].move, 3);
    ck_assert_uint_eq(d.nvisits, 8);
    ck_assert_uint_eq(d.worker_id, 0);
    ck_assert_uint_eq(d.game_seq, 0);
    ck_assert_int_eq(record_validate(&d, err, sizeof err), 0);
    /* Written again it is a version 2 frame that keeps every field and the id. */
    d.worker_id = 0xfedcba9876543210ull;
    d.game_seq = 41;
    uint8_t *buf = NULL;
    size_t cap = 0;
    size_t len = encode(&d, &buf, &cap);
    game_record_t e;
    record_init(&e);
    ck_assert_int_eq(record_decode(buf, len, &used, &e, err, sizeof err), FRAME_OK);
    ck_assert(record_equal(&d, &e));
    ck_assert_uint_eq(e.worker_id, 0xfedcba9876543210ull);
    ck_assert_uint_eq(e.game_seq, 41);
    free(buf);
    record_free(&d);
    record_free(&e);
}
END_TEST

START_TEST(test_version_and_magic_checked)
{
    game_record_t d;
    record_init(&d);
    uint8_t *buf;
    size_t len, slen, used;
    uint8_t *ser = random_serial(5, &buf, &len, &slen);
    uint8_t *w = malloc(len + 4096);
    ck_assert_ptr_nonnull(w);
    char err[256];
    /* A future version, with every checksum valid. */
    ser[SER_VERSION_OFF] = RECORD_VERSION + 1;
    size_t wl = reframe_serial(ser, slen, w, len + 4096);
    ck_assert_int_eq(record_decode(w, wl, &used, &d, err, sizeof err), FRAME_BAD);
    ck_assert_msg(strstr(err, "version") != NULL, "message '%s'", err);
    ck_assert_uint_eq(used, wl);
    /* Not a record at all. */
    ser[SER_VERSION_OFF] = RECORD_VERSION;
    ser[0] ^= 0xff;
    wl = reframe_serial(ser, slen, w, len + 4096);
    ck_assert_int_eq(record_decode(w, wl, &used, &d, err, sizeof err), FRAME_BAD);
    ck_assert_msg(strstr(err, "magic") != NULL, "message '%s'", err);
    /* Bad frame magic, bad length: rejected from the header alone. */
    memcpy(w, buf, FRAME_HEADER_BYTES);
    w[0] ^= 1;
    ck_assert_int_eq(record_decode(w, FRAME_HEADER_BYTES, &used, &d, err, sizeof err), FRAME_BAD);
    ck_assert_uint_ge(used, 1);
    w[0] ^= 1;
    put32(w + 4, FRAME_MAX_PAYLOAD + 1);
    ck_assert_int_eq(record_decode(w, FRAME_HEADER_BYTES, &used, &d, err, sizeof err), FRAME_BAD);
    ck_assert_msg(strstr(err, "limit") != NULL, "message '%s'", err);
    put32(w + 4, FRAME_MAX_PAYLOAD);
    ck_assert_int_eq(record_decode(w, FRAME_HEADER_BYTES, &used, &d, err, sizeof err),
                     FRAME_NEED_MORE);
    ck_assert(frame_at_magic(buf, 2));
    ck_assert(!frame_at_magic((const uint8_t *)"GZx", 3));
    free(w);
    free(ser);
    free(buf);
    record_free(&d);
}
END_TEST

/* A payload that inflates to 64 MB after a valid record: rejected without
 * inflating it all (memory stays flat). */
START_TEST(test_zip_bomb_rejected)
{
    game_record_t d;
    record_init(&d);
    uint8_t *buf;
    size_t len, slen, used;
    uint8_t *ser = random_serial(11, &buf, &len, &slen);
    size_t pcap = 1 << 20;
    uint8_t *frame = malloc(FRAME_HEADER_BYTES + pcap);
    ck_assert_ptr_nonnull(frame);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    ck_assert_int_eq(deflateInit(&zs, 9), Z_OK);
    zs.next_out = frame + FRAME_HEADER_BYTES;
    zs.avail_out = (uInt)pcap;
    zs.next_in = ser;
    zs.avail_in = (uInt)slen;
    ck_assert_int_eq(deflate(&zs, Z_NO_FLUSH), Z_OK);
    static uint8_t zeros[1 << 16];
    for (int i = 0; i < 1024; i++) {
        zs.next_in = zeros;
        zs.avail_in = sizeof zeros;
        ck_assert_int_eq(deflate(&zs, i == 1023 ? Z_FINISH : Z_NO_FLUSH),
                         i == 1023 ? Z_STREAM_END : Z_OK);
    }
    size_t plen = zs.total_out;
    deflateEnd(&zs);
    ck_assert_uint_lt(plen, FRAME_MAX_PAYLOAD);
    put32(frame, FRAME_MAGIC);
    put32(frame + 4, (uint32_t)plen);
    put32(frame + 8, (uint32_t)crc32(0L, frame + FRAME_HEADER_BYTES, (uInt)plen));
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    char err[256] = "";
    ck_assert_int_eq(record_decode(frame, FRAME_HEADER_BYTES + plen, &used, &d, err, sizeof err),
                     FRAME_BAD);
    getrusage(RUSAGE_SELF, &ru1);
    ck_assert_msg(strstr(err, "trailing") != NULL, "message '%s'", err);
    ck_assert_uint_eq(used, FRAME_HEADER_BYTES + plen);
    ck_assert_msg(ru1.ru_maxrss - ru0.ru_maxrss < 16 * 1024, "max RSS grew by %ld KiB",
                  ru1.ru_maxrss - ru0.ru_maxrss);
    free(frame);
    free(ser);
    free(buf);
    record_free(&d);
}
END_TEST

/* ---- a file of good frames and garbage ---- */

typedef struct mixed {
    uint8_t *buf;
    size_t len, cap;
    game_record_t good[64];
    int ngood;
    uint64_t bad_off[64];
    int nbad;
} mixed_t;

static void mixed_put(mixed_t *m, const uint8_t *p, size_t n)
{
    if (m->len + n > m->cap) {
        m->cap = (m->len + n) * 2;
        m->buf = realloc(m->buf, m->cap);
        ck_assert_ptr_nonnull(m->buf);
    }
    memcpy(m->buf + m->len, p, n);
    m->len += n;
}

/* Good frames, each preceded by at most one defect; the defects' offsets
 * are what a reader must report. Garbage never holds 'G', the magic's first
 * byte, so each defect is exactly one bad stretch. */
static void build_mixed(mixed_t *m, uint64_t *s)
{
    memset(m, 0, sizeof *m);
    uint8_t *enc = NULL;
    size_t cap = 0, elen;
    uint8_t junk[512];
    for (int i = 0; i < 40; i++) {
        int defect = (int)rng_below(s, 8);
        uint64_t at = m->len;
        game_record_t r;
        record_init(&r);
        switch (defect) {
        case 0: case 1: {   /* garbage */
            size_t k = 1 + rng_below(s, sizeof junk);
            for (size_t j = 0; j < k; j++) {
                junk[j] = (uint8_t)rng_next(s);
                if (junk[j] == 'G')
                    junk[j] = 'g';
            }
            mixed_put(m, junk, k);
            m->bad_off[m->nbad++] = at;
            break;
        }
        case 2: {           /* a frame cut short */
            random_game(&r, s);
            elen = encode(&r, &enc, &cap);
            mixed_put(m, enc, FRAME_HEADER_BYTES + 1 + rng_below(s, (uint32_t)(elen - FRAME_HEADER_BYTES - 1)));
            m->bad_off[m->nbad++] = at;
            break;
        }
        case 3: {           /* a frame with a flipped payload bit */
            random_game(&r, s);
            elen = encode(&r, &enc, &cap);
            enc[FRAME_HEADER_BYTES + rng_below(s, (uint32_t)(elen - FRAME_HEADER_BYTES))] ^= 0x10;
            mixed_put(m, enc, elen);
            m->bad_off[m->nbad++] = at;
            break;
        }
        case 4: {           /* a header claiming a payload over the limit */
            uint8_t h[FRAME_HEADER_BYTES];
            put32(h, FRAME_MAGIC);
            put32(h + 4, 0xffffffffu);
            put32(h + 8, 0);
            mixed_put(m, h, sizeof h);
            m->bad_off[m->nbad++] = at;
            break;
        }
        case 5: {           /* part of a magic, then the good frame */
            mixed_put(m, (const uint8_t *)"GZF", 3);
            m->bad_off[m->nbad++] = at;
            break;
        }
        default:
            break;
        }
        record_free(&r);
        record_init(&m->good[m->ngood]);
        random_game(&m->good[m->ngood], s);
        elen = encode(&m->good[m->ngood], &enc, &cap);
        mixed_put(m, enc, elen);
        m->ngood++;
    }
    /* And a truncated frame at the very end. */
    uint64_t at = m->len;
    mixed_put(m, enc, FRAME_HEADER_BYTES + 3);
    m->bad_off[m->nbad++] = at;
    free(enc);
}

static void free_mixed(mixed_t *m)
{
    for (int i = 0; i < m->ngood; i++)
        record_free(&m->good[i]);
    free(m->buf);
}

static void assert_scan_matches(const scan_t *sc, const mixed_t *m)
{
    assert_scan_is(sc, m->good, m->ngood, m->bad_off, m->nbad);
}

START_TEST(test_good_frames_among_garbage)
{
    uint64_t s = 424242;
    mixed_t m;
    build_mixed(&m, &s);
    ck_assert_int_gt(m.nbad, 10);
    char path[512];
    make_tmppath(tmpdir, sizeof tmpdir, path, sizeof path, "mixed.gzr");
    write_file(path, m.buf, m.len, "wb");
    scan_t *a = malloc(sizeof *a);
    ck_assert_ptr_nonnull(a);
    scan_init(a);
    scan_file(a, path);
    assert_scan_matches(a, &m);
    scan_free(a);
    free(a);
    remove_tree(tmpdir);
    free_mixed(&m);
}
END_TEST

START_TEST(test_stream_one_byte_at_a_time)
{
    uint64_t s = 31337;
    mixed_t m;
    build_mixed(&m, &s);
    scan_t *whole = malloc(sizeof *whole), *bytes = malloc(sizeof *bytes), *rnd = malloc(sizeof *rnd);
    ck_assert(whole && bytes && rnd);
    scan_init(whole);
    scan_init(bytes);
    scan_init(rnd);
    scan_stream(whole, m.buf, m.len, 0, NULL);
    assert_scan_matches(whole, &m);
    scan_stream(bytes, m.buf, m.len, 1, NULL);
    assert_same_scan(whole, bytes);
    uint64_t rs = 77;
    scan_stream(rnd, m.buf, m.len, 0, &rs);
    assert_same_scan(whole, rnd);
    scan_free(whole);
    scan_free(bytes);
    scan_free(rnd);
    free(whole);
    free(bytes);
    free(rnd);
    free_mixed(&m);
}
END_TEST

START_TEST(test_reader_empty_and_missing)
{
    char path[512], err[256];
    make_tmppath(tmpdir, sizeof tmpdir, path, sizeof path, "empty.gzr");
    write_file(path, (const uint8_t *)"", 0, "wb");
    record_reader_t *fr = record_reader_open(path, err, sizeof err);
    ck_assert_ptr_nonnull(fr);
    game_record_t r;
    record_init(&r);
    ck_assert_int_eq(record_reader_next(fr, &r, err, sizeof err), 0);
    record_reader_free(fr);
    record_reader_free(NULL);
    snprintf(path, sizeof path, "%s/missing.gzr", tmpdir);
    ck_assert_ptr_null(record_reader_open(path, err, sizeof err));
    ck_assert_msg(strstr(err, "missing.gzr") != NULL, "message '%s'", err);
    /* frame_write appends frames a reader reads back. */
    snprintf(path, sizeof path, "%s/w.gzr", tmpdir);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    uint64_t s = 3;
    game_record_t g[3];
    for (int i = 0; i < 3; i++) {
        record_init(&g[i]);
        random_game(&g[i], &s);
        ck_assert_int_eq(record_write(f, &g[i], err, sizeof err), 0);
    }
    fclose(f);
    fr = record_reader_open(path, err, sizeof err);
    ck_assert_ptr_nonnull(fr);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(record_reader_next(fr, &r, err, sizeof err), 1);
        ck_assert(record_equal(&r, &g[i]));
        record_free(&g[i]);
    }
    ck_assert_int_eq(record_reader_next(fr, &r, err, sizeof err), 0);
    record_reader_free(fr);
    record_free(&r);
    remove_tree(tmpdir);
}
END_TEST

/* Runs `gomoku records ARGS` with stdout and stderr to files; returns the exit status. */
static int run_records(const char *args, const char *out, const char *errf)
{
    char cmd[4096], none[1];
    snprintf(cmd, sizeof cmd, "records %s >'%s' 2>'%s'", args, out, errf);
    return run_gomoku(cmd, NULL, CAPTURE_NONE, none, sizeof none);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Three fixed games: a black five (freestyle 15x15), a white resignation win
 * (renju 9x9), a cut-off game (standard 6x6). */
static void write_small_file(const char *path, game_record_t g[3])
{
    record_visit_t v[3] = {{.move = 113, .count = 40}, {.move = 96, .count = 70},
                           {.move = 128, .count = 5}};
    record_clear(&g[0], RULE_FREESTYLE, 15, 12);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(record_add_ply(&g[0], 7 * 15 + 3 + i, 1, 0.25f, v, i == 0 ? 3 : 0), 0);
        if (i < 4)
            ck_assert_int_eq(record_add_ply(&g[0], 8 * 15 + 3 + i, 0, -0.5f, NULL, 0), 0);
    }
    g[0].result = RESULT_BLACK;
    record_clear(&g[1], RULE_RENJU, 9, 13);
    ck_assert_int_eq(record_add_ply(&g[1], 40, 1, 0.0f, NULL, 0), 0);
    ck_assert_int_eq(record_add_ply(&g[1], 41, 1, 0.1f, NULL, 0), 0);
    g[1].result = RESULT_WHITE;
    g[1].flags = RECORD_FLAG_RESIGNED;
    record_clear(&g[2], RULE_STANDARD, 6, 14);
    ck_assert_int_eq(record_add_ply(&g[2], 0, 0, 1.0f, NULL, 0), 0);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    char err[256];
    for (int i = 0; i < 3; i++) {
        ck_assert_msg(record_validate(&g[i], err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(record_write(f, &g[i], err, sizeof err), 0);
    }
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_cli_dump_stats_psq)
{
    char gz[512], out[512], errf[512], args[1600], dir[512];
    make_tmppath(tmpdir, sizeof tmpdir, gz, sizeof gz, "small.gzr");
    snprintf(out, sizeof out, "%s/out.txt", tmpdir);
    snprintf(errf, sizeof errf, "%s/err.txt", tmpdir);
    game_record_t g[3];
    for (int i = 0; i < 3; i++)
        record_init(&g[i]);
    write_small_file(gz, g);

    snprintf(args, sizeof args, "dump '%s'", gz);
    ck_assert_int_eq(run_records(args, out, errf), 0);
    char *o = must_slurp(out), *e = must_slurp(errf);
    ck_assert_str_eq(e, "");
    ck_assert_int_eq(count_lines(o), 3 + 9 + 2 + 1);
    ck_assert_msg(strstr(o, "game 1: rule freestyle, size 15, result black, gen 12, plies 9, flags none\n"),
                  "dump:\n%s", o);
    ck_assert_msg(strstr(o, "game 2: rule renju, size 9, result white, gen 13, plies 2, flags resigned\n"),
                  "dump:\n%s", o);
    /* Ply 1: 3,7 = d8 on 15x15, full, 115 visits, most visited first. */
    ck_assert_msg(strstr(o, "    1 3,7   d8   full  value +0.250 visits 115 g9:70 i8:40 i7:5\n"),
                  "dump:\n%s", o);
    ck_assert_msg(strstr(o, "    2 3,8   d7   cheap value -0.500 visits 0\n"), "dump:\n%s", o);
    free(o);
    free(e);

    snprintf(args, sizeof args, "stats '%s' '%s'", gz, gz);
    ck_assert_int_eq(run_records(args, out, errf), 0);
    o = must_slurp(out);
    ck_assert_int_eq(count_lines(o), 3);
    ck_assert_msg(strstr(o, "games 3, positions 12, full 58.3%, black 1, white 1, draw 0, "
                            "unfinished 1, resigned 1, random openings 0, avg length 4.0, bad frames 0\n"),
                  "stats:\n%s", o);
    ck_assert_msg(strstr(o, "total: games 6, positions 24,"), "stats:\n%s", o);
    free(o);

    snprintf(dir, sizeof dir, "%s/psq", tmpdir);
    snprintf(args, sizeof args, "psq '%s' '%s'", gz, dir);
    ck_assert_int_eq(run_records(args, out, errf), 0);
    char p[600];
    snprintf(p, sizeof p, "%s/game_000001.psq", dir);
    o = must_slurp(p);
    const char *head = "Piskvork 15x15, 11:11, 0\n4,8,0\n4,9,0\n5,8,0\n";
    ck_assert_msg(strncmp(o, head, strlen(head)) == 0, "psq:\n%s", o);
    ck_assert_int_eq(count_lines(o), 1 + 9 + 3);
    free(o);
    snprintf(p, sizeof p, "%s/game_000003.psq", dir);
    o = must_slurp(p);
    ck_assert_str_eq(o, "Piskvork 6x6, 11:11, 0\n1,1,0\ngomoku-zero gen 14\ngomoku-zero gen 14\n0\n");
    free(o);

    /* A corrupt second frame: reported on stderr with its offset, the others still read. */
    uint8_t *enc = NULL;
    size_t cap = 0;
    size_t l0 = encode(&g[0], &enc, &cap);
    char *raw = must_slurp(gz);
    raw[l0 + FRAME_HEADER_BYTES + 2] ^= 0x40;
    snprintf(p, sizeof p, "%s/bad.gzr", tmpdir);
    struct stat st;
    ck_assert_int_eq(stat(gz, &st), 0);
    write_file(p, (const uint8_t *)raw, (size_t)st.st_size, "wb");
    free(raw);
    snprintf(args, sizeof args, "dump '%s'", p);
    ck_assert_int_eq(run_records(args, out, errf), 1);
    o = must_slurp(out);
    e = must_slurp(errf);
    char want[700];
    snprintf(want, sizeof want, "%s: bad frame at byte %zu: crc mismatch\n", p, l0);
    ck_assert_str_eq(e, want);
    ck_assert_msg(strstr(o, "game 1: rule freestyle") && strstr(o, "game 2: rule standard"),
                  "dump:\n%s", o);
    free(o);
    free(e);
    snprintf(args, sizeof args, "stats '%s'", p);
    ck_assert_int_eq(run_records(args, out, errf), 1);
    o = must_slurp(out);
    ck_assert_msg(strstr(o, "games 2,") && strstr(o, "bad frames 1\n"), "stats:\n%s", o);
    free(o);

    /* A missing file: one line, exit 1. Usage errors: exit 2. Help: exit 0. */
    snprintf(args, sizeof args, "dump '%s/nope.gzr'", tmpdir);
    ck_assert_int_eq(run_records(args, out, errf), 1);
    e = must_slurp(errf);
    ck_assert_int_eq(count_lines(e), 1);
    ck_assert_msg(strstr(e, "nope.gzr"), "stderr: %s", e);
    free(e);
    ck_assert_int_eq(run_records("frobnicate x", out, errf), 2);
    e = must_slurp(errf);
    const char *unk = "gomoku records: unknown action 'frobnicate'";
    ck_assert_msg(strncmp(e, unk, strlen(unk)) == 0, "stderr: %s", e);
    free(e);
    ck_assert_int_eq(run_records("dump", out, errf), 2);
    ck_assert_int_eq(run_records("", out, errf), 2);
    ck_assert_int_eq(run_records("psq onlyone", out, errf), 2);
    ck_assert_int_eq(run_records("dump --bogus x", out, errf), 2);
    ck_assert_int_eq(run_records("--help", out, errf), 0);
    o = must_slurp(out);
    ck_assert_msg(strstr(o, "usage: gomoku records"), "help: %s", o);
    free(o);

    free(enc);
    for (int i = 0; i < 3; i++)
        record_free(&g[i]);
    remove_tree(tmpdir);
}
END_TEST


/* ---- .psq files and opening lines (engine/gamefile) ---- */

START_TEST(test_psq_roundtrip_random_games)
{
    uint64_t seed = 77;
    for (int t = 0; t < 200; t++) {
        int size = BOARD_MIN + (int)rng_below(&seed, BOARD_MAX - BOARD_MIN + 1);
        board_t b;
        board_init(&b, size, RULE_FREESTYLE);
        int n = (int)rng_below(&seed, (uint32_t)(size * size));
        while (b.nmoves < n && !board_over(&b)) {
            int m = (int)rng_below(&seed, (uint32_t)(size * size));
            if (board_check_move(&b, m) == MOVE_OK)
                board_play(&b, m);
        }
        int moves[BOARD_CELLS];
        for (int i = 0; i < b.nmoves; i++)
            moves[i] = b.moves[i];
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ck_assert_int_eq(psq_write(f, size, moves, NULL, b.nmoves, "alice", t % 2 ? NULL : "bob\nx"), 0);
        fclose(f);
        psq_game_t g;
        char err[256] = "";
        ck_assert_msg(psq_parse(buf, len, &g, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(g.size, size);
        ck_assert_int_eq(g.nmoves, b.nmoves);
        for (int i = 0; i < g.nmoves; i++)
            ck_assert_int_eq(g.moves[i], moves[i]);
        ck_assert_str_eq(g.black, "alice");
        ck_assert_str_eq(g.white, t % 2 ? "unknown" : "bob?x");
        board_t b2;
        ck_assert_msg(psq_to_board(&g, RULE_FREESTYLE, &b2, err, sizeof err) == 0, "%s", err);
        ck_assert(b2.hash == b.hash);
        free(buf);
    }
}
END_TEST

static int parse_text(const char *text, psq_game_t *g, char *err, size_t errlen)
{
    return psq_parse(text, strlen(text), g, err, errlen);
}

/* An input a parser must refuse, and a piece of the error it must give. */
typedef struct refusal {
    const char *in, *why;
} refusal_t;

/* Fails the test unless PARSE returns -1 for every input of BAD[0..N) with
 * a one-line error holding that input's WHY. */
static void check_refusals(int (*parse)(const char *in, char *err, size_t errlen),
                           const refusal_t *bad, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char err[256] = "";
        ck_assert_msg(parse(bad[i].in, err, sizeof err) == -1, "accepted '%s'", bad[i].in);
        ck_assert_msg(strstr(err, bad[i].why), "'%s': %s", bad[i].in, err);
        ck_assert_msg(!strchr(err, '\n'), "'%s': not one line: %s", bad[i].in, err);
    }
}

static int parse_psq_text(const char *text, char *err, size_t errlen)
{
    psq_game_t g;
    return parse_text(text, &g, err, errlen);
}

START_TEST(test_psq_forms_and_errors)
{
    psq_game_t g;
    char err[256];
    /* Piskvork's own file: CRLF, ms column, names, end code, trailing lines */
    const char *piskvork = "Piskvork 20x20, 11:11, 0\r\n10,10,1200\r\n11,11,30\r\n 9,12,0 \r\n"
                           "pbrain-a.exe\r\npbrain-b.exe\r\n-1\r\n";
    ck_assert_msg(parse_text(piskvork, &g, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(g.size, 20);
    ck_assert_int_eq(g.nmoves, 3);
    ck_assert_int_eq(g.moves[0], 9 * 20 + 9);
    ck_assert_int_eq(g.moves[2], 11 * 20 + 8);
    ck_assert_str_eq(g.black, "pbrain-a.exe");
    ck_assert_str_eq(g.white, "pbrain-b.exe");
    /* no header: move lines on a 15x15 board; no ms column */
    ck_assert_msg(parse_text("8,8\n9,9\n", &g, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(g.size, 15);
    ck_assert_int_eq(g.nmoves, 2);
    /* header only: an empty game */
    ck_assert(parse_text("Piskvork 15x15, 11:11, 0\n", &g, err, sizeof err) == 0);
    ck_assert_int_eq(g.nmoves, 0);
    ck_assert(parse_text("", &g, err, sizeof err) == 0);
    ck_assert_int_eq(g.nmoves, 0);

    static const refusal_t bad[] = {
        {"Piskvork 15x16, 11:11, 0\n", "only square"},
        {"Piskvork 30x30, 11:11, 0\n", "outside"},
        {"Piskvork fifteen\n", "header wants"},
        {"Piskvork 15x15, 11:11, 0\n16,1,0\n", "off the 15x15 board"},
        {"Piskvork 15x15, 11:11, 0\n0,1,0\n", "off the"},
        {"Piskvork 15x15, 11:11, 0\n3,3,0\n3,3,0\n", "already played"},
        {"hello world\n", "expected 'Piskvork WxH' or a move"},
        {"Piskvork 15x15, 11:11, 0\n1,nan,0\n", "line 2: a bad move line"},
        {"Piskvork 15x15, 11:11, 0\n8,8\n9,9,1e3\nnames\n", "line 3: a bad move line"},
    };
    check_refusals(parse_psq_text, bad, sizeof bad / sizeof bad[0]);
    ck_assert(psq_parse("8,8\n\0x", 6, &g, err, sizeof err) == -1);
    ck_assert_msg(strstr(err, "NUL"), "%s", err);

    /* a legal .psq can still be illegal under renju */
    ck_assert(parse_text("Piskvork 15x15, 11:11, 0\n8,8\n1,1\n9,8\n1,2\n8,9\n1,3\n9,9\n", &g, err,
                         sizeof err) == 0);
    board_t b;
    ck_assert(psq_to_board(&g, RULE_FREESTYLE, &b, err, sizeof err) == 0);
    ck_assert(parse_text("Piskvork 15x15, 11:11, 0\n7,8\n1,1\n8,7\n1,2\n9,8\n1,3\n8,9\n1,5\n8,8\n", &g,
                         err, sizeof err) == 0);
    ck_assert_int_eq(psq_to_board(&g, RULE_RENJU, &b, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "move 9") && strstr(err, "renju"), "%s", err);
}
END_TEST

START_TEST(test_psq_random_bytes_never_crash)
{
    uint64_t seed = 4242;
    static const char alphabet[] = "0123456789,,,\n\n x-+Piskvork\r\t\xff";
    for (int t = 0; t < 20000; t++) {
        char text[200];
        size_t len = rng_below(&seed, sizeof text);
        for (size_t i = 0; i < len; i++)
            text[i] = alphabet[rng_below(&seed, sizeof alphabet - 1)];
        if (t % 3 == 0 && len > 30)
            memcpy(text, "Piskvork 9x9, 11:11, 0\n", 23);
        psq_game_t g;
        char err[256] = "";
        if (psq_parse(text, len, &g, err, sizeof err) == 0) {
            ck_assert(g.size >= BOARD_MIN && g.size <= BOARD_MAX);
            for (int i = 0; i < g.nmoves; i++)
                ck_assert(g.moves[i] >= 0 && g.moves[i] < g.size * g.size);
        } else {
            ck_assert(err[0] && !strchr(err, '\n'));
        }
    }
}
END_TEST

START_TEST(test_psq_save_load_file)
{
    char dir[512], path[1024], err[256];
    make_tmppath(dir, sizeof dir, path, sizeof path, "game.psq");
    int moves[3] = {7 * 15 + 7, 8 * 15 + 8, 6 * 15 + 7};
    ck_assert_msg(psq_save(path, 15, moves, NULL, 3, "human", "gomoku-zero", err, sizeof err) == 0, "%s", err);
    psq_game_t g;
    ck_assert_msg(psq_load(path, &g, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(g.nmoves, 3);
    ck_assert_int_eq(g.moves[2], moves[2]);
    ck_assert_int_eq(g.ms[2], 0);   /* no times given: 0 */
    ck_assert_str_eq(g.white, "gomoku-zero");
    /* each move's time goes with it and reads back */
    int ms[3] = {0, 912, 5000000};
    ck_assert_msg(psq_save(path, 15, moves, ms, 3, NULL, NULL, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(psq_load(path, &g, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(g.nmoves, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(g.moves[i], moves[i]);
        ck_assert_int_eq(g.ms[i], i < 2 ? ms[i] : PSQ_MS_MAX);   /* longer: written as the most */
    }
    /* a negative time reads as 0 */
    static const char odd[] = "Piskvork 15x15, 11:11, 0\n8,8,-5\n9,9,17\n";
    ck_assert_msg(psq_parse(odd, sizeof odd - 1, &g, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(g.ms[0], 0);
    ck_assert_int_eq(g.ms[1], 17);
    char missing[1100];
    snprintf(missing, sizeof missing, "%s/none.psq", dir);
    ck_assert_int_eq(psq_load(missing, &g, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "cannot open") && strstr(err, "none.psq"), "%s", err);
    /* saving into a directory that does not exist fails and says where */
    snprintf(missing, sizeof missing, "%s/no/such/dir/g.psq", dir);
    ck_assert_int_eq(psq_save(missing, 15, moves, NULL, 3, NULL, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "no/such/dir"), "%s", err);
    remove_tree(dir);
}
END_TEST

/* One opening line on a 15x15 board. */
static int parse_opening_15(const char *line, char *err, size_t errlen)
{
    int m[BOARD_CELLS];
    return opening_parse_line(line, 15, m, BOARD_CELLS, err, errlen);
}

START_TEST(test_opening_lines)
{
    int m[BOARD_CELLS];
    char err[256];
    ck_assert_int_eq(opening_parse_line("h8 i9 j7\n", 15, m, BOARD_CELLS, err, sizeof err), 3);
    ck_assert_int_eq(m[0], 7 * 15 + 7);   /* h8: column 7, row 8 from the bottom = y 7 */
    ck_assert_int_eq(m[1], 6 * 15 + 8);
    ck_assert_int_eq(m[2], 8 * 15 + 9);
    ck_assert_int_eq(opening_parse_line("  H8,I9", 15, m, BOARD_CELLS, err, sizeof err), 2);
    ck_assert_int_eq(opening_parse_line("h8 i9 j7  # eval +3", 15, m, BOARD_CELLS, err, sizeof err), 3);
    ck_assert_int_eq(opening_parse_line("0,0, 1,1 # two", 15, m, BOARD_CELLS, err, sizeof err), 2);
    ck_assert_int_eq(opening_parse_line("0,0, 1,-1, -2,3", 15, m, BOARD_CELLS, err, sizeof err), 3);
    ck_assert_int_eq(m[0], 7 * 15 + 7);
    ck_assert_int_eq(m[1], 6 * 15 + 8);
    ck_assert_int_eq(m[2], 10 * 15 + 5);
    ck_assert_int_eq(opening_parse_line("0,0", 20, m, BOARD_CELLS, err, sizeof err), 1);
    ck_assert_int_eq(m[0], 10 * 20 + 10);
    ck_assert_int_eq(opening_parse_line("# a comment", 15, m, BOARD_CELLS, err, sizeof err), 0);
    ck_assert_int_eq(opening_parse_line("   \r\n", 15, m, BOARD_CELLS, err, sizeof err), 0);
    static const refusal_t bad[] = {
        {"h8 h8", "already used"},
        {"h8 z99", "not a point"},
        {"0,0, 8,0", "off the 15x15"},
        {"0,0, 1", "pairs"},
        {"0,0 1,1", "expected ','"},
        {"h8 i", "not a point"},
    };
    check_refusals(parse_opening_15, bad, sizeof bad / sizeof bad[0]);
    ck_assert_int_eq(opening_parse_line("h8 i9 j7", 15, m, 2, err, sizeof err), -1);
    ck_assert_int_eq(opening_parse_line("h8", 99, m, 2, err, sizeof err), -1);
}
END_TEST

static Suite *record_suite(void)
{
    Suite *s = suite_create("record");
    ADD_CASE(s, "codec", 120, test_roundtrip_random_games, test_every_prefix_needs_more,
             test_empty_game_and_limits, test_encode_refuses_bad_records,
             test_validate_replays_rules, test_validate_resigner_cannot_win);
    ADD_CASE(s, "corruption", 120, test_random_corruptions, test_forged_records_keep_invariants,
             test_version_and_magic_checked, test_version1_still_reads, test_zip_bomb_rejected,
             test_good_frames_among_garbage, test_stream_one_byte_at_a_time,
             test_reader_empty_and_missing);
    ADD_CASE(s, "cli", 60, test_cli_dump_stats_psq);
    ADD_CASE(s, "gamefile", 120, test_psq_roundtrip_random_games, test_psq_forms_and_errors,
             test_psq_random_bytes_never_crash, test_psq_save_load_file, test_opening_lines);
    return s;
}

int main(void)
{
    return run_suite(record_suite());
}
