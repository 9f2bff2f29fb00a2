/* CUDA backend: cuDNN convolutions, cuBLAS for the fully connected layers,
 * own kernels for the rest. Built as the module gomoku-cuda.so, loaded on
 * first use (nn/nn_cuda.h); its only export is gomoku_cuda_module().
 *
 * Two paths, one set of fp32 master weights on the device:
 *  - forward (self-play inference): NHWC bf16 activations, tensor-core
 *    convolutions (fp32 accumulate). The input planes are padded to 8
 *    channels; the trunk needs channels % 8 == 0. The 1x1 head convs are
 *    bf16 cuBLAS GEMMs with fp32 output; heads run in fp32. A batch runs
 *    at its bucket size (nn_cuda_bucket); one CUDA graph per bucket,
 *    captured on the second call with that bucket. The cuDNN algorithms of
 *    every bucket are chosen in create (the first heuristic candidate that
 *    runs), so forward never meets a missing algorithm. bf16 copies of the
 *    conv weights are refreshed after set_weights / train_step.
 *  - loss_grad / train_step: NCHW fp32 (cuDNN may use TF32 tensor cores;
 *    GZ_CUDA_TF32=0 at create forbids it), cuDNN filter layout per tensor.
 *    Nesterov SGD in a kernel. Training buffers are allocated on the first
 *    training call (an inference-only context never pays for them), the
 *    algorithms of a bucket on its first use; either failing is an error
 *    the caller gets, not an abort.
 * Parameters, gradients and momentum live on the device in an aligned copy
 * of the flat layout (each tensor on a 256-byte boundary,
 * nn_cuda_dev_layout); get/set map between the two.
 * Every context owns its stream, handles, buffers and pinned host memory;
 * every copy goes on its stream. A failed CUDA/cuDNN/cuBLAS call in
 * forward/training stops with file:line (a broken invariant); create and
 * the training calls' resource failures return messages instead. */
#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "nn/nn.h"
#include "nn/nn_cuda.h"

typedef __nv_bfloat16 bf16;

/* ---- error checking ---- */

/* While a CUDA graph is being captured, a failing call is recorded here
 * instead of stopping the process, so the context can fall back to plain
 * launches (a capture failure is not a broken invariant). */
struct soft_err {
    bool failed;
    char what[200];
};
static thread_local soft_err *t_soft = nullptr;

static void check_fail(const char *what, const char *call, const char *file, int line)
{
    if (t_soft) {
        if (!t_soft->failed) {
            t_soft->failed = true;
            snprintf(t_soft->what, sizeof t_soft->what, "%s at %s:%d", what, file, line);
        }
        return;
    }
    fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, what);
    abort();
}

/* The name of a failed status, NULL for success: one overload per library,
 * so one macro checks a call of any of them. */
static const char *fail_name(cudaError_t e)
{
    return e == cudaSuccess ? NULL : cudaGetErrorName(e);
}
static const char *fail_name(cudnnStatus_t s)
{
    return s == CUDNN_STATUS_SUCCESS ? NULL : cudnnGetErrorString(s);
}
static const char *fail_name(cublasStatus_t s)
{
    return s == CUBLAS_STATUS_SUCCESS ? NULL : cublasGetStatusName(s);
}

#define GPU_CHECK(x)                                                         \
    do {                                                                     \
        const char *f_ = fail_name(x);                                       \
        if (f_)                                                              \
            check_fail(f_, #x, __FILE__, __LINE__);                          \
    } while (0)
#define CUDA_CHECK(x) GPU_CHECK(x)
#define CUDNN_CHECK(x) GPU_CHECK(x)
#define CUBLAS_CHECK(x) GPU_CHECK(x)
#define LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())

/* For create: a failure becomes a message and a jump to `fail`. */
#define TRY_GPU(x)                                                           \
    do {                                                                     \
        const char *f_ = fail_name(x);                                       \
        if (f_) {                                                            \
            snprintf(err, errlen, "cuda:%d: %s: %s (%s:%d)", device, #x, f_, \
                     __FILE__, __LINE__);                                    \
            goto fail;                                                       \
        }                                                                    \
    } while (0)
#define TRY_CUDA(x) TRY_GPU(x)
#define TRY_CUDNN(x) TRY_GPU(x)
#define TRY_CUBLAS(x) TRY_GPU(x)

static unsigned blocks_for(size_t n, unsigned threads)
{
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b ? b : 1);
}

/* ---- availability ---- */

static pthread_once_t avail_once = PTHREAD_ONCE_INIT;
static int avail_count = -1;
static char avail_why[128];

static void avail_probe(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(avail_why, sizeof avail_why, "%s", cudaGetErrorName(e));
        avail_count = -1;
    } else if (n == 0) {
        snprintf(avail_why, sizeof avail_why, "no CUDA device");
        avail_count = 0;
    } else {
        avail_count = n;
    }
}

/* Number of devices, or -1 with the CUDA error name (asked once: the error sticks). */
static int cu_device_count(char *why, size_t whylen)
{
    pthread_once(&avail_once, avail_probe);
    if (avail_count < 0 && why && whylen)
        snprintf(why, whylen, "%s", avail_why);
    return avail_count;
}

/* 0 when dev is one of the devices present, else -1 with why set. */
static int cu_device_valid(int dev, char *why, size_t whylen)
{
    int n = cu_device_count(why, whylen);
    if (n == 0)
        snprintf(why, whylen, "no CUDA device");
    else if (n > 0 && (dev < 0 || dev >= n))
        snprintf(why, whylen, "no device %d (%d present)", dev, n);
    return n > 0 && dev >= 0 && dev < n ? 0 : -1;
}

static int cu_device_describe(int dev, char *buf, size_t len)
{
    if (cu_device_valid(dev, buf, len) != 0)
        return -1;
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, dev);
    if (e != cudaSuccess) {
        snprintf(buf, len, "cudaGetDeviceProperties: %s", cudaGetErrorName(e));
        (void)cudaGetLastError();   /* a later launch check must not see it */
        return -1;
    }
    int drv = 0, rt = 0, cublas_ver = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cublasGetProperty(MAJOR_VERSION, &cublas_ver);
    int cublas_minor = 0;
    cublasGetProperty(MINOR_VERSION, &cublas_minor);
    size_t cudnn_ver = cudnnGetVersion();
    snprintf(buf, len,
             "%s, compute %d.%d, %.1f GiB, %d SMs, driver %d.%d, runtime %d.%d, "
             "cuDNN %zu.%zu.%zu, cuBLAS %d.%d",
             p.name, p.major, p.minor, (double)p.totalGlobalMem / (1024.0 * 1024 * 1024),
             p.multiProcessorCount, drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10,
             cudnn_ver / 10000, cudnn_ver % 10000 / 100, cudnn_ver % 100, cublas_ver,
             cublas_minor);
    return 0;
}

/* ---- kernels ---- */

__device__ __forceinline__ float ld(float x) { return x; }
__device__ __forceinline__ float ld(bf16 x) { return __bfloat162float(x); }
__device__ __forceinline__ void st(float *p, float v) { *p = v; }
__device__ __forceinline__ void st(bf16 *p, float v) { *p = __float2bfloat16(v); }

struct sum_op {
    __device__ float operator()(float a, float b) const { return a + b; }
};
struct max_op {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
template <class Op> __device__ __forceinline__ float warp_reduce(float v, Op op)
{
    for (int o = 16; o > 0; o >>= 1)
        v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ float warp_sum(float v) { return warp_reduce(v, sum_op()); }
/* op over the block (blockDim.x a multiple of 32), identity its neutral
 * value; every thread gets the result. */
template <class Op> __device__ float block_reduce(float v, Op op, float identity)
{
    __shared__ float sh[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_reduce(v, op);
    __syncthreads();
    if (lane == 0)
        sh[w] = v;
    __syncthreads();
    v = threadIdx.x < nw ? sh[threadIdx.x] : identity;
    if (w == 0)
        v = warp_reduce(v, op);
    if (threadIdx.x == 0)
        sh[0] = v;
    __syncthreads();
    v = sh[0];
    __syncthreads();
    return v;
}
__device__ float block_sum(float v) { return block_reduce(v, sum_op(), 0.0f); }
__device__ float block_max(float v) { return block_reduce(v, max_op(), -INFINITY); }

/* in (n, P, HW) planes -> mask (n, HW) on-board, legal (n, HW) 1 where a
 * stone may go (on board, empty, not forbidden); x8 (n, HW, 8) the planes
 * as NHWC bf16 padded with zero channels, when not NULL. Same 0.5
 * thresholds as the reference. */
__global__ void k_prep(const float *in, int n, int P, int HW, bf16 *x8, float *mask,
                       float *legal)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n * HW)
        return;
    int s = i / HW, p = i % HW;
    const float *pl = in + (size_t)s * P * HW + p;
    bool on = pl[NN_PLANE_ONBOARD * HW] > 0.5f;
    bool empty = pl[NN_PLANE_OWN * HW] < 0.5f && pl[NN_PLANE_OPP * HW] < 0.5f;
    bool allowed = P <= NN_PLANE_FORBIDDEN || pl[NN_PLANE_FORBIDDEN * HW] < 0.5f;
    mask[i] = on ? 1.0f : 0.0f;
    legal[i] = (on && empty && allowed) ? 1.0f : 0.0f;
    if (x8)
        for (int c = 0; c < 8; c++)
            x8[(size_t)i * 8 + c] = __float2bfloat16(c < P ? pl[c * HW] : 0.0f);
}

/* out = act(y + bias[c] (+ res)) * mask. Layout NHWC (c fastest) or NCHW
 * (HW fastest); mask (n, HW) or NULL; res may alias out, y may alias out. */
template <typename T>
__global__ void k_bias_act(const T *y, const float *bias, const T *res, const float *mask,
                           T *out, size_t total, int C, int HW, int nhwc, int relu)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total)
        return;
    int c;
    size_t pix;   /* n * HW + p */
    if (nhwc) {
        c = (int)(i % C);
        pix = i / C;
    } else {
        c = (int)((i / HW) % C);
        pix = i / ((size_t)C * HW) * HW + i % HW;
    }
    float v = ld(y[i]) + bias[c];
    if (res)
        v += ld(res[i]);
    if (relu)
        v = fmaxf(v, 0.0f);
    if (mask)
        v *= mask[pix];
    st(&out[i], v);
}

/* Policy logits from the fp32 1x1-conv output h (rows, Hp), rows = n*HW:
 * logit = b2 + sum_k w2[k] * relu(h[k] + b1[k]). */
__global__ void k_policy_logits(const float *h, const float *b1, const float *w2,
                                const float *b2, int Hp, int rows, float *logits)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    const float *hr = h + (size_t)r * Hp;
    float s = b2[0];
    for (int k = 0; k < Hp; k++)
        s += w2[k] * fmaxf(hr[k] + b1[k], 0.0f);
    logits[r] = s;
}

/* Loss weights of the policy channels, by value: a step's own
 * (nn_train_policy_weights; o NULL: the defaults). */
struct policy_weights { float w[NN_MAX_POLICY_OUTPUTS]; };

static policy_weights policy_weights_of(const nn_train_opts_t *o)
{
    policy_weights pw;
    nn_train_policy_weights(o, pw.w);
    return pw;
}

/* One block per (sample, channel) row of logits (n, K, HW). probs (n*K,
 * HW): softmax of the logits over the sample's legal points, 0 elsewhere
 * (all 0 when nothing is legal). With a target (n, K, HW): loss[row] =
 * -sum t log p over legal points and dlogits = scale * weight[channel] *
 * (p * sum(t) - t) at legal points, 0 elsewhere. */
