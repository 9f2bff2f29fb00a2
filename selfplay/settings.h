/* The one settings table: every option of every command and every key of
 * a run's config file, one row each.
 *
 * A row names a setting (its key, unique, and the config key of a run
 * setting), its option (--opt; two rows may share an option name when
 * their commands differ, e.g. --threads is CPU backend threads for
 * selfplay and search threads for play), its type and range, its default
 * (written here only: "--help" prints "(default X)" from it and
 * selfplay/args.h writes it into the option's variable), the value's name
 * and help for "--help", the commands that take it, and flags: a key of
 * the run config (then `field` is its offset in run_config_t), one a
 * resumed run may change, one for tests or the trainer only (accepted,
 * but not shown by --help). The parser is selfplay/args.h; the run config
 * file is selfplay/rundir.h; `gomoku help settings` prints the table. */
#ifndef GZ_SELFPLAY_SETTINGS_H
#define GZ_SELFPLAY_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum {
    SET_INT,        /* int */
    SET_DOUBLE,     /* double, finite */
    SET_U64,        /* uint64_t */
    SET_RULE,       /* rule_t: freestyle, standard, renju */
    SET_STR,        /* const char * (run config: inline char[hi + 1]) */
    SET_FLAG,       /* bool, an option without a value */
    SET_PRECISION,  /* nn_precision_t: fp32, bf16, auto */
    SET_CHOICE,     /* const char *, one of the row's choices */
} setting_type_t;

/* The commands that take a setting (setting_t.by). */
enum {
    BY_RULES = 1u << 0,
    BY_RECORDS = 1u << 1,
    BY_PLAY = 1u << 2,
    BY_MATCH = 1u << 3,
    BY_SELFPLAY = 1u << 4,
    BY_MODEL = 1u << 5,          /* model init */
    BY_TRAIN = 1u << 6,
    BY_WORKER = 1u << 7,
    BY_PBRAIN = 1u << 8,
    BY_SERVE = 1u << 9,
    BY_BENCH_RULES = 1u << 10,
    BY_BENCH_NN = 1u << 11,
    BY_BENCH_MCTS = 1u << 12,
    BY_BENCH_SELFPLAY = 1u << 13,
    BY_BENCH_TRAIN = 1u << 14,
    BY_BENCH_VCF = 1u << 15,
    BY_BENCH_BROKER = 1u << 16,
    BY_CALIBRATE = 1u << 17,
    BY_BENCH_VCT = 1u << 18,
    BY_ANALYZE = 1u << 19,
    BY_BENCH_TARGETS = 1u << 20,
    BY_COUNT = 21
};

/* setting_t.flags */
enum {
    SETTING_RUN = 1u << 0,      /* a key of the run config (field is its offset) */
    SETTING_RESUME = 1u << 1,   /* a resumed run may change it */
    SETTING_HIDDEN = 1u << 2,   /* for tests or the trainer: not shown by --help */
};

typedef struct setting {
    const char *key;      /* unique; the config key of a run setting */
    const char *opt;      /* the option without dashes: "cheap-visits" */
    setting_type_t type;
    double lo, hi;        /* inclusive range of a number (both 0: any);
                           * SET_STR run settings: lengths lo..hi */
    const char *def;      /* default as an option's text; NULL: none */
    const char *arg;      /* the value's name in help: "N" */
    const char *help;     /* one line, without the default */
    unsigned by;          /* BY_*: the commands that take it */
    unsigned flags;       /* SETTING_* */
    size_t field;         /* SETTING_RUN: offset of the field in run_config_t */
    const char *choices;  /* SET_CHOICE: "none|garbage|stall" */
} setting_t;

