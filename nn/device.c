/* nn_net_t: device-string parsing, backend choice, and the calls that
 * forward to the backend. */
#include "nn/nn.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GZ_HAVE_CUDA
bool nn_cuda_available(char *why, size_t whylen)
{
    snprintf(why, whylen, "built without CUDA");
    return false;
}
#endif

struct nn_net {
    const nn_backend_t *be;
    nn_ctx_t *ctx;
    nn_config_t cfg;
    int max_batch;
    char device_name[64];   /* "cpu", "cuda:0", ... */
};

static const char VALID[] = "auto, cpu, cpu-ref, cuda, cuda:N";

/* Parse "cuda" / "cuda:N"; -1 when s is not of that form. */
static int parse_cuda(const char *s)
{
    if (strcmp(s, "cuda") == 0)
        return 0;
    if (strncmp(s, "cuda:", 5) != 0 || s[5] == '\0')
        return -1;
    char *end;
    long v = strtol(s + 5, &end, 10);
    if (*end || v < 0 || v > 255 || s[5] == '-' || s[5] == '+' || s[5] == ' ')
        return -1;
    return (int)v;
}

nn_net_t *nn_net_create(const nn_model_t *m, const char *device, int max_batch, int threads,
                        char *note, size_t notelen, char *err, size_t errlen)
{
    if (note && notelen)
        note[0] = '\0';
    if (max_batch < 1) {
        snprintf(err, errlen, "batch size must be at least 1, got %d", max_batch);
        return NULL;
    }
    if (threads < 0) {
        snprintf(err, errlen, "threads must be >= 0 (0: all cores), got %d", threads);
        return NULL;
    }
    if (nn_config_check(&m->cfg, err, errlen) != 0)
        return NULL;
    const nn_backend_t *be = NULL;
    int dev = 0;
    char name[64];
    if (!device)
        device = "auto";
    if (strcmp(device, "cpu") == 0) {
        be = &nn_backend_cpu;
        snprintf(name, sizeof name, "cpu");
    } else if (strcmp(device, "cpu-ref") == 0) {
        be = &nn_backend_cpu_ref;
        snprintf(name, sizeof name, "cpu-ref");
    } else if (strcmp(device, "auto") == 0 || (dev = parse_cuda(device)) >= 0) {
        bool is_auto = strcmp(device, "auto") == 0;
        char why[200];
        if (nn_cuda_available(why, sizeof why)) {
#ifdef GZ_HAVE_CUDA
            be = &nn_backend_cuda;
            snprintf(name, sizeof name, "cuda:%d", dev);
#endif
        }
        if (!be) {
            if (!is_auto) {
                snprintf(err, errlen, "device %s: cuda unavailable: %s", device, why);
                return NULL;
            }
            be = &nn_backend_cpu;
            snprintf(name, sizeof name, "cpu");
            if (note && notelen)
                snprintf(note, notelen, "cuda unavailable: %s; using cpu", why);
        } else if (is_auto && note && notelen) {
            snprintf(note, notelen, "using %s", name);
        }
    } else {
        snprintf(err, errlen, "unknown device '%s' (valid: %s)", device, VALID);
        return NULL;
    }
    nn_net_t *n = calloc(1, sizeof *n);
    if (!n) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    n->ctx = be->create(m, max_batch, dev, threads, err, errlen);
    if (!n->ctx && strcmp(device, "auto") == 0 && be != &nn_backend_cpu) {
        /* auto: a CUDA device that is there but cannot take this net (memory,
         * cuDNN) still leaves the CPU; say so */
        if (note && notelen)
            snprintf(note, notelen, "cuda unavailable: %s; using cpu", err);
        be = &nn_backend_cpu;
        snprintf(name, sizeof name, "cpu");
        n->ctx = be->create(m, max_batch, 0, threads, err, errlen);
    }
    if (!n->ctx) {
        free(n);
        return NULL;
    }
    n->be = be;
    n->cfg = m->cfg;
    n->max_batch = max_batch;
    snprintf(n->device_name, sizeof n->device_name, "%s", name);
    return n;
}

void nn_net_free(nn_net_t *net)
{
    if (!net)
        return;
    net->be->free(net->ctx);
    free(net);
}

const nn_config_t *nn_net_config(const nn_net_t *net) { return &net->cfg; }
int nn_net_max_batch(const nn_net_t *net) { return net->max_batch; }
const char *nn_net_device_name(const nn_net_t *net) { return net->device_name; }

void nn_net_forward(nn_net_t *net, const float *in, int n, float *policy, float *value)
{
    assert(n >= 0 && n <= net->max_batch);
    if (n > 0)
        net->be->forward(net->ctx, in, n, policy, value);
}

int nn_net_train_step(nn_net_t *net, const float *in, const float *policy_target,
                      const float *value_target, int n, const nn_train_opts_t *o,
                      nn_losses_t *out, char *err, size_t errlen)
{
    assert(n >= 0 && n <= net->max_batch);
    if (n == 0) {
        if (out)
            *out = (nn_losses_t){0};
        return 0;
    }
    return net->be->train_step(net->ctx, in, policy_target, value_target, n, o, out, err,
                               errlen);
}

int nn_net_loss_grad(nn_net_t *net, const float *in, const float *policy_target,
                     const float *value_target, int n, float weight_decay, nn_losses_t *out,
                     float *grad, char *err, size_t errlen)
{
    assert(n >= 0 && n <= net->max_batch);
    if (n == 0) {
        if (out)
            *out = (nn_losses_t){0};
        if (grad)
            memset(grad, 0, nn_param_count(&net->cfg) * sizeof(float));
        return 0;
    }
    return net->be->loss_grad(net->ctx, in, policy_target, value_target, n, weight_decay, out,
                              grad, err, errlen);
}

void nn_net_get_weights(nn_net_t *net, float *params) { net->be->get_weights(net->ctx, params); }
void nn_net_set_weights(nn_net_t *net, const float *params)
{
    net->be->set_weights(net->ctx, params);
}
void nn_net_get_momentum(nn_net_t *net, float *m) { net->be->get_momentum(net->ctx, m); }
void nn_net_set_momentum(nn_net_t *net, const float *m) { net->be->set_momentum(net->ctx, m); }
