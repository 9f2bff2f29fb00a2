/* Gomocup (piskvork) protocol engine; see pbrain.h for the commands, the
 * swap2 choices and the time rule. */
#include "play/pbrain.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/bot.h"
#include "util/util.h"
#include "mcts/mcts.h"
#include "nn/nn.h"
#include "play/movetime.h"
#include "play/brain.h"
#include "play/swap2.h"
#include "play/balance.h"
#include "play/pbrain_impl.h"

#define QUEUE_LINES 64                /* lines read ahead while a move is being searched */

/* Every reply goes through here: one line, printable ASCII only. */
void pbrain_reply(FILE *out, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (char *c = buf; *c; c++)
        if ((unsigned char)*c < 32 || (unsigned char)*c > 126)
            *c = '?';
    fprintf(out, "%s\n", buf);
}

/* A short printable copy of user text for messages. */
void pbrain_quote(char *dst, size_t len, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 4 < len && i < 40; i++)
        dst[i] = ((unsigned char)s[i] < 32 || (unsigned char)s[i] > 126) ? '?' : s[i];
    if (s[i] && i + 4 < len) {
        memcpy(dst + i, "...", 3);
        i += 3;
    }
    dst[i] = 0;
}

/* ---- parsing: whitespace-tolerant, strict digits, explicit range ---- */

const char *pbrain_skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* A non-negative integer <= max at *s; advances *s. 0, or -1 with why. */
int pbrain_parse_num(const char **s, long long max, long long *out, const char **why)
{
    const char *p = pbrain_skip_ws(*s);
    if (*p == '-' && isdigit((unsigned char)p[1])) {
        *why = "negative number";
        return -1;
    }
    if (*p == '+')
        p++;
    if (!isdigit((unsigned char)*p)) {
        *why = "expected a number";
        return -1;
    }
    long long v = 0;
    int big = 0;
    while (isdigit((unsigned char)*p)) {
        if (v > (max - (*p - '0')) / 10)
            big = 1;
        else
            v = v * 10 + (*p - '0');
        p++;
    }
    if (big) {
        *why = "number out of range";
        return -1;
    }
    *out = v;
    *s = p;
    return 0;
}

int pbrain_parse_int(const char *s, long long max, long long *out, const char **why)
{
    const char *p = pbrain_skip_ws(s);
    int neg = *p == '-' && isdigit((unsigned char)p[1]);
    if (neg)
        p++;
    if (pbrain_parse_num(&p, max, out, why))
        return -1;
    if (!pbrain_at_end(p)) {
        *why = "expected a number";
        return -1;
    }
    if (neg)
        *out = -*out;
    return 0;
}

int pbrain_expect_char(const char **s, char c)
{
    const char *p = pbrain_skip_ws(*s);
    if (*p != c)
        return -1;
    *s = p + 1;
    return 0;
}

int pbrain_at_end(const char *s)
{
    return *pbrain_skip_ws(s) == 0;
}

/* "X,Y" with nothing after it, both < limit. */
int pbrain_parse_xy(const char *s, int limit, int *x, int *y, char *err, size_t errlen)
{
    long long a, b;
    const char *why = NULL;
    if (pbrain_parse_num(&s, 1000000000, &a, &why) || pbrain_expect_char(&s, ',') ||
        pbrain_parse_num(&s, 1000000000, &b, &why) || !pbrain_at_end(s)) {
        snprintf(err, errlen, "%s", why ? why : "expected X,Y");
        if (!why)
            snprintf(err, errlen, "expected X,Y");
        return -1;
    }
    if (a >= limit || b >= limit) {
        snprintf(err, errlen, "%lld,%lld is off the %dx%d board", a, b, limit, limit);
        return -1;
    }
    *x = (int)a;
    *y = (int)b;
    return 0;
}

int pbrain_word_is(const char *w, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(w, name, n) == 0;
}

/* ---- move chooser ---- */

void pbrain_opts_default(pbrain_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->model = "bot:greedy";
    o->threads = 1;
    o->device = "auto";
    o->precision = NN_PRECISION_AUTO;
    o->seed = 1;
    search_settings_default(&o->search);
}

/* A search runs between these two: a stop request (YXSTOP) counts only
 * while one runs; after END every search stops at once. */
void pbrain_search_begin(pbrain_t *pb)
{
    pthread_mutex_lock(&pb->mu);
    pb->searching = 1;
    pthread_mutex_unlock(&pb->mu);
}

void pbrain_search_end(pbrain_t *pb)
{
    pthread_mutex_lock(&pb->mu);
    pb->searching = 0;
    if (!pb->ending && !pb->input_closed)
        __atomic_store_n(&pb->stop, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&pb->mu);
}

int pbrain_ending(pbrain_t *pb)
{
    pthread_mutex_lock(&pb->mu);
    int e = pb->ending;
    pthread_mutex_unlock(&pb->mu);
    return e;
}

/* The brain's calls that search run between search_begin and search_end;
 * a move's search says its realtime lines on out when they are asked for. */
static int search_genmove(pbrain_t *pb, FILE *out, const uint8_t *avoid, double budget_ms,
                          brain_move_t *m, char *err, size_t errlen)
{
    pbrain_search_begin(pb);
    pbrain_yx_watch_begin(pb, out);
    int rc = brain_genmove(pb->br, &pb->board, avoid, budget_ms, &pb->stop, m, err, errlen);
    pbrain_yx_watch_end(pb);
    pbrain_search_end(pb);
    return rc;
}

static double search_value(pbrain_t *pb, const board_t *b, double budget_ms, char *err,
                           size_t errlen, int *failed)
{
    pbrain_search_begin(pb);
    double v = brain_value(pb->br, b, budget_ms, &pb->stop, failed, err, errlen);
    pbrain_search_end(pb);
    return v;
}

void pbrain_free(pbrain_t *pb)
{
    if (!pb)
        return;
    brain_free(pb->br);
    vct_free(pb->vct);
    pthread_mutex_destroy(&pb->mu);
    free(pb);
}

