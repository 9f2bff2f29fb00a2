#include "selfplay/settings.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/board.h"
#include "engine/vct.h"
#include "mcts/mcts.h"
#include "nn/nn.h"
#include "play/player.h"
#include "play/searcher.h"
#include "selfplay/rundir.h"
#include "selfplay/selfplay.h"

#define STR_(x) #x
#define STR(x) STR_(x)
/* flags and field of a run setting */
#define RUN(f) SETTING_RUN, offsetof(run_config_t, f)
#define RUN_RESUME(f) SETTING_RUN | SETTING_RESUME, offsetof(run_config_t, f)
#define HIDDEN SETTING_HIDDEN, 0
#define ANY_INT 2147483647

/* the commands that search with a net */
#define SEARCHERS (BY_PLAY | BY_MATCH | BY_SELFPLAY | BY_TRAIN | BY_PBRAIN | BY_SERVE | \
                   BY_BENCH_SELFPLAY | BY_ANALYZE)
/* the commands that search to play a move */
#define PLAYERS (BY_PLAY | BY_MATCH | BY_PBRAIN | BY_SERVE | BY_ANALYZE)
/* self-play's own search and noise: gomoku selfplay, its bench, and a run */
#define SELFPLAY (BY_SELFPLAY | BY_TRAIN | BY_BENCH_SELFPLAY)
/* the commands that make a net of a given shape */
#define NET (BY_SELFPLAY | BY_MODEL | BY_TRAIN | BY_BENCH_NN | BY_BENCH_SELFPLAY | BY_BENCH_TRAIN)

/* Columns: key, option, type, range lo..hi, default, value name, help,
 * commands, flags (and run config field), choices. */
