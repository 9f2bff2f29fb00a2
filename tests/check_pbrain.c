/* The Gomocup protocol engine (cli/pbrain.c) in-process through its line
 * handler, the real binary over pipes ($GOMOKU_BIN pbrain), time limits
 * over 100 moves, a fuzz run of the line parser, and pbrain:COMMAND
 * players (cli/player_pbrain.c) against our own binary and broken engines. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/gamefile.h"
#include "play/match.h"
#include "play/pbrain.h"
#include "play/player.h"
#include "play/swap2.h"
#include "engine/bot.h"
#include "nn/nn.h"
#include "util/util.h"
#include "tests/testkit.h"
#include "tests/testkit_nn.h"

extern char **environ;

static double now_ms(void) { return now_s() * 1e3; }

/* Replies timed from outside the brain include the scheduler's delays: a
 * loaded 2-core machine has held a ready brain back past a 100 ms turn
 * (102.7 and 174.4 ms seen). So one reply may take its turn plus LOAD_MS
 * (times slow()); what the brain itself decides is held to the turn: its
 * budget (pbrain_move_budget_ms), and the median of many replies. */
#define LOAD_MS 400.0

/* Reply times of a series of moves against a turn of turn_ms. */
typedef struct times {
    double ms[128];
    int n;
    double worst;
} times_t;

/* One reply of the series: within turn_ms plus the load allowance. */
static void times_add(times_t *t, double dt, double turn_ms, const char *what, int move)
{
    ck_assert_msg(dt <= turn_ms + LOAD_MS * slow(), "%s: move %d took %.1f ms (turn %.0f)",
                  what, move, dt, turn_ms);
    if (t->n < 128)
        t->ms[t->n++] = dt;
    if (dt > t->worst)
        t->worst = dt;
}

static int cmp_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The series kept the turn: its median reply within turn_ms. */
static void times_check(times_t *t, double turn_ms, const char *what)
{
    ck_assert_int_gt(t->n, 0);
    qsort(t->ms, (size_t)t->n, sizeof t->ms[0], cmp_ms);
    double median = t->ms[t->n / 2];
    ck_assert_msg(median <= turn_ms, "%s: median reply %.1f ms (turn %.0f)", what, median,
                  turn_ms);
}

/* ---- in-process harness ---- */

typedef struct harness {
    pbrain_t *pb;
    char *buf;
    size_t len;
    FILE *out;
    size_t seen;
    char reply[64][512];   /* lines written for the last command */
    int nreply;
} harness_t;

static void h_open(harness_t *h, const char *model)
{
    memset(h, 0, sizeof *h);
    pbrain_opts_t o;
    pbrain_opts_default(&o);
    o.model = model;
    o.quiet = 1;
    char err[256];
    h->pb = pbrain_create(&o, err, sizeof err);
    ck_assert_msg(h->pb != NULL, "pbrain_create %s: %s", model, err);
    h->out = open_memstream(&h->buf, &h->len);
    ck_assert(h->out != NULL);
}

static void h_close(harness_t *h)
{
    fclose(h->out);
    free(h->buf);
    pbrain_free(h->pb);
}

/* Send one line; collect the reply lines. Returns the handler's result. */
static int h_send(harness_t *h, const char *line)
{
    int rc = pbrain_handle_line(h->pb, line, h->out);
    fflush(h->out);
    h->nreply = 0;
    const char *p = h->buf + h->seen;
    while (*p) {
        const char *nl = strchr(p, '\n');
        ck_assert_msg(nl != NULL, "reply without newline after '%s'", line);
        size_t n = (size_t)(nl - p);
        if (h->nreply < 64) {
            ck_assert(n < sizeof h->reply[0]);
            memcpy(h->reply[h->nreply], p, n);
            h->reply[h->nreply][n] = 0;
            h->nreply++;
        }
        p = nl + 1;
    }
    h->seen = h->len;
    return rc;
}

/* The reply that is not MESSAGE/DEBUG (there must be exactly one). */
static const char *h_answer(harness_t *h)
{
    const char *a = NULL;
    for (int i = 0; i < h->nreply; i++) {
        if (strncmp(h->reply[i], "MESSAGE ", 8) == 0 || strncmp(h->reply[i], "DEBUG ", 6) == 0)
            continue;
        ck_assert_msg(a == NULL, "two answers: '%s' and '%s'", a, h->reply[i]);
        a = h->reply[i];
    }
    return a;
}

static const char *h_cmd(harness_t *h, const char *line)
{
    h_send(h, line);
    const char *a = h_answer(h);
    ck_assert_msg(a != NULL, "no answer to '%s'", line);
    return a;
}

static void h_silent(harness_t *h, const char *line)
{
    h_send(h, line);
    ck_assert_msg(h->nreply == 0, "'%s' answered '%s'", line, h->reply[0]);
}

static void h_silent_all(harness_t *h, const char *const *lines, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h_silent(h, lines[i]);
}

/* h_open, START 15, then INFO (one line, or NULL for none). */
static void h_start(harness_t *h, const char *model, const char *info)
{
    h_open(h, model);
    ck_assert_str_eq(h_cmd(h, "START 15"), "OK");
    if (info)
        h_silent(h, info);
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int as_move(const char *s, int size);

/* The opponent, a bot, moves on b (15x15) and its "TURN X,Y" goes into l:
 * 0, or -1 when it cannot move or its move ends the game. */
static int opponent_turn(board_t *b, bot_kind_t bot, uint64_t *rng, char *l, size_t n)
{
    int om = bot_move(bot, b, rng);
    if (om == MOVE_NONE || board_play(b, om) != MOVE_OK || board_over(b))
        return -1;
    snprintf(l, n, "TURN %d,%d", om % 15, om / 15);
    return 0;
}

/* h_send, timed: the milliseconds until the brain has answered. */
static double h_send_ms(harness_t *h, const char *line)
{
    double t0 = now_ms();
    h_send(h, line);
    return now_ms() - t0;
}

/* bot:greedy on 15x15 after "TURN 7,7": its answer (a move). */
static int h_greedy_after_center(harness_t *h)
{
    h_start(h, "bot:greedy", NULL);
    return as_move(h_cmd(h, "TURN 7,7"), 15);
}

/* "X,Y" -> move on board of size; -1 when it is not a move. */
static int as_move(const char *s, int size)
{
    int x, y, n = 0;
    if (sscanf(s, "%d,%d%n", &x, &y, &n) != 2 || s[n] || x < 0 || y < 0 || x >= size ||
        y >= size)
        return -1;
    return y * size + x;
}

static void expect_error(harness_t *h, const char *line)
{
    const char *a = h_cmd(h, line);
    ck_assert_msg(starts(a, "ERROR "), "'%s' answered '%s', want ERROR", line, a);
}

/* ---- commands ---- */

START_TEST(test_start_about_restart_end)
{
    harness_t h;
    h_open(&h, "bot:greedy");
    const char *a = h_cmd(&h, "ABOUT");
    ck_assert(strstr(a, "name=\"gomoku-zero\"") && strstr(a, "version=\""));
    ck_assert(pbrain_board(h.pb) == NULL);
    static const char *const refused[] = {
        "BEGIN", "TURN 1,1", "RESTART",   /* before START */
        "START 4", "START 21", "START -15", "START 99999999999999999999", "START fifteen",
        "START 15 3",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        expect_error(&h, refused[i]);
    ck_assert(pbrain_board(h.pb) == NULL);
    ck_assert_str_eq(h_cmd(&h, "START 20"), "OK");
    ck_assert_int_eq(pbrain_board(h.pb)->size, 20);
    ck_assert_str_eq(h_cmd(&h, "RECTSTART 15,15"), "OK");
    ck_assert_int_eq(pbrain_board(h.pb)->size, 15);
    expect_error(&h, "RECTSTART 30,20");
    expect_error(&h, "RECTSTART 15");
    ck_assert_int_eq(pbrain_board(h.pb)->size, 15);
    ck_assert_str_eq(h_cmd(&h, "start 9\r\n"), "OK");   /* case and CR LF */
    ck_assert(as_move(h_cmd(&h, "BEGIN"), 9) >= 0);
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 1);
    expect_error(&h, "BEGIN");            /* not on an empty board */
    ck_assert_str_eq(h_cmd(&h, "RESTART"), "OK");
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 0);
    ck_assert_int_eq(pbrain_board(h.pb)->size, 9);
    h_silent(&h, "");
    h_silent(&h, "   \r");
    ck_assert(starts(h_cmd(&h, "FOO 1,2"), "UNKNOWN "));
    ck_assert(starts(h_cmd(&h, "SUGGEST 1,2"), "UNKNOWN "));
    ck_assert_int_eq(h_send(&h, "END"), PBRAIN_END);
    ck_assert_int_eq(h.nreply, 0);
    h_close(&h);
}
END_TEST

START_TEST(test_turn_and_bad_turns)
{
    harness_t h;
    int m = h_greedy_after_center(&h);
    ck_assert(m >= 0 && m != 7 * 15 + 7);
    const board_t *b = pbrain_board(h.pb);
    ck_assert_int_eq(b->nmoves, 2);
    ck_assert_int_eq(b->cells[7 * 15 + 7], STONE_BLACK);
    ck_assert_int_eq(b->cells[m], STONE_WHITE);
    board_t before = *b;
    const char *bad[] = {"TURN 7,7", "TURN 15,3", "TURN 3,15", "TURN -1,3", "TURN 3,-1",
                         "TURN 3", "TURN 3 4", "TURN 3,", "TURN ,3", "TURN", "TURN a,b",
                         "TURN 3,4,5", "TURN 3,4 x", "TURN 4294967297,1",
                         "TURN 99999999999999999999999,1", "TURN 1.5,2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_error(&h, bad[i]);
        ck_assert_msg(memcmp(&before, pbrain_board(h.pb), sizeof before) == 0,
                      "'%s' changed the position", bad[i]);
    }
    /* spaces around the numbers are fine */
    ck_assert(as_move(h_cmd(&h, "TURN  3 , 4 "), 15) >= 0);
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 4);
    h_close(&h);
}
END_TEST

START_TEST(test_board_block)
{
    harness_t h;
    h_start(&h, "bot:greedy", NULL);
    /* equal counts: we are black; greedy must complete its open four */
    const char *lines[] = {"BOARD", "5,7,1", "6,7,1", "7,7,1", "8,7,1", "0,0,2", "0,2,2",
                           "0,4,2", "14,14,2"};
    h_silent_all(&h, lines, sizeof lines / sizeof lines[0]);
    int m = as_move(h_cmd(&h, "DONE"), 15);
    ck_assert(m == 7 * 15 + 4 || m == 7 * 15 + 9);
    const board_t *b = pbrain_board(h.pb);
    ck_assert_int_eq(b->cells[5 + 7 * 15], STONE_BLACK);
    ck_assert_int_eq(b->cells[0], STONE_WHITE);
    ck_assert_int_eq(b->result, RESULT_BLACK);
    expect_error(&h, "TURN 3,3");   /* the game is over */

    /* one more opponent stone: we are white and must block the four */
    h_silent(&h, "BOARD");
    const char *w[] = {"5,7,2", "6,7,2", "7,7,2", "8,7,2", "0,0,1", "0,2,1", "0,4,1"};
    h_silent_all(&h, w, 7);
    h_send(&h, "DONE");
    m = as_move(h_answer(&h), 15);
    ck_assert_msg(m == 7 * 15 + 4 || m == 7 * 15 + 9, "did not block: %s", h_answer(&h));
    ck_assert_int_eq(pbrain_board(h.pb)->cells[m], STONE_WHITE);

    /* bad blocks: ERROR at DONE, position unchanged */
    board_t before = *pbrain_board(h.pb);
    const char *bad[][4] = {
        {"7,7,4", NULL},                 /* field */
        {"7,7,0", NULL},
        {"15,1,1", NULL},                /* off board */
        {"1,1,1", "1,1,2", NULL},        /* twice */
        {"1,1,1", "2,2,1", NULL},        /* two own, no opponent: counts */
        {"1,1,2", "2,2,2", NULL},
        {"1,1", NULL},                   /* missing field */
        {"garbage", NULL},
        {"-1,2,1", NULL},
        {"1,2,1,1", NULL},
        {"1,,2", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        h_silent(&h, "BOARD");
        for (int j = 0; bad[i][j]; j++)
            h_silent(&h, bad[i][j]);
        expect_error(&h, "DONE");
        ck_assert_msg(memcmp(&before, pbrain_board(h.pb), sizeof before) == 0,
                      "bad BOARD %zu changed the position", i);
    }
    /* a command inside the block: DONE was lost; the block is dropped and
     * the command runs */
    h_silent(&h, "BOARD");
    h_silent(&h, "1,1,1");
    h_send(&h, "RESTART");
    ck_assert_int_eq(h.nreply, 2);
    ck_assert(starts(h.reply[0], "ERROR "));
    ck_assert_str_eq(h.reply[1], "OK");
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 0);
    expect_error(&h, "DONE");   /* no block open */
    /* an empty BOARD: we open as black */
    h_silent(&h, "BOARD");
    ck_assert(as_move(h_cmd(&h, "DONE"), 15) >= 0);
    ck_assert_int_eq(pbrain_board(h.pb)->cells[pbrain_board(h.pb)->last], STONE_BLACK);
    h_close(&h);
}
END_TEST

