/* CUDA backend: cuDNN convolutions, cuBLAS for the fully connected layers,
 * own kernels for the rest. Built as the module gomoku-cuda.so, loaded on
 * first use (nn/nn_cuda.h); its only export is gomoku_cuda_module().
 *
 * One set of fp32 master weights on the device, three paths:
 *  - forward, bf16 (self-play inference, auto's choice): NHWC bf16
 *    activations into tensor-core convolutions (fp32 accumulate); the
 *    residual stream (each block's output, the sum of its input and its
 *    branch) is kept in fp32 and rounded to bf16 only as the next conv's
 *    input, so rounding does not compound over the blocks. The 1x1 head
 *    convs are cuBLAS GEMMs with fp32 output; the heads run in fp32.
 *  - forward, fp32 (--precision fp32): the same NHWC code in fp32, cuDNN
 *    without TF32 (CUDNN_FMA_MATH) and fp32 cuBLAS GEMMs: the CPU's fp32
 *    within summation order.
 *    Both forwards pad the input planes to 8 channels (the trunk needs
 *    channels % 8 == 0), run a batch at its bucket size (nn_cuda_bucket),
 *    and capture one CUDA graph per bucket on that bucket's second call;
 *    a failed capture leaves that bucket without a graph, not the others.
 *    A precision's weight copies, cuDNN plans (every bucket, chosen when
 *    the precision is first needed, so forward never meets a missing
 *    algorithm) and graphs are built by set_precision (which reports a
 *    failure) or else by the first forward (which stops on one). The
 *    inference buffers are shared by both precisions and built with the
 *    first of them: a training-only context never allocates them.
 *  - loss_grad / train_step: NCHW fp32 (cuDNN may use TF32 tensor cores;
 *    GZ_CUDA_TF32=0 at create forbids it), cuDNN filter layout per tensor,
 *    Nesterov SGD in a kernel. Training buffers are allocated on the first
 *    training call, the algorithms of a bucket on its first use (each
 *    backward-data algorithm tried with the beta, 0 or 1, that the pass
 *    runs it with); either failing is an error the caller gets, not an
 *    abort. A batch in pinned memory (host_alloc) is copied straight to
 *    the device; any other goes through a pinned staging copy.
 * Every convolution has its own descriptors per pass (forward, backward
 * data, backward filter) and bucket, set once with the chosen algorithm's
 * math type: nothing is rewritten per call, so cuDNN's plan cache sees
 * the same descriptors every time.
 * Parameters, gradients and momentum live on the device in an aligned copy
 * of the flat layout (each tensor on a 256-byte boundary,
 * nn_cuda_dev_layout); get/set map between the two.
 *
 * Threads: a context is used by one thread at a time, but several threads
 * may each run their own (gomoku serve: one per connection). A CUDA graph
 * capture is broken by device-wide work in another thread (cudaMalloc,
 * cudaFree, cudaMallocHost, handle creation and destruction, cuDNN
 * loading kernels), and that thread is then left with
 * cudaErrorStreamCaptureUnsupported as its last error, which its next
 * launch check would stop on. So one module-wide lock is held around
 * capture, create, free, building a precision, training setup, algorithm
 * trials and host_alloc/free, and every one of them clears the thread's
 * last error before it lets go. Steady-state forward and training take no
 * lock.
 *
 * Errors: a failed CUDA/cuDNN/cuBLAS call in forward or a training pass
 * stops with file:line and cuDNN's own last message (a broken invariant);
 * create, set_precision, the training setup and algorithm trials return
 * messages instead, naming cuDNN's status and last error string. */
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
 * instead of stopping the process, so the bucket can run without a graph
 * (a capture failure is not a broken invariant). */
struct soft_err {
    bool failed;
    char what[200];
};
static thread_local soft_err *t_soft = nullptr;

/* cuDNN's last error message on this thread ("" when none), as "; cuDNN:
 * <message>" for appending. */
static const char *cudnn_detail(void)
{
    static thread_local char buf[300];
    char m[256];
    m[0] = '\0';
    cudnnGetLastErrorString(m, sizeof m);
    if (m[0])
        snprintf(buf, sizeof buf, "; cuDNN: %s", m);
    else
        buf[0] = '\0';
    return buf;
}

/* A failed call: stops with file:line, or while capturing is recorded in
 * t_soft. detail: more of the library's own words ("" when none). */
