/* gomoku rules: replay a move list under a rule and print the side to
 * move, the winner and the forbidden points of the side to move. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "engine/board.h"

static const cmd_help_t help = {
    "rules",
    "gomoku rules [--rule R] [--size N] [--moves \"x,y x,y ...\"]",
    "Replays the moves (black first) and prints three lines:\n"
    "  to_move: black|white\n"
    "  winner: black|white|none   (draw when the board filled up)\n"
    "  forbidden: x,y x,y ...     (renju: black's forbidden points; empty otherwise)\n"
    "Moves are Gomocup x,y (0-based, x column, y row from the top) or letter-number\n"
    "(h8: column letter, row number from the bottom), separated by spaces.\n"
    "An illegal move is a one-line error naming its 0-based index (exit 1).",
};

int cmd_rules(int argc, char **argv)
{
    const char *rule_s = "freestyle", *moves_s = "";
    int size = BOARD_DEFAULT;
    arg_spec_t specs[] = {
        {"rule", ARG_STR, &rule_s, 0, 0, "R  freestyle, standard or renju (default freestyle)"},
        {"size", ARG_INT, &size, BOARD_MIN, BOARD_MAX, "N  board size 5..20 (default 15)"},
        {"moves", ARG_STR, &moves_s, 0, 0, "\"x,y x,y ...\"  moves to replay, black first"},
    };
    int rc = args_parse(&help, specs, 3, argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return rc == ARGS_HELP ? 0 : 2;
    rule_t rule;
    if (!rule_parse(rule_s, &rule))
        return args_fail(&help, "unknown rule '%s' (freestyle, standard, renju)", rule_s);

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
    for (int i = 0; i < n; i++) {
        char buf[16];
        move_format_xy(pts[i], size, buf, sizeof buf);
        printf(" %s", buf);
    }
    printf("\n");
    return 0;
}
