/* Random, greedy, VCF and VCT bots; see bot.h. */
#include <assert.h>
#include <string.h>

#include "engine/bot.h"
#include "engine/line.h"
#include "util/util.h"

static const char *const bot_names[BOT_COUNT] = {
    [BOT_RANDOM] = "random", [BOT_GREEDY] = "greedy", [BOT_VCF] = "vcf", [BOT_VCT] = "vct",
};

bool bot_parse(const char *name, bot_kind_t *out)
{
    int k = util_name_find(bot_names, BOT_COUNT, name);
    if (k >= 0)
        *out = (bot_kind_t)k;
    return k >= 0;
}

const char *bot_name(bot_kind_t k) { return util_name_of(bot_names, BOT_COUNT, (int)k); }

static int rand_below(uint64_t *rng, int n)
{
    return (int)util_rng_below(rng, (uint32_t)n);
}

int bot_random_move(const board_t *b, uint64_t *rng)
{
    int empty[BOARD_CELLS], n = 0;
    if (board_over(b))
        return MOVE_NONE;
    for (int m = 0; m < board_npoints(b); m++)
        if (b->cells[m] == STONE_EMPTY)
            empty[n++] = m;
    bool renju_black = b->rule == RULE_RENJU && b->to_move == STONE_BLACK;
    while (n > 0) {
        int i = rand_below(rng, n);
        if (!renju_black || !board_is_forbidden(b, empty[i]))
            return empty[i];
        empty[i] = empty[--n];   /* drop the forbidden point, draw again */
    }
    return MOVE_NONE;
}

/* Value of colour c playing the empty point move. */
static double threat_value(const board_t *b, int move, int c)
{
    int n[THREAT_COUNT];
    board_threat_lines(b, move, c, n);
    if (n[THREAT_FIVE])
        return 1e7;
    if (n[THREAT_OPEN_FOUR] || n[THREAT_FOUR] >= 2)
        return 1e5;
    if (n[THREAT_FOUR] && n[THREAT_OPEN_THREE])
        return 5e4;
    if (n[THREAT_OPEN_THREE] >= 2)
        return 2e4;
    return n[THREAT_FOUR] * 1500.0 + n[THREAT_OPEN_THREE] * 1000.0 + n[THREAT_THREE] * 150.0 +
           n[THREAT_OPEN_TWO] * 100.0 + n[THREAT_TWO] * 20.0;
}

/* Score of the empty point move for the side to move; black_view is the
 * same position with black to move when the opponent is renju black (so
 * its forbidden points can be told apart: taking one from black is worth
 * nothing), else NULL. */
static double greedy_score(const board_t *b, const board_t *black_view, int move)
{
    int me = b->to_move, opp = STONE_BLACK + STONE_WHITE - me;
    double block = black_view && board_is_forbidden(black_view, move)
                       ? 0.0 : threat_value(b, move, opp);
    return threat_value(b, move, me) + 0.8 * block;
}

double bot_greedy_score(const board_t *b, int move)
{
    if (b->rule == RULE_RENJU && b->to_move == STONE_WHITE) {
        board_t v = *b;
        v.to_move = STONE_BLACK;
        return greedy_score(b, &v, move);
    }
    return greedy_score(b, NULL, move);
}

/* Would colour c make a winning five at the empty point move? */
static bool five_for(const board_t *b, int move, int c)
{
    uint8_t l[LINE_LEN];
    for (int d = 0; d < NDIRS; d++) {
        line_read(b->cells, b->size, move, d, l);
        if (rule_is_five(b->rule, c, line_run(l, c)))
            return true;
    }
    return false;
}

static int pick_best(const board_t *b, const int *cand, int n, uint64_t *rng);

/* The greedy bot's candidates: legal points within two of a stone; only
 * the winning point when there is one, only the blocks when the opponent
 * threatens five; the centre on an empty board. Returns the count (0:
 * none near, play at random). */