/* Row ids: settings_table[S_X] is row S_X. */
typedef enum setting_id {
    /* shared by many commands */
    S_RULE, S_SIZE, S_SEED, S_DEVICE, S_PRECISION,
    /* the net's shape */
    S_BLOCKS, S_CHANNELS, S_POLICY_HEADS, S_PLANES, S_VALUE_POOL, S_BENCH_NN_PLANES, S_BOARD_MAX, S_POLICY_HEAD, S_VALUE_HEAD,
    S_VALUE_HIDDEN,
    /* the search */
    S_C_PUCT, S_FPU, S_FPU_ROOT, S_VCF_NODES, S_VCF_ROOT_NODES, S_VCT_NODES, S_VCT_DEPTH, S_VCT_ROOT_NODES,
    S_VCT_DEFEND_NODES, S_VCT_SHARE, S_VCT_DEFEND_SHARE, S_VCT_VERIFY_NODES, S_VCT_VERIFY_SHARE,
    S_VCT_QUIET_NODES, S_VCT_WATCH_NODES, S_VCT_WATCH_QUIET_NODES,
    S_THREAT_PRUNE, S_SELECT_LCB, S_PATTERN_PRIOR, S_POLICY_TEMP, S_MINIMAX_MIX, S_SEARCH_BATCH, S_SYMMETRY, S_ROOT_SYMMETRY,
    S_ROOT_NET, S_ROOT_NET_PLIES, S_ENSEMBLE,
    /* self-play */
    S_VISITS, S_CHEAP_VISITS, S_FULL_FRAC, S_PARALLEL, S_NET_THREADS, S_RESIGN,
    S_NO_RESIGN_FRAC, S_TEMP_MOVES, S_ALPHA, S_DIRICHLET_ALPHA, S_FORCED_K, S_GUMBEL,
    S_GUMBEL_SCALE, S_STRONG_FRAC, S_STRONG_VISITS, S_OPEN_FRAC,
    S_OPEN_STONES, S_OPEN_BALANCE, S_SELFPLAY_VCT_ROOT_NODES, S_SELFPLAY_VCT_CHEAP_NODES,
    S_SELFPLAY_VCT_DEFEND_NODES,
    S_VALUE_MIX, S_LEAVES, S_CACHE_MB,
    /* gomoku selfplay */
    S_SELFPLAY_MODEL, S_PATNET, S_OPPONENT, S_OPPONENT_FRAC, S_RANDOM_NET, S_SELFPLAY_GAMES, S_SELFPLAY_OUT, S_SHARD_GAMES,
    /* a training run (the run config) */
    S_WORKERS, S_OPP_WEIGHT, S_SOFT_WEIGHT, S_BATCH, S_LR, S_MOMENTUM, S_WEIGHT_DECAY,
    S_WARMUP, S_CHECKPOINT_EVERY, S_KEEP_CHECKPOINTS, S_KEEP_EVERY, S_RATIO, S_WINDOW,
    S_NONFINITE_LIMIT, S_STALL_S,
    /* gomoku train */
    S_BROKER, S_RUN_NAME, S_STREAM_MAX, S_STEPS, S_TRAIN_THREADS, S_ASSEMBLE_THREADS,
    S_METRICS_EVERY, S_BAD_FRAME_LIMIT, S_STOP_TIMEOUT, S_INIT_MODEL, S_TRAIN_WORKER_FAULT,
    S_TRAIN_FAULT,
    /* gomoku worker */
    S_WORKER_RUN_DIR, S_RECORDS_FD, S_CONTROL_FD, S_WORKER_MODEL, S_GEN, S_PARENT_PID,
    S_WORKER_THREADS, S_WORKER_SEED, S_WORKER_FAULT, S_WORKER_RUN, S_SPOOL, S_SPOOL_MAX,
    S_MAX_GAMES, S_WORKER_PARALLEL, S_GAMES_LOG,
    /* the players of play and match */
    S_PLAY_VISITS, S_MATCH_VISITS, S_TIME, S_SEARCH_THREADS,
    /* gomoku play */
    S_BLACK, S_WHITE, S_PLAY_MODEL, S_HUMAN_COLOR, S_HINT, S_PLAY_QUIET, S_LOAD,
    /* gomoku match */
    S_MATCH_GAMES, S_OPENINGS, S_MATCH_TIME, S_MATCH_SAVE, S_JSON, S_MATCH_QUIET,
    /* gomoku pbrain */
    S_PBRAIN_MODEL,
    /* gomoku serve */
    S_SERVE_RUN, S_SERVE_MODEL, S_LISTEN, S_TOKEN, S_SERVE_VISITS, S_SERVE_GAMES, S_SEARCHES,
    /* gomoku analyze */
    S_ANALYZE_MODEL, S_ANALYZE_VISITS, S_ANALYZE_CANDIDATES, S_ANALYZE_PARALLEL, S_ANALYZE_TREE_MB,
    S_ANALYZE_RULE, S_ANALYZE_SIZE,
    /* gomoku rules, records, model init */
    S_MOVES, S_VCF, S_RULES_VCF_NODES, S_TOP, S_MODEL_OUT, S_FORCE,
    /* gomoku bench */
    S_BENCH_DEVICE, S_BENCH_RUNS, S_BENCH_SECONDS, S_BENCH_NN_BATCH, S_BENCH_NN_MODEL,
    S_SGEMM_SIZE, S_BENCH_MCTS_VISITS, S_BENCH_MCTS_BATCH, S_BENCH_MCTS_MEM, S_STONES,
    S_BENCH_MCTS_VCF_NODES, S_BENCH_SELFPLAY_SECONDS, S_BENCH_TRAIN_STEPS,
    S_BENCH_TRAIN_GAMES, S_POSITIONS, S_BENCH_VCF_NODES, S_BENCH_VCF_RUNS, S_BENCH_BROKER,
    S_FRAMES, S_PLIES, S_WORKER_GAMES_PER_HOUR,
    S_BENCH_VCT_POSITIONS, S_BENCH_VCT_NODES, S_BENCH_VCT_DEPTH, S_BENCH_VCT_ALGO,
    S_BENCH_VCT_VCF_NODES, S_BENCH_VCT_FILE, S_BENCH_TARGETS_MODEL, S_BENCH_TARGETS_FILE,
    S_BENCH_TARGETS_REF_VISITS, S_BENCH_TARGETS_POSITIONS, S_RULES_VCT, S_RULES_VCT_NODES,
    /* gomoku calibrate */
    S_CALIB_MODEL, S_CALIB_POSITIONS, S_CALIB_EVERY, S_CALIB_SKIP, S_CALIB_VCT_NODES,
    /* gomoku model distill */
    S_DISTILL_EPOCHS, S_DISTILL_CHILDREN, S_DISTILL_LR, S_DISTILL_INIT, S_DISTILL_THREADS,
    S_DISTILL_HOLDOUT, S_DISTILL_TARGETS, S_DISTILL_VALUE_MIX, S_DISTILL_SEARCH_VISITS,
    S_DISTILL_WON,
    /* gomoku rules --game */
    S_RULES_GAME,
    S_COUNT
} setting_id_t;

extern const setting_t settings_table[S_COUNT];

/* The row whose key is key; NULL if none. */
const setting_t *settings_find(const char *key);

/* Parse text as s's type into dst (int *, double *, uint64_t *, rule_t *,
 * nn_precision_t *, const char ** for SET_STR and SET_CHOICE, which keep
 * text itself; SET_FLAG: any text sets true). 0, or -1 with why pointed
 * at the reason: "not an integer", "out of range", "not a finite number",
 * "not a non-negative integer", "freestyle, standard or renju", or, for
 * SET_PRECISION and SET_CHOICE, the valid values. */
int settings_parse(const setting_t *s, const char *text, void *dst, const char **why);

/* "1..1000000", "0..1", "fp32|bf16|auto", "any"... : the row's range as text. */
void settings_format_range(const setting_t *s, char *buf, size_t len);

/* The commands that take s, "selfplay,train,bench-selfplay", into buf. */
void settings_format_commands(const setting_t *s, char *buf, size_t len);

/* Every row, one per line under a header: key, option, type, range,
 * default, flags, commands, help; then what the flags mean. */
void settings_print(FILE *f);

#endif