__global__ void k_policy_softmax(const float *logits, const float *legal, int HW, int K,
                                 float *probs, const float *target, float scale,
                                 policy_weights pw, float *dlogits, float *loss)
{
    int s = blockIdx.x;
    scale *= pw.w[s % K];
    const float *lg = logits + (size_t)s * HW, *lm = legal + (size_t)(s / K) * HW;
    float mx = -INFINITY;
    for (int p = threadIdx.x; p < HW; p += blockDim.x)
        if (lm[p] > 0.5f)
            mx = fmaxf(mx, lg[p]);
    mx = block_max(mx);
    float sum = 0.0f;
    if (mx > -INFINITY)
        for (int p = threadIdx.x; p < HW; p += blockDim.x)
            if (lm[p] > 0.5f)
                sum += expf(lg[p] - mx);
    sum = block_sum(sum);
    float lse = mx > -INFINITY ? mx + logf(sum) : 0.0f;
    for (int p = threadIdx.x; p < HW; p += blockDim.x) {
        float pr = (lm[p] > 0.5f && mx > -INFINITY) ? expf(lg[p] - lse) : 0.0f;
        if (probs)
            probs[(size_t)s * HW + p] = pr;
    }
    if (!target)
        return;
    const float *tg = target + (size_t)s * HW;
    float l = 0.0f, ts = 0.0f;
    for (int p = threadIdx.x; p < HW; p += blockDim.x)
        if (lm[p] > 0.5f) {
            l -= tg[p] * (lg[p] - lse);
            ts += tg[p];
        }
    l = block_sum(l);
    ts = block_sum(ts);
    for (int p = threadIdx.x; p < HW; p += blockDim.x) {
        float g = 0.0f;
        if (lm[p] > 0.5f)
            g = scale * (expf(lg[p] - lse) * ts - tg[p]);
        dlogits[(size_t)s * HW + p] = g;
    }
    if (threadIdx.x == 0)
        loss[s] = l;
}

/* Value head input, NHWC inference path: pooled (n, Hv) = mean over
 * on-board points of relu(g + b1), g (n*HW, Hv) fp32. One block per sample. */
__global__ void k_value_pool_rows(const float *g, const float *b1, const float *mask, int HW,
                                  int Hv, float *pooled)
{
    int s = blockIdx.x;
    const float *m = mask + (size_t)s * HW;
    for (int k = threadIdx.x; k < Hv; k += blockDim.x) {
        float acc = 0.0f, cnt = 0.0f;
        for (int p = 0; p < HW; p++) {
            float mp = m[p];
            cnt += mp;
            if (mp != 0.0f)
                acc += mp * fmaxf(g[((size_t)s * HW + p) * Hv + k] + b1[k], 0.0f);
        }
        pooled[(size_t)s * Hv + k] = cnt > 0.0f ? acc / cnt : 0.0f;
    }
}

/* Training path: va (n, Hv, HW) already relu'd and masked; pooled (n, Hv)
 * = sum / count, count (n) the on-board points. One warp per (s, k). */
__global__ void k_value_pool_nchw(const float *va, const float *mask, int n, int HW, int Hv,
                                  float *pooled, float *count)
{
    int wid = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (wid >= n * Hv)
        return;
    int s = wid / Hv, k = wid % Hv;
    const float *v = va + ((size_t)s * Hv + k) * HW, *m = mask + (size_t)s * HW;
    float acc = 0.0f, cnt = 0.0f;
    for (int p = lane; p < HW; p += 32) {
        acc += v[p];
        cnt += m[p];
    }
    acc = warp_sum(acc);
    cnt = warp_sum(cnt);
    if (lane == 0) {
        pooled[wid] = cnt > 0.0f ? acc / cnt : 0.0f;
        if (k == 0)
            count[s] = cnt;
    }
}

/* d va[s,k,p] = (va > 0) * dpooled[s,k] * mask[s,p] / count[s]. */
__global__ void k_value_pool_back(const float *dpooled, const float *mask, const float *count,
                                  const float *va, int n, int HW, int Hv, float *dva)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t total = (size_t)n * Hv * HW;
    if (i >= total)
        return;
    int p = (int)(i % HW);
    size_t sk = i / HW;
    int s = (int)(sk / Hv);
    float c = count[s];
    float g = 0.0f;
    if (va[i] > 0.0f && c > 0.0f)
        g = dpooled[sk] * mask[(size_t)s * HW + p] / c;
    dva[i] = g;
}

/* One thread per sample: z = vl + b2; value = softmax(z). With a target:
 * loss[s] = -sum t log softmax, dz = scale * (q * sum(t) - t). */
__global__ void k_value_softmax(const float *vl, const float *b2, int n, float *value,
                                const float *target, float scale, float *dz, float *loss)
{
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= n)
        return;
    float z[NN_VALUE_OUTPUTS], mx = -INFINITY;
    for (int j = 0; j < NN_VALUE_OUTPUTS; j++) {
        z[j] = vl[s * NN_VALUE_OUTPUTS + j] + b2[j];
        mx = fmaxf(mx, z[j]);
    }
    float sum = 0.0f;
    for (int j = 0; j < NN_VALUE_OUTPUTS; j++)
        sum += expf(z[j] - mx);
    float lse = mx + logf(sum);
    if (value)
        for (int j = 0; j < NN_VALUE_OUTPUTS; j++)
            value[s * NN_VALUE_OUTPUTS + j] = expf(z[j] - lse);
    if (!target)
        return;
    float l = 0.0f, ts = 0.0f;
    for (int j = 0; j < NN_VALUE_OUTPUTS; j++) {
        float t = target[s * NN_VALUE_OUTPUTS + j];
        l -= t * (z[j] - lse);
        ts += t;
    }
    for (int j = 0; j < NN_VALUE_OUTPUTS; j++)
        dz[s * NN_VALUE_OUTPUTS + j] =
            scale * (expf(z[j] - lse) * ts - target[s * NN_VALUE_OUTPUTS + j]);
    loss[s] = l;
}

/* din = dout * (act > 0); din may alias dout. */
__global__ void k_relu_grad(const float *dout, const float *act, float *din, size_t total)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < total)
        din[i] = act[i] > 0.0f ? dout[i] : 0.0f;
}

/* db[c] = sum over s, p of d (n, C, HW). One block per channel. */
__global__ void k_bias_grad(const float *d, int n, int C, int HW, float *db)
{
    int c = blockIdx.x;
    float acc = 0.0f;
    for (int i = threadIdx.x; i < n * HW; i += blockDim.x) {
        int s = i / HW, p = i % HW;
        acc += d[((size_t)s * C + c) * HW + p];
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0)
        db[c] = acc;
}

/* Weight decay: for each weight segment (offset, count): partial sums of
 * w^2 (one per block) and grad += 2 c w. grid (chunks, segments). */
__global__ void k_l2(const float *w, float *grad, const unsigned long long *segs, float c,
                     float *partials)
{
    unsigned long long off = segs[2 * blockIdx.y], cnt = segs[2 * blockIdx.y + 1];
    float acc = 0.0f;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < cnt; i += (unsigned long long)gridDim.x * blockDim.x) {
        float v = w[off + i];
        acc += v * v;
        if (grad)
            grad[off + i] += 2.0f * c * v;
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0)
        partials[blockIdx.y * gridDim.x + blockIdx.x] = acc;
}

/* out[0..3] = policy, value, l2, total, out[4..5] = the opponent-reply
 * and soft policy losses (means over the n samples; lp holds n * K, the
 * channels of a sample together). One block. */
__global__ void k_losses(const float *lp, const float *lv, int n, int K, policy_weights pw,
                         const float *partials, int npart, float c, float *out)
{
    float a[NN_MAX_POLICY_OUTPUTS] = {0.0f}, b = 0.0f, q = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        for (int k = 0; k < K; k++)
            a[k] += lp[(size_t)i * K + k];
        b += lv[i];
    }
    for (int i = threadIdx.x; i < npart; i += blockDim.x)
        q += partials[i];
    for (int k = 0; k < NN_MAX_POLICY_OUTPUTS; k++)
        a[k] = block_sum(a[k]);
    b = block_sum(b);
    q = block_sum(q);
    if (threadIdx.x == 0) {
        out[0] = a[0] / n;
        out[1] = b / n;
        out[2] = c * q;
        out[3] = pw.w[0] * out[0] + out[1] + out[2];
        for (int k = 1; k < NN_MAX_POLICY_OUTPUTS; k++) {
            out[3 + k] = a[k] / n;
            out[3] += pw.w[k] * out[3 + k];
        }
    }
}

/* Nesterov momentum SGD: v = mu v + g; w -= lr (g + mu v). */
__global__ void k_sgd(float *w, const float *g, float *v, size_t n, float lr, float mu)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float vi = mu * v[i] + g[i];
    v[i] = vi;
    w[i] -= lr * (g[i] + mu * vi);
}

/* Filter (K, Cin, RS) fp32 -> (K, RS, Cpad) bf16 (cuDNN NHWC filter), zero
 * in the padding channels. */
__global__ void k_filter_krsc(const float *src, int K, int Cin, int RS, int Cpad, bf16 *dst)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t total = (size_t)K * RS * Cpad;
    if (i >= total)
        return;
    int c = (int)(i % Cpad);
    int rs = (int)((i / Cpad) % RS);
    size_t k = i / ((size_t)Cpad * RS);
    float v = c < Cin ? src[(k * Cin + c) * RS + rs] : 0.0f;
    dst[i] = __float2bfloat16(v);
}

/* Pseudo-random values in [-0.5, 0.5) for benchmark operands. */
__global__ void k_fill_bf16(bf16 *p, size_t n, unsigned seed)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned h = (unsigned)i * 2654435761u ^ seed * 0x9e3779b9u;
        h ^= h >> 15;
        p[i] = __float2bfloat16((float)(h & 1023u) / 1024.0f - 0.5f);
    }
}

/* ---- the context ---- */

enum { CONV_IN, CONV_TRUNK, CONV_P1, CONV_P2, CONV_V1, CONV_SHAPES };
enum { L2_CHUNKS = 32, THREADS = 256, MAX_TENSORS = 2 + 4 * NN_MAX_BLOCKS + 10 };

struct fwd_choice {
    bool set;
    cudnnConvolutionFwdAlgo_t algo;
    cudnnMathType_t math;
};
struct bwd_choice {
    bool set;
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnMathType_t fwd_math;
    cudnnConvolutionBwdDataAlgo_t data;
    cudnnMathType_t data_math;
    cudnnConvolutionBwdFilterAlgo_t filt;
    cudnnMathType_t filt_math;
};

/* The inference path's NHWC bf16 descriptors: the 3x3 input conv (8
 * padded planes -> C) and trunk conv (C -> C), for one batch size. */
struct infer_desc {
    cudnnTensorDescriptor_t xd8, xdc;   /* (n, 8, M, M), (n, C, M, M) */
    cudnnFilterDescriptor_t wd_in, wd_trunk;
    cudnnConvolutionDescriptor_t cd3;
};

/* A training-path convolution shape (NCHW fp32). */
struct conv_shape {
    int cin, cout, k;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnnTensorDescriptor_t xd, yd;   /* set for the batch size in use */
    bwd_choice *choice;               /* [nbuckets] */
};

struct train_state {
    float *grad;                        /* (dparams) device layout */
    float *in, *ptarget, *vtarget;      /* (N, P, HW), (N, HW), (N, 3) */
    float *mask, *legal, *count;        /* (N, HW), (N, HW), (N) */
    float *xs;                          /* (B + 1) x act_stride: block inputs, x_B the trunk output */
    float *ts;                          /* B x act_stride: inner activations */
    float *tmp;                         /* (N, C, HW) conv output */
    float *ph, *dph;                    /* (N, Hp, HW) */
    float *vg, *dvg;                    /* (N, Hv, HW) */
    float *plog, *dplog;                /* (N, HW) */
    float *pooled, *dpooled;            /* (N, Hv) */
    float *h1, *dh1;                    /* (N, Vh) */
    float *vl, *dvl;                    /* (N, 3) */
    float *lp, *lv;                     /* (N) per-sample losses */
    float *dx, *dz, *dt;                /* (N, C, HW) */
    unsigned long long *segs;           /* weight segments (device offset, count) */
    int nsegs;
    float *partials;                    /* (nsegs * L2_CHUNKS) */
    float *loss;                        /* (4) */
    void *ws;
    size_t ws_size;
    float *h_in, *h_pt, *h_vt, *h_loss; /* pinned */
    unsigned long long *h_segs;         /* pinned */
    conv_shape conv[CONV_SHAPES];
};

