/* The CPU backend's bf16 inference convolutions: every 3x3 conv of a net
 * as an implicit GEMM on AVX-512-BF16 (vdpbf16ps: bf16 products, fp32
 * accumulation), for CPUs that have it; the fp32 path stays for the rest.
 *
 * Weights: a bf16 copy of each 3x3 conv weight tensor (round to nearest
 * even), packed once at create and again by gemm_bf16_sync; the fp32
 * master weights stay the caller's (training never sees bf16).
 * Activations: each conv's input is rounded to bf16 into a zero-padded,
 * channel-pair-interleaved copy (one pass, no 9x im2col); the output,
 * bias, ReLU, mask and the heads stay fp32 in the caller.
 *
 * Accuracy (tests/check_nn.c, against the float64 reference): policy and
 * value probabilities within 2e-2 absolute on random and trained nets. */
#ifndef GZ_NN_GEMM_BF16_H
#define GZ_NN_GEMM_BF16_H

#include <stdbool.h>
#include <stddef.h>

#include "nn/nn.h"

/* Can this CPU run the kernel (AVX-512 F/BW/VL and BF16, with OS support)?
 * Asked once and cached. When not, *why (may be NULL) says what is
 * missing. */
bool gemm_bf16_supported(char *why, size_t whylen);

/* Tests: make gemm_bf16_supported answer false (as on a CPU without the
 * instructions) while `off` is true, to exercise the fp32 fallback. */
void gemm_bf16_pretend_unsupported(bool off);

/* The packed weights of one net plus a workspace per lane (one thread
 * each). Opaque. */
typedef struct gemm_bf16 gemm_bf16_t;

/* For a net of config cfg with flat fp32 parameters params (nn/nn.h
 * layout; read, not kept), run by `lanes` threads, each converting up to
 * max_samples samples per call. NULL with err set when the CPU lacks the
 * instructions or memory runs out. */
gemm_bf16_t *gemm_bf16_create(const nn_config_t *cfg, const float *params, int lanes,
                              int max_samples, char *err, size_t errlen);
void gemm_bf16_free(gemm_bf16_t *g);

/* Re-pack the bf16 weights from new fp32 params (after training or
 * set_weights). Not while a gemm_bf16_conv3 runs. No allocation. */
void gemm_bf16_sync(gemm_bf16_t *g, const float *params);

/* out (cout, ns*M*M) = conv3x3(x (cin, ns*M*M)), zero padding, no bias:
 * activations channel-major over ns samples of M x M (M = cfg.board_max),
 * as the fast path keeps them. The weights are the 3x3 conv tensor at
 * float offset woff of the parameter layout (in_w, or a block's w1/w2);
 * cin and cout must be that tensor's. lane: 0..lanes-1, each lane used by
 * one thread at a time; 1 <= ns <= max_samples. No allocation. */
void gemm_bf16_conv3(gemm_bf16_t *g, int lane, size_t woff, int cin, int cout,
                     const float *x, float *out, int ns);

/* Round to bf16 and back (round to nearest even): the value the kernel
 * multiplies. For tests and the accuracy notes. */
float gemm_bf16_round(float v);

#endif
