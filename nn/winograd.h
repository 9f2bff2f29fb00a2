/* Winograd F(4x4, 3x3) for the CPU fast path's 3x3 convolutions (stride 1,
 * zero padding 1, M x M planes).
 *
 * Each plane is cut into T x T tiles of 4 x 4 outputs, T = ceil(M / 4)
 * (15 x 15: 4 x 4 tiles covering 16 x 16; outputs past M are dropped, inputs
 * past M read as zero). A tile's 6 x 6 input patch goes to 36 frequencies
 * (V = B^T d B), the filter to 36 (U = G g G^T); the conv is then 36
 * independent products over channels, M_xi = V_xi U_xi, and the output tile
 * is A^T M A. That is 36 multiply-adds per tile and channel pair instead of
 * 144: the trunk convs do 4x fewer flops than im2col + SGEMM.
 *
 * Training uses the exact adjoints of the same linear maps: d(output) goes
 * back through A (dM = A dY A^T), then dV_xi = dM_xi U_xi^T and
 * dU_xi = V_xi^T dM_xi, then dd = B dV B^T (patches overlap: scatter-add)
 * and dg = G^T dU G. So gradients are those of the Winograd forward, equal
 * to the direct conv's up to fp32 rounding.
 *
 * Layouts here are pixel-major with channels innermost, so the transforms
 * run on vectors of channels: a plane set is (ns * M * M, ch) ("xt"), the
 * transformed tiles are (36, nt, ch) with nt = ns * T * T tiles, tile index
 * (s * T + ty) * T + tx, frequency index xi = 6 * i + j, frequency xi at
 * xi * wino_fstride(nt, ch) (padded: see there). Filters are
 * (cout, cin, 3, 3) as in the weights file; transformed (36, cin, cout).
 * No function allocates; all are safe to call from several threads on
 * different buffers. */
#ifndef GZ_NN_WINOGRAD_H
#define GZ_NN_WINOGRAD_H

#include <stdbool.h>
#include <stddef.h>

#define WINO_FREQS 36

/* Tiles per side on an M x M plane, and tiles for ns planes. */
static inline int wino_tiles_side(int M) { return (M + 3) / 4; }
static inline int wino_tiles(int M, int ns) { return ns * wino_tiles_side(M) * wino_tiles_side(M); }

/* Floats from one frequency to the next in a (36, nt, ch) buffer: nt * ch
 * plus a cache line, so the 36 streams a transform writes do not all map to
 * the same cache sets (nt * ch is often a multiple of 4 KiB). A buffer
 * holds 36 * wino_fstride(nt, ch) floats. */
static inline size_t wino_fstride(int nt, int ch)
{
    return ((size_t)nt * ch + 15) / 16 * 16 + 16;
}

/* u (36, cin, cout) = G g G^T of every filter g of w (cout, cin, 3, 3). */
void wino_filter(const float *w, int cin, int cout, float *u);
/* dw (cout, cin, 3, 3) += G^T du G: the adjoint of wino_filter. */
void wino_filter_adjoint(const float *du, int cin, int cout, float *dw);

/* v (36, nt, ch) = B^T d B of every tile of xt (ns * M * M, ch). */
void wino_input(const float *xt, int ch, int M, int ns, float *v);
/* dxt (ns * M * M, ch) = the adjoint of wino_input applied to dv
 * (36, nt, ch): overwritten, overlapping patches summed. */
void wino_input_adjoint(const float *dv, int ch, int M, int ns, float *dxt);
/* What the output transform applies to each output pixel r (row r of
 * yt) before storing it, so the layer's activation needs no pass of its
 * own: yt[r] = relu(A^T m A + bias + res[r]) * mask[r] (a pixel whose
 * mask is 0 stores 0, as bias_relu_mask does). res may be NULL. */
typedef struct wino_epilogue {
    const float *bias;   /* (ch) */
    const float *res;    /* (ns * M * M, ch) residual, pixel-major, or NULL */
    const float *mask;   /* (ns * M * M) 1 on the board, 0 off it */
} wino_epilogue_t;

/* yt (ns * M * M, ch) = A^T m A of every tile of m (36, nt, ch), outputs
 * past M dropped; with ep, the epilogue applied (yt must not overlap
 * ep->res). */
void wino_output(const float *m, int ch, int M, int ns, const wino_epilogue_t *ep, float *yt);
/* dm (36, nt, ch) = A dy A^T of every tile of dyt (ns * M * M, ch), the
 * adjoint of wino_output (outputs past M count as 0). */
void wino_output_adjoint(const float *dyt, int ch, int M, int ns, float *dm);

/* The 36 products of one conv, on the calling thread (an own AVX-512
 * kernel where the build targets AVX-512 and the width is a multiple of
 * 16, else sgemm_run):
 * forward    m (36, nt, cout)   = v (36, nt, cin) x u (36, cin, cout)
 * data grad  dv (36, nt, cin)   = dm (36, nt, cout) x ut (36, cout, cin)
 *            (ut: u with each frequency's matrix transposed)
 * filter     du (36, cin, cout) += v^T x dm */
void wino_gemm_forward(const float *v, const float *u, int nt, int cin, int cout, float *m);
void wino_gemm_data(const float *dm, const float *ut, int nt, int cin, int cout, float *dv);
void wino_gemm_filter(const float *v, const float *dm, int nt, int cin, int cout, float *du);

/* Whether wino_gemm_forward of a conv with cout outputs runs on the own
 * AVX-512 kernel (this CPU has AVX-512, cout is a multiple of 16) rather
 * than sgemm_run. */
bool wino_forward_fast(int cout);

/* b (cols, rows) = a^T, or += when add; a is (rows, cols), both dense. */
void wino_transpose(const float *a, int rows, int cols, float *b, bool add);

#endif