struct nn_ctx {
    nn_config_t cfg;
    size_t nparams;             /* host floats */
    size_t dparams;             /* device floats (aligned layout) */
    size_t doff[MAX_TENSORS];   /* device offset of each tensor */
    nn_layout_t D;              /* head offsets in the device layout (blocks: see blk_*) */
    int device, max_batch, nbuckets;
    int M, HW, P, C, B, Hp, Hv, Vh;
    int K;                      /* policy outputs; forward uses channel 0 */
    bool tf32;                  /* training convs may use TF32 tensor cores */

    cudaStream_t stream;
    cudnnHandle_t dnn;
    cublasHandle_t blas;
    void *blas_ws;

    float *params;              /* (dparams) fp32 master weights */
    float *mom;                 /* (dparams) Nesterov momentum */
    /* inference (NHWC bf16) */
    bf16 *w_in;                 /* (C, 3, 3, 8) */
    bf16 *w_trunk;              /* B x 2 x wstride, each (C, 3, 3, C) */
    size_t wstride;             /* bf16 elements per trunk filter, 256-byte aligned */
    bf16 *w_pol1, *w_val1;      /* (Hp, C), (Hv, C) */
    bool weights_dirty;         /* bf16 copies stale */
    float *in;                  /* (N, P, HW) */
    bf16 *x8;                   /* (N, HW, 8) */
    float *mask, *legal;        /* (N, HW) */
    bf16 *x, *t, *y;            /* (N, HW, C) */
    float *head;                /* (N * HW, max(Hp, Hv)) */
    float *plog;                /* (N, HW) */
    float *pooled, *vh, *vl;    /* (N, Hv), (N, Vh), (N, 3) */
    float *policy, *value;      /* (N, HW), (N, 3) */
    float *h_in, *h_policy, *h_value;   /* pinned */
    void *ws;
    size_t ws_size;
    infer_desc inf;
    fwd_choice *alg_in, *alg_trunk;     /* [nbuckets] */
    cudaGraphExec_t *graphs;            /* [nbuckets] */
    unsigned char *uses;                /* [nbuckets] */
    bool graphs_on;

    train_state *tr;            /* NULL until the first training call */
};

/* Device offsets of block b's tensors. */
static size_t blk_w1(const nn_ctx *c, int b) { return c->doff[2 + 4 * b]; }
static size_t blk_b1(const nn_ctx *c, int b) { return c->doff[2 + 4 * b + 1]; }
static size_t blk_w2(const nn_ctx *c, int b) { return c->doff[2 + 4 * b + 2]; }
static size_t blk_b2(const nn_ctx *c, int b) { return c->doff[2 + 4 * b + 3]; }

/* The aligned device layout of cfg into c->doff, c->D, c->dparams. */
static void dev_layout_init(nn_ctx *c)
{
    c->dparams = nn_cuda_dev_layout(&c->cfg, c->doff);
    const size_t *h = c->doff + 2 + 4 * c->cfg.blocks;
    nn_layout_t *D = &c->D;
    memset(D, 0, sizeof *D);
    D->in_w = c->doff[0];
    D->in_b = c->doff[1];
    D->pol_w1 = h[0];
    D->pol_b1 = h[1];
    D->pol_w2 = h[2];
    D->pol_b2 = h[3];
    D->val_w1 = h[4];
    D->val_b1 = h[5];
    D->val_fc1_w = h[6];
    D->val_fc1_b = h[7];
    D->val_fc2_w = h[8];
    D->val_fc2_b = h[9];
    D->total = c->dparams;
}

/* Copy a flat host buffer (host layout) to the device layout, or back; on
 * the context's stream, synchronised. The upload returns its first error
 * (create reports it; set_weights stops on it). */
static cudaError_t params_upload(nn_ctx *c, float *dev, const float *host)
{
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < nn_param_tensors(&c->cfg) && e == cudaSuccess; i++) {
        nn_tensor_info_t ti = nn_param_tensor(&c->cfg, i);
        e = cudaMemcpyAsync(dev + c->doff[i], host + ti.offset, ti.count * sizeof(float),
                            cudaMemcpyHostToDevice, c->stream);
    }
    cudaError_t s = cudaStreamSynchronize(c->stream);
    return e != cudaSuccess ? e : s;
}
static void params_download(nn_ctx *c, float *host, const float *dev)
{
    for (int i = 0; i < nn_param_tensors(&c->cfg); i++) {
        nn_tensor_info_t ti = nn_param_tensor(&c->cfg, i);
        CUDA_CHECK(cudaMemcpyAsync(host + ti.offset, dev + c->doff[i], ti.count * sizeof(float),
                                   cudaMemcpyDeviceToHost, c->stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(c->stream));
}

/* Config rules of this backend, checked before touching a device. */
static int cfg_rules(const nn_config_t *cfg, char *err, size_t errlen)
{
    if (nn_config_check(cfg, err, errlen) != 0)
        return -1;
    if (cfg->channels % 8 != 0) {
        snprintf(err, errlen,
                 "cuda backend needs channels divisible by 8 (tensor cores), got %d",
                 cfg->channels);
        return -1;
    }
    if (cfg->in_planes > 8) {
        snprintf(err, errlen, "cuda backend takes at most 8 input planes, got %d",
                 cfg->in_planes);
        return -1;
    }
    return 0;
}

/* ---- descriptors (usable without a device) ---- */

static cudnnStatus_t set_nhwc_bf16(cudnnTensorDescriptor_t d, int n, int ch, int M)
{
    return cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, n, ch, M, M);
}
static cudnnStatus_t set_nchw_f32(cudnnTensorDescriptor_t d, int n, int ch, int M)
{
    return cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, ch, M, M);
}

/* Destroy *d when set and clear it: one overload per descriptor kind. */
static void desc_destroy(cudnnTensorDescriptor_t *d)
{
    if (*d)
        cudnnDestroyTensorDescriptor(*d);
    *d = NULL;
}
static void desc_destroy(cudnnFilterDescriptor_t *d)
{
    if (*d)
        cudnnDestroyFilterDescriptor(*d);
    *d = NULL;
}
static void desc_destroy(cudnnConvolutionDescriptor_t *d)
{
    if (*d)
        cudnnDestroyConvolutionDescriptor(*d);
    *d = NULL;
}

/* Point d's activations at batch n of C channels on M x M boards. */
static cudnnStatus_t infer_desc_batch(infer_desc *d, int C, int n, int M)
{
    cudnnStatus_t st = set_nhwc_bf16(d->xd8, n, 8, M);
    return st ? st : set_nhwc_bf16(d->xdc, n, C, M);
}

/* Create d's descriptors for C channels and batch n on M x M boards. A
 * failure leaves what was created for infer_desc_free. */
static cudnnStatus_t infer_desc_init(infer_desc *d, int C, int n, int M)
{
    cudnnStatus_t st;
    if ((st = cudnnCreateTensorDescriptor(&d->xd8)) ||
        (st = cudnnCreateTensorDescriptor(&d->xdc)) ||
        (st = cudnnCreateFilterDescriptor(&d->wd_in)) ||
        (st = cudnnCreateFilterDescriptor(&d->wd_trunk)) ||
        (st = cudnnCreateConvolutionDescriptor(&d->cd3)) ||
        (st = infer_desc_batch(d, C, n, M)) ||
        (st = cudnnSetFilter4dDescriptor(d->wd_in, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NHWC, C, 8,
                                         3, 3)) ||
        (st = cudnnSetFilter4dDescriptor(d->wd_trunk, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NHWC, C,
                                         C, 3, 3)) ||
        (st = cudnnSetConvolution2dDescriptor(d->cd3, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT)))
        return st;
    return cudnnSetConvolutionMathType(d->cd3, CUDNN_TENSOR_OP_MATH);
}

static void infer_desc_free(infer_desc *d)
{
    desc_destroy(&d->xd8);
    desc_destroy(&d->xdc);
    desc_destroy(&d->wd_in);
    desc_destroy(&d->wd_trunk);
    desc_destroy(&d->cd3);
}

static const int conv_k[CONV_SHAPES] = {3, 3, 1, 1, 1};
static void conv_dims(const nn_config_t *cfg, int s, int *cin, int *cout)
{
    switch (s) {
    case CONV_IN: *cin = cfg->in_planes; *cout = cfg->channels; break;
    case CONV_TRUNK: *cin = cfg->channels; *cout = cfg->channels; break;
    case CONV_P1: *cin = cfg->channels; *cout = cfg->policy_head; break;
    case CONV_P2: *cin = cfg->policy_head; *cout = cfg->policy_outputs; break;
    default: *cin = cfg->channels; *cout = cfg->value_head; break;
    }
}

/* Create the NCHW fp32 descriptors of shape s. */
static cudnnStatus_t conv_shape_init(conv_shape *cs, const nn_config_t *cfg, int s)
{
    cudnnStatus_t st;
    conv_dims(cfg, s, &cs->cin, &cs->cout);
    cs->k = conv_k[s];
    int pad = cs->k / 2;
    if ((st = cudnnCreateFilterDescriptor(&cs->wd)) ||
        (st = cudnnCreateConvolutionDescriptor(&cs->cd)) ||
        (st = cudnnCreateTensorDescriptor(&cs->xd)) ||
        (st = cudnnCreateTensorDescriptor(&cs->yd)))
        return st;
    if ((st = cudnnSetFilter4dDescriptor(cs->wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, cs->cout,
                                         cs->cin, cs->k, cs->k)) ||
        (st = cudnnSetConvolution2dDescriptor(cs->cd, pad, pad, 1, 1, 1, 1,
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)))
        return st;
    return CUDNN_STATUS_SUCCESS;
}

static void conv_shape_free(conv_shape *cs)
{
    desc_destroy(&cs->wd);
    desc_destroy(&cs->cd);
    desc_destroy(&cs->xd);
    desc_destroy(&cs->yd);
    free(cs->choice);
    memset(cs, 0, sizeof *cs);
}

static cudnnStatus_t conv_shape_batch(conv_shape *cs, int n, int M)
{
    cudnnStatus_t st = set_nchw_f32(cs->xd, n, cs->cin, M);
    return st ? st : set_nchw_f32(cs->yd, n, cs->cout, M);
}

/* Output dims of a convolution must be (n, cout, M, M). */
static int check_out_dims(cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t xd,
                          cudnnFilterDescriptor_t wd, int n, int cout, int M, const char *what,
                          char *err, size_t errlen)
{
    int on, oc, oh, ow;
    cudnnStatus_t st = cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &oc, &oh, &ow);
    if (st != CUDNN_STATUS_SUCCESS) {
        snprintf(err, errlen, "%s: cudnnGetConvolution2dForwardOutputDim: %s", what,
                 cudnnGetErrorString(st));
        return -1;
    }
    if (on != n || oc != cout || oh != M || ow != M) {
        snprintf(err, errlen, "%s: output %dx%dx%dx%d, expected %dx%dx%dx%d", what, on, oc, oh,
                 ow, n, cout, M, M);
        return -1;
    }
    return 0;
}

