/* gomoku model init|grow|info|loss: create, grow and inspect weights files (.gzm). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cmds.h"
#include "nn/eval.h"
#include "nn/nn.h"
#include "nn/patnet.h"
#include "nn/sgemm.h"
#include "play/searcher.h"
#include "selfplay/args.h"
#include "selfplay/replay.h"
#include "selfplay/selfplay.h"
#include "util/util.h"

static const cmd_help_t help_model = {
    "model", BY_MODEL, "gomoku model init|grow|info|loss [options]",
    "Create a randomly initialised network (init), grow one (grow), describe a weights\n"
    "file (info), measure its loss on games (loss) or teach a pattern net (distill).\n"
    "  gomoku model init --blocks B --channels C [--board-max M --rule R --planes F\n"
    "                    --value-pool P --seed S] --out F\n"
    "  gomoku model grow F --blocks B --channels C [--value-pool P --seed S] --out F2\n"
    "  gomoku model info F\n"
    "  gomoku model loss F GAMES.gzr...\n"
    "  gomoku model distill F GAMES.gzr... --out P.gzp [--epochs E --children K --lr X]\n"
    "'gomoku model SUBCOMMAND --help' lists a subcommand's options."};

static const cmd_help_t help_init = {
    "model init", BY_MODEL, "gomoku model init --blocks B --channels C --out F [options]",
    "Write a new network with random (fixup) initial weights to F, atomically.\n"
    "The same seed gives the same weights."};

static const cmd_help_t help_grow = {
    "model grow", BY_MODEL, "gomoku model grow F --blocks B --channels C --out F2 [options]",
    "Write to F2 the net of F with B residual blocks and C trunk channels (at least\n"
    "F's): every weight of F kept, the new blocks the identity and the new channels\n"
    "unread, so F2 plays as F does until it trains ('gomoku train RUN --init-model F2').\n"
    "--value-pool max gives a mean-pooled value head the maxima too, their weights zero\n"
    "(B and C may be F's own). The new weights that start random come from the seed."};

static const cmd_help_t help_info = {
    "model info", BY_MODEL, "gomoku model info F",
    "Print a weights file's dims, parameter count, training step, generation, rule,\n"
    "file CRC32, size and forward GFLOP per evaluation on its largest board; of a\n"
    "pattern net (.gzp): its format version, dims, table rows, rule and step."};

/* The model at path, or NULL with the reason said on stderr as h's command. */
static nn_model_t *load_or_say(const cmd_help_t *h, const char *path)
{
    char err[512];
    nn_model_t *m = nn_model_load(path, err, sizeof err);
    if (!m)
        fprintf(stderr, "gomoku %s: %s\n", h->cmd, err);
    return m;
}

/* 0 when the output file --out may be written, else the exit status
 * (the reason said on stderr): none named, or one there without --force. */
static int check_out(const cmd_help_t *h, const char *out, bool force)
{
    if (!*out)
        return args_fail(h, "--out is required");
    struct stat st;
    if (!force && stat(out, &st) == 0) {
        fprintf(stderr, "gomoku %s: %s exists (use --force to overwrite)\n", h->cmd, out);
        return 1;
    }
    return 0;
}

