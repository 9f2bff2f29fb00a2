/* nn_net_create: device-string parsing and backend choice. */
#include "nn/nn.h"

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

void nn_net_free(nn_net_t *n)
{
    if (!n)
        return;
    n->be->free(n->ctx);
    free(n);
}
