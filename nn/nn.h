/* The policy/value network: model (config + one flat fp32 parameter
 * buffer), weights file, input encoding, and backends behind one vtable.
 *
 * Architecture (norm-free residual net, fixup-style init):
 *   input (N, P, M, M), P = cfg.in_planes (the feature set's planes below),
 *   M = cfg.board_max; a board of size s sits
 *   in the top-left s x s corner, the rest is off-board (mask plane 0).
 *   trunk: conv3x3 P->C + bias, ReLU; B blocks of
 *          x = relu(x + conv3x3(relu(conv3x3(x) + b1)) + b2)
 *   every conv output is multiplied by the on-board mask, so a net sized
 *   for M plays an s x s board exactly as a net sized for s would.
 *   policy head: conv1x1 C->Hp + bias, ReLU, conv1x1 Hp->K + bias -> K
 *          logits per point; illegal points (off board, occupied, forbidden:
 *          all read from the input planes) are masked out. Channel 0 is the
 *          policy the search uses; with K >= 2 channel 1 predicts the
 *          opponent's reply to the move played (KataGo's auxiliary head),
 *          with K = 3 channel 2 the soft policy target (the visit
 *          distribution ^ 1/4, renormalized). The extra channels only train
 *          the trunk: forward gives channel 0 alone.
 *   value head: conv1x1 C->Hv + bias, ReLU, pooled over on-board points
 *          (cfg.value_pool: the mean of each channel, or its mean and
 *          its max: Hf = Hv or 2 Hv features, the means first),
 *          FC Hf->Vh + bias, ReLU, FC Vh->3 -> win/draw/loss logits.
 *   All outputs are from the point of view of the side to move.
 *
 * Flat parameter layout (nn_param_layout gives offsets), in this order:
 *   in_w (C,P,3,3) in_b (C)
 *   per block: w1 (C,C,3,3) b1 (C) w2 (C,C,3,3) b2 (C)
 *   pol_w1 (Hp,C) pol_b1 (Hp) pol_w2 (K,Hp) pol_b2 (K)
 *   val_w1 (Hv,C) val_b1 (Hv) val_fc1_w (Vh,Hf) val_fc1_b (Vh)
 *   val_fc2_w (3,Vh) val_fc2_b (3)
 */
#ifndef GZ_NN_H
#define GZ_NN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/board.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Input planes, each (M, M), values 0 or 1. The basic feature set is
 * the first NN_PLANES; the threat set adds 2 * NN_THREAT_LEVELS. */
enum {
    NN_PLANE_OWN = 0,       /* stones of the side to move */
    NN_PLANE_OPP = 1,       /* stones of the other side */
    NN_PLANE_ONBOARD = 2,   /* 1 on the s x s board */
    NN_PLANE_BLACK = 3,     /* 1 on board when black is to move */
    NN_PLANE_FORBIDDEN = 4, /* renju: points forbidden to the side to move */
    NN_PLANES = 5,          /* the basic set */
    /* Threat set: at each empty point, one-hot, the best pattern a stone
     * of that side there would make (board_threat_at, engine/board.h):
     * level 0 five, 1 open four (or double four), 2 four, 3 open three,
     * 4 three; nothing below a three, and nothing on a point forbidden to
     * renju black. Own: the side to move's; opp: the other side's. */
    NN_THREAT_LEVELS = 5,
    NN_PLANE_THREAT_OWN = NN_PLANES,
    NN_PLANE_THREAT_OPP = NN_PLANES + NN_THREAT_LEVELS,
    NN_PLANES_MAX = NN_PLANES + 2 * NN_THREAT_LEVELS
};

/* Input feature sets (nn_config_t.features; stored in the weights file). */
typedef enum nn_features {
    NN_FEATURES_BASIC = 0,   /* NN_PLANES planes */
    NN_FEATURES_THREAT = 1,  /* NN_PLANES_MAX: basic + threat planes */
    NN_FEATURES_COUNT
} nn_features_t;
/* Planes of feature set f (f valid). */
int nn_feature_planes(int f);
/* "basic", "threat"; "?" for an unknown id. */
const char *nn_features_name(int f);
/* Name -> id: 0, or -1 with a message naming the valid names. */
int nn_features_parse(const char *s, int *out, char *err, size_t errlen);