static int model_init(int argc, char **argv)
{
    int blocks, channels, board_max, hp, hv, vh;
    const char *out = NULL, *planes = NULL, *pool = NULL;
    rule_t rule;
    uint64_t seed;
    bool force;
    arg_spec_t specs[] = {
        ARG_FLAGS(S_BLOCKS, &blocks, ARG_REQUIRED), ARG_FLAGS(S_CHANNELS, &channels, ARG_REQUIRED),
        ARG(S_BOARD_MAX, &board_max), ARG(S_RULE, &rule), ARG(S_SEED, &seed),
        ARG(S_POLICY_HEAD, &hp), ARG(S_VALUE_HEAD, &hv), ARG(S_VALUE_HIDDEN, &vh),
        ARG(S_PLANES, &planes), ARG(S_VALUE_POOL, &pool),
        ARG_FLAGS(S_MODEL_OUT, &out, ARG_REQUIRED), ARG(S_FORCE, &force),
    };
    int rc = args_parse(&help_init, specs, ARGS_COUNT(specs), argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if ((rc = check_out(&help_init, out, force)) != 0)
        return rc;
    nn_config_t cfg;
    nn_config_default(&cfg, blocks, channels, board_max);
    cfg.policy_head = hp;
    cfg.value_head = hv;
    cfg.value_hidden = vh;
    char err[512];
    if (nn_features_parse(planes, &cfg.features, err, sizeof err) != 0)
        return args_fail(&help_init, "%s", err);
    cfg.in_planes = nn_feature_planes(cfg.features);
    if (nn_value_pool_parse(pool, &cfg.value_pool, err, sizeof err) != 0)
        return args_fail(&help_init, "%s", err);
    nn_model_t *m = nn_model_create(&cfg, seed, err, sizeof err);
    if (!m) {
        fprintf(stderr, "gomoku model init: %s\n", err);
        return 1;
    }
    m->rule = (uint32_t)rule;
    rc = nn_model_save(m, out, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "gomoku model init: %s\n", err);
    else
        printf("wrote %s: %d blocks x %d channels, board max %d, %s, %s planes, value pooling %s, "
               "%zu parameters, seed %llu\n", out, blocks, channels, board_max, rule_name(rule),
               nn_features_name(cfg.features), nn_value_pool_name(cfg.value_pool), m->nparams,
               (unsigned long long)seed);
    nn_model_free(m);
    return rc == 0 ? 0 : 1;
}

static int model_grow(int argc, char **argv)
{
    int blocks, channels;
    const char *out = NULL, *pool = NULL;
    uint64_t seed;
    bool force;
    char *pos[1];
    int npos = 0;
    arg_spec_t specs[] = {
        ARG_FLAGS(S_BLOCKS, &blocks, ARG_REQUIRED), ARG_FLAGS(S_CHANNELS, &channels, ARG_REQUIRED),
        ARG(S_SEED, &seed), ARG(S_VALUE_POOL, &pool), ARG_FLAGS(S_MODEL_OUT, &out, ARG_REQUIRED),
        ARG(S_FORCE, &force),
    };
    int rc = args_parse(&help_grow, specs, ARGS_COUNT(specs), argc, argv, pos, 1, &npos);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (npos < 1)
        return args_fail(&help_grow, "a model file is required");
    if ((rc = check_out(&help_grow, out, force)) != 0)
        return rc;
    char err[512];
    int want_pool = NN_POOL_MEAN;
    bool pool_given = args_given(specs, ARGS_COUNT(specs), S_VALUE_POOL);
    if (nn_value_pool_parse(pool, &want_pool, err, sizeof err) != 0)
        return args_fail(&help_grow, "%s", err);
    nn_model_t *m = load_or_say(&help_grow, pos[0]);
    if (!m)
        return 1;
    nn_model_t *g = nn_model_grow(m, blocks, channels, seed, err, sizeof err);
    rc = g ? 0 : -1;
    if (rc == 0 && pool_given)
        rc = nn_model_widen_value_pool(g, want_pool, err, sizeof err);
    if (rc == 0)
        rc = nn_model_save(g, out, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "gomoku model grow: %s\n", err);
    else
        printf("wrote %s: %d blocks x %d channels from %s's %d x %d, value pooling %s, "
               "%zu parameters (was %zu), step %llu, seed %llu\n", out, blocks, channels, pos[0],
               m->cfg.blocks, m->cfg.channels, nn_value_pool_name(g->cfg.value_pool),
               g->nparams, m->nparams, (unsigned long long)g->step,
               (unsigned long long)seed);
    nn_model_free(g);
    nn_model_free(m);
    return rc == 0 ? 0 : 1;
}

static const cmd_help_t help_loss = {
    "model loss", BY_MODEL, "gomoku model loss F GAMES.gzr...",
    "Held-out loss: the mean policy and value cross-entropy (no L2) of model F on\n"
    "every fully searched position of the games (untransformed), on the CPU.\n"
    "Games of another rule or board size than F's are skipped and counted."};

/* The start of a subcommand that takes no options: parses its positionals
 * into pos (at most maxpos, at least min: fewer is the error MISSING) and
 * loads the model file named first. NULL when either fails, *status then
 * the command's exit status (the reason said on stderr). */
static nn_model_t *parse_and_load(const cmd_help_t *h, int argc, char **argv, char **pos,
                                  int min, int maxpos, const char *missing, int *npos,
                                  int *status)
{
    *npos = 0;
    int rc = args_parse(h, NULL, 0, argc, argv, pos, maxpos, npos);
    if (rc != ARGS_OK) {
        *status = args_exit_status(rc);
        return NULL;
    }
    if (*npos < min) {
        *status = args_fail(h, "%s", missing);
        return NULL;
    }
    nn_model_t *m = load_or_say(h, pos[0]);
    if (!m)
        *status = 1;
    return m;
}

static int model_loss(int argc, char **argv)
{
    char *pos[256];
    int npos, rc;
    nn_model_t *m = parse_and_load(&help_loss, argc, argv, pos, 2, 256,
                                   "a model file and game files are required", &npos, &rc);
    if (!m)
        return rc;
    char err[512];
    replay_loss_report_t r;
    rc = replay_model_loss(m, (const char *const *)pos + 1, npos - 1, 0, &r, err, sizeof err);
    nn_model_free(m);
    if (rc != 0) {
        fprintf(stderr, "gomoku model loss: %s\n", err);
        return 1;
    }
    char js[4200];
    printf("{\"model\":%s,\"games\":%llu,\"positions\":%llu,\"skipped\":%llu,"
           "\"policy_loss\":%.5f,\"value_loss\":%.5f}\n", util_json_str(pos[0], js, sizeof js),
           (unsigned long long)r.games, (unsigned long long)r.positions,
           (unsigned long long)r.skipped, (double)r.loss.policy, (double)r.loss.value);
    return 0;
}

/* True when the file at path starts as a pattern net's does ("GZPN"). */
static bool is_patnet_file(const char *path)
{
    char magic[4] = {0};
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return false;
    size_t got = fread(magic, 1, 4, fp);
    fclose(fp);
    return got == 4 && memcmp(magic, "GZPN", 4) == 0;
}

/* model info of a pattern net (.gzp): its file, dims, rule and step. */
static int patnet_info(const char *path)
{
    char err[512];
    patnet_t *pn = patnet_load(path, err, sizeof err);
    uint32_t crc = 0;
    struct stat st;
    if (!pn || nn_file_crc(path, &crc, err, sizeof err) != 0 || stat(path, &st) != 0) {
        fprintf(stderr, "gomoku model info: %s\n", err);
        patnet_free(pn);
        return 1;
    }
    uint32_t v = patnet_version(pn);
    printf("file          %s\n", path);
    printf("size          %lld bytes\n", (long long)st.st_size);
    printf("crc32         %08x\n", crc);
    printf("format        GZPN version %u (a pattern net, nn/patnet.h)\n", v);
    printf("features      %d per point\n", PATNET_D);
    printf("value hidden  %d\n", PATNET_H);
    printf("table rows    %d\n", v == 1 ? PATNET_CODES : PATNET_STORED_ROWS);
    printf("parameters    %zu\n", patnet_file_params(v));
    printf("rule          %s\n", rule_name(patnet_rule(pn)));
    printf("step          %llu\n", (unsigned long long)patnet_step(pn));
    patnet_free(pn);
    return 0;
}

static int model_info(int argc, char **argv)
{
    char *pos[1];
    int npos = 0, rc = args_parse(&help_info, NULL, 0, argc, argv, pos, 1, &npos);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (npos == 1 && is_patnet_file(pos[0]))
        return patnet_info(pos[0]);
    nn_model_t *m = parse_and_load(&help_info, argc, argv, pos, 1, 1, "a model file is required",
                                   &npos, &rc);
    if (!m)
        return rc;
    const char *path = pos[0];
    char err[512];
    uint32_t crc = 0;
    struct stat st;
    if (nn_file_crc(path, &crc, err, sizeof err) != 0 || stat(path, &st) != 0) {
        fprintf(stderr, "gomoku model info: %s\n", err);
        nn_model_free(m);
        return 1;
    }
    const nn_config_t *c = &m->cfg;
    int M = c->board_max;
    printf("file          %s\n", path);
    printf("size          %lld bytes\n", (long long)st.st_size);
    printf("crc32         %08x\n", crc);
    printf("format        GZM1 version %d\n", nn_file_version(c));
    printf("blocks        %d\n", c->blocks);
    printf("channels      %d\n", c->channels);
    printf("board max     %d\n", M);
    printf("input planes  %d (%s)\n", c->in_planes, nn_features_name(c->features));
    printf("policy head   %d (%d output%s: policy%s%s)\n", c->policy_head, c->policy_outputs,
           c->policy_outputs > 1 ? "s" : "", c->policy_outputs > 1 ? ", opponent reply" : "",
           c->policy_outputs > 2 ? ", soft policy" : "");
    printf("value head    %d (hidden %d, pooling %s)\n", c->value_head, c->value_hidden,
           c->value_pool == NN_POOL_MEAN_MAX ? "mean and max" : "mean");
    printf("parameters    %zu\n", m->nparams);
    printf("rule          %s\n", rule_name((rule_t)m->rule));
    printf("step          %llu\n", (unsigned long long)m->step);
    printf("generation    %llu\n", (unsigned long long)m->generation);
    printf("forward       %.4f GFLOP per eval on %dx%d\n", nn_flops_per_eval(c, M) / 1e9, M, M);
    nn_model_free(m);
    return 0;
}


static const cmd_help_t help_distill = {
    "model distill", BY_MODEL, "gomoku model distill F GAMES.gzr... --out P.gzp [options]",
    "Teach a pattern net (nn/patnet.h), the search's fast evaluator, to answer as\n"
    "model F does: every position of the games, and --children positions a random\n"
    "move from each, valued by F (its policy and value are the targets); then\n"
    "--epochs passes of Adam over them in minibatches of 64, each shared by\n"
    "--threads threads (at most 16; the result is the same for the same count).\n"
    "Prints the training and held-out losses after each pass (the policy's over\n"
    "the positions with a policy target: a record's cheap plies and a league\n"
    "opponent's train the value alone) and writes P (atomically) after each.\n"
    "--targets records trains on the games' own targets; --targets search on fresh\n"
    "ones (reanalysis): each game position searched anew by the pattern net --init\n"
    "with --search-visits playouts, its visits the policy target and its root\n"
    "value, mixed with the game's result, the value target."};

#define DISTILL_TRAIN_THREADS 16  /* the training's: a minibatch of 64 shared by more gains little */

/* One training position: the board and the teacher's answer. */
typedef struct dpos {
    uint8_t cells[BOARD_CELLS];
    uint8_t to_move;
    uint8_t held_out;
    uint8_t has_policy;          /* a policy target (a record's cheap ply has none: value only) */
    float value;                 /* teacher's, side to move */
    uint16_t policy[BOARD_CELLS]; /* teacher's prior x 65535 */
} dpos_t;

typedef struct dset {
    dpos_t *pos;
    size_t n, cap;
    int size;
    rule_t rule;
    nn_eval_t *ev;
    board_t pend[64];
    uint8_t pend_hold[64];
    int npend;
    float *policy;   /* 64 x BOARD_CELLS */
    board_t *boards; /* --targets search: pos[i]'s board, as the game reached it */
} dset_t;

/* Room in d for k more positions (doubling); -1 on no memory. */
static int dset_grow(dset_t *d, size_t k)
{
    if (d->n + k <= d->cap)
        return 0;
    size_t cap = d->cap ? d->cap * 2 : 4096;
    while (cap < d->n + k)
        cap *= 2;
    dpos_t *p = realloc(d->pos, cap * sizeof *p);
    if (!p)
        return -1;
    d->pos = p;
    if (d->boards) {
        board_t *b = realloc(d->boards, cap * sizeof *b);
        if (!b)
            return -1;
        d->boards = b;
    }
    d->cap = cap;
    return 0;
}

static int dset_flush(dset_t *d)
{
    if (d->npend == 0)
        return 0;
    const board_t *bp[64];
    float value[64];
    for (int i = 0; i < d->npend; i++)
        bp[i] = &d->pend[i];
    nn_eval_eval(d->ev, bp, d->npend, d->policy, value);
    if (dset_grow(d, (size_t)d->npend) != 0)
        return -1;
    for (int i = 0; i < d->npend; i++) {
        dpos_t *o = &d->pos[d->n++];
        memcpy(o->cells, d->pend[i].cells, sizeof o->cells);
        o->to_move = d->pend[i].to_move;
        o->held_out = d->pend_hold[i];
        o->has_policy = 1;
        o->value = value[i];
        const float *row = d->policy + (size_t)i * BOARD_CELLS;
        for (int p = 0; p < BOARD_CELLS; p++) {
            float v = row[p] < 0 ? 0 : row[p] > 1 ? 1 : row[p];
            o->policy[p] = (uint16_t)lrintf(v * 65535.0f);
        }
    }
    d->npend = 0;
    return 0;
}

static int dset_push(dset_t *d, const board_t *b, bool held_out)
{
    d->pend[d->npend] = *b;
    d->pend_hold[d->npend++] = held_out;
    return d->npend == 64 ? dset_flush(d) : 0;
}

/* The position before ply i of game g with the game's own targets: the
 * normalised visits of a full search (none otherwise: the value alone
 * trains) and the result for the side to move mixed with the root value. */
static int dset_push_record(dset_t *d, const board_t *b, const game_record_t *g, uint32_t i,
                            float value_mix, bool won_move, bool held_out)
{
    if (dset_grow(d, 1) != 0)
        return -1;
    const record_ply_t *pl = &g->plies[i];
    if (d->boards)
        d->boards[d->n] = *b;
    dpos_t *o = &d->pos[d->n++];
    memcpy(o->cells, b->cells, sizeof o->cells);
    o->to_move = b->to_move;
    o->held_out = held_out;
    float z = g->result == RESULT_DRAW ? 0.0f
              : g->result == (b->to_move == STONE_BLACK ? RESULT_BLACK : RESULT_WHITE) ? 1.0f
                                                                                     : -1.0f;
    o->value = (1.0f - value_mix) * z + value_mix * pl->root_value;
    memset(o->policy, 0, sizeof o->policy);
    /* a proven win (the search reports a proven root as exactly +1; a mean
     * of playouts reaches +1 only when all of them did): the move played */
    if (won_move && pl->full && pl->root_value == 1.0f) {
        o->policy[pl->move] = 65535;
        o->has_policy = 1;
        return 0;
    }
    uint32_t total = 0;
    for (uint32_t k = 0; pl->full && k < pl->nvisits; k++)
        total += g->visits[pl->visit_off + k].count;
    for (uint32_t k = 0; total > 0 && k < pl->nvisits; k++) {
        const record_visit_t *v = &g->visits[pl->visit_off + k];
        o->policy[v->move] = (uint16_t)lrintf(65535.0f * v->count / total);
    }
    o->has_policy = total > 0;
    return 0;
}

/* A random empty point within two of a stone (or any empty point), or
 * MOVE_NONE when none is legal. */
static int near_move(const board_t *b, uint64_t *rng)
{
    int cand[BOARD_CELLS], n = 0, size = b->size;
    for (int p = 0; p < size * size; p++) {
        if (b->cells[p] != STONE_EMPTY || board_check_move(b, p) != MOVE_OK)
            continue;
        int x = p % size, y = p / size;
        bool near = false;
        for (int dy = -2; dy <= 2 && !near; dy++)
            for (int dx = -2; dx <= 2 && !near; dx++) {
                int xx = x + dx, yy = y + dy;
                near = xx >= 0 && yy >= 0 && xx < size && yy < size &&
                       b->cells[yy * size + xx] != STONE_EMPTY;
            }
        if (near)
            cand[n++] = p;
    }
    return n ? cand[util_rng_below(rng, (uint32_t)n)] : MOVE_NONE;
}

static void dpos_board(const dset_t *d, const dpos_t *p, board_t *b)
{
    board_init(b, d->size, d->rule);
    memcpy(b->cells, p->cells, sizeof b->cells);
    b->to_move = p->to_move;
}

static void dpos_policy(const dpos_t *p, float *out)
{
    for (int i = 0; i < BOARD_CELLS; i++)
        out[i] = p->policy[i] * (1.0f / 65535.0f);
}

/* The held-out positions' floor under the losses: the teacher policy's
 * entropy (the cross-entropy of a perfect copy) and its values' variance
 * (the squared error of the best constant). */
static void dset_floor(const dset_t *d, double *entropy, double *variance)
{
    double h = 0, s = 0, s2 = 0;
    size_t n = 0, np = 0;
    for (size_t i = 0; i < d->n; i++) {
        const dpos_t *p = &d->pos[i];
        if (!p->held_out)
            continue;
        np += p->has_policy;
        for (int k = 0; k < BOARD_CELLS; k++)
            if (p->policy[k]) {
                double t = p->policy[k] / 65535.0;
                h -= t * log(t);
            }
        s += p->value;
        s2 += (double)p->value * p->value;
        n++;
    }
    *entropy = np ? h / np : 0;
    *variance = n ? s2 / n - (s / n) * (s / n) : 0;
}

/* One thread's share of a pass over positions idx[0..n): those at k, k + T,
 * ... added to its trainer (training) or to its losses alone (tr NULL:
 * held-out figures). Its losses add up over the calls. */
typedef struct dshare {
    const dset_t *d;
    const patnet_t *pn;
    patnet_trainer_t *tr;
    const size_t *idx;
    size_t n;
    int k, T;
    double lp, lv;
    size_t np;      /* of its positions, those with a policy target (lp is theirs) */
} dshare_t;

static void *dshare_main(void *arg)
{
    dshare_t *s = arg;
    float pol[BOARD_CELLS];
    for (size_t i = (size_t)s->k; i < s->n; i += (size_t)s->T) {
        const dpos_t *p = &s->d->pos[s->idx[i]];
        board_t b;
        dpos_board(s->d, p, &b);
        dpos_policy(p, pol);
        s->np += p->has_policy;
        if (s->tr)
            patnet_trainer_add(s->tr, &b, pol, p->value, &s->lp, &s->lv);
        else
            patnet_loss(s->pn, &b, pol, p->value, &s->lp, &s->lv);
    }
    return NULL;
}

/* fn on each of the T shares (size bytes each), share 0 on this thread,
 * the others each on a thread of its own (on this one, after, where a
 * thread cannot start). */
static void run_shares(void *(*fn)(void *), void *shares, size_t size, int T)
{
    pthread_t tid[DISTILL_TRAIN_THREADS];
    bool started[DISTILL_TRAIN_THREADS] = {false};
    char *at = shares;
    for (int t = 1; t < T; t++)
        started[t] = pthread_create(&tid[t], NULL, fn, at + (size_t)t * size) == 0;
    fn(at);
    for (int t = 1; t < T; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            fn(at + (size_t)t * size);
    }
}

/* The T shares of idx[0..n). Which positions a share gets does not depend
 * on the threads, so the result is the same for the same T. */
static void dshare_run(dshare_t *sh, int T, const size_t *idx, size_t n)
{
    for (int t = 0; t < T; t++) {
        sh[t].idx = idx;
        sh[t].n = n;
    }
    run_shares(dshare_main, sh, sizeof *sh, T);
}

/* Held-out losses of pn over the n positions held (of d), on T threads:
 * policy cross-entropy and squared value error, summed; *np, the positions
 * with a policy target (the only ones lp sums over). */
static void dset_heldout(const dset_t *d, const patnet_t *pn, const size_t *held, size_t n,
                         int T, double *lp, double *lv, size_t *np)
{
    dshare_t sh[DISTILL_TRAIN_THREADS];
    for (int t = 0; t < T; t++)
        sh[t] = (dshare_t){.d = d, .pn = pn, .k = t, .T = T};
    dshare_run(sh, T, held, n);
    *lp = *lv = 0;
    *np = 0;
    for (int t = 0; t < T; t++) {
        *lp += sh[t].lp;
        *lv += sh[t].lv;
        *np += sh[t].np;
    }
}

/* --targets search: a thread's share of the positions (every T-th from
 * k), each searched on a fresh tree by the pattern net with V playouts:
 * the visits become its policy target (a root proven won: its winning
 * move, mcts_root_policy_visits), and its value target (the game's
 * result for the side to move, as collected) takes the root value's share
 * value_mix. */
typedef struct reanalyse {
    dset_t *d;
    const char *patnet;
    uint32_t visits;
    float value_mix;
    int k, T;
    size_t *done;     /* positions searched by all the threads */
    int rc;
    char err[256];
} reanalyse_t;

static void *reanalyse_main(void *arg)
{
    reanalyse_t *r = arg;
    dset_t *d = r->d;
    searcher_opts_t so;
    searcher_opts_default(&so);
    search_settings_t ss;
    search_settings_default(&ss);
    searcher_opts_apply(&so, &ss);
    so.device = "cpu";
    so.size = d->size;
    so.visits = r->visits;
    so.patnet = r->patnet;
    so.cache_bytes = 0;
    /* self-play's threat budgets: nodes, not time, so the targets are a
     * function of the net and the position */
    so.mcts.vct_root_nodes = SELFPLAY_VCT_ROOT_NODES;
    so.mcts.vct_defend_nodes = 0;
    searcher_t *s = searcher_create(NULL, &so, NULL, 0, r->err, sizeof r->err);
    if (!s) {
        r->rc = -1;
        return NULL;
    }
    mcts_t *t = searcher_tree(s, 0);
    record_visit_t vis[BOARD_CELLS];
    for (size_t i = (size_t)r->k; i < d->n; i += (size_t)r->T) {
        const board_t *b = &d->boards[i];
        mcts_set_root(t, b);
        mcts_limits_t lim = {.visits = r->visits};
        mcts_result_t res;
        if (searcher_search(s, b, &lim, &res, r->err, sizeof r->err) != 0) {
            r->rc = -1;
            break;
        }
        dpos_t *p = &d->pos[i];
        int n = mcts_root_policy_visits(t, vis, BOARD_CELLS);
        uint64_t total = 0;
        for (int j = 0; j < n; j++)
            total += vis[j].count;
        memset(p->policy, 0, sizeof p->policy);
        for (int j = 0; j < n && total > 0; j++)
            p->policy[vis[j].move] = (uint16_t)lrintf(65535.0f * vis[j].count / total);
        p->has_policy = total > 0;
        float v = isfinite(res.value) ? res.value : 0.0f;
        p->value = (1.0f - r->value_mix) * p->value + r->value_mix * v;
        size_t all = __atomic_add_fetch(r->done, 1, __ATOMIC_RELAXED);
        if (r->k == 0 && (i / (size_t)r->T) % 2000 == 1999) {
            printf("distill: searched %zu of %zu positions\n", all, d->n);
            fflush(stdout);
        }
    }
    searcher_free(s);
    return NULL;
}

/* Search every position of d on T threads (reanalyse_main); -1 with err. */
static int reanalyse(dset_t *d, const char *patnet, uint32_t visits, float value_mix, int T,
                     char *err, size_t errlen)
{
    reanalyse_t r[DISTILL_TRAIN_THREADS];
    size_t done = 0;
    for (int t = 0; t < T; t++)
        r[t] = (reanalyse_t){.d = d, .patnet = patnet, .visits = visits,
                             .value_mix = value_mix, .k = t, .T = T, .done = &done};
    run_shares(reanalyse_main, r, sizeof r[0], T);
    for (int t = 0; t < T; t++)
        if (r[t].rc) {
            snprintf(err, errlen, "%s", r[t].err);
            return -1;
        }
    return 0;
}

static int model_distill(int argc, char **argv)
{
    const char *out = NULL, *init = NULL, *targets = NULL, *won = NULL;
    int epochs, children, threads, search_visits;
    double lr, holdout, value_mix;
    uint64_t seed;
    bool force;
    char *pos[256];
    int npos = 0;
    arg_spec_t specs[] = {
        ARG(S_DISTILL_EPOCHS, &epochs), ARG(S_DISTILL_CHILDREN, &children),
        ARG(S_DISTILL_LR, &lr), ARG(S_DISTILL_INIT, &init), ARG(S_DISTILL_THREADS, &threads),
        ARG(S_DISTILL_HOLDOUT, &holdout), ARG(S_DISTILL_TARGETS, &targets),
        ARG(S_DISTILL_VALUE_MIX, &value_mix), ARG(S_DISTILL_SEARCH_VISITS, &search_visits),
        ARG(S_DISTILL_WON, &won), ARG(S_SEED, &seed),
        ARG_FLAGS(S_MODEL_OUT, &out, ARG_REQUIRED), ARG(S_FORCE, &force),
    };
    int rc = args_parse(&help_distill, specs, ARGS_COUNT(specs), argc, argv, pos, 256, &npos);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (npos < 2)
        return args_fail(&help_distill, "a model file and game files are required");
    if ((rc = check_out(&help_distill, out, force)) != 0)
        return rc;
    char err[512], note[256];
    nn_model_t *m = load_or_say(&help_distill, pos[0]);
    if (!m)
        return 1;
    rc = 1;
    dset_t d = {.size = m->cfg.board_max, .rule = (rule_t)m->rule};
    patnet_t *pn = init ? patnet_load(init, err, sizeof err) : patnet_create(d.rule, seed);
    patnet_trainer_t *tr = NULL;
    dshare_t sh[DISTILL_TRAIN_THREADS] = {{0}};   /* the training threads' shares */
    size_t *order = NULL;
    bool from_search = strcmp(targets, "search") == 0;
    bool from_records = from_search || strcmp(targets, "records") == 0;
    bool won_move = strcmp(won, "move") == 0;
    nn_net_t *net = NULL;
    if (!pn) {
        if (!init)
            snprintf(err, sizeof err, "out of memory");
        goto out_fail;
    }
    if (from_search && !init) {
        snprintf(err, sizeof err, "--targets search needs the pattern net to search with "
                                  "(--init)");
        goto out_fail;
    }
    if (from_search && !(d.boards = malloc(sizeof *d.boards))) {   /* grown with pos */
        snprintf(err, sizeof err, "out of memory");
        goto out_fail;
    }
    if (patnet_rule(pn) != d.rule) {
        snprintf(err, sizeof err, "--init %s is a pattern net for %s, but %s plays %s", init,
                 rule_name(patnet_rule(pn)), pos[0], rule_name(d.rule));
        goto out_fail;
    }
    if (!from_records &&
        (!(net = nn_net_create(m, "cpu", 64, threads, note, sizeof note, err, sizeof err)) ||
         !(d.ev = nn_eval_create(net, NULL, 64, err, sizeof err))))
        goto out_fail;
    if (!(d.policy = malloc(64 * BOARD_CELLS * sizeof *d.policy))) {
        snprintf(err, sizeof err, "out of memory");
        goto out_fail;
    }
    uint64_t rng = seed;
    game_record_t g;
    record_init(&g);
    size_t games = 0, skipped = 0;
    double t0 = util_now_ms();
    for (int f = 1; f < npos; f++) {
        record_reader_t *rr = record_reader_open(pos[f], err, sizeof err);
        if (!rr) {
            record_free(&g);
            goto out_fail;
        }
        int k;
        char why[256];
        while ((k = record_reader_next(rr, &g, why, sizeof why)) != 0) {
            if (k < 0 || g.size != d.size || g.rule != d.rule) {
                skipped++;
                continue;
            }
            bool held = util_rng_unit(&rng) < holdout;
            board_t b;
            board_init(&b, d.size, d.rule);
            for (uint32_t i = 0; i < g.nplies && !board_over(&b); i++) {
                if (from_records) {
                    /* search targets: the result alone here, the root value added later */
                    float mix = from_search ? 0.0f : (float)value_mix;
                    if (dset_push_record(&d, &b, &g, i, mix, won_move, held) != 0)
                        goto out_oom;
                    if (board_play(&b, g.plies[i].move) != MOVE_OK)
                        break;
                    continue;
                }
                if (dset_push(&d, &b, held) != 0)
                    goto out_oom;
                for (int c = 0; c < children; c++) {
                    board_t cb = b;
                    int mv = near_move(&cb, &rng);
                    if (mv != MOVE_NONE && board_play(&cb, mv) == MOVE_OK && !board_over(&cb) &&
                        dset_push(&d, &cb, held) != 0)
                        goto out_oom;
                }
                if (board_play(&b, g.plies[i].move) != MOVE_OK)
                    break;
            }
            games++;
        }
        record_reader_free(rr);
    }
    record_free(&g);
    if (dset_flush(&d) != 0)
        goto out_oom;
    if (from_search) {
        int T = threads > 0 ? threads : sgemm_cores();
        T = T < DISTILL_TRAIN_THREADS ? T : DISTILL_TRAIN_THREADS;
        double ts = util_now_ms();
        if (reanalyse(&d, init, (uint32_t)search_visits, (float)value_mix, T, err,
                      sizeof err) != 0)
            goto out_fail;
        printf("distill: searched %zu positions with %d playouts each in %.1f s\n", d.n,
               search_visits, (util_now_ms() - ts) / 1000);
    }
    size_t ntrain = 0;
    for (size_t i = 0; i < d.n; i++)
        ntrain += !d.pos[i].held_out;
    printf("distill: %zu games (%zu skipped), %zu positions (%zu held out), valued by %s%s in "
           "%.1f s\n", games, skipped, d.n, d.n - ntrain,
           from_search ? "the search of " : from_records ? "their records" : "",
           from_search ? init : from_records ? "" : pos[0], (util_now_ms() - t0) / 1000);
    double floor_h, floor_var;
    dset_floor(&d, &floor_h, &floor_var);
    printf("distill: held out, the teacher's policy entropy %.4f and value variance %.4f\n",
           floor_h, floor_var);
    fflush(stdout);
    if (ntrain == 0) {
        snprintf(err, sizeof err, "no training positions of a %dx%d %s game in the files", d.size,
                 d.size, rule_name(d.rule));
        goto out_fail;
    }
    /* training on T threads: each adds its share of a minibatch to its
     * own trainer, and the first merges the others' before the step */
    int T = threads > 0 ? threads : sgemm_cores();
    T = T < DISTILL_TRAIN_THREADS ? T : DISTILL_TRAIN_THREADS;
    if (!(tr = patnet_trainer_create(pn, (float)lr)) ||
        !(order = malloc(d.n * sizeof *order)))
        goto out_oom;
    for (int t = 0; t < T; t++) {
        sh[t] = (dshare_t){.d = &d, .pn = pn, .k = t, .T = T};
        if (!(sh[t].tr = t ? patnet_trainer_create(pn, (float)lr) : tr))
            goto out_oom;
    }
    ntrain = 0;
    for (size_t i = 0; i < d.n; i++)
        if (!d.pos[i].held_out)
            order[ntrain++] = i;
    size_t nheld = 0;
    const size_t *held = order + ntrain;   /* the held-out positions after the training ones */
    for (size_t i = 0; i < d.n; i++)
        if (d.pos[i].held_out)
            order[ntrain + nheld++] = i;
    size_t steps = (ntrain + 63) / 64 * (size_t)epochs, step = 0;
    for (int e = 0; e < epochs; e++) {
        for (size_t i = ntrain; i > 1; i--) {
            size_t j = util_rng_below(&rng, (uint32_t)i);
            size_t t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
        for (int t = 0; t < T; t++) {
            sh[t].lp = sh[t].lv = 0;
            sh[t].np = 0;
        }
        t0 = util_now_ms();
        for (size_t lo = 0; lo < ntrain; lo += 64) {
            dshare_run(sh, T, order + lo, ntrain - lo < 64 ? ntrain - lo : 64);
            for (int t = 1; t < T; t++)
                patnet_trainer_merge(tr, sh[t].tr);
            patnet_trainer_set_lr(tr, (float)(lr * (1.0 - 0.9 * (double)step / steps)));
            patnet_trainer_step(tr);
            step++;
        }
        double lp = 0, lv = 0;
        size_t np = 0, hnp;
        for (int t = 0; t < T; t++) {
            lp += sh[t].lp;
            lv += sh[t].lv;
            np += sh[t].np;
        }
        double rate = ntrain / ((util_now_ms() - t0) / 1000);
        double hp, hv;
        dset_heldout(&d, pn, held, nheld, T, &hp, &hv, &hnp);
        /* the policy's loss over the positions that have a policy target, the
         * value's over all */
        printf("epoch %d: train policy %.4f value %.4f; held out policy %.4f value %.4f (%zu, "
               "%zu with a policy target); %.0f positions/s\n", e + 1, np ? lp / np : 0,
               lv / ntrain, hnp ? hp / hnp : 0, nheld ? hv / nheld : 0, nheld, hnp, rate);
        fflush(stdout);
        if (patnet_save(pn, out, err, sizeof err) != 0)
            goto out_fail;
    }
    printf("wrote %s: %llu steps\n", out, (unsigned long long)patnet_step(pn));
    rc = 0;
    goto out_free;
out_oom:
    snprintf(err, sizeof err, "out of memory");
out_fail:
    fprintf(stderr, "gomoku model distill: %s\n", err);
out_free:
    free(order);
    for (int t = 1; t < DISTILL_TRAIN_THREADS && sh[t].d; t++)
        patnet_trainer_free(sh[t].tr);
    patnet_trainer_free(tr);
    patnet_free(pn);
    free(d.pos);
    free(d.boards);
    free(d.policy);
    nn_eval_free(d.ev);
    nn_net_free(net);
    nn_model_free(m);
    return rc;
}

int cmd_model(int argc, char **argv)
{
    if (argc < 2)
        return args_fail(&help_model, "a subcommand is required (init, grow, info, loss or distill)");
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        args_print_help(&help_model, NULL, 0);
        return 0;
    }
    if (strcmp(sub, "init") == 0)
        return model_init(argc - 1, argv + 1);
    if (strcmp(sub, "grow") == 0)
        return model_grow(argc - 1, argv + 1);
    if (strcmp(sub, "info") == 0)
        return model_info(argc - 1, argv + 1);
    if (strcmp(sub, "loss") == 0)
        return model_loss(argc - 1, argv + 1);
    if (strcmp(sub, "distill") == 0)
        return model_distill(argc - 1, argv + 1);
    if (sub[0] == '-')
        return args_fail(&help_model, "unknown option '%s'", sub);
    return args_fail(&help_model, "unknown subcommand '%s' (init, grow, info, loss or distill)", sub);
}