pbrain_t *pbrain_create(const pbrain_opts_t *o, char *err, size_t errlen)
{
    pbrain_t *pb = calloc(1, sizeof *pb);
    if (!pb) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&pb->mu, NULL);
    pb->opts = *o;
    snprintf(pb->spec, sizeof pb->spec, "%s", o->model);
    pb->opts.model = pb->spec;
    movetime_init(&pb->mt);
    pb->rule = RULE_FREESTYLE;
    pb->size = BOARD_DEFAULT;
    brain_opts_t bo = {.model = pb->spec, .threads = o->threads, .device = o->device,
                       .precision = o->precision, .seed = o->seed, .search = o->search,
                       .who = o->quiet ? NULL : "gomoku pbrain"};
    pb->br = brain_create(&bo, err, errlen);
    if (!pb->br) {
        pbrain_free(pb);
        return NULL;
    }
    return pb;
}


const board_t *pbrain_board(const pbrain_t *pb)
{
    return pb->started ? &pb->board : NULL;
}

size_t pbrain_tree_budget(const pbrain_t *pb)
{
    return brain_memory_budget(pb->br, NULL, 0);
}

/* ---- time (play/movetime.h) ---- */

int pbrain_move_budget_ms(const pbrain_t *pb)
{
    return (int)movetime_budget_ms(&pb->mt, &pb->board);
}

int pbrain_margin_ms(const pbrain_t *pb)
{
    return (int)ceil(movetime_margin_ms(&pb->mt, &pb->board));
}

/* ---- positions ---- */

/* Board from stones in move order per colour (black first, alternating).
 * 0, or -1 with err and b untouched. */
int pbrain_build_board(board_t *b, int size, rule_t rule, const int16_t *black, int nb,
                       const int16_t *white, int nw, char *err, size_t errlen)
{
    if (nb != nw && nb != nw + 1) {
        snprintf(err, errlen, "%d black and %d white stones cannot arise in a game "
                 "(black moves first, then they alternate)", nb, nw);
        return -1;
    }
    board_t t;
    board_init(&t, size, rule);
    for (int i = 0; i < nb; i++) {
        for (int c = 0; c < 2; c++) {
            if (c == 1 && i >= nw)
                break;
            int m = c == 0 ? black[i] : white[i];
            move_status_t st = board_play(&t, m);
            if (st != MOVE_OK) {
                snprintf(err, errlen, "stone %d,%d: %s", m % size, m / size,
                         st == MOVE_GAME_OVER ? "the game was already over" : move_status_str(st));
                return -1;
            }
        }
    }
    *b = t;
    return 0;
}

/* Rebuild the current game under a new rule / without one stone. */
static int rebuild(pbrain_t *pb, rule_t rule, int skip_move, char *err, size_t errlen)
{
    if (pb->irregular) {
        snprintf(err, errlen, "the position came from BOARD with field 3 stones (a continuous "
                 "game) and has no move order to replay");
        return -1;
    }
    int16_t black[BOARD_CELLS], white[BOARD_CELLS];
    int nb = 0, nw = 0;
    for (int i = 0; i < pb->board.nmoves; i++) {
        int m = pb->board.moves[i];
        if (m == skip_move)
            continue;
        if (i % 2 == 0)
            black[nb++] = (int16_t)m;
        else
            white[nw++] = (int16_t)m;
    }
    return pbrain_build_board(&pb->board, pb->size, rule, black, nb, white, nw, err, errlen);
}

static void new_game(pbrain_t *pb, int size)
{
    pb->started = 1;
    pb->size = size;
    board_init(&pb->board, size, pb->rule);
    pb->me = 0;
    pb->mode = MODE_CMD;
    memset(pb->blocked, 0, sizeof pb->blocked);
    pb->irregular = 0;
    pb->fixed_stones = 0;
}

/* A continuous game's position: stones of finished fives (and, in renju,
 * stones on forbidden points) are marked field 3; they stay on the board
 * as blocked points that belong to neither side, so the own and opponent
 * stones need not alternate. The stones are set directly (there is no move
 * order); we are black when the stones on the board, marked ones included,
 * are even in number. board_t has no neutral stone: the blocked points stay
 * empty in it and the move chooser never picks one (unblocked_move). */
static void setup_continuous(board_t *b, int size, rule_t rule, const int16_t *own, int no,
                             const int16_t *opp, int np, int nblocked)
{
    int me = (no + np + nblocked) % 2 == 0 ? STONE_BLACK : STONE_WHITE;
    board_init(b, size, rule);
    for (int i = 0; i < no + np; i++) {
        int m = i < no ? own[i] : opp[i - no];
        b->cells[m] = (uint8_t)(i < no ? me : STONE_BLACK + STONE_WHITE - me);
        b->moves[b->nmoves++] = (int16_t)m;
    }
    b->to_move = (uint8_t)me;
    b->hash = board_hash_full(b);
}

/* ---- replies that need a move ---- */

void pbrain_format_xy(char *buf, size_t len, int move, int size)
{
    snprintf(buf, len, "%d,%d", move % size, move / size);
}

void pbrain_format_line(char *buf, size_t len, const int *moves, int n, int size)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < n && k + 10 < len; i++) {
        char mv[16];
        pbrain_format_xy(mv, sizeof mv, moves[i], size);
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? " " : "", mv);
    }
    if (k == 0)
        snprintf(buf, len, "-");
}

static void print_analysis(pbrain_t *pb, FILE *out, const mcts_result_t *r)
{
    char pv[MCTS_PV_MAX * 8];
    pbrain_format_line(pv, sizeof pv, r->pv, r->npv < 12 ? r->npv : 12, pb->size);
    /* the search was from the engine's side (pb->me), to move before its reply */
    pbrain_reply(out, "MESSAGE visits %u playouts %llu evals %llu winrate %.1f%% (%s, the engine) "
          "pv %s speed %.0f playouts/s time %.0f ms%s%s", r->root_visits,
          (unsigned long long)r->playouts, (unsigned long long)r->evals, 100.0 * r->winrate, pb->me == STONE_BLACK ? "black" : "white", pv,
          r->playouts_per_s, r->seconds * 1e3,
          r->proven > 0 ? " (proven win)" : r->proven < 0 ? " (proven loss)" : "",
          r->mem_full ? " (tree memory full)" : "");
}

static void rule_unsupported_why(long long bits, char *buf, size_t len)
{
    snprintf(buf, len, "INFO rule %lld is not supported: %s (this engine plays bits 1 exactly "
             "five, 2 continuous game, 4 renju)", bits,
             (bits & 8) ? "caro (8) is not" : "unknown rule bits");
}

