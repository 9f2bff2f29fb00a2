/* Batched self-play (see selfplay.h): G games, each with its own tree of
 * one searcher; one NN call per step for the leaves of all of them; the
 * searcher's cache is shared by every tree (openings transpose across
 * games). */
#include "selfplay/selfplay.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcts/mcts.h"
#include "util/util.h"
#include "play/searcher.h"

typedef struct game {
    board_t board;
    mcts_t *tree;         /* the tree of the search under way: own's, or opp's */
    mcts_t *own;          /* the searcher's tree for this game */
    mcts_t *opp;          /* the opponent's searcher's tree for it (NULL: no opponent) */
    game_record_t rec;
    bool active;
    bool searching;       /* a move's search is under way */
    bool full_search;     /* that search is a full one (playout-cap randomization) */
    bool need_noise;      /* add root noise once the root is expanded */
    uint32_t target;      /* root visits for this move */
    bool no_resign;       /* this game never resigns */
    int would_resign;     /* no-resign games: colour that first wanted to resign */
    bool balancing;       /* a random opening waits for its first search's verdict */
    int open_tries;       /* openings drawn for this game so far */
    int strong;           /* the colour whose full searches get strong_visits (0: none) */
    int opp_side;         /* the colour the opponent net plays (0: none) */
} game_t;

struct selfplay {
    selfplay_opts_t o;
    searcher_t *search;       /* tree g is game g's */
    searcher_t *opp;          /* the opponent net's (opponent_frac), tree g game g's; or NULL */
    game_t *games;
    uint32_t *targets;        /* (G) root visits each tree searches towards, 0: idle */
    uint32_t *opp_targets;    /* (G) the same for the opponent's trees */
    uint64_t rng;
    uint64_t gen;
    uint64_t started, max_games;
    selfplay_stats_t st;
    record_visit_t visits[BOARD_CELLS];
};

int selfplay_args(arg_spec_t *out, selfplay_opts_t *o)
{
    const arg_spec_t specs[] = {
        ARG(S_VISITS, &o->visits), ARG(S_CHEAP_VISITS, &o->cheap_visits),
        ARG(S_FULL_FRAC, &o->full_frac), ARG(S_PARALLEL, &o->parallel),
        ARG(S_NET_THREADS, &o->threads), ARG(S_RULE, &o->rule), ARG(S_SIZE, &o->size),
        ARG(S_SEED, &o->seed), ARG(S_PRECISION, &o->precision),
        ARG(S_RESIGN, &o->resign_threshold), ARG(S_NO_RESIGN_FRAC, &o->no_resign_frac),
        ARG(S_TEMP_MOVES, &o->temp_moves), ARG(S_ALPHA, &o->dirichlet_alpha),
        ARG(S_FORCED_K, &o->forced_k), ARG(S_GUMBEL, &o->gumbel),
        ARG(S_GUMBEL_SCALE, &o->gumbel_scale), ARG(S_STRONG_FRAC, &o->strong_frac),
        ARG(S_STRONG_VISITS, &o->strong_visits), ARG(S_OPEN_FRAC, &o->open_frac),
        ARG(S_OPEN_STONES, &o->open_stones), ARG(S_OPEN_BALANCE, &o->open_balance),
        ARG(S_SELFPLAY_VCT_ROOT_NODES, &o->vct_root_nodes),
        ARG(S_SELFPLAY_VCT_CHEAP_NODES, &o->vct_cheap_nodes),
        ARG(S_SELFPLAY_VCT_DEFEND_NODES, &o->vct_defend_nodes),
        ARG(S_C_PUCT, &o->search.c_puct),
        ARG(S_FPU, &o->search.fpu), ARG(S_FPU_ROOT, &o->search.fpu_root),
        ARG(S_VCF_NODES, &o->search.vcf_nodes), ARG(S_VCF_ROOT_NODES, &o->search.vcf_root_nodes),
        ARG(S_LEAVES, &o->leaves_per_game), ARG(S_CACHE_MB, &o->cache_mb),
    };
    static_assert(ARGS_COUNT(specs) < ARGS_GROUP_MAX, "a group fits, with room for device");
    return args_append(out, specs, ARGS_COUNT(specs));
}

