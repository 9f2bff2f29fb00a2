/* gomoku play: a game in the terminal between humans, bots, models or
 * external engines. Works with stdin from a pipe (tests script it). */
#include <stdio.h>
#include <string.h>

#include "cli/cmds.h"
#include "play/player.h"
#include "cli/options.h"
#include "selfplay/args.h"
#include "engine/board.h"
#include "engine/gamefile.h"
#include "engine/vcf.h"

static const cmd_help_t help = {
    "play", BY_PLAY,
    "gomoku play [--black P] [--white P] [--model M] [--load FILE.psq] [options]",
    "Plays in the terminal. A player P is human, bot:random, bot:greedy, bot:vcf,\n"
    "bot:vct, pbrain:COMMAND or a model file (.gzm). --model M is shorthand for a\n"
    "person against that model (the person plays black unless --human-color white).\n"
    "A person types a move as x,y (Gomocup, 0-based from the top left) or h8\n"
    "(column letter, row number from the bottom), or a command: undo (back to\n"
    "their previous move), hint (the engine's move for them, not played), save\n"
    "FILE (the game so far as Piskvork .psq), help, quit. Illegal and forbidden\n"
    "moves are refused with the reason. The board is shown once a turn: [X] the\n"
    "last move, (O) the one before, # black's forbidden points (renju).\n"
    "After each move of a model player its view is shown: its win rate, visits,\n"
    "best line, and its winning line of fours (VCF) when it has one. --hint\n"
    "shows the same for a person's side before each of their moves (from the\n"
    "model in the game, else bot:vcf's choice).\n"
    "--load FILE.psq starts from a saved position (its board size, unless\n"
    "--size is given: then the two must agree). When a game with a person ends:\n"
    "undo, new (same players and start), save FILE or quit; end of input quits.",
};

#define VIEW_VCF_NODES 20000   /* a few ms; deep enough for the lines people miss */
#define FORBIDDEN_MARK '#'     /* on the board: a point black may not play (renju) */

/* " h8 i9 j10" for up to n moves of a line. */
static void print_line(const board_t *b, const int *mv, int n)
{
    for (int i = 0; i < n; i++) {
        char al[16];
        move_format_alpha(mv[i], b->size, al, sizeof al);
        printf(" %s", al);
    }
}

/* The side to move's winning line of fours on b, if the solver finds one
 * (not a five on the spot: that is the move itself, no line). */
static void print_vcf(const char *who, const board_t *b, vcf_t *vcf)
{
    if (!vcf || board_over(b))
        return;
    vcf_limits_t lim = {.nodes = VIEW_VCF_NODES};
    vcf_result_t r;
    if (vcf_solve(vcf, b, &lim, &r) != VCF_WIN || r.nfours == 0)
        return;
    printf("  %s VCF (%d four%s):", who, r.nfours, r.nfours == 1 ? "" : "s");
    print_line(b, r.line, r.nline);
    printf("\n");
}

/* A searching player's view of the move it just chose on b (before it);
 * who names the side the win rate is for: "engine (white)". */
static void print_view(const char *who, const board_t *b, const player_t *p)
{
    player_analysis_t a;
    if (!player_analysis(p, &a))
        return;
    printf("  %s %.1f%% win%s, %u visit%s, best line:", who, 100.0 * a.winrate,
           a.proven > 0 ? " (proven win)" : a.proven < 0 ? " (proven loss)" : "", a.visits,
           a.visits == 1 ? "" : "s");
    print_line(b, a.pv, a.npv);
    printf("\n");
}

/* The board with coordinates, the last two moves marked, black's forbidden
 * points when black is to move under renju, and a legend line. */
