/* GPU test suite: the CUDA backend against the CPU backends.
 *
 * Two runs of Check, both CK_NOFORK (never fork after CUDA init):
 *  1. device-free checks, run everywhere (CI included): cuDNN descriptor
 *     shapes, the backend's config rules, the cached availability answer
 *     and its error paths, `gomoku device`. A failure here exits 1.
 *  2. device checks, only when a CUDA device is usable: forward against
 *     the CPU for several batch and board sizes, gradients against the
 *     reference, 200 training steps against the CPU, weights round trip,
 *     spawning `gomoku device` after CUDA init, and a short `gomoku train`
 *     on the GPU. Without a device the process exits 77 (meson: SKIP)
 *     once the device-free checks passed.
 * Tolerances are stated next to each comparison; every comparison prints
 * its largest difference. The training path lets cuDNN use TF32 tensor
 * cores (the tolerances allow for it); to rule TF32 out when a check fails,
 * run with NVIDIA_TF32_OVERRIDE=0 (plain fp32 in cuDNN and cuBLAS). */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/board.h"
#include "nn/nn.h"
#ifdef GZ_HAVE_CUDA
#include "nn/nn_cuda.h"
#endif

extern char **environ;

/* ---- helpers ---- */

/* Run argv, stdout and stderr into out (NUL-terminated, truncated), killed
 * after timeout_s. Exit status, or -1 when it did not exit normally. */