static int cu_check_shapes(const nn_config_t *cfg, int n, char *err, size_t errlen)
{
    if (cfg_rules(cfg, err, errlen) != 0)
        return -1;
    if (n < 1) {
        snprintf(err, errlen, "batch size must be at least 1, got %d", n);
        return -1;
    }
    int M = cfg->board_max, C = cfg->channels, rc = -1;
    cudnnStatus_t st;
    infer_desc d = {};
    conv_shape cs[CONV_SHAPES];
    memset(cs, 0, sizeof cs);
    if ((st = infer_desc_init(&d, C, n, M))) {
        snprintf(err, errlen, "inference descriptors: %s", cudnnGetErrorString(st));
        goto out;
    }
    if (check_out_dims(d.cd3, d.xd8, d.wd_in, n, C, M, "bf16 input conv", err, errlen) ||
        check_out_dims(d.cd3, d.xdc, d.wd_trunk, n, C, M, "bf16 trunk conv", err, errlen))
        goto out;
    for (int s = 0; s < CONV_SHAPES; s++) {
        static const char *const names[CONV_SHAPES] = {"input conv", "trunk conv",
                                                       "policy conv1", "policy conv2",
                                                       "value conv"};
        if ((st = conv_shape_init(&cs[s], cfg, s)) || (st = conv_shape_batch(&cs[s], n, M))) {
            snprintf(err, errlen, "%s descriptors: %s", names[s], cudnnGetErrorString(st));
            goto out;
        }
        if (check_out_dims(cs[s].cd, cs[s].xd, cs[s].wd, n, cs[s].cout, M, names[s], err,
                           errlen))
            goto out;
    }
    rc = 0;
out:
    for (int s = 0; s < CONV_SHAPES; s++)
        conv_shape_free(&cs[s]);
    infer_desc_free(&d);
    return rc;
}

/* ---- algorithm choice ---- */

/* The heuristic's candidates in its order; the first that fits the
 * workspace and runs (returns success on the real buffers) is kept, so a
 * candidate the heuristic ranks first but this cuDNN build cannot execute
 * does not strand the context. `force_math` >= 0 replaces the candidate's
 * math type (CUDNN_FMA_MATH: no TF32); a candidate that would convert fp32
 * operands to fp16 runs as plain tensor-op math (TF32 for fp32 data, as
 * the tolerances allow). Never called during graph capture.
 * get(perf, cap, &got) queries; run(algo) executes. */
template <typename Perf, typename Algo, typename Get, typename Run>
static bool try_algos(Get get, Run run, cudnnConvolutionDescriptor_t cd, size_t ws,
                      int force_math, Algo *algo, cudnnMathType_t *math)
{
    Perf perf[16];
    int got = 0;
    if (get(perf, 16, &got) != CUDNN_STATUS_SUCCESS)
        return false;
    for (int i = 0; i < got; i++) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > ws)
            continue;
        cudnnMathType_t m = force_math >= 0 ? (cudnnMathType_t)force_math : perf[i].mathType;
        if (m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
            m = CUDNN_TENSOR_OP_MATH;   /* never fp32 -> fp16 inside a conv */
        if (cudnnSetConvolutionMathType(cd, m) != CUDNN_STATUS_SUCCESS)
            continue;
        if (run(perf[i].algo) == CUDNN_STATUS_SUCCESS) {
            *algo = perf[i].algo;
            *math = m;
            return true;
        }
        (void)cudaGetLastError();   /* a refused launch must not fail a later check */
    }
    return false;
}

/* Workspace of the first feasible of got candidates (0 when none). */
template <typename Perf> static size_t first_feasible_memory(const Perf *p, int got)
{
    for (int i = 0; i < got; i++)
        if (p[i].status == CUDNN_STATUS_SUCCESS)
            return p[i].memory;
    return 0;
}

/* Largest workspace the heuristics' first feasible candidates want for
 * these descriptors (forward only when bwd is false). */
static size_t ws_need(cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd,
                      cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t yd, bool bwd)
{
    size_t need = 0, w;
    int got = 0;
    cudnnConvolutionFwdAlgoPerf_t pf[16];
    if (cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, 16, &got, pf) == 0)
        need = first_feasible_memory(pf, got);
    if (!bwd)
        return need;
    cudnnConvolutionBwdDataAlgoPerf_t pd[16];
    if (cudnnGetConvolutionBackwardDataAlgorithm_v7(h, wd, yd, cd, xd, 16, &got, pd) == 0 &&
        (w = first_feasible_memory(pd, got)) > need)
        need = w;
    cudnnConvolutionBwdFilterAlgoPerf_t pw[16];
    if (cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, xd, yd, cd, wd, 16, &got, pw) == 0 &&
        (w = first_feasible_memory(pw, got)) > need)
        need = w;
    return need;
}

static bool pick_fwd(cudnnHandle_t h, cudnnTensorDescriptor_t xd, const void *x,
                     cudnnFilterDescriptor_t wd, const void *w, cudnnConvolutionDescriptor_t cd,
                     cudnnTensorDescriptor_t yd, void *y, void *ws, size_t wss, int force_math,
                     cudnnConvolutionFwdAlgo_t *algo, cudnnMathType_t *math)
{
    const float one = 1.0f, zero = 0.0f;
    return try_algos<cudnnConvolutionFwdAlgoPerf_t>(
        [&](cudnnConvolutionFwdAlgoPerf_t *p, int cap, int *got) {
            return cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, cap, got, p);
        },
        [&](cudnnConvolutionFwdAlgo_t a) {
            return cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, a, ws, wss, &zero, yd, y);
        },
        cd, wss, force_math, algo, math);
}

/* ---- inference forward ---- */

static void conv_bf16(nn_ctx *c, const fwd_choice *a, cudnnTensorDescriptor_t xd, const bf16 *x,
                      cudnnFilterDescriptor_t wd, const bf16 *w, bf16 *y)
{
    const float one = 1.0f, zero = 0.0f;
    CUDNN_CHECK(cudnnSetConvolutionMathType(c->inf.cd3, a->math));
    CUDNN_CHECK(cudnnConvolutionForward(c->dnn, &one, xd, x, wd, w, c->inf.cd3, a->algo, c->ws,
                                        c->ws_size, &zero, c->inf.xdc, y));
}

/* Inference algorithms of every bucket, chosen in create: 0, or -1 with err. */
static int choose_fwd_all(nn_ctx *c, char *err, size_t errlen)
{
    for (int bi = 0, n = 1;; bi++, n = nn_cuda_bucket_next(n)) {
        if (n > c->max_batch)
            n = c->max_batch;
        CUDNN_CHECK(infer_desc_batch(&c->inf, c->C, n, c->M));
        fwd_choice *a = &c->alg_in[bi], *b = &c->alg_trunk[bi];
        /* no blocks: no trunk conv to choose (and no trunk weights to run it on) */
        const infer_desc *d = &c->inf;
        if (!pick_fwd(c->dnn, d->xd8, c->x8, d->wd_in, c->w_in, d->cd3, d->xdc, c->y, c->ws,
                      c->ws_size, -1, &a->algo, &a->math) ||
            (c->B > 0 && !pick_fwd(c->dnn, d->xdc, c->x, d->wd_trunk, c->w_trunk, d->cd3, d->xdc,
                                   c->y, c->ws, c->ws_size, -1, &b->algo, &b->math))) {
            snprintf(err, errlen,
                     "cuda:%d: no cuDNN bf16 convolution runs at batch %d within %zu MiB of "
                     "workspace",
                     c->device, n, c->ws_size >> 20);
            return -1;
        }
        a->set = b->set = true;
        if (n == c->max_batch)
            return 0;
    }
}

static void bias_act_bf16(nn_ctx *c, int n, const bf16 *y, size_t bias_off, const bf16 *res,
                          bf16 *out)
{
    size_t total = (size_t)n * c->HW * c->C;
    k_bias_act<bf16><<<blocks_for(total, THREADS), THREADS, 0, c->stream>>>(
        y, c->params + bias_off, res, c->mask, out, total, c->C, c->HW, 1, 1);
    LAUNCH_CHECK();
}

/* 1x1 conv of the NHWC bf16 trunk output: out (rows, K) fp32 = x (rows, C) W^T,
 * W (K, C) bf16. */
static void head_gemm(nn_ctx *c, int rows, const bf16 *w, int K, float *out)
{
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasGemmEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, K, rows, c->C, &one, w,
                              CUDA_R_16BF, c->C, c->x, CUDA_R_16BF, c->C, &zero, out,
                              CUDA_R_32F, K, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* fp32 fully connected layer on rows: out (n, K) = in (n, J) W^T, W (K, J) row-major. */
static void fc_forward(cublasHandle_t h, int n, const float *in, int J, const float *w, int K,
                       float *out)
{
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, K, n, J, &one, w, J, in, J, &zero, out,
                             K));
}

/* The value head's FC layers on the stream: pooled (n, Hv) -> h1 (n, Vh)
 * = relu(fc1) -> vl (n, 3) logits (fc2 without its bias). */
static void value_fc(nn_ctx *c, int n, const float *pooled, float *h1, float *vl)
{
    const nn_layout_t *D = &c->D;
    size_t total = (size_t)n * c->Vh;
    fc_forward(c->blas, n, pooled, c->Hv, c->params + D->val_fc1_w, c->Vh, h1);
    k_bias_act<float><<<blocks_for(total, THREADS), THREADS, 0, c->stream>>>(
        h1, c->params + D->val_fc1_b, NULL, NULL, h1, total, c->Vh, 1, 0, 1);
    LAUNCH_CHECK();
    fc_forward(c->blas, n, h1, c->Vh, c->params + D->val_fc2_w, NN_VALUE_OUTPUTS, vl);
}

/* The whole forward for bucket bi of n rows, from the pinned input to the
 * pinned outputs, enqueued on the stream (also what a CUDA graph captures). */
