/* One 3x3 conv layer of our trunk (C -> C, M x M, pad 1, batch N) in
 * oneDNN (direct and winograd, fp32 and bf16, each in the layout oneDNN
 * picks for itself, reorders not timed) against ours (fp32: im2col +
 * SGEMM as nn/nn_cpu.c does it; bf16: nn/gemm_bf16.c), on T threads
 * (oneDNN: OpenMP; ours: T threads, each its share of the batch in pieces
 * of 3 samples, as the CPU backend runs). Measurement only, not part of
 * the program: scripts/bench-onednn builds and runs it.
 *
 * Prints one JSON line per variant: the median over interleaved rounds of
 * effective GFLOP/s = 2 * C * C * 9 * M * M * N / time (direct-conv
 * count). --cpu-time 1 divides by the process's CPU seconds instead of
 * wall seconds: per-core efficiency, steadier on a loaded machine (with
 * T > 1 it also counts threads that spin while waiting). */
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nn/gemm_bf16.h"
#include "nn/nn.h"
#include "nn/sgemm.h"

static int C = 64, M = 15, N = 64, T = 1, ROUNDS = 5, PIECE = 3;
static double SECONDS = 0.5;
static int CPU_TIME = 0;   /* --cpu-time 1: CPU seconds of the process, not wall seconds */

static double now(void)
{
    struct timespec t;
    clock_gettime(CPU_TIME ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CHECK(x)                                                                   \
    do {                                                                           \
        dnnl_status_t s_ = (x);                                                    \
        if (s_ != dnnl_success) {                                                  \
            fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #x, s_); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

typedef struct variant {
    const char *name;
    double (*run)(struct variant *v);   /* seconds per layer */
    /* oneDNN */
    dnnl_primitive_t prim;
    dnnl_memory_t src, wei, dst;
    dnnl_stream_t stream;
    char impl[128];
    /* ours */
    gemm_bf16_t *g;
    nn_model_t *m;
    float *x, *out, *col[64];
    int bf16;
    double med[64];
} variant_t;

static dnnl_engine_t engine;

static void fill(dnnl_memory_t mem, int bf16)
{
    const dnnl_memory_desc_t *md;
    CHECK(dnnl_memory_get_memory_desc(mem, &md));
    size_t bytes = dnnl_memory_desc_get_size(md);
    void *p;
    CHECK(dnnl_memory_get_data_handle(mem, &p));
    if (bf16)
        for (size_t i = 0; i < bytes / 2; i++)
            ((uint16_t *)p)[i] = 0x3c23 + (uint16_t)(i % 7);   /* ~0.01 */
    else
        for (size_t i = 0; i < bytes / 4; i++)
            ((float *)p)[i] = 0.01f * (float)(i % 7);
}

static double run_dnnl(variant_t *v)
{
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, v->src}, {DNNL_ARG_WEIGHTS, v->wei},
                               {DNNL_ARG_DST, v->dst}};
    int calls = 0;
    double t0 = now(), t;
    do {
        CHECK(dnnl_primitive_execute(v->prim, v->stream, 3, args));
        CHECK(dnnl_stream_wait(v->stream));
        calls++;
    } while ((t = now() - t0) < SECONDS);
    return t / calls;
}

/* false when oneDNN has no implementation for this combination */
static int make_dnnl(variant_t *v, dnnl_alg_kind_t alg, dnnl_data_type_t dt)
{
    dnnl_memory_desc_t s, w, d;
    dnnl_dims_t sd = {N, C, M, M}, wd = {C, C, 3, 3}, st = {1, 1}, pad = {1, 1};
    CHECK(dnnl_memory_desc_init_by_tag(&s, 4, sd, dt, dnnl_format_tag_any));
    CHECK(dnnl_memory_desc_init_by_tag(&w, 4, wd, dt, dnnl_format_tag_any));
    CHECK(dnnl_memory_desc_init_by_tag(&d, 4, sd, dnnl_f32, dnnl_format_tag_any));
    dnnl_convolution_desc_t cd;
    CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, alg, &s, &w, NULL, &d,
                                             st, pad, pad));
    dnnl_primitive_desc_t pd;
    if (dnnl_primitive_desc_create(&pd, &cd, NULL, engine, NULL) != dnnl_success)
        return 0;
    const char *impl = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(v->impl, sizeof v->impl, "%s", impl ? impl : "?");
    CHECK(dnnl_primitive_create(&v->prim, pd));
    CHECK(dnnl_memory_create(&v->src, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
                             engine, DNNL_MEMORY_ALLOCATE));
    CHECK(dnnl_memory_create(&v->wei, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                             engine, DNNL_MEMORY_ALLOCATE));
    CHECK(dnnl_memory_create(&v->dst, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                             engine, DNNL_MEMORY_ALLOCATE));
    fill(v->src, dt == dnnl_bf16);
    fill(v->wei, dt == dnnl_bf16);
    CHECK(dnnl_stream_create(&v->stream, engine, dnnl_stream_default_flags));
    dnnl_primitive_desc_destroy(pd);
    v->run = run_dnnl;
    return 1;
}

