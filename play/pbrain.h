/* Gomocup (piskvork) protocol engine, as a library: one line from the
 * manager in, the response lines out. `gomoku pbrain` feeds it stdin and
 * tests drive it in-process.
 *
 * Commands (case-insensitive): START N, RECTSTART W,H (square only),
 * RESTART, BEGIN, TURN X,Y, BOARD ... DONE (lines X,Y,F: F 1 own stone,
 * 2 opponent's, 3 a marked stone of a continuous game: an occupied point of
 * neither side, never played), INFO KEY VALUE (timeout_turn, timeout_match,
 * time_left, max_memory, game_type, rule, evaluate, folder; unknown keys
 * are ignored; an unsupported rule or a too small max_memory is an ERROR
 * when it arrives), END, ABOUT, TAKEBACK X,Y, PLAY X,Y, SWAP2BOARD ... DONE,
 * YXSTOP / STOP (stop the running search: see pbrain_run), and the
 * Yixin-Board extensions (pbrain_yixin.c; the README lists their replies):
 * YXSHOWINFO, INFO show_detail, YXBOARD ... DONE, YXSHOWFORBID, YXBLOCK /
 * YXBLOCKUNDO ... DONE, YXBLOCKRESET, YXNBEST n, YXSEARCHDEFEND,
 * YXBALANCEONE n, YXBALANCETWO n.
 *
 * Replies: "X,Y" for a move, OK, ABOUT's key="value" line, "SWAP" or
 * moves for SWAP2BOARD, "FORBID XXYY..." for YXSHOWFORBID, "X1,Y1 X2,Y2"
 * for YXBALANCETWO, "ERROR <reason>" for a known command it cannot
 * do (bad or out-of-range arguments, occupied point, no START yet; the
 * position is then unchanged), "UNKNOWN <reason>" for anything else, and
 * "MESSAGE ..." lines (search analysis) just before a move, and while
 * searching when realtime info is on (a round every PBRAIN_INFO_MS).
 *
 * The move chooser is play/brain.h (a model searched with MCTS, or a bot),
 * swap2's book and choices play/swap2.h, and the time a move gets
 * play/movetime.h; a move's clock starts when its line arrived (BOARD: at
 * DONE). timeout_turn 0, or a budget under
 * 1 ms, plays at once (bots: the bot; models: the policy's best move). */
#ifndef GZ_PLAY_PBRAIN_H
#define GZ_PLAY_PBRAIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/board.h"
#include "nn/nn.h"
#include "play/brain.h"

#define PBRAIN_NAME "gomoku-zero"
#define PBRAIN_LINE_MAX 4096   /* longer lines are refused with ERROR */
#define PBRAIN_MAX_THREADS BRAIN_MAX_THREADS
#define PBRAIN_INFO_MS 500.0   /* realtime info (INFO show_detail): a round at most this often */

typedef struct pbrain_opts {
    const char *model;    /* "bot:greedy", "bot:random" or a .gzm path; not copied */
    int threads;          /* search threads, 1..PBRAIN_MAX_THREADS (each with its own net) */
    const char *device;   /* "auto", "cpu", "cuda", ...; not copied */
    nn_precision_t precision;   /* inference precision of the nets */
    uint64_t seed;
    search_settings_t search;   /* c_puct, fpu, VCF checks of model searches */
    int quiet;            /* no notes on stderr */
} pbrain_opts_t;

void pbrain_opts_default(pbrain_opts_t *o);

typedef struct pbrain pbrain_t;

/* Load the model or bot; NULL with a one-line message on failure. The
 * strings in o must outlive the engine. */
pbrain_t *pbrain_create(const pbrain_opts_t *o, char *err, size_t errlen);
void pbrain_free(pbrain_t *pb);

enum { PBRAIN_CONTINUE = 0, PBRAIN_END = 1 };

/* Handle one line (a trailing CR/LF is ignored). Writes the response
 * lines, each ending in "\n", to out and flushes it. Any input is
 * accepted: bad lines get ERROR or UNKNOWN. Returns PBRAIN_END after END. */
int pbrain_handle_line(pbrain_t *pb, const char *line, FILE *out);

/* Read lines from in until END or end of file, answering on out.
 * Lines longer than PBRAIN_LINE_MAX are cut and refused. When in has a
 * file descriptor, a reader thread reads it while a move is searched: END
 * stops the search at once (no move is printed) and every later one,
 * YXSTOP stops the running search (its move is printed); other lines wait
 * their turn. Without one, lines are read between commands. Returns 0. */
int pbrain_run(pbrain_t *pb, FILE *in, FILE *out);

/* For tests and reports. */
const board_t *pbrain_board(const pbrain_t *pb);  /* NULL before START */
int pbrain_move_budget_ms(const pbrain_t *pb);    /* search time the next move gets */
int pbrain_margin_ms(const pbrain_t *pb);         /* safety margin in that figure */
size_t pbrain_tree_budget(const pbrain_t *pb);    /* bytes for tree + cache */

/* A move read at t0 (util_now_ms), handled from t_begin, its search called
 * from t_begin to t_searched (threads_ms of it until the search's threads
 * had ended, then watch_ms waiting for its watcher; both 0 for a bot),
 * answered at t_end, with a search budget of budget_ms inside the move's
 * time of limit_ms (the budget plus the margin): 1 with a one-line note in
 * buf when the answer came after limit_ms (where the time went: before the
 * search, its threads, the watcher, the rest of the call, after it), else
 * 0. */
int pbrain_overrun_note(char *buf, size_t len, int ply, double budget_ms, double limit_ms,
                        double t0, double t_begin, double t_searched, double threads_ms,
                        double watch_ms, double t_end);

#endif
