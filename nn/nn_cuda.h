/* CUDA-only helpers next to nn_backend_cuda (nn.h): device listing for
 * `gomoku device`, a cuBLAS peak figure for benchmarks, and a shape check
 * that needs no GPU (for the device-free part of the GPU test suite).
 * Declared only in a CUDA build (GZ_HAVE_CUDA). */
#ifndef GZ_NN_CUDA_H
#define GZ_NN_CUDA_H

#ifdef GZ_HAVE_CUDA

#include <stddef.h>

#include "nn/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of CUDA devices, or -1 with the reason (the CUDA error name, as
 * nn_cuda_available gives it). */
int nn_cuda_device_count(char *why, size_t whylen);

/* One line about device dev: "NVIDIA H100 80GB HBM3, compute 9.0, 79.1 GiB,
 * driver 13.0, runtime 13.0, cuDNN 91900, cuBLAS 130000". 0, or -1 with
 * the reason in buf. */
int nn_cuda_device_describe(int dev, char *buf, size_t len);

/* bf16 cuBLAS GEMM peak (8192^3, fp32 accumulate) on device dev in
 * TFLOP/s, and the device name in name. -1 with the reason in name when
 * the device cannot run it. Allocates ~400 MiB on the device for the run. */
double nn_cuda_gemm_peak_tflops(int device, char *name, size_t namelen);

/* Shape logic of the backend, without a device: builds every cuDNN
 * descriptor the backend uses for cfg at batch n (NHWC bf16 inference,
 * NCHW fp32 training) and checks that each convolution keeps the M x M
 * plane and has the expected channel counts. Also applies the backend's
 * config rules (channels a multiple of 8, at most 8 input planes).
 * 0, or -1 with a one-line message. */
int nn_cuda_check_shapes(const nn_config_t *cfg, int n, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
#endif