static int run_capture(char *const argv[], char *out, size_t outlen, int timeout_s)
{
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    ck_assert_msg(rc == 0, "posix_spawn %s: %s", argv[0], strerror(rc));
    size_t len = 0;
    time_t deadline = time(NULL) + timeout_s;
    bool killed = false;
    for (;;) {
        struct pollfd p = {fd[0], POLLIN, 0};
        int pr = poll(&p, 1, 1000);
        if (pr > 0) {
            char buf[4096];
            ssize_t r = read(fd[0], buf, sizeof buf);
            if (r <= 0)
                break;
            size_t room = outlen - 1 - len;
            size_t k = (size_t)r < room ? (size_t)r : room;
            memcpy(out + len, buf, k);
            len += k;
        }
        if (!killed && time(NULL) > deadline) {
            kill(pid, SIGTERM);
            killed = true;
            deadline = time(NULL) + 30;
        } else if (killed && time(NULL) > deadline) {
            kill(pid, SIGKILL);
        }
    }
    out[len] = '\0';
    close(fd[0]);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    if (killed)
        fprintf(stderr, "  %s: killed after %d s\n", argv[0], timeout_s);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *gomoku_bin(void)
{
    const char *b = getenv("GOMOKU_BIN");
    ck_assert_msg(b && *b, "GOMOKU_BIN is not set (run through meson test)");
    return b;
}

/* ---- device-free checks ---- */

START_TEST(test_device_cmd)
{
    char bin[1024], out[16384];
    snprintf(bin, sizeof bin, "%s", gomoku_bin());
    char *argv[] = {bin, "device", NULL};
    int rc = run_capture(argv, out, sizeof out, 300);
    printf("  gomoku device ->\n%s", out);
    ck_assert_msg(rc == 0, "gomoku device exited %d:\n%s", rc, out);
    const char *cpu = strstr(out, "cpu: ");
    ck_assert_msg(cpu, "no cpu line:\n%s", out);
    const char *eol = strchr(cpu, '\n');
    ck_assert_msg(eol && strstr(cpu, "PASS") && strstr(cpu, "PASS") < eol,
                  "cpu check did not pass:\n%s", out);
    char why[256];
    if (nn_cuda_available(why, sizeof why)) {
        const char *g = strstr(out, "cuda:0: ");
        ck_assert_msg(g, "a device is usable here but gomoku device shows none:\n%s", out);
        const char *ge = strchr(g, '\n');
        ck_assert_msg(ge && strstr(g, "PASS") && strstr(g, "PASS") < ge,
                      "cuda:0 check did not pass:\n%s", out);
    } else {
        ck_assert_msg(strstr(out, "cuda: unavailable: "), "no 'cuda: unavailable' line:\n%s",
                      out);
        ck_assert_msg(strstr(out, why), "the reason '%s' is missing:\n%s", why, out);
    }
}
END_TEST

/* The answer is asked once and cached; without a device every way in
 * fails with that reason instead of crashing, and auto falls back. */
START_TEST(test_availability)
{
    char why1[256] = "", why2[256] = "";
    bool a1 = nn_cuda_available(why1, sizeof why1);
    bool a2 = nn_cuda_available(why2, sizeof why2);
    ck_assert(a1 == a2);
    ck_assert_str_eq(why1, why2);
    printf("  cuda available: %s%s%s\n", a1 ? "yes" : "no", a1 ? "" : ", ", a1 ? "" : why1);

    char err[256], note[256];
    nn_config_t cfg;
    nn_config_default(&cfg, 1, 8, 9);
    nn_model_t *m = nn_model_create(&cfg, 7, err, sizeof err);
    ck_assert_msg(m, "%s", err);
    nn_net_t *net = nn_net_create(m, "cuda", 4, 1, note, sizeof note, err, sizeof err);
    if (!a1) {
        ck_assert_msg(!net, "device cuda must not fall back to the CPU");
        ck_assert_msg(strstr(err, "cuda unavailable") && strstr(err, why1), "error: %s", err);
        net = nn_net_create(m, "auto", 4, 1, note, sizeof note, err, sizeof err);
        ck_assert_msg(net, "%s", err);
        ck_assert_str_eq(nn_net_device_name(net), "cpu");
        ck_assert_msg(strstr(note, "cuda unavailable") && strstr(note, why1) &&
                          strstr(note, "using cpu"),
                      "auto note: %s", note);
        nn_net_free(net);
#ifdef GZ_HAVE_CUDA
        ck_assert(nn_backend_cuda.create(m, 4, 0, 1, err, sizeof err) == NULL);
        ck_assert_msg(strstr(err, "cuda unavailable") && strstr(err, why1), "create: %s", err);
        char name[128];
        ck_assert(nn_cuda_gemm_peak_tflops(0, name, sizeof name) < 0);
        ck_assert_msg(strstr(name, "unavailable"), "gemm peak: %s", name);
        ck_assert_int_lt(nn_cuda_device_count(NULL, 0), 1);
        char desc[256];
        ck_assert_int_eq(nn_cuda_device_describe(0, desc, sizeof desc), -1);
#endif
    } else {
        ck_assert_msg(net, "%s", err);
        ck_assert_str_eq(nn_net_device_name(net), "cuda:0");
        nn_net_free(net);
        net = nn_net_create(m, "auto", 4, 1, note, sizeof note, err, sizeof err);
        ck_assert_msg(net, "%s", err);
        ck_assert_str_eq(nn_net_device_name(net), "cuda:0");
        ck_assert_msg(strstr(note, "cuda:0"), "auto note: %s", note);
        nn_net_free(net);
    }
    nn_model_free(m);
}
END_TEST

#ifdef GZ_HAVE_CUDA
/* Every cuDNN descriptor the backend builds keeps the M x M plane. */
START_TEST(test_shapes)
{
    static const int nets[][3] = {{6, 64, 15}, {10, 128, 15}, {20, 256, 15}, {0, 8, 5},
                                  {1, 8, 20}, {2, 32, 9}};
    static const int batches[] = {1, 7, 64, 256, 1024};
    char err[256];
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++)
        for (size_t j = 0; j < sizeof batches / sizeof batches[0]; j++) {
            nn_config_t cfg;
            nn_config_default(&cfg, nets[i][0], nets[i][1], nets[i][2]);
            int rc = nn_cuda_check_shapes(&cfg, batches[j], err, sizeof err);
            ck_assert_msg(rc == 0, "%dx%d on %d, batch %d: %s", nets[i][0], nets[i][1],
                          nets[i][2], batches[j], err);
        }
    /* odd head sizes go through cuBLAS, not the tensor-core conv path */
    nn_config_t cfg;
    nn_config_default(&cfg, 1, 16, 11);
    cfg.policy_head = 3;
    cfg.value_head = 5;
    cfg.value_hidden = 7;
    ck_assert_msg(nn_cuda_check_shapes(&cfg, 3, err, sizeof err) == 0, "%s", err);
}
END_TEST

/* Channels not a multiple of 8 are refused with a message, before any
 * device is touched. */
START_TEST(test_config_rules)
{
    char err[256];
    nn_config_t cfg;
    nn_config_default(&cfg, 2, 12, 9);
    ck_assert_int_eq(nn_cuda_check_shapes(&cfg, 4, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "divisible by 8") && strstr(err, "12"), "%s", err);
    nn_model_t *m = nn_model_create(&cfg, 3, err, sizeof err);
    ck_assert_msg(m, "%s", err);
    ck_assert(nn_backend_cuda.create(m, 4, 0, 1, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "divisible by 8"), "%s", err);
    nn_model_free(m);
    nn_config_default(&cfg, 2, 16, 9);
    ck_assert_int_eq(nn_cuda_check_shapes(&cfg, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "batch"), "%s", err);
    cfg.channels = 0;
    ck_assert_int_eq(nn_cuda_check_shapes(&cfg, 4, err, sizeof err), -1);
}
END_TEST