void selfplay_opts_default(selfplay_opts_t *o)
{
    *o = (selfplay_opts_t){.noise_frac = 0.25, .temp_final = 0.0,
                           .search = {.policy_temp = MCTS_POLICY_TEMP}};
    arg_spec_t specs[ARGS_GROUP_MAX] = {ARG(S_DEVICE, &o->device)};
    args_defaults(specs, 1 + selfplay_args(specs + 1, o));
}

/* [0, 1): a draw below a fraction f < 1 happens with probability f. */
static double sp_unit(selfplay_t *sp)
{
    return (double)(util_rng_next(&sp->rng) >> 11) / 9007199254740992.0;
}

static_assert(SELFPLAY_OPEN_STONES_MAX == 12, "selfplay_check_opts names the limit");
static_assert(MCTS_GUMBEL_M_MAX == 64 && MCTS_GUMBEL_SCALE_MAX == 10,
              "selfplay_check_opts names the limits");

/* Each tree's VCT solver (tables and node pool): 256 KiB at the default
 * budgets, as self-play always had (so the same records for a seed); for
 * other budgets 256 bytes a node of the larger one (the solver keeps every
 * child it makes: 1 MiB held about 7,000 nodes, README), at least that. */
static size_t selfplay_vct_tt_bytes(const selfplay_opts_t *o)
{
    size_t least = (size_t)256 << 10;
    if (o->vct_root_nodes == SELFPLAY_VCT_ROOT_NODES && o->vct_defend_nodes == 0)
        return least;
    size_t nodes = (size_t)(o->vct_root_nodes > o->vct_defend_nodes ? o->vct_root_nodes
                                                                     : o->vct_defend_nodes);
    return nodes * 256 > least ? nodes * 256 : least;
}

int selfplay_check_opts(const selfplay_opts_t *o, char *err, size_t errlen)
{
    const char *bad = NULL;
    if (o->size < BOARD_MIN || o->size > BOARD_MAX)
        bad = "size outside 5..20";
    else if (o->rule < 0 || o->rule >= RULE_COUNT)
        bad = "unknown rule";
    else if (o->parallel < 1 || o->parallel > 65536)
        bad = "parallel games outside 1..65536";
    else if (o->visits < 1 || o->cheap_visits < 0)
        bad = "visits must be >= 1 and cheap visits >= 0";
    else if (!(o->full_frac >= 0.0 && o->full_frac <= 1.0))
        bad = "full fraction outside 0..1";
    else if (!(o->dirichlet_alpha >= 0.0) || !(o->noise_frac >= 0.0 && o->noise_frac <= 1.0))
        bad = "noise alpha < 0 or noise fraction outside 0..1";
    else if (o->temp_moves < 0 || !(o->temp_final >= 0.0))
        bad = "negative temperature settings";
    else if (!(o->resign_threshold >= 0.0 && o->resign_threshold <= 1.0) ||
             !(o->no_resign_frac >= 0.0 && o->no_resign_frac <= 1.0))
        bad = "resign threshold or no-resign fraction outside 0..1";
    else if (o->cache_mb < 0 || o->leaves_per_game < 0 || o->leaves_per_game > 64)
        bad = "cache size < 0 or leaves per game outside 0..64";
    else if (!(o->forced_k >= 0.0 && o->forced_k <= 10.0))
        bad = "forced playouts k outside 0..10";
    else if (o->gumbel < 0 || o->gumbel > MCTS_GUMBEL_M_MAX)
        bad = "Gumbel candidates outside 0..64";   /* MCTS_GUMBEL_M_MAX */
    else if (!(o->gumbel_scale > 0.0 && o->gumbel_scale <= MCTS_GUMBEL_SCALE_MAX))
        bad = "Gumbel scale outside (0, 10]";   /* MCTS_GUMBEL_SCALE_MAX */
    else if (o->gumbel > 0 && o->forced_k > 0.0)
        bad = "forced playouts and the Gumbel root exclude each other";
    else if (!(o->strong_frac >= 0.0 && o->strong_frac <= 1.0))
        bad = "strong-side fraction outside 0..1";
    else if (o->strong_frac > 0.0 && o->strong_visits < o->visits)
        bad = "a strong side needs strong visits of at least the full search's visits";
    else if (!(o->opponent_frac >= 0.0 && o->opponent_frac <= 1.0))
        bad = "opponent fraction outside 0..1";
    else if (o->opponent_frac > 0.0 && (!o->opponent || !o->opponent[0]))
        bad = "an opponent fraction needs an opponent pattern net (--opponent F)";
    else if (!(o->open_frac >= 0.0 && o->open_frac <= 1.0) ||
             !(o->open_balance >= 0.0 && o->open_balance <= 1.0))
        bad = "opening fraction or balance outside 0..1";
    else if (o->open_stones < 1 || o->open_stones > SELFPLAY_OPEN_STONES_MAX)
        bad = "opening stones outside 1..12";   /* SELFPLAY_OPEN_STONES_MAX */
    else if (o->vct_root_nodes < 0 || o->vct_cheap_nodes < 0 || o->vct_defend_nodes < 0)
        bad = "negative VCT node budget";
    if (bad) {
        snprintf(err, errlen, "self-play options: %s", bad);
        return -1;
    }
    return 0;
}