static void print_board(const board_t *b)
{
    int n = b->size;
    int prev = b->nmoves >= 2 ? b->moves[b->nmoves - 2] : MOVE_NONE;
    bool forbidden[BOARD_CELLS] = {false};
    bool renju = b->rule == RULE_RENJU;
    if (renju && b->to_move == STONE_BLACK && !board_over(b)) {
        int pts[BOARD_CELLS];
        int np = board_forbidden_points(b, pts);
        for (int i = 0; i < np; i++)
            forbidden[pts[i]] = true;
    }
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
            char ch = c == STONE_BLACK ? 'X' : c == STONE_WHITE ? 'O'
                      : forbidden[m] ? FORBIDDEN_MARK : '.';
            printf(m == b->last ? "[%c]" : m == prev ? "(%c)" : " %c ", ch);
        }
        printf(" %-3d y=%d\n", n - y, y);
    }
    printf("     ");
    for (int x = 0; x < n; x++)
        printf(" %c ", 'a' + x);
    printf("\n  X black, O white, [ ] last move, ( ) the move before");
    if (renju)
        printf(", %c forbidden for black", FORBIDDEN_MARK);
    printf("\n");
}

static const char *color_name(int c)
{
    return c == STONE_BLACK ? "black" : "white";
}

/* One game session: the board, its start (empty or --load), the players,
 * and what hints need. Owns hinter and vcf; pl are owned by cmd_play. */
typedef struct game {
    board_t b;
    board_t start;
    player_t *pl[3];
    player_t *hinter;          /* NULL until the first hint */
    const char *hint_spec;     /* the model in the game, else bot:vcf */
    player_opts_t hint_opts;
    vcf_t *vcf;                /* NULL when no person plays */
    bool need_board;           /* the position changed since the board was shown */
} game_t;

static void game_restart(game_t *g)
{
    g->b = g->start;
    player_new_game(g->pl[STONE_BLACK], &g->b);
    player_new_game(g->pl[STONE_WHITE], &g->b);
    g->need_board = true;
}

/* "black (X)", "white (O)" or "both colours": the person's side. */
static const char *human_side(const game_t *g)
{
    bool hb = g->pl[STONE_BLACK]->is_human, hw = g->pl[STONE_WHITE]->is_human;
    return hb && hw ? "both colours" : hb ? "black (X)" : "white (O)";
}

/* Take back to before the last move a person made (and everything after
 * it), so that they are to move again. False when they made none. */
static bool game_undo(game_t *g)
{
    int i = g->b.nmoves - 1;
    while (i >= 0 && !g->pl[i % 2 == 0 ? STONE_BLACK : STONE_WHITE]->is_human)
        i--;
    if (i < 0) {
        printf("nothing to undo\n");
        return false;
    }
    while (g->b.nmoves > i)
        board_undo(&g->b);
    player_new_game(g->pl[STONE_BLACK], &g->b);
    player_new_game(g->pl[STONE_WHITE], &g->b);
    g->need_board = true;
    printf("undone: back to move %d\n", g->b.nmoves + 1);
    return true;
}

/* "save FILE": the game so far as .psq, black's name first. The game goes
 * on whatever happens. */
static void game_save(const game_t *g, const char *line)
{
    const char *path = line + 4;
    while (*path == ' ' || *path == '\t')
        path++;
    if (!*path) {
        printf("not saved: say where, as in 'save game.psq'\n");
        return;
    }
    char err[512];
    if (psq_save_board(path, &g->b, NULL, g->pl[STONE_BLACK]->name, g->pl[STONE_WHITE]->name, err,
                       sizeof err) != 0)
        printf("not saved: %s\n", err);
    else
        printf("saved %d move%s to %s\n", g->b.nmoves, g->b.nmoves == 1 ? "" : "s", path);
}

/* The engine's move for the person to move, not played, with its view. */
static void game_hint(game_t *g)
{
    char err[256], who[32], al[16];
    if (!g->hinter) {
        g->hinter = player_create(g->hint_spec, (rule_t)g->b.rule, g->b.size, &g->hint_opts, err,
                                  sizeof err);
        if (!g->hinter) {
            printf("no hint: %s: %s\n", g->hint_spec, err);
            return;
        }
    }
    int m;
    player_new_game(g->hinter, &g->b);
    if (player_genmove(g->hinter, &g->b, &m, err, sizeof err) != 0) {
        printf("no hint: %s\n", err);
        return;
    }
    snprintf(who, sizeof who, "you (%s)", color_name(g->b.to_move));
    move_format_alpha(m, g->b.size, al, sizeof al);
    player_analysis_t a;
    bool rated = player_analysis(g->hinter, &a);
    printf("  hint for %s: %s (from %s%s)\n", who, al, g->hinter->name,
           rated ? "" : ", which gives no win rate");
    print_view(who, &g->b, g->hinter);
    print_vcf("your", &g->b, g->vcf);
}

