/* gomoku play: a game in the terminal between humans, bots, models or
 * external engines. Works with stdin from a pipe (tests script it). */
#include <stdio.h>
#include <string.h>

#include "cli/cmds.h"
#include "play/player.h"
#include "cli/options.h"
#include "selfplay/args.h"
#include "engine/board.h"
#include "engine/vcf.h"

static const cmd_help_t help = {
    "play", BY_PLAY,
    "gomoku play [--black P] [--white P] [--model M] [options]",
    "Plays one game in the terminal. A player P is human, bot:random, bot:greedy,\n"
    "pbrain:COMMAND or a model file (.gzm). --model M is shorthand for a person\n"
    "against that model (the person plays black unless --human-color white).\n"
    "A person types a move as x,y (Gomocup, 0-based from the top left) or h8\n"
    "(column letter, row number from the bottom), 'undo' (back to their\n"
    "previous turn) or 'quit'. Illegal and forbidden moves are refused with the\n"
    "reason. The last move is shown in brackets: [X].\n"
    "After each move of a model player its view is shown: win rate, visits,\n"
    "best line, and its winning line of fours (VCF) when it has one. --hint\n"
    "shows the same for a person's side before each of their moves (from the\n"
    "model in the game, else bot:vcf's choice).",
};

#define VIEW_VCF_NODES 20000   /* a few ms; deep enough for the lines people miss */

/* " h8 i9 j10" for up to n moves of a line. */
static void print_line(const board_t *b, const int *mv, int n)
{
    for (int i = 0; i < n; i++) {
        char al[16];
        move_format_alpha(mv[i], b->size, al, sizeof al);
        printf(" %s", al);
    }
}

/* The side to move's winning line of fours on b, if the solver finds one. */
static void print_vcf(const char *who, const board_t *b, vcf_t *vcf)
{
    if (!vcf || board_over(b))
        return;
    vcf_limits_t lim = {.nodes = VIEW_VCF_NODES};
    vcf_result_t r;
    if (vcf_solve(vcf, b, &lim, &r) != VCF_WIN)
        return;
    printf("  %s VCF (%d four%s):", who, r.nfours, r.nfours == 1 ? "" : "s");
    print_line(b, r.line, r.nline);
    printf("\n");
}

/* A searching player's view of the move it just chose on b (before it). */
static void print_view(const char *who, const board_t *b, const player_t *p)
{
    player_analysis_t a;
    if (!player_analysis(p, &a))
        return;
    printf("  %s: win rate %.1f%%%s, %u visit%s, best line:", who, 100.0 * a.winrate,
           a.proven > 0 ? " (proven win)" : a.proven < 0 ? " (proven loss)" : "", a.visits,
           a.visits == 1 ? "" : "s");
    print_line(b, a.pv, a.npv);
    printf("\n");
}

static void print_board(const board_t *b)
{
    int n = b->size;
    printf("\n     ");
    for (int x = 0; x < n; x++)
        printf(" %c ", 'a' + x);
    printf("\n     ");
    for (int x = 0; x < n; x++)
        printf("%2d ", x);
    printf("  <- x\n");
    for (int y = 0; y < n; y++) {
        printf(" %3d ", n - y);
        for (int x = 0; x < n; x++) {
            int m = y * n + x, c = b->cells[m];
            char ch = c == STONE_BLACK ? 'X' : c == STONE_WHITE ? 'O' : '.';
            if (m == b->last)
                printf("[%c]", ch);
            else
                printf(" %c ", ch);
        }
        printf(" %-3d y=%d\n", n - y, y);
    }
    printf("     ");
    for (int x = 0; x < n; x++)
        printf(" %c ", 'a' + x);
    printf("\n");
}

static const char *color_name(int c)
{
    return c == STONE_BLACK ? "black" : "white";
}

/* Take back to the previous turn of a human: at least one ply, then on
 * until a human is to move. Returns the plies taken back. */
static int undo_to_human(board_t *b, player_t *pl[3])
{
    int n = 0;
    while (b->nmoves > 0) {
        board_undo(b);
        n++;
        if (pl[b->to_move]->is_human && (n >= 2 || pl[STONE_BLACK]->is_human ==
                                                       pl[STONE_WHITE]->is_human))
            break;
    }
    return n;
}