/* BOARD field 3 (continuous game): marked stones are occupied points of
 * neither side; own and opponent stones then need not alternate. */
static void field3_cases(const char *model)
{
    harness_t h;
    h_start(&h, model, "INFO timeout_turn 200");
    /* our four on row 7 with its left end marked: only 9,7 wins; a marked
     * five of the opponent on row 0; 4 own and 1 opponent stone */
    const char *lines[] = {"BOARD", "5,7,1", "6,7,1", "7,7,1", "8,7,1", "4,7,3", "0,0,3",
                           "1,0,3", "2,0,3", "3,0,3", "4,0,3", "12,12,2"};
    h_silent_all(&h, lines, sizeof lines / sizeof lines[0]);
    const char *a = h_cmd(&h, "DONE");
    ck_assert_msg(as_move(a, 15) == 7 * 15 + 9, "%s: BOARD with field 3 answered '%s', want 9,7",
                  model, a);
    const board_t *b = pbrain_board(h.pb);
    ck_assert_int_eq(b->cells[7 * 15 + 4], STONE_EMPTY);   /* blocked, not a stone of a side */
    ck_assert_int_eq(b->result, b->cells[7 * 15 + 9] == STONE_BLACK ? RESULT_BLACK : RESULT_WHITE);
    /* a position with moves left: marked points are refused to the
     * opponent, never played by us; takeback of a set stone is refused */
    h_cmd(&h, "RESTART");
    const char *open[] = {"BOARD", "7,7,1", "6,6,2", "8,8,2", "0,0,3", "1,1,3"};
    h_silent_all(&h, open, sizeof open / sizeof open[0]);
    int m = as_move(h_cmd(&h, "DONE"), 15);
    ck_assert(m >= 0 && m != 0 && m != 16);
    expect_error(&h, "TURN 0,0");
    expect_error(&h, "PLAY 1,1");
    expect_error(&h, "TAKEBACK 7,7");
    for (int i = 0; i < 6; i++) {
        char l[32];
        int om = -1;
        for (int p = 0; p < 225 && om < 0; p++)
            if (p != 0 && p != 16 && pbrain_board(h.pb)->cells[p] == STONE_EMPTY)
                om = p;
        snprintf(l, sizeof l, "TURN %d,%d", om % 15, om / 15);
        h_send(&h, l);
        const char *r = h_answer(&h);
        if (pbrain_board(h.pb)->result != RESULT_NONE)
            break;
        m = as_move(r, 15);
        ck_assert_msg(m >= 0 && m != 0 && m != 16, "%s played '%s'", model, r);
    }
    h_close(&h);
}

START_TEST(test_board_field3)
{
    field3_cases("bot:greedy");
    field3_cases("mcts:uniform");
}
END_TEST

/* The clock of a BOARD position starts at DONE: a slow block costs no
 * margin on later moves. */
START_TEST(test_board_clock_starts_at_done)
{
    harness_t h;
    h_start(&h, "mcts:uniform", "INFO timeout_turn 100");
    h_silent(&h, "BOARD");
    h_silent(&h, "7,7,2");
    usleep(300 * 1000);   /* the manager is slow between lines */
    double t0 = now_ms();
    h_send(&h, "DONE");
    double dt = now_ms() - t0;
    ck_assert(as_move(h_answer(&h), 15) >= 0);
    ck_assert_int_eq(h.nreply, 2);   /* searched: MESSAGE + move */
    ck_assert_msg(dt <= 100.0 + LOAD_MS * slow(), "DONE answered after %.1f ms", dt);
    ck_assert_msg(pbrain_margin_ms(h.pb) <= 45, "margin %d ms after a slow BOARD",
                  pbrain_margin_ms(h.pb));
    ck_assert_int_ge(pbrain_move_budget_ms(h.pb), 55);
    h_close(&h);
}
END_TEST

START_TEST(test_renju_board_order_and_rules)
{
    harness_t h;
    h_start(&h, "bot:greedy", "INFO rule 4");
    ck_assert_int_eq(pbrain_board(h.pb)->rule, RULE_RENJU);
    /* renju: lines come in move order; the board keeps that order */
    const int order[][3] = {{7, 7, 2}, {8, 8, 1}, {6, 8, 2}, {8, 6, 1}, {9, 9, 2}};
    h_silent(&h, "BOARD");
    for (int i = 0; i < 5; i++) {
        char l[32];
        snprintf(l, sizeof l, "%d,%d,%d", order[i][0], order[i][1], order[i][2]);
        h_silent(&h, l);
    }
    ck_assert(as_move(h_cmd(&h, "DONE"), 15) >= 0);
    const board_t *b = pbrain_board(h.pb);
    ck_assert_int_eq(b->nmoves, 6);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(b->moves[i], order[i][1] * 15 + order[i][0]);
    /* black (the opponent) on a forbidden point is refused: 7,7 would be a
     * double three for black */
    h_cmd(&h, "RESTART");
    const char *dt[] = {"BOARD", "5,7,2", "0,0,1", "6,7,2", "0,14,1", "7,5,2", "14,0,1",
                        "7,6,2"};
    for (int i = 0; i < 8; i++)
        h_silent(&h, dt[i]);
    ck_assert(as_move(h_cmd(&h, "DONE"), 15) >= 0);
    ck_assert_str_eq(h_cmd(&h, "PLAY 14,7"), "14,7");   /* our move away from 7,7 */
    board_t before = *pbrain_board(h.pb);
    const char *a = h_cmd(&h, "TURN 7,7");
    ck_assert_msg(starts(a, "ERROR") && strstr(a, "forbidden"), "%s", a);
    ck_assert(memcmp(&before, pbrain_board(h.pb), sizeof before) == 0);
    h_close(&h);
    /* rule bits */
    h_open(&h, "bot:greedy");
    h_cmd(&h, "START 15");
    h_silent(&h, "INFO rule 1");
    ck_assert_int_eq(pbrain_board(h.pb)->rule, RULE_STANDARD);
    h_silent(&h, "INFO rule 3");   /* continuous game bit is ignored */
    ck_assert_int_eq(pbrain_board(h.pb)->rule, RULE_STANDARD);
    h_silent(&h, "INFO rule 0");
    ck_assert_int_eq(pbrain_board(h.pb)->rule, RULE_FREESTYLE);
    const char *caro = h_cmd(&h, "INFO rule 8");   /* caro: reported at once */
    ck_assert_msg(starts(caro, "ERROR ") && strstr(caro, "caro"), "%s", caro);
    expect_error(&h, "INFO rule 16");
    expect_error(&h, "BEGIN");   /* and no move is played under a rule we do not play */
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 0);
    h_silent(&h, "INFO rule 5");
    ck_assert_int_eq(pbrain_board(h.pb)->rule, RULE_RENJU);
    ck_assert(as_move(h_cmd(&h, "BEGIN"), 15) >= 0);
    h_close(&h);
}
END_TEST

/* A model's first stone goes to the centre at once, without a search (a
 * pattern net cannot rank the points of an empty board), on any board. */
START_TEST(test_first_stone_centre)
{
    harness_t h;
    h_start(&h, "mcts:uniform", "INFO timeout_turn 300");
    ck_assert_str_eq(h_cmd(&h, "BEGIN"), "7,7");
    ck_assert_int_eq(h.nreply, 1);   /* no search, no MESSAGE */
    ck_assert(as_move(h_cmd(&h, "TURN 8,8"), 15) >= 0);   /* searched, as ever */
    ck_assert_str_eq(h_cmd(&h, "RESTART"), "OK");
    ck_assert_str_eq(h_cmd(&h, "BEGIN"), "7,7");
    ck_assert_str_eq(h_cmd(&h, "START 20"), "OK");
    ck_assert_str_eq(h_cmd(&h, "BEGIN"), "10,10");
    ck_assert_str_eq(h_cmd(&h, "START 6"), "OK");
    ck_assert_str_eq(h_cmd(&h, "BEGIN"), "3,3");
    h_close(&h);
}
END_TEST

START_TEST(test_info_time_and_memory)
{
    harness_t h;
    h_start(&h, "mcts:uniform", "INFO timeout_turn 100");
    ck_assert_int_le(pbrain_margin_ms(h.pb), 45);   /* the margin's bound: 45% of the move */
    h_silent(&h, "INFO timeout_turn 1000");
    int b1 = pbrain_move_budget_ms(h.pb);
    ck_assert_int_gt(b1, 800);
    ck_assert_int_lt(b1, 1000);
    ck_assert_int_eq(b1 + pbrain_margin_ms(h.pb) >= 999, 1);
    /* a share of time_left: 35 moves left at the start */
    h_silent(&h, "INFO time_left 7000");
    ck_assert_int_lt(pbrain_move_budget_ms(h.pb), 200);
    ck_assert_int_gt(pbrain_move_budget_ms(h.pb), 100);
    h_silent(&h, "INFO time_left -50");
    ck_assert_int_eq(pbrain_move_budget_ms(h.pb), 0);
    h_silent(&h, "INFO time_left 2147483647");   /* unlimited */
    ck_assert_int_eq(pbrain_move_budget_ms(h.pb), b1);
    h_silent(&h, "INFO timeout_turn 0");
    ck_assert_int_eq(pbrain_move_budget_ms(h.pb), 0);
    ck_assert(as_move(h_cmd(&h, "BEGIN"), 15) >= 0);
    ck_assert_int_eq(h.nreply, 1);   /* at once: no search, no MESSAGE */
    h_silent(&h, "INFO timeout_match 100000");
    h_silent(&h, "INFO game_type 1");
    h_silent(&h, "INFO folder /tmp/x y");
    h_silent(&h, "INFO evaluate 3,3");
    h_silent(&h, "INFO some_new_key 17");   /* unknown keys are ignored */
    const char *bad[] = {"INFO timeout_turn abc", "INFO timeout_turn -5", "INFO timeout_turn",
                         "INFO time_left 1e9", "INFO max_memory 1,5", "INFO rule x",
                         "INFO game_type 9", "INFO timeout_turn 99999999999999999", "INFO"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_error(&h, bad[i]);
    ck_assert_int_eq(pbrain_move_budget_ms(h.pb), 0);   /* timeout_turn 0 kept */
    /* memory: tree + cache fit under max_memory */
    ck_assert_uint_gt(pbrain_tree_budget(h.pb), 16u << 20);
    h_silent(&h, "INFO max_memory 83886080");
    ck_assert_uint_gt(pbrain_tree_budget(h.pb), 1u << 20);
    ck_assert_uint_lt(pbrain_tree_budget(h.pb), 83886080u);
    h_silent(&h, "INFO timeout_turn 50");
    ck_assert(as_move(h_cmd(&h, "TURN 0,1"), 15) >= 0);   /* searches in the new tree */
    const char *small = h_cmd(&h, "INFO max_memory 1000");   /* reported when it arrives */
    ck_assert_msg(starts(small, "ERROR ") && strstr(small, "max_memory"), "%s", small);
    expect_error(&h, "TURN 0,2");
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 3);
    h_silent(&h, "INFO max_memory 0");
    ck_assert(as_move(h_cmd(&h, "TURN 0,2"), 15) >= 0);
    h_close(&h);
}
END_TEST

