/* nn_net_t: device-string parsing, backend choice, and the calls that
 * forward to the backend; loading the CUDA module (nn/nn_cuda.h) on first
 * use. */
#include "nn/nn.h"
#include "nn/nn_cuda.h"
#include "util/util.h"

#include <assert.h>
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the CUDA module ---- */

static pthread_once_t mod_once = PTHREAD_ONCE_INIT;
static const nn_cuda_module_t *mod;   /* NULL when it could not load */
static char mod_info[2 * PATH_MAX + 256];  /* its path, or why it did not load */

static pthread_mutex_t notes_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t notes_seen[NN_NOTES_KEPT];   /* hashes of the notes said, a ring */
static int notes_n;

/* The length of note's device part as nn_net_create writes it (0: none). */
static size_t note_device_len(const char *note)
{
    static const char fallback[] = "; using cpu";
    const char *e = NULL;
    if (strncmp(note, "cuda unavailable: ", 18) == 0 && (e = strstr(note, fallback)))
        return (size_t)(e - note) + sizeof fallback - 1;
    if (strncmp(note, "using ", 6) == 0)
        return (e = strstr(note, "; ")) ? (size_t)(e - note) : strlen(note);
    return 0;
}

void nn_note_print(FILE *f, const char *note)
{
    size_t dn = note_device_len(note);
    uint64_t h = 1469598103934665603ull;   /* FNV-1a of the device part */
    for (size_t i = 0; i < dn; i++)
        h = (h ^ (unsigned char)note[i]) * 1099511628211ull;
    bool seen = false;
    if (dn > 0) {
        pthread_mutex_lock(&notes_lock);
        for (int i = 0; i < NN_NOTES_KEPT && i < notes_n; i++)
            seen |= notes_seen[i] == h;
        if (!seen)
            notes_seen[notes_n++ % NN_NOTES_KEPT] = h;
        pthread_mutex_unlock(&notes_lock);
    }
    const char *rest = seen ? note + dn + strspn(note + dn, "; ") : note;
    if (*rest)
        fprintf(f, "%s\n", rest);
}

#ifdef GZ_HAVE_CUDA
/* dlopen one candidate; NULL with the reason in why. */
static const nn_cuda_module_t *mod_try(const char *path, char *why, size_t whylen)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        /* dlerror names the module by its whole path first: keep its file
         * name, the reason after it is what matters */
        const char *e = dlerror(), *base = strrchr(path, '/');
        size_t pl = strlen(path);
        if (e && base && strncmp(e, path, pl) == 0)
            snprintf(why, whylen, "cannot load %s%s", base + 1, e + pl);
        else
            snprintf(why, whylen, "cannot load %s", e ? e : path);
        return NULL;
    }
    nn_cuda_module_fn fn = (nn_cuda_module_fn)dlsym(h, NN_CUDA_MODULE_ENTRY);
    if (!fn) {
        snprintf(why, whylen, "%s: not a gomoku CUDA module (no %s)", path,
                 NN_CUDA_MODULE_ENTRY);
        dlclose(h);
        return NULL;
    }
    const nn_cuda_module_t *m = fn();
    char what[256];
    if (nn_cuda_module_check(m, what, sizeof what) != 0) {
        snprintf(why, whylen, "%s: %s", path, what);
        dlclose(h);
        return NULL;
    }
    return m;   /* stays loaded for the life of the process */
}
#endif