const setting_t settings_table[S_COUNT] = {
    [S_RULE] = {"rule", "rule", SET_RULE, 0, 0, "freestyle", "R", "freestyle, standard or renju",
                BY_RULES | BY_PLAY | BY_MATCH | SELFPLAY | BY_MODEL | BY_BENCH_MCTS, RUN(rule)},
    [S_SIZE] = {"size", "size", SET_INT, BOARD_MIN, BOARD_MAX, STR(BOARD_DEFAULT), "N",
                "board size", BY_RULES | BY_PLAY | BY_MATCH | SELFPLAY | BY_BENCH_NN |
                BY_BENCH_MCTS | BY_BENCH_TRAIN | BY_BENCH_BROKER, RUN(size)},
    [S_SEED] = {"seed", "seed", SET_U64, 0, 0, "1", "S", "random seed",
                BY_PLAY | BY_MATCH | SELFPLAY | BY_MODEL | BY_PBRAIN | BY_BENCH_RULES |
                BY_BENCH_MCTS | BY_BENCH_VCF | BY_BENCH_VCT, RUN(seed)},
    [S_DEVICE] = {"device", "device", SET_STR, 1, sizeof(((run_config_t *)0)->device) - 1,
                  "auto", "D", "auto, cpu, cpu-ref, cuda, cuda:N",
                  BY_PLAY | BY_MATCH | BY_SELFPLAY | BY_TRAIN | BY_WORKER | BY_PBRAIN |
                  BY_SERVE | BY_BENCH_TRAIN | BY_CALIBRATE | BY_ANALYZE, RUN_RESUME(device)},
    [S_PRECISION] = {"precision", "precision", SET_PRECISION, 0, 0, "auto", "P",
                     "inference precision: fp32, bf16 or auto (bf16 when the CPU has it and the "
                     "net passes a check; training is always fp32)",
                     BY_PLAY | BY_MATCH | BY_SELFPLAY | BY_PBRAIN | BY_SERVE | BY_BENCH_NN |
                     BY_BENCH_SELFPLAY | BY_CALIBRATE | BY_ANALYZE},

    [S_BLOCKS] = {"blocks", "blocks", SET_INT, 0, NN_MAX_BLOCKS, "6", "B", "residual blocks",
                  NET, RUN(blocks)},
    [S_CHANNELS] = {"channels", "channels", SET_INT, 1, NN_MAX_CHANNELS, "64", "C",
                    "trunk channels", NET, RUN(channels)},
    [S_POLICY_HEADS] = {"policy_heads", "policy-heads", SET_INT, 1, NN_MAX_POLICY_OUTPUTS, "1",
                        "K", "policy outputs: 1 the policy, 2 also the opponent's reply, 3 also "
                        "a soft policy (KataGo)", BY_TRAIN, RUN(policy_heads)},
    /* threat: the A/B of docs/BENCHMARKS.md "Threat input planes" */
    [S_PLANES] = {"planes", "planes", SET_CHOICE, 0, 0, "threat", "F",
                  "a new net's input planes: basic (stones, side to move, renju forbidden "
                  "points) or threat (also, for each side, what a stone at each point makes: "
                  "five, open four, four, open three, three); with --init-model, threat widens a "
                  "basic model", BY_MODEL | BY_TRAIN, RUN(planes),
                  "basic|threat"},
    [S_VALUE_POOL] = {"value_pool", "value-pool", SET_CHOICE, 0, 0, "mean", "P",
                      "the value head's pooling over the board: mean, or max (each channel's "
                      "mean and its max); grow, and train with --init-model: max widens a mean "
                      "net, the new weights zero",
                      BY_MODEL | BY_TRAIN, RUN(value_pool), "mean|max"},
    /* bench keeps the planes of its earlier figures */
    [S_BENCH_NN_PLANES] = {"bench_nn_planes", "planes", SET_CHOICE, 0, 0, "basic", "F",
                           "the random net's input planes: basic or threat", BY_BENCH_NN, 0, 0,
                           "basic|threat"},
    [S_BOARD_MAX] = {"board_max", "board-max", SET_INT, BOARD_MIN, BOARD_MAX, STR(BOARD_DEFAULT),
                     "M", "largest board the net serves", BY_MODEL},
    [S_POLICY_HEAD] = {"policy_head", "policy-head", SET_INT, 1, NN_MAX_HEAD,
                       STR(NN_POLICY_HEAD), "N", "policy head channels", BY_MODEL},
    [S_VALUE_HEAD] = {"value_head", "value-head", SET_INT, 1, NN_MAX_HEAD, STR(NN_VALUE_HEAD),
                      "N", "value head channels", BY_MODEL},
    [S_VALUE_HIDDEN] = {"value_hidden", "value-hidden", SET_INT, 1, NN_MAX_HEAD,
                        STR(NN_VALUE_HIDDEN), "N", "value FC width", BY_MODEL},

    [S_C_PUCT] = {"c_puct", "c-puct", SET_DOUBLE, 0.01, 100, STR(MCTS_C_PUCT), "C",
                  "PUCT exploration: a child's score is Q + C * P * sqrt(N) / (1 + n)",
                  SEARCHERS | BY_BENCH_TARGETS,
                  RUN(c_puct)},
    [S_FPU] = {"fpu", "fpu", SET_DOUBLE, 0, 10, STR(MCTS_FPU), "R",
               "first-play urgency: an unvisited child's Q is its parent's minus R * sqrt(prior "
               "of the visited children)", SEARCHERS, RUN(fpu)},
    [S_FPU_ROOT] = {"fpu_root", "fpu-root", SET_DOUBLE, 0, 10, STR(MCTS_FPU_ROOT), "R",
                    "the same reduction at the root", SEARCHERS, RUN(fpu_root)},
    [S_VCF_NODES] = {"vcf_nodes", "vcf-nodes", SET_INT, 0, 1000000, STR(MCTS_VCF_NODES), "N",
                     "VCF check of each new leaf, solver nodes; 0: off", BY_MATCH | SELFPLAY, RUN(vcf_nodes)},
    [S_VCF_ROOT_NODES] = {"vcf_root_nodes", "vcf-root-nodes", SET_INT, 0, 100000000,
                          STR(MCTS_VCF_ROOT_NODES), "N",
                          "VCF check of each root (kept ones too), solver nodes; 0: off",
                          BY_MATCH | SELFPLAY, RUN(vcf_root_nodes)},
    /* the threat search of play (self-play's: S_SELFPLAY_VCT_*) */
    [S_VCT_NODES] = {"vct_nodes", "vct-nodes", SET_INT, 0, 1000000, "0", "N",
                     "VCT check of each new leaf that faces no four, solver nodes; 0: off",
                     PLAYERS},
    [S_VCT_DEPTH] = {"vct_depth", "vct-depth", SET_INT, 0, VCT_MAX_DEPTH, "0", "K",
                     "that check's threats at most (2: the doubles, four-three and "
                     "three-three); 0: any", PLAYERS},
    [S_VCT_ROOT_NODES] = {"vct_root_nodes", "vct-root-nodes", SET_INT, 0, 100000000,
                          STR(MCTS_VCT_ROOT_NODES), "N",
                          "VCT of each root, solver nodes (a timed search also gives it "
                          "--vct-share of its time); 0: off", PLAYERS},
    [S_VCT_DEFEND_NODES] = {"vct_defend_nodes", "vct-defend-nodes", SET_INT, 0, 100000000,
                            STR(MCTS_VCT_DEFEND_NODES), "N",
                            "the root's defence against the opponent's VCT: nodes of each solve "
                            "(N/16, N/4, then N for the undecided); the root is searched among the "
                            "refutations only; 0: off", PLAYERS},
    [S_VCT_SHARE] = {"vct_share", "vct-share", SET_DOUBLE, 0, 1, STR(MCTS_VCT_ROOT_SHARE), "F",
                     "of a timed search: the root's VCT", PLAYERS},
    [S_VCT_DEFEND_SHARE] = {"vct_defend_share", "vct-defend-share", SET_DOUBLE, 0, 1,
                            STR(MCTS_VCT_DEFEND_SHARE), "F",
                            "of a timed search: the root's defence against the opponent's VCT "
                            "(and what the VCT left of its share)", PLAYERS},
    [S_VCT_VERIFY_NODES] = {"vct_verify_nodes", "vct-verify-nodes", SET_INT, 0, 100000000,
                            STR(MCTS_VCT_VERIFY_NODES), "N",
                            "the end of a timed search checks the move it would play: one the "
                            "opponent's VCT (within N nodes) refutes is dropped; 0: off", PLAYERS},
    [S_VCT_VERIFY_SHARE] = {"vct_verify_share", "vct-verify-share", SET_DOUBLE, 0, 1,
                            STR(MCTS_VCT_VERIFY_SHARE), "F",
                            "of a timed search: that check, at its end", PLAYERS},
    [S_VCT_QUIET_NODES] = {"vct_quiet_nodes", "vct-quiet-nodes", SET_INT, 0, 100000000,
                           STR(MCTS_VCT_QUIET_NODES), "N",
                           "that check also drops a move after which the opponent has a quiet "
                           "move leaving no defence against its VCT: nodes of each solve; 0: off",
                           PLAYERS},
    [S_VCT_WATCH_NODES] = {"vct_watch_nodes", "vct-watch-nodes", SET_INT, 0, 100000000,
                           STR(MCTS_VCT_WATCH_NODES), "N",
                           "a timed search runs a thread beside its search threads that checks "
                           "its most visited moves against the opponent's VCT while it searches "
                           "(N nodes each) and drops the refuted ones; 0: off", PLAYERS},
    [S_VCT_WATCH_QUIET_NODES] = {"vct_watch_quiet_nodes", "vct-watch-quiet-nodes", SET_INT, 0,
                                 100000000, STR(MCTS_VCT_WATCH_QUIET_NODES), "N",
                                 "that thread, its checks done, also drops a move after which "
                                 "one of the opponent's likeliest quiet replies leaves no "
                                 "defence against its VCT: nodes of each solve; 0: off",
                                 PLAYERS},
    [S_THREAT_PRUNE] = {"threat_prune", "threat-prune", SET_INT, 0, 1, "1", "0|1",
                        "facing a three, search only the moves that stop it and own fours",
                        PLAYERS},
    [S_SELECT_LCB] = {"select_lcb", "select-lcb", SET_DOUBLE, 0, 10, STR(MCTS_SELECT_LCB), "K",
                      "the move played: among the root moves with at least a tenth of the most "
                      "visited one's visits, the best by value less K / sqrt(visits); 0: the "
                      "most visited", PLAYERS},
    [S_PATTERN_PRIOR] = {"pattern_prior", "pattern-prior", SET_DOUBLE, 0, 1,
                         STR(MCTS_PATTERN_PRIOR), "F",
                         "the share of each node's prior given to its moves by the threes, "
                         "fours and fives a stone there makes or takes from the opponent; 0: "
                         "the net's policy alone", PLAYERS},
    [S_POLICY_TEMP] = {"policy_temp", "policy-temp", SET_DOUBLE, MCTS_POLICY_TEMP_MIN,
                       MCTS_POLICY_TEMP_MAX, STR(MCTS_POLICY_TEMP), "T",
                       "the net's policy raised to 1/T before it becomes the priors (lc0's "
                       "policy softmax temperature): above 1, the moves it rates low get "
                       "visits sooner; 1: the policy as it is", PLAYERS},
    [S_MINIMAX_MIX] = {"minimax_mix", "minimax-mix", SET_DOUBLE, 0, 1, STR(MCTS_MINIMAX_MIX),
                       "A", "implicit minimax backups: a child's value in the search is "
                       "(1 - A) times its mean plus A times the minimax of the net's values "
                       "below it, so that a refutation found deep down counts at once; 0: "
                       "the mean alone", PLAYERS},
    [S_SEARCH_BATCH] = {"search_batch", "search-batch", SET_INT, 1, SEARCHER_MAX_BATCH,
                        STR(SEARCH_BATCH_DEFAULT), "B",
                        "leaves each search thread sends to its net at once (the others wait "
                        "under virtual loss); 1: one at a time", PLAYERS},
    [S_SYMMETRY] = {"symmetry", "symmetry", SET_INT, 0, SYM_COUNT, "0", "0|1|8",
                    "which of each position's 8 symmetries (rotations, reflections) the net "
                    "is shown: 0 the position as it stands, 1 one fixed by the position's hash, "
                    "8 all of them, policy and value averaged (8 net rows a position)",
                    PLAYERS | BY_CALIBRATE},
    [S_ROOT_SYMMETRY] = {"root_symmetry", "root-symmetry", SET_INT, 0, 1, "0", "0|1",
                         "1: each search first values its root under all 8 symmetries, "
                         "averaged, and takes the root's priors from that", PLAYERS},
    [S_ROOT_NET] = {"root_net", "root-net", SET_STR, 0, 0, NULL, "M",
                    "with a pattern net as the model (patnet:F): the net M values each "
                    "search's root under all 8 symmetries for its priors, the pattern net "
                    "the rest", PLAYERS},
    [S_ROOT_NET_PLIES] = {"root_net_plies", "root-net-plies", SET_INT, 0, 2, "0", "K",
                          "with --root-net: the net also values every node within K plies "
                          "of the root (its priors and value), the pattern net the deeper ones",
                          PLAYERS},
    [S_ENSEMBLE] = {"ensemble", "ensemble", SET_STR, 0, 0, NULL, "F[,F...]",
                    "with a pattern net as the model (patnet:F): up to 3 more pattern nets "
                    "(files, comma-separated); every position's priors and value are the "
                    "mean of all the nets'", PLAYERS},

    [S_VISITS] = {"visits", "visits", SET_INT, 1, 1000000, "200", "V",
                  "playouts of a full search", SELFPLAY | BY_BENCH_TARGETS, RUN(visits)},
    [S_CHEAP_VISITS] = {"cheap_visits", "cheap-visits", SET_INT, 0, 1000000, "50", "V",
                        "playouts of a cheap search, at most visits (a larger value is capped, "
                        "and said); 0: every search full", SELFPLAY, RUN(cheap_visits)},
    [S_FULL_FRAC] = {"full_frac", "full-frac", SET_DOUBLE, 0.0001, 1, "0.25", "F",
                     "fraction of moves searched fully; only they train the policy", SELFPLAY,
                     RUN(full_frac)},
    [S_PARALLEL] = {"parallel", "parallel", SET_INT, 1, 65536, "16", "G",
                    "concurrent games (per worker), one batched NN call per step", SELFPLAY,
                    RUN(parallel)},
    [S_NET_THREADS] = {"net_threads", "threads", SET_INT, 0, 256, "0", "T",
                       "CPU backend threads; 0: all cores",
                       BY_SELFPLAY | BY_BENCH_NN | BY_BENCH_SELFPLAY | BY_BENCH_TARGETS},
    [S_RESIGN] = {"resign", "resign", SET_DOUBLE, 0, 1, "0.9", "T",
                  "self-play resigns below root value -T; 0: never", SELFPLAY, RUN(resign)},
    [S_NO_RESIGN_FRAC] = {"no_resign_frac", "no-resign-frac", SET_DOUBLE, 0, 1, "0.1", "F",
                          "fraction of games that never resign (they count false resigns)",
                          BY_SELFPLAY | BY_BENCH_SELFPLAY},
    [S_TEMP_MOVES] = {"temp_moves", "temp-moves", SET_INT, 0, BOARD_CELLS, "8", "K",
                      "plies sampled from the visits at temperature 1, then the most visited",
                      SELFPLAY, RUN(temp_moves)},
    [S_ALPHA] = {"alpha", "alpha", SET_DOUBLE, 0, 10, "0.05", "A",
                 "Dirichlet noise alpha at the root; 0: no noise",
                 BY_SELFPLAY | BY_BENCH_SELFPLAY},
    [S_DIRICHLET_ALPHA] = {"dirichlet_alpha", "dirichlet-alpha", SET_DOUBLE, 0, 10, "0", "A",
                           "root noise alpha; 0: 10 / board points, at most 0.5", BY_TRAIN,
                           RUN(dirichlet_alpha)},
    [S_FORCED_K] = {"forced_k", "forced-k", SET_DOUBLE, 0, 10, "0", "K",
                    "forced playouts in full searches: a root child gets sqrt(K * prior * "
                    "visits) visits, pruned from the policy target (KataGo); 0: off", SELFPLAY,
                    RUN_RESUME(forced_k)},
    [S_GUMBEL] = {"gumbel", "gumbel", SET_INT, 0, MCTS_GUMBEL_M_MAX, "0", "M",
                  "Gumbel AlphaZero's root (Danihelka et al. 2022): each search's playouts go by "
                  "sequential halving to M root moves drawn by Gumbel-top-k from the priors (the "
                  "draw noised for the --temp-moves plies, in place of root noise and "
                  "temperature), the move played is the best left by draw + log prior + "
                  "sigma(Q), and the policy target is softmax(log prior + sigma(completed Q)); "
                  "0: PUCT at the root", SELFPLAY | BY_BENCH_TARGETS, RUN_RESUME(gumbel)},
    [S_GUMBEL_SCALE] = {"gumbel_scale", "gumbel-scale", SET_DOUBLE, 0.01, MCTS_GUMBEL_SCALE_MAX,
                        STR(MCTS_GUMBEL_SCALE), "S",
                        "the Gumbel root's c_scale: sigma(Q) = (50 + most child visits) * S * "
                        "(Q + 1) / 2", SELFPLAY | BY_BENCH_TARGETS, RUN_RESUME(gumbel_scale)},
    [S_STRONG_FRAC] = {"strong_frac", "strong-frac", SET_DOUBLE, 0, 1, "0", "F",
                       "fraction of games with a strong side, black or white at even odds, whose "
                       "full searches get --strong-visits playouts: the weak side meets attacks "
                       "its own search would not find; 0: every game symmetric", SELFPLAY,
                       RUN_RESUME(strong_frac)},
    [S_STRONG_VISITS] = {"strong_visits", "strong-visits", SET_INT, 0, 1000000, "0", "V",
                         "playouts of the strong side's full searches (--strong-frac), at least "
                         "--visits", SELFPLAY, RUN_RESUME(strong_visits)},
    [S_OPEN_FRAC] = {"open_frac", "open-frac", SET_DOUBLE, 0, 1, "0", "F",
                     "fraction of games that start from a random balanced opening (--open-stones, "
                     "--open-balance) instead of the empty board; 0: none", SELFPLAY,
                     RUN_RESUME(open_frac)},
    [S_OPEN_STONES] = {"open_stones", "open-stones", SET_INT, 1, SELFPLAY_OPEN_STONES_MAX, "4",
                       "K", "a random opening's stones: 1..K, alternately black and white, "
                       "within " STR(SELFPLAY_OPEN_RADIUS) " points of the centre", SELFPLAY,
                       RUN_RESUME(open_stones)},
    [S_OPEN_BALANCE] = {"open_balance", "open-balance", SET_DOUBLE, 0, 1, "0.2", "V",
                        "a random opening is kept when the root value of its first (cheap) "
                        "search lies within -V..V; else another is drawn (" STR(SELFPLAY_OPEN_TRIES)
                        " tries, then the empty board)", SELFPLAY, RUN_RESUME(open_balance)},
    /* self-play's threat search: node budgets only, so the records stay a
     * function of the seed */
    [S_SELFPLAY_VCT_ROOT_NODES] = {"selfplay_vct_root_nodes", "vct-root-nodes", SET_INT, 0,
                                   100000000, STR(SELFPLAY_VCT_ROOT_NODES), "N",
                                   "self-play's VCT of each root, solver nodes; 0: off",
                                   SELFPLAY | BY_BENCH_TARGETS,
                                   RUN_RESUME(selfplay_vct_root_nodes)},
    [S_SELFPLAY_VCT_CHEAP_NODES] = {"selfplay_vct_cheap_nodes", "vct-cheap-nodes", SET_INT, 0,
                                    100000000, STR(SELFPLAY_VCT_ROOT_NODES), "N",
                                    "the same for the root of a cheap search (--cheap-visits), "
                                    "at most --vct-root-nodes (a larger value is capped)",
                                    SELFPLAY, RUN_RESUME(selfplay_vct_cheap_nodes)},
    [S_SELFPLAY_VCT_DEFEND_NODES] = {"selfplay_vct_defend_nodes", "vct-defend-nodes", SET_INT, 0,
                                     100000000, "0", "N",
                                     "self-play's root defence against the opponent's VCT: "
                                     "nodes of each solve (N/16, N/4, then N for the "
                                     "undecided); 0: off, the search alone defends",
                                     SELFPLAY, RUN_RESUME(selfplay_vct_defend_nodes)},
    [S_VALUE_MIX] = {"value_mix", "value-mix", SET_DOUBLE, 0, 1, "0", "F",
                     "the value target: (1-F) x the game's result + F x the root value of the "
                     "position's search; 0: the result alone", BY_TRAIN, RUN_RESUME(value_mix)},
    [S_LEAVES] = {"leaves", "leaves", SET_INT, 1, SEARCHER_MAX_BATCH, "1", "L",
                  "leaves per game per NN call, with virtual loss",
                  BY_SELFPLAY | BY_BENCH_SELFPLAY},
    [S_CACHE_MB] = {"cache_mb", "cache-mb", SET_INT, 0, 65536, "64", "MB", "NN cache size",
                    BY_SELFPLAY | BY_BENCH_SELFPLAY},

    [S_SELFPLAY_MODEL] = {"selfplay_model", "model", SET_STR, 0, 0, NULL, "M",
                          "weights file (.gzm)", BY_SELFPLAY},
    [S_PATNET] = {"patnet", "patnet", SET_STR, 0, 0, NULL, "F",
                  "search with this pattern net (gomoku model distill) instead of the model's net",
                  BY_SELFPLAY},
    [S_OPPONENT] = {"opponent", "opponent", SET_STR, 0, 0, NULL, "F",
                    "league games (--opponent-frac): the other side's pattern net, an earlier "
                    "generation say", BY_SELFPLAY},
    [S_OPPONENT_FRAC] = {"opponent_frac", "opponent-frac", SET_DOUBLE, 0, 1, "0", "F",
                         "fraction of games with one side, black or white at even odds, played "
                         "by --opponent at the same playouts (no strong side then); its plies "
                         "train the value alone; 0: none", BY_SELFPLAY},
    [S_RANDOM_NET] = {"random_net", "random-net", SET_FLAG, 0, 0, NULL, "",
                      "a freshly initialised net of --blocks x --channels instead of --model",
                      BY_SELFPLAY},
    [S_SELFPLAY_GAMES] = {"selfplay_games", "games", SET_INT, 1, 100000000, "100", "N",
                          "games to play", BY_SELFPLAY},
    [S_SELFPLAY_OUT] = {"selfplay_out", "out", SET_STR, 0, 0, NULL, "DIR",
                        "output directory (made if missing)", BY_SELFPLAY},
    [S_SHARD_GAMES] = {"shard_games", "shard-games", SET_INT, 1, 10000000, "1000", "N",
                       "games per shard file", BY_SELFPLAY},

    [S_WORKERS] = {"workers", "workers", SET_INT, 0, 256, "1", "K",
                   "self-play worker processes", BY_TRAIN, RUN_RESUME(workers)},
    [S_OPP_WEIGHT] = {"opp_weight", "opp-weight", SET_DOUBLE, 0, 100, "0.15", "W",
                      "loss weight of the opponent-reply output (policy_heads >= 2; KataGo's "
                      "0.15)", BY_TRAIN, RUN_RESUME(opp_weight)},
    [S_SOFT_WEIGHT] = {"soft_weight", "soft-weight", SET_DOUBLE, 0, 100, "8", "W",
                       "loss weight of the soft policy output (policy_heads 3; KataGo's 8)",
                       BY_TRAIN, RUN_RESUME(soft_weight)},
    [S_BATCH] = {"batch", "batch", SET_INT, 1, 65536, "256", "N", "training minibatch size",
                 BY_TRAIN | BY_BENCH_TRAIN, RUN(batch)},
    [S_LR] = {"lr", "lr", SET_DOUBLE, 1e-7, 10, "0.02", "X",
              "learning rate (lower it on resume as a run levels off)", BY_TRAIN, RUN_RESUME(lr)},
    [S_MOMENTUM] = {"momentum", "momentum", SET_DOUBLE, 0, 0.999, "0.9", "M",
                    "Nesterov momentum", BY_TRAIN, RUN(momentum)},
    [S_WEIGHT_DECAY] = {"weight_decay", "weight-decay", SET_DOUBLE, 0, 1, "0.0001", "W",
                        "L2 weight decay", BY_TRAIN, RUN(weight_decay)},
    [S_WARMUP] = {"warmup", "warmup", SET_INT, 0, 100000000, "100", "N",
                  "steps of linear learning-rate warmup", BY_TRAIN, RUN(warmup)},
    [S_CHECKPOINT_EVERY] = {"checkpoint_every", "checkpoint-every", SET_INT, 1, 100000000, "100",
                            "N", "steps between checkpoints", BY_TRAIN, RUN(checkpoint_every)},
    [S_KEEP_CHECKPOINTS] = {"keep_checkpoints", "keep-checkpoints", SET_INT, 1, ANY_INT, "20",
                            "N", "newest checkpoints kept", BY_TRAIN,
                            RUN_RESUME(keep_checkpoints)},
    [S_KEEP_EVERY] = {"keep_every", "keep-every", SET_INT, 0, ANY_INT, "1000", "K",
                      "also keep checkpoints at multiples of K steps; 0: none", BY_TRAIN,
                      RUN_RESUME(keep_every)},
    [S_RATIO] = {"ratio", "ratio", SET_DOUBLE, 0.01, 1e6, "4", "R",
                 "training samples per new self-play position", BY_TRAIN, RUN(ratio)},
    [S_WINDOW] = {"window", "window", SET_INT, 1, 2000000000, "250000", "N",
                  "replay window in positions", BY_TRAIN, RUN(window)},
    [S_NONFINITE_LIMIT] = {"nonfinite_limit", "nonfinite-limit", SET_INT, 1, 1000000, "10", "K",
                           "stop after K training steps in a row with a non-finite loss",
                           BY_TRAIN, RUN_RESUME(nonfinite_limit)},
    [S_STALL_S] = {"stall_s", "stall-s", SET_INT, 1, 86400, "120", "S",
                   "restart a worker silent (no game, no heartbeat) this many seconds", BY_TRAIN,
                   RUN_RESUME(stall_s)},

    [S_BROKER] = {"broker", "broker", SET_STR, 0, 0, NULL, "URL",
                  "the Redis broker, redis://[:password@]host:port[/db] or @FILE holding it "
                  "(train: also take games from remote workers; worker: be one)",
                  BY_TRAIN | BY_WORKER},
    [S_RUN_NAME] = {"run_name", "run-name", SET_STR, 0, 0, NULL, "NAME",
                    "the run's name on the broker (without it: RUN_DIR's base name)", BY_TRAIN},
    [S_STREAM_MAX] = {"stream_max", "stream-max", SET_INT, 16, 100000000, "10000", "N",
                      "games the broker's stream may hold before workers hold back", BY_TRAIN},
    [S_STEPS] = {"steps", "steps", SET_STR, 0, 0, NULL, "S|+N",
                 "stop at step S, or after N more steps", BY_TRAIN},
    [S_TRAIN_THREADS] = {"train_threads", "threads", SET_INT, 0, 256, "1", "T",
                         "CPU threads for training; 0: all cores", BY_TRAIN | BY_BENCH_TRAIN},
    [S_ASSEMBLE_THREADS] = {"assemble_threads", "assemble-threads", SET_INT, 1, 64, "1", "T",
                            "minibatch assembly threads", BY_TRAIN | BY_BENCH_TRAIN},
    [S_METRICS_EVERY] = {"metrics_every", "metrics-every", SET_INT, 1, 1000000, "10", "N",
                         "steps per metrics.csv row", BY_TRAIN},
    [S_BAD_FRAME_LIMIT] = {"bad_frame_limit", "bad-frame-limit", SET_INT, 0, 1000000000, "50",
                           "N", "corrupt frames before a worker is restarted; 0: never",
                           BY_TRAIN},
    [S_STOP_TIMEOUT] = {"stop_timeout", "stop-timeout", SET_INT, 1, 3600, "20", "S",
                        "seconds to wait for workers to stop", BY_TRAIN},
    [S_INIT_MODEL] = {"init_model", "init-model", SET_STR, 0, 0, NULL, "FILE",
                      "a new run starts from this model (its blocks, channels, size and rule) "
                      "instead of random weights", BY_TRAIN},
    [S_TRAIN_WORKER_FAULT] = {"train_worker_fault", "worker-fault", SET_CHOICE, 0, 0, NULL, "F",
                              "tests only: workers send corrupt frames (garbage), forged results "
                              "(forge) or stall", BY_TRAIN, HIDDEN, "none|garbage|stall|forge"},
    [S_TRAIN_FAULT] = {"train_fault", "fault", SET_CHOICE, 0, 0, NULL, "F",
                       "tests only: nan-loss (every step's loss is NaN), nan-once (step 6's only)",
                       BY_TRAIN, HIDDEN, "none|nan-loss|nan-once"},

    [S_WORKER_RUN_DIR] = {"worker_run_dir", "run-dir", SET_STR, 0, 0, NULL, "DIR",
                          "trainer only: the training run (settings from DIR/config)", BY_WORKER,
                          HIDDEN},
    [S_RECORDS_FD] = {"records_fd", "records-fd", SET_INT, 0, 1 << 20, NULL, "N",
                      "trainer only: fd to write frames to", BY_WORKER, HIDDEN},
    [S_CONTROL_FD] = {"control_fd", "control-fd", SET_INT, 0, 1 << 20, NULL, "N",
                      "trainer only: fd to read control lines from", BY_WORKER, HIDDEN},
    [S_WORKER_MODEL] = {"worker_model", "model", SET_STR, 0, 0, NULL, "PATH",
                        "trainer only: weights to start with (.gzm)", BY_WORKER, HIDDEN},
    [S_GEN] = {"gen", "gen", SET_U64, 0, 0, "0", "G", "trainer only: generation of that model",
               BY_WORKER, HIDDEN},
    [S_PARENT_PID] = {"parent_pid", "parent-pid", SET_U64, 0, 0, "0", "PID",
                      "trainer only: exit at once unless this is our parent", BY_WORKER, HIDDEN},
    [S_WORKER_THREADS] = {"worker_threads", "threads", SET_INT, 0, 256, "1", "T",
                          "CPU backend threads; 0: all cores", BY_WORKER},
    [S_WORKER_SEED] = {"worker_seed", "seed", SET_U64, 0, 0, "0", "S",
                       "random seed; 0: from the clock and pid (--broker), the trainer's choice "
                       "(else)", BY_WORKER},
    [S_WORKER_FAULT] = {"worker_fault", "fault", SET_CHOICE, 0, 0, "none", "F",
                        "tests only: garbage (corrupt frames), stall or forge (forged results)",
                        BY_WORKER, HIDDEN, "none|garbage|stall|forge"},
    [S_WORKER_RUN] = {"worker_run", "run", SET_STR, 0, 0, NULL, "NAME",
                      "the run's name on the broker (its trainer's --run-name)", BY_WORKER},
    [S_SPOOL] = {"spool", "spool", SET_STR, 0, 0, NULL, "DIR",
                 "games kept until stored: --broker: outage buffer (default gomoku-spool-NAME); "
                 "else until the trainer acknowledges them", BY_WORKER},
    [S_SPOOL_MAX] = {"spool_max", "spool-max", SET_INT, 1, 10000000, "10000", "N",
                     "games the spool may hold", BY_WORKER},
    [S_MAX_GAMES] = {"max_games", "max-games", SET_U64, 0, 0, "0", "N",
                     "stop after sending N games; 0: no limit", BY_WORKER},
    [S_WORKER_PARALLEL] = {"worker_parallel", "parallel", SET_INT, 1, 65536, NULL, "G",
                           "--broker: concurrent games (without it: the run's)", BY_WORKER},
    [S_GAMES_LOG] = {"games_log", "games-log", SET_STR, 0, 0, NULL, "FILE",
                     "tests only: append the id of each game sent", BY_WORKER | BY_TRAIN, HIDDEN},

    [S_PLAY_VISITS] = {"play_visits", "visits", SET_INT, 0, 10000000, STR(PLAYER_VISITS), "V",
                       "model players: playouts per move; 0: use --time", BY_PLAY},
    [S_MATCH_VISITS] = {"match_visits", "visits", SET_INT, 0, 10000000, "200", "V",
                        "model players: playouts per move; 0: use --time (--time alone: 0)",
                        BY_MATCH},
    [S_TIME] = {"time", "time", SET_INT, 0, 86400000, "0", "MS",
                "model players: time per move (analyze: per query) when --visits 0",
                BY_PLAY | BY_MATCH | BY_ANALYZE},
    [S_SEARCH_THREADS] = {"search_threads", "threads", SET_INT, 1, SEARCHER_MAX_THREADS, "1",
                          "T", "search threads on one tree, each with its own net",
                          BY_PLAY | BY_MATCH | BY_PBRAIN | BY_ANALYZE},

    [S_BLACK] = {"black", "black", SET_STR, 0, 0, "human", "P", "black player", BY_PLAY},
    [S_WHITE] = {"white", "white", SET_STR, 0, 0, "bot:greedy", "P", "white player", BY_PLAY},
    [S_PLAY_MODEL] = {"play_model", "model", SET_STR, 0, 0, NULL, "M",
                      "play a person against model M", BY_PLAY},
    [S_HUMAN_COLOR] = {"human_color", "human-color", SET_CHOICE, 0, 0, "black", "C",
                       "with --model: the person's colour", BY_PLAY, 0, 0, "black|white"},
    [S_HINT] = {"hint", "hint", SET_FLAG, 0, 0, NULL, "",
                "show a suggested move and its line before each move of a person", BY_PLAY},
    [S_PLAY_QUIET] = {"play_quiet", "quiet", SET_FLAG, 0, 0, NULL, "", "no notes on stderr",
                      BY_PLAY},
    [S_LOAD] = {"load", "load", SET_STR, 0, 0, NULL, "FILE.psq",
                "start from the position in a Piskvork .psq file (play: its size unless "
                "--size; serve: the first game)", BY_PLAY | BY_SERVE},

    [S_MATCH_GAMES] = {"match_games", "games", SET_INT, 1, 1000000, "10", "N", "games",
                       BY_MATCH},
    [S_OPENINGS] = {"openings", "openings", SET_STR, 0, 0, "2", "K|FILE",
                    "K random stones near the centre (0..20), or an openings FILE (see README)",
                    BY_MATCH},
    [S_MATCH_SAVE] = {"match_save", "save", SET_STR, 0, 0, NULL, "DIR",
                      "write each game as DIR/game_NNNN.psq (the directory must exist)", BY_MATCH},
    [S_MATCH_TIME] = {"match_time", "match-time", SET_INT, 0, 86400000, "0", "MS",
                      "a clock per player per game (Gomocup's timeout_match); out of it loses; "
                      "0: none", BY_MATCH},
    [S_JSON] = {"json", "json", SET_FLAG, 0, 0, NULL, "", "also print the result as one JSON line",
                BY_MATCH | BY_CALIBRATE},
    [S_MATCH_QUIET] = {"match_quiet", "quiet", SET_FLAG, 0, 0, NULL, "",
                       "no line per game on stderr", BY_MATCH},

    [S_PBRAIN_MODEL] = {"pbrain_model", "model", SET_STR, 0, 0, NULL, "M",
                        "model file (.gzm), bot:greedy, bot:random or mcts:uniform", BY_PBRAIN},

    [S_SERVE_RUN] = {"serve_run", "run", SET_STR, 0, 0, NULL, "DIR",
                     "training run to watch (read only)", BY_SERVE},
    [S_SERVE_MODEL] = {"serve_model", "model", SET_STR, 0, 0, NULL, "M",
                       "model file or bot:NAME to play (see above)", BY_SERVE},
    [S_LISTEN] = {"listen", "listen", SET_STR, 0, 0, "127.0.0.1:8080", "HOST:PORT", "address",
                  BY_SERVE},
    [S_TOKEN] = {"token", "token", SET_STR, 0, 0, NULL, "T",
                 "secret every request must carry (needed off loopback)", BY_SERVE},
    [S_SERVE_VISITS] = {"serve_visits", "visits", SET_INT, 1, 10000000, "400", "V",
                        "model playouts per move", BY_SERVE},
    [S_SERVE_GAMES] = {"serve_games", "games", SET_INT, 1, 64, "8", "N", "games kept at once",
                       BY_SERVE},
    [S_SEARCHES] = {"searches", "searches", SET_INT, 1, 16, "2", "N",
                    "searches running at once", BY_SERVE},

    [S_ANALYZE_MODEL] = {"analyze_model", "model", SET_STR, 0, 0, NULL, "M",
                         "model file (.gzm), or mcts:uniform (the search without a net)",
                         BY_ANALYZE},
    [S_ANALYZE_VISITS] = {"analyze_visits", "visits", SET_INT, 0, 10000000, "400", "V",
                          "a query's visits when it gives neither visits nor time_ms; 0: use "
                          "--time", BY_ANALYZE},
    [S_ANALYZE_CANDIDATES] = {"analyze_candidates", "candidates", SET_INT, 1, 64, "5", "K",
                              "a query's candidate moves when it does not say", BY_ANALYZE},
    [S_ANALYZE_PARALLEL] = {"analyze_parallel", "parallel", SET_INT, 1, 64, "2", "N",
                            "queries searched at once, each by its own searcher (nets, trees, "
                            "cache)", BY_ANALYZE},
    [S_ANALYZE_TREE_MB] = {"analyze_tree_mb", "tree-mb", SET_INT, 0, 65536, "0", "MB",
                           "each parallel search's tree; 0: enough for --visits (a query that "
                           "asks for more may stop early, mem_full), 1024 with --time",
                           BY_ANALYZE},
    [S_ANALYZE_RULE] = {"analyze_rule", "rule", SET_RULE, 0, 0, NULL, "R",
                        "a query's rule when it does not say: freestyle, standard or renju "
                        "(unset: the rule the model was trained on)", BY_ANALYZE},
    [S_ANALYZE_SIZE] = {"analyze_size", "size", SET_INT, BOARD_MIN, BOARD_MAX, NULL, "N",
                        "a query's board size when it does not say (unset: 15, or the model's "
                        "largest board if smaller)", BY_ANALYZE},

    [S_MOVES] = {"moves", "moves", SET_STR, 0, 0, NULL, "\"x,y x,y ...\"",
                 "moves to replay, black first", BY_RULES},
    [S_VCF] = {"vcf", "vcf", SET_FLAG, 0, 0, NULL, "",
               "print the VCF line (or the defences against one)", BY_RULES},
    [S_RULES_VCF_NODES] = {"rules_vcf_nodes", "vcf-nodes", SET_U64, 1, 1e12, "1000000", "N",
                           "solver node budget per solve (with --vcf)", BY_RULES},
    [S_RULES_VCT] = {"rules_vct", "vct", SET_FLAG, 0, 0, NULL, "",
                     "print the VCT line (or the defences against one)", BY_RULES},
    [S_RULES_VCT_NODES] = {"rules_vct_nodes", "vct-nodes", SET_U64, 1, 1e12, "10000", "N",
                           "VCT solver node budget per solve (with --vct)", BY_RULES},
    [S_TOP] = {"top", "top", SET_INT, 0, BOARD_CELLS, "5", "N",
               "dump: most visited points shown per ply", BY_RECORDS},
    [S_MODEL_OUT] = {"model_out", "out", SET_STR, 0, 0, NULL, "F", "file to write", BY_MODEL},
    [S_FORCE] = {"force", "force", SET_FLAG, 0, 0, NULL, "", "overwrite F if it exists",
                 BY_MODEL},

    [S_BENCH_DEVICE] = {"bench_device", "device", SET_STR, 0, 0, "cpu", "D",
                        "auto, cpu, cpu-ref, cuda, cuda:N",
                        BY_BENCH_NN | BY_BENCH_SELFPLAY | BY_BENCH_TARGETS},
    [S_BENCH_RUNS] = {"bench_runs", "runs", SET_INT, 1, 64, "5", "R",
                      "runs per figure; the median is reported",
                      BY_BENCH_RULES | BY_BENCH_NN | BY_BENCH_MCTS},
    [S_BENCH_SECONDS] = {"bench_seconds", "seconds", SET_DOUBLE, 0.01, 600, "1", "S",
                         "(minimum) seconds per run", BY_BENCH_RULES | BY_BENCH_NN},
    [S_BENCH_NN_BATCH] = {"bench_nn_batch", "batch", SET_STR, 0, 0, "64", "N[,N...]",
                          "batch sizes, one JSON line each", BY_BENCH_NN},
    [S_BENCH_NN_MODEL] = {"bench_nn_model", "model", SET_STR, 0, 0, NULL, "F",
                          "use this model's dims and weights instead", BY_BENCH_NN},
    [S_SGEMM_SIZE] = {"sgemm_size", "sgemm-size", SET_INT, 64, 8192, "2048", "N",
                      "square SGEMM for the peak figure", BY_BENCH_NN},
    [S_BENCH_MCTS_VISITS] = {"bench_mcts_visits", "visits", SET_INT, 100, 2000000, "20000", "V",
                             "playouts per search", BY_BENCH_MCTS},
    [S_BENCH_MCTS_BATCH] = {"bench_mcts_batch", "batch", SET_INT, 1, 256, "1", "B",
                            "leaves per eval call, virtual loss", BY_BENCH_MCTS},
    [S_BENCH_MCTS_MEM] = {"bench_mcts_mem", "mem", SET_INT, 16, 65536, "512", "MB",
                          "tree memory", BY_BENCH_MCTS},
    [S_STONES] = {"stones", "stones", SET_INT, 0, 200, "0", "K",
                  "start from K greedy-bot moves (a middle game) instead of 0-3 random stones",
                  BY_BENCH_MCTS},
    [S_BENCH_MCTS_VCF_NODES] = {"bench_mcts_vcf_nodes", "vcf-nodes", SET_INT, 0, 1000000, "0",
                                "N", "also search each opening with the VCF leaf check of N "
                                "nodes (root: 20N); 0: not", BY_BENCH_MCTS},
    [S_BENCH_SELFPLAY_SECONDS] = {"bench_selfplay_seconds", "seconds", SET_DOUBLE, 0.1, 86400,
                                  "60", "S", "how long to run", BY_BENCH_SELFPLAY},
    [S_BENCH_TRAIN_STEPS] = {"bench_train_steps", "steps", SET_INT, 1, 100000, "20", "N",
                             "timed training steps", BY_BENCH_TRAIN},
    [S_BENCH_TRAIN_GAMES] = {"bench_train_games", "games", SET_INT, 1, 100000, "300", "N",
                             "random games in the window", BY_BENCH_TRAIN},
    [S_POSITIONS] = {"positions", "positions", SET_INT, 1, 100000, "200", "P",
                     "positions in the set", BY_BENCH_VCF},
    [S_BENCH_VCF_NODES] = {"bench_vcf_nodes", "nodes", SET_U64, 1, 1e12, "10000", "N",
                           "node budget per position", BY_BENCH_VCF},
    [S_BENCH_VCF_RUNS] = {"bench_vcf_runs", "runs", SET_INT, 1, 64, "3", "R",
                          "runs over the set; the median is reported", BY_BENCH_VCF | BY_BENCH_VCT},
    [S_BENCH_VCT_POSITIONS] = {"bench_vct_positions", "positions", SET_INT, 1, 100000, "100", "P",
                               "positions in the set", BY_BENCH_VCT},
    [S_BENCH_VCT_NODES] = {"bench_vct_nodes", "nodes", SET_U64, 1, 1e12, "2000", "N",
                           "node budget per position", BY_BENCH_VCT},
    [S_BENCH_VCT_DEPTH] = {"bench_vct_depth", "depth", SET_INT, 0, VCT_MAX_DEPTH, "0", "D",
                           "threats at most; 0: the solver's limit", BY_BENCH_VCT},
    [S_BENCH_VCT_ALGO] = {"bench_vct_algo", "algo", SET_CHOICE, 0, 0, "pn", "A",
                          "proof-number search (pn) or iterative-deepening depth-first (dfs)",
                          BY_BENCH_VCT, 0, 0, "pn|dfs"},
    [S_BENCH_VCT_VCF_NODES] = {"bench_vct_vcf_nodes", "vcf-nodes", SET_U64, 1, 1e12,
                               STR(VCT_VCF_NODES), "N", "budget of each inner VCF check",
                               BY_BENCH_VCT},
    [S_BENCH_VCT_FILE] = {"bench_vct_file", "file", SET_STR, 0, 0, NULL, "F",
                          "the positions of F instead (one a line, the moves so far as in an "
                          "openings file: 'h8 i9 j7'; bench/vct-freestyle15.txt: positions of "
                          "our games against PentaZen)",
                          BY_BENCH_VCT},
    [S_BENCH_TARGETS_MODEL] = {"bench_targets_model", "model", SET_STR, 0, 0, NULL, "M",
                               "weights file (.gzm)", BY_BENCH_TARGETS},
    [S_BENCH_TARGETS_FILE] = {"bench_targets_file", "file", SET_STR, 0, 0, NULL, "F",
                              "the positions (one a line, the moves so far as in an openings "
                              "file; bench/regret-freestyle15.txt: positions of our games "
                              "against PentaZen)", BY_BENCH_TARGETS},
    [S_BENCH_TARGETS_REF_VISITS] = {"bench_targets_ref_visits", "ref-visits", SET_INT, 2, 1000000,
                                    "1600", "V", "playouts of the reference search (PUCT)",
                                    BY_BENCH_TARGETS},
    [S_BENCH_TARGETS_POSITIONS] = {"bench_targets_positions", "positions", SET_INT, 0, 100000,
                                   "0", "P", "the file's first P positions; 0: all",
                                   BY_BENCH_TARGETS},
    [S_BENCH_BROKER] = {"bench_broker", "broker", SET_STR, 0, 0, NULL, "URL",
                        "redis://[:password@]host:port[/db] (without it: a private "
                        "redis-server)", BY_BENCH_BROKER},
    [S_FRAMES] = {"frames", "frames", SET_INT, 10, 10000000, "3000", "N",
                  "frames per transport", BY_BENCH_BROKER},
    [S_PLIES] = {"plies", "plies", SET_INT, 1, BOARD_CELLS, "60", "N", "plies per game",
                 BY_BENCH_BROKER},
    [S_WORKER_GAMES_PER_HOUR] = {"worker_games_per_hour", "worker-games-per-hour", SET_DOUBLE, 1,
                                 1e9, "2170", "G", "one worker's games/hour, for the ceiling "
                                 "(2170: a CPU worker, 6x64 net)", BY_BENCH_BROKER},

    [S_CALIB_MODEL] = {"calibrate_model", "model", SET_STR, 0, 0, NULL, "M", "the model (.gzm)",
                       BY_CALIBRATE},
    [S_CALIB_POSITIONS] = {"calibrate_positions", "positions", SET_INT, 1, 100000000, "2000", "N",
                           "positions at most", BY_CALIBRATE},
    [S_CALIB_EVERY] = {"calibrate_every", "every", SET_INT, 1, 400, "3", "K",
                       "one ply in K of each game", BY_CALIBRATE},
    [S_CALIB_SKIP] = {"calibrate_skip", "skip", SET_INT, 0, 400, "4", "K",
                      "plies skipped at the start of a game", BY_CALIBRATE},
    [S_CALIB_VCT_NODES] = {"calibrate_vct_nodes", "vct-nodes", SET_INT, 1, 100000000, "5000", "N",
                           "threat solver budget of the win query (the loss check: a tenth "
                           "per solve)", BY_CALIBRATE},
    [S_DISTILL_EPOCHS] = {"distill_epochs", "epochs", SET_INT, 1, 1000, "8", "E",
                          "passes over the positions", BY_MODEL},
    [S_DISTILL_CHILDREN] = {"distill_children", "children", SET_INT, 0, 8, "1", "K",
                            "positions a random move away from each game position, added "
                            "(the search values such positions too)", BY_MODEL},
    [S_DISTILL_LR] = {"distill_lr", "lr", SET_DOUBLE, 1e-6, 1, "0.002", "X",
                      "Adam's learning rate (decays linearly to a tenth)", BY_MODEL},
    [S_DISTILL_INIT] = {"distill_init", "init", SET_STR, 0, 0, NULL, "F",
                        "start from this pattern net instead of random weights", BY_MODEL},
    [S_DISTILL_THREADS] = {"distill_threads", "threads", SET_INT, 0, 256, "2", "T",
                           "CPU threads of the teacher net and of the training (0: all "
                           "cores)", BY_MODEL},
    [S_DISTILL_HOLDOUT] = {"distill_holdout", "holdout", SET_DOUBLE, 0, 0.5, "0.05", "F",
                           "fraction of the games held out for the loss figures", BY_MODEL},
    [S_DISTILL_TARGETS] = {"distill_targets", "targets", SET_CHOICE, 0, 0, "net", "T",
                           "net: F's policy and value; records: the games' own (visit counts "
                           "of full searches, the result mixed with the root value); search: "
                           "a new search of each position by the --init net", BY_MODEL,
                           0, 0, "net|records|search"},
    [S_DISTILL_VALUE_MIX] = {"distill_value_mix", "value-mix", SET_DOUBLE, 0, 1, "0.5", "X",
                             "with --targets records or search: the root value's share in the "
                             "value target (the rest: the game's result)", BY_MODEL},
    [S_DISTILL_SEARCH_VISITS] = {"distill_search_visits", "search-visits", SET_INT, 1, 1000000,
                                 "1024", "V", "with --targets search: the playouts of each "
                                 "position's search", BY_MODEL},
    [S_DISTILL_WON] = {"distill_won", "won", SET_CHOICE, 0, 0, "move", "W",
                       "with --targets records, a full ply whose root value is +1 (a win "
                       "the search proved): move: the move played is its policy target; "
                       "visits: its recorded visits (records from before 2026-12-07 hold "
                       "none there, or a reused tree's, often on other moves)", BY_MODEL,
                       0, 0, "move|visits"},
    [S_RULES_GAME] = {"rules_game", "game", SET_STR, 0, 0, NULL, "FILE.psq",
                      "audit a game instead of --moves: with --vct (or --vcf), the side to "
                      "move's win at each ply, the winner's first, the loser's defences "
                      "before it, and wins held by the side that did not win", BY_RULES},
};

