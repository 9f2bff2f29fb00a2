/* The protocol engine's move chooser; see brain.h. */
#include "play/brain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bot.h"
#include "play/searcher.h"
#include "util/util.h"

#define DEFAULT_TREE_BYTES ((size_t)256 << 20)
#define DEFAULT_CACHE_BYTES ((size_t)64 << 20)
#define MIN_TREE_BYTES ((size_t)4 << 20)
#define PROCESS_BASE_BYTES ((size_t)48 << 20)   /* code, stacks, stdio, net buffers */
#define WARMUP_MS 30.0                /* a search at start-up, off any move's clock */

struct brain {
    bool is_bot;
    bot_kind_t bot;
    int nthreads;               /* search threads, each with its own net */
    searcher_t *searcher;       /* models: net(s), evaluators, cache and the tree */
    mcts_t *tree;               /* the searcher's tree (NULL after a failed resize) */
    size_t tree_bytes, cache_bytes;   /* what the current tree/cache were made with */
    size_t model_bytes;
    long long max_memory;       /* bytes, 0 no limit */
    int board_max;
    uint64_t rng;
    int filtered;               /* genmove set a root filter on the board of hash filter_hash */
    uint64_t filter_hash;
    double progress_ms;         /* brain_set_progress */
    brain_progress_fn progress;
    void *progress_user;
};

bool brain_is_bot(const brain_t *br) { return br->is_bot; }
int brain_board_max(const brain_t *br) { return br->board_max; }
uint64_t *brain_rng(brain_t *br) { return &br->rng; }

/* Tree and cache sized from max_memory: what is left after the model and
 * the process itself, 3/4 tree and 1/4 cache. 0 when max_memory is too
 * small to play. */
size_t brain_memory_budget(const brain_t *br, char *err, size_t errlen)
{
    if (br->is_bot)
        return 0;
    if (br->max_memory <= 0)
        return DEFAULT_TREE_BYTES + DEFAULT_CACHE_BYTES;
    size_t fixed = PROCESS_BASE_BYTES + br->model_bytes;
    if ((unsigned long long)br->max_memory < fixed + MIN_TREE_BYTES) {
        if (err)
            snprintf(err, errlen, "max_memory %lld bytes is too small: this engine needs %zu MiB",
                     br->max_memory, (fixed + MIN_TREE_BYTES) >> 20);
        return 0;
    }
    size_t left = (size_t)br->max_memory - fixed;
    size_t cap = DEFAULT_TREE_BYTES * 4 + DEFAULT_CACHE_BYTES * 4;
    return left < cap ? left : cap;
}

/* Tree and cache resized when max_memory changed; -1 with err. */
static int ensure_tree(brain_t *br, char *err, size_t errlen)
{
    if (br->is_bot)
        return 0;
    size_t total = brain_memory_budget(br, err, errlen);
    if (total == 0)
        return -1;
    size_t cache_bytes = total / 4, tree_bytes = total - cache_bytes;
    if (br->tree && tree_bytes == br->tree_bytes && cache_bytes == br->cache_bytes)
        return 0;
    br->tree = NULL;
    if (searcher_set_memory(br->searcher, tree_bytes, cache_bytes, err, errlen))
        return -1;
    br->tree = searcher_tree(br->searcher, 0);
    br->tree_bytes = tree_bytes;
    br->cache_bytes = cache_bytes;
    return 0;
}

int brain_set_max_memory(brain_t *br, long long bytes, char *err, size_t errlen)
{
    br->max_memory = bytes;
    return ensure_tree(br, err, errlen);
}

void brain_set_progress(brain_t *br, double interval_ms, brain_progress_fn fn, void *user)
{
    br->progress_ms = interval_ms < 1.0 ? 1.0 : interval_ms;
    br->progress = fn;
    br->progress_user = user;
}

/* A timed search in slices of progress_ms, the progress callback after
 * each but the last; r sums the slices. */
static int search_sliced(brain_t *br, const board_t *b, double budget_ms, mcts_limits_t *lim,
                         mcts_result_t *r, char *err, size_t errlen)
{
    double t0 = util_now_ms();
    uint64_t playouts = 0, evals = 0;
    double threads_ms = 0.0, watch_ms = 0.0;
    lim->root_time_ms = budget_ms;
    for (;;) {
        double left = budget_ms - (util_now_ms() - t0);
        lim->time_ms = left < br->progress_ms ? left : br->progress_ms;
        if (lim->time_ms < 1.0)
            lim->time_ms = 1.0;
        if (searcher_search(br->searcher, b, lim, r, err, errlen))
            return -1;
        uint64_t slice = r->playouts;
        playouts += r->playouts;
        evals += r->evals;
        threads_ms += r->threads_ms;
        watch_ms += r->watch_ms;
        r->playouts = playouts;
        r->evals = evals;
        r->threads_ms = threads_ms;
        r->watch_ms = watch_ms;
        r->seconds = (util_now_ms() - t0) / 1e3;
        r->playouts_per_s = r->seconds > 0.0 ? (double)playouts / r->seconds : 0.0;
        bool stopped = lim->stop && __atomic_load_n(lim->stop, __ATOMIC_RELAXED) != 0;
        if (stopped || r->proven != 0 || r->mem_full || slice == 0 ||
            r->seconds * 1e3 >= budget_ms - 1.0)
            return 0;
        br->progress(br->progress_user, r);
    }
}

