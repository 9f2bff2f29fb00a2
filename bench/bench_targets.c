/* gomoku bench targets: how close self-play's policy targets come to a
 * deep search's, per playout. Each position of a file is searched by a
 * reference (PUCT, --ref-visits), then by the self-play search at
 * --visits: PUCT, and the Gumbel root when --gumbel is set; the net's
 * prior is the baseline. One JSON line an arm. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "play/match.h"
#include "play/searcher.h"
#include "selfplay/args.h"
#include "selfplay/selfplay.h"
#include "util/util.h"

static const cmd_help_t help = {
    "bench targets", BY_BENCH_TARGETS,
    "gomoku bench targets --model M --file F [--ref-visits 1600] [--visits V] [--gumbel M]\n"
    "       [--gumbel-scale S] [--positions P] [--c-puct C] [--vct-root-nodes N]",
    "Searches each position of F (the first P) with the reference, a PUCT\n"
    "search of --ref-visits playouts, then with self-play's search at\n"
    "--visits: PUCT and, with --gumbel M > 0, the Gumbel root; the net's prior\n"
    "is the baseline. Positions the reference rates decided (|value| > 0.95)\n"
    "are left out. One JSON line an arm (prior, puct, gumbel), over the\n"
    "positions kept: ce, the cross-entropy of the reference's visit\n"
    "distribution against the arm's policy target; p_best, the target's share\n"
    "of the reference's move; top1, how often the target's largest entry is\n"
    "that move; agree, how often the arm's move is; regret, the reference's\n"
    "value of its move less that of the arm's (over the positions where the\n"
    "reference gave the arm's move at least 8 visits or proved it: regret_n).\n"
    "No noise, no temperature. Every arm has one tree a position, all\n"
    "searched together, one NN call a step."};

#define BT_REF_MIN_VISITS 8   /* a reference child's value counts from these visits */
#define BT_DECIDED 0.95f      /* a reference root value beyond this: decided, left out */
#define BT_FLOOR 1e-6         /* a target's share below this counts as this in ce */

typedef struct bt_arm {
    const char *name;
    double ce, p_best, top1, agree, regret;
    int n, regret_n;
} bt_arm_t;

/* Search every tree of s from set[i] towards `visits` root visits. */
static void bt_search(searcher_t *s, const board_t *set, int n, uint32_t visits, uint32_t *tg)
{
    for (int i = 0; i < n; i++) {
        mcts_set_root(searcher_tree(s, i), &set[i]);
        tg[i] = visits;
    }
    for (;;) {
        int live = 0;
        for (int i = 0; i < n; i++) {
            if (tg[i] && mcts_search_done(searcher_tree(s, i), visits))
                tg[i] = 0;
            live += tg[i] > 0;
        }
        if (!live)
            break;
        searcher_step(s, tg);
    }
}

/* The policy target of t as a distribution over points. */
static void bt_target(const mcts_t *t, double *d)
{
    static record_visit_t rv[BOARD_CELLS];
    memset(d, 0, BOARD_CELLS * sizeof *d);
    int k = mcts_root_policy_visits(t, rv, BOARD_CELLS);
    double sum = 0.0;
    for (int i = 0; i < k; i++)
        sum += rv[i].count;
    for (int i = 0; i < k && sum > 0.0; i++)
        d[rv[i].move] = rv[i].count / sum;
}

/* The reference of one position: its visit distribution, its move, and
 * its children's values (NAN: too few visits to count). */
typedef struct bt_ref {
    double dist[BOARD_CELLS], q[BOARD_CELLS];
    int best;
    bool kept;
} bt_ref_t;

static void bt_reference(mcts_t *t, bt_ref_t *r)
{
    static mcts_child_info_t ch[BOARD_CELLS];
    bt_target(t, r->dist);
    r->best = mcts_pick_move(t, 0.0);
    for (int p = 0; p < BOARD_CELLS; p++)
        r->q[p] = NAN;
    int k = mcts_root_children(t, ch, BOARD_CELLS);
    for (int j = 0; j < k; j++)
        if (ch[j].proven || ch[j].visits >= BT_REF_MIN_VISITS)
            r->q[ch[j].move] = ch[j].proven ? (double)ch[j].proven : (double)ch[j].q;
    r->kept = r->best != MOVE_NONE && fabsf(mcts_root_value(t)) <= BT_DECIDED;
}

/* One position's figures into a: the arm's target d and move. */
static void bt_score(bt_arm_t *a, const bt_ref_t *r, const double *d, int move)
{
    int top = 0;
    for (int p = 0; p < BOARD_CELLS; p++) {
        if (r->dist[p] > 0.0)
            a->ce -= r->dist[p] * log(d[p] > BT_FLOOR ? d[p] : BT_FLOOR);
        if (d[p] > d[top])
            top = p;
    }
    a->p_best += d[r->best];
    a->top1 += top == r->best;
    a->agree += move == r->best;
    if (move >= 0 && !isnan(r->q[move]) && !isnan(r->q[r->best])) {
        a->regret += r->q[r->best] - r->q[move];
        a->regret_n++;
    }
    a->n++;
}