const setting_t *settings_find(const char *key)
{
    for (int i = 0; i < S_COUNT; i++)
        if (strcmp(settings_table[i].key, key) == 0)
            return &settings_table[i];
    return NULL;
}

static bool in_range(const setting_t *s, double v)
{
    return (s->lo == 0 && s->hi == 0) || (v >= s->lo && v <= s->hi);
}

/* "a, b or c" from "a|b|c" */
static const char *choice_list(const char *choices, char *buf, size_t len)
{
    size_t n = 0, k = strlen(choices);
    buf[0] = '\0';
    for (size_t i = 0; i < k && n + 5 < len; i++) {
        if (choices[i] != '|') {
            buf[n++] = choices[i];
            continue;
        }
        const char *sep = strchr(choices + i + 1, '|') ? ", " : " or ";
        n += (size_t)snprintf(buf + n, len - n, "%s", sep);
    }
    buf[n < len ? n : len - 1] = '\0';
    return buf;
}

static bool is_choice(const char *choices, const char *text)
{
    size_t n = strlen(text);
    for (const char *c = choices; c; c = strchr(c, '|'), c = c ? c + 1 : NULL)
        if (strncmp(c, text, n) == 0 && (c[n] == '|' || c[n] == '\0') && n > 0)
            return true;
    return false;
}