static void print_commands(bool over)
{
    if (over)
        printf("after the game:\n"
               "  undo       take back your last move and play on\n"
               "  new        a new game: same players, same start\n");
    else
        printf("at your move:\n"
               "  h8 or 7,7  play there (column letter and row from the bottom, or x,y\n"
               "             0-based from the top left)\n"
               "  undo       take back to your previous move\n"
               "  hint       the engine's move for you and its win rate (not played)\n");
    printf("  save FILE  write the game so far to FILE (Piskvork .psq; --load reads it)\n"
           "  help       this list\n"
           "  quit       end%s\n", over ? "" : " the game");
}

/* A command typed at a person's move (human player's err). */
static void game_command(game_t *g, const char *line)
{
    if (human_command_is(line, "undo"))
        game_undo(g);
    else if (human_command_is(line, "hint"))
        game_hint(g);
    else if (human_command_is(line, "save"))
        game_save(g, line);
    else
        print_commands(false);
}

/* After a game with a person in it. True when play goes on (undo, new). */
static bool game_menu(game_t *g)
{
    char line[1024];
    while (human_read_line("game over (undo, new, save FILE, quit; help)> ", line, sizeof line)) {
        if (human_command_is(line, "quit"))
            return false;
        if (human_command_is(line, "new")) {
            game_restart(g);
            printf("new game: you play %s\n", human_side(g));
            return true;
        }
        if (human_command_is(line, "undo")) {
            if (game_undo(g))
                return true;
        } else if (human_command_is(line, "save")) {
            game_save(g, line);
        } else if (human_command_is(line, "help")) {
            print_commands(true);
        } else {
            printf("refused: '%s': the game is over (undo, new, save FILE, quit)\n", line);
        }
    }
    return false;
}

/* The --load position: the file's game replayed under rule, on a board of
 * the file's size, which must be *size when size_given (else *size gets
 * it). 0, or -1 with err. */
