/* The CUDA backend as a module loaded on first use.
 *
 * nn_cuda.cu (cuDNN + cuBLAS) is built into a shared module, gomoku-cuda.so,
 * so the program itself links no CUDA library: it starts as fast as a
 * CPU-only build and runs where the CUDA libraries are missing. The first
 * call of any function below dlopens the module (once, cached, thread-safe)
 * from, in order: $GOMOKU_CUDA_MODULE; gomoku-cuda.so next to the running
 * executable (/proc/self/exe); the install directory (libdir/gomoku). When
 * it cannot load, every function fails with the reason ("cannot load
 * /path/gomoku-cuda.so: libcudnn.so.9: cannot open shared object file").
 *
 * Plain C: no CUDA header is needed to use this. */
#ifndef GZ_NN_CUDA_H
#define GZ_NN_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "nn/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The module's vtable, or NULL with the reason (module missing, no driver,
 * no device). Shares nn_cuda_available's cached answer. */
const nn_backend_t *nn_cuda_backend(char *why, size_t whylen);

/* Number of CUDA devices, or -1 with the reason. */
int nn_cuda_device_count(char *why, size_t whylen);

/* One line about device dev: "NVIDIA H100 80GB HBM3, compute 9.0, 79.1 GiB,
 * 132 SMs, driver 13.0, runtime 13.0, cuDNN 9.19.0, cuBLAS 13.0". 0, or -1
 * with the reason in buf. */
int nn_cuda_device_describe(int dev, char *buf, size_t len);

/* bf16 cuBLAS GEMM peak (8192^3, fp32 accumulate) on device dev in
 * TFLOP/s, and the device name in name. -1 with "unavailable: <reason>" in
 * name when the device cannot run it. Allocates ~400 MiB on the device. */
double nn_cuda_gemm_peak_tflops(int device, char *name, size_t namelen);

/* Shape logic of the backend, without a device: builds every cuDNN
 * descriptor the backend uses for cfg at batch n (NHWC bf16 inference,
 * NCHW fp32 training) and checks that each convolution keeps the M x M
 * plane and has the expected channel counts; also the backend's config
 * rules (channels a multiple of 8). Needs the
 * module (not a device). 0, or -1 with a one-line message. */
int nn_cuda_check_shapes(const nn_config_t *cfg, int n, char *err, size_t errlen);

/* Free and total memory of device dev in bytes (cudaMemGetInfo): 0, or -1
 * with the reason in why. For tests and `gomoku device`. */
int nn_cuda_mem_info(int dev, size_t *free_bytes, size_t *total_bytes, char *why, size_t whylen);

/* Path of the module that was loaded, or the reason it was not ("not
 * built", "cannot load ..."): for `gomoku device`. Loads it when needed.
 * 0 when loaded, -1 otherwise. */
int nn_cuda_module_info(char *buf, size_t len);

/* What a CUDA context is doing, for tests and benchmarks (the GPU suite
 * asserts that graphs are live, not only that answers match). */
typedef struct nn_cuda_stats {
    int precision;            /* nn_precision_t of forward: FP32 or BF16 */
    bool infer_ready;         /* inference buffers exist (first forward or set_precision) */
    bool path_ready[2];       /* [FP32], [BF16]: that precision's weights, plans, graphs */
    bool train_ready;         /* training buffers exist (first training call) */
    bool train_staging;       /* training keeps its own pinned copy of the batch (the
                               * caller's buffers were not pinned) */
    int buckets;              /* batch buckets up to max_batch */
    int graphs_live;          /* buckets with a captured graph, both precisions */
    int graphs_failed;        /* buckets whose capture failed (they run without) */
    unsigned long long graph_launches, plain_runs;   /* forward calls each way */
    char graph_error[200];    /* the last capture failure, "" when none */
} nn_cuda_stats_t;

/* Fill *out for c, a context of the CUDA backend (nn_cuda_backend's
 * create). 0, or -1 when the module is not loaded. */
int nn_cuda_ctx_stats(nn_ctx_t *c, nn_cuda_stats_t *out);

/* The module's own checks that need no device: the cuDNN library in use
 * against the headers it was built with (version, sub-libraries), and how
 * an algorithm trial reports cuDNN's refusals. 0, or -1 with the first
 * failure. */
int nn_cuda_self_test(char *err, size_t errlen);

/* The cuDNN version rule of the module: a runtime (cudnnGetVersion) of
 * another major version than the headers it was built with (CUDNN_VERSION)
 * is refused; minor versions may differ (cuDNN keeps its ABI within a
 * major version). Versions are cuDNN's numbers: major*10000 + minor*100 +
 * patch from 9 on, major*1000 + minor*100 + patch before. 0, or -1 with a
 * message naming both. */
static inline void nn_cuda_cudnn_version_split(size_t v, int *major, int *minor, int *patch)
{
    *major = (int)(v >= 90000 ? v / 10000 : v / 1000);
    *minor = (int)(v >= 90000 ? v % 10000 / 100 : v % 1000 / 100);
    *patch = (int)(v % 100);
}
static inline int nn_cuda_cudnn_version_check(size_t runtime, size_t header, char *err,
                                              size_t errlen)
{
    int rM, rm, rp, hM, hm, hp;
    nn_cuda_cudnn_version_split(runtime, &rM, &rm, &rp);
    nn_cuda_cudnn_version_split(header, &hM, &hm, &hp);
    if (rM == hM)
        return 0;
    snprintf(err, errlen,
             "cuDNN %d.%d.%d is loaded but this module was built with cuDNN %d.%d.%d headers: "
             "rebuild against the cuDNN in use (-Dcudnn_root=DIR) or put cuDNN %d on the "
             "library path",
             rM, rm, rp, hM, hm, hp, hM);
    return -1;
}