/* ---- device checks ---- */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}
static double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) / 9007199254740992.0; }

/* A net with every tensor non-zero: the fixup init leaves each block's
 * second conv at zero, which would hide the block path from the checks. */
static nn_model_t *test_model(int blocks, int channels, int board_max, uint64_t seed)
{
    char err[256];
    nn_config_t cfg;
    nn_config_default(&cfg, blocks, channels, board_max);
    nn_model_t *m = nn_model_create(&cfg, seed, err, sizeof err);
    ck_assert_msg(m, "%s", err);
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int t = 0; t < nn_param_tensors(&cfg); t++) {
        nn_tensor_info_t ti = nn_param_tensor(&cfg, t);
        size_t len = strlen(ti.name);
        bool w2 = len > 3 && strcmp(ti.name + len - 3, ".w2") == 0;
        bool weight = nn_param_tensor_is_weight(&cfg, t);
        double a = w2 ? 0.5 * sqrt(6.0 / (9.0 * channels)) : (weight ? 0.0 : 0.05);
        for (size_t i = 0; i < ti.count; i++)
            m->params[ti.offset + i] += (float)(a * (2.0 * rng_unit(&s) - 1.0));
    }
    return m;
}

/* Positions for a board_max net: sample i on a size x size board (sizes
 * cycle through `sizes`), rules cycle, 0..cap random moves; targets are a
 * function of the position (uniform over empty points next to a stone, or
 * the centre; value one-hot by stone count mod 3), so a net can learn them. */
typedef struct batch {
    int n, M;
    float *in, *pt, *vt;
} batch_t;

static batch_t make_batch(int n, int M, const int *sizes, int nsizes, uint64_t seed)
{
    batch_t b = {n, M, NULL, NULL, NULL};
    int HW = M * M;
    b.in = calloc((size_t)n * NN_PLANES * HW, sizeof(float));
    b.pt = calloc((size_t)n * HW, sizeof(float));
    b.vt = calloc((size_t)n * NN_VALUE_OUTPUTS, sizeof(float));
    ck_assert(b.in && b.pt && b.vt);
    uint64_t s = seed * 0x2545f4914f6cdd1dull + 7;
    for (int i = 0; i < n; i++) {
        int size = sizes[i % nsizes];
        rule_t rule = (rule_t)(i % RULE_COUNT);
        board_t bd;
        board_init(&bd, size, rule);
        int cap = size * size / 2 < 60 ? size * size / 2 : 60;
        int moves = (int)(rng_next(&s) % (uint64_t)(cap + 1));
        for (int k = 0, tries = 0; k < moves && !board_over(&bd) && tries < 10000; tries++)
            if (board_play(&bd, (int)(rng_next(&s) % (uint64_t)(size * size))) == MOVE_OK)
                k++;
        nn_encode(&bd, M, b.in + (size_t)i * NN_PLANES * HW);
        float *pt = b.pt + (size_t)i * HW;
        int cnt = 0;
        for (int pass = 0; pass < 2 && cnt == 0; pass++)
            for (int y = 0; y < size; y++)
                for (int x = 0; x < size; x++) {
                    int mv = y * size + x;
                    if (bd.cells[mv] != STONE_EMPTY || board_is_forbidden(&bd, mv))
                        continue;
                    bool near = false;
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++) {
                            int xx = x + dx, yy = y + dy;
                            if (xx >= 0 && yy >= 0 && xx < size && yy < size &&
                                bd.cells[yy * size + xx] != STONE_EMPTY)
                                near = true;
                        }
                    if (pass == 1)
                        near = x == size / 2 && y == size / 2;
                    if (near) {
                        pt[nn_policy_index(mv, size, M)] = 1.0f;
                        cnt++;
                    }
                }
        for (int q = 0; q < HW; q++)
            pt[q] = cnt ? pt[q] / (float)cnt : 0.0f;
        b.vt[i * NN_VALUE_OUTPUTS + bd.nmoves % 3] = 1.0f;
    }
    return b;
}

static void free_batch(batch_t *b)
{
    free(b->in);
    free(b->pt);
    free(b->vt);
}

