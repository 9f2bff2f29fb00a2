/* gomoku bench nn: forward evals/s, forward GFLOP/s, train samples/s, and
 * this machine's own SGEMM GFLOP/s measured in the same run; one JSON line
 * per batch size, medians of several runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "selfplay/args.h"
#include "nn/nn.h"
#include "nn/nn_cuda.h"
#include "nn/sgemm.h"
#include "util/util.h"

static const cmd_help_t help = {
    "bench nn", BY_BENCH_NN, "gomoku bench nn [--device D --precision P --blocks B --channels C --planes F --batch N[,N...]]",
    "Measure the network on a device: forward evals/s and GFLOP/s, training samples/s,\n"
    "the input encoding's microseconds per position for the basic and threat planes\n"
    "(game-like positions, one CPU thread),\n"
    "and this machine's SGEMM GFLOP/s on a square product (the peak the CPU path can\n"
    "approach), each the median of several runs. Prints one JSON line per batch size."};

/* SGEMM GFLOP/s on an n x n x n product, `threads` threads, median of runs
 * of at least `seconds` each. */
static double sgemm_peak(int n, int threads, int runs, double seconds)
{
    size_t nn = (size_t)n * n;
    float *a = malloc(nn * sizeof(float)), *b = malloc(nn * sizeof(float));
    float *c = malloc(nn * sizeof(float));
    if (!a || !b || !c) {
        free(a);
        free(b);
        free(c);
        return 0;
    }
    for (size_t i = 0; i < nn; i++) {
        a[i] = (float)((i * 7919) % 1000) * 1e-3f;
        b[i] = (float)((i * 104729) % 1000) * 1e-3f;
    }
    sgemm_run_threads(threads, false, false, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);   /* warm */
    double r[64];
    for (int k = 0; k < runs; k++) {
        int calls = 0;
        double t0 = util_now_ms() * 1e-3, t;
        do {
            sgemm_run_threads(threads, false, false, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
            calls++;
        } while ((t = util_now_ms() * 1e-3 - t0) < seconds);
        r[k] = 2.0 * n * (double)n * n * calls / t / 1e9;
    }
    free(a);
    free(b);
    free(c);
    return bench_median(r, runs);
}

/* Parse "64" or "1,16,64" into out[]; count or -1. */
static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 4096 || n >= max || (*end && *end != ','))
            return -1;
        out[n++] = (int)v;
        s = *end ? end + 1 : end;
        if (*end == ',' && !*s)
            return -1;
    }
    return n;
}

/* Game-like positions on an s x s board: position k has 10 + k % 50
 * stones played at random in a cluster round the centre that grows with
 * the move count (as in games), so threats occur as they do in play. */
static void make_positions(board_t *bs, int n, int s)
{
    uint64_t st = 12345;
    for (int k = 0; k < n; k++) {
        board_t *b = &bs[k];
        board_init(b, s, RULE_FREESTYLE);
        int want = 10 + k % 50;
        for (int tries = 0; b->nmoves < want && tries < 50 * want && !board_over(b); tries++) {
            int r = 2 + b->nmoves / 4, c = s / 2;
            int x = c - r + (int)(util_rng_next(&st) % (uint64_t)(2 * r + 1));
            int y = c - r + (int)(util_rng_next(&st) % (uint64_t)(2 * r + 1));
            if (x >= 0 && y >= 0 && x < s && y < s)
                board_play(b, board_xy(b, x, y));   /* refused moves are just skipped */
        }
    }
}

/* Inputs (feature set f, M x M grid) and targets (a legal point, a W/D/L)
 * of the positions. */
static void fill_inputs(const board_t *bs, int f, int M, float *in, float *pt, float *vt, int n)
{
    int hw = M * M, P = nn_feature_planes(f);
    memset(pt, 0, sizeof(float) * (size_t)n * hw);
    for (int k = 0; k < n; k++) {
        const board_t *b = &bs[k];
        nn_encode_features(b, f, M, in + (size_t)k * P * hw);
        int target = -1;
        for (int q = 0; q < board_npoints(b) && target < 0; q++)
            if (b->cells[(q * 37) % board_npoints(b)] == STONE_EMPTY)
                target = (q * 37) % board_npoints(b);
        pt[(size_t)k * hw + nn_policy_index(target, b->size, M)] = 1;
        vt[3 * k + k % 3] = 1;
        vt[3 * k + (k + 1) % 3] = 0;
        vt[3 * k + (k + 2) % 3] = 0;
    }
}

/* Microseconds per position of nn_encode_features with set f on the n
 * positions, median of runs of at least `seconds`. */
static double encode_us(const board_t *bs, int n, int f, int M, float *scratch, int runs,
                        double seconds)
{
    double r[64];
    size_t ps = (size_t)nn_feature_planes(f) * M * M;
    for (int k = 0; k < runs; k++) {
        long calls = 0;
        double t0 = util_now_ms() * 1e-3, t;
        do {
            for (int i = 0; i < n; i++)
                nn_encode_features(&bs[i], f, M, scratch + (size_t)(i % 8) * ps);
            calls += n;
        } while ((t = util_now_ms() * 1e-3 - t0) < seconds);
        r[k] = t * 1e6 / (double)calls;
    }
    return bench_median(r, runs);
}

