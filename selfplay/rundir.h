/* A training run directory: its config file, its lock, and small files
 * rewritten atomically.
 *
 *   RUN_DIR/config        settings fixed at creation (versioned key=value text)
 *   RUN_DIR/lock          the trainer's pid (the lock is a flock on RUN_DIR itself)
 *   RUN_DIR/models/       checkpoints NNNNNN.gzm (NNNNNN = training step)
 *   RUN_DIR/games/        shard-NNNNNN.gzr, accepted self-play frames
 *   RUN_DIR/spool/        worker-K/: games worker K sent and the trainer has not yet
 *                         acknowledged (selfplay/spool.h)
 *   RUN_DIR/status.json   rewritten atomically about once a second
 *   RUN_DIR/metrics.csv   one row per few steps
 *   RUN_DIR/train.log     events (worker deaths, restarts, checkpoints)
 *   RUN_DIR/workers.log   the workers' stderr */
#ifndef GZ_SELFPLAY_RUNDIR_H
#define GZ_SELFPLAY_RUNDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"
#include "selfplay/args.h"
#include "selfplay/settings.h"

/* Longest run directory path: its files (models/NNNNNN.gzm.tmp.PID and
 * the like) must fit the 4096-byte paths the run uses. */
#define RUN_DIR_MAX 3000

#define RUN_CONFIG_VERSION 13  /* 2: optimizer, noise, retention and fault settings;
                                  * 3: forced_k, policy_heads (0 and 1 in older files);
                                  * 4: opp_weight, soft_weight (their defaults, the
                                  *    weights every older run trained with);
                                  * 5: c_puct, fpu, fpu_root, temp_moves, vcf_nodes,
                                  *    vcf_root_nodes (older files: what their runs
                                  *    searched with, the defaults then);
                                  * 6: planes (older files: basic);
                                  * 7: open_frac, open_stones, open_balance
                                  *    (older files: no openings);
                                  * 8: value_mix (older files: 0, the result
                                  *    alone);
                                  * 9: selfplay_vct_root_nodes,
                                  *    selfplay_vct_defend_nodes (older files:
                                  *    2000 and 0, what self-play searched with);
                                  * 10: selfplay_vct_cheap_nodes (older files:
                                  *    selfplay_vct_root_nodes, the budget
                                  *    their cheap searches had);
                                  * 11: gumbel, gumbel_scale (older files: 0,
                                  *    PUCT at the root);
                                  * 12: strong_frac, strong_visits (older
                                  *    files: 0, every game symmetric);
                                  * 13: value_pool (older files: mean) */

/* Everything a run is created with. Strings are inline so a config read
 * from disk owns its text. The rows of the settings table
 * (selfplay/settings.h) flagged SETTING_RUN name, type, range, default and
 * document every field; the CLI, the config file and the workers all go
 * through them. */
typedef struct run_config {
    int version;
    rule_t rule;
    int size;
    int blocks, channels;
    int workers;        /* self-play worker processes */
    int parallel;       /* concurrent games per worker */
    int visits;         /* full-search playouts per move */
    int cheap_visits;   /* playout-cap randomization: playouts of a cheap search */
    double full_frac;   /* fraction of moves searched fully (only those train the policy) */
    double resign;      /* resign below -resign root value (0: never) */
    double dirichlet_alpha; /* root noise; 0: 10 / points, at most 0.5 */
    double forced_k;    /* forced playouts + policy target pruning in full searches (0: off) */
    int gumbel;         /* the Gumbel root's candidates (selfplay_opts_t.gumbel; 0: off) */
    double gumbel_scale; /* and its c_scale */
    double strong_frac; /* games with a strong side (selfplay_opts_t.strong_*; 0: none) */
    int strong_visits;
    double open_frac;   /* games from a random balanced opening (selfplay_opts_t.open_*) */
    int open_stones;
    double open_balance;
    double value_mix;   /* the value target's share of the root value (replay_set_value_mix) */
    int selfplay_vct_root_nodes, selfplay_vct_cheap_nodes, selfplay_vct_defend_nodes;
                        /* self-play's threat search (selfplay_opts_t) */
    int temp_moves;     /* plies sampled at temperature 1 */
    double c_puct, fpu, fpu_root;   /* the search (mcts_params_t) */
    int vcf_nodes, vcf_root_nodes;  /* VCF checks per new leaf and per root, solver nodes */
    int policy_heads;   /* policy head outputs K: 1 policy, 2 + opponent reply, 3 + soft policy */
    char planes[16];    /* the net's input feature set: "basic" or "threat" (nn_features_name) */
    char value_pool[16]; /* the value head's pooling: "mean" or "max" (nn_value_pool_name) */
    double opp_weight;  /* loss weight of the opponent-reply output (K >= 2) */
    double soft_weight; /* loss weight of the soft policy output (K = 3) */
    int batch;          /* training minibatch */
    double lr;
    double momentum;    /* Nesterov momentum */
    double weight_decay;
    int warmup;         /* steps of linear learning-rate warmup */
    int checkpoint_every;
    int keep_checkpoints;   /* newest checkpoints kept */
    int keep_every;         /* also keep every step that is a multiple of this (0: none) */
    double ratio;       /* training samples per new self-play position */
    int window;         /* replay window, positions */
    int nonfinite_limit;    /* stop after this many non-finite losses in a row */
    int stall_s;        /* a worker silent this long is restarted */
    uint64_t seed;
    char device[32];    /* "auto", "cpu", "cuda", "cuda:N" */
} run_config_t;