static void fwd_enqueue(nn_ctx *c, int bi, int n)
{
    cudaStream_t s = c->stream;
    int HW = c->HW, rows = n * HW;
    const nn_layout_t *D = &c->D;
    CUDA_CHECK(cudaMemcpyAsync(c->in, c->h_in, (size_t)n * c->P * HW * sizeof(float),
                               cudaMemcpyHostToDevice, s));
    k_prep<<<blocks_for(rows, THREADS), THREADS, 0, s>>>(c->in, n, c->P, HW, c->x8, c->mask,
                                                         c->legal);
    LAUNCH_CHECK();
    CUDNN_CHECK(infer_desc_batch(&c->inf, c->C, n, c->M));
    conv_bf16(c, &c->alg_in[bi], c->inf.xd8, c->x8, c->inf.wd_in, c->w_in, c->y);
    bias_act_bf16(c, n, c->y, D->in_b, NULL, c->x);
    for (int b = 0; b < c->B; b++) {
        const bf16 *w1 = c->w_trunk + (size_t)(2 * b) * c->wstride, *w2 = w1 + c->wstride;
        conv_bf16(c, &c->alg_trunk[bi], c->inf.xdc, c->x, c->inf.wd_trunk, w1, c->y);
        bias_act_bf16(c, n, c->y, blk_b1(c, b), NULL, c->t);
        conv_bf16(c, &c->alg_trunk[bi], c->inf.xdc, c->t, c->inf.wd_trunk, w2, c->y);
        bias_act_bf16(c, n, c->y, blk_b2(c, b), c->x, c->x);
    }
    /* policy head */
    head_gemm(c, rows, c->w_pol1, c->Hp, c->head);
    k_policy_logits<<<blocks_for(rows, THREADS), THREADS, 0, s>>>(
        c->head, c->params + D->pol_b1, c->params + D->pol_w2, c->params + D->pol_b2, c->Hp,
        rows, c->plog);
    LAUNCH_CHECK();
    k_policy_softmax<<<n, THREADS, 0, s>>>(c->plog, c->legal, HW, 1, c->policy, NULL, 0.0f,
                                           policy_weights_of(NULL), NULL, NULL);
    LAUNCH_CHECK();
    /* value head */
    head_gemm(c, rows, c->w_val1, c->Hv, c->head);
    k_value_pool_rows<<<n, 128, 0, s>>>(c->head, c->params + D->val_b1, c->mask, HW, c->Hv,
                                        c->pooled);
    LAUNCH_CHECK();
    value_fc(c, n, c->pooled, c->vh, c->vl);
    k_value_softmax<<<blocks_for(n, 128), 128, 0, s>>>(c->vl, c->params + D->val_fc2_b, n,
                                                       c->value, NULL, 0.0f, NULL, NULL);
    LAUNCH_CHECK();
    CUDA_CHECK(cudaMemcpyAsync(c->h_policy, c->policy, (size_t)n * HW * sizeof(float),
                               cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaMemcpyAsync(c->h_value, c->value, (size_t)n * NN_VALUE_OUTPUTS * sizeof(float),
                               cudaMemcpyDeviceToHost, s));
}

/* Refresh the bf16 conv weights from the fp32 master copy. */
static void convert_weights(nn_ctx *c)
{
    cudaStream_t s = c->stream;
    size_t n = (size_t)c->C * 9 * 8;
    k_filter_krsc<<<blocks_for(n, THREADS), THREADS, 0, s>>>(c->params + c->D.in_w, c->C, c->P,
                                                             9, 8, c->w_in);
    LAUNCH_CHECK();
    size_t wsz = (size_t)c->C * 9 * c->C;
    for (int b = 0; b < c->B; b++) {
        k_filter_krsc<<<blocks_for(wsz, THREADS), THREADS, 0, s>>>(
            c->params + blk_w1(c, b), c->C, c->C, 9, c->C, c->w_trunk + (size_t)(2 * b) * c->wstride);
        LAUNCH_CHECK();
        k_filter_krsc<<<blocks_for(wsz, THREADS), THREADS, 0, s>>>(
            c->params + blk_w2(c, b), c->C, c->C, 9, c->C,
            c->w_trunk + (size_t)(2 * b + 1) * c->wstride);
        LAUNCH_CHECK();
    }
    size_t np = (size_t)c->Hp * c->C, nv = (size_t)c->Hv * c->C;
    k_filter_krsc<<<blocks_for(np, THREADS), THREADS, 0, s>>>(c->params + c->D.pol_w1, c->Hp,
                                                              c->C, 1, c->C, c->w_pol1);
    LAUNCH_CHECK();
    k_filter_krsc<<<blocks_for(nv, THREADS), THREADS, 0, s>>>(c->params + c->D.val_w1, c->Hv,
                                                              c->C, 1, c->C, c->w_val1);
    LAUNCH_CHECK();
    c->weights_dirty = false;
}

/* Capture the forward of bucket bi (n rows) into a graph; false (graphs
 * off for this context, one line on stderr) when capture does not work. */
static bool capture_graph(nn_ctx *c, int bi, int n)
{
    soft_err se;
    se.failed = false;
    se.what[0] = '\0';
    cudaGraph_t g = NULL;
    t_soft = &se;
    cudaError_t e = cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal);
    if (e == cudaSuccess) {
        fwd_enqueue(c, bi, n);
        e = cudaStreamEndCapture(c->stream, &g);
    }
    t_soft = nullptr;
    if (e == cudaSuccess && !se.failed)
        e = cudaGraphInstantiate(&c->graphs[bi], g, 0);
    if (g)
        cudaGraphDestroy(g);
    if (e != cudaSuccess || se.failed) {
        fprintf(stderr, "nn_cuda: CUDA graph capture failed (%s); running without graphs\n",
                se.failed ? se.what : cudaGetErrorName(e));
        (void)cudaGetLastError();
        c->graphs[bi] = NULL;
        c->graphs_on = false;
        return false;
    }
    return true;
}

/* Runs at the bucket size of n: rows n..bucket-1 of the pinned input are
 * zeros or an earlier call's rows; their outputs are not returned. */
static void cuda_forward(nn_ctx_t *c, const float *in, int n, float *policy, float *value)
{
    assert(n >= 0 && n <= c->max_batch);
    if (n == 0)
        return;
    CUDA_CHECK(cudaSetDevice(c->device));
    int nb = nn_cuda_bucket(n, c->max_batch), bi = nn_cuda_bucket_index(nb, c->max_batch);
    memcpy(c->h_in, in, (size_t)n * c->P * c->HW * sizeof(float));
    if (c->weights_dirty)
        convert_weights(c);
    if (c->graphs_on && !c->graphs[bi] && c->uses[bi] >= 1)
        capture_graph(c, bi, nb);
    if (c->uses[bi] < 255)
        c->uses[bi]++;
    if (c->graphs_on && c->graphs[bi])
        CUDA_CHECK(cudaGraphLaunch(c->graphs[bi], c->stream));
    else
        fwd_enqueue(c, bi, nb);
    CUDA_CHECK(cudaStreamSynchronize(c->stream));
    memcpy(policy, c->h_policy, (size_t)n * c->HW * sizeof(float));
    memcpy(value, c->h_value, (size_t)n * NN_VALUE_OUTPUTS * sizeof(float));
}

/* ---- training ---- */

static void conv_fwd_f32(nn_ctx *c, conv_shape *cs, int bi, int n, const float *x, size_t w_off,
                         float *y)
{
    train_state *tr = c->tr;
    const float one = 1.0f, zero = 0.0f;
    const bwd_choice *a = &cs->choice[bi];
    CUDNN_CHECK(conv_shape_batch(cs, n, c->M));
    CUDNN_CHECK(cudnnSetConvolutionMathType(cs->cd, a->fwd_math));
    CUDNN_CHECK(cudnnConvolutionForward(c->dnn, &one, cs->xd, x, cs->wd, c->params + w_off,
                                        cs->cd, a->fwd, tr->ws, tr->ws_size, &zero, cs->yd, y));
}

/* dx (+)= conv^T(dy): beta 0 overwrites dx, 1 accumulates. */
static void conv_bwd_data(nn_ctx *c, conv_shape *cs, int bi, int n, const float *dy,
                          size_t w_off, float beta, float *dx)
{
    train_state *tr = c->tr;
    const float one = 1.0f;
    const bwd_choice *a = &cs->choice[bi];
    CUDNN_CHECK(conv_shape_batch(cs, n, c->M));
    CUDNN_CHECK(cudnnSetConvolutionMathType(cs->cd, a->data_math));
    CUDNN_CHECK(cudnnConvolutionBackwardData(c->dnn, &one, cs->wd, c->params + w_off, cs->yd,
                                             dy, cs->cd, a->data, tr->ws, tr->ws_size, &beta,
                                             cs->xd, dx));
}

/* grad[w_off...] = dL/dw from x and dy. */
static void conv_bwd_filter(nn_ctx *c, conv_shape *cs, int bi, int n, const float *x,
                            const float *dy, size_t w_off)
{
    train_state *tr = c->tr;
    const float one = 1.0f, zero = 0.0f;
    const bwd_choice *a = &cs->choice[bi];
    CUDNN_CHECK(conv_shape_batch(cs, n, c->M));
    CUDNN_CHECK(cudnnSetConvolutionMathType(cs->cd, a->filt_math));
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(c->dnn, &one, cs->xd, x, cs->yd, dy, cs->cd,
                                               a->filt, tr->ws, tr->ws_size, &zero, cs->wd,
                                               tr->grad + w_off));
}

/* Training algorithms for bucket bi (n rows), on first use of that bucket,
 * before the batch is copied in (the trial runs write the x, y and grad
 * buffers the pass then overwrites). 0, or -1 with err. */
static int choose_train(nn_ctx *c, int bi, int n, char *err, size_t errlen)
{
    train_state *tr = c->tr;
    float *xB = tr->xs + (size_t)c->B * nn_cuda_align((size_t)c->max_batch * c->C * c->HW);
    /* x, y and weight offset each shape runs on in the pass */
    float *xs[CONV_SHAPES] = {tr->in, tr->xs, xB, tr->ph, xB};
    float *ys[CONV_SHAPES] = {tr->tmp, tr->tmp, tr->ph, tr->plog, tr->vg};
    size_t ws[CONV_SHAPES] = {c->D.in_w, c->B ? blk_w1(c, 0) : c->D.in_w, c->D.pol_w1,
                              c->D.pol_w2, c->D.val_w1};
    static const char *const names[CONV_SHAPES] = {"input", "trunk", "policy 1x1",
                                                   "policy 1x1 (2)", "value 1x1"};
    int force = c->tf32 ? -1 : (int)CUDNN_FMA_MATH;
    for (int s = 0; s < CONV_SHAPES; s++) {
        if (s == CONV_TRUNK && c->B == 0)
            continue;
        conv_shape *cs = &tr->conv[s];
        bwd_choice *a = &cs->choice[bi];
        if (a->set)
            continue;
        CUDNN_CHECK(conv_shape_batch(cs, n, c->M));
        cudnnHandle_t h = c->dnn;
        const float one = 1.0f, zero = 0.0f;
        float *x = xs[s], *y = ys[s], *w = c->params + ws[s], *g = tr->grad + ws[s];
        const char *what = NULL;
        if (!pick_fwd(h, cs->xd, x, cs->wd, w, cs->cd, cs->yd, y, tr->ws, tr->ws_size, force,
                      &a->fwd, &a->fwd_math))
            what = "forward";
        else if (!try_algos<cudnnConvolutionBwdDataAlgoPerf_t>(
                     [&](cudnnConvolutionBwdDataAlgoPerf_t *p, int cap, int *got) {
                         return cudnnGetConvolutionBackwardDataAlgorithm_v7(
                             h, cs->wd, cs->yd, cs->cd, cs->xd, cap, got, p);
                     },
                     [&](cudnnConvolutionBwdDataAlgo_t al) {
                         return cudnnConvolutionBackwardData(h, &one, cs->wd, w, cs->yd, y,
                                                             cs->cd, al, tr->ws, tr->ws_size,
                                                             &zero, cs->xd, x);
                     },
                     cs->cd, tr->ws_size, force, &a->data, &a->data_math))
            what = "backward data";
        else if (!try_algos<cudnnConvolutionBwdFilterAlgoPerf_t>(
                     [&](cudnnConvolutionBwdFilterAlgoPerf_t *p, int cap, int *got) {
                         return cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                             h, cs->xd, cs->yd, cs->cd, cs->wd, cap, got, p);
                     },
                     [&](cudnnConvolutionBwdFilterAlgo_t al) {
                         return cudnnConvolutionBackwardFilter(h, &one, cs->xd, x, cs->yd, y,
                                                               cs->cd, al, tr->ws, tr->ws_size,
                                                               &zero, cs->wd, g);
                     },
                     cs->cd, tr->ws_size, force, &a->filt, &a->filt_math))
            what = "backward filter";
        if (what) {
            snprintf(err, errlen,
                     "cuda:%d: no cuDNN fp32 %s algorithm runs for the %s conv at batch %d "
                     "within %zu MiB of workspace",
                     c->device, what, names[s], n, tr->ws_size >> 20);
            return -1;
        }
        a->set = true;
    }
    return 0;
}

static void train_free(train_state *tr)
{
    if (!tr)
        return;
    float **dev[] = {&tr->grad, &tr->in, &tr->ptarget, &tr->vtarget, &tr->mask,
                     &tr->legal, &tr->count, &tr->xs, &tr->ts, &tr->tmp, &tr->ph, &tr->dph,
                     &tr->vg, &tr->dvg, &tr->plog, &tr->dplog, &tr->pooled, &tr->dpooled,
                     &tr->h1, &tr->dh1, &tr->vl, &tr->dvl, &tr->lp, &tr->lv, &tr->dx, &tr->dz,
                     &tr->dt, &tr->partials, &tr->loss};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (*dev[i])
            cudaFree(*dev[i]);
    if (tr->segs)
        cudaFree(tr->segs);
    if (tr->ws)
        cudaFree(tr->ws);
    float **host[] = {&tr->h_in, &tr->h_pt, &tr->h_vt, &tr->h_loss};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        if (*host[i])
            cudaFreeHost(*host[i]);
    if (tr->h_segs)
        cudaFreeHost(tr->h_segs);
    for (int s = 0; s < CONV_SHAPES; s++)
        conv_shape_free(&tr->conv[s]);
    free(tr);
}

/* For train_init: a failure becomes a message and a jump to `fail`. */
#define TRY_ALLOC(call, bytes, what)                                                       \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            (void)cudaGetLastError();                                                      \
            snprintf(err, errlen,                                                          \
                     "cuda:%d: cannot allocate %.1f MiB for training (%s, batch %d): %s",  \
                     c->device, (double)(bytes) / (1 << 20), what, c->max_batch,           \
                     cudaGetErrorName(e_));                                                \
            goto fail;                                                                     \
        }                                                                                  \
    } while (0)