START_TEST(test_takeback_and_play)
{
    harness_t h;
    int m = h_greedy_after_center(&h);
    char l[32];
    expect_error(&h, "TAKEBACK 7,7");      /* not the side that moved last */
    expect_error(&h, "TAKEBACK 0,0");      /* empty */
    expect_error(&h, "TAKEBACK 0");
    snprintf(l, sizeof l, "TAKEBACK %d,%d", m % 15, m / 15);
    ck_assert_str_eq(h_cmd(&h, l), "OK");
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 1);
    ck_assert_str_eq(h_cmd(&h, "TAKEBACK 7,7"), "OK");
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 0);
    /* PLAY imposes our move: it replaces the one we just played */
    m = as_move(h_cmd(&h, "TURN 7,7"), 15);
    int forced = m == 0 ? 1 : 0;
    snprintf(l, sizeof l, "PLAY %d,0", forced);
    char want[16];
    snprintf(want, sizeof want, "%d,0", forced);
    ck_assert_str_eq(h_cmd(&h, l), want);
    const board_t *b = pbrain_board(h.pb);
    ck_assert_int_eq(b->nmoves, 2);
    ck_assert_int_eq(b->cells[forced], STONE_WHITE);
    ck_assert_int_eq(b->cells[m], m == forced ? STONE_WHITE : STONE_EMPTY);
    expect_error(&h, "PLAY 7,7");          /* occupied */
    expect_error(&h, "PLAY 20,1");
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 2);
    ck_assert(as_move(h_cmd(&h, "TURN 3,3"), 15) >= 0);
    h_close(&h);
}
END_TEST

static void swap2_cases(const char *model)
{
    harness_t h;
    h_start(&h, model, "INFO rule 1");
    h_silent(&h, "INFO timeout_turn 300");
    h_silent(&h, "SWAP2BOARD");
    const char *a = h_cmd(&h, "DONE");
    int x[3], y[3];
    ck_assert_int_eq(sscanf(a, "%d,%d %d,%d %d,%d", &x[0], &y[0], &x[1], &y[1], &x[2], &y[2]),
                     6);
    for (int i = 0; i < 3; i++) {
        ck_assert(x[i] >= 0 && x[i] < 15 && y[i] >= 0 && y[i] < 15);
        for (int j = 0; j < i; j++)
            ck_assert(x[i] != x[j] || y[i] != y[j]);
    }
    /* three stones: SWAP, the 4th stone, or the 4th and 5th. A bot has
     * no value: it stays white; the uniform search values a quiet
     * position 0, too close to call: it places two stones */
    const char *three[] = {"SWAP2BOARD", "7,7", "8,7", "9,9"};
    for (int i = 0; i < 4; i++)
        h_silent(&h, three[i]);
    a = h_cmd(&h, "DONE");
    int two[4];
    if (strcmp(model, "bot:greedy") == 0) {
        ck_assert_msg(as_move(a, 15) >= 0, "3 stones, a bot: '%s'", a);
        ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 4);
        ck_assert_int_eq(pbrain_board(h.pb)->cells[as_move(a, 15)], STONE_WHITE);
    } else {
        ck_assert_msg(sscanf(a, "%d,%d %d,%d", &two[0], &two[1], &two[2], &two[3]) == 4,
                      "3 stones, a value of 0: '%s', want two stones", a);
        const board_t *b = pbrain_board(h.pb);
        ck_assert_int_eq(b->nmoves, 5);
        ck_assert_int_eq(b->cells[two[1] * 15 + two[0]], STONE_WHITE);
        ck_assert_int_eq(b->cells[two[3] * 15 + two[2]], STONE_BLACK);
        ck_assert(strstr(h.reply[h.nreply - 2], "placing two stones") != NULL);
    }
    const char *five[] = {"SWAP2BOARD", "7,7", "8,7", "9,9", "8,8", "8,6"};
    for (int i = 0; i < 6; i++)
        h_silent(&h, five[i]);
    a = h_cmd(&h, "DONE");
    ck_assert_msg(strcmp(a, "SWAP") == 0 || as_move(a, 15) >= 0, "5 stones: '%s'", a);
    const char *four[] = {"SWAP2BOARD", "7,7", "8,7", "9,9", "8,8"};
    for (int i = 0; i < 5; i++)
        h_silent(&h, four[i]);
    expect_error(&h, "DONE");
    const char *dup[] = {"SWAP2BOARD", "7,7", "7,7", "9,9"};
    for (int i = 0; i < 4; i++)
        h_silent(&h, dup[i]);
    expect_error(&h, "DONE");
    h_silent(&h, "SWAP2BOARD");
    h_silent(&h, "7,7,1");   /* X,Y only */
    expect_error(&h, "DONE");
    h_close(&h);
}

START_TEST(test_swap2)
{
    swap2_cases("bot:greedy");
    swap2_cases("mcts:uniform");
}
END_TEST

START_TEST(test_search_finds_win_and_reports)
{
    harness_t h;
    h_start(&h, "mcts:uniform", "INFO timeout_turn 200");
    const char *lines[] = {"BOARD", "3,3,1", "4,4,1", "5,5,1", "6,6,1", "0,10,2", "2,10,2",
                           "4,10,2", "6,10,2"};
    h_silent_all(&h, lines, sizeof lines / sizeof lines[0]);
    h_send(&h, "DONE");
    int m = as_move(h_answer(&h), 15);
    ck_assert(m == 2 * 15 + 2 || m == 7 * 15 + 7);
    ck_assert_int_eq(h.nreply, 2);
    ck_assert(starts(h.reply[0], "MESSAGE visits "));
    ck_assert(strstr(h.reply[0], "winrate") && strstr(h.reply[0], "pv") &&
              strstr(h.reply[0], "playouts/s"));
    ck_assert_msg(strstr(h.reply[0], "% (black, the engine) pv "), "%s", h.reply[0]);
    h_close(&h);
}
END_TEST

/* A real (tiny, untrained) model file through the CPU net with T search
 * threads: analysis MESSAGE lines, every move within timeout_turn, play at
 * once with 0. */
static void model_file_cases(const char *path, int threads)
{
    char err[256];
    pbrain_opts_t o;
    pbrain_opts_default(&o);
    o.model = path;
    o.device = "cpu";
    o.quiet = 1;
    o.threads = threads;
    pbrain_t *pb = pbrain_create(&o, err, sizeof err);
    ck_assert_msg(pb != NULL, "%s", err);
    harness_t h;
    memset(&h, 0, sizeof h);
    h.pb = pb;
    h.out = open_memstream(&h.buf, &h.len);
    expect_error(&h, "START 16");   /* the net serves boards up to 15 */
    ck_assert_str_eq(h_cmd(&h, "START 15"), "OK");
    h_silent(&h, "INFO timeout_turn 100");
    h_silent(&h, "INFO max_memory 200000000");
    ck_assert_uint_lt(pbrain_tree_budget(pb), 200000000u);
    uint64_t rng = 5;
    board_t b;
    board_init(&b, 15, RULE_FREESTYLE);
    int moves = asan() ? 5 : 15;
    times_t t = {.n = 0};
    char what[32];
    snprintf(what, sizeof what, "%d threads", threads);
    for (int i = 0; i < moves && !board_over(&b); i++) {
        char l[32];
        if (opponent_turn(&b, BOT_RANDOM, &rng, l, sizeof l) != 0)
            break;
        times_add(&t, h_send_ms(&h, l), 100.0, what, i);
        const char *a = h_answer(&h);
        int m = as_move(a, 15);
        ck_assert_msg(m >= 0 && board_play(&b, m) == MOVE_OK, "%d threads: move %d: '%s'",
                      threads, i, a ? a : "(none)");
        ck_assert_int_eq(h.nreply, 2);
        ck_assert(starts(h.reply[0], "MESSAGE visits ") && strstr(h.reply[0], "winrate"));
    }
    times_check(&t, 100.0, what);
    h_silent(&h, "INFO timeout_turn 0");
    ck_assert_str_eq(h_cmd(&h, "RESTART"), "OK");
    ck_assert(as_move(h_cmd(&h, "BEGIN"), 15) >= 0);
    ck_assert_int_eq(h.nreply, 1);   /* at once: no search, no MESSAGE */
    fclose(h.out);
    free(h.buf);
    pbrain_free(pb);
}

START_TEST(test_model_file)
{
    char path[256];
    small_model_file(path, sizeof path, 1, 8, 15, 3);
    model_file_cases(path, 1);
    model_file_cases(path, 2);
    unlink(path);
}
END_TEST

/* ---- time: 100 moves at 100 ms, in-process ---- */

START_TEST(test_time_100_moves_in_process)
{
    harness_t h;
    h_open(&h, "mcts:uniform");
    uint64_t rng = 7;
    int moves = 0, games = 0;
    times_t t = {.n = 0};
    h_silent(&h, "INFO timeout_turn 100");
    while (moves < 100) {
        h_cmd(&h, "START 15");
        games++;
        board_t b;
        board_init(&b, 15, RULE_FREESTYLE);
        while (moves < 100) {
            char l[32];
            if (opponent_turn(&b, BOT_GREEDY, &rng, l, sizeof l) != 0)
                break;
            double dt = h_send_ms(&h, l);
            const char *a = h_answer(&h);
            ck_assert_msg(a && as_move(a, 15) >= 0, "move %d: '%s'", moves, a ? a : "(none)");
            ck_assert_int_eq(board_play(&b, as_move(a, 15)), MOVE_OK);
            times_add(&t, dt, 100.0, "in-process", moves);
            moves++;
            if (board_over(&b))
                break;
        }
    }
    fprintf(stderr, "pbrain in-process: %d moves in %d games, worst %.1f ms of 100, margin %d ms\n",
            moves, games, t.worst, pbrain_margin_ms(h.pb));
    times_check(&t, 100.0, "in-process");
    h_close(&h);
}
END_TEST

/* ---- the real binary over pipes ---- */

typedef struct proc {
    pid_t pid;
    int to, from;
    char buf[8192];
    size_t len;
} proc_t;