int cmd_play(int argc, char **argv)
{
    player_opts_t o;
    player_opts_default(&o);
    const char *black, *white, *model = NULL, *human_color;
    rule_t rule;
    int size;
    uint64_t seed;
    bool quiet, hint;
    arg_spec_t specs[ARGS_MAX] = {
        ARG(S_BLACK, &black), ARG(S_WHITE, &white),
        ARG(S_PLAY_MODEL, &model), ARG(S_HUMAN_COLOR, &human_color),
        ARG(S_RULE, &rule), ARG(S_SIZE, &size), ARG(S_SEED, &seed),
        ARG(S_HINT, &hint), ARG(S_PLAY_QUIET, &quiet),
    };
    int ns = args_count(specs, ARGS_MAX);
    ns += options_player(specs + ns, &o, S_PLAY_VISITS);
    int rc = args_parse(&help, specs, ns, argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (model) {
        if (args_given(specs, ns, S_BLACK) || args_given(specs, ns, S_WHITE))
            return args_fail(&help, "--model cannot be combined with --black/--white");
        bool hb = strcmp(human_color, "black") == 0;
        black = hb ? "human" : model;
        white = hb ? model : "human";
    }
    if (o.visits == 0 && o.time_ms == 0)
        return args_fail(&help, "--visits 0 needs --time MS");
    o.quiet = quiet;

    char err[256];
    player_t *pl[3] = {NULL, NULL, NULL};
    int status = 0;
    o.seed = seed;
    pl[STONE_BLACK] = player_create(black, rule, size, &o, err, sizeof err);
    if (!pl[STONE_BLACK]) {
        if (strncmp(black, "bot:", 4) == 0)
            return args_fail(&help, "--black: %s", err);
        fprintf(stderr, "gomoku play: black: %s\n", err);
        return 1;
    }
    o.seed = seed + 1;   /* two bots of one kind must not play the same stream */
    pl[STONE_WHITE] = player_create(white, rule, size, &o, err, sizeof err);
    if (!pl[STONE_WHITE]) {
        player_free(pl[STONE_BLACK]);
        if (strncmp(white, "bot:", 4) == 0)
            return args_fail(&help, "--white: %s", err);
        fprintf(stderr, "gomoku play: white: %s\n", err);
        return 1;
    }
    bool show = pl[STONE_BLACK]->is_human || pl[STONE_WHITE]->is_human;
    /* Hints come from the model in the game (its own search, not the
     * opponent's tree), else from bot:vcf. */
    player_t *hinter = NULL;
    vcf_t *vcf = NULL;
    if (show) {
        vcf = vcf_create((size_t)4 << 20, err, sizeof err);
        if (!vcf) {
            fprintf(stderr, "gomoku play: %s\n", err);
            status = 1;
            goto out_free_players;
        }
    }
    if (hint && show) {
        const char *spec = "bot:vcf";
        for (int c = STONE_BLACK; c <= STONE_WHITE; c++) {
            const char *ps = c == STONE_BLACK ? black : white;
            if (!pl[c]->is_human && strncmp(ps, "bot:", 4) != 0 && strncmp(ps, "pbrain:", 7) != 0)
                spec = ps;
        }
        o.seed = seed + 2;
        o.quiet = true;
        hinter = player_create(spec, rule, size, &o, err, sizeof err);
        if (!hinter) {
            fprintf(stderr, "gomoku play: hint player %s: %s\n", spec, err);
            status = 1;
            goto out_free_players;
        }
    }

    board_t b;
    board_init(&b, size, rule);
    player_new_game(pl[STONE_BLACK], &b);
    player_new_game(pl[STONE_WHITE], &b);
    printf("%s %dx%d: black (X) %s, white (O) %s\n", rule_name(rule), size, size,
           pl[STONE_BLACK]->name, pl[STONE_WHITE]->name);

    const char *why = NULL;
    while (!board_over(&b)) {
        if (show)
            print_board(&b);
        int c = b.to_move, m;
        player_t *p = pl[c];
        if (hinter && p->is_human) {
            int hm;
            player_new_game(hinter, &b);
            if (player_genmove(hinter, &b, &hm, err, sizeof err) == 0) {
                char al[16];
                move_format_alpha(hm, size, al, sizeof al);
                printf("  hint for %s: %s\n", color_name(c), al);
                print_view("hint", &b, hinter);
            }
            print_vcf("your", &b, vcf);
        }
        board_t before = b;
        if (player_genmove(p, &b, &m, err, sizeof err) != 0) {
            if (p->is_human && strcmp(err, "undo") == 0) {
                if (undo_to_human(&b, pl) == 0) {
                    printf("nothing to undo\n");
                } else {
                    printf("undone: back to move %d\n", b.nmoves + 1);
                    player_new_game(pl[STONE_BLACK], &b);
                    player_new_game(pl[STONE_WHITE], &b);
                }
                continue;
            }
            if (p->is_human && strcmp(err, "quit") == 0) {
                why = "quit";
                break;
            }
            if (strstr(err, "no legal move")) {
                why = "no legal move: draw";
                break;
            }
            fprintf(stderr, "gomoku play: %s (%s): %s\n", color_name(c), p->name, err);
            status = 1;
            break;
        }
        move_status_t st = board_check_move(&b, m);
        if (st != MOVE_OK) {
            char buf[16];
            move_format_xy(m, size, buf, sizeof buf);
            fprintf(stderr, "gomoku play: %s (%s) played an illegal move %s: %s\n",
                    color_name(c), p->name, buf, move_status_str(st));
            status = 1;
            break;
        }
        board_play(&b, m);
        char xy[16], al[16];
        move_format_xy(m, size, xy, sizeof xy);
        move_format_alpha(m, size, al, sizeof al);
        printf("move %d: %s %s (%s)\n", b.nmoves, color_name(c), al, xy);
        if (show && !p->is_human) {
            print_view("engine", &before, p);
            print_vcf("its", &before, vcf);
        }
        player_notify(pl[STONE_BLACK], &b, m);
        player_notify(pl[STONE_WHITE], &b, m);
    }
    print_board(&b);
    if (status == 0) {
        if (b.result == RESULT_BLACK || b.result == RESULT_WHITE)
            printf("result: %s wins (%s) after %d moves\n", result_str((result_t)b.result),
                   pl[b.result]->name, b.nmoves);
        else if (b.result == RESULT_DRAW)
            printf("result: draw (board full) after %d moves\n", b.nmoves);
        else
            printf("result: none (%s) after %d moves\n", why ? why : "stopped", b.nmoves);
    }
out_free_players:
    player_free(hinter);
    vcf_free(vcf);
    player_free(pl[STONE_BLACK]);
    player_free(pl[STONE_WHITE]);
    return status;
}