selfplay_t *selfplay_create(const selfplay_opts_t *o, const nn_model_t *model, uint64_t gen,
                            char *note, size_t notelen, char *err, size_t errlen)
{
    if (note && notelen)
        note[0] = '\0';
    if (selfplay_check_opts(o, err, errlen) < 0)
        return NULL;
    if (!model) {
        snprintf(err, errlen, "self-play needs a model");
        return NULL;
    }
    selfplay_t *sp = calloc(1, sizeof *sp);
    if (!sp)
        goto out_free_sp_nomem;   /* selfplay_free(NULL) does nothing */
    sp->o = *o;
    sp->o.device = NULL;   /* the caller's text; the searcher keeps its own copy */
    sp->rng = o->seed * 0x2545f4914f6cdd1dull + 12345;
    sp->gen = gen;
    sp->games = calloc((size_t)o->parallel, sizeof *sp->games);
    sp->targets = calloc((size_t)o->parallel, sizeof *sp->targets);
    sp->opp_targets = calloc((size_t)o->parallel, sizeof *sp->opp_targets);
    if (!sp->games || !sp->targets || !sp->opp_targets)
        goto out_free_sp_nomem;
    for (int g = 0; g < o->parallel; g++)
        record_init(&sp->games[g].rec);
    searcher_opts_t so;
    selfplay_searcher_opts(o, &so);
    sp->search = searcher_create(model, &so, note, notelen, err, errlen);
    if (!sp->search)
        goto out_free_sp;
    int pr = searcher_patnet_rule(sp->search);
    if (pr >= 0 && pr != (int)o->rule) {
        snprintf(err, errlen, "--patnet %s is a pattern net for %s, but the games are %s",
                 o->patnet, rule_name((rule_t)pr), rule_name(o->rule));
        goto out_free_sp;
    }
    if (o->opponent_frac > 0.0) {
        so.patnet = o->opponent;
        so.mcts.seed ^= 0x9e3779b97f4a7c15ull;   /* its own draws */
        char e2[400];
        sp->opp = searcher_create(model, &so, NULL, 0, e2, sizeof e2);
        if (!sp->opp) {
            snprintf(err, errlen, "--opponent: %s", e2);
            goto out_free_sp;
        }
        pr = searcher_patnet_rule(sp->opp);
        if (pr != (int)o->rule) {
            snprintf(err, errlen, "--opponent %s is a pattern net for %s, but the games are %s",
                     o->opponent, rule_name((rule_t)pr), rule_name(o->rule));
            goto out_free_sp;
        }
    }
    for (int g = 0; g < o->parallel; g++) {
        sp->games[g].own = sp->games[g].tree = searcher_tree(sp->search, g);
        sp->games[g].opp = sp->opp ? searcher_tree(sp->opp, g) : NULL;
    }
    return sp;
out_free_sp_nomem:
    snprintf(err, errlen, "out of memory for self-play");
out_free_sp:
    selfplay_free(sp);
    return NULL;
}