/* |got - ref| <= atol + rtol |ref| everywhere; prints the largest difference. */
static bool compare(const char *what, const float *ref, const float *got, size_t n, double atol,
                    double rtol)
{
    double worst = 0.0, maxd = 0.0;
    size_t at = 0;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)ref[i]);
        if (isnan(got[i]) || isnan(ref[i]))
            d = INFINITY;
        double r = d / (atol + rtol * fabs((double)ref[i]));
        if (d > maxd || isinf(d))
            maxd = d;
        if (r > worst || isinf(r)) {
            worst = r;
            at = i;
        }
        if (!(r <= 1.0))
            ok = false;
    }
    printf("  %-40s max abs diff %.3e (tol %.0e + %.0e|ref|; worst at %zu: ref %.6g got %.6g) %s\n",
           what, maxd, atol, rtol, at, n ? (double)ref[at] : 0.0, n ? (double)got[at] : 0.0,
           ok ? "ok" : "FAIL");
    return ok;
}

static nn_ctx_t *cuda_ctx(const nn_model_t *m, int max_batch)
{
    char err[256];
    nn_ctx_t *c = nn_backend_cuda.create(m, max_batch, 0, 0, err, sizeof err);
    ck_assert_msg(c, "cuda create: %s", err);
    return c;
}

static nn_ctx_t *cpu_ctx(const nn_backend_t *be, const nn_model_t *m, int max_batch)
{
    char err[256];
    nn_ctx_t *c = be->create(m, max_batch, 0, 0, err, sizeof err);
    ck_assert_msg(c, "%s create: %s", be->name, err);
    return c;
}

/* bf16 forward vs the fp32 CPU backend: batches 1, 7, 64, 256 on 15x15 and
 * 9x9 boards with a 15 net. Tolerances: policy 1e-3 + 2e-2|ref|, value
 * 5e-3 + 2e-2|ref|. A CPU emulation of this path's bf16 rounding points
 * (weights, conv outputs, activations; fp32 heads) on such a 4x32 net gave
 * policy 6e-5 (15x15) / 3e-4 (9x9) and value 7e-4 max abs differences,
 * under a fifth of these tolerances.
 * Also: exactly 0 at illegal points, sums to 1, and the CUDA-graph replay
 * (2nd and 3rd call of a batch size) equals the first, plain, run. */
START_TEST(test_forward_matches_cpu)
{
    const int M = 15, maxb = 256;
    nn_model_t *m = test_model(4, 32, M, 11);
    nn_ctx_t *cpu = cpu_ctx(&nn_backend_cpu, m, maxb), *gpu = cuda_ctx(m, maxb);
    static const int ns[] = {1, 7, 64, 256};
    static const int sizes[] = {15, 9};
    int HW = M * M;
    float *pr = malloc(sizeof(float) * maxb * HW), *vr = malloc(sizeof(float) * maxb * 3);
    float *pg = malloc(sizeof(float) * maxb * HW), *vg = malloc(sizeof(float) * maxb * 3);
    float *pg2 = malloc(sizeof(float) * maxb * HW), *vg2 = malloc(sizeof(float) * maxb * 3);
    ck_assert(pr && vr && pg && vg && pg2 && vg2);
    bool ok = true;
    for (int si = 0; si < 2; si++)
        for (int ni = 0; ni < 4; ni++) {
            int n = ns[ni];
            batch_t b = make_batch(n, M, &sizes[si], 1, (uint64_t)(100 * si + ni + 1));
            nn_backend_cpu.forward(cpu, b.in, n, pr, vr);
            nn_backend_cuda.forward(gpu, b.in, n, pg, vg);
            char what[96];
            snprintf(what, sizeof what, "policy %dx%d batch %d", sizes[si], sizes[si], n);
            ok &= compare(what, pr, pg, (size_t)n * HW, 1e-3, 2e-2);
            snprintf(what, sizeof what, "value  %dx%d batch %d", sizes[si], sizes[si], n);
            ok &= compare(what, vr, vg, (size_t)n * 3, 5e-3, 2e-2);
            for (int i = 0; i < n; i++) {
                double sp = 0.0, sv = 0.0;
                for (int q = 0; q < HW; q++) {
                    const float *pl = b.in + (size_t)i * NN_PLANES * HW;
                    bool legal = pl[NN_PLANE_ONBOARD * HW + q] > 0.5f &&
                                 pl[NN_PLANE_OWN * HW + q] < 0.5f &&
                                 pl[NN_PLANE_OPP * HW + q] < 0.5f &&
                                 pl[NN_PLANE_FORBIDDEN * HW + q] < 0.5f;
                    if (!legal)
                        ck_assert_msg(pg[(size_t)i * HW + q] == 0.0f,
                                      "sample %d point %d illegal but p=%g", i, q,
                                      (double)pg[(size_t)i * HW + q]);
                    sp += pg[(size_t)i * HW + q];
                }
                for (int j = 0; j < 3; j++)
                    sv += vg[i * 3 + j];
                ck_assert_msg(fabs(sp - 1.0) < 1e-4, "sample %d policy sums to %g", i, sp);
                ck_assert_msg(fabs(sv - 1.0) < 1e-5, "sample %d value sums to %g", i, sv);
            }
            /* 2nd call captures the graph, 3rd replays it */
            for (int rep = 0; rep < 2; rep++) {
                nn_backend_cuda.forward(gpu, b.in, n, pg2, vg2);
                snprintf(what, sizeof what, "graph replay %d policy batch %d", rep + 1, n);
                ok &= compare(what, pg, pg2, (size_t)n * HW, 1e-6, 0.0);
                snprintf(what, sizeof what, "graph replay %d value batch %d", rep + 1, n);
                ok &= compare(what, vg, vg2, (size_t)n * 3, 1e-6, 0.0);
            }
            free_batch(&b);
        }
    ck_assert_msg(ok, "GPU forward differs from the CPU (see the lines above)");
    free(pr); free(vr); free(pg); free(vg); free(pg2); free(vg2);
    nn_backend_cuda.free(gpu);
    nn_backend_cpu.free(cpu);
    nn_model_free(m);
}
END_TEST

