/* gomoku rules: replay a move list under a rule and print the side to
 * move, the winner and the forbidden points of the side to move; with
 * --vcf (--vct) also the VCF (VCT) of the side to move, or the defences
 * against the opponent's. */
#include <stdio.h>
#include <string.h>

#include "cli/cmds.h"
#include "engine/board.h"
#include "engine/gamefile.h"
#include "engine/vcf.h"
#include "engine/vct.h"
#include "selfplay/args.h"

static const cmd_help_t help = {
    "rules", BY_RULES,
    "gomoku rules [--rule R] [--size N] [--moves \"x,y x,y ...\"] [--vcf [--vcf-nodes N]] "
    "[--vct [--vct-nodes N]]\n       gomoku rules --game FILE.psq [--rule R] (--vct [--vct-nodes N] "
    "| --vcf [--vcf-nodes N])",
    "Replays the moves (black first) and prints three lines:\n"
    "  to_move: black|white\n"
    "  winner: black|white|none   (draw when the board filled up)\n"
    "  forbidden: x,y x,y ...     (renju: black's forbidden points; empty otherwise)\n"
    "With --vcf, the VCF (victory by continuous fours) of the side to move:\n"
    "  vcf: win K fours: x,y x,y ...   (the line: attacker, block, ..., last move)\n"
    "  vcf: none | vcf: unknown (node budget)\n"
    "and when there is none, the opponent's and the moves that stop it:\n"
    "  vcf_opponent: win K fours: ...   vcf_defences: x,y ...   (empty: lost)\n"
    "With --vct, the same for the VCT (victory by continuous threats: fours and\n"
    "threes), K counting the attacker's threats:\n"
    "  vct: win K: x,y x,y ...   vct: none | vct: unknown (node budget)\n"
    "  vct_opponent: win K: ...   vct_defences: x,y ...\n"
    "and, when the side to move has no VCT, a quiet move (no four, no three)\n"
    "after which the opponent has no defence against its VCT (--vct-nodes per solve):\n"
    "  vct_quiet: x,y then win K: x,y ...   vct_quiet: none found\n"
    "Moves are Gomocup x,y (0-based, x column, y row from the top) or letter-number\n"
    "(h8: column letter, row number from the bottom), separated by spaces.\n"
    "An illegal move is a one-line error naming its 0-based index (exit 1).\n"
    "\n"
    "With --game, a game (.psq, its size from the file) is audited instead, ply by\n"
    "ply (0-based, the file's opening stones included), each position solved afresh\n"
    "as --moves would (the same answers), with --vct (or --vcf) only:\n"
    "  game: N plies on SxS, black wins|white wins|draw|unfinished\n"
    "  ply I SIDE MOVE: vct: win K: LINE | none | unknown (node budget)\n"
    "  first_win: ply I SIDE   (the winner's first win found at its turn) | none\n"
    "then, when a ply came before the winner's first win, the\n"
    "position the loser last moved in, as --moves prints it (its own threat, the\n"
    "winner's, the defences):\n"
    "  before: ply I SIDE MOVE\n"
    "and last the wins held by a side that did not win the game:\n"
    "  missed: ply I SIDE, ply I SIDE ... | missed: none",
};

/* " x,y x,y ...\n" */
static void print_moves(const board_t *b, const int *moves, int n)
{
    for (int i = 0; i < n; i++) {
        char buf[16];
        move_format_xy(moves[i], b->size, buf, sizeof buf);
        printf(" %s", buf);
    }
    printf("\n");
}

/* "label: none", "label: unknown (node budget)" or "label: win K[ unit]:
 * x,y ...": status is a vcf_status_t or vct_status_t (same values). */
static void print_line(const char *label, const board_t *b, int status, int k, const char *unit,
                       const int *line, int nline)
{
    if (status == VCF_NONE) {
        printf("%s: none\n", label);
        return;
    }
    if (status == VCF_UNKNOWN) {
        printf("%s: unknown (node budget)\n", label);
        return;
    }
    printf("%s: win %d%s:", label, k, unit);
    print_moves(b, line, nline);
}

/* The side to move's VCF (vct false) or VCT and, when it has none, the
 * opponent's with the moves that stop it. The two solvers' results
 * differ only in the name of their count. */