static void check_fail(const char *what, const char *detail, const char *call, const char *file,
                       int line)
{
    if (t_soft) {
        if (!t_soft->failed) {
            t_soft->failed = true;
            snprintf(t_soft->what, sizeof t_soft->what, "%s%s at %s:%d", what, detail, file,
                     line);
        }
        return;
    }
    fprintf(stderr, "%s:%d: %s failed: %s%s\n", file, line, call, what, detail);
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
/* What to add to a failure's message: cuDNN's last error string for a
 * cuDNN call, nothing for the others. */
static const char *fail_detail(cudaError_t) { return ""; }
static const char *fail_detail(cublasStatus_t) { return ""; }
static const char *fail_detail(cudnnStatus_t) { return cudnn_detail(); }

#define GPU_CHECK(x)                                                         \
    do {                                                                     \
        auto s_ = (x);                                                       \
        const char *f_ = fail_name(s_);                                      \
        if (f_)                                                              \
            check_fail(f_, fail_detail(s_), #x, __FILE__, __LINE__);         \
    } while (0)
#define CUDA_CHECK(x) GPU_CHECK(x)
#define CUDNN_CHECK(x) GPU_CHECK(x)
#define CUBLAS_CHECK(x) GPU_CHECK(x)
#define LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())

/* For the calls that return errors: a failure becomes a message in
 * err/errlen (naming the device `dev`) and a jump to `fail`. */
#define TRY_GPU(dev, x)                                                          \
    do {                                                                         \
        auto s_ = (x);                                                           \
        const char *f_ = fail_name(s_);                                          \
        if (f_) {                                                                \
            snprintf(err, errlen, "cuda:%d: %s: %s%s (%s:%d)", (dev), #x, f_,    \
                     fail_detail(s_), __FILE__, __LINE__);                       \
            goto fail;                                                           \
        }                                                                        \
    } while (0)

static unsigned blocks_for(size_t n, unsigned threads)
{
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b ? b : 1);
}

/* ---- the module-wide lock (see "Threads" above) ---- */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static void module_lock(void) { pthread_mutex_lock(&g_mu); }
/* Clears this thread's last CUDA error first: what went wrong under the
 * lock was reported already, and must not stop a later launch check. */
static void module_unlock(void)
{
    (void)cudaGetLastError();
    pthread_mutex_unlock(&g_mu);
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

/* The cuDNN in use against the headers this module was built with: the
 * major version must match (nn_cuda_cudnn_version_check), and each
 * sub-library the backend calls must load and agree with the others (a
 * missing libcudnn_cnn.so.9 would otherwise read as "no algorithm runs").
 * Needs no device. 0, or -1 with a message. */
static int cudnn_libs_check(char *err, size_t errlen)
{
    if (nn_cuda_cudnn_version_check(cudnnGetVersion(), CUDNN_VERSION, err, errlen) != 0)
        return -1;
    static const struct {
        const char *name;
        cudnnStatus_t (*check)(void);
    } subs[] = {{"graph", cudnnGraphVersionCheck},
                {"ops", cudnnOpsVersionCheck},
                {"cnn", cudnnCnnVersionCheck}};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        cudnnStatus_t st = subs[i].check();
        if (st != CUDNN_STATUS_SUCCESS) {
            snprintf(err, errlen, "cuDNN %s sub-library (libcudnn_%s.so.9): %s%s", subs[i].name,
                     subs[i].name, cudnnGetErrorString(st), cudnn_detail());
            return -1;
        }
    }
    return 0;
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
    int rM, rm, rp, hM, hm, hp;
    nn_cuda_cudnn_version_split(cudnnGetVersion(), &rM, &rm, &rp);
    nn_cuda_cudnn_version_split(CUDNN_VERSION, &hM, &hm, &hp);
    char libs[300];
    if (cudnn_libs_check(libs, sizeof libs) == 0)
        libs[0] = '\0';
    snprintf(buf, len,
             "%s, compute %d.%d, %.1f GiB, %d SMs, driver %d.%d, runtime %d.%d, "
             "cuDNN %d.%d.%d (built with %d.%d.%d)%s%s, cuBLAS %d.%d",
             p.name, p.major, p.minor, (double)p.totalGlobalMem / (1024.0 * 1024 * 1024),
             p.multiProcessorCount, drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10, rM,
             rm, rp, hM, hm, hp, libs[0] ? ": " : "", libs, cublas_ver, cublas_minor);
    (void)cudaGetLastError();
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
 * stone may go (on board, empty, not forbidden); x8 (n, HW, Pp) the planes
 * as NHWC T padded with zero channels to Pp = in_pad(P), when not NULL.
 * Same 0.5 thresholds as the reference. */
template <typename T>
__global__ void k_prep(const float *in, int n, int P, int Pp, int HW, T *x8, float *mask,
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
        for (int c = 0; c < Pp; c++)
            st(&x8[(size_t)i * Pp + c], c < P ? pl[c * HW] : 0.0f);
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

/* The residual stream of the NHWC forward, in fp32: xf = relu(y + bias[c]
 * (+ xf)) * mask (res: add the stream's old value, the block's input), and
 * xt = xf as T when xt is not NULL (the next conv's input). */
template <typename T>
__global__ void k_residual(const T *y, const float *bias, bool res, const float *mask,
                           float *xf, T *xt, size_t total, int C)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total)
        return;
    float v = ld(y[i]) + bias[i % C];
    if (res)
        v += xf[i];
    v = fmaxf(v, 0.0f) * mask[i / C];
    xf[i] = v;
    if (xt)
        st(&xt[i], v);
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

/* Value head input, NHWC inference path: pooled (n, Hf) = the mean over
 * on-board points of relu(g + b1), then (Hf = 2 Hv) the max, g (n*HW, Hv)
 * fp32. One block per sample. */
__global__ void k_value_pool_rows(const float *g, const float *b1, const float *mask, int HW,
                                  int Hv, int Hf, float *pooled)
{
    int s = blockIdx.x;
    const float *m = mask + (size_t)s * HW;
    for (int k = threadIdx.x; k < Hv; k += blockDim.x) {
        float acc = 0.0f, cnt = 0.0f, mx = 0.0f;
        for (int p = 0; p < HW; p++) {
            float mp = m[p];
            cnt += mp;
            if (mp != 0.0f) {
                float v = mp * fmaxf(g[((size_t)s * HW + p) * Hv + k] + b1[k], 0.0f);
                acc += v;
                mx = fmaxf(mx, v);
            }
        }
        pooled[(size_t)s * Hf + k] = cnt > 0.0f ? acc / cnt : 0.0f;
        if (Hf > Hv)
            pooled[(size_t)s * Hf + Hv + k] = mx;
    }
}

/* Training path: va (n, Hv, HW) already relu'd and masked; pooled (n, Hf)
 * = sum / count, then (Hf = 2 Hv) the max, whose first point goes to
 * argmax (n, Hv) (-1 when the channel is 0 everywhere); count (n) the
 * on-board points. One warp per (s, k). */
__global__ void k_value_pool_nchw(const float *va, const float *mask, int n, int HW, int Hv,
                                  int Hf, float *pooled, float *count, int *argmax)
{
    int wid = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (wid >= n * Hv)
        return;
    int s = wid / Hv, k = wid % Hv;
    const float *v = va + ((size_t)s * Hv + k) * HW, *m = mask + (size_t)s * HW;
    float acc = 0.0f, cnt = 0.0f, mx = 0.0f;
    int at = HW;   /* this lane's first point of its max */
    for (int p = lane; p < HW; p += 32) {
        acc += v[p];
        cnt += m[p];
        if (v[p] > mx) {
            mx = v[p];
            at = p;
        }
    }
    acc = warp_sum(acc);
    cnt = warp_sum(cnt);
    float wmx = warp_reduce(mx, max_op());
    int first = mx == wmx && wmx > 0.0f ? at : HW;
    for (int o = 16; o > 0; o >>= 1)
        first = min(first, __shfl_xor_sync(0xffffffffu, first, o));
    if (lane == 0) {
        pooled[(size_t)s * Hf + k] = cnt > 0.0f ? acc / cnt : 0.0f;
        if (Hf > Hv) {
            pooled[(size_t)s * Hf + Hv + k] = wmx;
            argmax[wid] = first < HW ? first : -1;
        }
        if (k == 0)
            count[s] = cnt;
    }
}

/* d va[s,k,p] = (va > 0) * (dpooled[s,k] * mask[s,p] / count[s] + (Hf = 2 Hv,
 * p the channel's argmax) dpooled[s,Hv+k]). */
__global__ void k_value_pool_back(const float *dpooled, const float *mask, const float *count,
                                  const int *argmax, const float *va, int n, int HW, int Hv,
                                  int Hf, float *dva)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t total = (size_t)n * Hv * HW;
    if (i >= total)
        return;
    int p = (int)(i % HW);
    size_t sk = i / HW;
    int s = (int)(sk / Hv), k = (int)(sk % Hv);
    float c = count[s];
    float g = 0.0f;
    if (va[i] > 0.0f && c > 0.0f) {
        g = dpooled[(size_t)s * Hf + k] * mask[(size_t)s * HW + p] / c;
        if (Hf > Hv && argmax[sk] == p)
            g += dpooled[(size_t)s * Hf + Hv + k];
    }
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

/* Filter (K, Cin, RS) fp32 -> (K, RS, Cpad) T (cuDNN's NHWC filter), zero
 * in the padding channels. */
template <typename T>
__global__ void k_filter_krsc(const float *src, int K, int Cin, int RS, int Cpad, T *dst)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t total = (size_t)K * RS * Cpad;
    if (i >= total)
        return;
    int c = (int)(i % Cpad);
    int rs = (int)((i / Cpad) % RS);
    size_t k = i / ((size_t)Cpad * RS);
    st(&dst[i], c < Cin ? src[(k * Cin + c) * RS + rs] : 0.0f);
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

/* ---- convolutions: shapes, per-bucket plans, algorithm trials ---- */

enum { CONV_IN, CONV_TRUNK, CONV_P1, CONV_P2, CONV_V1, CONV_SHAPES };
enum { PASS_FWD, PASS_DATA, PASS_FILT, PASSES };
enum { L2_CHUNKS = 32, THREADS = 256, MAX_TENSORS = 2 + 4 * NN_MAX_BLOCKS + 10 };

/* The betas each training conv's backward-data pass runs with (BETA0:
 * overwrite dx, BETA1: accumulate onto it). Its algorithm is tried with
 * each of them (an algorithm may run with one and refuse the other), and
 * conv_bwd_data asserts the pass asks for nothing else. The input conv's
 * is never run: nothing needs the gradient of the input planes. */
enum { BETA0 = 1, BETA1 = 2 };
static const unsigned char bwd_data_betas[CONV_SHAPES] = {
    0,               /* CONV_IN */
    BETA0 | BETA1,   /* CONV_TRUNK: conv2 into dt, conv1 onto the skip path's gradient */
    BETA1,           /* CONV_P1: onto the value head's */
    BETA0,           /* CONV_P2 */
    BETA0,           /* CONV_V1: the first into dx */
};

/* One convolution at one bucket: its activations' descriptors, and per
 * pass a convolution descriptor carrying the chosen algorithm's math
 * type. Set once, then only read. */
struct conv_plan {
    bool set;                             /* algorithms chosen */
    cudnnTensorDescriptor_t xd, yd;       /* (n, cin, M, M), (n, cout, M, M) */
    cudnnConvolutionDescriptor_t cd[PASSES];
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t data;
    cudnnConvolutionBwdFilterAlgo_t filt;
};

/* A convolution of one path, batch-independent: its filter, and a plan
 * per bucket. */
struct conv_shape {
    int id, cin, cout, k, M;
    int npass;                  /* 1: forward only (inference), PASSES: training */
    int nbuckets;
    cudnnDataType_t dt;
    cudnnTensorFormat_t fmt;
    cudnnMathType_t math0;      /* a plan's math type before the trial sets its own */
    cudnnFilterDescriptor_t wd; /* (cout, cin, k, k) */
    conv_plan *plan;            /* [nbuckets] */
};

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

static void conv_shape_free(conv_shape *cs)
{
    if (cs->plan)
        for (int b = 0; b < cs->nbuckets; b++) {
            conv_plan *p = &cs->plan[b];
            desc_destroy(&p->xd);
            desc_destroy(&p->yd);
            for (int q = 0; q < PASSES; q++)
                desc_destroy(&p->cd[q]);
        }
    desc_destroy(&cs->wd);
    free(cs->plan);
    memset(cs, 0, sizeof *cs);
}

/* A shape with no plan built yet. A failure leaves what was made for
 * conv_shape_free. */
static cudnnStatus_t conv_shape_init(conv_shape *cs, int id, int cin, int cout, int k, int M,
                                     cudnnDataType_t dt, cudnnTensorFormat_t fmt,
                                     cudnnMathType_t math0, int npass, int nbuckets)
{
    memset(cs, 0, sizeof *cs);
    cs->id = id;
    cs->cin = cin;
    cs->cout = cout;
    cs->k = k;
    cs->M = M;
    cs->dt = dt;
    cs->fmt = fmt;
    cs->math0 = math0;
    cs->npass = npass;
    cs->nbuckets = nbuckets;
    cs->plan = (conv_plan *)calloc((size_t)nbuckets, sizeof(conv_plan));
    if (!cs->plan)
        return CUDNN_STATUS_ALLOC_FAILED;
    cudnnStatus_t st = cudnnCreateFilterDescriptor(&cs->wd);
    return st ? st : cudnnSetFilter4dDescriptor(cs->wd, dt, fmt, cout, cin, k, k);
}

/* The descriptors of bucket bi's plan at batch n (no algorithm yet). */
static cudnnStatus_t conv_plan_desc(conv_shape *cs, int bi, int n)
{
    conv_plan *p = &cs->plan[bi];
    int pad = cs->k / 2;
    cudnnStatus_t st;
    if ((st = cudnnCreateTensorDescriptor(&p->xd)) || (st = cudnnCreateTensorDescriptor(&p->yd)) ||
        (st = cudnnSetTensor4dDescriptor(p->xd, cs->fmt, cs->dt, n, cs->cin, cs->M, cs->M)) ||
        (st = cudnnSetTensor4dDescriptor(p->yd, cs->fmt, cs->dt, n, cs->cout, cs->M, cs->M)))
        return st;
    for (int q = 0; q < cs->npass; q++)
        if ((st = cudnnCreateConvolutionDescriptor(&p->cd[q])) ||
            (st = cudnnSetConvolution2dDescriptor(p->cd[q], pad, pad, 1, 1, 1, 1,
                                                  CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)) ||
            (st = cudnnSetConvolutionMathType(p->cd[q], cs->math0)))
            return st;
    return CUDNN_STATUS_SUCCESS;
}

/* Channels of training shape s. */
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
static const int conv_k[CONV_SHAPES] = {3, 3, 1, 1, 1};
static const char *const conv_names[CONV_SHAPES] = {"input conv", "trunk conv", "policy conv1",
                                                    "policy conv2", "value conv"};

/* The training path's shape s (NCHW fp32, every pass). */
static cudnnStatus_t train_shape_init(conv_shape *cs, const nn_config_t *cfg, int s,
                                      int nbuckets)
{
    int cin, cout;
    conv_dims(cfg, s, &cin, &cout);
    return conv_shape_init(cs, s, cin, cout, conv_k[s], cfg->board_max, CUDNN_DATA_FLOAT,
                           CUDNN_TENSOR_NCHW, CUDNN_DEFAULT_MATH, PASSES, nbuckets);
}

/* Input planes of the inference path's input conv: P padded with zero
 * planes to a multiple of 8 (NHWC tensor-core convs want 8-channel rows). */
static int in_pad(int P) { return (P + 7) / 8 * 8; }

/* An inference path's 3x3 conv (NHWC, forward only): the input conv
 * (in_pad(P) planes -> C) or the trunk conv (C -> C). bf16 starts from
 * tensor-op math, fp32 from FMA (no TF32). */
static cudnnStatus_t infer_shape_init(conv_shape *cs, int id, int P, int C, int M, bool bf,
                                      int nbuckets)
{
    return conv_shape_init(cs, id, id == CONV_IN ? in_pad(P) : C, C, 3, M,
                           bf ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC,
                           bf ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH, 1, nbuckets);
}

/* Output dims of plan bi's convolution must be (n, cout, M, M). */
static int check_out_dims(const conv_shape *cs, int bi, int n, const char *what, char *err,
                          size_t errlen)
{
    const conv_plan *p = &cs->plan[bi];
    int on, oc, oh, ow;
    cudnnStatus_t st =
        cudnnGetConvolution2dForwardOutputDim(p->cd[PASS_FWD], p->xd, cs->wd, &on, &oc, &oh, &ow);
    if (st != CUDNN_STATUS_SUCCESS) {
        snprintf(err, errlen, "%s: cudnnGetConvolution2dForwardOutputDim: %s%s", what,
                 cudnnGetErrorString(st), cudnn_detail());
        return -1;
    }
    if (on != n || oc != cs->cout || oh != cs->M || ow != cs->M) {
        snprintf(err, errlen, "%s: output %dx%dx%dx%d, expected %dx%dx%dx%d", what, on, oc, oh,
                 ow, n, cs->cout, cs->M, cs->M);
        return -1;
    }
    return 0;
}

/* What an algorithm trial met, for the message when nothing ran. */
struct trial_log {
    cudnnStatus_t query;       /* the heuristic query's own failure */
    int candidates, refused, too_big, failed;
    cudnnStatus_t refusal;     /* the first candidate the heuristic marked as not runnable */
    cudnnStatus_t run;         /* the last failed run */
    cudaError_t cuda;          /* CUDA's last error after it */
    char detail[256];          /* cuDNN's last error string after the last failure */
};

/* One line: why no candidate ran. */
static void trial_say(const trial_log *t, char *buf, size_t len)
{
    int w;
    if (t->query != CUDNN_STATUS_SUCCESS)
        w = snprintf(buf, len, "the heuristic query failed: %s", cudnnGetErrorString(t->query));
    else if (t->candidates == 0)
        w = snprintf(buf, len, "the heuristic offered no algorithm");
    else
        w = snprintf(buf, len,
                     "%d candidates: %d refused by the heuristic (first: %s), %d over the "
                     "workspace, %d failed to run (last: %s; CUDA: %s)",
                     t->candidates, t->refused,
                     t->refused ? cudnnGetErrorString(t->refusal) : "-", t->too_big, t->failed,
                     t->failed ? cudnnGetErrorString(t->run) : "-",
                     t->failed ? cudaGetErrorName(t->cuda) : "-");
    if (t->detail[0] && w >= 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, "; cuDNN: %s", t->detail);
}

/* The heuristic's candidates in its order; the first that fits the
 * workspace and runs (returns success on the real buffers) is kept, so a
 * candidate the heuristic ranks first but this cuDNN build cannot execute
 * does not strand the context. `force_math` >= 0 replaces the candidate's
 * math type (CUDNN_FMA_MATH: no TF32); a candidate that would convert fp32
 * operands to fp16 runs as plain tensor-op math. The kept math type is
 * left on cd (a descriptor of this plan and pass alone). Never called
 * during graph capture. get(perf, cap, &got) queries; run(algo) executes.
 * *log says what happened when nothing ran. */
template <typename Perf, typename Algo, typename Get, typename Run>
static bool try_algos(Get get, Run run, cudnnConvolutionDescriptor_t cd, size_t ws,
                      int force_math, Algo *algo, trial_log *log)
{
    memset(log, 0, sizeof *log);
    Perf perf[16];
    int got = 0;
    cudnnStatus_t st = get(perf, 16, &got);
    if (st != CUDNN_STATUS_SUCCESS) {
        log->query = st;
        cudnnGetLastErrorString(log->detail, sizeof log->detail);
        return false;
    }
    log->candidates = got;
    for (int i = 0; i < got; i++) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS) {
            if (log->refused++ == 0)
                log->refusal = perf[i].status;
            continue;
        }
        if (perf[i].memory > ws) {
            log->too_big++;
            continue;
        }
        cudnnMathType_t m = force_math >= 0 ? (cudnnMathType_t)force_math : perf[i].mathType;
        if (m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
            m = CUDNN_TENSOR_OP_MATH;   /* never fp32 -> fp16 inside a conv */
        st = cudnnSetConvolutionMathType(cd, m);
        if (st == CUDNN_STATUS_SUCCESS)
            st = run(perf[i].algo);
        if (st == CUDNN_STATUS_SUCCESS) {
            *algo = perf[i].algo;
            return true;
        }
        log->failed++;
        log->run = st;
        log->cuda = cudaGetLastError();   /* a refused launch must not fail a later check */
        cudnnGetLastErrorString(log->detail, sizeof log->detail);
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
 * plan p of cs (every pass it has; backward data only where it runs). */
static size_t ws_need(cudnnHandle_t h, const conv_shape *cs, const conv_plan *p)
{
    size_t need = 0, w;
    int got = 0;
    cudnnConvolutionFwdAlgoPerf_t pf[16];
    if (cudnnGetConvolutionForwardAlgorithm_v7(h, p->xd, cs->wd, p->cd[PASS_FWD], p->yd, 16, &got,
                                               pf) == 0)
        need = first_feasible_memory(pf, got);
    if (cs->npass < PASSES)
        return need;
    cudnnConvolutionBwdDataAlgoPerf_t pd[16];
    if (bwd_data_betas[cs->id] &&
        cudnnGetConvolutionBackwardDataAlgorithm_v7(h, cs->wd, p->yd, p->cd[PASS_DATA], p->xd, 16,
                                                    &got, pd) == 0 &&
        (w = first_feasible_memory(pd, got)) > need)
        need = w;
    cudnnConvolutionBwdFilterAlgoPerf_t pw[16];
    if (cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, p->xd, p->yd, p->cd[PASS_FILT], cs->wd,
                                                      16, &got, pw) == 0 &&
        (w = first_feasible_memory(pw, got)) > need)
        need = w;
    return need;
}

/* Choose plan p's forward algorithm by running the candidates on x, w, y. */
static bool pick_fwd(cudnnHandle_t h, const conv_shape *cs, conv_plan *p, const void *x,
                     const void *w, void *y, void *ws, size_t wss, int force_math,
                     trial_log *log)
{
    const float one = 1.0f, zero = 0.0f;
    cudnnConvolutionDescriptor_t cd = p->cd[PASS_FWD];
    return try_algos<cudnnConvolutionFwdAlgoPerf_t>(
        [&](cudnnConvolutionFwdAlgoPerf_t *pf, int cap, int *got) {
            return cudnnGetConvolutionForwardAlgorithm_v7(h, p->xd, cs->wd, cd, p->yd, cap, got,
                                                          pf);
        },
        [&](cudnnConvolutionFwdAlgo_t a) {
            return cudnnConvolutionForward(h, &one, p->xd, x, cs->wd, w, cd, a, ws, wss, &zero,
                                           p->yd, y);
        },
        cd, wss, force_math, &p->fwd, log);
}

/* Workspace size from the heuristics' wish: at least lo, at most 1 GiB (a
 * larger ask falls to the next candidate). */
static size_t ws_clamp(size_t need, size_t lo)
{
    if (need < lo)
        need = lo;
    return need > (1024u << 20) ? (1024u << 20) : need;
}

/* ---- the context ---- */

enum { GRAPH_NONE, GRAPH_LIVE, GRAPH_FAILED };

/* One inference precision (index NN_PRECISION_FP32 or _BF16): weight
 * copies in the NHWC filter layout, the two 3x3 convs' plans for every
 * bucket, its workspace (a captured graph holds its pointer, so no other
 * path may grow it), and a CUDA graph per bucket. */
struct infer_path {
    bool ready;
    bool dirty;                 /* weight copies older than params */
    bool bf;                    /* bf16, else fp32 */
    size_t esize;               /* bytes per element */
    void *w_in;                 /* (C, 3, 3, in_pad(P)) */
    void *w_trunk;              /* B x 2 x wstride, each (C, 3, 3, C) */
    size_t wstride;             /* elements per trunk filter, 256-byte aligned */
    void *w_pol1, *w_val1;      /* (Hp, C), (Hv, C) */
    conv_shape in, trunk;
    void *ws;
    size_t ws_size;
    cudaGraphExec_t *graph;     /* [nbuckets] */
    unsigned char *state;       /* [nbuckets] GRAPH_* */
    unsigned char *uses;        /* [nbuckets] forward calls, up to 255 */
};

/* The inference buffers, shared by both precisions and sized for fp32 (a
 * bf16 path uses half of x8, t and y). */
struct infer_state {
    bool ready;
    float *in;                  /* (N, P, HW) */
    void *x8;                   /* (N, HW, in_pad(P)) */
    float *mask, *legal;        /* (N, HW) */
    float *xf;                  /* (N, HW, C) the residual stream, fp32 */
    bf16 *xt;                   /* (N, HW, C) xf in bf16: the bf16 path's conv and head input */
    void *t, *y;                /* (N, HW, C) */
    float *head;                /* (N * HW, max(Hp, Hv)) */
    float *plog;                /* (N, HW) */
    float *pooled, *vh, *vl;    /* (N, Hf), (N, Vh), (N, 3) */
    float *policy, *value;      /* (N, HW), (N, 3) */
    float *h_in, *h_policy, *h_value;   /* pinned */
};

struct train_state {
    float *grad;                        /* (dparams) device layout */
    float *in, *ptarget, *vtarget;      /* (N, P, HW), (N, K, HW), (N, 3) */
    float *mask, *legal, *count;        /* (N, HW), (N, HW), (N) */
    float *xs;                          /* (B + 1) x act_stride: block inputs, x_B the trunk output */
    float *ts;                          /* B x act_stride: inner activations */
    float *tmp;                         /* (N, C, HW) conv output */
    float *ph, *dph;                    /* (N, Hp, HW) */
    float *vg, *dvg;                    /* (N, Hv, HW) */
    float *plog, *dplog;                /* (N, K, HW) */
    float *pooled, *dpooled;            /* (N, Hf) */
    int *argmax;                        /* (N, Hv): each value channel's max point */
    float *h1, *dh1;                    /* (N, Vh) */
    float *vl, *dvl;                    /* (N, 3) */
    float *lp, *lv;                     /* (N, K), (N) per-sample losses */
    float *dx, *dz, *dt;                /* (N, C, HW) */
    unsigned long long *segs;           /* weight segments (device offset, count) */
    int nsegs;
    float *partials;                    /* (nsegs * L2_CHUNKS) */
    float *loss;                        /* (6) */
    void *ws;
    size_t ws_size;
    float *h_loss;                      /* pinned (6) */
    unsigned long long *h_segs;         /* pinned */
    float *h_in, *h_pt, *h_vt;          /* pinned staging for a caller's unpinned batch; NULL
                                         * until one arrives */
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
    int Hf;                     /* the value head's pooled features (nn_value_features) */
    int K;                      /* policy outputs; forward uses channel 0 */
    bool tf32;                  /* training convs may use TF32 tensor cores */
    bool graphs_on;             /* GZ_CUDA_GRAPHS != 0 */
    int break_capture;          /* tests: the bucket size whose capture is made to fail
                                 * (GZ_CUDA_TEST_BREAK_CAPTURE), 0: none */
    int prec;                   /* forward's precision: NN_PRECISION_FP32 or _BF16 */

    cudaStream_t stream;
    cudnnHandle_t dnn;
    cublasHandle_t blas;
    void *blas_ws;

    float *params;              /* (dparams) fp32 master weights */
    float *mom;                 /* (dparams) Nesterov momentum */
    infer_state inf;
    infer_path path[2];         /* [NN_PRECISION_FP32], [NN_PRECISION_BF16] */
    unsigned long long graph_launches, plain_runs;
    char graph_error[200];

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
    return 0;
}

/* A shape just made by its init (status st): its plan descriptors at
 * batch n, and its output keeps the plane; 0, or -1 with err naming what. */
static int check_shape_plan(conv_shape *cs, cudnnStatus_t st, int n, const char *what,
                            char *err, size_t errlen)
{
    if (st == CUDNN_STATUS_SUCCESS)
        st = conv_plan_desc(cs, 0, n);
    if (st != CUDNN_STATUS_SUCCESS) {
        snprintf(err, errlen, "%s descriptors: %s%s", what, cudnnGetErrorString(st),
                 cudnn_detail());
        return -1;
    }
    return check_out_dims(cs, 0, n, what, err, errlen);
}

/* Shape logic without a device: every descriptor the backend builds for
 * cfg at batch n keeps the M x M plane. */
static int cu_check_shapes(const nn_config_t *cfg, int n, char *err, size_t errlen)
{
    if (cfg_rules(cfg, err, errlen) != 0)
        return -1;
    if (n < 1) {
        snprintf(err, errlen, "batch size must be at least 1, got %d", n);
        return -1;
    }
    int M = cfg->board_max, C = cfg->channels, rc = -1, ns = 0;
    conv_shape cs[4 + CONV_SHAPES];
    char what[64];
    memset(cs, 0, sizeof cs);
    for (int bf = 0; bf < 2; bf++)
        for (int id = CONV_IN; id <= CONV_TRUNK; id++, ns++) {
            snprintf(what, sizeof what, "%s %s", bf ? "bf16" : "fp32", conv_names[id]);
            cudnnStatus_t st = infer_shape_init(&cs[ns], id, cfg->in_planes, C, M, bf, 1);
            if (check_shape_plan(&cs[ns], st, n, what, err, errlen))
                goto out;
        }
    for (int s = 0; s < CONV_SHAPES; s++, ns++) {
        snprintf(what, sizeof what, "training %s", conv_names[s]);
        if (check_shape_plan(&cs[ns], train_shape_init(&cs[ns], cfg, s, 1), n, what, err, errlen))
            goto out;
    }
    rc = 0;
out:
    for (int i = 0; i < (int)(sizeof cs / sizeof cs[0]); i++)
        conv_shape_free(&cs[i]);
    return rc;
}

/* ---- inference forward ---- */

static void infer_state_free(infer_state *s)
{
    void *dev[] = {s->in, s->x8, s->mask, s->legal, s->xf, s->xt, s->t, s->y, s->head, s->plog, s->pooled,
                   s->vh, s->vl, s->policy, s->value};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            cudaFree(dev[i]);
    void *host[] = {s->h_in, s->h_policy, s->h_value};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        if (host[i])
            cudaFreeHost(host[i]);
    memset(s, 0, sizeof *s);
}

/* The inference buffers, for max_batch (module lock held). 0, or -1 with
 * err and nothing left allocated. */
static int infer_state_init(nn_ctx *c, char *err, size_t errlen)
{
    infer_state *s = &c->inf;
    size_t N = (size_t)c->max_batch, HW = (size_t)c->HW, C = (size_t)c->C;
    size_t H = (size_t)(c->Hp > c->Hv ? c->Hp : c->Hv);
    int dev = c->device;
#define DEV(ptr, bytes) TRY_GPU(dev, cudaMalloc((void **)&(ptr), (size_t)(bytes) + 16))
    DEV(s->in, N * c->P * HW * sizeof(float));
    DEV(s->x8, N * HW * in_pad(c->P) * sizeof(float));
    DEV(s->mask, N * HW * sizeof(float));
    DEV(s->legal, N * HW * sizeof(float));
    DEV(s->xf, N * HW * C * sizeof(float));
    DEV(s->xt, N * HW * C * sizeof(bf16));
    DEV(s->t, N * HW * C * sizeof(float));
    DEV(s->y, N * HW * C * sizeof(float));
    DEV(s->head, N * HW * H * sizeof(float));
    DEV(s->plog, N * HW * sizeof(float));
    DEV(s->pooled, N * c->Hf * sizeof(float));
    DEV(s->vh, N * c->Vh * sizeof(float));
    DEV(s->vl, N * NN_VALUE_OUTPUTS * sizeof(float));
    DEV(s->policy, N * HW * sizeof(float));
    DEV(s->value, N * NN_VALUE_OUTPUTS * sizeof(float));
#undef DEV
    TRY_GPU(dev, cudaMallocHost((void **)&s->h_in, N * c->P * HW * sizeof(float)));
    TRY_GPU(dev, cudaMallocHost((void **)&s->h_policy, N * HW * sizeof(float)));
    TRY_GPU(dev, cudaMallocHost((void **)&s->h_value, N * NN_VALUE_OUTPUTS * sizeof(float)));
    /* zeros: the padding rows of a bucket stay finite */
    memset(s->h_in, 0, N * c->P * HW * sizeof(float));
    TRY_GPU(dev, cudaMemsetAsync(s->x8, 0, N * HW * in_pad(c->P) * sizeof(float), c->stream));
    TRY_GPU(dev, cudaMemsetAsync(s->xf, 0, N * HW * C * sizeof(float), c->stream));
    TRY_GPU(dev, cudaMemsetAsync(s->xt, 0, N * HW * C * sizeof(bf16), c->stream));
    TRY_GPU(dev, cudaStreamSynchronize(c->stream));
    s->ready = true;
    return 0;
fail:
    cudaStreamSynchronize(c->stream);
    infer_state_free(s);
    return -1;
}

static void infer_path_free(infer_path *p, int nbuckets)
{
    if (p->graph)
        for (int i = 0; i < nbuckets; i++)
            if (p->graph[i])
                cudaGraphExecDestroy(p->graph[i]);
    free(p->graph);
    free(p->state);
    free(p->uses);
    conv_shape_free(&p->in);
    conv_shape_free(&p->trunk);
    void *dev[] = {p->w_in, p->w_trunk, p->w_pol1, p->w_val1, p->ws};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            cudaFree(dev[i]);
    memset(p, 0, sizeof *p);
}

/* Precision prec's path (module lock held, inference buffers ready):
 * weight copies, plans of every bucket (algorithms tried on the real
 * buffers), workspace, graph slots. 0, or -1 with err and nothing left. */
static int infer_path_init(nn_ctx *c, int prec, char *err, size_t errlen)
{
    infer_path *p = &c->path[prec];
    infer_state *s = &c->inf;
    int dev = c->device, C = c->C, nb = c->nbuckets, force = -1;
    size_t esize, need = 0;
    const char *pname = prec == NN_PRECISION_BF16 ? "bf16" : "fp32";
    cudnnStatus_t st;
    memset(p, 0, sizeof *p);
    p->bf = prec == NN_PRECISION_BF16;
    p->esize = esize = p->bf ? sizeof(bf16) : sizeof(float);
    p->wstride = ((size_t)C * 9 * C * esize + 255) / 256 * 256 / esize;
    /* fp32 means fp32: no TF32 in its convolutions */
    force = p->bf ? -1 : (int)CUDNN_FMA_MATH;
    TRY_GPU(dev, cudaMalloc(&p->w_in, (size_t)C * 9 * in_pad(c->P) * esize));
    TRY_GPU(dev, cudaMalloc(&p->w_trunk, (size_t)(2 * c->B) * p->wstride * esize + 16));
    TRY_GPU(dev, cudaMalloc(&p->w_pol1, (size_t)c->Hp * C * esize));
    TRY_GPU(dev, cudaMalloc(&p->w_val1, (size_t)c->Hv * C * esize));
    /* zeros: the trials below run on them before the first conversion */
    TRY_GPU(dev, cudaMemsetAsync(p->w_in, 0, (size_t)C * 9 * in_pad(c->P) * esize, c->stream));
    TRY_GPU(dev, cudaMemsetAsync(p->w_trunk, 0, (size_t)(2 * c->B) * p->wstride * esize + 16,
                                 c->stream));
    p->graph = (cudaGraphExec_t *)calloc((size_t)nb, sizeof(cudaGraphExec_t));
    p->state = (unsigned char *)calloc((size_t)nb, 1);
    p->uses = (unsigned char *)calloc((size_t)nb, 1);
    if (!p->graph || !p->state || !p->uses) {
        snprintf(err, errlen, "cuda:%d: out of host memory", dev);
        goto fail;
    }
    if ((st = infer_shape_init(&p->in, CONV_IN, c->P, C, c->M, p->bf, nb)) ||
        (st = infer_shape_init(&p->trunk, CONV_TRUNK, c->P, C, c->M, p->bf, nb))) {
        snprintf(err, errlen, "cuda:%d: %s inference descriptors: %s%s", dev, pname,
                 cudnnGetErrorString(st), cudnn_detail());
        goto fail;
    }
    for (int bi = 0, n = 1; bi < nb; bi++, n = nn_cuda_bucket_next(n)) {
        n = n > c->max_batch ? c->max_batch : n;
        if ((st = conv_plan_desc(&p->in, bi, n)) || (st = conv_plan_desc(&p->trunk, bi, n))) {
            snprintf(err, errlen, "cuda:%d: %s inference descriptors at batch %d: %s%s", dev,
                     pname, n, cudnnGetErrorString(st), cudnn_detail());
            goto fail;
        }
    }
    /* a workspace for what the heuristics' first choices want at max_batch,
     * at least 32 MiB */
    need = ws_need(c->dnn, &p->in, &p->in.plan[nb - 1]);
    if (c->B > 0) {
        size_t w = ws_need(c->dnn, &p->trunk, &p->trunk.plan[nb - 1]);
        need = w > need ? w : need;
    }
    p->ws_size = ws_clamp(need, 32u << 20);
    TRY_GPU(dev, cudaMalloc(&p->ws, p->ws_size));
    for (int bi = 0, n = 1; bi < nb; bi++, n = nn_cuda_bucket_next(n)) {
        n = n > c->max_batch ? c->max_batch : n;
        trial_log log;
        const char *which = conv_names[CONV_IN];
        /* no blocks: no trunk conv to choose (and no trunk weights to run it on) */
        bool ok = pick_fwd(c->dnn, &p->in, &p->in.plan[bi], s->x8, p->w_in, s->y, p->ws,
                           p->ws_size, force, &log);
        if (ok && c->B > 0) {
            which = conv_names[CONV_TRUNK];
            ok = pick_fwd(c->dnn, &p->trunk, &p->trunk.plan[bi],
                          p->bf ? (const void *)s->xt : (const void *)s->xf, p->w_trunk, s->y,
                          p->ws, p->ws_size, force, &log);
        }
        if (!ok) {
            char say[400];
            trial_say(&log, say, sizeof say);
            snprintf(err, errlen,
                     "cuda:%d: no cuDNN %s algorithm runs the %s at batch %d within %zu MiB of "
                     "workspace: %s",
                     dev, pname, which, n, p->ws_size >> 20, say);
            goto fail;
        }
        p->in.plan[bi].set = p->trunk.plan[bi].set = true;
    }
    TRY_GPU(dev, cudaStreamSynchronize(c->stream));
    p->dirty = true;
    p->ready = true;
    return 0;
fail:
    cudaStreamSynchronize(c->stream);
    infer_path_free(p, nb);
    return -1;
}

/* Everything forward at precision prec needs (module lock held). 0, or -1
 * with err. */
static int infer_ensure(nn_ctx *c, int prec, char *err, size_t errlen)
{
    if (cudaSetDevice(c->device) != cudaSuccess) {
        snprintf(err, errlen, "cuda:%d: cudaSetDevice failed", c->device);
        return -1;
    }
    if (!c->inf.ready && infer_state_init(c, err, errlen) != 0)
        return -1;
    return c->path[prec].ready ? 0 : infer_path_init(c, prec, err, errlen);
}

template <typename T> static cudaDataType_t blas_type();
template <> cudaDataType_t blas_type<bf16>() { return CUDA_R_16BF; }
template <> cudaDataType_t blas_type<float>() { return CUDA_R_32F; }

/* Refresh path p's weight copies (type T) from the fp32 master copy. */
template <typename T> static void convert_weights(nn_ctx *c, infer_path *p)
{
    cudaStream_t s = c->stream;
    size_t n = (size_t)c->C * 9 * in_pad(c->P);
    k_filter_krsc<T><<<blocks_for(n, THREADS), THREADS, 0, s>>>(c->params + c->D.in_w, c->C, c->P,
                                                                9, in_pad(c->P), (T *)p->w_in);
    LAUNCH_CHECK();
    size_t wsz = (size_t)c->C * 9 * c->C;
    for (int b = 0; b < c->B; b++)
        for (int k = 0; k < 2; k++) {
            k_filter_krsc<T><<<blocks_for(wsz, THREADS), THREADS, 0, s>>>(
                c->params + (k ? blk_w2(c, b) : blk_w1(c, b)), c->C, c->C, 9, c->C,
                (T *)p->w_trunk + (size_t)(2 * b + k) * p->wstride);
            LAUNCH_CHECK();
        }
    size_t np = (size_t)c->Hp * c->C, nv = (size_t)c->Hv * c->C;
    k_filter_krsc<T><<<blocks_for(np, THREADS), THREADS, 0, s>>>(c->params + c->D.pol_w1, c->Hp,
                                                                 c->C, 1, c->C, (T *)p->w_pol1);
    LAUNCH_CHECK();
    k_filter_krsc<T><<<blocks_for(nv, THREADS), THREADS, 0, s>>>(c->params + c->D.val_w1, c->Hv,
                                                                 c->C, 1, c->C, (T *)p->w_val1);
    LAUNCH_CHECK();
    p->dirty = false;
}

/* 1x1 conv of the NHWC trunk output: out (rows, K) fp32 = x (rows, C) W^T,
 * x and W (K, C) of type T; fp32 accumulation (for fp32 operands plain
 * FP32: the handle's default math mode allows no TF32). */
template <typename T>
static void head_gemm(nn_ctx *c, int rows, const T *x, const T *w, int K, float *out)
{
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasGemmEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, K, rows, c->C, &one, w,
                              blas_type<T>(), c->C, x, blas_type<T>(), c->C, &zero, out,
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

/* The value head's FC layers on the stream: pooled (n, Hf) -> h1 (n, Vh)
 * = relu(fc1) -> vl (n, 3) logits (fc2 without its bias). */
static void value_fc(nn_ctx *c, int n, const float *pooled, float *h1, float *vl)
{
    const nn_layout_t *D = &c->D;
    size_t total = (size_t)n * c->Vh;
    fc_forward(c->blas, n, pooled, c->Hf, c->params + D->val_fc1_w, c->Vh, h1);
    k_bias_act<float><<<blocks_for(total, THREADS), THREADS, 0, c->stream>>>(
        h1, c->params + D->val_fc1_b, NULL, NULL, h1, total, c->Vh, 1, 0, 1);
    LAUNCH_CHECK();
    fc_forward(c->blas, n, h1, c->Vh, c->params + D->val_fc2_w, NN_VALUE_OUTPUTS, vl);
}

/* y = conv(x) of plan bi of an inference conv. */
static void conv_infer(nn_ctx *c, const infer_path *p, const conv_shape *cs, int bi,
                       const void *x, const void *w, void *y)
{
    const float one = 1.0f, zero = 0.0f;
    const conv_plan *pl = &cs->plan[bi];
    CUDNN_CHECK(cudnnConvolutionForward(c->dnn, &one, pl->xd, x, cs->wd, w, pl->cd[PASS_FWD],
                                        pl->fwd, p->ws, p->ws_size, &zero, pl->yd, y));
}

/* The whole forward of path p (type T) for bucket bi of n rows, from the
 * pinned input to the pinned outputs, enqueued on the stream (also what a
 * CUDA graph captures). The residual stream xf stays fp32; the convs and
 * head GEMMs read it as T (xt for bf16, xf itself for fp32). */
template <typename T> static void fwd_enqueue(nn_ctx *c, infer_path *p, int bi, int n)
{
    cudaStream_t s = c->stream;
    infer_state *f = &c->inf;
    int HW = c->HW, rows = n * HW;
    size_t act = (size_t)rows * c->C;
    const nn_layout_t *D = &c->D;
    T *x8 = (T *)f->x8, *t = (T *)f->t, *y = (T *)f->y;
    T *xt = p->bf ? (T *)f->xt : NULL;            /* T copy of the stream (bf16 only) */
    const T *xin = p->bf ? (const T *)f->xt : (const T *)f->xf;
    CUDA_CHECK(cudaMemcpyAsync(f->in, f->h_in, (size_t)n * c->P * HW * sizeof(float),
                               cudaMemcpyHostToDevice, s));
    k_prep<T><<<blocks_for(rows, THREADS), THREADS, 0, s>>>(f->in, n, c->P, in_pad(c->P), HW, x8,
                                                            f->mask, f->legal);
    LAUNCH_CHECK();
    unsigned g = blocks_for(act, THREADS);
    conv_infer(c, p, &p->in, bi, x8, p->w_in, y);
    k_residual<T><<<g, THREADS, 0, s>>>(y, c->params + D->in_b, false, f->mask, f->xf, xt, act,
                                        c->C);
    LAUNCH_CHECK();
    for (int b = 0; b < c->B; b++) {
        const T *w1 = (const T *)p->w_trunk + (size_t)(2 * b) * p->wstride, *w2 = w1 + p->wstride;
        conv_infer(c, p, &p->trunk, bi, xin, w1, y);
        k_bias_act<T><<<g, THREADS, 0, s>>>(y, c->params + blk_b1(c, b), NULL, f->mask, t, act,
                                            c->C, HW, 1, 1);
        LAUNCH_CHECK();
        conv_infer(c, p, &p->trunk, bi, t, w2, y);
        k_residual<T><<<g, THREADS, 0, s>>>(y, c->params + blk_b2(c, b), true, f->mask, f->xf,
                                            xt, act, c->C);
        LAUNCH_CHECK();
    }
    /* policy head */
    head_gemm<T>(c, rows, xin, (const T *)p->w_pol1, c->Hp, f->head);
    k_policy_logits<<<blocks_for(rows, THREADS), THREADS, 0, s>>>(
        f->head, c->params + D->pol_b1, c->params + D->pol_w2, c->params + D->pol_b2, c->Hp,
        rows, f->plog);
    LAUNCH_CHECK();
    k_policy_softmax<<<n, THREADS, 0, s>>>(f->plog, f->legal, HW, 1, f->policy, NULL, 0.0f,
                                           policy_weights_of(NULL), NULL, NULL);
    LAUNCH_CHECK();
    /* value head */
    head_gemm<T>(c, rows, xin, (const T *)p->w_val1, c->Hv, f->head);
    k_value_pool_rows<<<n, 128, 0, s>>>(f->head, c->params + D->val_b1, f->mask, HW, c->Hv,
                                        c->Hf, f->pooled);
    LAUNCH_CHECK();
    value_fc(c, n, f->pooled, f->vh, f->vl);
    k_value_softmax<<<blocks_for(n, 128), 128, 0, s>>>(f->vl, c->params + D->val_fc2_b, n,
                                                       f->value, NULL, 0.0f, NULL, NULL);
    LAUNCH_CHECK();
    CUDA_CHECK(cudaMemcpyAsync(f->h_policy, f->policy, (size_t)n * HW * sizeof(float),
                               cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaMemcpyAsync(f->h_value, f->value, (size_t)n * NN_VALUE_OUTPUTS * sizeof(float),
                               cudaMemcpyDeviceToHost, s));
}

static void fwd_run(nn_ctx *c, infer_path *p, int bi, int n)
{
    if (p->bf)
        fwd_enqueue<bf16>(c, p, bi, n);
    else
        fwd_enqueue<float>(c, p, bi, n);
}

/* Capture path p's forward of bucket bi (n rows) into a graph (module lock
 * held). A failure leaves this bucket without a graph (one line on stderr,
 * kept in graph_error), the other buckets as they were. */
static void capture_graph(nn_ctx *c, infer_path *p, int bi, int n)
{
    soft_err se;
    se.failed = false;
    se.what[0] = '\0';
    cudaGraph_t g = NULL;
    t_soft = &se;
    cudaError_t e = cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal);
    if (e == cudaSuccess) {
        fwd_run(c, p, bi, n);
        if (n == c->break_capture)   /* tests: a call capture does not allow */
            (void)cudaStreamSynchronize(c->stream);
        e = cudaStreamEndCapture(c->stream, &g);
    }
    t_soft = nullptr;
    if (e == cudaSuccess && !se.failed)
        e = cudaGraphInstantiate(&p->graph[bi], g, 0);
    if (g)
        cudaGraphDestroy(g);
    if (e != cudaSuccess || se.failed) {
        snprintf(c->graph_error, sizeof c->graph_error, "%s forward, batch %d: %s",
                 p->bf ? "bf16" : "fp32", n, se.failed ? se.what : cudaGetErrorName(e));
        fprintf(stderr, "nn_cuda: cuda:%d: CUDA graph capture failed (%s); this batch size "
                "runs without a graph\n", c->device, c->graph_error);
        (void)cudaGetLastError();
        p->graph[bi] = NULL;
        p->state[bi] = GRAPH_FAILED;
        return;
    }
    p->state[bi] = GRAPH_LIVE;
}

/* Runs at the bucket size of n: rows n..bucket-1 of the pinned input are
 * zeros or an earlier call's rows; their outputs are not returned. A
 * precision not built yet is built here, and a failure to build it stops
 * the process with the reason (set_precision reports it instead). */
static void cuda_forward(nn_ctx_t *c, const float *in, int n, float *policy, float *value)
{
    assert(n >= 0 && n <= c->max_batch);
    if (n == 0)
        return;
    CUDA_CHECK(cudaSetDevice(c->device));
    infer_path *p = &c->path[c->prec];
    if (!c->inf.ready || !p->ready) {
        char err[512];
        module_lock();
        int rc = infer_ensure(c, c->prec, err, sizeof err);
        module_unlock();
        if (rc != 0) {
            fprintf(stderr, "nn_cuda: forward: %s\n", err);
            abort();
        }
    }
    int nb = nn_cuda_bucket(n, c->max_batch), bi = nn_cuda_bucket_index(nb, c->max_batch);
    memcpy(c->inf.h_in, in, (size_t)n * c->P * c->HW * sizeof(float));
    /* a bucket's first run loads kernels (CUDA loads them lazily: cuBLAS's
     * for these sizes, our own), which another thread's capture must not
     * see: under the lock too (it never captures: that is the second run) */
    bool first = p->uses[bi] == 0;
    if (first)
        module_lock();
    if (p->dirty) {
        if (p->bf)
            convert_weights<bf16>(c, p);
        else
            convert_weights<float>(c, p);
    }
    if (c->graphs_on && p->state[bi] == GRAPH_NONE && p->uses[bi] >= 1) {
        module_lock();
        capture_graph(c, p, bi, nb);
        module_unlock();
    }
    if (p->uses[bi] < 255)
        p->uses[bi]++;
    if (p->state[bi] == GRAPH_LIVE) {
        CUDA_CHECK(cudaGraphLaunch(p->graph[bi], c->stream));
        c->graph_launches++;
    } else {
        fwd_run(c, p, bi, nb);
        c->plain_runs++;
    }
    CUDA_CHECK(cudaStreamSynchronize(c->stream));
    if (first)
        module_unlock();
    memcpy(policy, c->inf.h_policy, (size_t)n * c->HW * sizeof(float));
    memcpy(value, c->inf.h_value, (size_t)n * NN_VALUE_OUTPUTS * sizeof(float));
}

/* fp32 or bf16 (auto: bf16, the tensor-core path), building what it needs
 * now so a failure is an error here, not a stop in forward. */
static int cuda_set_precision(nn_ctx_t *c, nn_precision_t p, char *msg, size_t msglen)
{
    if (msg && msglen)
        msg[0] = '\0';
    int want = p == NN_PRECISION_FP32 ? NN_PRECISION_FP32 : NN_PRECISION_BF16;
    char err[512];
    module_lock();
    int rc = infer_ensure(c, want, err, sizeof err);
    module_unlock();
    if (rc != 0) {
        snprintf(msg, msglen, "%s", err);
        c->prec = NN_PRECISION_FP32;
        return -1;
    }
    c->prec = want;
    return want;
}

/* ---- training ---- */

static void conv_fwd_f32(nn_ctx *c, const conv_shape *cs, int bi, const float *x, size_t w_off,
                         float *y)
{
    train_state *tr = c->tr;
    const float one = 1.0f, zero = 0.0f;
    const conv_plan *p = &cs->plan[bi];
    CUDNN_CHECK(cudnnConvolutionForward(c->dnn, &one, p->xd, x, cs->wd, c->params + w_off,
                                        p->cd[PASS_FWD], p->fwd, tr->ws, tr->ws_size, &zero,
                                        p->yd, y));
}

/* dx (+)= conv^T(dy): beta 0 overwrites dx, 1 accumulates; only with a beta
 * the algorithm was tried with (bwd_data_betas). */
static void conv_bwd_data(nn_ctx *c, const conv_shape *cs, int bi, const float *dy,
                          size_t w_off, float beta, float *dx)
{
    assert(bwd_data_betas[cs->id] & (beta == 0.0f ? BETA0 : BETA1));
    train_state *tr = c->tr;
    const float one = 1.0f;
    const conv_plan *p = &cs->plan[bi];
    CUDNN_CHECK(cudnnConvolutionBackwardData(c->dnn, &one, cs->wd, c->params + w_off, p->yd, dy,
                                             p->cd[PASS_DATA], p->data, tr->ws, tr->ws_size,
                                             &beta, p->xd, dx));
}

/* grad[w_off...] = dL/dw from x and dy. */
static void conv_bwd_filter(nn_ctx *c, const conv_shape *cs, int bi, const float *x,
                            const float *dy, size_t w_off)
{
    train_state *tr = c->tr;
    const float one = 1.0f, zero = 0.0f;
    const conv_plan *p = &cs->plan[bi];
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(c->dnn, &one, p->xd, x, p->yd, dy,
                                               p->cd[PASS_FILT], p->filt, tr->ws, tr->ws_size,
                                               &zero, cs->wd, tr->grad + w_off));
}

/* Training algorithms for bucket bi (n rows), on first use of that bucket
 * (module lock held), before the batch is copied in (the trial runs write
 * the buffers the pass then overwrites). Each conv is tried on the buffers
 * the pass runs it on; backward data with each beta it runs with (onto
 * zeroed gradient buffers), and not at all for the input conv. 0, or -1
 * with err naming the conv, the pass and what cuDNN said. */
static int choose_train(nn_ctx *c, int bi, int n, char *err, size_t errlen)
{
    train_state *tr = c->tr;
    float *xB = tr->xs + (size_t)c->B * nn_cuda_align((size_t)c->max_batch * c->C * c->HW);
    /* x, y, weight offset and backward-data destination of each conv in the pass */
    float *xs[CONV_SHAPES] = {tr->in, tr->xs, xB, tr->ph, xB};
    float *ys[CONV_SHAPES] = {tr->tmp, tr->tmp, tr->ph, tr->plog, tr->vg};
    float *dxs[CONV_SHAPES] = {NULL, tr->dt, tr->dx, tr->dph, tr->dx};
    size_t ws[CONV_SHAPES] = {c->D.in_w, c->B ? blk_w1(c, 0) : c->D.in_w, c->D.pol_w1,
                              c->D.pol_w2, c->D.val_w1};
    int force = c->tf32 ? -1 : (int)CUDNN_FMA_MATH;
    cudnnHandle_t h = c->dnn;
    for (int s = 0; s < CONV_SHAPES; s++) {
        if (s == CONV_TRUNK && c->B == 0)
            continue;
        conv_shape *cs = &tr->conv[s];
        conv_plan *p = &cs->plan[bi];
        if (p->set)
            continue;
        if (!p->xd) {
            cudnnStatus_t st = conv_plan_desc(cs, bi, n);
            if (st != CUDNN_STATUS_SUCCESS) {
                snprintf(err, errlen, "cuda:%d: training descriptors of the %s at batch %d: %s%s",
                         c->device, conv_names[s], n, cudnnGetErrorString(st), cudnn_detail());
                return -1;
            }
        }
        const float one = 1.0f;
        float *x = xs[s], *y = ys[s], *w = c->params + ws[s], *g = tr->grad + ws[s];
        float *dx = dxs[s];
        unsigned betas = bwd_data_betas[s];
        trial_log log;
        const char *what = NULL;
        if (!pick_fwd(h, cs, p, x, w, y, tr->ws, tr->ws_size, force, &log))
            what = "forward";
        else if (betas &&
                 !try_algos<cudnnConvolutionBwdDataAlgoPerf_t>(
                     [&](cudnnConvolutionBwdDataAlgoPerf_t *pd, int cap, int *got) {
                         return cudnnGetConvolutionBackwardDataAlgorithm_v7(
                             h, cs->wd, p->yd, p->cd[PASS_DATA], p->xd, cap, got, pd);
                     },
                     [&](cudnnConvolutionBwdDataAlgo_t al) {
                         cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
                         for (int k = 0; k < 2 && st == CUDNN_STATUS_SUCCESS; k++) {
                             float beta = (float)k;
                             if (betas & (k ? BETA1 : BETA0))
                                 st = cudnnConvolutionBackwardData(h, &one, cs->wd, w, p->yd, y,
                                                                   p->cd[PASS_DATA], al, tr->ws,
                                                                   tr->ws_size, &beta, p->xd, dx);
                         }
                         return st;
                     },
                     p->cd[PASS_DATA], tr->ws_size, force, &p->data, &log))
            what = betas == BETA1 ? "backward data (beta 1)"
                   : betas == BETA0 ? "backward data (beta 0)"
                                    : "backward data (beta 0 and 1)";
        else if (!try_algos<cudnnConvolutionBwdFilterAlgoPerf_t>(
                     [&](cudnnConvolutionBwdFilterAlgoPerf_t *pf, int cap, int *got) {
                         return cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                             h, p->xd, p->yd, p->cd[PASS_FILT], cs->wd, cap, got, pf);
                     },
                     [&](cudnnConvolutionBwdFilterAlgo_t al) {
                         const float zero = 0.0f;
                         return cudnnConvolutionBackwardFilter(h, &one, p->xd, x, p->yd, y,
                                                               p->cd[PASS_FILT], al, tr->ws,
                                                               tr->ws_size, &zero, cs->wd, g);
                     },
                     p->cd[PASS_FILT], tr->ws_size, force, &p->filt, &log))
            what = "backward filter";
        if (what) {
            char say[400];
            trial_say(&log, say, sizeof say);
            snprintf(err, errlen,
                     "cuda:%d: no cuDNN fp32 %s algorithm runs for the %s at batch %d within "
                     "%zu MiB of workspace: %s",
                     c->device, what, conv_names[s], n, tr->ws_size >> 20, say);
            return -1;
        }
        p->set = true;
    }
    /* the trials wrote the backward buffers: beta-1 passes start from what
     * the pass writes first, never from these */
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
    if (tr->argmax)
        cudaFree(tr->argmax);
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

/* First training call (module lock held): every training buffer, sized
 * for max_batch. 0, or -1 with err set and nothing left allocated (the
 * context still runs forward; a later training call tries again). */
static int train_init(nn_ctx *c, char *err, size_t errlen)
{
    train_state *tr = (train_state *)calloc(1, sizeof *tr);
    if (!tr) {
        snprintf(err, errlen, "cuda:%d: out of host memory", c->device);
        return -1;
    }
    c->tr = tr;
    int dev = c->device, ns = 0;
    size_t N = (size_t)c->max_batch, HW = (size_t)c->HW, C = (size_t)c->C, K = (size_t)c->K;
    size_t act = N * C * HW, stride = nn_cuda_align(act), need = 64u << 20, sb = 0;
    DALLOC(tr->grad, c->dparams, "gradients");
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
    DALLOC(tr->pooled, N * c->Hf, "pooled");
    DALLOC(tr->dpooled, N * c->Hf, "pooled grad");
    DALLOC(tr->argmax, N * c->Hv, "value max points");
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
    HALLOC(tr->h_loss, 6, "pinned losses");
    /* every row starts as zeros: padding rows of a bucket stay finite, and
     * the beta-1 trials of choose_train read zeros */
    {
        struct { float *p; size_t n; } z[] = {
            {tr->grad, c->dparams}, {tr->in, N * c->P * HW}, {tr->ptarget, N * K * HW},
            {tr->vtarget, N * NN_VALUE_OUTPUTS}, {tr->dx, act}, {tr->dz, act}, {tr->dt, act},
            {tr->dph, N * c->Hp * HW}};
        for (size_t i = 0; i < sizeof z / sizeof z[0]; i++)
            TRY_GPU(dev, cudaMemsetAsync(z[i].p, 0, z[i].n * sizeof(float), c->stream));
    }
    /* weight segments (device offsets) for the L2 term: the tensors the reference decays */
    for (int i = 0; i < nn_param_tensors(&c->cfg); i++)
        ns += nn_param_tensor_is_weight(&c->cfg, i);
    sb = sizeof(unsigned long long) * 2 * (size_t)ns;
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
    TRY_GPU(dev, cudaMemcpyAsync(tr->segs, tr->h_segs, sb, cudaMemcpyHostToDevice, c->stream));
    DALLOC(tr->partials, (size_t)ns * L2_CHUNKS, "l2 partials");

    /* descriptors, the max_batch bucket's plan descriptors now, and a
     * workspace that fits the heuristics' first choices there (at least
     * 64 MiB) */
    for (int s = 0; s < CONV_SHAPES; s++) {
        conv_shape *cs = &tr->conv[s];
        int last = c->nbuckets - 1;
        cudnnStatus_t st = train_shape_init(cs, &c->cfg, s, c->nbuckets);
        if (st == CUDNN_STATUS_SUCCESS)
            st = conv_plan_desc(cs, last, c->max_batch);
        if (st != CUDNN_STATUS_SUCCESS) {
            snprintf(err, errlen, "cuda:%d: training descriptors of the %s: %s%s", dev,
                     conv_names[s], cudnnGetErrorString(st), cudnn_detail());
            goto fail;
        }
        size_t w = ws_need(c->dnn, cs, &cs->plan[last]);
        need = w > need ? w : need;
    }
    tr->ws_size = ws_clamp(need, 64u << 20);
    TRY_ALLOC(cudaMalloc(&tr->ws, tr->ws_size), tr->ws_size, "cuDNN workspace");
    TRY_GPU(dev, cudaStreamSynchronize(c->stream));
    return 0;

fail:
    cudaStreamSynchronize(c->stream);
    train_free(tr);
    c->tr = NULL;
    return -1;
}
#undef HALLOC
#undef DALLOC

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
    const conv_shape *cin = &tr->conv[CONV_IN], *ctr = &tr->conv[CONV_TRUNK];
    const conv_shape *cp1 = &tr->conv[CONV_P1], *cp2 = &tr->conv[CONV_P2];
    const conv_shape *cv1 = &tr->conv[CONV_V1];

    k_prep<float><<<blocks_for((size_t)nb * HW, THREADS), THREADS, 0, s>>>(
        tr->in, nb, c->P, in_pad(c->P), HW, NULL, tr->mask, tr->legal);
    LAUNCH_CHECK();
    /* trunk */
    float *x0 = tr->xs;
    conv_fwd_f32(c, cin, bi, tr->in, D->in_w, tr->tmp);
    k_bias_act<float><<<blocks_for(act, THREADS), THREADS, 0, s>>>(
        tr->tmp, c->params + D->in_b, NULL, tr->mask, x0, act, C, HW, 0, 1);
    LAUNCH_CHECK();
    for (int b = 0; b < B; b++) {
        float *xb = tr->xs + (size_t)b * stride, *xn = xb + stride, *tb = tr->ts + (size_t)b * stride;
        conv_fwd_f32(c, ctr, bi, xb, blk_w1(c, b), tr->tmp);
        k_bias_act<float><<<blocks_for(act, THREADS), THREADS, 0, s>>>(
            tr->tmp, c->params + blk_b1(c, b), NULL, tr->mask, tb, act, C, HW, 0, 1);
        LAUNCH_CHECK();
        conv_fwd_f32(c, ctr, bi, tb, blk_w2(c, b), tr->tmp);
        k_bias_act<float><<<blocks_for(act, THREADS), THREADS, 0, s>>>(
            tr->tmp, c->params + blk_b2(c, b), xb, tr->mask, xn, act, C, HW, 0, 1);
        LAUNCH_CHECK();
    }
    float *xB = tr->xs + (size_t)B * stride;
    /* policy head */
    size_t php = (size_t)nb * c->Hp * HW;
    conv_fwd_f32(c, cp1, bi, xB, D->pol_w1, tr->ph);
    k_bias_act<float><<<blocks_for(php, THREADS), THREADS, 0, s>>>(
        tr->ph, c->params + D->pol_b1, NULL, tr->mask, tr->ph, php, c->Hp, HW, 0, 1);
    LAUNCH_CHECK();
    conv_fwd_f32(c, cp2, bi, tr->ph, D->pol_w2, tr->plog);
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
    conv_fwd_f32(c, cv1, bi, xB, D->val_w1, tr->vg);
    k_bias_act<float><<<blocks_for(vgp, THREADS), THREADS, 0, s>>>(
        tr->vg, c->params + D->val_b1, NULL, tr->mask, tr->vg, vgp, c->Hv, HW, 0, 1);
    LAUNCH_CHECK();
    k_value_pool_nchw<<<blocks_for((size_t)nb * c->Hv * 32, 128), 128, 0, s>>>(
        tr->vg, tr->mask, nb, HW, c->Hv, c->Hf, tr->pooled, tr->count, tr->argmax);
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
    CUBLAS_CHECK(cublasSgemm(c->blas, CUBLAS_OP_N, CUBLAS_OP_T, c->Hf, c->Vh, nb, &one,
                             tr->pooled, c->Hf, tr->dh1, c->Vh, &zero, tr->grad + D->val_fc1_w,
                             c->Hf));
    k_bias_grad<<<c->Vh, THREADS, 0, s>>>(tr->dh1, nb, c->Vh, 1, tr->grad + D->val_fc1_b);
    LAUNCH_CHECK();
    CUBLAS_CHECK(cublasSgemm(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, c->Hf, nb, c->Vh, &one,
                             c->params + D->val_fc1_w, c->Hf, tr->dh1, c->Vh, &zero,
                             tr->dpooled, c->Hf));
    k_value_pool_back<<<blocks_for(vgp, THREADS), THREADS, 0, s>>>(
        tr->dpooled, tr->mask, tr->count, tr->argmax, tr->vg, nb, HW, c->Hv, c->Hf, tr->dvg);
    LAUNCH_CHECK();
    k_bias_grad<<<c->Hv, THREADS, 0, s>>>(tr->dvg, nb, c->Hv, HW, tr->grad + D->val_b1);
    LAUNCH_CHECK();
    conv_bwd_filter(c, cv1, bi, xB, tr->dvg, D->val_w1);
    conv_bwd_data(c, cv1, bi, tr->dvg, D->val_w1, 0.0f, tr->dx);

    /* policy head backward */
    k_bias_grad<<<K, THREADS, 0, s>>>(tr->dplog, nb, K, HW, tr->grad + D->pol_b2);
    LAUNCH_CHECK();
    conv_bwd_filter(c, cp2, bi, tr->ph, tr->dplog, D->pol_w2);
    conv_bwd_data(c, cp2, bi, tr->dplog, D->pol_w2, 0.0f, tr->dph);
    k_relu_grad<<<blocks_for(php, THREADS), THREADS, 0, s>>>(tr->dph, tr->ph, tr->dph, php);
    LAUNCH_CHECK();
    k_bias_grad<<<c->Hp, THREADS, 0, s>>>(tr->dph, nb, c->Hp, HW, tr->grad + D->pol_b1);
    LAUNCH_CHECK();
    conv_bwd_filter(c, cp1, bi, xB, tr->dph, D->pol_w1);
    conv_bwd_data(c, cp1, bi, tr->dph, D->pol_w1, 1.0f, tr->dx);

    /* trunk backward: dx holds dL/dx_{b+1} */
    float *dx = tr->dx, *dz = tr->dz;
    for (int b = B - 1; b >= 0; b--) {
        float *xb = tr->xs + (size_t)b * stride, *xn = xb + stride, *tb = tr->ts + (size_t)b * stride;
        k_relu_grad<<<blocks_for(act, THREADS), THREADS, 0, s>>>(dx, xn, dz, act);
        LAUNCH_CHECK();
        k_bias_grad<<<C, THREADS, 0, s>>>(dz, nb, C, HW, tr->grad + blk_b2(c, b));
        LAUNCH_CHECK();
        conv_bwd_filter(c, ctr, bi, tb, dz, blk_w2(c, b));
        conv_bwd_data(c, ctr, bi, dz, blk_w2(c, b), 0.0f, tr->dt);
        k_relu_grad<<<blocks_for(act, THREADS), THREADS, 0, s>>>(tr->dt, tb, tr->dt, act);
        LAUNCH_CHECK();
        k_bias_grad<<<C, THREADS, 0, s>>>(tr->dt, nb, C, HW, tr->grad + blk_b1(c, b));
        LAUNCH_CHECK();
        conv_bwd_filter(c, ctr, bi, xb, tr->dt, blk_w1(c, b));
        /* dL/dx_b = dz (skip path) + conv1^T(dt) */
        conv_bwd_data(c, ctr, bi, tr->dt, blk_w1(c, b), 1.0f, dz);
        float *t = dx;
        dx = dz;
        dz = t;
    }
    k_relu_grad<<<blocks_for(act, THREADS), THREADS, 0, s>>>(dx, x0, dz, act);
    LAUNCH_CHECK();
    k_bias_grad<<<C, THREADS, 0, s>>>(dz, nb, C, HW, tr->grad + D->in_b);
    LAUNCH_CHECK();
    conv_bwd_filter(c, cin, bi, tr->in, dz, D->in_w);

    /* L2 term and the losses */
    dim3 grid(L2_CHUNKS, tr->nsegs);
    k_l2<<<grid, THREADS, 0, s>>>(c->params, tr->grad, tr->segs, wd, tr->partials);
    LAUNCH_CHECK();
    k_losses<<<1, THREADS, 0, s>>>(tr->lp, tr->lv, n, K, pw, tr->partials,
                                   tr->nsegs * L2_CHUNKS, wd, tr->loss);
    LAUNCH_CHECK();
}

/* The weight copies of both precisions are stale. */
static void weights_changed(nn_ctx *c)
{
    c->path[0].dirty = c->path[1].dirty = true;
}

/* A host pointer in pinned memory (cudaMallocHost, host_alloc)? */
static bool host_pinned(const void *p)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeHost;
}