#define DALLOC(ptr, floats, what)                                                          \
    TRY_ALLOC(cudaMalloc((void **)&(ptr), ((size_t)(floats) + 1) * sizeof(float)),          \
              ((size_t)(floats) + 1) * sizeof(float), what)
#define HALLOC(ptr, floats, what)                                                          \
    TRY_ALLOC(cudaMallocHost((void **)&(ptr), ((size_t)(floats) + 1) * sizeof(float)),      \
              ((size_t)(floats) + 1) * sizeof(float), what)

/* First training call: every training buffer, sized for max_batch. 0, or
 * -1 with err set and nothing left allocated (the context still runs
 * forward; a later training call tries again). */
static int train_init(nn_ctx *c, char *err, size_t errlen)
{
    train_state *tr = (train_state *)calloc(1, sizeof *tr);
    if (!tr) {
        snprintf(err, errlen, "cuda:%d: out of host memory", c->device);
        return -1;
    }
    c->tr = tr;
    size_t N = (size_t)c->max_batch, HW = (size_t)c->HW, C = (size_t)c->C, K = (size_t)c->K;
    size_t act = N * C * HW, stride = nn_cuda_align(act);
    DALLOC(tr->grad, c->dparams, "gradients");
    CUDA_CHECK(cudaMemsetAsync(tr->grad, 0, c->dparams * sizeof(float), c->stream));
    DALLOC(tr->in, N * c->P * HW, "input");
    DALLOC(tr->ptarget, N * K * HW, "policy target");
    DALLOC(tr->vtarget, N * NN_VALUE_OUTPUTS, "value target");
    DALLOC(tr->mask, N * HW, "mask");
    DALLOC(tr->legal, N * HW, "legal");
    DALLOC(tr->count, N, "count");
    DALLOC(tr->xs, (size_t)(c->B + 1) * stride, "block inputs");
    DALLOC(tr->ts, (size_t)(c->B ? c->B : 1) * stride, "block activations");
    DALLOC(tr->tmp, act, "conv output");
    DALLOC(tr->ph, N * c->Hp * HW, "policy head");
    DALLOC(tr->dph, N * c->Hp * HW, "policy head grad");
    DALLOC(tr->vg, N * c->Hv * HW, "value head");
    DALLOC(tr->dvg, N * c->Hv * HW, "value head grad");
    DALLOC(tr->plog, N * K * HW, "policy logits");
    DALLOC(tr->dplog, N * K * HW, "policy logits grad");
    DALLOC(tr->pooled, N * c->Hv, "pooled");
    DALLOC(tr->dpooled, N * c->Hv, "pooled grad");
    DALLOC(tr->h1, N * c->Vh, "value hidden");
    DALLOC(tr->dh1, N * c->Vh, "value hidden grad");
    DALLOC(tr->vl, N * NN_VALUE_OUTPUTS, "value logits");
    DALLOC(tr->dvl, N * NN_VALUE_OUTPUTS, "value logits grad");
    DALLOC(tr->lp, N * K, "policy loss");
    DALLOC(tr->lv, N, "value loss");
    DALLOC(tr->dx, act, "trunk grad");
    DALLOC(tr->dz, act, "trunk grad");
    DALLOC(tr->dt, act, "trunk grad");
    DALLOC(tr->loss, 6, "losses");
    /* every row starts as zeros: padding rows of a bucket stay finite */
    CUDA_CHECK(cudaMemsetAsync(tr->in, 0, N * c->P * HW * sizeof(float), c->stream));
    CUDA_CHECK(cudaMemsetAsync(tr->ptarget, 0, N * K * HW * sizeof(float), c->stream));
    CUDA_CHECK(cudaMemsetAsync(tr->vtarget, 0, N * NN_VALUE_OUTPUTS * sizeof(float), c->stream));

    {
        /* weight segments (device offsets) for the L2 term: the tensors the reference decays */
        int ns = 0;
        for (int i = 0; i < nn_param_tensors(&c->cfg); i++)
            ns += nn_param_tensor_is_weight(&c->cfg, i);
        size_t sb = sizeof(unsigned long long) * 2 * (size_t)ns;
        TRY_ALLOC(cudaMallocHost((void **)&tr->h_segs, sb), sb, "segments");
        TRY_ALLOC(cudaMalloc((void **)&tr->segs, sb), sb, "segments");
        ns = 0;
        for (int i = 0; i < nn_param_tensors(&c->cfg); i++) {
            if (!nn_param_tensor_is_weight(&c->cfg, i))
                continue;
            tr->h_segs[2 * ns] = c->doff[i];
            tr->h_segs[2 * ns + 1] = nn_param_tensor(&c->cfg, i).count;
            ns++;
        }
        tr->nsegs = ns;
        CUDA_CHECK(cudaMemcpyAsync(tr->segs, tr->h_segs, sb, cudaMemcpyHostToDevice, c->stream));
        DALLOC(tr->partials, (size_t)ns * L2_CHUNKS, "l2 partials");
    }

    HALLOC(tr->h_in, N * c->P * HW, "pinned input");
    HALLOC(tr->h_pt, N * K * HW, "pinned policy target");
    HALLOC(tr->h_vt, N * NN_VALUE_OUTPUTS, "pinned value target");
    HALLOC(tr->h_loss, 6, "pinned losses");

    {
        /* descriptors, and a workspace that fits the heuristics' first
         * choices at max_batch (at least 64 MiB, at most 1 GiB: a larger
         * ask falls to the next candidate) */
        size_t need = 64u << 20;
        int nb = c->nbuckets;
        for (int s = 0; s < CONV_SHAPES; s++) {
            conv_shape *cs = &tr->conv[s];
            cudnnStatus_t st = conv_shape_init(cs, &c->cfg, s);
            if (st == CUDNN_STATUS_SUCCESS)
                st = conv_shape_batch(cs, c->max_batch, c->M);
            if (st != CUDNN_STATUS_SUCCESS) {
                snprintf(err, errlen, "cuda:%d: training descriptors: %s", c->device,
                         cudnnGetErrorString(st));
                goto fail;
            }
            cs->choice = (bwd_choice *)calloc((size_t)nb, sizeof(bwd_choice));
            if (!cs->choice) {
                snprintf(err, errlen, "cuda:%d: out of host memory", c->device);
                goto fail;
            }
            size_t w = ws_need(c->dnn, cs->xd, cs->wd, cs->cd, cs->yd, true);
            need = w > need ? w : need;
        }
        if (need > (1024u << 20))
            need = 1024u << 20;
        TRY_ALLOC(cudaMalloc(&tr->ws, need), need, "cuDNN workspace");
        tr->ws_size = need;
    }
    CUDA_CHECK(cudaStreamSynchronize(c->stream));
    return 0;

fail:
    CUDA_CHECK(cudaStreamSynchronize(c->stream));
    train_free(tr);
    c->tr = NULL;
    return -1;
}
#undef HALLOC
#undef DALLOC
#undef TRY_ALLOC

/* Forward + backward at bucket bi (nb rows, n of them real; the rest are
 * zeros with zero targets, so they add nothing): losses into tr->loss
 * (device, means over n), grads into tr->grad. Inputs already in tr->in /
 * ptarget / vtarget. */