/* Why the engine cannot play now, or NULL. */
const char *pbrain_cannot_play(pbrain_t *pb, char *buf, size_t len)
{
    if (pb->rule_unsupported) {
        rule_unsupported_why(pb->rule_bits, buf, len);
        return buf;
    }
    if (!brain_is_bot(pb->br) && brain_memory_budget(pb->br, buf, len) == 0)
        return buf;
    if (board_over(&pb->board)) {
        snprintf(buf, len, "the game is over (%s)", result_str((result_t)pb->board.result));
        return buf;
    }
    return NULL;
}

static int legal_left(const board_t *b, const uint8_t *avoid)
{
    int n = 0;
    for (int m = 0; m < board_npoints(b); m++)
        n += !avoid[m] && board_check_move(b, m) == MOVE_OK;
    return n;
}

int pbrain_avoid_set(const pbrain_t *pb, const uint8_t *more, uint8_t *avoid)
{
    /* the YXBLOCK set before `more`: a GUI's block outranks a command's own choice */
    for (int layer = 0; layer < 3; layer++) {
        for (int m = 0; m < BOARD_CELLS; m++)
            avoid[m] = pb->blocked[m] || (layer < 2 && pb->yx_block[m]) ||
                       (layer < 1 && more && more[m]);
        int n = legal_left(&pb->board, avoid);
        if (n > 0 || layer == 2)
            return n;
    }
    return 0;
}

int pbrain_overrun_note(char *buf, size_t len, int ply, double budget_ms, double limit_ms,
                        double t0, double t_begin, double t_searched, double threads_ms,
                        double watch_ms, double t_end)
{
    double took = t_end - t0;
    if (!(took > limit_ms))
        return 0;
    double rest = t_searched - t_begin - threads_ms - watch_ms;
    snprintf(buf, len, "move %d took %.0f ms, past its %.0f ms (a search budget of %.0f): %.0f "
             "before the search, %.0f until its threads ended, %.0f waiting for the watcher, "
             "%.0f more in the search call, %.0f after it",
             ply, took, limit_ms, budget_ms, t_begin - t0, threads_ms, watch_ms,
             rest > 0.0 ? rest : 0.0, t_end - t_searched);
    return 1;
}

int pbrain_answer_move(pbrain_t *pb, FILE *out, double t0, const pbrain_move_request_t *rq)
{
    char why[200], err[200];
    double t_begin = util_now_ms();
    if (pbrain_cannot_play(pb, why, sizeof why)) {
        pbrain_reply(out, "ERROR %s", why);
        return -1;
    }
    double full = movetime_budget_ms(&pb->mt, &pb->board), budget = full;
    double limit = full + movetime_margin_ms(&pb->mt, &pb->board);   /* the move's time */
    if (rq && rq->used_ms > 0.0)
        budget = full > rq->used_ms ? full - rq->used_ms : 0.0;
    brain_move_t m;
    uint8_t avoid[BOARD_CELLS];
    pbrain_avoid_set(pb, rq ? rq->avoid : NULL, avoid);
    /* a model's first stone, unless asked to rank or defend: no search */
    int first = rq || brain_is_bot(pb->br) ? MOVE_NONE : searcher_first_move(&pb->board);
    if (first != MOVE_NONE && !avoid[first]) {
        memset(&m, 0, sizeof m);
        m.move = first;
    } else if (search_genmove(pb, out, avoid, budget, &m, err, sizeof err)) {
        if (!pbrain_ending(pb))
            pbrain_reply(out, "ERROR %s", err);
        return -1;
    }
    double t_searched = util_now_ms();
    if (pbrain_ending(pb))
        return -1;   /* the manager has gone on to END: no one reads this move */
    pb->me = pb->board.to_move;
    board_play(&pb->board, m.move);
    if (m.searched)
        print_analysis(pb, out, &m.r);
    if (rq && rq->report)
        rq->report(pb, out, &m, rq->user);
    char mv[16];
    pbrain_format_xy(mv, sizeof mv, m.move, pb->size);
    pbrain_reply(out, "%s", mv);
    fflush(out);
    char note[400];
    if (pbrain_overrun_note(note, sizeof note, pb->board.nmoves, budget, limit, t0, t_begin,
                            t_searched, m.searched ? m.r.threads_ms : 0.0,
                            m.searched ? m.r.watch_ms : 0.0, util_now_ms()))
        fprintf(stderr, "gomoku pbrain: %s\n", note);   /* off the protocol: for whoever logs it */
    movetime_record(&pb->mt, t0, full);
    brain_played(pb->br, m.move);   /* after the reply: off our clock */
    return 0;
}

/* ---- SWAP2BOARD ---- */

/* Swap2's third option after 3 stones (white's value v, searched in 40%
 * of the move's budget): a white and a black stone that leave the
 * position balanced (55% of the budget), "X1,Y1 X2,Y2". 0 when
 * they were placed (or END came), -1 when no balanced pair was found
 * (nothing said or changed, but MESSAGE lines). */
static int swap2_place_two(pbrain_t *pb, FILE *out, double t0, double budget, double v)
{
    char err[200], s0[16], s1[16];
    uint8_t avoid[BOARD_CELLS];
    balance_result_t r;
    pbrain_avoid_set(pb, NULL, avoid);
    pbrain_search_begin(pb);
    int rc = balance_search(pb->br, &pb->board, 2, 0.0, budget * 0.55, &pb->stop, avoid, NULL,
                            NULL, &r, err, sizeof err);
    pbrain_search_end(pb);
    if (pbrain_ending(pb))
        return 0;
    if (rc || !(fabs(r.value) <= SWAP2_BALANCED)) {
        if (rc)
            pbrain_reply(out, "MESSAGE swap2: no two stones to place: %s", err);
        else
            pbrain_reply(out, "MESSAGE swap2: the best two stones leave white's value %.2f", r.value);
        return -1;
    }
    board_play(&pb->board, r.moves[0]);
    board_play(&pb->board, r.moves[1]);
    pb->me = 0;   /* the opener chooses */
    pbrain_format_xy(s0, sizeof s0, r.moves[0], pb->size);
    pbrain_format_xy(s1, sizeof s1, r.moves[1], pb->size);
    pbrain_reply(out, "MESSAGE white's value %.2f: placing two stones, white's value %.2f after "
                 "them (%d positions checked)", v, r.value, r.checked);
    pbrain_reply(out, "%s %s", s0, s1);
    fflush(out);
    movetime_record(&pb->mt, t0, budget);
    brain_set_position(pb->br, &pb->board);
    return 0;
}

