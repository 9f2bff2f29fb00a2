/* The Yixin-Board extensions of the Gomocup protocol (see pbrain.h and the
 * README's pbrain section for the commands and their replies). The wire
 * formats follow what Yixin-Board reads: "MESSAGE REALTIME BEST X,Y" (and
 * LOSE, REFRESH), "MESSAGE INFO MAX_THREAD_NUM N", "FORBID XXYY....". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/vct.h"
#include "mcts/mcts.h"
#include "play/balance.h"
#include "play/movetime.h"
#include "play/pbrain_impl.h"
#include "util/util.h"

#define DEFEND_TT_BYTES ((size_t)4 << 20)
#define DEFEND_MAX_MS 3000.0       /* YXSEARCHDEFEND's threat solve cannot be stopped: capped */
#define DEFEND_LIST 20             /* defences ranked after its search */
#define BALANCE_RANGE 100          /* YXBALANCE n: -100..100, hundredths of a value */

static const char *side_name(int stone)
{
    return stone == STONE_BLACK ? "black" : "white";
}

/* ---- realtime lines while searching ---- */

static void realtime_progress(void *user, const mcts_result_t *r)
{
    pbrain_t *pb = user;
    FILE *out = pb->rt_out;
    char mv[16];
    if (r->best_move != MOVE_NONE && r->best_move != pb->rt_best) {
        pbrain_format_xy(mv, sizeof mv, r->best_move, pb->size);
        pbrain_reply(out, "MESSAGE REALTIME BEST %s", mv);
        pb->rt_best = r->best_move;
    }
    mcts_child_info_t ch[BOARD_CELLS];
    int n = brain_root_children(pb->br, ch, BOARD_CELLS), said = 0;
    for (int i = 0; i < n && said < PBRAIN_LOSE_LINES; i++) {
        if (ch[i].proven >= 0 || pb->rt_lost[ch[i].move])
            continue;
        pb->rt_lost[ch[i].move] = 1;
        pbrain_format_xy(mv, sizeof mv, ch[i].move, pb->size);
        pbrain_reply(out, "MESSAGE REALTIME LOSE %s", mv);
        said++;
    }
    char pv[MCTS_PV_MAX * 8];
    pbrain_format_line(pv, sizeof pv, r->pv, r->npv, pb->size);
    pbrain_reply(out, "MESSAGE realtime depth %d visits %u nodes %llu eval %+.3f winrate %.1f%% "
                 "(%s to move) speed %.0f nodes/s time %.0f ms bestline %s", r->npv,
                 r->root_visits, (unsigned long long)r->playouts, r->value, 100.0 * r->winrate,
                 side_name(pb->board.to_move), r->playouts_per_s, r->seconds * 1e3, pv);
    fflush(out);
}

void pbrain_yx_watch_begin(pbrain_t *pb, FILE *out)
{
    if (!pb->realtime || brain_is_bot(pb->br))
        return;
    pb->rt_out = out;
    pb->rt_best = MOVE_NONE;
    memset(pb->rt_lost, 0, sizeof pb->rt_lost);
    pbrain_reply(out, "MESSAGE REALTIME REFRESH");
    fflush(out);
    brain_set_progress(pb->br, PBRAIN_INFO_MS, realtime_progress, pb);
}

void pbrain_yx_watch_end(pbrain_t *pb)
{
    if (!pb->rt_out)
        return;
    brain_set_progress(pb->br, PBRAIN_INFO_MS, NULL, NULL);
    pb->rt_out = NULL;
}

int pbrain_yx_info(pbrain_t *pb, const char *key, size_t kn, const char *v, FILE *out)
{
    if (!pbrain_word_is(key, kn, "show_detail"))
        return 0;
    long long val = 0;
    const char *why = "expected 0..3";
    int bad = pbrain_parse_int(v, 1000000000, &val, &why);
    if (bad || val < 0 || val > 3) {
        char q[64];
        pbrain_quote(q, sizeof q, v);
        pbrain_reply(out, "ERROR INFO show_detail '%s': %s (0 off; 1, 2 or 3 on)", q,
                     bad ? why : "expected 0..3");
        return 1;
    }
    pb->realtime = val != 0;
    return 1;
}

/* ---- YXBOARD, YXBLOCK, YXBLOCKUNDO ---- */