static int greedy_candidates(const board_t *b, int *cand)
{
    int size = b->size, npts = board_npoints(b);
    int me = b->to_move, opp = STONE_BLACK + STONE_WHITE - me;
    uint8_t near[BOARD_CELLS] = {0};
    bool any = false;
    for (int m = 0; m < npts; m++) {
        if (b->cells[m] == STONE_EMPTY)
            continue;
        any = true;
        int x0 = m % size, y0 = m / size;
        for (int y = y0 - 2; y <= y0 + 2; y++)
            for (int x = x0 - 2; x <= x0 + 2; x++)
                if (x >= 0 && x < size && y >= 0 && y < size)
                    near[y * size + x] = 1;
    }
    int centre = (size / 2) * size + size / 2;
    if (!any && board_check_move(b, centre) == MOVE_OK) {
        cand[0] = centre;
        return 1;
    }
    int n = 0;
    for (int m = 0; m < npts; m++)
        if (near[m] && board_check_move(b, m) == MOVE_OK)
            cand[n++] = m;
    for (int i = 0; i < n; i++)
        if (five_for(b, cand[i], me)) {
            cand[0] = cand[i];
            return 1;
        }
    int nblock = 0;
    for (int i = 0; i < n; i++)
        if (five_for(b, cand[i], opp))
            cand[nblock++] = cand[i];   /* only the blocks stay candidates */
    return nblock > 0 ? nblock : n;
}

int bot_greedy_move(const board_t *b, uint64_t *rng)
{
    if (board_over(b))
        return MOVE_NONE;
    int cand[BOARD_CELLS];
    int n = greedy_candidates(b, cand);
    return n > 0 ? pick_best(b, cand, n, rng) : bot_random_move(b, rng);
}

/* The candidate with the best greedy score, ties broken by rng. */
static int pick_best(const board_t *b, const int *cand, int n, uint64_t *rng)
{
    board_t view, *black_view = NULL;
    if (b->rule == RULE_RENJU && b->to_move == STONE_WHITE) {
        view = *b;
        view.to_move = STONE_BLACK;
        black_view = &view;
    }
    int best = MOVE_NONE, ties = 0;
    double best_score = -1.0;
    for (int i = 0; i < n; i++) {
        double s = greedy_score(b, black_view, cand[i]);
        if (s > best_score) {
            best_score = s;
            best = cand[i];
            ties = 1;
        } else if (s == best_score && rand_below(rng, ++ties) == 0) {
            best = cand[i];
        }
    }
    assert(best != MOVE_NONE);
    return best;
}

/* Has the side to move of b a forced win found within the budgets: a
 * VCF, or (t not NULL) a VCT? */
static bool has_win(const board_t *b, vcf_t *f, const vcf_limits_t *fl, vct_t *t,
                    const vct_limits_t *tl)
{
    return vcf_solve(f, b, fl, NULL) == VCF_WIN || (t && vct_solve(t, b, tl, NULL) == VCT_WIN);
}

/* Among candidates, the best by greedy score that leaves the opponent no
 * forced win (has_win), preferring one after which the bot would have one
 * if the opponent passed (a threat the opponent must answer); the first
 * BOT_VCF_TOP by score are tried. MOVE_NONE when each gives the opponent
 * a win. */
static int safe_move(const board_t *b, int *cand, int n, vcf_t *s, const vcf_limits_t *lim,
                     vct_t *t, const vct_limits_t *tlim)
{
    double score[BOARD_CELLS];
    for (int i = 0; i < n; i++)
        score[i] = bot_greedy_score(b, cand[i]);
    for (int i = 1; i < n; i++) {   /* insertion sort, best first */
        int c = cand[i];
        double v = score[i];
        int j = i;
        for (; j > 0 && score[j - 1] < v; j--) {
            cand[j] = cand[j - 1];
            score[j] = score[j - 1];
        }
        cand[j] = c;
        score[j] = v;
    }
    int safe = MOVE_NONE;
    for (int i = 0; i < n && i < BOT_VCF_TOP; i++) {
        board_t after = *b;
        board_play(&after, cand[i]);
        if (board_over(&after))
            return cand[i];
        if (has_win(&after, s, lim, t, tlim))
            continue;   /* the opponent would have a forced win */
        board_pass(&after);
        if (has_win(&after, s, lim, t, tlim))
            return cand[i];
        if (safe == MOVE_NONE)
            safe = cand[i];
    }
    return safe;
}