static void swap2_answer(pbrain_t *pb, FILE *out, double t0)
{
    char err[200], s0[16], s1[16], s2[16];
    int16_t black[3] = {0}, white[2] = {0};
    int n = pb->blk_n, nb = 0, nw = 0;
    if (n != 0 && n != 3 && n != 5) {
        pbrain_reply(out, "ERROR SWAP2BOARD takes 0, 3 or 5 stones, got %d", n);
        return;
    }
    if (pb->rule_unsupported) {
        pbrain_reply(out, "ERROR %s", pbrain_cannot_play(pb, err, sizeof err));
        return;
    }
    for (int i = 0; i < n; i++) {
        if (i % 2 == 0)
            black[nb++] = pb->blk_move[i];
        else
            white[nw++] = pb->blk_move[i];
    }
    board_t b;
    if (pbrain_build_board(&b, pb->size, pb->rule, black, nb, white, nw, err, sizeof err)) {
        pbrain_reply(out, "ERROR SWAP2BOARD: %s", err);
        return;
    }
    double budget = movetime_budget_ms(&pb->mt, &pb->board);
    int bad = 0;
    if (n == 0) {
        int best = -1;
        double best_abs = 1e9;
        int16_t book[SWAP2_BOOK_MAX][3];
        int index[SWAP2_BOOK_MAX];
        int nc = swap2_book(pb->size, book, index);
        if (nc == 0) {
            pbrain_reply(out, "ERROR SWAP2BOARD: the board is too small for an opening");
            return;
        }
        if (brain_is_bot(pb->br)) {
            best = (int)util_rng_below(brain_rng(pb->br), (uint32_t)nc);
        } else {
            for (int i = 0; i < nc && !bad; i++) {
                const int16_t *mv = book[i];
                int16_t bl[2] = {mv[0], mv[2]}, wh[1] = {mv[1]};
                board_t t;
                if (pbrain_build_board(&t, pb->size, pb->rule, bl, 2, wh, 1, err, sizeof err))
                    continue;
                double v = search_value(pb, &t, budget / nc, err, sizeof err, &bad);
                if (!bad && fabs(v) < best_abs) {
                    best_abs = fabs(v);
                    best = i;
                }
            }
            if (bad) {
                pbrain_reply(out, "ERROR %s", err);
                return;
            }
            if (best < 0) {
                pbrain_reply(out, "ERROR SWAP2BOARD: no opening fits this board");
                return;
            }
            pbrain_reply(out, "MESSAGE swap2 opening %d: white's value %.2f", index[best], best_abs);
        }
        const int16_t *mv = book[best];
        int16_t bl[2] = {mv[0], mv[2]}, wh[1] = {mv[1]};
        pbrain_build_board(&pb->board, pb->size, pb->rule, bl, 2, wh, 1, err, sizeof err);
        pb->me = 0;
        pbrain_format_xy(s0, sizeof s0, mv[0], pb->size);
        pbrain_format_xy(s1, sizeof s1, mv[1], pb->size);
        pbrain_format_xy(s2, sizeof s2, mv[2], pb->size);
        pbrain_reply(out, "%s %s %s", s0, s1, s2);
        fflush(out);
        movetime_record(&pb->mt, t0, budget);
        return;
    }
    /* 3 or 5 stones: white to move. SWAP = we take black, the other side
     * plays white's move; otherwise we play it. */
    pb->board = b;
    if (pbrain_cannot_play(pb, err, sizeof err)) {
        pbrain_reply(out, "ERROR %s", err);
        return;
    }
    double v = search_value(pb, &pb->board, budget * 0.4, err, sizeof err, &bad);
    if (bad) {
        pbrain_reply(out, "ERROR %s", err);
        return;
    }
    swap2_choice_t choice = swap2_choose(n, v);
    if (choice == SWAP2_PLACE_TWO && swap2_place_two(pb, out, t0, budget, v) == 0)
        return;
    if (choice == SWAP2_PLACE_TWO)
        choice = v < 0.0 ? SWAP2_TAKE_BLACK : SWAP2_PLAY_WHITE;
    if (pbrain_ending(pb))
        return;
    if (choice == SWAP2_TAKE_BLACK) {
        pbrain_reply(out, "MESSAGE white's value %.2f: taking black", v);
        pb->me = STONE_BLACK;
        pbrain_reply(out, "SWAP");
        fflush(out);
        movetime_record(&pb->mt, t0, budget);
        return;
    }
    pbrain_answer_move(pb, out, t0, NULL);
}

/* ---- BOARD / SWAP2BOARD blocks ---- */

void pbrain_block_start(pbrain_t *pb, block_mode_t mode)
{
    pb->mode = mode;
    pb->blk_n = 0;
    pb->blk_err[0] = 0;
}

static void block_fail(pbrain_t *pb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void block_fail(pbrain_t *pb, const char *fmt, ...)
{
    if (pb->blk_err[0])
        return;   /* the first problem is the one to report */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pb->blk_err, sizeof pb->blk_err, fmt, ap);
    va_end(ap);
}

static const char *block_name(block_mode_t mode)
{
    switch (mode) {
    case MODE_SWAP2: return "SWAP2BOARD";
    case MODE_YXBOARD: return "YXBOARD";
    case MODE_YXBLOCK: return "YXBLOCK";
    case MODE_YXBLOCKUNDO: return "YXBLOCKUNDO";
    default: return "BOARD";
    }
}