void selfplay_searcher_opts(const selfplay_opts_t *o, searcher_opts_t *out)
{
    searcher_opts_t so;
    searcher_opts_default(&so);
    so.device = o->device ? o->device : "auto";
    so.precision = o->precision;
    so.net_threads = o->threads;
    so.trees = o->parallel;
    so.batch = o->leaves_per_game > 0 ? o->leaves_per_game : 1;
    so.size = o->size;
    so.patnet = o->patnet;
    so.visits = (uint32_t)(o->visits > o->cheap_visits ? o->visits : o->cheap_visits);
    if (o->strong_frac > 0.0 && (uint32_t)o->strong_visits > so.visits)
        so.visits = (uint32_t)o->strong_visits;   /* the trees are sized for the strong side */
    so.cache_bytes = (size_t)o->cache_mb << 20;
    search_settings_apply(&o->search, &so.mcts);
    so.mcts.forced_k = (float)o->forced_k;   /* active only at a noised (full-search) root */
    so.mcts.gumbel_m = o->gumbel;
    so.mcts.gumbel_scale = (float)o->gumbel_scale;
    so.mcts.seed = o->seed * 1000003u;
    /* Threats in self-play: budgets in nodes (the records stay a function
     * of the seed). By default small enough that a move costs about what
     * its search does, and the defence against the opponent's VCT is left
     * to the search (threat pruning and proven values) rather than solved. */
    so.mcts.vct_root_nodes = (uint32_t)o->vct_root_nodes;
    so.mcts.vct_defend_nodes = (uint32_t)o->vct_defend_nodes;
    so.mcts.select_lcb = 0.0f;   /* the most visited move, as the records always had */
    so.mcts.vct_tt_bytes = selfplay_vct_tt_bytes(o);
    *out = so;
}

selfplay_t *selfplay_start(const selfplay_opts_t *o, nn_model_t *m, const char *cmd)
{
    char err[512], note[256];
    selfplay_t *sp = selfplay_create(o, m, m->generation, note, sizeof note, err, sizeof err);
    nn_model_free(m);
    if (!sp) {
        fprintf(stderr, "gomoku %s: %s\n", cmd, err);
        return NULL;
    }
    if (note[0])
        nn_note_print(stderr, note);
    return sp;
}

void selfplay_free(selfplay_t *sp)
{
    if (!sp)
        return;
    if (sp->games)
        for (int g = 0; g < sp->o.parallel; g++)
            record_free(&sp->games[g].rec);
    free(sp->games);
    free(sp->targets);
    free(sp->opp_targets);
    searcher_free(sp->search);
    searcher_free(sp->opp);
    free(sp);
}

void selfplay_set_max_games(selfplay_t *sp, uint64_t n) { sp->max_games = n; }

int selfplay_active(const selfplay_t *sp)
{
    int k = 0;
    for (int g = 0; g < sp->o.parallel; g++)
        k += sp->games[g].active;
    return k;
}

static bool resign_enabled(const selfplay_t *sp) { return sp->o.resign_threshold > 0.0; }

/* A random point within SELFPLAY_OPEN_RADIUS of the centre (clipped to
 * the board). */
static int open_point(selfplay_t *sp, const board_t *b)
{
    int c = b->size / 2, r = SELFPLAY_OPEN_RADIUS;
    int lo = c - r < 0 ? 0 : c - r, hi = c + r >= b->size ? b->size - 1 : c + r;
    int span = hi - lo + 1;
    uint64_t u = util_rng_next(&sp->rng);
    return board_xy(b, lo + (int)(u % (uint64_t)span), lo + (int)((u >> 32) % (uint64_t)span));
}

/* Put 1..open_stones random stones on g's empty board, each a legal move
 * of the side to move (renju: no forbidden point) that ends nothing; the
 * plies go into the record unsearched. False when no such opening came up
 * (a tiny board); the caller then starts from the empty board. */