int nn_cuda_module_check(const nn_cuda_module_t *m, char *why, size_t whylen)
{
    if (!m) {
        snprintf(why, whylen, "the module's entry returned nothing (rebuild it)");
        return -1;
    }
    /* abi and size first: the fields after them are only where we expect
     * them in a module of our ABI */
    if (m->abi != NN_CUDA_MODULE_ABI || m->size != sizeof *m) {
        snprintf(why, whylen,
                 "a gomoku CUDA module of another version (module ABI %d, %zu bytes; this "
                 "program's ABI %d, %zu bytes): rebuild it",
                 m->abi, m->size, NN_CUDA_MODULE_ABI, sizeof *m);
        return -1;
    }
    const struct { const char *name; size_t module, here; } s[] = {
        {"nn_config_t", m->size_config, sizeof(nn_config_t)},
        {"nn_model_t", m->size_model, sizeof(nn_model_t)},
        {"nn_train_opts_t", m->size_train_opts, sizeof(nn_train_opts_t)},
        {"nn_losses_t", m->size_losses, sizeof(nn_losses_t)},
        {"nn_backend_t", m->size_backend, sizeof(nn_backend_t)},
        {"nn_cuda_stats_t", m->size_stats, sizeof(nn_cuda_stats_t)},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        if (s[i].module != s[i].here) {
            snprintf(why, whylen,
                     "%s is %zu bytes in the module, %zu in this program (a header changed "
                     "without an ABI bump): rebuild it",
                     s[i].name, s[i].module, s[i].here);
            return -1;
        }
    return 0;
}

#ifdef GZ_CUDA_MODULE_DIR
static const char *const install_dir = GZ_CUDA_MODULE_DIR;
#else
static const char *const install_dir = NULL;
#endif

static void mod_load(void)
{
#ifndef GZ_HAVE_CUDA
    (void)install_dir;
    snprintf(mod_info, sizeof mod_info, "built without CUDA");
#else
    char path[PATH_MAX + 32];
    const char *env = getenv("GOMOKU_CUDA_MODULE");
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
        mod = mod_try(path, mod_info, sizeof mod_info);
    } else {
        /* next to the program (build tree, a copied binary), then the install
         * dir; the first one that exists is the one that must load */
        char dirs[2][PATH_MAX];
        int nd = 0;
        ssize_t n = readlink("/proc/self/exe", dirs[0], sizeof dirs[0] - 1);
        if (n > 0) {
            dirs[0][n] = '\0';
            char *slash = strrchr(dirs[0], '/');
            if (slash) {
                *slash = '\0';
                nd++;
            }
        }
        if (install_dir)
            snprintf(dirs[nd++], sizeof dirs[0], "%s", install_dir);
        bool found = false;
        for (int i = 0; i < nd && !found; i++) {
            int w = snprintf(path, sizeof path, "%s/%s", dirs[i], NN_CUDA_MODULE_FILE);
            if (w < (int)sizeof path && access(path, F_OK) == 0) {
                found = true;
                mod = mod_try(path, mod_info, sizeof mod_info);
            }
        }
        if (!found) {
            int w = snprintf(mod_info, sizeof mod_info, "%s not found in %s%s%s",
                             NN_CUDA_MODULE_FILE, nd > 0 ? dirs[0] : "the program's directory",
                             nd > 1 ? " nor in " : "", nd > 1 ? dirs[1] : "");
            (void)w;   /* a long path may be cut: it is a message */
        }
    }
    if (mod)
        snprintf(mod_info, sizeof mod_info, "%s", path);
#endif
}

static const nn_cuda_module_t *mod_get(char *why, size_t whylen)
{
    pthread_once(&mod_once, mod_load);
    if (!mod && why && whylen)
        snprintf(why, whylen, "%s", mod_info);
    return mod;
}

int nn_cuda_module_info(char *buf, size_t len)
{
    const nn_cuda_module_t *m = mod_get(NULL, 0);
    snprintf(buf, len, "%s", mod_info);
    return m ? 0 : -1;
}

int nn_cuda_device_count(char *why, size_t whylen)
{
    const nn_cuda_module_t *m = mod_get(why, whylen);
    return m ? m->device_count(why, whylen) : -1;
}

bool nn_cuda_available(char *why, size_t whylen)
{
    int n = nn_cuda_device_count(why, whylen);
    if (n == 0 && why && whylen)
        snprintf(why, whylen, "no CUDA device");
    return n > 0;
}

const nn_backend_t *nn_cuda_backend(char *why, size_t whylen)
{
    return nn_cuda_available(why, whylen) ? mod->backend : NULL;
}

int nn_cuda_device_describe(int dev, char *buf, size_t len)
{
    const nn_cuda_module_t *m = mod_get(buf, len);
    return m ? m->device_describe(dev, buf, len) : -1;
}

double nn_cuda_gemm_peak_tflops(int device, char *name, size_t namelen)
{
    char why[sizeof mod_info];
    const nn_cuda_module_t *m = mod_get(why, sizeof why);
    if (!m) {
        snprintf(name, namelen, "unavailable: %s", why);
        return -1.0;
    }
    return m->gemm_peak_tflops(device, name, namelen);
}

int nn_cuda_check_shapes(const nn_config_t *cfg, int n, char *err, size_t errlen)
{
    const nn_cuda_module_t *m = mod_get(err, errlen);
    return m ? m->check_shapes(cfg, n, err, errlen) : -1;
}