static void block_line(pbrain_t *pb, const char *s)
{
    /* X,Y lines (swap2's stones, blocked points) or X,Y,FIELD ones */
    int swap2 = pb->mode != MODE_BOARD && pb->mode != MODE_YXBOARD;
    long long x, y, f = 0;
    const char *why = NULL, *p = s;
    char q[64];
    pbrain_quote(q, sizeof q, s);
    if (pbrain_parse_num(&p, 1000000000, &x, &why) || pbrain_expect_char(&p, ',') ||
        pbrain_parse_num(&p, 1000000000, &y, &why) ||
        (!swap2 && (pbrain_expect_char(&p, ',') || pbrain_parse_num(&p, 1000000000, &f, &why))) ||
        !pbrain_at_end(p)) {
        block_fail(pb, "bad %s line '%s': %s", block_name(pb->mode), q,
                   why ? why : swap2 ? "expected X,Y" : "expected X,Y,FIELD");
        return;
    }
    if (x >= pb->size || y >= pb->size) {
        block_fail(pb, "stone %lld,%lld is off the %dx%d board", x, y, pb->size, pb->size);
        return;
    }
    if (!swap2 && (f < 1 || f > 3)) {
        block_fail(pb, "stone %lld,%lld: field %lld is not 1 (own), 2 (opponent) or 3 "
                   "(continuous game: a marked stone)", x, y, f);
        return;
    }
    if (pb->blk_n >= BOARD_CELLS) {
        block_fail(pb, "too many stones");
        return;
    }
    int m = (int)y * pb->size + (int)x;
    for (int i = 0; i < pb->blk_n; i++)
        if (pb->blk_move[i] == m) {
            block_fail(pb, "stone %lld,%lld is given twice", x, y);
            return;
        }
    pb->blk_move[pb->blk_n] = (int16_t)m;
    pb->blk_field[pb->blk_n] = (uint8_t)f;
    pb->blk_n++;
}

int pbrain_block_position(pbrain_t *pb, char *err, size_t errlen)
{
    int16_t own[BOARD_CELLS], opp[BOARD_CELLS];
    uint8_t blocked[BOARD_CELLS] = {0};
    int no = 0, np = 0, nb = 0;
    for (int i = 0; i < pb->blk_n; i++) {
        if (pb->blk_field[i] == 1)
            own[no++] = pb->blk_move[i];
        else if (pb->blk_field[i] == 2)
            opp[np++] = pb->blk_move[i];
        else {
            blocked[pb->blk_move[i]] = 1;
            nb++;
        }
    }
    /* We are to move: equal counts make us black, one fewer makes us white. */
    int rc = 0;
    if (nb > 0)
        setup_continuous(&pb->board, pb->size, pb->rule, own, no, opp, np, nb);
    else if (no == np)
        rc = pbrain_build_board(&pb->board, pb->size, pb->rule, own, no, opp, np, err, errlen);
    else if (np == no + 1)
        rc = pbrain_build_board(&pb->board, pb->size, pb->rule, opp, np, own, no, err, errlen);
    else {
        snprintf(err, errlen, "%d own and %d opponent stones: with us to move the "
                 "opponent has as many stones as we do or one more", no, np);
        rc = -1;
    }
    if (rc)
        return -1;
    memcpy(pb->blocked, blocked, sizeof blocked);
    pb->irregular = nb > 0;
    pb->fixed_stones = nb > 0 ? pb->board.nmoves : 0;
    return 0;
}

static void board_done(pbrain_t *pb, FILE *out, double t0)
{
    char err[200];
    board_t saved = pb->board;
    uint8_t saved_blocked[BOARD_CELLS];
    memcpy(saved_blocked, pb->blocked, sizeof saved_blocked);
    int saved_irregular = pb->irregular, saved_fixed = pb->fixed_stones;
    if (pbrain_block_position(pb, err, sizeof err)) {
        pbrain_reply(out, "ERROR BOARD: %s", err);
        return;
    }
    if (pbrain_answer_move(pb, out, t0, NULL)) {
        pb->board = saved;
        memcpy(pb->blocked, saved_blocked, sizeof saved_blocked);
        pb->irregular = saved_irregular;
        pb->fixed_stones = saved_fixed;
    }
}

/* ---- INFO ---- */

static void info(pbrain_t *pb, const char *args, FILE *out)
{
    const char *p = pbrain_skip_ws(args);
    const char *k = p;
    while (*p && *p != ' ' && *p != '\t')
        p++;
    size_t kn = (size_t)(p - k);
    const char *v = pbrain_skip_ws(p);
    if (kn == 0) {
        pbrain_reply(out, "ERROR INFO needs a key and a value");
        return;
    }
    char key[48];
    pbrain_quote(key, sizeof key, k);
    key[kn < sizeof key - 1 ? kn : sizeof key - 1] = 0;
    if (pbrain_word_is(k, kn, "evaluate") || pbrain_word_is(k, kn, "folder")) {
        /* evaluate is for debug builds only and must not write to stdout */
        if (pbrain_word_is(k, kn, "folder"))
            snprintf(pb->folder, sizeof pb->folder, "%.*s", (int)sizeof pb->folder - 1, v);
        return;
    }
    if (pbrain_yx_info(pb, k, kn, v, out))
        return;
    long long *dst = NULL;
    long long max = 2147483647LL;
    int signed_ok = 0;
    if (pbrain_word_is(k, kn, "timeout_turn"))
        dst = &pb->mt.timeout_turn;
    else if (pbrain_word_is(k, kn, "timeout_match"))
        dst = &pb->mt.timeout_match;
    else if (pbrain_word_is(k, kn, "time_left"))
        dst = &pb->mt.time_left, signed_ok = 1;
    else if (pbrain_word_is(k, kn, "max_memory"))
        dst = &pb->max_memory, max = (1LL << 50);
    else if (!pbrain_word_is(k, kn, "game_type") && !pbrain_word_is(k, kn, "rule"))
        return;   /* unknown keys are ignored, as the protocol asks */
    long long val;
    int neg = 0;
    const char *q = v, *why = NULL;
    if (signed_ok && *q == '-' && isdigit((unsigned char)q[1])) {
        neg = 1;
        q++;
    }
    if (pbrain_parse_num(&q, max, &val, &why) || !pbrain_at_end(q)) {
        char vq[64];
        pbrain_quote(vq, sizeof vq, v);
        pbrain_reply(out, "ERROR INFO %s '%s': %s", key, vq, why ? why : "expected a number");
        return;
    }
    if (neg)
        val = -val;
    if (dst) {
        *dst = val;
        if (dst == &pb->max_memory) {
            /* resize now: INFO comes before the move, off its clock; too
             * little is reported now (moves are refused until it grows) */
            char err[200];
            if (brain_set_max_memory(pb->br, val, err, sizeof err))
                pbrain_reply(out, "ERROR INFO max_memory %lld: %s", val, err);
        }
        return;
    }
    if (pbrain_word_is(k, kn, "game_type")) {
        if (val > 3) {
            pbrain_reply(out, "ERROR INFO game_type %lld: expected 0..3", val);
            return;
        }
        pb->game_type = (int)val;
        return;
    }
    /* rule bitmask: 1 exactly five, 2 continuous game (BOARD field 3), 4 renju, 8 caro;
     * Yixin-Board numbers its rules 0 freestyle, 1 standard, 2 renju */
    if (pb->yixin && val == 2)
        val = 4;
    pb->rule_bits = val;
    if (val & ~7LL) {
        /* reported now, and moves are refused until a rule we play is set */
        pb->rule_unsupported = 1;
        char why[200];
        rule_unsupported_why(val, why, sizeof why);
        pbrain_reply(out, "ERROR %s", why);
        return;
    }
    pb->rule_unsupported = 0;
    rule_t r = (val & 4) ? RULE_RENJU : (val & 1) ? RULE_STANDARD : RULE_FREESTYLE;
    if (r == pb->rule)
        return;
    char err[200];
    if (pb->started && rebuild(pb, r, MOVE_NONE, err, sizeof err)) {
        pbrain_reply(out, "ERROR INFO rule %lld: cannot switch the current game to %s: %s", val,
              rule_name(r), err);
        return;
    }
    pb->rule = r;
    if (!pb->started)
        board_init(&pb->board, pb->size, r);
}