static bool place_opening(selfplay_t *sp, game_t *g)
{
    int n = 1 + (int)(util_rng_next(&sp->rng) % (uint64_t)sp->o.open_stones);
    for (int draw = 0; draw < 16; draw++) {
        board_init(&g->board, sp->o.size, sp->o.rule);
        int placed = 0;
        for (int tries = 0; placed < n && tries < 64 * n; tries++) {
            int m = open_point(sp, &g->board);
            if (board_check_move(&g->board, m) != MOVE_OK)
                continue;
            board_play(&g->board, m);
            if (board_over(&g->board))
                break;
            placed++;
        }
        if (placed == n && !board_over(&g->board))
            return true;
    }
    return false;
}

/* g's game (re)starts: the empty board, or a random opening when `opening`
 * (the record then holds its plies, unsearched, and RECORD_FLAG_OPENING).
 * -1 when out of memory for the record. */
static int set_start(selfplay_t *sp, game_t *g, bool opening)
{
    record_clear(&g->rec, sp->o.rule, sp->o.size, sp->gen);
    g->tree = g->own;   /* start_move takes the opponent's where it is to move */
    g->balancing = opening && place_opening(sp, g);
    if (!g->balancing)
        board_init(&g->board, sp->o.size, sp->o.rule);
    for (int i = 0; g->balancing && i < g->board.nmoves; i++)
        if (record_add_ply(&g->rec, g->board.moves[i], 0, 0.0f, NULL, 0) < 0)
            return -1;
    g->rec.flags = (uint8_t)((g->balancing ? RECORD_FLAG_OPENING : 0) |
                             (g->no_resign ? RECORD_FLAG_NO_RESIGN : 0));
    mcts_set_root(g->tree, &g->board);
    g->searching = false;
    return 0;
}

static int start_game(selfplay_t *sp, game_t *g)
{
    g->active = true;
    g->would_resign = 0;
    g->no_resign = resign_enabled(sp) && sp_unit(sp) < sp->o.no_resign_frac;
    if (g->no_resign)
        sp->st.no_resign_games++;
    sp->started++;
    bool opening = sp->o.open_frac > 0.0 && sp_unit(sp) < sp->o.open_frac;
    g->open_tries = opening ? 1 : 0;
    /* drawn only when the setting is on, so that without it a seed's
     * records stay what they were */
    g->strong = 0;
    g->opp_side = 0;
    if (sp->opp && sp_unit(sp) < sp->o.opponent_frac) {
        g->opp_side = sp_unit(sp) < 0.5 ? STONE_BLACK : STONE_WHITE;
        sp->st.opponent_games[g->opp_side - STONE_BLACK]++;
    } else if (sp->o.strong_frac > 0.0 && sp_unit(sp) < sp->o.strong_frac) {
        g->strong = sp_unit(sp) < 0.5 ? STONE_BLACK : STONE_WHITE;
        sp->st.strong_games[g->strong - STONE_BLACK]++;
    }
    return set_start(sp, g, opening);
}

/* The playouts of g's next full search: the strong side's, when it is to move. */
static uint32_t full_visits(const selfplay_t *sp, const game_t *g)
{
    bool strong = g->strong != 0 && g->board.to_move == g->strong;
    return (uint32_t)(strong ? sp->o.strong_visits : sp->o.visits);
}

/* The first search of a random opening is done: keep the opening when its
 * root value is balanced enough (1: the search goes on, to a full one's
 * playouts if this move drew a full search), else start g again from
 * another opening, or from the empty board after SELFPLAY_OPEN_TRIES (0).
 * -1 when out of memory. */
static int opening_verdict(selfplay_t *sp, game_t *g)
{
    g->balancing = false;
    if (fabsf(mcts_root_value(g->tree)) <= (float)sp->o.open_balance) {
        sp->st.openings++;
        if (g->full_search)
            g->target = full_visits(sp, g);
        return 1;
    }
    sp->st.openings_redrawn++;
    bool again = g->open_tries < SELFPLAY_OPEN_TRIES;
    if (again)
        g->open_tries++;
    else
        sp->st.openings_given_up++;
    return set_start(sp, g, again);
}