static void proc_start(proc_t *p, const char *const *args)
{
    int in[2], out[2];
    ck_assert(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)bin();
    for (int i = 0; args[i] && n < 15; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    ck_assert_int_eq(posix_spawn(&p->pid, argv[0], &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    p->to = in[1];
    p->from = out[0];
    p->len = 0;
    signal(SIGPIPE, SIG_IGN);
}

static void proc_send(proc_t *p, const char *line)
{
    char b[256];
    int n = snprintf(b, sizeof b, "%s\r\n", line);
    ck_assert(write(p->to, b, (size_t)n) == n);
}

/* The next line, whatever it is, within timeout_ms; NULL on timeout/EOF. */
static const char *proc_line(proc_t *p, char *line, size_t len, double timeout_ms)
{
    double deadline = now_ms() + timeout_ms;
    for (;;) {
        char *nl = memchr(p->buf, '\n', p->len);
        if (nl) {
            size_t n = (size_t)(nl - p->buf);
            ck_assert(n < len);
            memcpy(line, p->buf, n);
            line[n] = 0;
            if (n && line[n - 1] == '\r')
                line[n - 1] = 0;
            memmove(p->buf, nl + 1, p->len - n - 1);
            p->len -= n + 1;
            return line;
        }
        double left = deadline - now_ms();
        if (left <= 0)
            return NULL;
        struct pollfd pfd = {p->from, POLLIN, 0};
        if (poll(&pfd, 1, (int)left + 1) <= 0)
            continue;
        ssize_t r = read(p->from, p->buf + p->len, sizeof p->buf - p->len);
        if (r <= 0)
            return NULL;
        p->len += (size_t)r;
    }
}

/* Next line that is not MESSAGE/DEBUG, within timeout_ms; NULL on
 * timeout/EOF. With msg, the last MESSAGE line before it goes there ("" if
 * none). */
static const char *proc_reply(proc_t *p, char *line, size_t len, double timeout_ms, char *msg,
                              size_t msglen)
{
    double deadline = now_ms() + timeout_ms;
    if (msg)
        msg[0] = 0;
    while (proc_line(p, line, len, deadline - now_ms())) {
        if (!starts(line, "MESSAGE ") && !starts(line, "DEBUG "))
            return line;
        if (msg && starts(line, "MESSAGE ")) {
            size_t n = strlen(line), k = n < msglen - 1 ? n : msglen - 1;
            memcpy(msg, line, k);
            msg[k] = 0;
        }
    }
    return NULL;
}

/* The first answer of a fresh process: a CUDA-linked binary takes seconds
 * to start on a loaded 2-core machine. */
#define START_MS 30000

static const char *proc_answer(proc_t *p, char *line, size_t len, double timeout_ms)
{
    return proc_reply(p, line, len, timeout_ms, NULL, 0);
}

static int proc_wait(proc_t *p, double timeout_ms)
{
    int rc = wait_exit(p->pid, timeout_ms / 1e3);
    close(p->to);
    close(p->from);
    return rc;
}

START_TEST(test_binary_transcript)
{
    proc_t p;
    const char *args[] = {"pbrain", "--model", "bot:greedy", NULL};
    proc_start(&p, args);
    char line[4096];
    proc_send(&p, "ABOUT");
    ck_assert(strstr(proc_answer(&p, line, sizeof line, START_MS), "gomoku-zero"));
    proc_send(&p, "TURN 1,1");
    ck_assert(starts(proc_answer(&p, line, sizeof line, 5000), "ERROR"));
    proc_send(&p, "START 15");
    ck_assert_str_eq(proc_answer(&p, line, sizeof line, START_MS), "OK");
    proc_send(&p, "INFO timeout_turn 1000");
    proc_send(&p, "BEGIN");
    ck_assert(as_move(proc_answer(&p, line, sizeof line, 5000), 15) >= 0);
    proc_send(&p, "TURN 0,0");
    ck_assert(as_move(proc_answer(&p, line, sizeof line, 5000), 15) >= 0);
    proc_send(&p, "TURN 0,0");
    ck_assert(starts(proc_answer(&p, line, sizeof line, 5000), "ERROR"));
    /* a 100 kB line is cut and refused; the engine goes on */
    char *big = malloc(100001);
    memset(big, 'A', 100000);
    big[100000] = '\n';
    ck_assert(write(p.to, big, 100001) == 100001);
    free(big);
    ck_assert(starts(proc_answer(&p, line, sizeof line, 5000), "ERROR"));
    proc_send(&p, "TURN 0,1");
    ck_assert(as_move(proc_answer(&p, line, sizeof line, 5000), 15) >= 0);
    proc_send(&p, "END");
    ck_assert_int_eq(proc_wait(&p, 5000), 0);

    /* end of input ends it cleanly too */
    proc_start(&p, args);
    proc_send(&p, "START 15");
    ck_assert_str_eq(proc_answer(&p, line, sizeof line, START_MS), "OK");
    close(p.to);
    p.to = open("/dev/null", O_WRONLY);
    ck_assert_int_eq(proc_wait(&p, 5000), 0);

    /* the program under the Gomocup brain name speaks the protocol with no arguments */
    char brain[1024];
    snprintf(brain, sizeof brain, "%s", getenv("GOMOKU_BIN"));
    char *slash = strrchr(brain, '/');
    ck_assert(slash != NULL);
    snprintf(slash + 1, sizeof brain - (size_t)(slash + 1 - brain), "pbrain-gomoku-zero");
    ck_assert_msg(access(brain, X_OK) == 0, "%s is not built", brain);
    pid_t pid;
    int in[2], out[2];
    ck_assert(pipe(in) == 0 && pipe(out) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    char *bargv[] = {brain, NULL};
    ck_assert_int_eq(posix_spawn(&pid, brain, &fa, NULL, bargv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    p.pid = pid;
    p.to = in[1];
    p.from = out[0];
    p.len = 0;
    proc_send(&p, "START 20");
    ck_assert_str_eq(proc_answer(&p, line, sizeof line, START_MS), "OK");
    proc_send(&p, "BEGIN");
    ck_assert(as_move(proc_answer(&p, line, sizeof line, 5000), 20) >= 0);
    proc_send(&p, "END");
    ck_assert_int_eq(proc_wait(&p, 5000), 0);

    /* usage errors */
    const char *bad[] = {"pbrain", NULL};
    proc_start(&p, bad);
    ck_assert_int_eq(proc_wait(&p, START_MS), 2);
    const char *threads[] = {"pbrain", "--model", "mcts:uniform", "--threads", "17", NULL};
    proc_start(&p, threads);
    ck_assert_int_eq(proc_wait(&p, START_MS), 2);
    const char *nofile[] = {"pbrain", "--model", "/nonexistent/x.gzm", NULL};
    proc_start(&p, nofile);
    ck_assert_int_eq(proc_wait(&p, START_MS), 1);
}
END_TEST

/* Every reply of the real binary within timeout_turn, measured from our
 * write to its answer, over 100 moves (30 under ASan) at 100 ms. */
START_TEST(test_binary_time_limit)
{
    proc_t p;
    const char *args[] = {"pbrain", "--model", "mcts:uniform", NULL};
    proc_start(&p, args);
    char line[4096];
    uint64_t rng = 11;
    int target = asan() ? 30 : 100, moves = 0;
    times_t t = {.n = 0};
    proc_send(&p, "INFO timeout_turn 100");
    while (moves < target) {
        proc_send(&p, "START 15");
        ck_assert_str_eq(proc_answer(&p, line, sizeof line, START_MS), "OK");
        board_t b;
        board_init(&b, 15, RULE_FREESTYLE);
        while (!board_over(&b) && moves < target) {
            char l[32];
            if (opponent_turn(&b, BOT_GREEDY, &rng, l, sizeof l) != 0)
                break;
            double t0 = now_ms();
            proc_send(&p, l);
            const char *a = proc_answer(&p, line, sizeof line, 2000);
            double dt = now_ms() - t0;
            ck_assert_msg(a != NULL, "no answer to %s", l);
            int m = as_move(a, 15);
            ck_assert_msg(m >= 0 && board_play(&b, m) == MOVE_OK, "bad answer '%s'", a);
            times_add(&t, dt, 100.0, "binary", moves);
            moves++;
        }
    }
    fprintf(stderr, "pbrain binary: %d moves, worst %.1f ms of 100 (write to answer)\n", moves,
            t.worst);
    times_check(&t, 100.0, "binary");
    proc_send(&p, "END");
    ck_assert_int_eq(proc_wait(&p, 5000), 0);
}
END_TEST

/* The search time a MESSAGE line reports ("... time N ms"), -1 without one. */
static double message_search_ms(const char *msg)
{
    const char *t = strstr(msg, " time ");
    double ms;
    return t && sscanf(t, " time %lf ms", &ms) == 1 ? ms : -1.0;
}

/* A stall (the brain stopped with SIGSTOP for 1 s during a move) costs
 * the next moves part of their search time, not all of it: each of the 10
 * moves after it still searches (a MESSAGE with its search time; the raw
 * policy would print none). Their replies' times are printed; the 100 ms
 * bound itself is test_binary_time_limit's. */
START_TEST(test_binary_stall_then_search)
{
    proc_t p;
    const char *args[] = {"pbrain", "--model", "mcts:uniform", NULL};
    proc_start(&p, args);
    char line[4096], msg[1024];
    uint64_t rng = 23;
    int moves = 0, stall_at = 3, after = 10;
    double searched[10], worst = 0;
    proc_send(&p, "INFO timeout_turn 100");
    while (moves < stall_at + 1 + after) {
        proc_send(&p, "START 15");
        ck_assert_str_eq(proc_answer(&p, line, sizeof line, START_MS), "OK");
        board_t b;
        board_init(&b, 15, RULE_FREESTYLE);
        while (!board_over(&b) && moves < stall_at + 1 + after) {
            char l[32];
            if (opponent_turn(&b, BOT_RANDOM, &rng, l, sizeof l) != 0)
                break;
            double t0 = now_ms();
            proc_send(&p, l);
            if (moves == stall_at) {
                usleep(20 * 1000);
                kill(p.pid, SIGSTOP);
                usleep(1000 * 1000);
                kill(p.pid, SIGCONT);
            }
            const char *a = proc_reply(&p, line, sizeof line, 5000, msg, sizeof msg);
            double dt = now_ms() - t0;
            ck_assert_msg(a != NULL, "no answer to %s", l);
            int m = as_move(a, 15);
            ck_assert_msg(m >= 0 && board_play(&b, m) == MOVE_OK, "bad answer '%s'", a);
            if (moves > stall_at) {
                /* a proven win may end the search early; the raw policy
                 * prints no MESSAGE at all */
                int k = moves - stall_at - 1;
                searched[k] = strstr(msg, "(proven") ? -1.0 : message_search_ms(msg);
                ck_assert_msg(searched[k] >= 30.0 || (msg[0] && searched[k] < 0),
                              "move %d after the stall did not search (MESSAGE '%s')", k + 1,
                              msg);
                if (dt > worst)
                    worst = dt;
            }
            moves++;
        }
    }
    fprintf(stderr, "pbrain stall: after a 1 s SIGSTOP at 100 ms/move the next %d moves "
            "searched", after);
    for (int i = 0; i < after; i++)
        if (searched[i] >= 0)
            fprintf(stderr, " %.0f", searched[i]);
        else
            fprintf(stderr, " (proven)");
    fprintf(stderr, " ms, replies within %.1f ms\n", worst);
    proc_send(&p, "END");
    ck_assert_int_eq(proc_wait(&p, 5000), 0);
}
END_TEST

/* `gomoku pbrain` on a fresh random 2x32 net (its file into model[len],
 * removed by the caller) started in *p: a net keeps a search slow enough
 * to be interrupted, where the uniform evaluator fills its tree at once. */
static void start_net_engine(proc_t *p, char *model, size_t len)
{
    small_model_file(model, len, 2, 32, 15, 7);
    const char *args[] = {"pbrain", "--model", model, "--device", "cpu", NULL};
    proc_start(p, args);
}

/* Input is read while a move is searched: YXSTOP plays the best move so
 * far, a command that arrives during the search is answered after the
 * move, and END ends a 60 s search and the process at once. The bounds
 * leave room for a loaded machine and for the sanitizers' slow exit (it
 * frees a tree of a few hundred MB); a search that ignored the stop would
 * take a minute. */
START_TEST(test_binary_stop_and_end_during_search)
{
    /* a net (random, 2x32) keeps the search slow enough that it is still
     * running when the stop comes: the uniform evaluator fills the tree in
     * about 0.15 s on a quiet machine and then ends the search itself */
    char model[256];
    proc_t p;
    start_net_engine(&p, model, sizeof model);
    char line[4096], msg[1024];
    double bound = 5000 * slow();
    proc_send(&p, "START 15");
    ck_assert_str_eq(proc_answer(&p, line, sizeof line, START_MS), "OK");
    proc_send(&p, "INFO timeout_turn 60000");
    proc_send(&p, "TURN 7,7");
    proc_send(&p, "ABOUT");   /* queued: answered after the move */
    /* a second, so that a loaded machine still gets well into the search */
    usleep(1000 * 1000);
    double t0 = now_ms();
    proc_send(&p, "YXSTOP");
    const char *a = proc_reply(&p, line, sizeof line, 20000, msg, sizeof msg);
    double stop_ms = now_ms() - t0;
    ck_assert_msg(a && as_move(a, 15) >= 0, "YXSTOP: '%s'", a ? a : "(none)");
    int ours = as_move(a, 15);
    ck_assert_msg(stop_ms < bound, "YXSTOP answered after %.1f ms", stop_ms);
    ck_assert(message_search_ms(msg) >= 200.0);   /* it did search until the stop */
    ck_assert(strstr(proc_answer(&p, line, sizeof line, 5000), "name=\"gomoku-zero\""));
    /* YXSTOP with no search running does nothing; the next move searches
     * its full time (0.3 s here) */
    proc_send(&p, "YXSTOP");
    proc_send(&p, "INFO timeout_turn 300");
    proc_send(&p, ours == 0 ? "TURN 14,14" : "TURN 0,0");
    a = proc_reply(&p, line, sizeof line, 5000, msg, sizeof msg);
    ck_assert_msg(a && as_move(a, 15) >= 0, "'%s'", a ? a : "(none)");
    ck_assert_double_ge(message_search_ms(msg), 150.0);
    /* END during a 5 s search */
    proc_send(&p, "INFO timeout_turn 60000");
    proc_send(&p, "BOARD");   /* a fresh position: no point is taken by chance */
    proc_send(&p, "7,7,2");
    proc_send(&p, "DONE");
    usleep(300 * 1000);
    t0 = now_ms();
    proc_send(&p, "END");
    int rc = proc_wait(&p, 20000);
    double end_ms = now_ms() - t0;
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(end_ms < bound, "END during a search: exit after %.1f ms", end_ms);
    unlink(model);
    fprintf(stderr, "pbrain stop: YXSTOP to move %.1f ms, END to exit %.1f ms (60 s searches)\n",
            stop_ms, end_ms);
}
END_TEST

/* End of input during a 60 s search (the manager is gone): the search stops
 * at once, the move found so far is still said, a command queued behind it
 * is answered without a search of its own, and the engine exits. Before,
 * it searched on to the end of the move's time. */
START_TEST(test_binary_eof_during_search)
{
    char model[256];
    proc_t p;
    start_net_engine(&p, model, sizeof model);
    char line[4096], msg[1024];
    proc_send(&p, "START 15");
    ck_assert_str_eq(proc_answer(&p, line, sizeof line, START_MS), "OK");
    proc_send(&p, "INFO timeout_turn 60000");
    proc_send(&p, "TURN 7,7");
    proc_send(&p, "TURN 0,0");   /* queued behind the search */
    usleep(300 * 1000);
    double t0 = now_ms();
    close(p.to);
    p.to = -1;
    const char *a = proc_reply(&p, line, sizeof line, 20000, msg, sizeof msg);
    ck_assert_msg(a && as_move(a, 15) >= 0, "first move after EOF: '%s'", a ? a : "(none)");
    a = proc_reply(&p, line, sizeof line, 20000, msg, sizeof msg);
    ck_assert_msg(a && as_move(a, 15) >= 0, "queued move after EOF: '%s'", a ? a : "(none)");
    int rc = proc_wait(&p, 20000);
    double exit_ms = now_ms() - t0;
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(exit_ms < 10000.0 * slow(), "EOF during a 60 s search: exit after %.1f ms",
                  exit_ms);
    unlink(model);
    fprintf(stderr, "pbrain EOF: exit %.1f ms after the input closed (60 s searches)\n", exit_ms);
}
END_TEST

/* ---- fuzz ---- */

/* "FORBID " and XXYY groups of points on a board of size, then "." */
static int forbid_ok(const char *s, int size)
{
    if (!starts(s, "FORBID "))
        return 0;
    const char *p = s + 7;
    for (; *p != '.'; p += 4) {
        int x, y;
        for (int i = 0; i < 4; i++)
            if (p[i] < '0' || p[i] > '9')
                return 0;
        x = (p[0] - '0') * 10 + p[1] - '0';
        y = (p[2] - '0') * 10 + p[3] - '0';
        if (x >= size || y >= size)
            return 0;
    }
    return p[1] == 0;
}

static int reply_ok(const char *s)
{
    if (!strcmp(s, "OK") || !strcmp(s, "SWAP") || forbid_ok(s, 20))
        return 1;
    if (starts(s, "ERROR ") || starts(s, "UNKNOWN ") || starts(s, "MESSAGE ") ||
        starts(s, "name=\""))
        return strlen(s) < 512;
    /* one to three moves "X,Y" separated by single spaces */
    const char *p = s;
    for (int k = 0; k < 3; k++) {
        int x, y, n = 0;
        if (sscanf(p, "%d,%d%n", &x, &y, &n) != 2 || x < 0 || y < 0 || x >= 20 || y >= 20)
            return 0;
        p += n;
        if (!*p)
            return 1;
        if (*p != ' ')
            return 0;
        p++;
    }
    return 0;
}

START_TEST(test_fuzz_lines)
{
    static const char *seeds[] = {
        "START 15", "START 20", "RECTSTART 15,15", "RECTSTART 20,10", "RESTART", "BEGIN",
        "TURN 7,7", "TURN 0,14", "TURN 19,19", "BOARD", "DONE", "7,7,1", "8,8,2", "3,4",
        "INFO timeout_turn 0", "INFO time_left 1000", "INFO rule 4", "INFO rule 1",
        "INFO max_memory 100000000", "INFO rule 8", "END", "ABOUT", "TAKEBACK 7,7",
        "PLAY 1,1", "SWAP2BOARD", "INFO game_type 2", "TURN 4294967296,1",
        "START 99999999999999999999", "TURN -3,4", "BOARD 1",
        "START 15 15", "YXBOARD", "YXNBEST 3", "YXBLOCK", "YXBLOCKUNDO", "YXBLOCKRESET",
        "YXSHOWFORBID", "YXSHOWINFO", "INFO show_detail 1", "YXBALANCEONE 0",
        "YXBALANCETWO 10", "YXSTOP", "STOP",
    };
    const int nseeds = (int)(sizeof seeds / sizeof seeds[0]);
    const char alphabet[] = "0123456789,,,  -+STARTURNBOEGIDFXYP\t\r\x01\xff";
    harness_t h;
    h_open(&h, "bot:random");
    uint64_t rng = 12345;
    int n = asan() ? 10000 : 40000, ends = 0, lines = 0;
    char line[200];
    for (int i = 0; i < n; i++) {
        int kind = (int)(util_rng_next(&rng) % 4);
        size_t len;
        if (kind == 0) {   /* random bytes */
            len = util_rng_next(&rng) % 40;
            for (size_t j = 0; j < len; j++)
                line[j] = (char)(1 + util_rng_next(&rng) % 255);
        } else {           /* a seed, mutated */
            const char *s = seeds[util_rng_next(&rng) % (uint64_t)nseeds];
            len = strlen(s);
            memcpy(line, s, len);
            int muts = kind == 1 ? 0 : (int)(util_rng_next(&rng) % 4);
            for (int k = 0; k < muts; k++) {
                size_t at = len ? util_rng_next(&rng) % len : 0;
                char c = alphabet[util_rng_next(&rng) % (sizeof alphabet - 1)];
                int op = (int)(util_rng_next(&rng) % 3);
                if (op == 0 && len)
                    line[at] = c;
                else if (op == 1 && len + 1 < sizeof line) {
                    memmove(line + at + 1, line + at, len - at);
                    line[at] = c;
                    len++;
                } else if (len) {
                    memmove(line + at, line + at + 1, len - at - 1);
                    len--;
                }
            }
        }
        line[len] = 0;
        if (h_send(&h, line) == PBRAIN_END) {
            ends++;
            continue;   /* the handler stays usable; a manager would stop here */
        }
        for (int r = 0; r < h.nreply; r++) {
            lines++;
            ck_assert_msg(reply_ok(h.reply[r]), "line '%s' got reply '%s'", line, h.reply[r]);
        }
        const board_t *b = pbrain_board(h.pb);
        if (b)
            ck_assert(b->size >= BOARD_MIN && b->size <= BOARD_MAX && b->nmoves >= 0 &&
                      b->nmoves <= board_npoints(b));
    }
    ck_assert_int_gt(lines, n / 4);   /* most lines were answered */
    ck_assert_int_gt(ends, 0);
    h_close(&h);
}
END_TEST

/* ---- Yixin-Board extensions ---- */

/* The swap2 choice by white's value after 3 stones, and after 5. */
START_TEST(test_swap2_choices)
{
    ck_assert_int_eq(swap2_choose(3, -0.5), SWAP2_TAKE_BLACK);
    ck_assert_int_eq(swap2_choose(3, SWAP2_THRESHOLD_3 - 0.01), SWAP2_TAKE_BLACK);
    ck_assert_int_eq(swap2_choose(3, 0.0), SWAP2_PLACE_TWO);
    ck_assert_int_eq(swap2_choose(3, SWAP2_STAY_3), SWAP2_PLACE_TWO);
    ck_assert_int_eq(swap2_choose(3, SWAP2_STAY_3 + 0.01), SWAP2_PLAY_WHITE);
    ck_assert_int_eq(swap2_choose(3, NAN), SWAP2_PLAY_WHITE);
    ck_assert_int_eq(swap2_choose(5, -0.01), SWAP2_TAKE_BLACK);
    ck_assert_int_eq(swap2_choose(5, 0.0), SWAP2_PLAY_WHITE);
    ck_assert_int_eq(swap2_choose(5, NAN), SWAP2_PLAY_WHITE);
}
END_TEST

/* YXBOARD sets a position without a move; YXSHOWFORBID lists black's
 * renju forbidden points as XXYY pairs; YXBLOCK points are never played
 * while another legal move is left. */
START_TEST(test_yixin_board_forbid_block)
{
    harness_t h;
    h_open(&h, "mcts:uniform");
    expect_error(&h, "YXBOARD");          /* before START */
    expect_error(&h, "YXSHOWFORBID");
    expect_error(&h, "YXBLOCKRESET");
    ck_assert_str_eq(h_cmd(&h, "START 15 15"), "OK");   /* Yixin-Board's form */
    expect_error(&h, "START 15 16");
    h_silent(&h, "INFO timeout_turn 100");
    /* black (own, to move) has 5,7 6,7 and 7,5 7,6: 7,7 makes two open threes */
    const char *pos[] = {"YXBOARD", "5,7,1", "6,7,1", "7,5,1", "7,6,1",
                         "0,0,2", "14,0,2", "0,14,2", "14,14,2", "DONE"};
    h_silent_all(&h, pos, sizeof pos / sizeof pos[0]);
    const board_t *b = pbrain_board(h.pb);
    ck_assert_int_eq(b->nmoves, 8);
    ck_assert_int_eq(b->to_move, STONE_BLACK);
    ck_assert_str_eq(h_cmd(&h, "YXSHOWFORBID"), "FORBID .");   /* freestyle: none */
    h_silent(&h, "INFO rule 2");   /* Gomocup: a continuous game, freestyle */
    ck_assert_str_eq(h_cmd(&h, "YXSHOWFORBID"), "FORBID .");
    h_send(&h, "YXSHOWINFO");      /* from now on Yixin-Board's numbers: 2 is renju */
    ck_assert_int_eq(h.nreply, 2);
    ck_assert(starts(h.reply[1], "MESSAGE INFO MAX_THREAD_NUM 1"));
    h_silent(&h, "INFO rule 2");
    ck_assert_str_eq(h_cmd(&h, "YXSHOWFORBID"), "FORBID 0707.");
    h_silent(&h, "INFO show_detail 0");
    h_silent(&h, "INFO rule 4");
    ck_assert_str_eq(h_cmd(&h, "YXSHOWFORBID"), "FORBID 0707.");
    /* white to move: still black's points */
    const char *pos2[] = {"YXBOARD", "5,7,2", "6,7,2", "7,5,2", "7,6,2",
                          "0,0,1", "14,0,1", "0,14,1", "DONE"};
    h_silent_all(&h, pos2, sizeof pos2 / sizeof pos2[0]);
    ck_assert_int_eq(pbrain_board(h.pb)->to_move, STONE_WHITE);
    ck_assert_str_eq(h_cmd(&h, "YXSHOWFORBID"), "FORBID 0707.");
    expect_error(&h, "YXSHOWFORBID 1");
    /* a bad YXBOARD changes nothing */
    const char *bad[] = {"YXBOARD", "1,1,1", "1,1,2"};
    h_silent_all(&h, bad, 3);
    expect_error(&h, "DONE");
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 7);
    h_silent(&h, "INFO rule 0");
    /* our four 3,3..6,6: both fives blocked; the answer is another point */
    const char *four[] = {"YXBOARD", "3,3,1", "4,4,1", "5,5,1", "6,6,1",
                          "0,10,2", "2,10,2", "4,10,2", "10,0,2", "DONE",
                          "YXBLOCK", "2,2", "7,7", "9,9", "DONE"};
    h_silent_all(&h, four, sizeof four / sizeof four[0]);
    const board_t *before = pbrain_board(h.pb);
    ck_assert_int_eq(before->nmoves, 8);
    const char *a = h_cmd(&h, "YXNBEST 1");
    int m = as_move(a, 15);
    ck_assert_msg(m >= 0 && m != 2 * 15 + 2 && m != 7 * 15 + 7 && m != 9 * 15 + 9,
                  "blocked: '%s'", a);
    /* YXBLOCKUNDO frees 7,7 again: the five */
    const char *undo[] = {"YXBOARD", "3,3,1", "4,4,1", "5,5,1", "6,6,1",
                          "0,10,2", "2,10,2", "4,10,2", "10,0,2", "DONE",
                          "YXBLOCKUNDO", "7,7", "DONE"};
    h_silent_all(&h, undo, sizeof undo / sizeof undo[0]);
    ck_assert_str_eq(h_cmd(&h, "YXNBEST 1"), "7,7");
    h_silent(&h, "YXBLOCKRESET");
    h_silent_all(&h, four, 10);
    m = as_move(h_cmd(&h, "YXNBEST 1"), 15);
    ck_assert(m == 2 * 15 + 2 || m == 7 * 15 + 7);
    /* bad block lines */
    const char *bad2[] = {"YXBLOCK", "15,1"};
    h_silent_all(&h, bad2, 2);
    expect_error(&h, "DONE");
    const char *bad3[] = {"YXBLOCK", "1,1,1"};
    h_silent_all(&h, bad3, 2);
    expect_error(&h, "DONE");
    const char *lost[] = {"YXBLOCK", "1,1"};
    h_silent_all(&h, lost, 2);
    expect_error(&h, "YXBLOCKRESET");   /* DONE was lost: the block is dropped */
    /* every point blocked: a blocked move is still played */
    ck_assert_str_eq(h_cmd(&h, "START 5"), "OK");
    h_silent(&h, "YXBLOCK");
    for (int i = 0; i < 25; i++) {
        char l[16];
        snprintf(l, sizeof l, "%d,%d", i % 5, i / 5);
        h_silent(&h, l);
    }
    h_silent(&h, "DONE");
    ck_assert(as_move(h_cmd(&h, "BEGIN"), 5) >= 0);
    h_close(&h);
}
END_TEST

/* A YXNBEST reply: the analysis, the header, want lines "(i) X,Y winrate
 * P% visits V prior P% pv ...", then the move, which is the first line's.
 * Returns the number of ranked lines. */
static int check_nbest(harness_t *h, int want)
{
    int ranked = 0, header = 0, first = -1;
    const char *move = h_answer(h);
    ck_assert_msg(move && as_move(move, 15) >= 0, "no move");
    for (int i = 0; i < h->nreply; i++) {
        const char *r = h->reply[i];
        if (r == move || starts(r, "MESSAGE visits ") || starts(r, "MESSAGE REALTIME ") ||
            starts(r, "MESSAGE realtime "))
            continue;
        if (starts(r, "MESSAGE nbest ")) {
            int k, n;
            ck_assert_msg(sscanf(r, "MESSAGE nbest %d of %d root moves", &k, &n) == 2, "%s", r);
            ck_assert(strstr(r, "(to move)"));
            header++;
            continue;
        }
        if (starts(r, "MESSAGE nbest: only "))
            continue;
        int idx, x, y, n = 0;
        unsigned visits;
        double wr, prior;
        ck_assert_msg(sscanf(r, "MESSAGE (%d) %d,%d winrate %lf%% visits %u prior %lf%% pv %n",
                             &idx, &x, &y, &wr, &visits, &prior, &n) == 6 && n > 0,
                      "bad nbest line '%s'", r);
        ck_assert_int_eq(idx, ranked + 1);
        ck_assert(wr >= 0.0 && wr <= 100.0 && prior >= 0.0 && prior <= 100.0);
        ck_assert_int_eq(as_move(r + n, 15) >= 0 || strchr(r + n, ' ') != NULL, 1);
        int pvx, pvy;
        ck_assert(sscanf(r + n, "%d,%d", &pvx, &pvy) == 2 && pvx == x && pvy == y);
        if (ranked == 0)
            first = y * 15 + x;
        ranked++;
    }
    ck_assert_int_eq(header, 1);
    ck_assert_int_le(ranked, want);
    ck_assert_int_eq(as_move(move, 15), first);
    return ranked;
}

START_TEST(test_yixin_nbest)
{
    harness_t h;
    h_open(&h, "mcts:uniform");
    expect_error(&h, "YXNBEST 3");   /* before START */
    ck_assert_str_eq(h_cmd(&h, "START 15"), "OK");
    h_silent(&h, "INFO timeout_turn 200");
    const char *pos[] = {"YXBOARD", "7,7,2", "DONE"};
    h_silent_all(&h, pos, 3);
    expect_error(&h, "YXNBEST");
    expect_error(&h, "YXNBEST 0");
    expect_error(&h, "YXNBEST -2");
    expect_error(&h, "YXNBEST 225");   /* 224 legal moves */
    expect_error(&h, "YXNBEST 3x");
    expect_error(&h, "YXNBEST 99999999999999999999");
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 1);
    h_send(&h, "YXNBEST 5");
    ck_assert_int_eq(check_nbest(&h, 5), 5);
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 2);   /* played, as a turn is */
    /* a won position: the five is the only root move, proven */
    const char *four[] = {"YXBOARD", "3,3,1", "4,4,1", "5,5,1", "6,6,1",
                          "0,10,2", "2,10,2", "4,10,2", "10,0,2", "DONE"};
    h_silent_all(&h, four, sizeof four / sizeof four[0]);
    h_send(&h, "YXNBEST 4");
    ck_assert_int_eq(check_nbest(&h, 4), 1);
    int proven = 0;
    for (int i = 0; i < h.nreply; i++)
        proven += strstr(h.reply[i], "(proven win)") != NULL && starts(h.reply[i], "MESSAGE (1)");
    ck_assert_int_eq(proven, 1);
    h_close(&h);
}
END_TEST

/* A bot: YXNBEST answers with its move and says it ranks nothing; the
 * balance commands are not supported (a bot has no values). */
START_TEST(test_yixin_bot)
{
    harness_t g;
    h_start(&g, "bot:greedy", NULL);
    h_send(&g, "YXNBEST 2");
    ck_assert(as_move(h_answer(&g), 15) >= 0);
    ck_assert(strstr(g.reply[0], "a bot does not rank moves"));
    const char *a = h_cmd(&g, "YXBALANCEONE 0");
    ck_assert_msg(starts(a, "ERROR ") && strstr(a, "not supported"), "'%s'", a);
    a = h_cmd(&g, "YXBALANCETWO 0");
    ck_assert_msg(starts(a, "ERROR ") && strstr(a, "not supported"), "'%s'", a);
    h_close(&g);
}
END_TEST

/* INFO show_detail 1: realtime lines while a move is searched, a round
 * every PBRAIN_INFO_MS of search at most; 0: none. */
START_TEST(test_yixin_realtime)
{
    harness_t h;
    /* a net (random, 2x32), not the uniform evaluator, whose tree can fill
     * (and end the search) inside the first slice; 3 s: even with a loaded
     * machine's latency margin, more than one slice */
    char model[256];
    small_model_file(model, sizeof model, 2, 32, 15, 7);
    h_start(&h, model, "INFO timeout_turn 3000");
    expect_error(&h, "INFO show_detail 4");
    expect_error(&h, "INFO show_detail x");
    h_silent(&h, "INFO show_detail 1");
    h_send(&h, "TURN 7,7");
    int ours = as_move(h_answer(&h), 15);
    ck_assert(ours >= 0);
    int refresh = 0, rounds = 0, best = 0;
    double search_ms = -1.0;
    for (int i = 0; i < h.nreply; i++) {
        const char *r = h.reply[i];
        if (!starts(r, "MESSAGE "))
            continue;
        if (strcmp(r, "MESSAGE REALTIME REFRESH") == 0) {
            ck_assert_int_eq(i, 0);
            refresh++;
        } else if (starts(r, "MESSAGE REALTIME BEST ")) {
            ck_assert(as_move(r + 22, 15) >= 0);
            best++;
        } else if (starts(r, "MESSAGE realtime ")) {
            int depth, n = 0;
            unsigned visits;
            unsigned long long nodes;
            double eval, wr;
            ck_assert_msg(sscanf(r, "MESSAGE realtime depth %d visits %u nodes %llu eval %lf "
                                 "winrate %lf%% (%*s to move) speed %*f nodes/s time %*f ms "
                                 "bestline %n", &depth, &visits, &nodes, &eval, &wr, &n) == 5 &&
                          n > 0, "bad realtime line '%s'", r);
            ck_assert(eval >= -1.0 && eval <= 1.0 && wr >= 0.0 && wr <= 100.0);
            rounds++;
        } else {
            ck_assert_msg(starts(r, "MESSAGE visits "), "unexpected '%s'", r);
            search_ms = message_search_ms(r);
        }
    }
    ck_assert_int_eq(refresh, 1);
    ck_assert_int_ge(best, 1);
    ck_assert_int_ge(rounds, 1);
    ck_assert(search_ms > 0.0);
    /* the rate: one round per slice of the search, the last slice none */
    ck_assert_int_le(rounds, (int)(search_ms / PBRAIN_INFO_MS) + 1);
    h_silent(&h, "INFO show_detail 0");
    h_silent(&h, "INFO timeout_turn 200");
    h_send(&h, ours == 0 ? "TURN 14,14" : "TURN 0,0");
    ck_assert_int_eq(h.nreply, 2);   /* the analysis and the move only */
    ck_assert(starts(h.reply[0], "MESSAGE visits ") && as_move(h.reply[1], 15) >= 0);
    h_close(&h);
    unlink(model);
}
END_TEST

START_TEST(test_yixin_balance)
{
    harness_t h;
    h_start(&h, "mcts:uniform", "INFO timeout_turn 300");
    const char *pos[] = {"YXBOARD", "7,7,2", "8,7,1", "DONE"};   /* black 7,7, white 8,7 */
    h_silent_all(&h, pos, 4);
    expect_error(&h, "YXBALANCEONE");
    expect_error(&h, "YXBALANCEONE 101");
    expect_error(&h, "YXBALANCETWO -101");
    expect_error(&h, "YXBALANCEONE 1.5");
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 2);
    h_send(&h, "YXBALANCEONE 0");
    const char *a = h_answer(&h);
    int m = as_move(a, 15);
    ck_assert_msg(m >= 0, "'%s'", a);
    ck_assert_int_eq(pbrain_board(h.pb)->nmoves, 3);
    ck_assert_int_eq(pbrain_board(h.pb)->cells[m], STONE_BLACK);
    int notes = 0, summary = 0;
    for (int i = 0; i < h.nreply; i++) {
        const char *r = h.reply[i];
        if (r == a)
            continue;
        int x, y;
        double v;
        if (sscanf(r, "MESSAGE balance %d,%d: white's value %lf", &x, &y, &v) == 3)
            notes++;
        else if (starts(r, "MESSAGE balance: ") && strstr(r, "leaves white a value of"))
            summary++;
        else
            ck_abort_msg("unexpected '%s'", r);
    }
    ck_assert_int_ge(notes, 1);
    ck_assert_int_le(notes, 6);
    ck_assert_int_eq(summary, 1);
    h_send(&h, "YXBALANCETWO 0");
    a = h_answer(&h);
    int x1, y1, x2, y2;
    ck_assert_msg(sscanf(a, "%d,%d %d,%d", &x1, &y1, &x2, &y2) == 4, "'%s'", a);
    const board_t *b = pbrain_board(h.pb);
    ck_assert_int_eq(b->nmoves, 5);
    ck_assert_int_eq(b->cells[y1 * 15 + x1], STONE_WHITE);
    ck_assert_int_eq(b->cells[y2 * 15 + x2], STONE_BLACK);
    ck_assert(strstr(h.reply[h.nreply - 2], "leaves white a value of"));
    h_close(&h);
}
END_TEST

/* YXSEARCHDEFEND: facing white's open three, the move is one of the
 * defences it lists; with no threat it says so and plays. */
START_TEST(test_yixin_search_defend)
{
    harness_t h;
    h_start(&h, "mcts:uniform", "INFO timeout_turn 300");
    expect_error(&h, "YXSEARCHDEFEND 1");
    const char *pos[] = {"YXBOARD", "5,7,2", "6,7,2", "7,7,2", "0,14,1", "3,14,1", "14,2,1",
                         "DONE"};
    h_silent_all(&h, pos, sizeof pos / sizeof pos[0]);
    h_send(&h, "YXSEARCHDEFEND");
    const char *a = h_answer(&h);
    int m = as_move(a, 15);
    ck_assert_msg(m >= 0, "'%s'", a);
    const char *d = NULL;
    for (int i = 0; i < h.nreply; i++)
        if (starts(h.reply[i], "MESSAGE defend: "))
            d = h.reply[i];
    ck_assert_msg(d && strstr(d, "moves stop white's VCT"), "'%s'", d ? d : "(none)");
    const char *list = strrchr(d, ':');
    char mv[16];
    snprintf(mv, sizeof mv, " %s", a);
    ck_assert_msg(strstr(list, mv) != NULL, "move %s is not among the defences '%s'", a, d);
    ck_assert(strstr(list, " 4,7") && strstr(list, " 8,7"));
    const char *quiet[] = {"YXBOARD", "7,7,2", "DONE"};
    h_silent_all(&h, quiet, 3);
    h_send(&h, "YXSEARCHDEFEND");
    ck_assert(as_move(h_answer(&h), 15) >= 0);
    ck_assert(strstr(h.reply[0], "has no VCT found"));
    h_close(&h);
}
END_TEST

/* A Yixin-Board analysis session with the real binary, a small net
 * searching slowly enough to be stopped: every reply line is one the GUI
 * reads, and exactly one move comes for YXNBEST, after YXSTOP. */
static void session_line_ok(const char *l)
{
    int x, y, n;
    if (!strcmp(l, "OK") || starts(l, "MESSAGE REALTIME REFRESH") ||
        starts(l, "MESSAGE realtime depth ") || starts(l, "MESSAGE visits ") ||
        starts(l, "MESSAGE nbest ") || starts(l, "MESSAGE INFO MAX_THREAD_NUM ") ||
        starts(l, "MESSAGE gomoku-zero: Yixin-Board mode"))
        return;
    if (starts(l, "MESSAGE REALTIME BEST ") || starts(l, "MESSAGE REALTIME LOSE ")) {
        ck_assert_msg(as_move(l + 22, 15) >= 0, "'%s'", l);
        return;
    }
    if (sscanf(l, "MESSAGE (%d) %d,%d winrate %*f%% visits %*u prior %*f%% pv %n", &n, &x, &y,
               &n) >= 3)
        return;
    ck_abort_msg("unexpected line '%s'", l);
}

START_TEST(test_binary_yixin_session)
{
    char model[256], line[4096];
    proc_t p;
    start_net_engine(&p, model, sizeof model);
    proc_send(&p, "info show_detail 1");
    proc_send(&p, "yxshowinfo");
    proc_send(&p, "start 15 15");
    const char *l;
    int ok = 0, info = 0;
    while (!ok && (l = proc_line(&p, line, sizeof line, START_MS))) {
        session_line_ok(l);
        ok += strcmp(l, "OK") == 0;
        info += starts(l, "MESSAGE INFO MAX_THREAD_NUM 1");
    }
    ck_assert_int_eq(ok, 1);
    ck_assert_int_eq(info, 1);
    proc_send(&p, "INFO timeout_turn 60000");
    proc_send(&p, "INFO rule 0");
    proc_send(&p, "yxboard");
    proc_send(&p, "7,7,1");
    proc_send(&p, "8,8,2");
    proc_send(&p, "done");
    proc_send(&p, "yxnbest 5");
    /* a realtime round comes while the 60 s search runs; then the stop */
    int moves = 0, ranked = 0, rounds = 0;
    while (!rounds && (l = proc_line(&p, line, sizeof line, 30000))) {
        session_line_ok(l);
        rounds += starts(l, "MESSAGE realtime depth ");
    }
    ck_assert_int_eq(rounds, 1);
    proc_send(&p, "yxstop");
    while (!moves && (l = proc_line(&p, line, sizeof line, 20000))) {
        if (as_move(l, 15) >= 0) {
            moves++;
            continue;
        }
        session_line_ok(l);
        ranked += starts(l, "MESSAGE (");
        rounds += starts(l, "MESSAGE realtime depth ");
    }
    ck_assert_int_eq(moves, 1);
    ck_assert_int_eq(ranked, 5);
    ck_assert_int_ge(rounds, 1);
    /* the stop with no search running is nothing; STOP is YXSTOP's alias */
    proc_send(&p, "STOP");
    proc_send(&p, "yxshowforbid");
    l = proc_line(&p, line, sizeof line, 5000);
    ck_assert_msg(l && strcmp(l, "FORBID .") == 0, "'%s'", l ? l : "(none)");
    proc_send(&p, "yxfoo");
    l = proc_line(&p, line, sizeof line, 5000);
    ck_assert_msg(l && starts(l, "UNKNOWN "), "'%s'", l ? l : "(none)");
    proc_send(&p, "END");
    ck_assert_int_eq(proc_wait(&p, 20000), 0);
    unlink(model);
}
END_TEST

/* ---- pbrain:COMMAND players ---- */

static char *engine_cmd(const char *model)
{
    static char cmd[1024];
    snprintf(cmd, sizeof cmd, "pbrain:%s pbrain --model %s", bin(), model);
    return cmd;
}

static int no_children_left(void)
{
    return waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD;
}

/* Options for the player tests: quiet, time_ms a move, a game clock of
 * match_time_ms (0: none). */
static player_opts_t quiet_opts(int time_ms, int match_time_ms)
{
    player_opts_t o;
    player_opts_default(&o);
    o.time_ms = time_ms;
    o.match_time_ms = match_time_ms;
    o.quiet = 1;
    return o;
}

/* A freestyle 15x15 player that must start. */
static player_t *must_create(const char *spec, const player_opts_t *o)
{
    char err[512];
    player_t *p = player_create(spec, RULE_FREESTYLE, 15, o, err, sizeof err);
    ck_assert_msg(p != NULL, "%s: %s", spec, err);
    return p;
}

START_TEST(test_player_against_own_binary)
{
    ck_assert(getenv("GOMOKU_BIN") != NULL);
    player_opts_t o = quiet_opts(200, 0);
    char err[256];
    player_t *eng = must_create(engine_cmd("bot:greedy"), &o);
    ck_assert(starts(eng->name, "pbrain:"));
    player_t *rnd = must_create("bot:random", &o);
    int wins = 0;
    for (int g = 0; g < 4; g++) {
        board_t b;
        board_init(&b, 15, g == 3 ? RULE_STANDARD : RULE_FREESTYLE);
        if (g == 2) {   /* a set-up position: goes over as BOARD */
            board_play(&b, 0);
            board_play(&b, 1);
            board_play(&b, 2);
        }
        player_new_game(eng, &b);
        player_new_game(rnd, &b);
        int eng_color = g % 2 ? STONE_WHITE : STONE_BLACK;
        if (g == 2)
            eng_color = STONE_WHITE;
        while (!board_over(&b)) {
            player_t *p = b.to_move == eng_color ? eng : rnd;
            int m;
            ck_assert_msg(player_genmove(p, &b, &m, err, sizeof err) == 0, "%s", err);
            ck_assert_int_eq(board_play(&b, m), MOVE_OK);
            player_notify(eng, &b, m);
            player_notify(rnd, &b, m);
        }
        wins += b.result == (eng_color == STONE_BLACK ? RESULT_BLACK : RESULT_WHITE);
    }
    ck_assert_int_ge(wins, 3);   /* greedy beats random */
    player_free(eng);
    player_free(rnd);
    ck_assert(no_children_left());
}
END_TEST

START_TEST(test_player_broken_engines)
{
    player_opts_t o = quiet_opts(200, 0);
    char err[256];
    /* exits at once */
    player_t *p = player_create("pbrain:exit 0", RULE_FREESTYLE, 15, &o, err, sizeof err);
    ck_assert(p == NULL);
    ck_assert_msg(strstr(err, "exited"), "%s", err);
    ck_assert(no_children_left());
    /* does not exist */
    p = player_create("pbrain:/nonexistent/engine", RULE_FREESTYLE, 15, &o, err, sizeof err);
    ck_assert(p == NULL);
    ck_assert(strchr(err, '\n') == NULL);
    /* refuses the size */
    p = player_create("pbrain:read l; echo ERROR no such size; sleep 5", RULE_FREESTYLE, 15, &o,
                      err, sizeof err);
    ck_assert(p == NULL);
    ck_assert_msg(strstr(err, "ERROR no such size"), "%s", err);
    /* says OK, then never answers a move: timeout_turn + grace */
    p = must_create("pbrain:read l; echo OK; exec sleep 30", &o);
    board_t b;
    board_init(&b, 15, RULE_FREESTYLE);
    int m;
    double t0 = now_ms();
    ck_assert_int_eq(player_genmove(p, &b, &m, err, sizeof err), PLAYER_FORFEIT);
    double dt = now_ms() - t0;
    ck_assert_msg(strstr(err, "no answer") && dt >= 1100 && dt < 10000, "%s (%.0f ms)", err, dt);
    ck_assert(no_children_left());   /* killed */
    /* it stays failed until a new game starts it again */
    ck_assert_int_eq(player_genmove(p, &b, &m, err, sizeof err), -1);
    player_free(p);
    ck_assert(no_children_left());
    /* plays an occupied point; chatters MESSAGE lines first */
    p = must_create("pbrain:read l; echo OK; while read l; do case $l in BEGIN*|TURN*|DONE*) "
                    "echo MESSAGE hi; echo 0,0;; esac; done", &o);
    ck_assert_int_eq(player_genmove(p, &b, &m, err, sizeof err), 0);
    ck_assert_int_eq(m, 0);
    board_play(&b, 0);
    board_play(&b, 1);
    ck_assert_int_eq(player_genmove(p, &b, &m, err, sizeof err), PLAYER_FORFEIT);
    ck_assert_msg(strstr(err, "0,0") && strstr(err, "occupied"), "%s", err);
    player_free(p);
    /* answers garbage */
    p = must_create("pbrain:read l; echo OK; while read l; do case $l in BEGIN*) "
                    "echo hello;; esac; done", &o);
    board_init(&b, 15, RULE_FREESTYLE);
    ck_assert_int_eq(player_genmove(p, &b, &m, err, sizeof err), PLAYER_FORFEIT);
    ck_assert_msg(strstr(err, "hello"), "%s", err);
    player_free(p);
    /* ignores END: killed after a second, with its children */
    p = must_create("pbrain:trap '' TERM; read l; echo OK; sleep 30 & wait", &o);
    t0 = now_ms();
    player_free(p);
    ck_assert_double_lt(now_ms() - t0, 10000);   /* not the engine's 30 s */
    ck_assert(no_children_left());
}
END_TEST


/* ---- match play: game clocks and opening files ---- */

/* An engine under a game clock is told timeout_match and, before each
 * move, the time it has left, and that time goes down. */
/* What match_play answered. */
typedef struct {
    result_t res;
    int plies;
    bool forfeit;
    int ms[BOARD_CELLS];
    char err[512];
} match_out_t;

/* match_play from a freestyle 15x15 board holding black's stone at first
 * (-1: empty), under a game clock of clock_ms (0: none); its status. */
static int run_match(player_t *black, player_t *white, int first, long long clock_ms,
                     match_out_t *r)
{
    board_t opening;
    board_init(&opening, 15, RULE_FREESTYLE);
    if (first >= 0)
        ck_assert_int_eq(board_play(&opening, first), MOVE_OK);
    return match_play(black, white, &opening, clock_ms, &r->res, &r->plies, &r->forfeit, NULL,
                      r->ms, r->err, sizeof r->err);
}

/* A move answered after its time gets a note that says where the time
 * went; one within it gets none. */
START_TEST(test_overrun_note)
{
    char buf[400];
    /* read at 1000, handled at 1002, search call 1002-2100: its threads
     * ended at 895 ms, the watcher took 150 more, answered at 2104: 1,104
     * ms of a 1,000 ms move */
    ck_assert_int_eq(pbrain_overrun_note(buf, sizeof buf, 39, 895, 1000, 1000, 1002, 2100, 895,
                                         150, 2104),
                     1);
    ck_assert_str_eq(buf, "move 39 took 1104 ms, past its 1000 ms (a search budget of 895): 2 "
                     "before the search, 895 until its threads ended, 150 waiting for the "
                     "watcher, 53 more in the search call, 4 after it");
    /* at the limit it is quiet; a millisecond past it is not */
    ck_assert_int_eq(pbrain_overrun_note(buf, sizeof buf, 5, 895, 1000, 0, 0, 990, 890, 0, 1000), 0);
    ck_assert_int_eq(pbrain_overrun_note(buf, sizeof buf, 5, 895, 1000, 0, 0, 990, 890, 0, 1001), 1);
    ck_assert_msg(strstr(buf, "move 5 took 1001 ms") && strstr(buf, "100 more in the search call"),
                  "%s", buf);
    /* a bot (no search times), and a clock that went backwards, say nothing odd */
    ck_assert_int_eq(pbrain_overrun_note(buf, sizeof buf, 2, 0, 0, 0, 0, 100, 0, 0, 100), 1);
    ck_assert_msg(strstr(buf, "0 until its threads ended, 0 waiting for the watcher, 100 more"),
                  "%s", buf);
    ck_assert_int_eq(pbrain_overrun_note(buf, sizeof buf, 2, 100, 200, 500, 500, 400, 0, 0, 300), 0);
}
END_TEST

START_TEST(test_match_clock_told_to_engine)
{
    char dir[512], log[1024], cmd[2200];
    make_tmppath(dir, sizeof dir, log, sizeof log, "engine.log");
    snprintf(cmd, sizeof cmd, "pbrain:tee -a '%s' | '%s' pbrain --model bot:greedy", log, bin());
    player_opts_t o = quiet_opts(300, 60000);
    player_t *eng = must_create(cmd, &o);
    player_t *rnd = must_create("bot:random", &o);
    match_out_t r;
    ck_assert_msg(run_match(eng, rnd, -1, 60000, &r) == 0, "%s", r.err);
    ck_assert(!r.forfeit);
    ck_assert_int_eq(eng->time_left, MOVETIME_UNLIMITED);   /* no clock outside a game */
    player_free(eng);
    player_free(rnd);
    char *text = must_slurp(log);
    ck_assert_msg(strstr(text, "INFO timeout_match 60000"), "%s", text);
    long long prev = 60001;
    int told = 0;
    for (const char *q = strstr(text, "INFO time_left "); q; q = strstr(q + 1, "INFO time_left ")) {
        long long left = atoll(q + 15);
        ck_assert_msg(left <= prev && left > 0, "time_left %lld after %lld", left, prev);
        prev = left;
        told++;
    }
    ck_assert_int_ge(told, (r.plies + 1) / 2);   /* before every move of its own */
    free(text);
    remove_tree(dir);
}
END_TEST

/* An engine that takes longer than its game clock loses the game on time;
 * one that plays an occupied point, or does not answer, loses the game by
 * forfeit and is started again for the next game, which it plays out; one
 * that cannot be started again ends the match. */
START_TEST(test_match_forfeits)
{
    player_opts_t o = quiet_opts(2000, 150);
    player_t *slow_eng = must_create("pbrain:read l; echo OK; while read l; do case $l in "
                                     "BEGIN*) sleep 0.6; echo 7,7;; esac; done", &o);
    player_t *rnd = must_create("bot:random", &o);
    match_out_t r;
    ck_assert_msg(run_match(slow_eng, rnd, -1, 150, &r) == 0, "%s", r.err);
    ck_assert(r.forfeit);
    ck_assert_int_eq(r.res, RESULT_WHITE);
    ck_assert_int_eq(r.plies, 0);
    ck_assert_msg(strstr(r.err, "ran out of its 150 ms game clock"), "%s", r.err);
    ck_assert_int_ge(r.ms[0], 590);   /* the move that lost: it slept 0.6 s */
    player_free(slow_eng);
    /* without a clock the same engine's move stands */
    o.match_time_ms = 0;
    player_t *occ = must_create("pbrain:read l; echo OK; while read l; do case $l in "
                                "BEGIN*|TURN*|DONE*) echo 7,7;; esac; done", &o);
    /* the engine, white, answers on black's first stone */
    ck_assert_msg(run_match(rnd, occ, 7 * 15 + 7, 0, &r) == 0, "%s", r.err);
    ck_assert(r.forfeit);
    ck_assert_int_eq(r.res, RESULT_BLACK);
    ck_assert_msg(strstr(r.err, "7,7: occupied") && strstr(r.err, "it loses the game"), "%s",
                  r.err);
    ck_assert_int_eq(r.ms[0], 0);   /* the opening's stone took no one's time */
    player_free(occ);
    /* hangs the first time it runs; started again, it is a real engine */
    char dir[512], mark[1024], cmd[2400];
    make_tmppath(dir, sizeof dir, mark, sizeof mark, "ran");
    snprintf(cmd, sizeof cmd, "pbrain:if [ -e '%s' ]; then exec '%s' pbrain --model bot:greedy; "
             "fi; touch '%s'; read l; echo OK; exec sleep 30", mark, bin(), mark);
    o = quiet_opts(200, 0);
    player_t *flaky = must_create(cmd, &o);
    ck_assert_msg(run_match(flaky, rnd, -1, 0, &r) == 0, "%s", r.err);
    ck_assert(r.forfeit);
    ck_assert_int_eq(r.res, RESULT_WHITE);
    ck_assert_msg(strstr(r.err, "no answer to BEGIN within 1200 ms: it loses the game"), "%s",
                  r.err);
    ck_assert_msg(run_match(flaky, rnd, -1, 0, &r) == 0, "%s", r.err);
    ck_assert(!r.forfeit);
    ck_assert_int_gt(r.plies, 8);
    player_free(flaky);
    /* one that cannot start again ends the match */
    snprintf(cmd, sizeof cmd, "pbrain:if [ -e '%s' ]; then exit 3; fi; touch '%s'; read l; "
             "echo OK; exec sleep 30", mark, mark);
    unlink(mark);
    player_t *once = must_create(cmd, &o);
    ck_assert_msg(run_match(once, rnd, -1, 0, &r) == 0 && r.forfeit, "%s", r.err);
    ck_assert_int_eq(run_match(once, rnd, -1, 0, &r), -1);
    ck_assert_msg(strstr(r.err, "exited") && strstr(r.err, "started again after a failure"),
                  "%s", r.err);
    player_free(once);
    player_free(rnd);
    /* gomoku match counts the forfeits and plays on */
    snprintf(cmd, sizeof cmd, "match \"pbrain:if [ -e '%s' ]; then exec '%s' pbrain --model "
             "bot:greedy; fi; touch '%s'; read l; echo OK; exec sleep 30\" bot:random --games 2 "
             "--time 200 --openings 0 --json", mark, bin(), mark);
    unlink(mark);
    char out[8192];
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_BOTH, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "no answer to BEGIN within 1200 ms: it loses the game") &&
                  strstr(out, "B wins in 0 plies (forfeit)") &&
                  strstr(out, "games lost by forfeit: A 1, B 0") &&
                  strstr(out, "\"forfeits\":[1,0]") && strstr(out, "game 2/2"), "%s", out);
    /* the move that lost is A's slowest (no answer for 1,200 ms), and over --time */
    const char *q = strstr(out, "\"slowest_ms\":["), *v = strstr(out, "\"over_time\":[");
    ck_assert_msg(q && v && strstr(out, "slowest move: A ") &&
                  strstr(out, "moves over --time 200 ms: A "), "%s", out);
    ck_assert_int_ge(atoi(q + 14), 1190);
    ck_assert_int_ge(atoi(v + 13), 1);
    /* a slow engine's moves are saved with their times */
    snprintf(cmd, sizeof cmd, "match \"pbrain:while IFS= read -r l; do case \\$l in TURN*|BEGIN*) "
             "sleep 0.3;; esac; printf '%%s\\n' \\\"\\$l\\\"; done | '%s' pbrain --model bot:greedy\" "
             "bot:random --games 1 --time 2000 --openings 0 --save '%s/saved'", bin(), dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_BOTH, out, sizeof out), 0);
    char saved[1200], e[512];
    snprintf(saved, sizeof saved, "%s/saved/game_0001.psq", dir);
    psq_game_t pg;
    ck_assert_msg(psq_load(saved, &pg, e, sizeof e) == 0, "%s: %s", e, out);
    ck_assert_int_ge(pg.nmoves, 9);
    for (int i = 0; i < pg.nmoves; i += 2)   /* A is black: every even ply waited 0.3 s */
        ck_assert_msg(pg.ms[i] >= 290, "ply %d took %d ms: %s", i, pg.ms[i], out);
    remove_tree(dir);
    ck_assert(no_children_left());
}
END_TEST