#define NN_VALUE_OUTPUTS 3   /* win, draw, loss for the side to move */

/* Policy head output channels (nn_config_t.policy_outputs). */
enum {
    NN_POLICY_MAIN = 0,     /* the policy: visit distribution of the search */
    NN_POLICY_OPP = 1,      /* the opponent's reply (the next move of the game) */
    NN_POLICY_SOFT = 2,     /* soft policy: visits ^ NN_SOFT_POWER, renormalized */
    NN_MAX_POLICY_OUTPUTS = 3
};
#define NN_SOFT_POWER 0.25

/* Default weight of channel k's cross-entropy in the total loss (KataGo's:
 * 1 for the policy, 0.15 for the opponent's reply, 8 for the soft policy,
 * whose flatter target gives a loss that moves much less); a training
 * step may set its own (nn_train_opts_t.policy_weight). */
float nn_policy_loss_weight(int k);

/* How the value head pools its Hv channels over the board
 * (nn_config_t.value_pool; stored in the weights file). A mean alone
 * dilutes one decisive spot (a double threat taking shape) by the board's
 * area; the max sees it whole, as KataGo's value head pools. */
typedef enum nn_value_pool {
    NN_POOL_MEAN = 0,       /* Hf = Hv: the mean of each channel */
    NN_POOL_MEAN_MAX = 1,   /* Hf = 2 Hv: the means, then the maxima */
    NN_POOL_COUNT
} nn_value_pool_t;
/* "mean", "max" (mean and max); "?" for an unknown id. */
const char *nn_value_pool_name(int p);
/* Name -> id: 0, or -1 with a message naming the valid names. */
int nn_value_pool_parse(const char *s, int *out, char *err, size_t errlen);

/* Limits nn_config_check enforces (and the weights file accepts). */
#define NN_MAX_BLOCKS 40
#define NN_MAX_CHANNELS 512
#define NN_MAX_HEAD 1024
/* Head sizes of nn_config_default (and of gomoku model init). */
#define NN_POLICY_HEAD 32
#define NN_VALUE_HEAD 32
#define NN_VALUE_HIDDEN 64

typedef struct nn_config {
    int blocks;         /* residual blocks B, >= 0 */
    int channels;       /* trunk channels C */
    int board_max;      /* M: largest board size served, BOARD_MIN..BOARD_MAX */
    int in_planes;      /* nn_feature_planes(features) */
    int policy_head;    /* Hp */
    int value_head;     /* Hv */
    int value_hidden;   /* Vh */
    int policy_outputs;  /* K: policy head channels, 1..NN_MAX_POLICY_OUTPUTS */
    int features;       /* nn_features_t: what the input planes hold */
    int value_pool;     /* nn_value_pool_t: how the value head pools */
} nn_config_t;

/* Hf: the value head's pooled features, the input width of its first FC. */
static inline int nn_value_features(const nn_config_t *cfg)
{ return cfg->value_head * (cfg->value_pool == NN_POOL_MEAN_MAX ? 2 : 1); }

/* Fill head sizes and planes with defaults for a trunk of B x C on M
 * (one policy output, the basic feature set). */
void nn_config_default(nn_config_t *cfg, int blocks, int channels, int board_max);
/* 0 when every field is in range, else -1 and a message. */
int nn_config_check(const nn_config_t *cfg, char *err, size_t errlen);

typedef struct nn_tensor_info {
    const char *name;   /* "in_w", "block3.w1", ... */
    size_t offset;      /* in floats, into the flat buffer */
    size_t count;
} nn_tensor_info_t;

/* Number of parameter tensors, and the info of tensor i. */
int nn_param_tensors(const nn_config_t *cfg);
nn_tensor_info_t nn_param_tensor(const nn_config_t *cfg, int i);
size_t nn_param_count(const nn_config_t *cfg);
/* Whether tensor i is a conv/FC weight (L2 applies) rather than a bias. */
bool nn_param_tensor_is_weight(const nn_config_t *cfg, int i);
/* Offsets of the named pieces, in floats (tensors in the layout above). */
typedef struct nn_layout {
    size_t in_w, in_b;
    size_t blocks;            /* offset of block 0 */
    size_t block_stride;      /* floats per block: w1 b1 w2 b2 */
    size_t pol_w1, pol_b1, pol_w2, pol_b2;
    size_t val_w1, val_b1, val_fc1_w, val_fc1_b, val_fc2_w, val_fc2_b;
    size_t total;
} nn_layout_t;
void nn_param_layout(const nn_config_t *cfg, nn_layout_t *out);