/* ours: the im2col of nn/nn_cpu.c (one copy per tap and sample) */
static void im2col3(const float *x, int cin, int ld, int ns, float *col)
{
    int hw = M * M, lc = ns * hw;
    for (int t = 0; t < 9; t++) {
        int ky = t / 3, kx = t % 3, shift = (ky - 1) * M + kx - 1;
        int ylo = ky == 0, yhi = ky == 2 ? M - 1 : M;
        int lo = ylo * M + (kx == 0), hi = yhi * M - (kx == 2);
        for (int ci = 0; ci < cin; ci++) {
            float *dst = col + (size_t)(ci * 9 + t) * lc;
            const float *src = x + (size_t)ci * ld;
            for (int s = 0; s < ns; s++, dst += hw, src += hw) {
                memset(dst, 0, sizeof(float) * lo);
                memcpy(dst + lo, src + lo + shift, sizeof(float) * (hi - lo));
                memset(dst + hi, 0, sizeof(float) * (hw - hi));
                for (int y = ylo; y < yhi && kx != 1; y++)
                    dst[y * M + (kx == 0 ? 0 : M - 1)] = 0.0f;
            }
        }
    }
}

typedef struct lane_job {
    variant_t *v;
    int lane, s0, n;
} lane_job_t;

static void *lane_main(void *arg)
{
    lane_job_t *j = arg;
    variant_t *v = j->v;
    int hw = M * M;
    for (int s = j->s0; s < j->s0 + j->n; s += PIECE) {
        int ns = j->s0 + j->n - s < PIECE ? j->s0 + j->n - s : PIECE, ld = ns * hw;
        const float *x = v->x + (size_t)s * C * hw;   /* a piece: (C, ns*hw) */
        float *out = v->out + (size_t)s * C * hw;
        if (v->bf16) {
            nn_layout_t L;
            nn_param_layout(&v->m->cfg, &L);
            gemm_bf16_conv3(v->g, j->lane, L.blocks, C, C, x, out, ns);
        } else {
            im2col3(x, C, ld, ns, v->col[j->lane]);
            sgemm_run(false, false, C, ld, C * 9, 1.0f, v->m->params, C * 9, v->col[j->lane],
                      ld, 0.0f, out, ld);
        }
    }
    return NULL;
}

static double run_ours(variant_t *v)
{
    int calls = 0, per = (N + T - 1) / T;
    double t0 = now(), t;
    do {
        pthread_t tid[64];
        lane_job_t jobs[64];
        for (int l = 0; l < T; l++) {
            jobs[l] = (lane_job_t){v, l, l * per, l * per >= N ? 0 : (N - l * per < per ? N - l * per : per)};
            if (l)
                pthread_create(&tid[l], NULL, lane_main, &jobs[l]);
        }
        lane_main(&jobs[0]);
        for (int l = 1; l < T; l++)
            pthread_join(tid[l], NULL);
        calls++;
    } while ((t = now() - t0) < SECONDS);
    return t / calls;
}