/* The pinned staging copy of a batch, for callers whose buffers are not
 * pinned (module lock held). 0, or -1 with err. */
static int train_staging_init(nn_ctx *c, char *err, size_t errlen)
{
    train_state *tr = c->tr;
    size_t N = (size_t)c->max_batch, HW = (size_t)c->HW;
    size_t sz[3] = {N * c->P * HW * sizeof(float), N * c->K * HW * sizeof(float),
                    N * NN_VALUE_OUTPUTS * sizeof(float)};
    float **p[3] = {&tr->h_in, &tr->h_pt, &tr->h_vt};
    for (int i = 0; i < 3; i++)
        TRY_ALLOC(cudaMallocHost((void **)p[i], sz[i]), sz[i], "pinned staging");
    return 0;
fail:
    for (int i = 0; i < 3; i++) {
        if (*p[i])
            cudaFreeHost(*p[i]);
        *p[i] = NULL;
    }
    return -1;
}
#undef TRY_ALLOC

/* Copy a training batch to the device (straight from the caller's pinned
 * buffers, else through the staging copy) and run the pass at its bucket
 * size, padding rows zeroed; with `step`, then its Nesterov update. 0, or
 * -1 with err (no memory for the training buffers, no algorithm). */
static int train_run(nn_ctx *c, const float *in, const float *pt, const float *vt, int n,
                     float wd, policy_weights pw, const nn_train_opts_t *step, char *err,
                     size_t errlen)
{
    if (n < 0 || n > c->max_batch) {
        snprintf(err, errlen, "cuda:%d: batch %d is outside 1..%d", c->device, n, c->max_batch);
        return -1;
    }
    CUDA_CHECK(cudaSetDevice(c->device));
    int nb = nn_cuda_bucket(n, c->max_batch), bi = nn_cuda_bucket_index(nb, c->max_batch);
    /* a bucket's first pass also loads kernels lazily: under the lock, as
     * its setup (see cuda_forward) */
    bool first = !c->tr || !c->tr->conv[CONV_IN].plan[bi].set;
    if (first) {
        module_lock();
        if ((!c->tr && train_init(c, err, errlen) != 0) ||
            choose_train(c, bi, nb, err, errlen) != 0) {
            module_unlock();
            return -1;
        }
    }
    train_state *tr = c->tr;
    size_t P = (size_t)c->P, HW = (size_t)c->HW, V = NN_VALUE_OUTPUTS;
    const float *src[3] = {in, pt, vt};
    size_t row[3] = {P * HW, c->K * HW, V};
    if (!(host_pinned(in) && host_pinned(pt) && host_pinned(vt))) {
        if (!tr->h_in) {
            if (!first)
                module_lock();
            int rc = train_staging_init(c, err, errlen);
            if (!first || rc != 0)
                module_unlock();
            if (rc != 0)
                return -1;
        }
        float *stage[3] = {tr->h_in, tr->h_pt, tr->h_vt};
        for (int i = 0; i < 3; i++) {
            memcpy(stage[i], src[i], (size_t)n * row[i] * sizeof(float));
            src[i] = stage[i];
        }
    }
    float *dst[3] = {tr->in, tr->ptarget, tr->vtarget};
    for (int i = 0; i < 3; i++) {
        CUDA_CHECK(cudaMemcpyAsync(dst[i], src[i], (size_t)n * row[i] * sizeof(float),
                                   cudaMemcpyHostToDevice, c->stream));
        if (nb > n)
            CUDA_CHECK(cudaMemsetAsync(dst[i] + (size_t)n * row[i], 0,
                                       (size_t)(nb - n) * row[i] * sizeof(float), c->stream));
    }
    train_pass(c, bi, nb, n, wd, pw);
    CUDA_CHECK(cudaMemcpyAsync(tr->h_loss, tr->loss, 6 * sizeof(float), cudaMemcpyDeviceToHost,
                               c->stream));
    if (step) {
        k_sgd<<<blocks_for(c->dparams, THREADS), THREADS, 0, c->stream>>>(
            c->params, tr->grad, c->mom, c->dparams, step->lr, step->momentum);
        LAUNCH_CHECK();
        weights_changed(c);
    }
    if (first) {
        CUDA_CHECK(cudaStreamSynchronize(c->stream));
        module_unlock();
    }
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
    if (train_run(c, in, pt, vt, n, o->weight_decay, policy_weights_of(o), o, err, errlen) != 0)
        return -1;
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
    if (train_run(c, in, pt, vt, n, wd, policy_weights_of(NULL), NULL, err, errlen) != 0)
        return -1;
    if (grad)
        params_download(c, grad, c->tr->grad);   /* synchronises */
    else
        CUDA_CHECK(cudaStreamSynchronize(c->stream));
    losses_out(c, out);
    return 0;
}