int settings_parse(const setting_t *s, const char *text, void *dst, const char **why)
{
    static _Thread_local char list[160];
    char *end;
    errno = 0;
    *why = NULL;
    switch (s->type) {
    case SET_INT: {
        long x = strtol(text, &end, 10);
        if (errno || end == text || *end || x < -ANY_INT || x > ANY_INT)
            *why = "not an integer";
        else if (!in_range(s, (double)x))
            *why = "out of range";
        else
            *(int *)dst = (int)x;
        break;
    }
    case SET_DOUBLE: {
        double x = strtod(text, &end);
        if (errno || end == text || *end || !isfinite(x))
            *why = "not a finite number";
        else if (!in_range(s, x))
            *why = "out of range";
        else
            *(double *)dst = x;
        break;
    }
    case SET_U64: {
        unsigned long long x = strtoull(text, &end, 10);
        if (errno || end == text || *end || text[0] == '-' || text[0] == '+')
            *why = "not a non-negative integer";
        else if (!in_range(s, (double)x))
            *why = "out of range";
        else
            *(uint64_t *)dst = x;
        break;
    }
    case SET_RULE:
        if (!rule_parse(text, (rule_t *)dst))
            *why = "freestyle, standard or renju";
        break;
    case SET_PRECISION: {
        char err[128];
        if (nn_precision_parse(text, (nn_precision_t *)dst, err, sizeof err) != 0) {
            snprintf(list, sizeof list, "%s", err);
            *why = list;
        }
        break;
    }
    case SET_CHOICE:
        if (!is_choice(s->choices, text))
            *why = choice_list(s->choices, list, sizeof list);
        else
            *(const char **)dst = text;
        break;
    case SET_STR:
        *(const char **)dst = text;
        break;
    case SET_FLAG:
        *(bool *)dst = true;
        break;
    }
    return *why ? -1 : 0;
}