int bot_vcf_move(const board_t *b, uint64_t *rng, vcf_t *solver)
{
    if (board_over(b))
        return MOVE_NONE;
    vcf_t *s = solver;
    if (!s) {
        char err[128];
        s = vcf_create((size_t)1 << 20, err, sizeof err);
        if (!s)
            return bot_greedy_move(b, rng);   /* out of memory: still a sane move */
    }
    const vcf_limits_t attack = {.nodes = BOT_VCF_NODES};
    const vcf_limits_t defend = {.nodes = BOT_VCF_DEFEND_NODES};
    vcf_result_t r;
    int move = MOVE_NONE, cand[BOARD_CELLS];
    if (vcf_solve(s, b, &attack, &r) == VCF_WIN) {
        move = r.line[0];
    } else {
        int n = vcf_defend(s, b, &defend, cand, NULL);
        if (n < 0)
            n = greedy_candidates(b, cand);
        move = n > 0 ? safe_move(b, cand, n, s, &defend, NULL, NULL) : MOVE_NONE;
        if (move == MOVE_NONE)
            move = bot_greedy_move(b, rng);
    }
    if (s != solver)
        vcf_free(s);
    return move;
}

int bot_vct_move(const board_t *b, uint64_t *rng, vcf_t *vcf, vct_t *vct)
{
    if (board_over(b))
        return MOVE_NONE;
    char err[128];
    vcf_t *f = vcf ? vcf : vcf_create((size_t)1 << 20, err, sizeof err);
    vct_t *t = vct ? vct : vct_create((size_t)2 << 20, err, sizeof err);
    int move = MOVE_NONE, cand[BOARD_CELLS];
    if (!f || !t)
        goto out_free;   /* out of memory: greedy's move below */
    const vcf_limits_t vcf_attack = {.nodes = BOT_VCF_NODES};
    const vcf_limits_t vcf_defend_lim = {.nodes = BOT_VCF_DEFEND_NODES};
    const vct_limits_t attack = {.nodes = BOT_VCT_NODES};
    const vct_limits_t defend = {.nodes = BOT_VCT_DEFEND_NODES};
    vct_result_t r;
    board_t flip = *b;   /* the opponent's threats, as if it were to move */
    board_pass(&flip);
    if (vcf_solve(f, b, &vcf_attack, NULL) == VCF_WIN ||
        vcf_solve(f, &flip, &vcf_defend_lim, NULL) == VCF_WIN) {
        move = bot_vcf_move(b, rng, f);   /* a VCF to play or to stop comes first */
    } else if (vct_solve(t, b, &attack, &r) == VCT_WIN) {
        move = r.line[0];
    } else if (vct_solve(t, &flip, &attack, NULL) == VCT_WIN) {
        /* the best few by greedy score first, then all of vct_defend's */
        int n = greedy_candidates(b, cand);
        move = safe_move(b, cand, n, f, &vcf_defend_lim, t, &defend);
        if (move == MOVE_NONE && (n = vct_defend(t, b, &defend, cand, NULL)) > 0)
            move = pick_best(b, cand, n, rng);
        if (move == MOVE_NONE)
            move = bot_vcf_move(b, rng, f);
    } else {
        move = bot_vcf_move(b, rng, f);
    }
out_free:
    if (f != vcf)
        vcf_free(f);
    if (t != vct)
        vct_free(t);
    return move != MOVE_NONE ? move : bot_greedy_move(b, rng);
}

int bot_move(bot_kind_t k, const board_t *b, uint64_t *rng)
{
    switch (k) {
    case BOT_GREEDY: return bot_greedy_move(b, rng);
    case BOT_VCF: return bot_vcf_move(b, rng, NULL);
    case BOT_VCT: return bot_vct_move(b, rng, NULL, NULL);
    default: return bot_random_move(b, rng);
    }
}
