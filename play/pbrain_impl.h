/* Inside the Gomocup protocol engine: the state pbrain.c (the Gomocup
 * commands) and pbrain_yixin.c (the Yixin-Board extensions) share, and
 * the helpers each uses from the other. Not for other modules. */
#ifndef GZ_PLAY_PBRAIN_IMPL_H
#define GZ_PLAY_PBRAIN_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/board.h"
#include "engine/vct.h"
#include "play/brain.h"
#include "play/movetime.h"
#include "play/pbrain.h"

/* Realtime rounds (PBRAIN_INFO_MS, pbrain.h): the summary line, plus BEST
 * when the best move changed and LOSE for newly lost moves, at most
 * PBRAIN_LOSE_LINES of them a round. */
#define PBRAIN_LOSE_LINES 8

/* The block of lines (ending with DONE) being read, by the command that opened it. */
typedef enum {
    MODE_CMD,         /* no block */
    MODE_BOARD,       /* BOARD: X,Y,F lines, then a move */
    MODE_SWAP2,       /* SWAP2BOARD: X,Y lines */
    MODE_YXBOARD,     /* YXBOARD: X,Y,F lines, no move */
    MODE_YXBLOCK,     /* YXBLOCK: X,Y lines, points added to the blocked set */
    MODE_YXBLOCKUNDO, /* YXBLOCKUNDO: X,Y lines, points taken out of it */
} block_mode_t;

struct pbrain {
    pbrain_opts_t opts;
    char spec[256];

    brain_t *br;                /* the move chooser: model or bot */

    /* game */
    int started;
    int size;
    rule_t rule;
    board_t board;
    int me;                     /* STONE_BLACK / STONE_WHITE we play, 0 unknown */

    /* a block being read */
    block_mode_t mode;
    int blk_n;
    int16_t blk_move[BOARD_CELLS];
    uint8_t blk_field[BOARD_CELLS];
    char blk_err[160];
    uint8_t blocked[BOARD_CELLS];   /* BOARD field 3 points: occupied, neither side's */
    int irregular;              /* the board came from field 3 stones: no move order */
    int fixed_stones;           /* irregular: the first fixed_stones moves were set, not played */

    /* INFO */
    movetime_t mt;              /* timeout_turn, timeout_match, time_left, latency */
    long long max_memory;       /* bytes, 0 no limit */
    int game_type;
    int rule_unsupported;       /* INFO rule asked for caro or unknown bits */
    long long rule_bits;
    char folder[256];

    /* Yixin-Board extensions (pbrain_yixin.c) */
    int yixin;                  /* YXSHOWINFO came: a Yixin-Board GUI (INFO rule 2 is renju) */
    int realtime;               /* INFO show_detail / YXSHOWINFO: MESSAGE lines while searching */
    uint8_t yx_block[BOARD_CELLS];   /* YXBLOCK: points the root search avoids */
    FILE *rt_out;               /* where a search's realtime lines go, NULL: none */
    int rt_best;                /* the best move last said (REALTIME BEST) */
    uint8_t rt_lost[BOARD_CELLS];    /* root moves already said lost (REALTIME LOSE) */
    vct_t *vct;                 /* YXSEARCHDEFEND's solver, made on first use */

    /* stopping a search from the reader thread (pbrain_run): stop is read
     * by the search atomically; searching and ending are under mu */
    pthread_mutex_t mu;
    int stop;
    int searching;
    int ending;                 /* END was read: every search ends at once */
    int input_closed;           /* end of input: every search ends at once, moves still said */
};

/* ---- pbrain.c ---- */

/* One reply line, printable ASCII only. */
void pbrain_reply(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A short printable copy of user text for messages. */
void pbrain_quote(char *dst, size_t len, const char *s);
const char *pbrain_skip_ws(const char *s);
/* A non-negative integer <= max at *s; advances *s. 0, or -1 with why. */
int pbrain_parse_num(const char **s, long long max, long long *out, const char **why);
/* An integer that may be negative, in -max..max, and nothing after it. */
int pbrain_parse_int(const char *s, long long max, long long *out, const char **why);
int pbrain_at_end(const char *s);
int pbrain_word_is(const char *w, size_t n, const char *name);
void pbrain_format_xy(char *buf, size_t len, int move, int size);
/* moves[0..n) as "X,Y X,Y ...", as many as fit ("-" for none). */
void pbrain_format_line(char *buf, size_t len, const int *moves, int n, int size);
/* 0, or -1 after "ERROR <cmd> before START". */
int pbrain_need_start(pbrain_t *pb, FILE *out, const char *cmd);
/* Why the engine cannot search or play now (buf), or NULL. */
const char *pbrain_cannot_play(pbrain_t *pb, char *buf, size_t len);
/* Open a block of lines ending with DONE. */
void pbrain_block_start(pbrain_t *pb, block_mode_t mode);
/* The block's stones as the position (BOARD, YXBOARD): 0, or -1 with err
 * and nothing changed. */
int pbrain_block_position(pbrain_t *pb, char *err, size_t errlen);
/* Searches of the brain run between these two (YXSTOP and END reach them). */
void pbrain_search_begin(pbrain_t *pb);
void pbrain_search_end(pbrain_t *pb);
int pbrain_ending(pbrain_t *pb);

/* What a move request adds to a plain turn. */
typedef struct pbrain_move_request {
    const uint8_t *avoid;       /* more points the root search avoids (NULL: none) */
    double used_ms;             /* of the move's time, already spent on the command */
    /* called after the search and after the move was played on pb->board,
     * before the move line is said (NULL: none) */
    void (*report)(pbrain_t *pb, FILE *out, const brain_move_t *m, void *user);
    void *user;
} pbrain_move_request_t;
/* Choose, play and print our move; t0 is when the command arrived; rq may
 * be NULL. 0, or -1 after printing ERROR, or when END came during the
 * search (nothing printed): nothing played. */
int pbrain_answer_move(pbrain_t *pb, FILE *out, double t0, const pbrain_move_request_t *rq);
/* The points the root search avoids now: the marked stones, the YXBLOCK
 * set and `more` (may be NULL), dropping the soft ones when they would
 * leave no legal move. Returns how many legal moves are left. */
int pbrain_avoid_set(const pbrain_t *pb, const uint8_t *more, uint8_t *avoid);

/* ---- pbrain_yixin.c ---- */

/* A Yixin-Board command (the first word w of wn bytes, its args): 1 when
 * it was one (and is answered), else 0. */
int pbrain_yx_command(pbrain_t *pb, const char *w, size_t wn, const char *args, FILE *out,
                      double t0);
/* DONE of a YXBLOCK / YXBLOCKUNDO block. */
void pbrain_yx_block_done(pbrain_t *pb, block_mode_t mode, FILE *out);
/* INFO show_detail V: 1 when key is show_detail (and handled), else 0. */
int pbrain_yx_info(pbrain_t *pb, const char *key, size_t kn, const char *v, FILE *out);
/* Realtime lines around a search of the current position (when asked for). */
void pbrain_yx_watch_begin(pbrain_t *pb, FILE *out);
void pbrain_yx_watch_end(pbrain_t *pb);

#endif