void settings_format_range(const setting_t *s, char *buf, size_t len)
{
    switch (s->type) {
    case SET_INT:
    case SET_DOUBLE:
    case SET_U64:
        if (s->lo == 0 && s->hi == 0)
            snprintf(buf, len, "%s", s->type == SET_U64 ? ">= 0" : "any");
        else
            snprintf(buf, len, "%.10g..%.10g", s->lo, s->hi);
        break;
    case SET_RULE: snprintf(buf, len, "freestyle|standard|renju"); break;
    case SET_PRECISION: snprintf(buf, len, "fp32|bf16|auto"); break;
    case SET_CHOICE: snprintf(buf, len, "%s", s->choices); break;
    case SET_STR:
        if (s->hi > 0)
            snprintf(buf, len, "%.0f..%.0f bytes", s->lo, s->hi);
        else
            snprintf(buf, len, "text");
        break;
    case SET_FLAG: snprintf(buf, len, "-"); break;
    }
}

static const char *const by_names[BY_COUNT] = {
    "rules", "records", "play", "match", "selfplay", "model-init", "train", "worker", "pbrain",
    "serve", "bench-rules", "bench-nn", "bench-mcts", "bench-selfplay", "bench-train",
    "bench-vcf", "bench-broker", "calibrate", "bench-vct", "analyze", "bench-targets",
};