/* Forward FLOPs per evaluation on an s x s board (multiply-add = 2). */
double nn_flops_per_eval(const nn_config_t *cfg, int size);

/* A model: config, the rule it was trained for, training step, weights. */
typedef struct nn_model {
    nn_config_t cfg;
    uint32_t rule;        /* rule_t it was trained on */
    uint64_t step;        /* training steps so far */
    uint64_t generation;  /* checkpoint number in a training run (0: none) */
    size_t nparams;
    float *params;        /* owned, nparams floats */
} nn_model_t;

/* Random init (fixup: second conv of each block zero, first scaled by
 * B^-1/2, He elsewhere) from a seed; NULL with a message on bad config. */
nn_model_t *nn_model_create(const nn_config_t *cfg, uint64_t seed, char *err, size_t errlen);
nn_model_t *nn_model_clone(const nn_model_t *m);
void nn_model_free(nn_model_t *m);
/* Give m the input planes of feature set `features`, a superset of its
 * own (basic -> threat): old filters kept, the new planes' zero. 0, or -1
 * with err (narrowing, out of memory). */
int nn_model_widen_features(nn_model_t *m, int features, char *err, size_t errlen);
/* Give m the value pooling `pool`, a superset of its own (mean -> mean
 * and max): the first FC's weights from the new features start at zero,
 * so m computes what it did until it trains. 0, or -1 with err. */
int nn_model_widen_value_pool(nn_model_t *m, int pool, char *err, size_t errlen);
/* A copy of m with more residual blocks and trunk channels that computes
 * what m does until it trains (README "Growing a net"); the new weights
 * that must be random are drawn from seed. NULL with err when blocks or
 * channels would shrink, the config is out of range, or out of memory. */
nn_model_t *nn_model_grow(const nn_model_t *m, int blocks, int channels, uint64_t seed,
                          char *err, size_t errlen);

/* Weights file (.gzm): header (magic "GZM1", version, dims, rule, step,
 * generation, param count), little-endian fp32 tensors, CRC32 of all
 * preceding bytes. Save is atomic (temp file in the same dir, fsync,
 * rename, fsync dir). Both return 0, or -1 with a one-line message that
 * names the problem (bad magic, unknown version, dims, truncated, CRC).
 * Version 2 adds the policy output count (in the field version 1 keeps
 * reserved, 0): a model with one output is still written as version 1,
 * byte for byte what older builds write and read; version 1 files load
 * as K = 1. Version 3 adds the input feature set (a u32 after the header
 * of version 2), written only for a set other than basic; older files
 * load as basic. Version 4 adds the value pooling (a u32 after the
 * feature set), written only for pooling other than the mean; older
 * files load as the mean. */
#define NN_FILE_VERSION 4
/* The version nn_model_save writes for cfg: 4 for value pooling other
 * than the mean, else 3 for a feature set other than basic, else 1 for
 * one policy output, else 2. */
int nn_file_version(const nn_config_t *cfg);
int nn_model_save(const nn_model_t *m, const char *path, char *err, size_t errlen);
nn_model_t *nn_model_load(const char *path, char *err, size_t errlen);
/* The net a command runs: the weights file at path when not NULL, else a
 * random net (nn_config_default) of blocks x channels for boards up to
 * board_max, from seed. NULL with err as for load and create. */
nn_model_t *nn_model_open(const char *path, int blocks, int channels, int board_max,
                          uint64_t seed, char *err, size_t errlen);
/* A weights file's identity: the CRC32 (zlib) of its bytes before the
 * checksum trailer, so the stored checksum itself when the file is intact
 * (the CRC of a whole file, trailer included, is one constant for every
 * intact file). nn_weights_crc of the bytes in memory, nn_file_crc of the
 * file at path (0, or -1 with err set). */
uint32_t nn_weights_crc(const void *data, size_t len);
int nn_file_crc(const char *path, uint32_t *crc, char *err, size_t errlen);