/* The run setting whose config key is key; NULL if none. */
const setting_t *run_setting_find(const char *key);
/* Parse text into c's field of run setting s; 0, or -1 with "bad value
 * for NAME: 'TEXT' (WHY)" in err. Non-finite numbers and values out of
 * range are refused. */
int run_setting_parse(const setting_t *s, run_config_t *c, const char *text, char *err,
                      size_t errlen);
/* c's field as text (the config file's form) into buf. */
void run_setting_format(const setting_t *s, const run_config_t *c, char *buf, size_t len);
/* Every run setting as an option of gomoku train, its text unchecked into
 * given[id] (NULL when not given), into out; returns how many. */
int run_config_args(arg_spec_t *out, const char **given);

void run_config_default(run_config_t *c);
/* The Dirichlet alpha the workers use: the setting, or the board's default. */
double run_config_alpha(const run_config_t *c);

/* Largest config text (file or broker field), bytes. */
#define RUN_CONFIG_TEXT_MAX 8192
/* c as config text into buf (NUL-terminated); returns its length. */
size_t run_config_format(const run_config_t *c, char *buf, size_t len);
/* Parse config text (len bytes, not NUL-terminated) into c, starting from
 * defaults; 0 or -1 with a message naming origin and line. Unknown keys,
 * values out of range and a newer version are errors. */
int run_config_parse(run_config_t *c, const char *text, size_t len, const char *origin,
                     char *err, size_t errlen);
/* The self-play settings of a run (rule, size, search, noise) into so; the
 * caller sets device, threads and seed. */
struct selfplay_opts;
void run_config_selfplay_opts(const run_config_t *c, struct selfplay_opts *so);
/* Write c to path atomically; 0 or -1 with err. */
int run_config_save(const run_config_t *c, const char *path, char *err, size_t errlen);
/* Read path into c (starting from defaults); 0 or -1 with a message that
 * names the file and line. Unknown keys and a newer version are errors. */
int run_config_load(run_config_t *c, const char *path, char *err, size_t errlen);

/* The settings of the run in dir for this session (gomoku train), into
 * cfg. A run that exists (dir/config) keeps its settings: one given on the
 * command line (given[id] != NULL, its value in want) must agree, unless it
 * may change on resume: then it is used, and said on stderr. *init_model
 * (may be NULL) is then ignored, said, and set to NULL. A new run (dir
 * missing, empty, or holding only our lock and log and empty games/ and
 * models/) takes want, and with *init_model that model's shape and rule (a
 * given setting must agree). The config is saved when new or changed (the
 * workers read it). 0, or -1 with err. */
int run_config_open(const char *dir, const run_config_t *want, const char *const *given,
                    const char **init_model, run_config_t *cfg, char *err, size_t errlen);

/* Whether dir can name a run: not too long for the run's own paths, and
 * only bytes the worker control protocol carries (no newline or other
 * control bytes). 0, or -1 with a one-line reason. */
int run_check_path(const char *dir, char *err, size_t errlen);

/* Take the run's lock: flock on the directory itself (close-on-exec), so
 * deleting RUN_DIR/lock cannot let a second trainer in; our pid goes to
 * RUN_DIR/lock for people and for the message. Returns the fd, or -1 with
 * err: "RUN_DIR is in use by pid N" when another process holds it. The
 * lock lasts until run_unlock or the process dies. */
int run_lock(const char *dir, char *err, size_t errlen);
void run_unlock(int fd);

/* Whether a file name in a run is "<prefix>N<suffix>" (checkpoints
 * "NNNNNN.gzm", shards "shard-NNNNNN.gzr") with N of 1 to 18 decimal
 * digits; *n = N when it is. */
bool run_numbered_name(const char *name, const char *prefix, const char *suffix, uint64_t *n);

#endif