static void start_move(selfplay_t *sp, game_t *g)
{
    const selfplay_opts_t *o = &sp->o;
    if (g->opp_side) {   /* a league game: the side to move searches its own tree */
        g->tree = g->board.to_move == g->opp_side ? g->opp : g->own;
        mcts_set_root(g->tree, &g->board);
    }
    g->full_search = o->cheap_visits == 0 || o->full_frac >= 1.0 || sp_unit(sp) < o->full_frac;
    /* a cheap search never gets more playouts than a full one */
    int cheap = o->cheap_visits < o->visits ? o->cheap_visits : o->visits;
    /* an opening's first search is a cheap one (then made full, if drawn so,
     * once the opening is kept) */
    bool full = g->full_search && !(g->balancing && cheap > 0);
    g->target = full ? full_visits(sp, g) : (uint32_t)cheap;
    if (g->target < 1)
        g->target = 1;
    /* the root's VCT budget follows the search's: a cheap one gets the
     * cheap budget, at most the full one's (read when the search starts) */
    int vct = o->vct_root_nodes;
    if (!full && o->vct_cheap_nodes < vct)
        vct = o->vct_cheap_nodes;
    mcts_set_vct_root_nodes(g->tree, (uint32_t)vct);
    /* the Gumbel root's draw is its noise (the priors stay the net's, for
     * its policy target) */
    mcts_gumbel_noise(g->tree, g->board.nmoves < o->temp_moves);
    g->need_noise = g->full_search && o->dirichlet_alpha > 0.0 && o->noise_frac > 0.0 &&
                    o->gumbel == 0;
    g->searching = true;
}

/* The game is over with `result`: report it, then the slot is free. */
static int end_game(selfplay_t *sp, game_t *g, result_t result, selfplay_game_fn on_game,
                    void *user)
{
    g->rec.result = (uint8_t)result;
    g->active = false;
    g->searching = false;
    sp->st.games++;
    sp->st.results[result]++;
    if (g->strong && result != RESULT_DRAW)
        sp->st.strong_wins[g->strong - STONE_BLACK] +=
            (g->strong == STONE_BLACK) == (result == RESULT_BLACK);
    if (g->opp_side && result != RESULT_DRAW)
        sp->st.opponent_wins[g->opp_side - STONE_BLACK] +=
            (g->opp_side == STONE_BLACK) == (result == RESULT_BLACK);
    if (g->would_resign) {
        result_t loss = g->would_resign == STONE_BLACK ? RESULT_WHITE : RESULT_BLACK;
        if (result != loss)
            sp->st.false_resigns++;
    }
    return on_game ? on_game(user, &g->rec) : 0;
}

/* The search of g is done: record the ply, play the move (or resign).
 * Returns the callback's verdict when the game ended, 0 otherwise, -1 on
 * out of memory. *ended says whether the game ended. */
static int finish_move(selfplay_t *sp, game_t *g, selfplay_game_fn on_game, void *user,
                       bool *ended, char *err, size_t errlen)
{
    *ended = false;
    g->searching = false;
    float v = mcts_root_value(g->tree);   /* side to move */
    int me = g->board.to_move;
    if (resign_enabled(sp) && v < -(float)sp->o.resign_threshold) {
        if (!g->no_resign) {
            g->rec.flags |= RECORD_FLAG_RESIGNED;
            sp->st.resigns++;
            *ended = true;
            return end_game(sp, g, me == STONE_BLACK ? RESULT_WHITE : RESULT_BLACK, on_game,
                            user);
        }
        if (!g->would_resign)
            g->would_resign = me;
    }
    /* the policy target: forced playouts pruned (the move is chosen from
     * the unpruned visits) */
    int nv = mcts_root_policy_visits(g->tree, sp->visits, BOARD_CELLS);
    double temp = g->board.nmoves < sp->o.temp_moves ? 1.0 : sp->o.temp_final;
    int move = mcts_pick_move(g->tree, temp);
    if (move == MOVE_NONE) {   /* renju: black has only forbidden points */
        *ended = true;
        return end_game(sp, g, RESULT_DRAW, on_game, user);
    }
    /* the opponent's plies train the value alone */
    bool policy = g->full_search && me != g->opp_side;
    if (record_add_ply(&g->rec, move, policy, v, sp->visits, nv) < 0) {
        snprintf(err, errlen, "out of memory for a game record");
        return -1;
    }
    move_status_t ms = board_play(&g->board, move);
    assert(ms == MOVE_OK);
    (void)ms;
    /* a game with a strong side keeps no tree: each side searches its own
     * playouts alone (the weak side would otherwise start from the strong
     * side's search of its reply); in a league game start_move sets the
     * next side's root */
    if (g->strong)
        mcts_set_root(g->tree, &g->board);
    else if (!g->opp_side)
        mcts_advance(g->tree, move);
    sp->st.moves++;
    if (board_over(&g->board)) {
        *ended = true;
        return end_game(sp, g, (result_t)g->board.result, on_game, user);
    }
    return 0;
}