static int print_threat(const board_t *b, bool vct, uint64_t nodes)
{
    const char *name = vct ? "vct" : "vcf";
    char err[128];
    vcf_t *fs = vct ? NULL : vcf_create((size_t)16 << 20, err, sizeof err);
    vct_t *ts = vct ? vct_create((size_t)16 << 20, err, sizeof err) : NULL;
    if (!fs && !ts) {
        fprintf(stderr, "gomoku rules: %s\n", err);
        return 1;
    }
    vcf_limits_t flim = {.nodes = nodes};
    vct_limits_t tlim = {.nodes = nodes};
    vcf_result_t fr[2];   /* the side to move's, the opponent's */
    vct_result_t tr[2];
    int moves[BOARD_CELLS], n = -1;
    uint8_t unproven[BOARD_CELLS];   /* vct_defend_marked's: the defences left undecided */
    int st = vct ? (int)vct_solve(ts, b, &tlim, &tr[0]) : (int)vcf_solve(fs, b, &flim, &fr[0]);
    if (st == VCF_NONE && !board_over(b))
        n = vct ? vct_defend_marked(ts, b, &tlim, moves, unproven, &tr[1])
                : vcf_defend(fs, b, &flim, moves, &fr[1]);
    for (int i = 0; i < (n >= 0 ? 2 : 1); i++) {
        char label[32];
        snprintf(label, sizeof label, i ? "%s_opponent" : "%s", name);
        if (vct)
            print_line(label, b, tr[i].status, tr[i].nthreats, "", tr[i].line, tr[i].nline);
        else
            print_line(label, b, fr[i].status, fr[i].nfours, " fours", fr[i].line, fr[i].nline);
    }
    if (n >= 0) {
        printf("%s_defences:", name);
        print_moves(b, moves, n);
    }
    if (vct && n > 0) {   /* which of them are proven, not left undecided by the budget */
        int k = 0;
        for (int i = 0; i < n; i++)
            if (!unproven[moves[i]])
                moves[k++] = moves[i];
        printf("vct_proven:");
        print_moves(b, moves, k);
    }
    if (vct && st != VCT_WIN && !board_over(b)) {
        vct_result_t qr;
        int q = vct_quiet_win(ts, b, &tlim, 0, &qr, NULL);
        char buf[16];
        if (q == MOVE_NONE) {
            printf("vct_quiet: none found\n");
        } else {
            move_format_xy(q, b->size, buf, sizeof buf);
            printf("vct_quiet: %s then win %d:", buf, qr.nthreats);
            print_moves(b, qr.line, qr.nline);
        }
    }
    vcf_free(fs);
    vct_free(ts);
    return 0;
}

/* The side to move's VCT (vct) or VCF in b within nodes, on a fresh
 * solver, as print_threat's first line: its status (a vcf_status_t or
 * vct_status_t: the same values), count and line. -1 with no memory. */
static int solve_side(const board_t *b, bool vct, uint64_t nodes, int *k, int *line, int *nline)
{
    char err[128];
    int st = -1;
    if (vct) {
        vct_t *ts = vct_create((size_t)16 << 20, err, sizeof err);
        if (ts) {
            vct_limits_t lim = {.nodes = nodes};
            vct_result_t r;
            st = (int)vct_solve(ts, b, &lim, &r);
            *k = r.nthreats;
            *nline = r.nline;
            memcpy(line, r.line, (size_t)r.nline * sizeof *line);
            vct_free(ts);
        }
    } else {
        vcf_t *fs = vcf_create((size_t)16 << 20, err, sizeof err);
        if (fs) {
            vcf_limits_t lim = {.nodes = nodes};
            vcf_result_t r;
            st = (int)vcf_solve(fs, b, &lim, &r);
            *k = r.nfours;
            *nline = r.nline;
            memcpy(line, r.line, (size_t)r.nline * sizeof *line);
            vcf_free(fs);
        }
    }
    if (st < 0)
        fprintf(stderr, "gomoku rules: %s\n", err);
    return st;
}

static const char *side_name(int color) { return color == STONE_BLACK ? "black" : "white"; }

/* gomoku rules --game: every ply of g under rule, the side to move's win
 * at it (vct: the VCT, else the VCF) within nodes, and what they say of
 * the game (the help text). */
static int audit_game(const char *path, const psq_game_t *g, rule_t rule, bool vct, uint64_t nodes)
{
    const char *name = vct ? "vct" : "vcf";
    board_t b;
    board_init(&b, g->size, rule);
    for (int i = 0; i < g->nmoves; i++) {   /* the whole game first: its result, or its bad ply */
        move_status_t st = board_check_move(&b, g->moves[i]);
        if (st != MOVE_OK) {
            char buf[16];
            move_format_xy(g->moves[i], g->size, buf, sizeof buf);
            fprintf(stderr, "gomoku rules: %s: ply %d %s is %s under %s\n", path, i, buf,
                    st == MOVE_FORBIDDEN ? "forbidden for black" : move_status_str(st),
                    rule_name(rule));
            return 1;
        }
        board_play(&b, g->moves[i]);
    }
    int winner = b.result == RESULT_BLACK ? STONE_BLACK : b.result == RESULT_WHITE ? STONE_WHITE : 0;
    printf("game: %d plies on %dx%d, %s\n", g->nmoves, g->size, g->size,
           winner ? (winner == STONE_BLACK ? "black wins" : "white wins")
                  : b.result == RESULT_DRAW ? "draw" : "unfinished");
    static int win_ply[BOARD_CELLS];
    int nwin = 0, first = -1;
    board_init(&b, g->size, rule);
    for (int i = 0; i < g->nmoves; i++) {
        int k = 0, nline = 0, line[VCT_LINE_MAX > VCF_LINE_MAX ? VCT_LINE_MAX : VCF_LINE_MAX];
        int st = solve_side(&b, vct, nodes, &k, line, &nline);
        if (st < 0)
            return 1;
        char label[64], buf[16];
        move_format_xy(g->moves[i], g->size, buf, sizeof buf);
        snprintf(label, sizeof label, "ply %d %s %s: %s", i, side_name(b.to_move), buf, name);
        print_line(label, &b, st, k, vct ? "" : " fours", line, nline);
        if (st == VCF_WIN) {
            win_ply[nwin++] = i;
            if (first < 0 && b.to_move == winner)
                first = i;
        }
        board_play(&b, g->moves[i]);
    }
    if (first < 0)
        printf("first_win: none\n");
    else
        printf("first_win: ply %d %s\n", first, side_name(winner));
    if (first >= 1) {   /* the loser's last move before it: replay to there */
        board_init(&b, g->size, rule);
        for (int i = 0; i < first - 1; i++)
            board_play(&b, g->moves[i]);
        char buf[16];
        move_format_xy(g->moves[first - 1], g->size, buf, sizeof buf);
        printf("before: ply %d %s %s\n", first - 1, side_name(b.to_move), buf);
        if (print_threat(&b, vct, nodes) != 0)
            return 1;
    }
    printf("missed:");
    int nmissed = 0;
    for (int j = 0; j < nwin; j++)
        if ((win_ply[j] % 2 == 0 ? STONE_BLACK : STONE_WHITE) != winner)
            printf("%s ply %d %s", nmissed++ ? "," : "", win_ply[j],
                   side_name(win_ply[j] % 2 == 0 ? STONE_BLACK : STONE_WHITE));
    printf("%s\n", nmissed ? "" : " none");
    return 0;
}