/* loss_grad (fp32, cuDNN may use TF32) vs the float64 reference, per
 * tensor: |d| <= 2e-2 max|ref tensor| + 2e-2 |ref| and relative L2 error
 * <= 1e-2; losses within 5e-3 (1 + |ref|). Mixed 9x9 and 7x7 boards on a
 * 9 net, renju included, weight decay on. */
START_TEST(test_gradients_match_cpu)
{
    const int M = 9, n = 16;
    nn_model_t *m = test_model(2, 16, M, 23);
    nn_ctx_t *ref = cpu_ctx(&nn_backend_cpu_ref, m, n), *gpu = cuda_ctx(m, n);
    static const int sizes[] = {9, 7};
    batch_t b = make_batch(n, M, sizes, 2, 5);
    size_t np = m->nparams;
    float *gr = malloc(sizeof(float) * np), *gg = malloc(sizeof(float) * np);
    ck_assert(gr && gg);
    nn_losses_t lr, lg;
    const float wd = 1e-3f;
    ck_assert_int_eq(
        nn_backend_cpu_ref.loss_grad(ref, b.in, b.pt, b.vt, n, wd, &lr, gr, NULL, 0), 0);
    ck_assert_int_eq(nn_backend_cuda.loss_grad(gpu, b.in, b.pt, b.vt, n, wd, &lg, gg, NULL, 0),
                     0);
    printf("  losses ref: policy %.6f value %.6f l2 %.6f total %.6f\n", lr.policy, lr.value,
           lr.l2, lr.total);
    printf("  losses gpu: policy %.6f value %.6f l2 %.6f total %.6f\n", lg.policy, lg.value,
           lg.l2, lg.total);
    ck_assert(fabs(lg.policy - lr.policy) <= 5e-3 * (1 + fabs(lr.policy)));
    ck_assert(fabs(lg.value - lr.value) <= 5e-3 * (1 + fabs(lr.value)));
    ck_assert(fabs(lg.l2 - lr.l2) <= 1e-4 * (1e-3 + fabs(lr.l2)));
    ck_assert(fabs(lg.total - lr.total) <= 5e-3 * (1 + fabs(lr.total)));
    bool ok = true;
    for (int t = 0; t < nn_param_tensors(&m->cfg); t++) {
        nn_tensor_info_t ti = nn_param_tensor(&m->cfg, t);
        double mx = 0.0, e2 = 0.0, r2 = 0.0;
        for (size_t i = 0; i < ti.count; i++) {
            double r = gr[ti.offset + i], d = gg[ti.offset + i] - r;
            mx = fabs(r) > mx ? fabs(r) : mx;
            e2 += d * d;
            r2 += r * r;
        }
        char what[96];
        snprintf(what, sizeof what, "grad %s (rel L2 err %.2e)", ti.name,
                 r2 > 0 ? sqrt(e2 / r2) : sqrt(e2));
        ok &= compare(what, gr + ti.offset, gg + ti.offset, ti.count, 2e-2 * mx + 1e-7, 2e-2);
        if (r2 > 0 && sqrt(e2 / r2) > 1e-2) {
            printf("  %s: relative L2 error %.3e > 1e-2 FAIL\n", ti.name, sqrt(e2 / r2));
            ok = false;
        }
    }
    ck_assert_msg(ok, "GPU gradients differ from the reference (see the lines above)");
    /* grad NULL: losses only, same answer */
    nn_losses_t l2;
    ck_assert_int_eq(
        nn_backend_cuda.loss_grad(gpu, b.in, b.pt, b.vt, n, wd, &l2, NULL, NULL, 0), 0);
    ck_assert(fabsf(l2.total - lg.total) <= 1e-6f * (1 + fabsf(lg.total)));
    free(gr);
    free(gg);
    free_batch(&b);
    nn_backend_cuda.free(gpu);
    nn_backend_cpu_ref.free(ref);
    nn_model_free(m);
}
END_TEST