void settings_format_commands(const setting_t *s, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int b = 0; b < BY_COUNT && n < len; b++)
        if (s->by & (1u << b))
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", by_names[b]);
}

void settings_print(FILE *f)
{
    static const char *const types[] = {"int", "double", "u64", "rule", "string", "flag",
                                        "precision", "choice"};
    int width = (int)strlen("COMMANDS");   /* the commands column fits its longest entry */
    for (int i = 0; i < S_COUNT; i++) {
        char cmds[256];
        settings_format_commands(&settings_table[i], cmds, sizeof cmds);
        width = (int)strlen(cmds) > width ? (int)strlen(cmds) : width;
    }
    fprintf(f, "%-22s %-23s %-9s %-24s %-14s %-17s %-*s %s\n", "KEY", "OPTION", "TYPE", "RANGE",
            "DEFAULT", "FLAGS", width, "COMMANDS", "HELP");
    for (int i = 0; i < S_COUNT; i++) {
        const setting_t *s = &settings_table[i];
        char opt[64], range[64], cmds[256], flags[32];
        snprintf(opt, sizeof opt, "--%s%s%s", s->opt, s->arg[0] ? " " : "", s->arg);
        settings_format_range(s, range, sizeof range);
        settings_format_commands(s, cmds, sizeof cmds);
        snprintf(flags, sizeof flags, "%s%s%s", s->flags & SETTING_RUN ? "run" : "",
                 s->flags & SETTING_RESUME ? ",resume" : "",
                 s->flags & SETTING_HIDDEN ? "hidden" : "");
        fprintf(f, "%-22s %-23s %-9s %-24s %-14s %-17s %-*s %s\n", s->key, opt, types[s->type],
                range, s->def ? s->def : "-", flags[0] ? flags : "-", width, cmds, s->help);
    }
    fprintf(f, "\nFLAGS: run, a key of RUN_DIR/config (gomoku train); resume, may change "
               "when a run resumes; hidden, for tests or the trainer, not shown by --help.\n");
}