/* gomoku match with an openings file: pairs of games share a line, colours
 * swapped; per-colour results; bad files are one-line errors; a player
 * spec that cannot work is refused before any player starts. */
START_TEST(test_match_openings_file)
{
    char dir[512], path[1024], out[8192];
    make_tmppath(dir, sizeof dir, path, sizeof path, "openings.txt");
    const char *good = "# two openings\nh8 i9 j7\n\n0,0, 1,1, -1,1, 2,2\n";
    write_file(path, good, strlen(good), "w");
    char args[2048];
    snprintf(args, sizeof args, "match bot:vcf bot:random --games 6 --openings '%s' --json "
             "--save '%s'", path, dir);
    ck_assert_int_eq(run_gomoku(args, NULL, CAPTURE_BOTH, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "A as black 3-0-0, as white 3-0-0"), "%s", out);
    ck_assert_msg(strstr(out, "\"a_black\":[3,0,0]"), "%s", out);
    ck_assert_msg(strstr(out, "game 6/6"), "%s", out);
    /* the saved games start with the file's lines, in order, each twice,
     * then the first again; black is named first */
    static const int first[4][2] = {{7 * 15 + 7, 6 * 15 + 8}, {7 * 15 + 7, 6 * 15 + 8},
                                    {7 * 15 + 7, 8 * 15 + 8}, {7 * 15 + 7, 8 * 15 + 8}};
    for (int g = 0; g < 6; g++) {
        char gp[1200], e[256];
        snprintf(gp, sizeof gp, "%s/game_%04d.psq", dir, g + 1);
        psq_game_t pg;
        ck_assert_msg(psq_load(gp, &pg, e, sizeof e) == 0, "%s", e);
        ck_assert_int_eq(pg.moves[0], first[g % 4][0]);
        ck_assert_int_eq(pg.moves[1], first[g % 4][1]);
        ck_assert_str_eq(pg.black, g % 2 ? "bot:random" : "bot:vcf");
    }
    static const struct { const char *text, *why; } bad[] = {
        {"h8 i9\nh8 z77\n", "line 2: 'z77' is not a point"},
        {"# nothing\n\n", "no openings in it"},
        {"0,0, 0,1, 1,0, 1,1, 2,0, 2,1, 3,0, 3,1, 4,0\n", "line 1: stone 9 (l8) ends the game"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(path, bad[i].text, strlen(bad[i].text), "w");
        snprintf(args, sizeof args, "match bot:vcf bot:random --games 2 --openings '%s'", path);
        expect_gomoku(2, bad[i].why, "%s", args);
    }
    const char *renju = "-1,0, -5,-5, 1,0, -5,-4, 0,-1, -5,-2, 0,1, 5,5, 0,0\n";   /* 3x3 at h8 */
    write_file(path, renju, strlen(renju), "w");
    expect_gomoku(0, NULL, "match bot:vcf bot:random --games 2 --openings %s", path);
    expect_gomoku(2, "line 1: stone 9 (h8) forbidden under renju",
                  "match bot:vcf bot:random --rule renju --openings %s", path);
    snprintf(args, sizeof args, "match bot:vcf bot:random --openings '%s/none.txt'", dir);
    expect_gomoku(2, "cannot open", "%s", args);
    /* a --save directory is made when missing; one that cannot be is
     * refused before any game is played */
    snprintf(args, sizeof args, "match bot:vcf bot:random --games 2 --save '%s/new'", dir);
    ck_assert_int_eq(run_gomoku(args, NULL, CAPTURE_BOTH, out, sizeof out), 0);
    char saved[4200];
    snprintf(saved, sizeof saved, "%s/new/game_0002.psq", dir);
    ck_assert_msg(access(saved, R_OK) == 0, "%s not saved: %s", saved, out);
    snprintf(args, sizeof args, "match bot:vcf bot:random --games 2 --save '%s/no/such'", dir);
    ck_assert_int_eq(run_gomoku(args, NULL, CAPTURE_BOTH, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "gomoku match: --save: cannot create ") &&
                  strstr(out, "no/such: No such file or directory") &&
                  !strstr(out, "over 2 games"), "%s", out);
    expect_gomoku(2, "a count of random stones must be in 0..20",
                  "match bot:vcf bot:random --openings 21");
    /* B is checked before A starts: an engine that would take seconds to
     * start is never run */
    expect_gomoku(2, "cannot read model /nonexistent/b.gzm",
                  "match 'pbrain:sleep 30' /nonexistent/b.gzm");
    expect_gomoku(2, "unknown bot 'bot:nope'", "match bot:vcf bot:nope");
    remove_tree(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pbrain");
    ADD_CASE(s, "protocol", 60, test_start_about_restart_end, test_turn_and_bad_turns,
             test_board_block, test_board_field3, test_board_clock_starts_at_done,
             test_renju_board_order_and_rules, test_info_time_and_memory, test_first_stone_centre,
             test_takeback_and_play,
             test_swap2, test_search_finds_win_and_reports, test_fuzz_lines,
             test_swap2_choices, test_yixin_board_forbid_block, test_yixin_nbest,
             test_yixin_realtime, test_yixin_balance, test_yixin_search_defend, test_yixin_bot);
    ADD_CASE(s, "time", 120, test_time_100_moves_in_process, test_binary_time_limit,
             test_binary_stall_then_search, test_binary_stop_and_end_during_search,
             test_binary_eof_during_search, test_model_file);
    ADD_CASE(s, "yixin", 60, test_binary_yixin_session);
    ADD_CASE(s, "process", 60, test_binary_transcript, test_player_against_own_binary,
             test_player_broken_engines);
    ADD_CASE(s, "match", 120, test_overrun_note, test_match_clock_told_to_engine, test_match_forfeits,
             test_match_openings_file);
    return run_suite(s);
}
