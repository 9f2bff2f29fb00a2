/* Checkpoints of a training run: the weights (.gzm, nn/weights.c) and,
 * beside them, the optimizer state, so that a resumed run continues
 * exactly where it stopped.
 *
 *   RUN_DIR/models/NNNNNN.gzm   weights, step, generation (what workers,
 *                               players and `gomoku match` load)
 *   RUN_DIR/models/NNNNNN.opt   Nesterov momentum, nparams fp32
 *
 * The .opt sidecar (rather than a section in the .gzm) keeps every model
 * file that leaves the run the same size and format as before (a version-1
 * reader loads any checkpoint); only the trainer reads it. Format, little
 * endian: "GZO1" | u32 version 1 | u64 step | u64 nparams | nparams x f32 |
 * u32 CRC32 of every byte before it. It is written (atomically) before the
 * .gzm, whose rename commits the checkpoint; a .opt that does not match its
 * .gzm's step and size is ignored with a message (momentum restarts at 0). */
#ifndef GZ_SELFPLAY_CHECKPOINT_H
#define GZ_SELFPLAY_CHECKPOINT_H

#include <stddef.h>

#include "nn/nn.h"

/* Save net's weights as m (m->params is overwritten with them; m->step and
 * m->generation are the caller's) to gzm_path, the momentum beside it.
 * 0, or -1 with err. */
int ckpt_save(nn_net_t *net, nn_model_t *m, const char *gzm_path, char *err, size_t errlen);

/* Load the momentum saved beside gzm_path into net, for a model at step
 * m->step with m->nparams parameters. 1: loaded; 0: no usable sidecar
 * (missing, torn, or another step/size: err says which, momentum is left
 * as it is); -1: out of memory. */
int ckpt_load_optimizer(nn_net_t *net, const nn_model_t *m, const char *gzm_path, char *err,
                        size_t errlen);

/* The sidecar path of gzm_path ("X.gzm" -> "X.opt") into out. */
void ckpt_opt_path(const char *gzm_path, char *out, size_t outlen);

#endif