/* 200 Nesterov SGD steps on the GPU and on the CPU from the same weights
 * over the same minibatches end at the same loss: |dL| <= 0.02 + 0.03 L;
 * both must have learned (final < 0.8 initial). Then the GPU's trained
 * weights run on the CPU match the GPU forward (the bf16 copies were
 * refreshed after training). */
START_TEST(test_training_matches_cpu)
{
    const int M = 9, bs = 32, nb = 4, steps = 200;
    nn_model_t *m = test_model(2, 16, M, 31);
    nn_ctx_t *cpu = cpu_ctx(&nn_backend_cpu, m, bs), *gpu = cuda_ctx(m, bs);
    static const int sizes[] = {9};
    batch_t data[4];
    for (int i = 0; i < nb; i++)
        data[i] = make_batch(bs, M, sizes, 1, (uint64_t)(1000 + i));
    nn_train_opts_t o = {0.02f, 0.9f, 1e-4f};
    nn_losses_t lc, lg, first_c = {0}, first_g = {0};
    for (int s = 0; s < steps; s++) {
        batch_t *b = &data[s % nb];
        ck_assert_int_eq(
            nn_backend_cpu.train_step(cpu, b->in, b->pt, b->vt, bs, &o, &lc, NULL, 0), 0);
        ck_assert_int_eq(
            nn_backend_cuda.train_step(gpu, b->in, b->pt, b->vt, bs, &o, &lg, NULL, 0), 0);
        if (s == 0) {
            first_c = lc;
            first_g = lg;
        }
        if (s % 50 == 0 || s == steps - 1)
            printf("  step %3d loss cpu %.5f gpu %.5f\n", s, lc.total, lg.total);
    }
    /* the loss of the final weights on all the data */
    double fc = 0.0, fg = 0.0;
    for (int i = 0; i < nb; i++) {
        ck_assert_int_eq(nn_backend_cpu.loss_grad(cpu, data[i].in, data[i].pt, data[i].vt, bs,
                                                  o.weight_decay, &lc, NULL, NULL, 0), 0);
        ck_assert_int_eq(nn_backend_cuda.loss_grad(gpu, data[i].in, data[i].pt, data[i].vt, bs,
                                                   o.weight_decay, &lg, NULL, NULL, 0), 0);
        fc += lc.total / nb;
        fg += lg.total / nb;
    }
    printf("  first loss cpu %.5f gpu %.5f; final cpu %.5f gpu %.5f\n", first_c.total,
           first_g.total, fc, fg);
    ck_assert_msg(fabs(first_c.total - first_g.total) <= 5e-3 * (1 + first_c.total),
                  "first losses differ");
    ck_assert_msg(fabs(fg - fc) <= 0.02 + 0.03 * fc, "final loss gpu %.5f cpu %.5f", fg, fc);
    ck_assert_msg(fc < 0.8 * first_c.total && fg < 0.8 * first_g.total, "did not learn");

    /* trained GPU weights, evaluated on the CPU and on the GPU */
    float *w = malloc(sizeof(float) * m->nparams);
    ck_assert(w);
    nn_backend_cuda.get_weights(gpu, w);
    nn_backend_cpu.set_weights(cpu, w);
    int HW = M * M;
    float *pr = malloc(sizeof(float) * bs * HW), *pg = malloc(sizeof(float) * bs * HW);
    float vr[32 * 3], vg[32 * 3];
    ck_assert(pr && pg);
    nn_backend_cpu.forward(cpu, data[0].in, bs, pr, vr);
    nn_backend_cuda.forward(gpu, data[0].in, bs, pg, vg);
    bool ok = compare("policy after training", pr, pg, (size_t)bs * HW, 2e-3, 5e-2);
    ok &= compare("value after training", vr, vg, (size_t)bs * 3, 1e-2, 5e-2);
    ck_assert(ok);
    free(w);
    free(pr);
    free(pg);
    for (int i = 0; i < nb; i++)
        free_batch(&data[i]);
    nn_backend_cuda.free(gpu);
    nn_backend_cpu.free(cpu);
    nn_model_free(m);
}
END_TEST