int bench_nn(int argc, char **argv)
{
    const char *device, *batch_s, *model_path = NULL, *planes = NULL;
    nn_precision_t prec;
    int blocks, channels, size, runs, threads, sgemm_n;
    double seconds;
    arg_spec_t specs[] = {
        ARG(S_BENCH_DEVICE, &device), ARG(S_PRECISION, &prec), ARG(S_BENCH_NN_BATCH, &batch_s),
        ARG(S_SIZE, &size), ARG(S_BENCH_NN_MODEL, &model_path), ARG(S_NET_THREADS, &threads),
        ARG(S_BENCH_SECONDS, &seconds), ARG(S_BENCH_RUNS, &runs), ARG(S_SGEMM_SIZE, &sgemm_n),
        ARG(S_BLOCKS, &blocks), ARG(S_CHANNELS, &channels), ARG(S_BENCH_NN_PLANES, &planes),
    };
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    int batches[32];
    int nb = parse_list(batch_s, batches, 32);
    if (nb <= 0)
        return args_fail(&help, "--batch wants sizes 1..4096 separated by commas, got '%s'",
                         batch_s);
    int maxb = 0;
    for (int i = 0; i < nb; i++)
        maxb = batches[i] > maxb ? batches[i] : maxb;
    char err[512], note[512];
    int features;
    if (nn_features_parse(planes, &features, err, sizeof err) != 0)
        return args_fail(&help, "%s", err);
    nn_model_t *m;
    if (model_path) {
        m = nn_model_load(model_path, err, sizeof err);
    } else {
        nn_config_t rc_cfg;
        nn_config_default(&rc_cfg, blocks, channels, size);
        rc_cfg.features = features;
        rc_cfg.in_planes = nn_feature_planes(features);
        m = nn_model_create(&rc_cfg, 1, err, sizeof err);
    }
    if (m && size > m->cfg.board_max) {
        fprintf(stderr, "gomoku bench nn: --size %d is larger than the model's board max %d\n",
                size, m->cfg.board_max);
        nn_model_free(m);
        return 1;
    }
    if (!m) {
        fprintf(stderr, "gomoku bench nn: %s\n", err);
        return 1;
    }
    const nn_config_t *cfg = &m->cfg;
    int M = cfg->board_max, hw = M * M;
    double flops = nn_flops_per_eval(cfg, M);
    int cores = sgemm_cores(), nthreads = threads ? threads : cores;
    rc = 1;
    int npos = maxb > 64 ? maxb : 64;
    float *in = malloc(sizeof(float) * (size_t)npos * NN_PLANES_MAX * hw);
    float *pt = malloc(sizeof(float) * (size_t)maxb * hw);
    float *vt = malloc(sizeof(float) * (size_t)maxb * 3);
    float *pol = malloc(sizeof(float) * (size_t)maxb * hw);
    float *val = malloc(sizeof(float) * (size_t)maxb * 3);
    board_t *bs = malloc(sizeof(board_t) * (size_t)npos);
    if (!in || !pt || !vt || !pol || !val || !bs) {
        fprintf(stderr, "gomoku bench nn: out of memory\n");
        goto out_free;
    }
    /* s x s boards inside the M x M grid */
    make_positions(bs, npos, size);
    double enc_us[NN_FEATURES_COUNT];
    for (int f = 0; f < NN_FEATURES_COUNT; f++)
        enc_us[f] = encode_us(bs, npos, f, M, in, runs, seconds);
    fill_inputs(bs, cfg->features, M, in, pt, vt, maxb);

    for (int bi = 0; bi < nb; bi++) {
        int batch = batches[bi];
        nn_net_t *net = nn_net_create(m, device, batch, threads, note, sizeof note, err,
                                      sizeof err);
        if (!net) {
            if (strstr(err, "unknown device")) {
                rc = args_fail(&help, "%s", err);
                goto out_free;
            }
            fprintf(stderr, "gomoku bench nn: %s\n", err);
            goto out_free;
        }
        if (note[0] && bi == 0)
            fprintf(stderr, "gomoku bench nn: %s\n", note);
        if (nn_net_set_precision(net, prec, note, sizeof note, err, sizeof err) != 0) {
            fprintf(stderr, "gomoku bench nn: %s\n", err);
            nn_net_free(net);
            goto out_free;
        }
        if (note[0] && bi == 0)
            fprintf(stderr, "gomoku bench nn: precision %s\n", note);
        bool on_gpu = strncmp(nn_net_device_name(net), "cuda", 4) == 0;
        double bound = 0.0;   /* evals/s at the FLOP bound (GPU only) */
        /* GPU: the FLOP bound, 2 x blocks x 2 x 9 x C^2 x size^2 flops
         * per eval (the trunk's convolutions) at the bf16 cuBLAS peak. */
        char gpu_json[256] = "";
        if (on_gpu) {
            char gname[128];
            int dev = nn_net_device_name(net)[4] == ':' ? atoi(nn_net_device_name(net) + 5) : 0;
            double tflops = nn_cuda_gemm_peak_tflops(dev, gname, sizeof gname);
            double trunk = 2.0 * cfg->blocks * 2.0 * 9.0 * cfg->channels * cfg->channels *
                           size * size;
            if (tflops > 0)
                snprintf(gpu_json, sizeof gpu_json,
                         ",\"gpu\":\"%s\",\"bf16_peak_tflops\":%.1f,"
                         "\"flop_bound_evals_per_s\":%.0f,\"trunk_gflop_per_eval\":%.6f",
                         gname, tflops, tflops * 1e12 / trunk, trunk / 1e9);
            bound = tflops > 0 ? tflops * 1e12 / trunk : 0.0;
        }
        /* Each run times the forward pass and then the SGEMM, so both see the
         * same machine load; the ratio is the median of the per-run ratios. */
        double fr[64], tr[64], pk[64], ratio[64];
        nn_net_forward(net, in, batch, pol, val);   /* warm up */
        for (int k = 0; k < runs; k++) {
            int calls = 0;
            double t0 = util_now_ms() * 1e-3, t;
            do {
                nn_net_forward(net, in, batch, pol, val);
                calls++;
            } while ((t = util_now_ms() * 1e-3 - t0) < seconds);
            fr[k] = (double)calls * batch / t;
            /* on a GPU the CPU SGEMM says nothing: the bf16 bound below replaces it */
            pk[k] = on_gpu ? 0.0 : sgemm_peak(sgemm_n, threads, 1, seconds < 0.5 ? seconds : 0.5);
            ratio[k] = pk[k] > 0 ? fr[k] * flops / 1e9 / pk[k] : 0.0;
        }
        nn_train_opts_t o = {.lr = 1e-4f, .momentum = 0.9f, .weight_decay = 1e-4f};
        nn_losses_t l;
        if (nn_net_train_step(net, in, pt, vt, batch, &o, &l, err, sizeof err) != 0) {
            fprintf(stderr, "gomoku bench nn: %s\n", err);   /* the warm-up step allocates */
            nn_net_free(net);
            goto out_free;
        }
        for (int k = 0; k < runs; k++) {
            int calls = 0;
            double t0 = util_now_ms() * 1e-3, t;
            do {
                if (nn_net_train_step(net, in, pt, vt, batch, &o, &l, err, sizeof err) != 0) {
                    fprintf(stderr, "gomoku bench nn: %s\n", err);
                    nn_net_free(net);
                    goto out_free;
                }
                calls++;
            } while ((t = util_now_ms() * 1e-3 - t0) < seconds);
            tr[k] = (double)calls * batch / t;
        }
        double fe = bench_median(fr, runs), ts = bench_median(tr, runs), gf = fe * flops / 1e9;
        double peak = bench_median(pk, runs), rel = bench_median(ratio, runs);
        int used = nthreads;   /* the fast path uses at most one thread per sample */
        if (strcmp(nn_net_device_name(net), "cpu-ref") == 0)
            used = 1;
        else if (strcmp(nn_net_device_name(net), "cpu") == 0 && used > batch)
            used = batch;
        char bound_json[64] = "";
        if (bound > 0)
            snprintf(bound_json, sizeof bound_json, ",\"fraction_of_bound\":%.3f", fe / bound);
        printf("{\"bench\":\"nn\",\"device\":\"%s\",\"precision\":\"%s\",\"blocks\":%d,\"channels\":%d,"
               "\"board_max\":%d,\"size\":%d,\"batch\":%d,\"threads\":%d,\"sgemm\":\"%s\","
               "\"gflop_per_eval\":%.6f,\"forward_evals_per_s\":%.1f,\"forward_gflops\":%.2f,"
               "\"train_samples_per_s\":%.1f,\"train_gflops_est\":%.2f,"
               "\"sgemm_n\":%d,\"sgemm_gflops\":%.2f,\"forward_vs_sgemm\":%.3f,\"runs\":%d,"
               "\"seconds\":%g,\"planes\":\"%s\",\"encode_basic_us\":%.2f,"
               "\"encode_threat_us\":%.2f,\"encode_share\":%.3f%s%s}\n",
               nn_net_device_name(net), nn_net_precision_name(net), cfg->blocks, cfg->channels, M, size, batch,
               used, sgemm_impl_name(), flops / 1e9, fe, gf, ts, 3.0 * ts * flops / 1e9,
               sgemm_n, peak, rel, runs, seconds, nn_features_name(cfg->features),
               enc_us[NN_FEATURES_BASIC], enc_us[NN_FEATURES_THREAT],
               /* of the CPU time per eval: the forward's thread-seconds on the CPU */
               enc_us[cfg->features] / (enc_us[cfg->features] + 1e6 / fe * (on_gpu ? 1 : used)),
               gpu_json, bound_json);
        fflush(stdout);
        nn_net_free(net);
    }
    rc = 0;

out_free:
    free(in);
    free(pt);
    free(vt);
    free(pol);
    free(val);
    free(bs);
    nn_model_free(m);
    return rc;
}