/* ---- the module's side ---- */

#define NN_CUDA_MODULE_FILE "gomoku-cuda.so"
#define NN_CUDA_MODULE_ENTRY "gomoku_cuda_module"
#define NN_CUDA_MODULE_ABI 4   /* 2: nn_backend_t.set_precision; 3: .bf16_faster,
                                * nn_train_opts_t.policy_weight; 4: set_precision
                                * takes auto (bf16_faster gone), host_alloc/free,
                                * the struct sizes, ctx_stats, self_test */

/* What the module's one exported function returns. The loader rejects a
 * module whose abi or size differs (a stale build next to a new binary),
 * then one whose shared structs differ in size from the program's (a
 * header changed without an ABI bump): nn_cuda_module_check. */
typedef struct nn_cuda_module {
    int abi;                 /* NN_CUDA_MODULE_ABI */
    size_t size;             /* sizeof(nn_cuda_module_t) */
    /* sizeof each struct the module shares with the program, as it was built */
    size_t size_config;      /* nn_config_t */
    size_t size_model;       /* nn_model_t */
    size_t size_train_opts;  /* nn_train_opts_t */
    size_t size_losses;      /* nn_losses_t */
    size_t size_backend;     /* nn_backend_t */
    size_t size_stats;       /* nn_cuda_stats_t */
    const nn_backend_t *backend;
    int (*device_count)(char *why, size_t whylen);
    int (*device_describe)(int dev, char *buf, size_t len);
    double (*gemm_peak_tflops)(int device, char *name, size_t namelen);
    int (*check_shapes)(const nn_config_t *cfg, int n, char *err, size_t errlen);
    int (*mem_info)(int dev, size_t *free_bytes, size_t *total_bytes, char *why, size_t whylen);
    int (*ctx_stats)(nn_ctx_t *c, nn_cuda_stats_t *out);
    int (*self_test)(char *err, size_t errlen);
} nn_cuda_module_t;

/* The loader's check of what a module's entry returned (m may be NULL): 0
 * when it is of this program's ABI and every shared struct has this
 * program's size, else -1 and why ("module ABI 3, this program's 4",
 * "nn_config_t is 36 bytes in the module, 32 in this program"), each
 * ending in "rebuild it". */
int nn_cuda_module_check(const nn_cuda_module_t *m, char *why, size_t whylen);

typedef const nn_cuda_module_t *(*nn_cuda_module_fn)(void);

/* ---- device layout and batch buckets (plain arithmetic, shared by the
 * module and the tests) ---- */

/* Every parameter tensor starts on a 256-byte boundary on the device
 * (tensor-core kernels and vectorised loads need aligned operands). */
#define NN_CUDA_ALIGN_FLOATS 64

static inline size_t nn_cuda_align(size_t floats)
{
    return (floats + NN_CUDA_ALIGN_FLOATS - 1) / NN_CUDA_ALIGN_FLOATS * NN_CUDA_ALIGN_FLOATS;
}

/* Device offset of each parameter tensor (dev_off has nn_param_tensors(cfg)
 * entries): the flat host order, each tensor start rounded up to
 * NN_CUDA_ALIGN_FLOATS, zero padding between. Returns the device size in
 * floats. */
static inline size_t nn_cuda_dev_layout(const nn_config_t *cfg, size_t *dev_off)
{
    size_t at = 0;
    int nt = nn_param_tensors(cfg);
    for (int i = 0; i < nt; i++) {
        dev_off[i] = at;
        at = nn_cuda_align(at + nn_param_tensor(cfg, i).count);
    }
    return at;
}

/* Batch sizes are run at one of a few bucket sizes, so cuDNN plans and
 * CUDA graphs are made a handful of times, not once per size: the
 * smallest of 1, 2, 3, 4, 6, 8, 12, 16, ... (2^k and 3 * 2^k) that holds
 * n, capped at max_batch (which is always a bucket). Padding rows are
 * zeros and masked out. n in 1..max_batch. */
static inline int nn_cuda_bucket_next(int b)
{
    if (b < 2)
        return 2;
    return (b & (b - 1)) == 0 ? b + b / 2 : b / 3 * 4;   /* 2^k -> 3*2^(k-1), 3*2^k -> 2^(k+2) */
}
static inline int nn_cuda_bucket(int n, int max_batch)
{
    int b = 1;
    while (b < n && b < max_batch)
        b = nn_cuda_bucket_next(b);
    return b < max_batch ? b : max_batch;
}

/* Index of bucket b among the buckets up to max_batch (0 for 1, 1 for 2,
 * 2 for 3, 3 for 4, 4 for 6, ...); the number of buckets is
 * nn_cuda_bucket_index(max_batch, max_batch) + 1. */
static inline int nn_cuda_bucket_index(int b, int max_batch)
{
    int i = 0;
    for (int s = 1; s < b && s < max_batch; s = nn_cuda_bucket_next(s))
        i++;
    return i;
}

#ifdef __cplusplus
}
#endif
#endif