/* set_weights / get_weights round trip exactly; forward follows set_weights. */
START_TEST(test_weights_roundtrip)
{
    nn_model_t *a = test_model(1, 8, 9, 41), *b = test_model(1, 8, 9, 42);
    nn_ctx_t *gpu = cuda_ctx(a, 4), *cpu = cpu_ctx(&nn_backend_cpu, b, 4);
    float *w = malloc(sizeof(float) * a->nparams);
    ck_assert(w);
    nn_backend_cuda.get_weights(gpu, w);
    ck_assert(memcmp(w, a->params, sizeof(float) * a->nparams) == 0);
    static const int sizes[] = {9};
    batch_t bt = make_batch(4, 9, sizes, 1, 9);
    float p1[4 * 81], v1[12], p2[4 * 81], v2[12];
    nn_backend_cuda.forward(gpu, bt.in, 4, p1, v1);
    nn_backend_cuda.set_weights(gpu, b->params);
    nn_backend_cuda.get_weights(gpu, w);
    ck_assert(memcmp(w, b->params, sizeof(float) * b->nparams) == 0);
    nn_backend_cuda.forward(gpu, bt.in, 4, p2, v2);
    float pr[4 * 81], vr[12];
    nn_backend_cpu.forward(cpu, bt.in, 4, pr, vr);
    ck_assert(compare("policy after set_weights", pr, p2, 4 * 81, 2e-3, 5e-2));
    ck_assert(compare("value after set_weights", vr, v2, 12, 1e-2, 5e-2));
    ck_assert_msg(memcmp(p1, p2, sizeof p1) != 0, "forward ignored set_weights");
    /* momentum: zero before training, then what was set */
    nn_backend_cuda.get_momentum(gpu, w);
    for (size_t i = 0; i < a->nparams; i++)
        ck_assert_float_eq(w[i], 0);
    nn_backend_cuda.set_momentum(gpu, a->params);
    nn_backend_cuda.get_momentum(gpu, w);
    ck_assert(memcmp(w, a->params, sizeof(float) * a->nparams) == 0);
    /* from zero momentum, one step leaves the gradient in the buffer */
    float *g = calloc(a->nparams, sizeof(float));
    ck_assert(g);
    nn_backend_cuda.set_momentum(gpu, g);
    nn_losses_t l;
    ck_assert_int_eq(
        nn_backend_cuda.loss_grad(gpu, bt.in, bt.pt, bt.vt, 4, 1e-4f, &l, g, NULL, 0), 0);
    nn_train_opts_t o = {0.01f, 0.9f, 1e-4f};
    ck_assert_int_eq(nn_backend_cuda.train_step(gpu, bt.in, bt.pt, bt.vt, 4, &o, &l, NULL, 0),
                     0);
    nn_backend_cuda.get_momentum(gpu, w);
    ck_assert(compare("momentum after one step", g, w, a->nparams, 1e-6, 1e-3));
    free(g);
    free(w);
    free_batch(&bt);
    nn_backend_cpu.free(cpu);
    nn_backend_cuda.free(gpu);
    nn_model_free(a);
    nn_model_free(b);
}
END_TEST

/* Bad device index: a message, not a crash. */
START_TEST(test_bad_device)
{
    char err[256], note[256];
    int ndev = nn_cuda_device_count(NULL, 0);
    nn_model_t *m = test_model(1, 8, 9, 5);
    ck_assert(nn_backend_cuda.create(m, 4, ndev, 0, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "no such device"), "%s", err);
    ck_assert(nn_net_create(m, "cuda:99", 4, 0, note, sizeof note, err, sizeof err) == NULL);
    printf("  cuda:99 -> %s\n", err);
    nn_model_free(m);
}
END_TEST

/* CUDA is initialised in this process (a context, a forward); a child
 * started with posix_spawn must still see and use the GPU. */