/* The vtable's copies of the weights and the momentum, on the context's
 * device; both synchronised. */
static void host_from_device(nn_ctx_t *c, float *host, const float *dev)
{
    CUDA_CHECK(cudaSetDevice(c->device));
    params_download(c, host, dev);
}

static void device_from_host(nn_ctx_t *c, float *dev, const float *host)
{
    CUDA_CHECK(cudaSetDevice(c->device));
    CUDA_CHECK(params_upload(c, dev, host));
}

static void cuda_get_weights(nn_ctx_t *c, float *params) { host_from_device(c, params, c->params); }

static void cuda_set_weights(nn_ctx_t *c, const float *params)
{
    device_from_host(c, c->params, params);
    weights_changed(c);
}

static void cuda_get_momentum(nn_ctx_t *c, float *m) { host_from_device(c, m, c->mom); }

static void cuda_set_momentum(nn_ctx_t *c, const float *m) { device_from_host(c, c->mom, m); }

/* Pinned host memory (module lock: cudaMallocHost would break another
 * thread's capture). NULL when the device has none to give. */
static void *cuda_host_alloc(nn_ctx_t *c, size_t bytes)
{
    void *p = NULL;
    module_lock();
    if (cudaSetDevice(c->device) != cudaSuccess || cudaMallocHost(&p, bytes ? bytes : 1) !=
                                                       cudaSuccess)
        p = NULL;
    module_unlock();
    return p;
}