/* Encode the position for the side to move into (nn_feature_planes(f),
 * M, M) with feature set f; nn_encode is the basic set (NN_PLANES). No
 * allocation. */
void nn_encode_features(const board_t *b, int features, int board_max, float *out);
void nn_encode(const board_t *b, int board_max, float *out);
/* Point index on an s x s board <-> index in the M x M policy grid. */
static inline int nn_policy_index(int move, int size, int board_max)
{ return (move / size) * board_max + move % size; }

/* Training. */
typedef struct nn_train_opts {
    float lr;
    float momentum;      /* Nesterov */
    float weight_decay;  /* L2 coefficient c: loss += c * sum(w^2) over weights (not biases) */
    /* Loss weight of each policy output channel (finite, >= 0); all zero,
     * as in a struct that leaves it out: nn_policy_loss_weight's. */
    float policy_weight[NN_MAX_POLICY_OUTPUTS];
} nn_train_opts_t;

/* The policy loss weights a step with options o uses (o may be NULL:
 * the defaults). */
void nn_train_policy_weights(const nn_train_opts_t *o, float w[NN_MAX_POLICY_OUTPUTS]);

typedef struct nn_losses {
    float policy;   /* mean cross-entropy against the visit distribution */
    float value;    /* mean cross-entropy against the W/D/L target */
    float l2;       /* c * sum(w^2) */
    float total;    /* every term, the extra policy channels weighted by nn_policy_loss_weight */
    float opp_policy;   /* channel 1: mean cross-entropy against the next move (0 when K < 2) */
    float soft_policy;  /* channel 2: mean cross-entropy against the soft target (0 when K < 3) */
} nn_losses_t;

/* Learning-rate schedule: linear warmup, then cosine from lr to lr*final_frac. */
typedef struct nn_schedule {
    float lr;
    float final_frac;
    uint64_t warmup_steps;
    uint64_t total_steps;   /* 0: constant after warmup */
} nn_schedule_t;
float nn_schedule_lr(const nn_schedule_t *s, uint64_t step);

/* Inference precision. fp32: the reference-exact fast path. bf16: the CPU
 * backend's 3x3 convs in bf16 with fp32 accumulation (AVX-512-BF16 CPUs;
 * policy and value probabilities within 2e-2 of fp32, see README); the
 * CUDA backend's tensor-core path. auto: bf16 when the net passes an
 * accuracy check against its own fp32 forward and the backend finds bf16
 * the faster of the two for this net (its own rule), else fp32. Training
 * is always fp32. */
typedef enum nn_precision {
    NN_PRECISION_FP32 = 0,
    NN_PRECISION_BF16 = 1,
    NN_PRECISION_AUTO = 2,
} nn_precision_t;
/* "fp32", "bf16", "auto" -> *out: 0, or -1 with a message naming the
 * valid values. */
int nn_precision_parse(const char *s, nn_precision_t *out, char *err, size_t errlen);
const char *nn_precision_name(nn_precision_t p);

/* Backend vtable. A context owns its copy of the weights, its optimizer
 * state and whatever device state it needs; it is used from one thread at
 * a time. Callers go through nn_net_* below; tests may call a backend
 * directly to compare backends. n is 1..max_batch (nn_net_* turns n == 0
 * into a no-op before it reaches a backend). */