START_TEST(test_spawn_after_cuda_init)
{
    nn_model_t *m = test_model(1, 8, 9, 3);
    nn_ctx_t *gpu = cuda_ctx(m, 4);
    static const int sizes[] = {9};
    batch_t bt = make_batch(4, 9, sizes, 1, 3);
    float p[4 * 81], v[12];
    nn_backend_cuda.forward(gpu, bt.in, 4, p, v);
    char bin[1024], out[16384];
    snprintf(bin, sizeof bin, "%s", gomoku_bin());
    char *argv[] = {bin, "device", NULL};
    int rc = run_capture(argv, out, sizeof out, 300);
    printf("  gomoku device (spawned with a live CUDA context) ->\n%s", out);
    ck_assert_msg(rc == 0, "exit %d", rc);
    const char *g = strstr(out, "cuda:0: ");
    ck_assert_msg(g && strstr(g, "PASS"), "child did not see or use the GPU");
    /* our context still works */
    float p2[4 * 81], v2[12];
    nn_backend_cuda.forward(gpu, bt.in, 4, p2, v2);
    ck_assert(memcmp(p, p2, sizeof p) == 0);
    free_batch(&bt);
    nn_backend_cuda.free(gpu);
    nn_model_free(m);
}
END_TEST

/* `gomoku train` on the GPU: a small run to --steps, with workers spawned
 * by a trainer that holds a CUDA context. Skipped when the trainer is not
 * built. */
START_TEST(test_train_cmd_gpu)
{
    char bin[1024], out[65536];
    snprintf(bin, sizeof bin, "%s", gomoku_bin());
    char *hargv[] = {bin, "train", "--help", NULL};
    int rc = run_capture(hargv, out, sizeof out, 60);
    if (strstr(out, "not built yet") || !strstr(out, "--device") || !strstr(out, "--steps")) {
        printf("  gomoku train is not built (or lacks --device/--steps): skipped\n");
        return;
    }
    ck_assert_int_eq(rc, 0);
    char dir[] = "/tmp/gz_cuda_trainXXXXXX";
    ck_assert(mkdtemp(dir));
    char run[1100];
    snprintf(run, sizeof run, "%s/run", dir);
    char *argv[] = {bin, "train", run, "--device", "cuda", "--workers", "2", "--parallel", "16",
                    "--visits", "16", "--blocks", "2", "--channels", "32", "--size", "9",
                    "--batch", "64", "--steps", "60", "--checkpoint-every", "20", NULL};
    time_t t0 = time(NULL);
    rc = run_capture(argv, out, sizeof out, 480);
    size_t len = strlen(out);
    printf("  gomoku train (%ld s) exit %d, last output:\n%s\n", (long)(time(NULL) - t0), rc,
           len > 2000 ? out + len - 2000 : out);
    ck_assert_msg(rc == 0, "gomoku train exited %d", rc);
    char path[1200];
    snprintf(path, sizeof path, "%s/models", run);
    int ckpts = 0;
    DIR *d = opendir(path);
    ck_assert_msg(d, "no %s", path);
    for (struct dirent *de; (de = readdir(d));) {
        size_t l = strlen(de->d_name);
        ckpts += l > 4 && strcmp(de->d_name + l - 4, ".gzm") == 0;
    }
    closedir(d);
    printf("  %d checkpoints in %s\n", ckpts, path);
    ck_assert_msg(ckpts > 0, "no checkpoint in %s", path);
    struct stat st;
    snprintf(path, sizeof path, "%s/status.json", run);
    ck_assert_msg(stat(path, &st) == 0, "no %s", path);
    char *rm[] = {"/bin/rm", "-rf", dir, NULL};
    run_capture(rm, out, sizeof out, 60);
}
END_TEST
#endif /* GZ_HAVE_CUDA */

static int run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    Suite *s = suite_create("nn_cuda_device_free");
    TCase *tc = tcase_create("device_free");
#ifdef GZ_HAVE_CUDA
    tcase_add_test(tc, test_shapes);
    tcase_add_test(tc, test_config_rules);
#endif
    tcase_add_test(tc, test_availability);
    tcase_add_test(tc, test_device_cmd);
    suite_add_tcase(s, tc);
    if (run_suite(s) != 0)
        return 1;

    char why[256];
    if (!nn_cuda_available(why, sizeof why)) {
        printf("no usable CUDA device (%s): GPU checks skipped\n", why);
        return 77;
    }
#ifdef GZ_HAVE_CUDA
    Suite *g = suite_create("nn_cuda_device");
    TCase *gt = tcase_create("device");
    tcase_set_timeout(gt, 900);
    tcase_add_test(gt, test_bad_device);
    tcase_add_test(gt, test_weights_roundtrip);
    tcase_add_test(gt, test_forward_matches_cpu);
    tcase_add_test(gt, test_gradients_match_cpu);
    tcase_add_test(gt, test_training_matches_cpu);
    tcase_add_test(gt, test_spawn_after_cuda_init);
    tcase_add_test(gt, test_train_cmd_gpu);
    suite_add_tcase(g, gt);
    return run_suite(g) ? 1 : 0;
#else
    return 77;
#endif
}