static void cuda_host_free(nn_ctx_t *c, void *p)
{
    (void)c;
    if (!p)
        return;
    module_lock();
    cudaFreeHost(p);
    module_unlock();
}

/* ---- create / free ---- */

/* Everything c holds (module lock held). */
static void free_locked(nn_ctx *c)
{
    cudaSetDevice(c->device);
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    train_free(c->tr);
    for (int i = 0; i < 2; i++)
        infer_path_free(&c->path[i], c->nbuckets);
    infer_state_free(&c->inf);
    /* the handles first: cuBLAS still points at its workspace until destroyed */
    if (c->blas)
        cublasDestroy(c->blas);
    if (c->dnn)
        cudnnDestroy(c->dnn);
    void *dev[] = {c->params, c->mom, c->blas_ws};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            cudaFree(dev[i]);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    free(c);
}

static void cuda_free(nn_ctx_t *c)
{
    if (!c)
        return;
    module_lock();
    free_locked(c);
    module_unlock();   /* clears what the teardown left as the last error */
}

static bool env_off(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "0") == 0;
}

/* cuDNN can run a convolution at all: the bf16 NHWC input conv and the fp32
 * NCHW one at batch 1 on scratch buffers (module lock held). What a
 * missing or broken engine sub-library looks like is the first trial
 * failing, and create must say so (auto then uses the CPU) rather than
 * the first forward stopping. 0, or -1 with err. */