void pbrain_yx_block_done(pbrain_t *pb, block_mode_t mode, FILE *out)
{
    if (mode == MODE_YXBLOCK || mode == MODE_YXBLOCKUNDO) {
        for (int i = 0; i < pb->blk_n; i++)
            pb->yx_block[pb->blk_move[i]] = mode == MODE_YXBLOCK;
        return;
    }
    char err[200];
    if (pbrain_block_position(pb, err, sizeof err)) {   /* nothing changed */
        pbrain_reply(out, "ERROR YXBOARD: %s", err);
        return;
    }
    pb->me = pb->board.to_move;
}

/* ---- YXSHOWFORBID ---- */

static void show_forbid(pbrain_t *pb, FILE *out)
{
    /* black's forbidden points whoever is to move; none outside renju */
    board_t b = pb->board;
    if (b.to_move != STONE_BLACK)
        board_pass(&b);
    int fp[BOARD_CELLS], n = b.rule == RULE_RENJU && !board_over(&b) ?
                                 board_forbidden_points(&b, fp) : 0;
    char line[8 + 4 * BOARD_CELLS + 2];
    size_t k = (size_t)snprintf(line, sizeof line, "FORBID ");
    for (int i = 0; i < n; i++) {
        if (pb->blocked[fp[i]])
            continue;
        k += (size_t)snprintf(line + k, sizeof line - k, "%02d%02d", fp[i] % pb->size,
                              fp[i] / pb->size);
    }
    snprintf(line + k, sizeof line - k, ".");
    /* longer than a reply line may be: printed as it is (digits only) */
    fprintf(out, "%s\n", line);
}

/* ---- YXNBEST, YXSEARCHDEFEND ---- */

/* The n best root moves after the search, one MESSAGE line each. */
static void list_best(pbrain_t *pb, FILE *out, const brain_move_t *m, void *user)
{
    int want = *(const int *)user;
    mcts_child_info_t ch[BOARD_CELLS];
    int n = brain_root_children(pb->br, ch, BOARD_CELLS);
    if (n == 0) {
        pbrain_reply(out, "MESSAGE nbest: %s", brain_is_bot(pb->br) ?
                     "a bot does not rank moves" : "the position had no search to rank by");
        return;
    }
    mcts_rank_children(ch, n);
    /* called after the move was played: the side to move at the root is the other one now */
    pbrain_reply(out, "MESSAGE nbest %d of %d root moves: win rates are %s's (to move), "
                 "%u visits", want < n ? want : n, n,
                 side_name(STONE_BLACK + STONE_WHITE - pb->board.to_move),
                 m->searched ? m->r.root_visits : 0);
    for (int i = 0; i < n && i < want; i++) {
        int pv[MCTS_PV_MAX];
        char line[MCTS_PV_MAX * 8], mv[16];
        int npv = brain_child_pv(pb->br, ch[i].move, pv, 16);
        pbrain_format_line(line, sizeof line, pv, npv, pb->size);
        pbrain_format_xy(mv, sizeof mv, ch[i].move, pb->size);
        pbrain_reply(out, "MESSAGE (%d) %s winrate %.1f%% visits %u prior %.1f%% pv %s%s", i + 1,
                     mv, ch[i].visits || ch[i].proven ? 50.0 * (ch[i].q + 1.0) : 50.0,
                     ch[i].visits,
                     100.0 * ch[i].prior, line,
                     ch[i].proven > 0 ? " (proven win)" : ch[i].proven < 0 ? " (proven loss)" : "");
    }
    if (n < want)
        pbrain_reply(out, "MESSAGE nbest: only %d moves were root moves (threat pruning, a "
                     "threat's defences or a forced line narrowed the root)", n);
}

/* A whole number in lo..hi from args: 0, or -1 after ERROR. */
static int parse_arg(const char *cmd, const char *args, long long lo, long long hi,
                     const char *what, long long *out_val, FILE *out)
{
    const char *why = "expected a number";
    if (!*pbrain_skip_ws(args)) {
        pbrain_reply(out, "ERROR %s needs %s (%lld..%lld)", cmd, what, lo, hi);
        return -1;
    }
    if (pbrain_parse_int(args, 1000000000, out_val, &why) || *out_val < lo || *out_val > hi) {
        char q[64];
        pbrain_quote(q, sizeof q, args);
        pbrain_reply(out, "ERROR %s '%s': expected %s, %lld..%lld", cmd, q, what, lo, hi);
        return -1;
    }
    return 0;
}