/* ---- commands ---- */

static int start(pbrain_t *pb, const char *args, FILE *out, int rect)
{
    long long w, h;
    const char *p = args, *why = NULL;
    char q[64];
    pbrain_quote(q, sizeof q, pbrain_skip_ws(args));
    /* Yixin-Board says START W H */
    int two = !rect && pbrain_parse_num(&p, 1000000000, &w, &why) == 0 && !pbrain_at_end(p);
    p = args;
    if (pbrain_parse_num(&p, 1000000000, &w, &why) ||
        (rect && (pbrain_expect_char(&p, ',') || pbrain_parse_num(&p, 1000000000, &h, &why))) ||
        (two && pbrain_parse_num(&p, 1000000000, &h, &why)) || !pbrain_at_end(p)) {
        pbrain_reply(out, "ERROR %s '%s': %s", rect ? "RECTSTART" : "START", q,
              why ? why : rect ? "expected WIDTH,HEIGHT" : "expected a board size");
        return -1;
    }
    if ((rect || two) && w != h) {
        pbrain_reply(out, "ERROR rectangular boards are not supported (%lldx%lld)", w, h);
        return -1;
    }
    if (w < BOARD_MIN || w > BOARD_MAX || w > brain_board_max(pb->br)) {
        pbrain_reply(out, "ERROR unsupported size %lld: this engine plays %d..%d", w, BOARD_MIN,
              brain_board_max(pb->br) < BOARD_MAX ? brain_board_max(pb->br) : BOARD_MAX);
        return -1;
    }
    if (w != pb->size)
        memset(pb->yx_block, 0, sizeof pb->yx_block);   /* its points meant another board */
    new_game(pb, (int)w);
    pbrain_reply(out, "OK");
    return 0;
}

int pbrain_need_start(pbrain_t *pb, FILE *out, const char *cmd)
{
    if (pb->started)
        return 0;
    pbrain_reply(out, "ERROR %s before START: no board yet", cmd);
    return -1;
}

/* X,Y of command cmd, which needs a board: 0, or -1 after replying the error. */
static int command_xy(pbrain_t *pb, const char *cmd, const char *args, FILE *out, int *x, int *y)
{
    char err[160];
    if (pbrain_need_start(pb, out, cmd))
        return -1;
    if (pbrain_parse_xy(args, pb->size, x, y, err, sizeof err)) {
        pbrain_reply(out, "ERROR %s: %s", cmd, err);
        return -1;
    }
    return 0;
}

/* Whether move m (at x,y) may be played now; when not, the error is replied. */
static bool move_ok(pbrain_t *pb, const char *cmd, FILE *out, int x, int y, int m)
{
    move_status_t st = pb->blocked[m] ? MOVE_OCCUPIED : board_check_move(&pb->board, m);
    if (st == MOVE_OK)
        return true;
    pbrain_reply(out, "ERROR %s %d,%d: %s", cmd, x, y,
          st == MOVE_GAME_OVER ? "the game is over" : move_status_str(st));
    return false;
}

static void turn(pbrain_t *pb, const char *args, FILE *out, double t0)
{
    int x, y;
    if (command_xy(pb, "TURN", args, out, &x, &y))
        return;
    int m = board_xy(&pb->board, x, y);
    if (!move_ok(pb, "TURN", out, x, y, m))
        return;
    board_play(&pb->board, m);
    if (pbrain_answer_move(pb, out, t0, NULL))
        board_undo(&pb->board);   /* refused: the position stays as it was */
}

static void takeback(pbrain_t *pb, const char *args, FILE *out)
{
    int x, y;
    char err[160];
    if (command_xy(pb, "TAKEBACK", args, out, &x, &y))
        return;
    int m = board_xy(&pb->board, x, y);
    if (pb->board.cells[m] == STONE_EMPTY) {
        pbrain_reply(out, "ERROR TAKEBACK %d,%d: no stone there", x, y);
        return;
    }
    int last_color = pb->board.to_move == STONE_BLACK ? STONE_WHITE : STONE_BLACK;
    if (pb->board.cells[m] != last_color) {
        pbrain_reply(out, "ERROR TAKEBACK %d,%d: that stone's side did not make the last move", x, y);
        return;
    }
    if (m == pb->board.last && (!pb->irregular || pb->board.nmoves > pb->fixed_stones))
        board_undo(&pb->board);
    else if (rebuild(pb, pb->rule, m, err, sizeof err)) {
        pbrain_reply(out, "ERROR TAKEBACK %d,%d: %s", x, y, err);
        return;
    }
    pbrain_reply(out, "OK");
}

/* PLAY X,Y imposes our move (the manager's answer to SUGGEST). When we
 * have already played, it replaces our last move. */
static void play(pbrain_t *pb, const char *args, FILE *out, double t0)
{
    int x, y;
    if (command_xy(pb, "PLAY", args, out, &x, &y))
        return;
    board_t saved = pb->board;
    int m = board_xy(&pb->board, x, y);
    int ours = pb->me && pb->board.nmoves > 0 && pb->board.to_move != pb->me;
    if (ours)
        board_undo(&pb->board);
    if (!move_ok(pb, "PLAY", out, x, y, m)) {
        pb->board = saved;
        return;
    }
    pb->me = pb->board.to_move;
    board_play(&pb->board, m);
    brain_set_position(pb->br, &pb->board);
    pbrain_reply(out, "%d,%d", x, y);
    fflush(out);
    movetime_record(&pb->mt, t0, 0);
}