int nn_cuda_mem_info(int dev, size_t *free_bytes, size_t *total_bytes, char *why, size_t whylen)
{
    const nn_cuda_module_t *m = mod_get(why, whylen);
    return m ? m->mem_info(dev, free_bytes, total_bytes, why, whylen) : -1;
}

int nn_cuda_ctx_stats(nn_ctx_t *c, nn_cuda_stats_t *out)
{
    const nn_cuda_module_t *m = mod_get(NULL, 0);
    return m ? m->ctx_stats(c, out) : -1;
}

int nn_cuda_self_test(char *err, size_t errlen)
{
    const nn_cuda_module_t *m = mod_get(err, errlen);
    return m ? m->self_test(err, errlen) : -1;
}

/* ---- nn_net_t ---- */

struct nn_net {
    const nn_backend_t *be;
    nn_ctx_t *ctx;
    nn_config_t cfg;
    int max_batch;
    char device_name[64];   /* "cpu", "cuda:0", ... */
    nn_precision_t prec;    /* FP32 or BF16 where the backend lets us choose */
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
        char why[sizeof mod_info];
        be = nn_cuda_backend(why, sizeof why);
        if (be)
            snprintf(name, sizeof name, "cuda:%d", dev);
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

void *nn_net_host_alloc(nn_net_t *net, size_t bytes)
{
    return net->be->host_alloc ? net->be->host_alloc(net->ctx, bytes) : malloc(bytes);
}

void nn_net_host_free(nn_net_t *net, void *p)
{
    if (!p)
        return;
    if (net->be->host_free)
        net->be->host_free(net->ctx, p);
    else
        free(p);
}

void nn_net_get_weights(nn_net_t *net, float *params) { net->be->get_weights(net->ctx, params); }
void nn_net_set_weights(nn_net_t *net, const float *params)
{
    net->be->set_weights(net->ctx, params);
}
void nn_net_get_momentum(nn_net_t *net, float *m) { net->be->get_momentum(net->ctx, m); }
void nn_net_set_momentum(nn_net_t *net, const float *m) { net->be->set_momentum(net->ctx, m); }

/* ---- inference precision ---- */

int nn_precision_parse(const char *s, nn_precision_t *out, char *err, size_t errlen)
{
    static const nn_precision_t all[] = {NN_PRECISION_FP32, NN_PRECISION_BF16, NN_PRECISION_AUTO};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (s && strcmp(s, nn_precision_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    snprintf(err, errlen, "unknown precision '%s' (valid: fp32, bf16, auto)", s ? s : "");
    return -1;
}

const char *nn_precision_name(nn_precision_t p)
{
    return p == NN_PRECISION_BF16 ? "bf16" : p == NN_PRECISION_AUTO ? "auto" : "fp32";
}

const char *nn_net_precision_name(const nn_net_t *net)
{
    return net->be->set_precision ? nn_precision_name(net->prec) : "device";
}

/* The check's positions: position k has 3k stones played at random near
 * the centre (a cluster, as in games), on board_max for even k and on a
 * smaller board for odd k; freestyle. */
enum { CHECK_POSITIONS = 8 };

static void check_inputs(int board_max, int features, float *in)
{
    uint64_t st = 20261123;
    size_t ps = (size_t)nn_feature_planes(features) * board_max * board_max;
    board_t b;
    for (int k = 0; k < CHECK_POSITIONS; k++) {
        int size = k % 2 == 0 || board_max <= BOARD_MIN ? board_max : board_max - 2;
        size = size < BOARD_MIN ? BOARD_MIN : size;
        board_init(&b, size, RULE_FREESTYLE);
        int r = size / 2 < 3 ? size / 2 : 3;
        for (int tries = 0; b.nmoves < 3 * k && tries < 1000 && !board_over(&b); tries++) {
            int c = size / 2, grow = b.nmoves / 4;
            int lo = c - r - grow < 0 ? 0 : c - r - grow;
            int hi = c + r + grow >= size ? size - 1 : c + r + grow;
            int x = lo + (int)(util_rng_next(&st) % (uint64_t)(hi - lo + 1));
            int y = lo + (int)(util_rng_next(&st) % (uint64_t)(hi - lo + 1));
            board_play(&b, board_xy(&b, x, y));   /* an occupied point is just refused */
        }
        nn_encode_features(&b, features, board_max, in + (size_t)k * ps);
    }
}

/* Forward the check positions in batches of at most max_batch. */
static void check_forward(nn_net_t *net, const float *in, float *pol, float *val)
{
    int M = net->cfg.board_max, hw = M * M;
    for (int k = 0; k < CHECK_POSITIONS; k += net->max_batch) {
        int n = CHECK_POSITIONS - k < net->max_batch ? CHECK_POSITIONS - k : net->max_batch;
        nn_net_forward(net, in + (size_t)k * net->cfg.in_planes * hw, n, pol + (size_t)k * hw,
                       val + 3 * (size_t)k);
    }
}

int nn_net_precision_check(nn_net_t *net, double *policy_diff, double *value_diff,
                           char *err, size_t errlen)
{
    if (!net->be->set_precision) {
        snprintf(err, errlen, "%s chooses its own precision", net->device_name);
        return -1;
    }
    nn_precision_t was = net->prec;
    int M = net->cfg.board_max;
    size_t hw = (size_t)M * M, n = CHECK_POSITIONS;
    float *in = malloc(sizeof(float) * n * net->cfg.in_planes * hw);
    float *pol = malloc(sizeof(float) * 2 * n * hw), *val = malloc(sizeof(float) * 2 * n * 3);
    int rc = -1;
    if (!in || !pol || !val) {
        snprintf(err, errlen, "out of memory for the precision check");
        goto out_free;
    }
    check_inputs(M, net->cfg.features, in);
    if (nn_net_set_precision(net, NN_PRECISION_FP32, NULL, 0, err, errlen) != 0)
        goto out_free;
    check_forward(net, in, pol, val);
    if (nn_net_set_precision(net, NN_PRECISION_BF16, NULL, 0, err, errlen) != 0)
        goto out_restore;
    check_forward(net, in, pol + n * hw, val + n * 3);
    double dp = 0.0, dv = 0.0;
    for (size_t i = 0; i < n * hw; i++)
        dp = fmax(dp, fabs((double)pol[i] - pol[n * hw + i]));
    for (size_t i = 0; i < n * 3; i++)
        dv = fmax(dv, fabs((double)val[i] - val[n * 3 + i]));
    *policy_diff = dp;
    *value_diff = dv;
    rc = 0;
out_restore:
    if (net->prec != was)
        nn_net_set_precision(net, was, NULL, 0, err, errlen);
out_free:
    free(in);
    free(pol);
    free(val);
    return rc;
}

int nn_net_set_precision(nn_net_t *net, nn_precision_t p, char *note, size_t notelen,
                         char *err, size_t errlen)
{
    if (note && notelen)
        note[0] = '\0';
    if (!net->be->set_precision) {
        if (note && notelen)
            snprintf(note, notelen, "%s's own (%s asked for: %s chooses)", net->device_name,
                     nn_precision_name(p), net->device_name);
        return 0;
    }
    if (p != NN_PRECISION_AUTO) {
        int rc = net->be->set_precision(net->ctx, p, err, errlen);
        net->prec = rc < 0 ? NN_PRECISION_FP32 : (nn_precision_t)rc;
        return rc < 0 ? -1 : 0;
    }
    char why[256];
    double dp, dv;
    if (nn_net_precision_check(net, &dp, &dv, why, sizeof why) != 0) {
        if (note && notelen)
            snprintf(note, notelen, "fp32 (%s)", why);
        return nn_net_set_precision(net, NN_PRECISION_FP32, NULL, 0, err, errlen);
    }
    bool ok = dp <= NN_BF16_AUTO_TOLERANCE && dv <= NN_BF16_AUTO_TOLERANCE;
    if (!ok) {
        if (note && notelen)
            snprintf(note, notelen,
                     "fp32 (bf16 accuracy check: policy %.4f, value %.4f: over the limit)", dp,
                     dv);
        return nn_net_set_precision(net, NN_PRECISION_FP32, NULL, 0, err, errlen);
    }
    /* accurate enough: the backend takes the faster of the two by its own rule */
    char faster[160] = "";
    int rc = net->be->set_precision(net->ctx, NN_PRECISION_AUTO, faster, sizeof faster);
    if (rc < 0) {
        if (note && notelen)
            snprintf(note, notelen, "fp32 (bf16: %s)", faster);
        return nn_net_set_precision(net, NN_PRECISION_FP32, NULL, 0, err, errlen);
    }
    net->prec = (nn_precision_t)rc;
    if (note && notelen)
        snprintf(note, notelen, "%s (%s%sbf16 accuracy check: policy %.4f, value %.4f)",
                 nn_precision_name(net->prec), faster, faster[0] ? "; " : "", dp, dv);
    return 0;
}