int selfplay_step(selfplay_t *sp, selfplay_game_fn on_game, void *user, char *err, size_t errlen)
{
    for (int i = 0; i < sp->o.parallel; i++) {
        game_t *g = &sp->games[i];
        sp->targets[i] = sp->opp_targets[i] = 0;
        if (!g->active) {
            if (sp->max_games && sp->started >= sp->max_games)
                continue;
            if (start_game(sp, g) < 0)
                goto out_nomem;
        }
        if (!g->searching)
            start_move(sp, g);
        if (g->need_noise && mcts_root_expanded(g->tree)) {
            mcts_add_noise(g->tree, sp->o.dirichlet_alpha, sp->o.noise_frac);
            g->need_noise = false;
        }
        if (g->tree == g->own)
            sp->targets[i] = g->target;
        else
            sp->opp_targets[i] = g->target;
    }
    int total = searcher_step(sp->search, sp->targets);
    if (sp->opp)
        total += searcher_step(sp->opp, sp->opp_targets);
    if (total > 0) {
        sp->st.evals += (uint64_t)total;
        sp->st.batches++;
    }
    int finished = 0;
    for (int i = 0; i < sp->o.parallel; i++) {
        game_t *g = &sp->games[i];
        if (!g->active || !g->searching)
            continue;
        if (g->need_noise && mcts_root_expanded(g->tree)) {
            mcts_add_noise(g->tree, sp->o.dirichlet_alpha, sp->o.noise_frac);
            g->need_noise = false;
        }
        if (!mcts_search_done(g->tree, g->target))
            continue;
        if (g->balancing) {
            int k = opening_verdict(sp, g);
            if (k < 0)
                goto out_nomem;
            if (k == 0 || !mcts_search_done(g->tree, g->target))
                continue;
        }
        bool ended;
        int r = finish_move(sp, g, on_game, user, &ended, err, errlen);
        if (r < 0)
            return -1;
        if (ended) {
            finished++;
            if (r != 0)
                return finished;
        }
    }
    return finished;
out_nomem:
    snprintf(err, errlen, "out of memory for a game record");
    return -1;
}

int selfplay_set_model(selfplay_t *sp, const nn_model_t *model, uint64_t gen, char *err,
                       size_t errlen)
{
    if (searcher_set_model(sp->search, model, err, errlen) != 0)
        return -1;
    sp->gen = gen;
    return 0;
}

void selfplay_get_stats(const selfplay_t *sp, selfplay_stats_t *out)
{
    *out = sp->st;
    searcher_stats_t ss;
    searcher_get_stats(sp->search, &ss);
    out->cache_hits = ss.cache_hits;
    for (int g = 0; g < sp->o.parallel; g++)
        for (int k = 0; k < 2; k++) {
            const mcts_t *t = k ? sp->games[g].opp : sp->games[g].own;
            if (!t)
                continue;
            out->vct_checks += mcts_vct_checks(t);
            out->vct_wins += mcts_vct_wins(t);
            out->vct_defences += mcts_vct_defences(t);
        }
}