static void bt_print(const bt_arm_t *a, const selfplay_opts_t *o, int ref_visits, int visits,
                     int gumbel, int left_out)
{
    double n = a->n > 0 ? a->n : 1;
    printf("{\"bench\":\"targets\",\"arm\":\"%s\",\"visits\":%d,\"gumbel\":%d,"
           "\"gumbel_scale\":%.3g,\"ref_visits\":%d,\"positions\":%d,\"left_out\":%d,"
           "\"ce\":%.4f,\"p_best\":%.4f,\"top1\":%.4f,\"agree\":%.4f,\"regret\":%.4f,"
           "\"regret_n\":%d}\n",
           a->name, visits, gumbel, o->gumbel_scale, ref_visits, a->n, left_out, a->ce / n,
           a->p_best / n, a->top1 / n, a->agree / n,
           a->regret_n ? a->regret / a->regret_n : 0.0, a->regret_n);
    fflush(stdout);
}

static searcher_t *bt_searcher(const nn_model_t *m, selfplay_opts_t *o, int trees, int visits,
                               int gumbel)
{
    selfplay_opts_t so = *o;
    so.parallel = trees;
    so.visits = visits;
    so.cheap_visits = 0;
    so.gumbel = gumbel;
    searcher_opts_t sopts;
    selfplay_searcher_opts(&so, &sopts);
    sopts.cache_bytes = 0;   /* each search on its own evaluations */
    char err[512], note[256];
    searcher_t *s = searcher_create(m, &sopts, note, sizeof note, err, sizeof err);
    if (!s)
        fprintf(stderr, "gomoku bench targets: %s\n", err);
    return s;
}

int bench_targets(int argc, char **argv)
{
    selfplay_opts_t o;
    selfplay_opts_default(&o);
    const char *model = NULL, *file = NULL;
    int ref_visits, npos_max;
    arg_spec_t specs[] = {
        ARG(S_BENCH_TARGETS_MODEL, &model), ARG(S_BENCH_TARGETS_FILE, &file),
        ARG(S_BENCH_TARGETS_REF_VISITS, &ref_visits), ARG(S_BENCH_TARGETS_POSITIONS, &npos_max),
        ARG(S_VISITS, &o.visits), ARG(S_GUMBEL, &o.gumbel), ARG(S_GUMBEL_SCALE, &o.gumbel_scale),
        ARG(S_C_PUCT, &o.search.c_puct), ARG(S_SELFPLAY_VCT_ROOT_NODES, &o.vct_root_nodes),
        ARG(S_NET_THREADS, &o.threads), ARG(S_BENCH_DEVICE, &o.device),
    };
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (!model || !file) {
        fprintf(stderr, "gomoku bench targets: --model and --file are required\n");
        return 2;
    }
    char err[512];
    nn_model_t *m = nn_model_load(model, err, sizeof err);
    if (!m) {
        fprintf(stderr, "gomoku bench targets: %s\n", err);
        return 1;
    }
    o.size = m->cfg.board_max < BOARD_DEFAULT ? m->cfg.board_max : BOARD_DEFAULT;
    o.rule = m->rule < RULE_COUNT ? (rule_t)m->rule : RULE_FREESTYLE;
    board_t *set = NULL;
    int n = 0;
    searcher_t *s = NULL;
    bt_ref_t *ref = NULL;
    uint32_t *tg = NULL;
    rc = 1;
    if (match_openings_load(file, o.size, o.rule, &set, &n, err, sizeof err) != 0) {
        fprintf(stderr, "gomoku bench targets: %s\n", err);
        goto out;
    }
    if (npos_max > 0 && n > npos_max)
        n = npos_max;
    ref = malloc((size_t)n * sizeof *ref);
    tg = malloc((size_t)n * sizeof *tg);
    if (!ref || !tg) {
        fprintf(stderr, "gomoku bench targets: out of memory for %d positions\n", n);
        goto out;
    }
    if (!(s = bt_searcher(m, &o, n, ref_visits, 0)))
        goto out;
    bt_search(s, set, n, (uint32_t)ref_visits, tg);
    int left_out = 0;
    for (int i = 0; i < n; i++) {
        bt_reference(searcher_tree(s, i), &ref[i]);
        left_out += !ref[i].kept;
    }
    /* the prior: the reference root's children's priors */
    bt_arm_t prior = {.name = "prior"};
    static double d[BOARD_CELLS];
    static mcts_child_info_t ch[BOARD_CELLS];
    for (int i = 0; i < n; i++) {
        if (!ref[i].kept)
            continue;
        memset(d, 0, sizeof d);
        int k = mcts_root_children(searcher_tree(s, i), ch, BOARD_CELLS), top = -1;
        for (int j = 0; j < k; j++) {
            d[ch[j].move] = ch[j].prior;
            if (top < 0 || ch[j].prior > d[top])
                top = ch[j].move;
        }
        bt_score(&prior, &ref[i], d, top);
    }
    bt_print(&prior, &o, ref_visits, 0, 0, left_out);
    searcher_free(s);
    s = NULL;
    for (int arm = 0; arm < (o.gumbel > 0 ? 2 : 1); arm++) {
        int gumbel = arm ? o.gumbel : 0;
        bt_arm_t a = {.name = arm ? "gumbel" : "puct"};
        if (!(s = bt_searcher(m, &o, n, o.visits, gumbel)))
            goto out;
        bt_search(s, set, n, (uint32_t)o.visits, tg);
        for (int i = 0; i < n; i++) {
            if (!ref[i].kept)
                continue;
            mcts_t *t = searcher_tree(s, i);
            bt_target(t, d);
            bt_score(&a, &ref[i], d, mcts_pick_move(t, 0.0));
        }
        bt_print(&a, &o, ref_visits, o.visits, gumbel, left_out);
        searcher_free(s);
        s = NULL;
    }
    rc = 0;
out:
    searcher_free(s);
    free(ref);
    free(tg);
    free(set);
    nn_model_free(m);
    return rc;
}