static int is_command_word(const char *w, size_t n)
{
    static const char *const words[] = {"START", "RECTSTART", "RESTART", "BEGIN", "TURN",
                                        "BOARD", "INFO", "END", "ABOUT", "TAKEBACK",
                                        "PLAY", "SWAP2BOARD", "STOP"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (pbrain_word_is(w, n, words[i]))
            return 1;
    return n >= 2 && strncasecmp(w, "YX", 2) == 0;   /* Yixin-Board's commands */
}

/* t0: when the line arrived (the clock of a move it asks for starts there). */
static int handle_line_at(pbrain_t *pb, const char *line, FILE *out, double t0)
{
    char buf[PBRAIN_LINE_MAX + 2];
    size_t len = strnlen(line, PBRAIN_LINE_MAX + 1);
    if (len > PBRAIN_LINE_MAX) {
        if (pb->mode != MODE_CMD)
            block_fail(pb, "line longer than %d bytes", PBRAIN_LINE_MAX);
        else
            pbrain_reply(out, "ERROR line longer than %d bytes", PBRAIN_LINE_MAX);
        fflush(out);
        return PBRAIN_CONTINUE;
    }
    memcpy(buf, line, len + 1);
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' ||
                       buf[len - 1] == '\t'))
        buf[--len] = 0;
    const char *s = pbrain_skip_ws(buf);
    if (!*s)
        return PBRAIN_CONTINUE;   /* managers ignore empty lines; so do we */
    const char *w = s;
    while (*s && *s != ' ' && *s != '\t')
        s++;
    size_t wn = (size_t)(s - w);
    const char *args = pbrain_skip_ws(s);
    int rc = PBRAIN_CONTINUE;

    if (pb->mode != MODE_CMD) {
        if (pbrain_word_is(w, wn, "DONE") && !*args) {
            block_mode_t mode = pb->mode;
            pb->mode = MODE_CMD;
            if (pb->blk_err[0])
                pbrain_reply(out, "ERROR %s: %s", block_name(mode), pb->blk_err);
            else if (mode == MODE_SWAP2)
                swap2_answer(pb, out, t0);
            else if (mode == MODE_BOARD)
                board_done(pb, out, t0);
            else
                pbrain_yx_block_done(pb, mode, out);
            fflush(out);
            return rc;
        }
        if (!is_command_word(w, wn)) {
            block_line(pb, w);
            return rc;
        }
        /* A command inside the block: DONE was lost. Drop the block. */
        pbrain_reply(out, "ERROR %s without DONE", block_name(pb->mode));
        pb->mode = MODE_CMD;
    }

    char q[64];
    if (pbrain_word_is(w, wn, "START") || pbrain_word_is(w, wn, "RECTSTART")) {
        start(pb, args, out, pbrain_word_is(w, wn, "RECTSTART"));
    } else if (pbrain_word_is(w, wn, "INFO")) {
        info(pb, args, out);
    } else if (pbrain_word_is(w, wn, "END")) {
        rc = PBRAIN_END;
    } else if (pbrain_word_is(w, wn, "YXSTOP") || pbrain_word_is(w, wn, "STOP")) {
        ;   /* a stop with no search running: nothing to stop (pbrain_run stops a search) */
    } else if (pbrain_word_is(w, wn, "ABOUT")) {
        pbrain_reply(out, "name=\"%s\", version=\"%s\", author=\"the gomoku-zero authors\", "
              "country=\"International\", www=\"AlphaZero-style engine, C11 + CUDA\"",
              PBRAIN_NAME, GZ_VERSION);
    } else if (*args && (pbrain_word_is(w, wn, "RESTART") || pbrain_word_is(w, wn, "BEGIN") ||
                         pbrain_word_is(w, wn, "BOARD") || pbrain_word_is(w, wn, "SWAP2BOARD"))) {
        pbrain_quote(q, sizeof q, args);
        pbrain_reply(out, "ERROR %.*s takes no arguments, got '%s'", (int)(wn < 12 ? wn : 12), w, q);
    } else if (pbrain_word_is(w, wn, "RESTART")) {
        if (!pbrain_need_start(pb, out, "RESTART")) {
            new_game(pb, pb->size);
            pbrain_reply(out, "OK");
        }
    } else if (pbrain_word_is(w, wn, "BEGIN")) {
        if (pbrain_need_start(pb, out, "BEGIN"))
            ;
        else if (pb->board.nmoves != 0)
            pbrain_reply(out, "ERROR BEGIN on a board with %d stones: use BOARD", pb->board.nmoves);
        else
            pbrain_answer_move(pb, out, t0, NULL);
    } else if (pbrain_word_is(w, wn, "TURN")) {
        turn(pb, args, out, t0);
    } else if (pbrain_word_is(w, wn, "BOARD") || pbrain_word_is(w, wn, "SWAP2BOARD")) {
        if (!pbrain_need_start(pb, out, pbrain_word_is(w, wn, "BOARD") ? "BOARD" : "SWAP2BOARD"))
            pbrain_block_start(pb, pbrain_word_is(w, wn, "BOARD") ? MODE_BOARD : MODE_SWAP2);
    } else if (pbrain_word_is(w, wn, "TAKEBACK")) {
        takeback(pb, args, out);
    } else if (pbrain_word_is(w, wn, "PLAY")) {
        play(pb, args, out, t0);
    } else if (pbrain_word_is(w, wn, "DONE")) {
        pbrain_reply(out, "ERROR DONE without BOARD or SWAP2BOARD");
    } else if (pbrain_yx_command(pb, w, wn, args, out, t0)) {
        ;
    } else {
        char wq[64];
        pbrain_quote(wq, sizeof wq, w);
        wq[wn < sizeof wq - 1 ? wn : sizeof wq - 1] = 0;
        pbrain_reply(out, "UNKNOWN command '%s'", wq);
    }
    fflush(out);
    return rc;
}

int pbrain_handle_line(pbrain_t *pb, const char *line, FILE *out)
{
    return handle_line_at(pb, line, out, util_now_ms());
}