static int probe_convs(nn_ctx *c, char *err, size_t errlen)
{
    int dev = c->device, rc = -1;
    size_t HW = (size_t)c->HW, C = (size_t)c->C, wss = 0;
    void *x = NULL, *w = NULL, *y = NULL, *ws = NULL;
    conv_shape cs[2];
    memset(cs, 0, sizeof cs);
    size_t Pp = (size_t)in_pad(c->P);
    TRY_GPU(dev, cudaMalloc(&x, Pp * HW * sizeof(float)));
    TRY_GPU(dev, cudaMalloc(&w, C * 9 * Pp * sizeof(float)));
    TRY_GPU(dev, cudaMalloc(&y, C * HW * sizeof(float)));
    TRY_GPU(dev, cudaMemsetAsync(x, 0, Pp * HW * sizeof(float), c->stream));
    TRY_GPU(dev, cudaMemsetAsync(w, 0, C * 9 * Pp * sizeof(float), c->stream));
    for (int k = 0; k < 2; k++) {
        cudnnStatus_t st = k == 0 ? infer_shape_init(&cs[k], CONV_IN, c->P, c->C, c->M, true, 1)
                                  : train_shape_init(&cs[k], &c->cfg, CONV_IN, 1);
        if (st == CUDNN_STATUS_SUCCESS)
            st = conv_plan_desc(&cs[k], 0, 1);
        if (st != CUDNN_STATUS_SUCCESS) {
            snprintf(err, errlen, "cuda:%d: cuDNN descriptors: %s%s", dev,
                     cudnnGetErrorString(st), cudnn_detail());
            goto fail;
        }
        size_t need = ws_need(c->dnn, &cs[k], &cs[k].plan[0]);
        wss = need > wss ? need : wss;
    }
    wss = ws_clamp(wss, 1u << 20);
    TRY_GPU(dev, cudaMalloc(&ws, wss));
    for (int k = 0; k < 2; k++) {
        trial_log log;
        if (!pick_fwd(c->dnn, &cs[k], &cs[k].plan[0], x, w, y, ws, wss, -1, &log)) {
            char say[400];
            trial_say(&log, say, sizeof say);
            snprintf(err, errlen, "cuda:%d: cuDNN runs no %s convolution: %s", dev,
                     k == 0 ? "bf16" : "fp32", say);
            goto fail;
        }
    }
    TRY_GPU(dev, cudaStreamSynchronize(c->stream));
    rc = 0;
fail:
    cudaStreamSynchronize(c->stream);
    for (int k = 0; k < 2; k++)
        conv_shape_free(&cs[k]);
    void *bufs[] = {x, w, y, ws};
    for (int i = 0; i < 4; i++)
        if (bufs[i])
            cudaFree(bufs[i]);
    return rc;
}

