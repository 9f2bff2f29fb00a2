/* gomoku rules: replay a move list under a rule and print the side to
 * move, the winner and the forbidden points of the side to move; with
 * --vcf (--vct) also the VCF (VCT) of the side to move, or the defences
 * against the opponent's. */
#include <stdio.h>
#include <string.h>

#include "cli/cmds.h"
#include "engine/board.h"
#include "engine/vcf.h"
#include "engine/vct.h"
#include "selfplay/args.h"

static const cmd_help_t help = {
    "rules", BY_RULES,
    "gomoku rules [--rule R] [--size N] [--moves \"x,y x,y ...\"] [--vcf [--vcf-nodes N]] "
    "[--vct [--vct-nodes N]]",
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
    "An illegal move is a one-line error naming its 0-based index (exit 1).",
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

int cmd_rules(int argc, char **argv)
{
    const char *moves_s = "";
    rule_t rule;
    int size;
    bool vcf, vct;
    uint64_t vcf_nodes, vct_nodes;
    arg_spec_t specs[] = {
        ARG(S_RULE, &rule), ARG(S_SIZE, &size), ARG(S_MOVES, &moves_s), ARG(S_VCF, &vcf),
        ARG(S_RULES_VCF_NODES, &vcf_nodes), ARG(S_RULES_VCT, &vct),
        ARG(S_RULES_VCT_NODES, &vct_nodes),
    };
    int ns = ARGS_COUNT(specs);
    int rc = args_parse(&help, specs, ns, argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (args_given(specs, ns, S_RULES_VCF_NODES) && !vcf)
        return args_fail(&help, "--vcf-nodes needs --vcf");
    if (args_given(specs, ns, S_RULES_VCT_NODES) && !vct)
        return args_fail(&help, "--vct-nodes needs --vct");

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
