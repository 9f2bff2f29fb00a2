/* gomoku device: which compute devices work. One line per device, and on
 * each a tiny convolution net (1 block, 8 channels, 9x9, batch 4) compared
 * with the CPU reference backend. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmds.h"
#include "engine/board.h"
#include "util/util.h"
#include "nn/nn.h"
#include "nn/nn_cuda.h"
#include "selfplay/args.h"

static const cmd_help_t help = {
    "device", 0,
    "gomoku device",
    "Lists the compute devices, one line each:\n"
    "  cpu: cores, OpenBLAS yes/no, and the fast CPU backend against the reference\n"
    "  cuda:N: name, compute capability, memory, driver/runtime/cuDNN versions, and\n"
    "          the GPU forward (bf16 and fp32) and training loss (fp32) against the\n"
    "          CPU reference\n"
    "  cuda: unavailable: <reason>   when no CUDA device can be used (module\n"
    "          missing or not loadable, no driver, no device)\n"
    "  cuda module: the path of the CUDA module that was loaded (gomoku-cuda.so)\n"
    "Each check runs a tiny net (1 block, 8 channels, 9x9 board, batch 4) and prints\n"
    "the largest absolute difference and PASS or FAIL. Exits 0 when every check\n"
    "that could run passed (no GPU is not a failure), 1 otherwise.",
};

enum { TINY_BATCH = 4, TINY_SIZE = 9 };

/* The tiny net's inputs and targets. */
typedef struct tiny {
    nn_model_t *model;
    float in[TINY_BATCH * NN_PLANES * TINY_SIZE * TINY_SIZE];
    float ptarget[TINY_BATCH * TINY_SIZE * TINY_SIZE];
    float vtarget[TINY_BATCH * NN_VALUE_OUTPUTS];
} tiny_t;

typedef struct tiny_out {
    float policy[TINY_BATCH * TINY_SIZE * TINY_SIZE];
    float value[TINY_BATCH * NN_VALUE_OUTPUTS];
    nn_losses_t losses;
} tiny_out_t;

/* A fixed net with every weight non-zero (the fixup init leaves the second
 * conv of each block at zero, which would hide it from the check), and four
 * positions: empty, early, middle, renju with forbidden points possible. */
static tiny_t *tiny_create(char *err, size_t errlen)
{
    tiny_t *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    nn_config_t cfg;
    nn_config_default(&cfg, 1, 8, TINY_SIZE);
    t->model = nn_model_create(&cfg, 20240601, err, errlen);
    if (!t->model) {
        free(t);
        return NULL;
    }
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < t->model->nparams; i++)
        t->model->params[i] += 0.1f * ((float)(util_rng_next(&s) >> 40) / (float)(1u << 24) - 0.5f);
    static const int nmoves[TINY_BATCH] = {0, 6, 17, 30};
    static const rule_t rules[TINY_BATCH] = {RULE_FREESTYLE, RULE_STANDARD, RULE_FREESTYLE,
                                             RULE_RENJU};
    const int HW = TINY_SIZE * TINY_SIZE;
    for (int i = 0; i < TINY_BATCH; i++) {
        board_t b;
        board_init(&b, TINY_SIZE, rules[i]);
        for (int k = 0, tries = 0; k < nmoves[i] && !board_over(&b) && tries < 10000; tries++) {
            int m = (int)(util_rng_next(&s) % (uint64_t)HW);
            if (board_play(&b, m) == MOVE_OK)
                k++;
        }
        nn_encode(&b, TINY_SIZE, t->in + (size_t)i * NN_PLANES * HW);
        /* targets: uniform over the empty points, and a fixed W/D/L */
        int empty = 0;
        for (int p = 0; p < HW; p++)
            empty += b.cells[p] == STONE_EMPTY && !board_is_forbidden(&b, p);
        for (int p = 0; p < HW; p++)
            t->ptarget[i * HW + p] =
                (b.cells[p] == STONE_EMPTY && !board_is_forbidden(&b, p) && empty)
                    ? 1.0f / (float)empty : 0.0f;
        float *vt = t->vtarget + i * NN_VALUE_OUTPUTS;
        vt[0] = i % 3 == 0 ? 1.0f : 0.0f;
        vt[1] = i % 3 == 1 ? 1.0f : 0.0f;
        vt[2] = i % 3 == 2 ? 1.0f : 0.0f;
    }
    return t;
}

static void tiny_free(tiny_t *t)
{
    if (!t)
        return;
    nn_model_free(t->model);
    free(t);
}

/* Forward at precision prec and loss of the tiny net on a backend; 0, or
 * -1 with err set (a precision the device cannot run is an error here,
 * not a stop in forward). */