typedef struct nn_ctx nn_ctx_t;
typedef struct nn_backend {
    const char *name;
    /* NULL with a message when the backend cannot run (e.g. no device). */
    nn_ctx_t *(*create)(const nn_model_t *m, int max_batch, int device, int threads,
                        char *err, size_t errlen);
    /* in (n, P, M, M); policy (n, M*M) probabilities, 0 at illegal points;
     * value (n, 3) W/D/L probabilities. */
    void (*forward)(nn_ctx_t *c, const float *in, int n, float *policy, float *value);
    /* One SGD step on n samples: policy target (n, K, M*M), each channel
     * summing to 1 over legal points or all zero (no target: that channel
     * of that sample adds no loss), value target (n, 3). Fills *out (may be NULL) with the
     * losses before the update. 0, or -1 with err set (e.g. out of memory
     * for the training workspace); the weights are unchanged on -1. n = 0
     * is no step: losses 0, weights and momentum unchanged. */
    int (*train_step)(nn_ctx_t *c, const float *in, const float *policy_target,
                      const float *value_target, int n, const nn_train_opts_t *o,
                      nn_losses_t *out, char *err, size_t errlen);
    /* Losses and gradients (flat, like params) without updating; grad may
     * be NULL (n = 0: all zero). 0, or -1 with err set. */
    int (*loss_grad)(nn_ctx_t *c, const float *in, const float *policy_target,
                     const float *value_target, int n, float weight_decay,
                     nn_losses_t *out, float *grad, char *err, size_t errlen);
    /* Flat parameters (nparams floats, the layout above), copied out / in. */
    void (*get_weights)(nn_ctx_t *c, float *params);
    void (*set_weights)(nn_ctx_t *c, const float *params);
    /* Optimizer state: the Nesterov momentum buffer, nparams floats in the
     * parameter layout; zero until the first train_step. */
    void (*get_momentum)(nn_ctx_t *c, float *m);
    void (*set_momentum)(nn_ctx_t *c, const float *m);
    void (*free)(nn_ctx_t *c);
    /* Inference precision of forward (training stays fp32). FP32 or BF16:
     * that one; AUTO: the caller has checked that bf16 is accurate enough
     * for this net, the backend takes whichever of the two it runs faster
     * (a private rule: the CPU keeps fp32 for a Winograd trunk it runs
     * faster than its bf16 kernel, see nn_cpu.c; CUDA takes bf16) and says
     * why in msg when that is fp32. Returns the precision now in force
     * (NN_PRECISION_FP32 or _BF16), or -1 with the reason in msg (the
     * device cannot: no AVX-512 BF16, no memory, no cuDNN algorithm), and
     * then fp32 is in force, if anything. NULL: the backend has one
     * precision (the float64 reference). */
    int (*set_precision)(nn_ctx_t *c, nn_precision_t p, char *msg, size_t msglen);
    /* Host memory the backend copies to its device from without staging
     * (CUDA: pinned, cudaMallocHost), for buffers a caller fills again and
     * again (training batches); NULL when out of memory. host_free frees
     * what host_alloc gave. Both NULL: malloc / free. */
    void *(*host_alloc)(nn_ctx_t *c, size_t bytes);
    void (*host_free)(nn_ctx_t *c, void *p);
} nn_backend_t;

/* CPU backends. Both take max_batch >= 1 and threads >= 0 (0: all cores;
 * the fast path splits a batch across that many threads; the reference
 * path always runs on the calling thread). The fast path allocates its
 * forward workspace in create and its backward workspace on the first
 * train_step/loss_grad; nothing after that. */
extern const nn_backend_t nn_backend_cpu;      /* fast path: Winograd / im2col + SGEMM, threads */
extern const nn_backend_t nn_backend_cpu_ref;  /* reference: plain loops */
/* The CUDA backend lives in a module loaded on first use (nn/nn_cuda.h):
 * nn_cuda_backend() gives its vtable, or NULL with the reason. */

/* The reference path itself, in float64 (nn_backend_cpu_ref wraps it):
 * losses and, when grad / grad_in are not NULL, d(total loss)/d(params)
 * (nparams doubles) and d(total loss)/d(in) (n*P*M*M doubles). Returns
 * the total loss in double precision, for finite-difference checks.
 * Masks (on-board, legal) are read from `in` with a 0.5 threshold, so a
 * small perturbation of the input planes does not move them.
 * Allocates its own scratch; for tests and tools, not hot paths. */
double nn_ref_loss_grad64(const nn_config_t *cfg, const double *params, const float *in,
                          const float *policy_target, const float *value_target, int n,
                          double weight_decay, nn_losses_t *out, double *grad,
                          double *grad_in);

/* A net: a backend bound to a context, behind an opaque handle. One net is
 * used from one thread at a time (give each search thread its own). */
typedef struct nn_net nn_net_t;

/* Device strings: "auto", "cpu", "cpu-ref", "cuda", "cuda:N".
 * auto prefers CUDA and writes one line to *note saying what it chose and
 * why ("cuda unavailable: cudaErrorInsufficientDriver; using cpu"); cuda
 * never falls back: it fails with the reason. threads: CPU threads (0 =
 * all cores). The net copies the model's weights (the model stays the
 * caller's). Returns NULL with err set on failure. */