static void make_ours(variant_t *v, int bf16)
{
    nn_config_t cfg;
    nn_config_default(&cfg, 1, C, M);
    char err[256];
    v->m = nn_model_create(&cfg, 1, err, sizeof err);
    for (size_t i = 0; i < v->m->nparams; i++)
        v->m->params[i] = 0.01f * (float)(i % 7);
    size_t n = (size_t)N * C * M * M;
    v->x = malloc(n * sizeof(float));
    v->out = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        v->x[i] = 0.01f * (float)(i % 5);
    v->bf16 = bf16;
    if (bf16) {
        v->g = gemm_bf16_create(&cfg, v->m->params, T, PIECE, err, sizeof err);
        if (!v->g) {
            fprintf(stderr, "%s\n", err);
            exit(1);
        }
    } else {
        for (int l = 0; l < T; l++)
            v->col[l] = malloc(sizeof(float) * 9 * C * PIECE * M * M);
    }
    snprintf(v->impl, sizeof v->impl, "%s", bf16 ? "gemm_bf16" : sgemm_impl_name());
    v->run = run_ours;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--channels")) C = v;
        else if (!strcmp(argv[i], "--size")) M = v;
        else if (!strcmp(argv[i], "--batch")) N = v;
        else if (!strcmp(argv[i], "--threads")) T = v;
        else if (!strcmp(argv[i], "--rounds")) ROUNDS = v;
        else if (!strcmp(argv[i], "--seconds")) SECONDS = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--cpu-time")) CPU_TIME = v;
        else { fprintf(stderr, "onednn_conv: unknown option %s\n", argv[i]); return 2; }
    }
    if (T < 1 || T > 64 || ROUNDS < 1 || ROUNDS > 64) {
        fprintf(stderr, "onednn_conv: threads 1..64, rounds 1..64\n");
        return 2;
    }
    CHECK(dnnl_engine_create(&engine, dnnl_cpu, 0));
    variant_t v[8];
    int nv = 0;
    struct { const char *name; dnnl_alg_kind_t alg; dnnl_data_type_t dt; } dn[] = {
        {"onednn direct fp32", dnnl_convolution_direct, dnnl_f32},
        {"onednn winograd fp32", dnnl_convolution_winograd, dnnl_f32},
        {"onednn direct bf16", dnnl_convolution_direct, dnnl_bf16},
        {"onednn winograd bf16", dnnl_convolution_winograd, dnnl_bf16},
    };
    for (int i = 0; i < 4; i++) {
        memset(&v[nv], 0, sizeof v[nv]);
        v[nv].name = dn[i].name;
        if (make_dnnl(&v[nv], dn[i].alg, dn[i].dt))
            nv++;
        else
            printf("{\"variant\":\"%s\",\"status\":\"unimplemented by oneDNN %d.%d here\"}\n",
                   dn[i].name, dnnl_version()->major, dnnl_version()->minor);
    }
    memset(&v[nv], 0, sizeof v[nv]);
    v[nv].name = "ours fp32 (im2col + sgemm)";
    make_ours(&v[nv++], 0);
    char why[128];
    if (gemm_bf16_supported(why, sizeof why)) {
        memset(&v[nv], 0, sizeof v[nv]);
        v[nv].name = "ours bf16 (gemm_bf16)";
        make_ours(&v[nv++], 1);
    } else {
        printf("{\"variant\":\"ours bf16\",\"status\":\"%s\"}\n", why);
    }
    double flop = 2.0 * C * C * 9 * M * M * N;
    for (int i = 0; i < nv; i++)
        v[i].run(&v[i]);   /* warm */
    for (int r = 0; r < ROUNDS; r++)   /* interleaved: every variant sees the same load */
        for (int i = 0; i < nv; i++)
            v[i].med[r] = flop / v[i].run(&v[i]) / 1e9;
    for (int i = 0; i < nv; i++) {
        qsort(v[i].med, (size_t)ROUNDS, sizeof(double), cmp);
        printf("{\"variant\":\"%s\",\"impl\":\"%s\",\"channels\":%d,\"size\":%d,\"batch\":%d,"
               "\"threads\":%d,\"rounds\":%d,\"clock\":\"%s\",\"gflops_median\":%.1f,\"gflops_min\":%.1f,"
               "\"gflops_max\":%.1f}\n",
               v[i].name, v[i].impl, C, M, N, T, ROUNDS, CPU_TIME ? "cpu" : "wall", v[i].med[ROUNDS / 2], v[i].med[0],
               v[i].med[ROUNDS - 1]);
    }
    return 0;
}