/* create's device work (module lock held). 0, or -1 with err. */
static int create_locked(nn_ctx *c, const nn_model_t *m, char *err, size_t errlen)
{
    int dev = c->device;
    const size_t blas_ws = 32u << 20;
    cudaFuncAttributes fa;
    cudaError_t e;
    TRY_GPU(dev, cudaSetDevice(dev));
    /* our kernels first run in forward, where a failure stops the process:
     * a device older than every -Dgpu_arch of this build must fail here,
     * so `--device auto` still falls back */
    e = cudaFuncGetAttributes(&fa, k_prep<bf16>);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cuda:%d: this build has no kernels for the device (%s; "
                 "rebuild with its -Dgpu_arch)", dev, cudaGetErrorName(e));
        return -1;
    }
    if (cudnn_libs_check(err, errlen) != 0) {
        char why[400];
        snprintf(why, sizeof why, "%s", err);
        snprintf(err, errlen, "cuda:%d: %s", dev, why);
        return -1;
    }
    TRY_GPU(dev, cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    TRY_GPU(dev, cudnnCreate(&c->dnn));
    TRY_GPU(dev, cudnnSetStream(c->dnn, c->stream));
    TRY_GPU(dev, cublasCreate(&c->blas));
    TRY_GPU(dev, cublasSetStream(c->blas, c->stream));
    /* our own cuBLAS workspace, so graph capture never makes cuBLAS allocate */
    TRY_GPU(dev, cudaMalloc(&c->blas_ws, blas_ws));
    TRY_GPU(dev, cublasSetWorkspace(c->blas, c->blas_ws, blas_ws));
    TRY_GPU(dev, cudaMalloc((void **)&c->params, c->dparams * sizeof(float)));
    TRY_GPU(dev, cudaMalloc((void **)&c->mom, c->dparams * sizeof(float)));
    /* zeros: the padding between tensors stays finite */
    TRY_GPU(dev, cudaMemsetAsync(c->params, 0, c->dparams * sizeof(float), c->stream));
    TRY_GPU(dev, cudaMemsetAsync(c->mom, 0, c->dparams * sizeof(float), c->stream));
    TRY_GPU(dev, params_upload(c, c->params, m->params));
    if (probe_convs(c, err, errlen) != 0)
        return -1;
    TRY_GPU(dev, cudaStreamSynchronize(c->stream));
    return 0;
fail:
    return -1;
}