static void nbest(pbrain_t *pb, const char *args, FILE *out, double t0)
{
    char why[200];
    if (pbrain_cannot_play(pb, why, sizeof why)) {
        pbrain_reply(out, "ERROR %s", why);
        return;
    }
    uint8_t avoid[BOARD_CELLS];
    int legal = pbrain_avoid_set(pb, NULL, avoid);
    long long n;
    if (parse_arg("YXNBEST", args, 1, legal, "a count of moves (at most the legal moves)", &n,
                  out))
        return;
    int want = (int)n;
    pbrain_move_request_t rq = {.report = list_best, .user = &want};
    pbrain_answer_move(pb, out, t0, &rq);
}

static void search_defend(pbrain_t *pb, FILE *out, double t0)
{
    char why[200], line[VCT_LINE_MAX * 8];
    if (pbrain_cannot_play(pb, why, sizeof why)) {
        pbrain_reply(out, "ERROR %s", why);
        return;
    }
    if (!pb->vct && !(pb->vct = vct_create(DEFEND_TT_BYTES, why, sizeof why))) {
        pbrain_reply(out, "ERROR YXSEARCHDEFEND: %s", why);
        return;
    }
    double budget = movetime_budget_ms(&pb->mt, &pb->board);
    int nodes = pb->opts.search.vct_root_nodes > 0 ? pb->opts.search.vct_root_nodes
                                                    : MCTS_VCT_ROOT_NODES;
    vct_limits_t lim = {.nodes = (uint64_t)nodes,
                        .time_ms = fmin(0.3 * budget, DEFEND_MAX_MS) + 1.0};
    int def[BOARD_CELLS];
    vct_result_t threat;
    int n = vct_defend(pb->vct, &pb->board, &lim, def, &threat);
    const char *opp = side_name(STONE_BLACK + STONE_WHITE - pb->board.to_move);
    uint8_t avoid[BOARD_CELLS];
    int want = DEFEND_LIST;
    pbrain_move_request_t rq = {.report = list_best, .user = &want};
    if (n < 0) {
        pbrain_reply(out, "MESSAGE defend: %s has no VCT found (%d nodes a solve): no move loses "
                     "to one", opp, nodes);
    } else {
        pbrain_format_line(line, sizeof line, threat.line, threat.nline, pb->size);
        if (n == 0) {
            pbrain_reply(out, "MESSAGE defend: every move loses to %s's VCT %s", opp, line);
        } else {
            char list[400];
            pbrain_format_line(list, sizeof list, def, n, pb->size);
            pbrain_reply(out, "MESSAGE defend: %d moves stop %s's VCT %s: %s", n, opp, line,
                         list);
            /* the root is searched among the defences only */
            for (int m = 0; m < BOARD_CELLS; m++)
                avoid[m] = 1;
            for (int i = 0; i < n; i++)
                avoid[def[i]] = 0;
            rq.avoid = avoid;
            if (pb->realtime)   /* Yixin-Board marks the losing points */
                for (int m = 0; m < board_npoints(&pb->board); m++) {
                    if (avoid[m] && !pb->blocked[m] &&
                        board_check_move(&pb->board, m) == MOVE_OK) {
                        char mv[16];
                        pbrain_format_xy(mv, sizeof mv, m, pb->size);
                        pbrain_reply(out, "MESSAGE REALTIME LOSE %s", mv);
                    }
                }
        }
    }
    rq.used_ms = util_now_ms() - t0;
    pbrain_answer_move(pb, out, t0, &rq);
}

/* ---- YXBALANCEONE, YXBALANCETWO ---- */

typedef struct balance_ctx {
    pbrain_t *pb;
    FILE *out;
    int to_move;        /* side to move after the moves */
} balance_ctx_t;

static void balance_note(void *user, const int *moves, int nmoves, double value)
{
    balance_ctx_t *c = user;
    char line[40];
    pbrain_format_line(line, sizeof line, moves, nmoves, c->pb->size);
    pbrain_reply(c->out, "MESSAGE balance %s: %s's value %+.3f", line, side_name(c->to_move),
                 value);
    fflush(c->out);
}