int cmd_rules(int argc, char **argv)
{
    const char *moves_s = "";
    rule_t rule;
    int size;
    const char *game = NULL;
    bool vcf, vct;
    uint64_t vcf_nodes, vct_nodes;
    arg_spec_t specs[] = {
        ARG(S_RULE, &rule), ARG(S_SIZE, &size), ARG(S_MOVES, &moves_s), ARG(S_VCF, &vcf),
        ARG(S_RULES_VCF_NODES, &vcf_nodes), ARG(S_RULES_VCT, &vct),
        ARG(S_RULES_VCT_NODES, &vct_nodes), ARG(S_RULES_GAME, &game),
    };
    int ns = ARGS_COUNT(specs);
    int rc = args_parse(&help, specs, ns, argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (args_given(specs, ns, S_RULES_VCF_NODES) && !vcf)
        return args_fail(&help, "--vcf-nodes needs --vcf");
    if (args_given(specs, ns, S_RULES_VCT_NODES) && !vct)
        return args_fail(&help, "--vct-nodes needs --vct");
    if (game) {
        if (args_given(specs, ns, S_MOVES))
            return args_fail(&help, "--game and --moves: give one");
        if (args_given(specs, ns, S_SIZE))
            return args_fail(&help, "--game: the size comes from the file, not --size");
        if (vcf == vct)
            return args_fail(&help, "--game takes one of --vct and --vcf");
        static psq_game_t g;
        char err[256];
        if (psq_load(game, &g, err, sizeof err) != 0) {
            fprintf(stderr, "gomoku rules: %s\n", err);
            return 1;
        }
        return audit_game(game, &g, rule, vct, vct ? vct_nodes : vcf_nodes);
    }

    board_t b;
    board_init(&b, size, rule);
    const char *s = moves_s;
    for (int i = 0;; i++) {
        s += strspn(s, " \t\n");
        if (!*s)
            break;
        size_t len = strcspn(s, " \t\n");
        char tok[32];
        if (len >= sizeof tok) {
            fprintf(stderr, "gomoku rules: move %d '%.20s...' is not a move\n", i, s);
            return 1;
        }
        memcpy(tok, s, len);
        tok[len] = '\0';
        s += len;
        int m;
        if (!move_parse(tok, size, &m)) {
            fprintf(stderr, "gomoku rules: move %d '%s' is not a move on a %dx%d board "
                            "(want x,y or h8)\n", i, tok, size, size);
            return 1;
        }
        move_status_t st = board_check_move(&b, m);
        if (st == MOVE_FORBIDDEN) {
            fprintf(stderr, "gomoku rules: move %d '%s' is forbidden for black (%s)\n", i, tok,
                    forbid_str(board_forbidden_kind(&b, m)));
            return 1;
        }
        if (st != MOVE_OK) {
            fprintf(stderr, "gomoku rules: move %d '%s' is illegal: %s\n", i, tok,
                    move_status_str(st));
            return 1;
        }
        board_play(&b, m);
    }

    printf("to_move: %s\n", b.to_move == STONE_BLACK ? "black" : "white");
    printf("winner: %s\n", result_str((result_t)b.result));
    int pts[BOARD_CELLS];
    int n = board_forbidden_points(&b, pts);
    printf("forbidden:");
    print_moves(&b, pts, n);
    rc = vcf ? print_threat(&b, false, vcf_nodes) : 0;
    if (rc == 0 && vct)
        rc = print_threat(&b, true, vct_nodes);
    return rc;
}