nn_net_t *nn_net_create(const nn_model_t *m, const char *device, int max_batch, int threads,
                        char *note, size_t notelen, char *err, size_t errlen);
void nn_net_free(nn_net_t *net);
/* Print note (nn_net_create's device note, possibly followed by "; " and
 * more, as searcher_create joins them) on f as one line, its device part
 * ("cuda unavailable: WHY; using cpu", "using cuda:0") only the first time
 * this process says it: a program that loads many models says which device
 * and why once. Thread-safe; remembers the last NN_NOTES_KEPT device parts. */
#define NN_NOTES_KEPT 8
void nn_note_print(FILE *f, const char *note);
/* The config it was created with, its batch limit, and its device
 * ("cpu", "cpu-ref", "cuda:0", ...). Pointers live as long as the net. */
const nn_config_t *nn_net_config(const nn_net_t *net);
int nn_net_max_batch(const nn_net_t *net);
const char *nn_net_device_name(const nn_net_t *net);
/* Shapes as in nn_backend_t; 0 <= n <= max batch, n == 0 does nothing
 * (train_step and loss_grad then report zero losses and return 0). */
void nn_net_forward(nn_net_t *net, const float *in, int n, float *policy, float *value);
int nn_net_train_step(nn_net_t *net, const float *in, const float *policy_target,
                      const float *value_target, int n, const nn_train_opts_t *o,
                      nn_losses_t *out, char *err, size_t errlen);
int nn_net_loss_grad(nn_net_t *net, const float *in, const float *policy_target,
                     const float *value_target, int n, float weight_decay, nn_losses_t *out,
                     float *grad, char *err, size_t errlen);
/* Host memory for inputs the net reads again and again (training
 * batches): pinned on CUDA, so train_step copies from it straight to the
 * device instead of through a staging copy; malloc on the CPU. NULL when
 * out of memory. Free it with nn_net_host_free on the same net, before
 * nn_net_free. */
void *nn_net_host_alloc(nn_net_t *net, size_t bytes);
void nn_net_host_free(nn_net_t *net, void *p);
/* Flat parameters and Nesterov momentum (nparams floats each, the
 * parameter layout), copied out of / into the net. */
void nn_net_get_weights(nn_net_t *net, float *params);
void nn_net_set_weights(nn_net_t *net, const float *params);
void nn_net_get_momentum(nn_net_t *net, float *m);
void nn_net_set_momentum(nn_net_t *net, const float *m);
/* Set the net's inference precision (a new net runs fp32). auto never
 * fails: it writes what it chose and why to *note (may be NULL), e.g.
 * "bf16 (bf16 accuracy check: policy 0.0008, value 0.0001)" or "fp32
 * (bf16: this CPU lacks AVX-512 BF16 (vdpbf16ps))". fp32 and bf16 fail
 * with err set when the device cannot (a CPU without bf16; a CUDA device
 * out of memory for that precision's state), and the net runs fp32. A
 * backend with one precision (cpu-ref) keeps it, with a note such as
 * "cpu-ref's own (auto asked for: cpu-ref chooses)". Allocates; not for
 * hot paths. 0, or -1 with err set. */
int nn_net_set_precision(nn_net_t *net, nn_precision_t p, char *note, size_t notelen,
                         char *err, size_t errlen);
/* "fp32" or "bf16", "device" where the backend has one precision (cpu-ref). */
const char *nn_net_precision_name(const nn_net_t *net);
/* The auto check's figures: max |bf16 - fp32| over policy and over value
 * probabilities of a fixed set of positions (random stones near the
 * centre, board_max and a smaller board), and the limit auto uses. */
#define NN_BF16_AUTO_TOLERANCE 0.05
int nn_net_precision_check(nn_net_t *net, double *policy_diff, double *value_diff,
                           char *err, size_t errlen);

/* Is a CUDA device usable? Loads the CUDA module and asks once, cached
 * (the error sticks). Writes the reason when not ("built without CUDA",
 * "cannot load <path>: ...", "cudaErrorInsufficientDriver", ...). */
bool nn_cuda_available(char *why, size_t whylen);

#ifdef __cplusplus
}
#endif
#endif