int brain_search(brain_t *br, const board_t *b, double budget_ms, const volatile int *stop,
                 mcts_result_t *r, char *err, size_t errlen)
{
    if (ensure_tree(br, err, errlen))
        return -1;
    mcts_sync_root(br->tree, b);   /* for the visit count below; searcher_search syncs too */
    mcts_limits_t lim = {0};
    lim.stop = stop;
    if (budget_ms < 1.0)
        lim.visits = mcts_root_n(br->tree) + 1;
    else if (br->progress)
        return search_sliced(br, b, budget_ms, &lim, r, err, errlen);
    else
        lim.time_ms = budget_ms;
    return searcher_search(br->searcher, b, &lim, r, err, errlen);
}

/* Only the legal moves of b that are not blocked as the root's children
 * (all of them when none is left). A filter set here is dropped again by
 * the next call without one on the same position, so that it never
 * outlives the command that asked for it. */
static void root_filter(brain_t *br, const board_t *b, const uint8_t *blocked)
{
    int allowed[BOARD_CELLS], n = 0, nblocked = 0, any = 0;
    for (int m = 0; blocked && m < board_npoints(b) && !any; m++)
        any = blocked[m] && b->cells[m] == STONE_EMPTY;
    for (int m = 0; any && m < board_npoints(b); m++) {
        if (board_check_move(b, m) != MOVE_OK)
            continue;
        if (blocked && blocked[m])
            nblocked++;
        else
            allowed[n++] = m;
    }
    int moves[BOARD_CELLS];
    if (nblocked > 0 && n > 0) {
        /* the same filter on the same root already (a continuous game's
         * next move, a second look): keep the tree */
        const board_t *r = mcts_root_board(br->tree);
        bool same = r->hash == b->hash && r->nmoves == b->nmoves &&
                    mcts_root_filter(br->tree, moves) == n &&
                    memcmp(moves, allowed, (size_t)n * sizeof moves[0]) == 0;
        if (!same)
            mcts_set_root_filter(br->tree, b, allowed, n);
        br->filtered = 1;
        br->filter_hash = b->hash;
        return;
    }
    if (br->filtered && b->hash == br->filter_hash &&
        mcts_root_board(br->tree)->hash == b->hash && mcts_root_filter(br->tree, moves) > 0)
        mcts_set_root(br->tree, b);
    br->filtered = 0;
}

int brain_root_children(const brain_t *br, mcts_child_info_t *out, int max)
{
    return br->tree ? mcts_root_children(br->tree, out, max) : 0;
}

int brain_child_pv(const brain_t *br, int move, int *pv, int max)
{
    return br->tree ? mcts_root_child_pv(br->tree, move, pv, max) : 0;
}

/* A legal point that is not blocked instead of `move` when `move` is
 * blocked: a winning point, else the most visited such root child, else
 * the free point nearest the centre. MOVE_NONE when there is none. */
static int unblocked_move(const brain_t *br, const board_t *b, const uint8_t *blocked, int move)
{
    if (move == MOVE_NONE || !blocked || !blocked[move])
        return move;
    for (int m = 0; m < board_npoints(b); m++)
        if (!blocked[m] && board_is_winning_move(b, m))
            return m;
    if (br->tree) {
        mcts_child_info_t ch[BOARD_CELLS];
        int n = mcts_root_children(br->tree, ch, BOARD_CELLS);
        int best = MOVE_NONE;
        uint32_t best_n = 0;
        float best_p = -1.0f;
        for (int i = 0; i < n; i++) {
            int m = ch[i].move;
            if (blocked[m] || board_check_move(b, m) != MOVE_OK)
                continue;
            if (ch[i].visits > best_n || (ch[i].visits == best_n && ch[i].prior > best_p)) {
                best = m;
                best_n = ch[i].visits;
                best_p = ch[i].prior;
            }
        }
        if (best != MOVE_NONE)
            return best;
    }
    int c = b->size / 2, best = MOVE_NONE, best_d = 1 << 30;
    for (int m = 0; m < board_npoints(b); m++) {
        int dx = m % b->size - c, dy = m / b->size - c, d = dx * dx + dy * dy;
        if (!blocked[m] && d < best_d && board_check_move(b, m) == MOVE_OK) {
            best = m;
            best_d = d;
        }
    }
    return best;
}