static void balance(pbrain_t *pb, const char *cmd, int nmoves, const char *args, FILE *out,
                    double t0)
{
    char err[200];
    if (pbrain_cannot_play(pb, err, sizeof err)) {
        pbrain_reply(out, "ERROR %s", err);
        return;
    }
    long long bias;
    if (parse_arg(cmd, args, -BALANCE_RANGE, BALANCE_RANGE, "a value bias in hundredths", &bias,
                  out))
        return;
    if (brain_is_bot(pb->br)) {
        pbrain_reply(out, "ERROR %s is not supported with a bot: it has no values to balance by",
                     cmd);
        return;
    }
    if (nmoves == 2 && pb->board.nmoves + 2 > board_npoints(&pb->board)) {
        pbrain_reply(out, "ERROR %s: fewer than two empty points", cmd);
        return;
    }
    /* n > 0 favours the side that is not to move after the stones (Rapfi's bias) */
    double target = -(double)bias / BALANCE_RANGE;
    double budget = movetime_budget_ms(&pb->mt, &pb->board);
    uint8_t avoid[BOARD_CELLS];
    pbrain_avoid_set(pb, NULL, avoid);
    balance_ctx_t ctx = {.pb = pb, .out = out,
                         .to_move = nmoves == 1 ? STONE_BLACK + STONE_WHITE - pb->board.to_move
                                                : pb->board.to_move};
    balance_result_t r;
    pbrain_search_begin(pb);
    int rc = balance_search(pb->br, &pb->board, nmoves, target, budget, &pb->stop, avoid,
                            balance_note, &ctx, &r, err, sizeof err);
    pbrain_search_end(pb);
    if (pbrain_ending(pb))
        return;
    if (rc) {
        pbrain_reply(out, "ERROR %s: %s", cmd, err);
        return;
    }
    char moves[40];
    pbrain_format_line(moves, sizeof moves, r.moves, r.nmoves, pb->size);
    pbrain_reply(out, "MESSAGE balance: %s leaves %s a value of %+.3f (target %+.2f; %s)", moves,
                 side_name(ctx.to_move), r.value, target,
                 r.checked ? "searched" : "an estimate: the search was stopped");
    int mover = pb->board.to_move;
    for (int i = 0; i < r.nmoves; i++)
        board_play(&pb->board, r.moves[i]);
    pb->me = r.nmoves == 1 ? mover : 0;
    pbrain_reply(out, "%s", moves);
    fflush(out);
    movetime_record(&pb->mt, t0, budget);
    brain_set_position(pb->br, &pb->board);
}

/* ---- dispatch ---- */

int pbrain_yx_command(pbrain_t *pb, const char *w, size_t wn, const char *args, FILE *out,
                      double t0)
{
    static const char *const no_args[] = {"YXSHOWINFO", "YXBOARD", "YXBLOCK", "YXBLOCKUNDO",
                                          "YXBLOCKRESET", "YXSHOWFORBID", "YXSEARCHDEFEND"};
    static const char *const with_args[] = {"YXNBEST", "YXBALANCEONE", "YXBALANCETWO"};
    const char *cmd = NULL;
    for (size_t i = 0; i < sizeof no_args / sizeof no_args[0] && !cmd; i++)
        if (pbrain_word_is(w, wn, no_args[i]))
            cmd = no_args[i];
    if (cmd && *args) {
        char q[64];
        pbrain_quote(q, sizeof q, args);
        pbrain_reply(out, "ERROR %s takes no arguments, got '%s'", cmd, q);
        return 1;
    }
    for (size_t i = 0; i < sizeof with_args / sizeof with_args[0] && !cmd; i++)
        if (pbrain_word_is(w, wn, with_args[i]))
            cmd = with_args[i];
    if (!cmd)
        return 0;
    if (strcmp(cmd, "YXSHOWINFO") == 0) {
        pb->yixin = 1;
        pb->realtime = 1;
        pbrain_reply(out, "MESSAGE %s: Yixin-Board mode (realtime info on, INFO rule 2 is renju)",
                     PBRAIN_NAME);
        pbrain_reply(out, "MESSAGE INFO MAX_THREAD_NUM %d", pb->opts.threads);
        return 1;
    }
    if (pbrain_need_start(pb, out, cmd))
        return 1;
    if (strcmp(cmd, "YXBOARD") == 0)
        pbrain_block_start(pb, MODE_YXBOARD);
    else if (strcmp(cmd, "YXBLOCK") == 0)
        pbrain_block_start(pb, MODE_YXBLOCK);
    else if (strcmp(cmd, "YXBLOCKUNDO") == 0)
        pbrain_block_start(pb, MODE_YXBLOCKUNDO);
    else if (strcmp(cmd, "YXBLOCKRESET") == 0)
        memset(pb->yx_block, 0, sizeof pb->yx_block);
    else if (strcmp(cmd, "YXSHOWFORBID") == 0)
        show_forbid(pb, out);
    else if (strcmp(cmd, "YXSEARCHDEFEND") == 0)
        search_defend(pb, out, t0);
    else if (strcmp(cmd, "YXNBEST") == 0)
        nbest(pb, args, out, t0);
    else
        balance(pb, cmd, strcmp(cmd, "YXBALANCEONE") == 0 ? 1 : 2, args, out, t0);
    return 1;
}