static void train_pass(nn_ctx *c, int bi, int nb, int n, float wd, policy_weights pw)
{
    train_state *tr = c->tr;
    cudaStream_t s = c->stream;
    const nn_layout_t *D = &c->D;
    int HW = c->HW, C = c->C, B = c->B;
    size_t act = (size_t)nb * C * HW, stride = nn_cuda_align((size_t)c->max_batch * C * HW);
    float scale = 1.0f / n;
    conv_shape *cin = &tr->conv[CONV_IN], *ctr = &tr->conv[CONV_TRUNK];
    conv_shape *cp1 = &tr->conv[CONV_P1], *cp2 = &tr->conv[CONV_P2], *cv1 = &tr->conv[CONV_V1];

    k_prep<<<blocks_for((size_t)nb * HW, THREADS), THREADS, 0, s>>>(tr->in, nb, c->P, HW, NULL,
                                                                     tr->mask, tr->legal);
    LAUNCH_CHECK();
    /* trunk */
    float *x0 = tr->xs;
    conv_fwd_f32(c, cin, bi, nb, tr->in, D->in_w, tr->tmp);
    k_bias_act<float><<<blocks_for(act, THREADS), THREADS, 0, s>>>(
        tr->tmp, c->params + D->in_b, NULL, tr->mask, x0, act, C, HW, 0, 1);
    LAUNCH_CHECK();
    for (int b = 0; b < B; b++) {
        float *xb = tr->xs + (size_t)b * stride, *xn = xb + stride, *tb = tr->ts + (size_t)b * stride;
        conv_fwd_f32(c, ctr, bi, nb, xb, blk_w1(c, b), tr->tmp);
        k_bias_act<float><<<blocks_for(act, THREADS), THREADS, 0, s>>>(
            tr->tmp, c->params + blk_b1(c, b), NULL, tr->mask, tb, act, C, HW, 0, 1);
        LAUNCH_CHECK();
        conv_fwd_f32(c, ctr, bi, nb, tb, blk_w2(c, b), tr->tmp);
        k_bias_act<float><<<blocks_for(act, THREADS), THREADS, 0, s>>>(
            tr->tmp, c->params + blk_b2(c, b), xb, tr->mask, xn, act, C, HW, 0, 1);
        LAUNCH_CHECK();
    }
    float *xB = tr->xs + (size_t)B * stride;
    /* policy head */
    size_t php = (size_t)nb * c->Hp * HW;
    conv_fwd_f32(c, cp1, bi, nb, xB, D->pol_w1, tr->ph);
    k_bias_act<float><<<blocks_for(php, THREADS), THREADS, 0, s>>>(
        tr->ph, c->params + D->pol_b1, NULL, tr->mask, tr->ph, php, c->Hp, HW, 0, 1);
    LAUNCH_CHECK();
    conv_fwd_f32(c, cp2, bi, nb, tr->ph, D->pol_w2, tr->plog);
    int K = c->K;
    size_t pl = (size_t)nb * K * HW;
    k_bias_act<float><<<blocks_for(pl, THREADS), THREADS, 0, s>>>(
        tr->plog, c->params + D->pol_b2, NULL, NULL, tr->plog, pl, K, HW, 0, 0);
    LAUNCH_CHECK();
    k_policy_softmax<<<nb * K, THREADS, 0, s>>>(tr->plog, tr->legal, HW, K, NULL, tr->ptarget,
                                                scale, pw, tr->dplog, tr->lp);
    LAUNCH_CHECK();
    /* value head */
    size_t vgp = (size_t)nb * c->Hv * HW;
    conv_fwd_f32(c, cv1, bi, nb, xB, D->val_w1, tr->vg);
    k_bias_act<float><<<blocks_for(vgp, THREADS), THREADS, 0, s>>>(
        tr->vg, c->params + D->val_b1, NULL, tr->mask, tr->vg, vgp, c->Hv, HW, 0, 1);
    LAUNCH_CHECK();
    k_value_pool_nchw<<<blocks_for((size_t)nb * c->Hv * 32, 128), 128, 0, s>>>(
        tr->vg, tr->mask, nb, HW, c->Hv, tr->pooled, tr->count);
    LAUNCH_CHECK();
    value_fc(c, nb, tr->pooled, tr->h1, tr->vl);
    size_t hv = (size_t)nb * c->Vh;
    k_value_softmax<<<blocks_for(nb, 128), 128, 0, s>>>(tr->vl, c->params + D->val_fc2_b, nb,
                                                        NULL, tr->vtarget, scale, tr->dvl, tr->lv);
    LAUNCH_CHECK();

    /* value head backward; FC: out (K x n) = W (K x J) in (J x n), column-major */
    const float one = 1.0f, zero = 0.0f;
    const int V = NN_VALUE_OUTPUTS;
    CUBLAS_CHECK(cublasSgemm(c->blas, CUBLAS_OP_N, CUBLAS_OP_T, c->Vh, V, nb, &one, tr->h1, c->Vh,
                             tr->dvl, V, &zero, tr->grad + D->val_fc2_w, c->Vh));
    k_bias_grad<<<V, THREADS, 0, s>>>(tr->dvl, nb, V, 1, tr->grad + D->val_fc2_b);
    LAUNCH_CHECK();
    CUBLAS_CHECK(cublasSgemm(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, c->Vh, nb, V, &one,
                             c->params + D->val_fc2_w, c->Vh, tr->dvl, V, &zero, tr->dh1,
                             c->Vh));
    k_relu_grad<<<blocks_for(hv, THREADS), THREADS, 0, s>>>(tr->dh1, tr->h1, tr->dh1, hv);
    LAUNCH_CHECK();
    CUBLAS_CHECK(cublasSgemm(c->blas, CUBLAS_OP_N, CUBLAS_OP_T, c->Hv, c->Vh, nb, &one,
                             tr->pooled, c->Hv, tr->dh1, c->Vh, &zero, tr->grad + D->val_fc1_w,
                             c->Hv));
    k_bias_grad<<<c->Vh, THREADS, 0, s>>>(tr->dh1, nb, c->Vh, 1, tr->grad + D->val_fc1_b);
    LAUNCH_CHECK();
    CUBLAS_CHECK(cublasSgemm(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, c->Hv, nb, c->Vh, &one,
                             c->params + D->val_fc1_w, c->Hv, tr->dh1, c->Vh, &zero,
                             tr->dpooled, c->Hv));
    k_value_pool_back<<<blocks_for(vgp, THREADS), THREADS, 0, s>>>(
        tr->dpooled, tr->mask, tr->count, tr->vg, nb, HW, c->Hv, tr->dvg);
    LAUNCH_CHECK();
    k_bias_grad<<<c->Hv, THREADS, 0, s>>>(tr->dvg, nb, c->Hv, HW, tr->grad + D->val_b1);
    LAUNCH_CHECK();
    conv_bwd_filter(c, cv1, bi, nb, xB, tr->dvg, D->val_w1);
    conv_bwd_data(c, cv1, bi, nb, tr->dvg, D->val_w1, 0.0f, tr->dx);

    /* policy head backward */
    k_bias_grad<<<K, THREADS, 0, s>>>(tr->dplog, nb, K, HW, tr->grad + D->pol_b2);
    LAUNCH_CHECK();
    conv_bwd_filter(c, cp2, bi, nb, tr->ph, tr->dplog, D->pol_w2);
    conv_bwd_data(c, cp2, bi, nb, tr->dplog, D->pol_w2, 0.0f, tr->dph);
    k_relu_grad<<<blocks_for(php, THREADS), THREADS, 0, s>>>(tr->dph, tr->ph, tr->dph, php);
    LAUNCH_CHECK();
    k_bias_grad<<<c->Hp, THREADS, 0, s>>>(tr->dph, nb, c->Hp, HW, tr->grad + D->pol_b1);
    LAUNCH_CHECK();
    conv_bwd_filter(c, cp1, bi, nb, xB, tr->dph, D->pol_w1);
    conv_bwd_data(c, cp1, bi, nb, tr->dph, D->pol_w1, 1.0f, tr->dx);

    /* trunk backward: dx holds dL/dx_{b+1} */
    float *dx = tr->dx, *dz = tr->dz;
    for (int b = B - 1; b >= 0; b--) {
        float *xb = tr->xs + (size_t)b * stride, *xn = xb + stride, *tb = tr->ts + (size_t)b * stride;
        k_relu_grad<<<blocks_for(act, THREADS), THREADS, 0, s>>>(dx, xn, dz, act);
        LAUNCH_CHECK();
        k_bias_grad<<<C, THREADS, 0, s>>>(dz, nb, C, HW, tr->grad + blk_b2(c, b));
        LAUNCH_CHECK();
        conv_bwd_filter(c, ctr, bi, nb, tb, dz, blk_w2(c, b));
        conv_bwd_data(c, ctr, bi, nb, dz, blk_w2(c, b), 0.0f, tr->dt);
        k_relu_grad<<<blocks_for(act, THREADS), THREADS, 0, s>>>(tr->dt, tb, tr->dt, act);
        LAUNCH_CHECK();
        k_bias_grad<<<C, THREADS, 0, s>>>(tr->dt, nb, C, HW, tr->grad + blk_b1(c, b));
        LAUNCH_CHECK();
        conv_bwd_filter(c, ctr, bi, nb, xb, tr->dt, blk_w1(c, b));
        /* dL/dx_b = dz (skip path) + conv1^T(dt) */
        conv_bwd_data(c, ctr, bi, nb, tr->dt, blk_w1(c, b), 1.0f, dz);
        float *t = dx;
        dx = dz;
        dz = t;
    }
    k_relu_grad<<<blocks_for(act, THREADS), THREADS, 0, s>>>(dx, x0, dz, act);
    LAUNCH_CHECK();
    k_bias_grad<<<C, THREADS, 0, s>>>(dz, nb, C, HW, tr->grad + D->in_b);
    LAUNCH_CHECK();
    conv_bwd_filter(c, cin, bi, nb, tr->in, dz, D->in_w);

    /* L2 term and the losses */
    dim3 grid(L2_CHUNKS, tr->nsegs);
    k_l2<<<grid, THREADS, 0, s>>>(c->params, tr->grad, tr->segs, wd, tr->partials);
    LAUNCH_CHECK();
    k_losses<<<1, THREADS, 0, s>>>(tr->lp, tr->lv, n, K, pw, tr->partials,
                                   tr->nsegs * L2_CHUNKS, wd, tr->loss);
    LAUNCH_CHECK();
}

/* Copy a training batch to the device (through pinned memory) and run the
 * pass at its bucket size, padding rows zeroed. 0, or -1 with err (no
 * memory for the training buffers, no algorithm). */
static int train_run(nn_ctx *c, const float *in, const float *pt, const float *vt, int n,
                     float wd, policy_weights pw, char *err, size_t errlen)
{
    if (n < 0 || n > c->max_batch) {
        snprintf(err, errlen, "cuda:%d: batch %d is outside 1..%d", c->device, n, c->max_batch);
        return -1;
    }
    CUDA_CHECK(cudaSetDevice(c->device));
    if (!c->tr && train_init(c, err, errlen) != 0)
        return -1;
    train_state *tr = c->tr;
    int nb = nn_cuda_bucket(n, c->max_batch), bi = nn_cuda_bucket_index(nb, c->max_batch);
    if (choose_train(c, bi, nb, err, errlen) != 0)
        return -1;
    size_t P = (size_t)c->P, HW = (size_t)c->HW, V = NN_VALUE_OUTPUTS;
    memcpy(tr->h_in, in, (size_t)n * P * HW * sizeof(float));
    memcpy(tr->h_pt, pt, (size_t)n * c->K * HW * sizeof(float));
    memcpy(tr->h_vt, vt, (size_t)n * V * sizeof(float));
    struct { float *dev, *host; size_t row; } cp[3] = {
        {tr->in, tr->h_in, P * HW}, {tr->ptarget, tr->h_pt, c->K * HW}, {tr->vtarget, tr->h_vt, V}};
    for (int i = 0; i < 3; i++) {
        CUDA_CHECK(cudaMemcpyAsync(cp[i].dev, cp[i].host, (size_t)n * cp[i].row * sizeof(float),
                                   cudaMemcpyHostToDevice, c->stream));
        if (nb > n)
            CUDA_CHECK(cudaMemsetAsync(cp[i].dev + (size_t)n * cp[i].row, 0,
                                       (size_t)(nb - n) * cp[i].row * sizeof(float),
                                       c->stream));
    }
    train_pass(c, bi, nb, n, wd, pw);
    CUDA_CHECK(cudaMemcpyAsync(tr->h_loss, tr->loss, 6 * sizeof(float), cudaMemcpyDeviceToHost,
                               c->stream));
    return 0;
}

static void losses_out(const nn_ctx *c, nn_losses_t *out)
{
    if (!out)
        return;
    out->policy = c->tr->h_loss[0];
    out->value = c->tr->h_loss[1];
    out->l2 = c->tr->h_loss[2];
    out->total = c->tr->h_loss[3];
    out->opp_policy = c->K > 1 ? c->tr->h_loss[4] : 0.0f;
    out->soft_policy = c->K > 2 ? c->tr->h_loss[5] : 0.0f;
}

static int cuda_train_step(nn_ctx_t *c, const float *in, const float *pt, const float *vt,
                           int n, const nn_train_opts_t *o, nn_losses_t *out, char *err,
                           size_t errlen)
{
    if (n == 0) {
        if (out)
            memset(out, 0, sizeof *out);
        return 0;
    }
    if (train_run(c, in, pt, vt, n, o->weight_decay, policy_weights_of(o), err, errlen) != 0)
        return -1;
    k_sgd<<<blocks_for(c->dparams, THREADS), THREADS, 0, c->stream>>>(
        c->params, c->tr->grad, c->mom, c->dparams, o->lr, o->momentum);
    LAUNCH_CHECK();
    c->weights_dirty = true;
    CUDA_CHECK(cudaStreamSynchronize(c->stream));
    losses_out(c, out);
    return 0;
}

static int cuda_loss_grad(nn_ctx_t *c, const float *in, const float *pt, const float *vt, int n,
                          float wd, nn_losses_t *out, float *grad, char *err, size_t errlen)
{
    if (n == 0) {
        if (out)
            memset(out, 0, sizeof *out);
        if (grad)
            memset(grad, 0, c->nparams * sizeof(float));
        return 0;
    }
    if (train_run(c, in, pt, vt, n, wd, policy_weights_of(NULL), err, errlen) != 0)
        return -1;
    if (grad)
        params_download(c, grad, c->tr->grad);   /* synchronises */
    else
        CUDA_CHECK(cudaStreamSynchronize(c->stream));
    losses_out(c, out);
    return 0;
}

static void cuda_get_weights(nn_ctx_t *c, float *params)
{
    CUDA_CHECK(cudaSetDevice(c->device));
    params_download(c, params, c->params);
}

static void cuda_set_weights(nn_ctx_t *c, const float *params)
{
    CUDA_CHECK(cudaSetDevice(c->device));
    CUDA_CHECK(params_upload(c, c->params, params));
    c->weights_dirty = true;
}

static void cuda_get_momentum(nn_ctx_t *c, float *m)
{
    CUDA_CHECK(cudaSetDevice(c->device));
    params_download(c, m, c->mom);
}

static void cuda_set_momentum(nn_ctx_t *c, const float *m)
{
    CUDA_CHECK(cudaSetDevice(c->device));
    CUDA_CHECK(params_upload(c, c->mom, m));
}

/* ---- create / free ---- */

static void cuda_free(nn_ctx_t *c)
{
    if (!c)
        return;
    cudaSetDevice(c->device);
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    train_free(c->tr);
    if (c->graphs) {
        for (int i = 0; i < c->nbuckets; i++)
            if (c->graphs[i])
                cudaGraphExecDestroy(c->graphs[i]);
        free(c->graphs);
    }
    free(c->uses);
    free(c->alg_in);
    free(c->alg_trunk);
    /* the handles first: cuBLAS still points at its workspace until destroyed */
    if (c->blas)
        cublasDestroy(c->blas);
    if (c->dnn)
        cudnnDestroy(c->dnn);
    void *dev[] = {c->params, c->mom, c->w_in, c->w_trunk, c->w_pol1, c->w_val1, c->in, c->x8,
                   c->mask, c->legal, c->x, c->t, c->y, c->head, c->plog, c->pooled, c->vh,
                   c->vl, c->policy, c->value, c->ws, c->blas_ws};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            cudaFree(dev[i]);
    void *host[] = {c->h_in, c->h_policy, c->h_value};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        if (host[i])
            cudaFreeHost(host[i]);
    infer_desc_free(&c->inf);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    free(c);
}

