/* What the CPU backends share inside nn/ (not a public header): the masks
 * read from the input planes, and the two pieces of the spec that the fast
 * path reuses from the reference (nn/nn_ref.c): the total loss and the
 * Nesterov step. */
#ifndef GZ_NN_INT_H
#define GZ_NN_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "nn/nn.h"

/* Masks are read from the input planes with a 0.5 threshold: in (P, hw),
 * point q. */
static inline bool nn_in_onboard(const float *in, int hw, int q)
{
    return in[NN_PLANE_ONBOARD * hw + q] > 0.5f;
}
static inline bool nn_in_legal(const float *in, int hw, int q)
{
    return in[NN_PLANE_ONBOARD * hw + q] > 0.5f && in[NN_PLANE_OWN * hw + q] < 0.5f &&
           in[NN_PLANE_OPP * hw + q] < 0.5f && in[NN_PLANE_FORBIDDEN * hw + q] < 0.5f;
}

/* lp[k] (the policy loss sums of channel k over n samples) become means;
 * fills *out (may be NULL) and returns the total loss: value + l2 + each
 * channel weighted by pw[k] (nn_losses_t.total). */
double nn_ref_losses_total(const nn_config_t *c, const float *pw, double *lp, double lv,
                           double l2, int n, nn_losses_t *out);

/* Nesterov momentum SGD over n floats: v = mu v + g; w -= lr (g + mu v). */
void nn_ref_sgd_step(float *w, const float *g, float *v, size_t n, float lr, float mu);

/* What both CPU backends' contexts hold on the host. */
typedef struct {
    nn_config_t cfg;
    nn_layout_t lay;
    int max_batch;
    float *params;   /* (nparams), owned */
    float *grad;     /* (nparams), owned: the last step's gradient */
    float *mom;      /* (nparams), owned: Nesterov momentum */
} nn_host_t;

/* Fills h for model m: a copy of its params, zero momentum. Returns -1
 * when out of memory; nn_host_free then frees what was allocated (h must
 * start zeroed). */
int nn_host_init(nn_host_t *h, const nn_model_t *m, int max_batch);
void nn_host_free(nn_host_t *h);

/* An empty batch: zero losses and (when grad is not NULL) gradient. */
static inline int nn_empty_batch(size_t nparams, nn_losses_t *out, float *grad)
{
    if (out)
        *out = (nn_losses_t){0};
    for (size_t i = 0; grad && i < nparams; i++)
        grad[i] = 0.0f;
    return 0;
}

#endif