int brain_genmove(brain_t *br, const board_t *b, const uint8_t *blocked, double budget_ms,
                  const volatile int *stop, brain_move_t *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->move = MOVE_NONE;
    if (br->is_bot) {
        m->move = bot_move(br->bot, b, &br->rng);
    } else {
        if (ensure_tree(br, err, errlen))
            return -1;
        root_filter(br, b, blocked);
        if (brain_search(br, b, budget_ms, stop, &m->r, err, errlen))
            return -1;
        m->searched = budget_ms >= 1.0;
        m->move = mcts_pick_move(br->tree, 0.0);
        if (m->move == MOVE_NONE && stop && *stop) {
            /* stopped before the root was expanded: the policy's move, as
             * with no time at all */
            if (brain_search(br, b, 0.0, NULL, &m->r, err, errlen))
                return -1;
            m->searched = 0;
            m->move = mcts_pick_move(br->tree, 0.0);
        }
    }
    m->move = unblocked_move(br, b, blocked, m->move);
    if (m->move == MOVE_NONE || board_check_move(b, m->move) != MOVE_OK) {
        snprintf(err, errlen, "no legal move");
        return -1;
    }
    return 0;
}

double brain_value(brain_t *br, const board_t *b, double budget_ms, const volatile int *stop,
                   int *failed, char *err, size_t errlen)
{
    *failed = 0;
    if (br->is_bot)
        return NAN;
    mcts_result_t r;
    if (ensure_tree(br, err, errlen) == 0)
        root_filter(br, b, NULL);
    if (brain_search(br, b, budget_ms, stop, &r, err, errlen)) {
        *failed = 1;
        return NAN;
    }
    return r.value;
}

void brain_played(brain_t *br, int move)
{
    /* After the reply, off the clock: keeping the subtree may compact the
     * tree (copying it and touching fresh memory, ~10 ms measured). */
    if (br->tree)
        mcts_advance(br->tree, move);
}

void brain_set_position(brain_t *br, const board_t *b)
{
    if (br->tree)
        mcts_set_root(br->tree, b);
}

static int load(brain_t *br, const brain_opts_t *o, char *err, size_t errlen)
{
    const char *spec = o->model;
    br->board_max = BOARD_MAX;
    if (strncmp(spec, "bot:", 4) == 0) {
        br->is_bot = true;
        if (!bot_parse(spec + 4, &br->bot)) {
            snprintf(err, errlen, "unknown bot '%s' (bots: %s)", spec, BOT_LIST);
            return -1;
        }
        return 0;
    }
    nn_model_t *model = NULL;
    bool patnet = strncmp(spec, "patnet:", 7) == 0;
    if (strcmp(spec, "mcts:uniform") != 0 && !patnet) {
        model = nn_model_load(spec, err, errlen);
        if (!model)
            return -1;
        br->board_max = model->cfg.board_max;
        /* weights and the net's buffers, one net per search thread */
        br->model_bytes = model->nparams * sizeof(float) * 2 * (size_t)br->nthreads;
    }
    size_t total = brain_memory_budget(br, NULL, 0);
    searcher_opts_t so;
    searcher_opts_default(&so);
    so.device = o->device;
    so.precision = o->precision;
    so.search_threads = br->nthreads;
    so.net_threads = 1;
    so.size = br->board_max < BOARD_DEFAULT ? br->board_max : BOARD_DEFAULT;
    so.cache_bytes = total / 4;
    so.tree_bytes = total - so.cache_bytes;
    so.mcts.seed = o->seed;
    so.patnet = patnet ? spec + 7 : NULL;
    searcher_opts_apply(&so, &o->search);
    char note[256] = "";
    br->searcher = searcher_create(model, &so, note, sizeof note, err, errlen);
    nn_model_free(model);
    if (!br->searcher)
        return -1;
    if (note[0] && o->who)
        fprintf(stderr, "%s: %s\n", o->who, note);
    br->tree = searcher_tree(br->searcher, 0);
    br->board_max = searcher_board_max(br->searcher);   /* a pattern net's root net's */
    br->tree_bytes = so.tree_bytes;
    br->cache_bytes = so.cache_bytes;
    return 0;
}

void brain_free(brain_t *br)
{
    if (!br)
        return;
    searcher_free(br->searcher);
    free(br);
}

/* The first call of each net makes its buffers and threads: not on a
 * move's clock. A short timed search gives every search thread a batch. */
static int warm_up(brain_t *br, char *err, size_t errlen)
{
    board_t b;
    mcts_result_t r;
    board_init(&b, br->board_max < BOARD_DEFAULT ? br->board_max : BOARD_DEFAULT,
               RULE_FREESTYLE);
    return brain_search(br, &b, WARMUP_MS, NULL, &r, err, errlen);
}

brain_t *brain_create(const brain_opts_t *o, char *err, size_t errlen)
{
    brain_t *br = calloc(1, sizeof *br);
    if (!br) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    br->nthreads = o->threads < 1 ? 1 : o->threads > BRAIN_MAX_THREADS ? BRAIN_MAX_THREADS
                                                                        : o->threads;
    br->rng = o->seed ^ 0x5bd1e995u;
    if (load(br, o, err, errlen) != 0 || (!br->is_bot && warm_up(br, err, errlen) != 0)) {
        brain_free(br);
        return NULL;
    }
    return br;
}
