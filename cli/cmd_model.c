/* gomoku model init|grow|info|loss: create, grow and inspect weights files (.gzm). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cmds.h"
#include "nn/nn.h"
#include "selfplay/args.h"
#include "selfplay/replay.h"
#include "util/util.h"

static const cmd_help_t help_model = {
    "model", BY_MODEL, "gomoku model init|grow|info|loss [options]",
    "Create a randomly initialised network (init), grow one (grow), describe a weights\n"
    "file (info) or measure its loss on games (loss).\n"
    "  gomoku model init --blocks B --channels C [--board-max M --rule R --planes F\n"
    "                    --value-pool P --seed S] --out F\n"
    "  gomoku model grow F --blocks B --channels C [--value-pool P --seed S] --out F2\n"
    "  gomoku model info F\n"
    "  gomoku model loss F GAMES.gzr...\n"
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
    "file CRC32, size and forward GFLOP per evaluation on its largest board."};

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
    nn_model_t *m = nn_model_load(pos[0], err, sizeof err);
    if (!m) {
        fprintf(stderr, "gomoku model grow: %s\n", err);
        return 1;
    }
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
    char err[512];
    nn_model_t *m = nn_model_load(pos[0], err, sizeof err);
    if (!m) {
        fprintf(stderr, "gomoku %s: %s\n", h->cmd, err);
        *status = 1;
    }
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

static int model_info(int argc, char **argv)
{
    char *pos[1];
    int npos, rc;
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

int cmd_model(int argc, char **argv)
{
    if (argc < 2)
        return args_fail(&help_model, "a subcommand is required (init, grow, info or loss)");
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
    if (sub[0] == '-')
        return args_fail(&help_model, "unknown option '%s'", sub);
    return args_fail(&help_model, "unknown subcommand '%s' (init, grow, info or loss)", sub);
}