static int tiny_run(const tiny_t *t, const char *device, nn_precision_t prec, tiny_out_t *o,
                    char *err, size_t errlen)
{
    nn_net_t *net = nn_net_create(t->model, device, TINY_BATCH, 1, NULL, 0, err, errlen);
    if (!net)
        return -1;
    int rc = nn_net_set_precision(net, prec, NULL, 0, err, errlen);
    if (rc == 0) {
        nn_net_forward(net, t->in, TINY_BATCH, o->policy, o->value);
        rc = nn_net_loss_grad(net, t->in, t->ptarget, t->vtarget, TINY_BATCH, 1e-4f, &o->losses,
                              NULL, err, errlen);
    }
    nn_net_free(net);
    return rc;
}

static double max_diff(const float *a, const float *b, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d > m || isnan(d))
            m = isnan(d) ? INFINITY : d;
    }
    return m;
}

/* Largest forward difference (policy and value) of got from ref. */
static double fwd_diff(const tiny_out_t *ref, const tiny_out_t *got)
{
    double df = max_diff(ref->policy, got->policy, sizeof ref->policy / sizeof(float));
    double dv = max_diff(ref->value, got->value, sizeof ref->value / sizeof(float));
    return dv > df ? dv : df;
}

/* Print "tiny net [bf16 ...,] forward max abs diff X (tol T), loss A vs B:
 * PASS|FAIL"; got2 (may be NULL) is a second precision's forward, named
 * what2, with tolerance tol2. True when it passed. */
static bool tiny_report(const tiny_out_t *ref, const tiny_out_t *got, double fwd_tol,
                        double loss_tol, const char *what2, const tiny_out_t *got2, double tol2)
{
    double df = fwd_diff(ref, got), d2 = got2 ? fwd_diff(ref, got2) : 0.0;
    double dl = fabs((double)ref->losses.total - (double)got->losses.total);
    if (isnan(dl))
        dl = INFINITY;
    bool ok = df <= fwd_tol && d2 <= tol2 &&
              dl <= loss_tol * (1.0 + fabs((double)ref->losses.total));
    printf("tiny net ");
    if (got2)
        printf("%s forward max abs diff %.2e (tol %.0e), ", what2, d2, tol2);
    printf("%sforward max abs diff %.2e (tol %.0e), loss %.5f vs %.5f: %s\n",
           got2 ? "fp32 " : "", df, fwd_tol, (double)got->losses.total,
           (double)ref->losses.total, ok ? "PASS" : "FAIL");
    return ok;
}

int cmd_device(int argc, char **argv)
{
    int rc = args_parse(&help, NULL, 0, argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);

    char err[256];
    tiny_t *t = tiny_create(err, sizeof err);
    if (!t) {
        fprintf(stderr, "gomoku device: tiny net: %s\n", err);
        return 1;
    }
    bool all_ok = true;
    tiny_out_t *ref = calloc(1, sizeof *ref), *got = calloc(1, sizeof *got);
    tiny_out_t *got2 = calloc(1, sizeof *got2);
    if (!ref || !got || !got2) {
        fprintf(stderr, "gomoku device: out of memory\n");
        free(ref);
        free(got);
        free(got2);
        tiny_free(t);
        return 1;
    }

#ifdef GZ_HAVE_OPENBLAS
    const char *blas = "yes";
#else
    const char *blas = "no";
#endif
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("cpu: %ld cores, OpenBLAS %s; ", cores, blas);
    fflush(stdout);
    if (tiny_run(t, "cpu-ref", NN_PRECISION_FP32, ref, err, sizeof err) != 0 ||
        tiny_run(t, "cpu", NN_PRECISION_FP32, got, err, sizeof err) != 0) {
        printf("FAIL: %s\n", err);
        all_ok = false;
    } else {
        all_ok &= tiny_report(ref, got, 1e-4, 1e-4, NULL, NULL, 0.0);
    }

    char why[512];
    int ndev = nn_cuda_device_count(why, sizeof why);
    if (ndev <= 0) {
        printf("cuda: unavailable: %s\n", ndev < 0 ? why : "no CUDA device");
    } else {
        if (nn_cuda_module_info(why, sizeof why) == 0)
            printf("cuda module: %s\n", why);
        for (int d = 0; d < ndev; d++) {
            char desc[512];
            if (nn_cuda_device_describe(d, desc, sizeof desc) != 0) {
                printf("cuda:%d: unusable: %s\n", d, desc);
                all_ok = false;
                continue;
            }
            printf("cuda:%d: %s; ", d, desc);
            fflush(stdout);
            char dev[32];
            snprintf(dev, sizeof dev, "cuda:%d", d);
            if (tiny_run(t, dev, NN_PRECISION_BF16, got2, err, sizeof err) != 0 ||
                tiny_run(t, dev, NN_PRECISION_FP32, got, err, sizeof err) != 0) {
                printf("FAIL: %s\n", err);
                all_ok = false;
                continue;
            }
            /* bf16 forward; fp32 forward (no TF32); fp32 (TF32) loss */
            all_ok &= tiny_report(ref, got, 1e-4, 5e-3, "bf16", got2, 2e-2);
        }
    }
    free(ref);
    free(got);
    free(got2);
    tiny_free(t);
    return all_ok ? 0 : 1;
}