static int load_position(const char *path, rule_t rule, bool size_given, int *size, board_t *b,
                         char *err, size_t errlen)
{
    psq_game_t pg;
    char why[256];
    if (psq_load(path, &pg, err, errlen) != 0)
        return -1;
    if (size_given && pg.size != *size) {
        snprintf(err, errlen, "%s is a %dx%d game; --size is %d (leave --size out to play on "
                 "the file's board)", path, pg.size, pg.size, *size);
        return -1;
    }
    if (psq_to_board(&pg, rule, b, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    if (board_over(b)) {
        snprintf(err, errlen, "%s: the game is over (%s after move %d): nothing to play", path,
                 b->result == RESULT_DRAW ? "a draw" : b->result == RESULT_BLACK ? "black won"
                                                                                : "white won",
                 b->nmoves);
        return -1;
    }
    *size = pg.size;
    return 0;
}

int cmd_play(int argc, char **argv)
{
    player_opts_t o;
    player_opts_default(&o);
    const char *black, *white, *model = NULL, *human_color, *load = NULL;
    rule_t rule;
    int size;
    uint64_t seed;
    bool quiet, hint;
    arg_spec_t specs[ARGS_MAX] = {
        ARG(S_BLACK, &black), ARG(S_WHITE, &white),
        ARG(S_PLAY_MODEL, &model), ARG(S_HUMAN_COLOR, &human_color),
        ARG(S_RULE, &rule), ARG(S_SIZE, &size), ARG(S_SEED, &seed),
        ARG(S_HINT, &hint), ARG(S_PLAY_QUIET, &quiet), ARG(S_LOAD, &load),
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

    char err[512];
    game_t g = {.hint_spec = "bot:vcf"};
    board_init(&g.start, size, rule);
    if (load && load_position(load, rule, args_given(specs, ns, S_SIZE), &size, &g.start, err,
                              sizeof err) != 0) {
        fprintf(stderr, "gomoku play: --load: %s\n", err);
        return 1;
    }
    player_t **pl = g.pl;
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
    for (int c = STONE_BLACK; c <= STONE_WHITE; c++) {
        const char *ps = c == STONE_BLACK ? black : white;
        if (!pl[c]->is_human && strncmp(ps, "bot:", 4) != 0 && strncmp(ps, "pbrain:", 7) != 0)
            g.hint_spec = ps;
    }
    g.hint_opts = o;
    g.hint_opts.seed = seed + 2;
    g.hint_opts.quiet = true;
    if (show) {
        g.vcf = vcf_create((size_t)4 << 20, err, sizeof err);
        if (!g.vcf) {
            fprintf(stderr, "gomoku play: %s\n", err);
            status = 1;
            goto out_free_players;
        }
    }
    if (hint && show) {
        g.hinter = player_create(g.hint_spec, rule, size, &g.hint_opts, err, sizeof err);
        if (!g.hinter) {
            fprintf(stderr, "gomoku play: hint player %s: %s\n", g.hint_spec, err);
            status = 1;
            goto out_free_players;
        }
    }

    game_restart(&g);
    printf("%s %dx%d: black (X) %s, white (O) %s\n", rule_name(rule), size, size,
           pl[STONE_BLACK]->name, pl[STONE_WHITE]->name);
    if (load)
        printf("loaded %s: %d move%s, %s to move\n", load, g.b.nmoves, g.b.nmoves == 1 ? "" : "s",
               color_name(g.b.to_move));

    for (;;) {
        const char *why = NULL;
        while (!board_over(&g.b)) {
            int c = g.b.to_move, m;
            player_t *p = pl[c];
            if (p->is_human && g.need_board) {
                print_board(&g.b);
                g.need_board = false;
                if (hint)
                    game_hint(&g);
            }
            board_t before = g.b;
            if (player_genmove(p, &g.b, &m, err, sizeof err) != 0) {
                if (p->is_human && strcmp(err, "quit") == 0) {
                    why = "quit";
                    break;
                }
                if (p->is_human) {
                    game_command(&g, err);
                    continue;
                }
                if (strstr(err, "no legal move")) {
                    why = "no legal move: draw";
                    break;
                }
                fprintf(stderr, "gomoku play: %s (%s): %s\n", color_name(c), p->name, err);
                status = 1;
                break;
            }
            move_status_t st = board_check_move(&g.b, m);
            if (st != MOVE_OK) {
                char buf[16];
                move_format_xy(m, size, buf, sizeof buf);
                fprintf(stderr, "gomoku play: %s (%s) played an illegal move %s: %s\n",
                        color_name(c), p->name, buf, move_status_str(st));
                status = 1;
                break;
            }
            board_play(&g.b, m);
            g.need_board = true;
            char xy[16], al[16], who[32];
            move_format_xy(m, size, xy, sizeof xy);
            move_format_alpha(m, size, al, sizeof al);
            printf("move %d: %s %s (%s)\n", g.b.nmoves, color_name(c), al, xy);
            if (show && !p->is_human) {
                snprintf(who, sizeof who, "engine (%s)", color_name(c));
                print_view(who, &before, p);
                print_vcf("its", &before, g.vcf);
            }
            player_notify(pl[STONE_BLACK], &g.b, m);
            player_notify(pl[STONE_WHITE], &g.b, m);
        }
        if (g.need_board)
            print_board(&g.b);
        g.need_board = false;
        if (status != 0)
            break;
        if (g.b.result == RESULT_BLACK || g.b.result == RESULT_WHITE)
            printf("result: %s wins (%s) after %d moves\n", result_str((result_t)g.b.result),
                   pl[g.b.result]->name, g.b.nmoves);
        else if (g.b.result == RESULT_DRAW)
            printf("result: draw (board full) after %d moves\n", g.b.nmoves);
        else
            printf("result: none (%s) after %d moves\n", why ? why : "stopped", g.b.nmoves);
        if (!show || why || !game_menu(&g))
            break;
    }
out_free_players:
    player_free(g.hinter);
    vcf_free(g.vcf);
    player_free(pl[STONE_BLACK]);
    player_free(pl[STONE_WHITE]);
    return status;
}
