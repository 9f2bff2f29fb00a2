/* gomoku play: a game in the terminal between humans, bots, models or
 * external engines. Works with stdin from a pipe (tests script it). */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/player.h"
#include "engine/board.h"

static const cmd_help_t help = {
    "play",
    "gomoku play [--black P] [--white P] [--model M] [options]",
    "Plays one game in the terminal. A player P is human, bot:random, bot:greedy,\n"
    "pbrain:COMMAND or a model file (.gzm). --model M is shorthand for a person\n"
    "against that model (the person plays black unless --human-color white).\n"
    "A person types a move as x,y (Gomocup, 0-based from the top left) or h8\n"
    "(column letter, row number from the bottom), 'undo' (back to their\n"
    "previous turn) or 'quit'. Illegal and forbidden moves are refused with the\n"
    "reason. The last move is shown in brackets: [X].",
};

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
    const char *black = NULL, *white = NULL, *model = NULL, *human_color = "black";
    const char *rule_s = "freestyle", *device = "auto";
    int size = BOARD_DEFAULT, visits = 800, time_ms = 0, threads = 1;
    uint64_t seed = 1;
    bool quiet = false;
    arg_spec_t specs[] = {
        {"black", ARG_STR, &black, 0, 0, "P  black player (default human)"},
        {"white", ARG_STR, &white, 0, 0, "P  white player (default bot:greedy)"},
        {"model", ARG_STR, &model, 0, 0, "M  play a person against model M"},
        {"human-color", ARG_STR, &human_color, 0, 0, "C  with --model: black or white (default black)"},
        {"rule", ARG_STR, &rule_s, 0, 0, "R  freestyle, standard or renju (default freestyle)"},
        {"size", ARG_INT, &size, BOARD_MIN, BOARD_MAX, "N  board size 5..20 (default 15)"},
        {"seed", ARG_U64, &seed, 0, 0, "S  seed of bots and searches (default 1)"},
        {"visits", ARG_INT, &visits, 0, 10000000, "V  model players: playouts per move (default 800; 0: use --time)"},
        {"time", ARG_INT, &time_ms, 0, 86400000, "MS  model players: time per move when --visits 0"},
        {"threads", ARG_INT, &threads, 1, 16, "T  model players: search threads on one tree, each with its own net, 1..16 (default 1)"},
        {"device", ARG_STR, &device, 0, 0, "D  model players: auto, cpu, cuda (default auto)"},
        {"quiet", ARG_FLAG, &quiet, 0, 0, "no notes on stderr"},
    };
    int nspecs = (int)(sizeof specs / sizeof specs[0]);
    int rc = args_parse(&help, specs, nspecs, argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return rc == ARGS_HELP ? 0 : 2;
    rule_t rule;
    if (!rule_parse(rule_s, &rule))
        return args_fail(&help, "unknown rule '%s' (freestyle, standard, renju)", rule_s);
    if (strcmp(human_color, "black") != 0 && strcmp(human_color, "white") != 0)
        return args_fail(&help, "--human-color must be black or white, got '%s'", human_color);
    if (model) {
        if (black || white)
            return args_fail(&help, "--model cannot be combined with --black/--white");
        bool hb = strcmp(human_color, "black") == 0;
        black = hb ? "human" : model;
        white = hb ? model : "human";
    }
    if (!black)
        black = "human";
    if (!white)
        white = "bot:greedy";
    if (visits == 0 && time_ms == 0)
        return args_fail(&help, "--visits 0 needs --time MS");

    player_opts_t o;
    player_opts_default(&o);
    o.visits = visits;
    o.time_ms = time_ms;
    o.threads = threads;
    o.device = device;
    o.quiet = quiet;

    char err[256];
    player_t *pl[3] = {NULL, NULL, NULL};
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

    board_t b;
    board_init(&b, size, rule);
    player_new_game(pl[STONE_BLACK], &b);
    player_new_game(pl[STONE_WHITE], &b);
    printf("%s %dx%d: black (X) %s, white (O) %s\n", rule_name(rule), size, size,
           pl[STONE_BLACK]->name, pl[STONE_WHITE]->name);

    int status = 0;
    const char *why = NULL;
    while (!board_over(&b)) {
        if (show)
            print_board(&b);
        int c = b.to_move, m;
        player_t *p = pl[c];
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
    player_free(pl[STONE_BLACK]);
    player_free(pl[STONE_WHITE]);
    return status;
}