/* ---- pbrain_run: a reader thread queues lines while the protocol thread
 * answers them, so END and YXSTOP reach a running search. ---- */

typedef struct queued_line {
    double t;                          /* when it was read */
    char text[PBRAIN_LINE_MAX + 2];
} queued_line_t;

typedef struct reader {
    pbrain_t *pb;
    int fd;
    int wake[2];                       /* the protocol thread writes here to end the reader */
    pthread_cond_t cv;                 /* under pb->mu: a line queued, a slot freed, eof, quit */
    queued_line_t *q;                  /* QUEUE_LINES slots, a ring */
    int head, n;
    int eof, quit;
} reader_t;

/* The first word of s is `name` and nothing but blanks follows it. */
static int line_is(const char *s, const char *name)
{
    s = pbrain_skip_ws(s);
    size_t n = strlen(name);
    if (strncasecmp(s, name, n) != 0)
        return 0;
    for (s += n; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r')
            return 0;
    return 1;
}

/* Queue one line; END stops any search now and every later one, YXSTOP
 * the running one. 0 when the reader must quit. */
static int reader_push(reader_t *r, const char *line)
{
    pbrain_t *pb = r->pb;
    pthread_mutex_lock(&pb->mu);
    while (r->n == QUEUE_LINES && !r->quit)
        pthread_cond_wait(&r->cv, &pb->mu);
    if (r->quit) {
        pthread_mutex_unlock(&pb->mu);
        return 0;
    }
    queued_line_t *ql = &r->q[(r->head + r->n) % QUEUE_LINES];
    ql->t = util_now_ms();
    snprintf(ql->text, sizeof ql->text, "%s", line);
    r->n++;
    if (line_is(line, "END")) {
        pb->ending = 1;
        __atomic_store_n(&pb->stop, 1, __ATOMIC_RELAXED);
    } else if ((line_is(line, "YXSTOP") || line_is(line, "STOP")) && pb->searching) {
        __atomic_store_n(&pb->stop, 1, __ATOMIC_RELAXED);
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&pb->mu);
    return 1;
}

/* Split the input into lines; a line longer than PBRAIN_LINE_MAX is cut
 * to PBRAIN_LINE_MAX + 1 bytes (the handler refuses it) and its rest dropped. */
static void *reader_main(void *arg)
{
    reader_t *r = arg;
    char buf[4096], line[PBRAIN_LINE_MAX + 2];
    size_t len = 0;
    for (;;) {
        struct pollfd pfd[2] = {{r->fd, POLLIN, 0}, {r->wake[0], POLLIN, 0}};
        if (poll(pfd, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pfd[1].revents)
            goto out_quit;
        ssize_t k = read(r->fd, buf, sizeof buf);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k <= 0)
            break;   /* end of input (or a dead pipe) */
        for (ssize_t i = 0; i < k; i++) {
            if (buf[i] == '\n') {
                line[len] = 0;
                len = 0;
                if (!reader_push(r, line))
                    goto out_quit;
            } else if (len < PBRAIN_LINE_MAX + 1) {
                line[len++] = buf[i] ? buf[i] : '\x01';   /* a NUL byte: refused, not a line end */
            }
        }
    }
    if (len > 0) {
        line[len] = 0;
        reader_push(r, line);   /* a last line without a newline */
    }
    pthread_mutex_lock(&r->pb->mu);
    r->eof = 1;
    /* the manager is gone (or closed our input): a running search stops
     * now and later ones at once, so the lines still queued are answered
     * with what the searches have and the engine exits, instead of
     * thinking to the end of each move's time */
    r->pb->input_closed = 1;
    __atomic_store_n(&r->pb->stop, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->pb->mu);
out_quit:
    return NULL;
}

/* The loop without a reader thread, for streams with no descriptor. */
static int run_plain(pbrain_t *pb, FILE *in, FILE *out)
{
    char line[PBRAIN_LINE_MAX + 2];
    for (;;) {
        if (!fgets(line, sizeof line, in))
            return 0;   /* end of input ends the engine cleanly */
        size_t n = strlen(line);
        if (n == PBRAIN_LINE_MAX + 1 && line[n - 1] != '\n') {
            /* too long: drop the rest; the handler refuses what it got */
            int c;
            while ((c = fgetc(in)) != EOF && c != '\n')
                ;
        }
        if (pbrain_handle_line(pb, line, out) == PBRAIN_END)
            return 0;
    }
}

int pbrain_run(pbrain_t *pb, FILE *in, FILE *out)
{
    reader_t r = {.pb = pb, .fd = fileno(in), .wake = {-1, -1}};
    if (r.fd < 0 || pipe(r.wake) != 0)
        return run_plain(pb, in, out);
    r.q = malloc(sizeof *r.q * QUEUE_LINES);
    pthread_t tid;
    if (!r.q)
        goto out_close_pipe;
    pthread_cond_init(&r.cv, NULL);
    if (pthread_create(&tid, NULL, reader_main, &r) != 0) {
        pthread_cond_destroy(&r.cv);
        free(r.q);
        r.q = NULL;
        goto out_close_pipe;
    }
    queued_line_t cur;
    for (;;) {
        pthread_mutex_lock(&pb->mu);
        while (r.n == 0 && !r.eof)
            pthread_cond_wait(&r.cv, &pb->mu);
        if (r.n == 0) {
            pthread_mutex_unlock(&pb->mu);
            break;   /* end of input ends the engine cleanly */
        }
        cur = r.q[r.head];
        r.head = (r.head + 1) % QUEUE_LINES;
        r.n--;
        pthread_cond_broadcast(&r.cv);
        pthread_mutex_unlock(&pb->mu);
        if (handle_line_at(pb, cur.text, out, cur.t) == PBRAIN_END)
            break;
    }
    pthread_mutex_lock(&pb->mu);
    r.quit = 1;
    pthread_cond_broadcast(&r.cv);
    pthread_mutex_unlock(&pb->mu);
    ssize_t woke = write(r.wake[1], "q", 1);   /* our own empty pipe: cannot fail */
    (void)woke;
    pthread_join(tid, NULL);
    pthread_cond_destroy(&r.cv);
    free(r.q);
    close(r.wake[0]);
    close(r.wake[1]);
    return 0;
out_close_pipe:
    close(r.wake[0]);
    close(r.wake[1]);
    return run_plain(pb, in, out);
}