static bool env_off(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "0") == 0;
}

/* Every failure returns NULL with a message (no device, no memory, no
 * cuDNN algorithm), so `--device auto` can fall back to the CPU. */
static nn_ctx_t *cuda_create(const nn_model_t *m, int max_batch, int device, int threads,
                             char *err, size_t errlen)
{
    (void)threads;
    char why[128];
    if (cfg_rules(&m->cfg, err, errlen) != 0)
        return NULL;
    if (max_batch < 1) {
        snprintf(err, errlen, "batch size must be at least 1, got %d", max_batch);
        return NULL;
    }
    int ndev = cu_device_count(why, sizeof why);
    if (ndev <= 0) {
        snprintf(err, errlen, "cuda unavailable: %s", ndev < 0 ? why : "no CUDA device");
        return NULL;
    }
    if (device < 0 || device >= ndev) {
        snprintf(err, errlen, "cuda:%d: no such device (%d present: cuda:0..cuda:%d)", device,
                 ndev, ndev - 1);
        return NULL;
    }
    nn_ctx *c = (nn_ctx *)calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->cfg = m->cfg;
    c->nparams = nn_param_count(&c->cfg);
    if (c->nparams != m->nparams) {
        snprintf(err, errlen, "model holds %zu parameters, its config %zu", m->nparams,
                 c->nparams);
        free(c);
        return NULL;
    }
    dev_layout_init(c);
    c->device = device;
    c->max_batch = max_batch;
    c->nbuckets = nn_cuda_bucket_index(max_batch, max_batch) + 1;
    c->M = m->cfg.board_max;
    c->HW = c->M * c->M;
    c->P = m->cfg.in_planes;
    c->C = m->cfg.channels;
    c->B = m->cfg.blocks;
    c->Hp = m->cfg.policy_head;
    c->K = m->cfg.policy_outputs;
    c->Hv = m->cfg.value_head;
    c->Vh = m->cfg.value_hidden;
    c->graphs_on = !env_off("GZ_CUDA_GRAPHS");
    c->tf32 = !env_off("GZ_CUDA_TF32");

    size_t N = (size_t)max_batch, HW = (size_t)c->HW, C = (size_t)c->C;
    size_t K = (size_t)(c->Hp > c->Hv ? c->Hp : c->Hv);
    const size_t blas_ws = 32u << 20;
    size_t nbk = (size_t)c->nbuckets;
    c->wstride = (C * 9 * C + 127) / 128 * 128;   /* 256 bytes of bf16 */

    c->alg_in = (fwd_choice *)calloc(nbk, sizeof(fwd_choice));
    c->alg_trunk = (fwd_choice *)calloc(nbk, sizeof(fwd_choice));
    c->graphs = (cudaGraphExec_t *)calloc(nbk, sizeof(cudaGraphExec_t));
    c->uses = (unsigned char *)calloc(nbk, 1);
    if (!c->alg_in || !c->alg_trunk || !c->graphs || !c->uses) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }

    TRY_CUDA(cudaSetDevice(device));
    {
        /* our kernels first run in forward, where a failure stops the
         * process: a device older than every -Dgpu_arch of this build must
         * fail here, so `--device auto` still falls back */
        cudaFuncAttributes fa;
        cudaError_t e = cudaFuncGetAttributes(&fa, k_prep);
        if (e != cudaSuccess) {
            snprintf(err, errlen, "cuda:%d: this build has no kernels for the device (%s; "
                     "rebuild with its -Dgpu_arch)", device, cudaGetErrorName(e));
            goto fail;
        }
    }
    TRY_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    TRY_CUDNN(cudnnCreate(&c->dnn));
    TRY_CUDNN(cudnnSetStream(c->dnn, c->stream));
    TRY_CUBLAS(cublasCreate(&c->blas));
    TRY_CUBLAS(cublasSetStream(c->blas, c->stream));
    /* our own cuBLAS workspace, so graph capture never makes cuBLAS allocate */
    TRY_CUDA(cudaMalloc(&c->blas_ws, blas_ws));
    TRY_CUBLAS(cublasSetWorkspace(c->blas, c->blas_ws, blas_ws));

#define DEV(ptr, count) TRY_CUDA(cudaMalloc((void **)&(ptr), ((size_t)(count) + 1) * sizeof *(ptr)))
    DEV(c->params, c->dparams);
    DEV(c->mom, c->dparams);
    DEV(c->w_in, C * 9 * 8);
    DEV(c->w_trunk, (size_t)(2 * c->B) * c->wstride);
    DEV(c->w_pol1, (size_t)c->Hp * C);
    DEV(c->w_val1, (size_t)c->Hv * C);
    DEV(c->in, N * c->P * HW);
    DEV(c->x8, N * HW * 8);
    DEV(c->mask, N * HW);
    DEV(c->legal, N * HW);
    DEV(c->x, N * HW * C);
    DEV(c->t, N * HW * C);
    DEV(c->y, N * HW * C);
    DEV(c->head, N * HW * K);
    DEV(c->plog, N * HW);
    DEV(c->pooled, N * c->Hv);
    DEV(c->vh, N * c->Vh);
    DEV(c->vl, N * NN_VALUE_OUTPUTS);
    DEV(c->policy, N * HW);
    DEV(c->value, N * NN_VALUE_OUTPUTS);
#undef DEV
    TRY_CUDA(cudaMallocHost((void **)&c->h_in, N * c->P * HW * sizeof(float)));
    TRY_CUDA(cudaMallocHost((void **)&c->h_policy, N * HW * sizeof(float)));
    TRY_CUDA(cudaMallocHost((void **)&c->h_value, N * NN_VALUE_OUTPUTS * sizeof(float)));
    /* zeros: the padding of a tensor and the padding rows of a bucket stay finite */
    memset(c->h_in, 0, N * c->P * HW * sizeof(float));
    TRY_CUDA(cudaMemsetAsync(c->params, 0, c->dparams * sizeof(float), c->stream));
    TRY_CUDA(cudaMemsetAsync(c->mom, 0, c->dparams * sizeof(float), c->stream));
    TRY_CUDA(cudaMemsetAsync(c->x8, 0, N * HW * 8 * sizeof(bf16), c->stream));
    TRY_CUDA(cudaMemsetAsync(c->x, 0, N * HW * C * sizeof(bf16), c->stream));
    TRY_CUDA(cudaMemsetAsync(c->w_in, 0, C * 9 * 8 * sizeof(bf16), c->stream));
    TRY_CUDA(cudaMemsetAsync(c->w_trunk, 0, (size_t)(2 * c->B) * c->wstride * sizeof(bf16),
                             c->stream));

    TRY_CUDNN(infer_desc_init(&c->inf, c->C, max_batch, c->M));

    /* workspace: what the heuristics' first choices need at max_batch, at
     * least 32 MiB, at most 1 GiB (a larger ask falls to the next candidate) */
    {
        size_t need = 32u << 20, w;
        w = ws_need(c->dnn, c->inf.xd8, c->inf.wd_in, c->inf.cd3, c->inf.xdc, false);
        need = w > need ? w : need;
        w = ws_need(c->dnn, c->inf.xdc, c->inf.wd_trunk, c->inf.cd3, c->inf.xdc, false);
        need = w > need ? w : need;
        if (need > (1024u << 20))
            need = 1024u << 20;
        TRY_CUDA(cudaMalloc(&c->ws, need));
        c->ws_size = need;
    }
    if (choose_fwd_all(c, err, errlen) != 0)
        goto fail;
    TRY_CUDA(cudaStreamSynchronize(c->stream));
    TRY_CUDA(cudaGetLastError());

    TRY_CUDA(params_upload(c, c->params, m->params));
    c->weights_dirty = true;
    return c;

fail:
    (void)cudaGetLastError();
    cuda_free(c);
    return NULL;
}

static const nn_backend_t backend_cuda = {
    "cuda",
    cuda_create,
    cuda_forward,
    cuda_train_step,
    cuda_loss_grad,
    cuda_get_weights,
    cuda_set_weights,
    cuda_get_momentum,
    cuda_set_momentum,
    cuda_free,
    NULL,   /* set_precision: inference is bf16 (tensor cores), training fp32 */
    NULL,   /* bf16_faster: not asked without set_precision */
};

/* ---- benchmark helper ---- */

static double cu_gemm_peak_tflops(int device, char *name, size_t namelen)
{
    char why[128];
    if (cu_device_valid(device, why, sizeof why) != 0) {
        snprintf(name, namelen, "unavailable: %s", why);
        return -1.0;
    }
    cudaDeviceProp p;
    if (cudaSetDevice(device) != cudaSuccess || cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        snprintf(name, namelen, "unavailable: cannot select device %d", device);
        (void)cudaGetLastError();
        return -1.0;
    }
    const int n = 8192, iters = 20;
    size_t bytes = (size_t)n * n * sizeof(bf16);
    bf16 *a = NULL, *b = NULL, *cm = NULL;
    cublasHandle_t h = NULL;
    cudaStream_t st = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double tflops = -1.0;
    float ms = 0.0f;
    const float one = 1.0f, zero = 0.0f;
    const char *fail = NULL;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess ||
        cudaMalloc(&cm, bytes) != cudaSuccess) {
        fail = "out of device memory for the GEMM";
        goto out;
    }
    if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess ||
        cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetStream(h, st) ||
        cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) {
        fail = "cannot create a cuBLAS handle";
        goto out;
    }
    /* non-zero operands: all-zero data draws less power and would flatter the peak */
    k_fill_bf16<<<blocks_for((size_t)n * n, THREADS), THREADS, 0, st>>>(a, (size_t)n * n, 1u);
    LAUNCH_CHECK();
    k_fill_bf16<<<blocks_for((size_t)n * n, THREADS), THREADS, 0, st>>>(b, (size_t)n * n, 2u);
    LAUNCH_CHECK();
    for (int i = 0; i < 3 + iters; i++) {
        if (i == 3)
            CUDA_CHECK(cudaEventRecord(e0, st));
        if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, b,
                         CUDA_R_16BF, n, &zero, cm, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
            fail = "cublasGemmEx refused the bf16 GEMM";
            goto out;
        }
    }
    CUDA_CHECK(cudaEventRecord(e1, st));
    CUDA_CHECK(cudaEventSynchronize(e1));
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    tflops = 2.0 * n * (double)n * n * iters / (ms * 1e-3) / 1e12;
out:
    if (st)
        cudaStreamSynchronize(st);
    if (fail)
        snprintf(name, namelen, "unavailable: %s", fail);
    else
        snprintf(name, namelen, "%s", p.name);
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    if (h)
        cublasDestroy(h);
    cudaFree(a);
    cudaFree(b);
    cudaFree(cm);
    if (st)
        cudaStreamDestroy(st);
    /* a refused cudaMalloc stays the thread's last error: the next forward's
     * launch check on this thread would stop the process on it */
    (void)cudaGetLastError();
    return tflops;
}

static int cu_mem_info(int dev, size_t *free_bytes, size_t *total_bytes, char *why,
                       size_t whylen)
{
    if (cu_device_valid(dev, why, whylen) != 0)
        return -1;
    cudaError_t e = cudaSetDevice(dev);
    if (e == cudaSuccess)
        e = cudaMemGetInfo(free_bytes, total_bytes);
    if (e != cudaSuccess) {
        snprintf(why, whylen, "cudaMemGetInfo: %s", cudaGetErrorName(e));
        (void)cudaGetLastError();
        return -1;
    }
    return 0;
}

/* ---- the module's one entry point ---- */

static const nn_cuda_module_t module = {
    NN_CUDA_MODULE_ABI, sizeof(nn_cuda_module_t), &backend_cuda,    cu_device_count,
    cu_device_describe, cu_gemm_peak_tflops,      cu_check_shapes, cu_mem_info,
};

extern "C" __attribute__((visibility("default"))) const nn_cuda_module_t *gomoku_cuda_module(void)
{
    return &module;
}