/* Every failure returns NULL with a message (no device, a cuDNN of another
 * major version or missing a sub-library, no memory, no convolution that
 * runs), so `--device auto` can fall back to the CPU. The inference and
 * training state are built when first needed; a new context runs fp32. */
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
    c->Hf = nn_value_features(&m->cfg);
    c->Vh = m->cfg.value_hidden;
    c->prec = NN_PRECISION_FP32;
    c->graphs_on = !env_off("GZ_CUDA_GRAPHS");
    c->tf32 = !env_off("GZ_CUDA_TF32");
    const char *bc = getenv("GZ_CUDA_TEST_BREAK_CAPTURE");
    c->break_capture = bc ? atoi(bc) : 0;

    module_lock();
    int rc = create_locked(c, m, err, errlen);
    if (rc != 0)
        free_locked(c);
    module_unlock();
    return rc == 0 ? c : NULL;
}

static int cu_ctx_stats(nn_ctx_t *c, nn_cuda_stats_t *out)
{
    memset(out, 0, sizeof *out);
    out->precision = c->prec;
    out->infer_ready = c->inf.ready;
    out->train_ready = c->tr != NULL;
    out->train_staging = c->tr && c->tr->h_in;
    out->buckets = c->nbuckets;
    for (int i = 0; i < 2; i++) {
        const infer_path *p = &c->path[i];
        out->path_ready[i] = p->ready;
        for (int b = 0; p->ready && b < c->nbuckets; b++) {
            out->graphs_live += p->state[b] == GRAPH_LIVE;
            out->graphs_failed += p->state[b] == GRAPH_FAILED;
        }
    }
    out->graph_launches = c->graph_launches;
    out->plain_runs = c->plain_runs;
    snprintf(out->graph_error, sizeof out->graph_error, "%s", c->graph_error);
    return 0;
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
    cuda_set_precision,
    cuda_host_alloc,
    cuda_host_free,
};

/* ---- benchmark helper ---- */

static double gemm_peak_locked(int device, char *name, size_t namelen);

/* Under the module lock: its allocations would break another thread's
 * capture. */
static double cu_gemm_peak_tflops(int device, char *name, size_t namelen)
{
    module_lock();
    double r = gemm_peak_locked(device, name, namelen);
    module_unlock();
    return r;
}

static double gemm_peak_locked(int device, char *name, size_t namelen)
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
    return tflops;   /* module_unlock clears what a refused cudaMalloc left */
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

/* ---- device-free self test ---- */

/* An algorithm trial on made-up candidates: what it keeps and what it
 * says when nothing runs. */
static int self_test_trials(char *err, size_t errlen)
{
    typedef cudnnConvolutionFwdAlgoPerf_t P;
    typedef cudnnConvolutionFwdAlgo_t A;
    cudnnConvolutionDescriptor_t cd = NULL;
    int rc = -1;
    trial_log log;
    A algo = CUDNN_CONVOLUTION_FWD_ALGO_GEMM;
    char say[600];
    bool ok;
    cudnnMathType_t m;
    P cand[4];
    memset(cand, 0, sizeof cand);
    cand[0].algo = CUDNN_CONVOLUTION_FWD_ALGO_FFT;   /* the heuristic says it cannot */
    cand[0].status = CUDNN_STATUS_NOT_SUPPORTED;
    cand[1].algo = CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD;   /* too much workspace */
    cand[1].memory = 1u << 30;
    cand[2].algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;   /* refuses to run */
    cand[3].algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;   /* runs */
    cand[3].mathType = CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    int ncand = 4;
    auto get = [&](P *p, int cap, int *got) {
        *got = ncand < cap ? ncand : cap;
        memcpy(p, cand, sizeof(P) * (size_t)*got);
        return CUDNN_STATUS_SUCCESS;
    };
    auto run = [&](A a) {
        return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ? CUDNN_STATUS_SUCCESS
               : CUDNN_STATUS_EXECUTION_FAILED;
    };
    if (cudnnCreateConvolutionDescriptor(&cd) != CUDNN_STATUS_SUCCESS ||
        cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                        CUDNN_DATA_FLOAT) != CUDNN_STATUS_SUCCESS) {
        snprintf(err, errlen, "self test: cannot make a convolution descriptor");
        goto out;
    }
    /* the runnable one is kept, with tensor-op math (never fp16 conversion) */
    ok = try_algos<P>(get, run, cd, 64u << 20, -1, &algo, &log);
    if (!ok || algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
        cudnnGetConvolutionMathType(cd, &m) != CUDNN_STATUS_SUCCESS ||
        m != CUDNN_TENSOR_OP_MATH) {
        snprintf(err, errlen, "self test: the trial kept algo %d (ok %d), want %d with "
                 "tensor-op math", (int)algo, ok, (int)CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
        goto out;
    }
    /* force_math replaces the candidate's */
    ok = try_algos<P>(get, run, cd, 64u << 20, (int)CUDNN_FMA_MATH, &algo, &log);
    if (!ok || cudnnGetConvolutionMathType(cd, &m) != CUDNN_STATUS_SUCCESS ||
        m != CUDNN_FMA_MATH) {
        snprintf(err, errlen, "self test: force_math FMA was not kept");
        goto out;
    }
    /* nothing runs: every kind of refusal is counted and named */
    ncand = 3;
    ok = try_algos<P>(get, run, cd, 64u << 20, -1, &algo, &log);
    trial_say(&log, say, sizeof say);
    if (ok || !strstr(say, "3 candidates") || !strstr(say, "1 refused") ||
        !strstr(say, cudnnGetErrorString(CUDNN_STATUS_NOT_SUPPORTED)) ||
        !strstr(say, "1 over the workspace") || !strstr(say, "1 failed to run") ||
        !strstr(say, cudnnGetErrorString(CUDNN_STATUS_EXECUTION_FAILED))) {
        snprintf(err, errlen, "self test: a failed trial says: %s", say);
        goto out;
    }
    /* the query itself fails, as when a sub-library does not load */
    ok = try_algos<P>([](P *, int, int *got) {
                          *got = 0;
                          return CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED;
                      },
                      run, cd, 64u << 20, -1, &algo, &log);
    trial_say(&log, say, sizeof say);
    if (ok || !strstr(say, "the heuristic query failed") ||
        !strstr(say, cudnnGetErrorString(CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED))) {
        snprintf(err, errlen, "self test: a failed query says: %s", say);
        goto out;
    }
    rc = 0;
out:
    if (cd)
        cudnnDestroyConvolutionDescriptor(cd);
    (void)cudaGetLastError();
    return rc;
}

static int cu_self_test(char *err, size_t errlen)
{
    if (cudnn_libs_check(err, errlen) != 0)
        return -1;
    return self_test_trials(err, errlen);
}

/* ---- the module's one entry point ---- */

static const nn_cuda_module_t module = {
    NN_CUDA_MODULE_ABI,
    sizeof(nn_cuda_module_t),
    sizeof(nn_config_t),
    sizeof(nn_model_t),
    sizeof(nn_train_opts_t),
    sizeof(nn_losses_t),
    sizeof(nn_backend_t),
    sizeof(nn_cuda_stats_t),
    &backend_cuda,
    cu_device_count,
    cu_device_describe,
    cu_gemm_peak_tflops,
    cu_check_shapes,
    cu_mem_info,
    cu_ctx_stats,
    cu_self_test,
};

extern "C" __attribute__((visibility("default"))) const nn_cuda_module_t *gomoku_cuda_module(void)
{
    return &module;
}
