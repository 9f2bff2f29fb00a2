/* The pattern net: see patnet.h. Plain loops; the per-point products are
 * short enough for the compiler's vectorizer. */
#include "nn/patnet.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/util.h"

enum { D = PATNET_D, H = PATNET_H };

/* Offsets of each part in the flat parameter buffer. */
/* The table: a row for each code a board can read (the stored rows, in
 * ascending code order, as a version-2 file holds them), and a row of 0
 * for the others, which no board reads. */
#define ROWS (PATNET_STORED_ROWS + 1)
#define ROW_NONE PATNET_STORED_ROWS
#define OFF_TABLE 0
#define OFF_B0 (OFF_TABLE + (size_t)ROWS * D)
#define OFF_W1 (OFF_B0 + D)
#define OFF_B1 (OFF_W1 + D * D)
#define OFF_WP (OFF_B1 + D)
#define OFF_BP (OFF_WP + D)
#define OFF_V1 (OFF_BP + 1)
#define OFF_C1 (OFF_V1 + H * 2 * D)
#define OFF_V2 (OFF_C1 + H)
#define OFF_C2 (OFF_V2 + H)
#define OFF_U (OFF_C2 + 1)
#define OFF_UZ (OFF_U + D * 2 * D)
#define NPARAMS (OFF_UZ + D * H)
#define NDENSE (NPARAMS - OFF_B0)
#define NDENSE_V3 (OFF_UZ - OFF_B0)  /* what version 3 holds: no Uz */
#define NDENSE_V2 (OFF_U - OFF_B0)   /* what versions 1 and 2 hold: no U */

struct patnet {
    uint8_t rule;
    uint32_t version;                 /* of the file it was read from */
    uint64_t step;
    bool dyn;                         /* U or Uz has a nonzero entry: the policy reads the pool */
    float *p;                         /* NPARAMS */
    uint16_t row[PATNET_CODES];       /* a code's table row: that of the smaller of it and
                                       * its reversal, or ROW_NONE */
};

static uint32_t reverse_code(uint32_t c)
{
    uint32_t r = 0;
    for (int i = 0; i < 8; i++)
        r |= ((c >> (2 * i)) & 3u) << (2 * (7 - i));
    return r;
}

static bool code_on_board(uint32_t code);

static patnet_t *alloc_net(rule_t rule)
{
    patnet_t *pn = calloc(1, sizeof *pn);
    if (!pn)
        return NULL;
    pn->p = calloc(NPARAMS, sizeof *pn->p);
    if (!pn->p) {
        free(pn);
        return NULL;
    }
    pn->rule = (uint8_t)rule;
    pn->version = PATNET_VERSION;
    uint16_t n = 0;
    for (uint32_t c = 0; c < PATNET_CODES; c++)   /* ascending: a code's reversal is later */
        pn->row[c] = reverse_code(c) >= c && code_on_board(c) ? n++ : ROW_NONE;
    assert(n == PATNET_STORED_ROWS);
    for (uint32_t c = 0; c < PATNET_CODES; c++) {
        uint32_t r = reverse_code(c);
        if (r < c)
            pn->row[c] = pn->row[r];
    }
    return pn;
}

static float rand_sym(uint64_t *s, float scale)
{
    return (float)((util_rng_unit(s) * 2.0 - 1.0) * scale);
}

patnet_t *patnet_create(rule_t rule, uint64_t seed)
{
    patnet_t *pn = alloc_net(rule);
    if (!pn)
        return NULL;
    uint64_t s = seed;
    float *p = pn->p;
    /* a draw for every code's row (as when the table had one a code), the
     * stored code's kept: a seed makes the net it always made */
    for (uint32_t c = 0; c < PATNET_CODES; c++)
        for (int j = 0; j < D; j++) {
            float x = rand_sym(&s, 0.1f);
            if (pn->row[c] != ROW_NONE && reverse_code(c) >= c)
                p[OFF_TABLE + (size_t)pn->row[c] * D + j] = x;
        }
    for (int i = 0; i < D * D; i++)
        p[OFF_W1 + i] = rand_sym(&s, sqrtf(3.0f / D));
    for (int i = 0; i < H * 2 * D; i++)
        p[OFF_V1 + i] = rand_sym(&s, sqrtf(3.0f / (2 * D)));
    for (int i = 0; i < H; i++)
        p[OFF_V2 + i] = rand_sym(&s, sqrtf(3.0f / H));
    for (int i = 0; i < D; i++)
        p[OFF_WP + i] = rand_sym(&s, sqrtf(3.0f / D));
    return pn;
}

void patnet_free(patnet_t *pn)
{
    if (!pn)
        return;
    free(pn->p);
    free(pn);
}

rule_t patnet_rule(const patnet_t *pn) { return (rule_t)pn->rule; }
uint64_t patnet_step(const patnet_t *pn) { return pn->step; }
uint32_t patnet_version(const patnet_t *pn) { return pn->version; }

/* ---- forward ---- */

#define PAD 4
#define GRID (BOARD_MAX + 2 * PAD)
#define MEMO 512   /* > BOARD_CELLS, a power of two */

/* One position's forward, kept for the backward. */
typedef struct fwd {
    int n;                        /* legal empty points */
    int16_t pt[BOARD_CELLS];      /* their board indices */
    uint16_t row[BOARD_CELLS][4]; /* table row of each line */
    float s[BOARD_CELLS][D];      /* relu(s_p) */
    float h[BOARD_CELLS][D];      /* h_p */
    float logit[BOARD_CELLS];     /* then the softmax */
    float pool[2 * D];            /* mean, max */
    float gd[D];                  /* U pool: what the pool adds to wp */
    int16_t argmax[D];            /* index into pt of each channel's max */
    float z[H];
    float v;
} fwd_t;

static int legal_points(const board_t *b, int16_t *pt)
{
    int n = 0, np = board_npoints(b);
    bool renju_black = b->rule == RULE_RENJU && b->to_move == STONE_BLACK;
    for (int i = 0; i < np; i++)
        if (b->cells[i] == STONE_EMPTY && !(renju_black && board_is_forbidden(b, i)))
            pt[n++] = (int16_t)i;
    return n;
}

/* The board as cell states seen from the side to move (0 empty, 1 its own,
 * 2 the opponent's, 3 off the board), PAD cells of border around it; W is
 * the grid's row length. */
static int board_grid(const board_t *b, uint8_t *st)
{
    int size = b->size, W = size + 2 * PAD;
    memset(st, 3, (size_t)W * W);
    int me = b->to_move;
    for (int y = 0; y < size; y++)
        for (int x = 0; x < size; x++) {
            int c = b->cells[y * size + x];
            st[(y + PAD) * W + x + PAD] = (uint8_t)(c == STONE_EMPTY ? 0 : c == me ? 1 : 2);
        }
    return W;
}

/* The table rows of point q's 4 lines, sorted (the sum over the lines does
 * not see their order, so points with the same rows are summed alike), and
 * the point's key made of them. */
static uint64_t point_rows(const patnet_t *pn, const uint8_t *st, int q, int W, uint16_t *r)
{
    uint16_t rows[4];
    const int dir[4] = {1, W, W + 1, W - 1};
    for (int d = 0; d < 4; d++) {
        int o = dir[d];
        uint32_t code = 0;
        for (int i = 4; i >= 1; i--)
            code = code * 4 + st[q - i * o];
        for (int i = 1; i <= 4; i++)
            code = code * 4 + st[q + i * o];
        rows[d] = pn->row[code];
    }
    memcpy(r, rows, sizeof rows);
    for (int i = 1; i < 4; i++)
        for (int j = i; j > 0 && r[j - 1] > r[j]; j--) {
            uint16_t t = r[j];
            r[j] = r[j - 1];
            r[j - 1] = t;
        }
    return (uint64_t)r[0] | (uint64_t)r[1] << 16 | (uint64_t)r[2] << 32 | (uint64_t)r[3] << 48;
}

/* A point's h_p (D) and logit from its 4 rows; relu(s_p) into s. */
static float point_features(const patnet_t *pn, const uint16_t *rows, float *s, float *h)
{
    const float *p = pn->p;
    const float *w1 = p + OFF_W1, *b1 = p + OFF_B1, *wp = p + OFF_WP;
    float sum[D];
    memcpy(sum, p + OFF_B0, sizeof sum);
    for (int d = 0; d < 4; d++) {
        const float *t = p + OFF_TABLE + (size_t)rows[d] * D;
        for (int j = 0; j < D; j++)
            sum[j] += t[j];
    }
    float a[D];
    memcpy(a, b1, sizeof a);
    for (int j = 0; j < D; j++) {
        float sj = sum[j] > 0 ? sum[j] : 0;
        s[j] = sj;
        if (sj == 0)
            continue;
        const float *wc = w1 + j * D;   /* W1's column j: input j to every output */
        for (int i = 0; i < D; i++)
            a[i] += wc[i] * sj;
    }
    float lg = p[OFF_BP];
    for (int i = 0; i < D; i++) {
        h[i] = a[i] > 0 ? a[i] : 0;
        lg += wp[i] * h[i];
    }
    return lg;
}

/* The policy's weights that the board adds to wp: gd = U pool + Uz z (D),
 * z the value head's hidden units. */
static void pool_policy(const patnet_t *pn, const float *pool, const float *z, float *gd)
{
    const float *u = pn->p + OFF_U, *uz = pn->p + OFF_UZ;
    for (int i = 0; i < D; i++) {
        float a = 0;
        for (int j = 0; j < 2 * D; j++)
            a += u[i * 2 * D + j] * pool[j];
        for (int j = 0; j < H; j++)
            a += uz[i * H + j] * z[j];
        gd[i] = a;
    }
}

static float dot(const float *a, const float *b)
{
    float s = 0;
    for (int i = 0; i < D; i++)
        s += a[i] * b[i];
    return s;
}

/* Whether U or Uz has a nonzero entry (a net without one answers as
 * version 2's). */
static void note_dyn(patnet_t *pn)
{
    size_t i = OFF_U;
    while (i < NPARAMS && pn->p[i] == 0.0f)
        i++;
    pn->dyn = i < NPARAMS;
}

/* The value head on the pooled features (mean ; max, 2D); z (H) kept. */
static float value_head(const patnet_t *pn, const float *pool, float *z)
{
    const float *p = pn->p;
    const float *v1 = p + OFF_V1, *c1 = p + OFF_C1, *v2 = p + OFF_V2;
    float a = p[OFF_C2];
    for (int i = 0; i < H; i++) {
        float zi = c1[i];
        for (int j = 0; j < 2 * D; j++)
            zi += v1[i * 2 * D + j] * pool[j];
        z[i] = zi > 0 ? zi : 0;
        a += v2[i] * z[i];
    }
    return tanhf(a);
}

/* The logits of n points in place to their softmax. */
static void softmax(float *x, int n)
{
    float top = -INFINITY;
    for (int k = 0; k < n; k++)
        top = x[k] > top ? x[k] : top;
    float sum = 0;
    for (int k = 0; k < n; k++)
        sum += x[k] = expf(x[k] - top);
    for (int k = 0; k < n; k++)
        x[k] /= sum;
}

static void forward(const patnet_t *pn, const board_t *b, fwd_t *f)
{
    int size = b->size;
    uint8_t st[GRID * GRID];
    int W = board_grid(b, st);
    f->n = legal_points(b, f->pt);
    float mean[D] = {0}, mx[D];
    for (int j = 0; j < D; j++) {
        mx[j] = -INFINITY;
        f->argmax[j] = 0;
    }
    /* Points whose 4 lines read the same rows (the open board's, mostly)
     * share one computation. */
    uint64_t memo_key[MEMO];
    int16_t memo_k[MEMO];
    memset(memo_k, -1, sizeof memo_k);
    for (int k = 0; k < f->n; k++) {
        int q = (f->pt[k] / size + PAD) * W + f->pt[k] % size + PAD;
        uint64_t key = point_rows(pn, st, q, W, f->row[k]);
        unsigned slot = (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 56) & (MEMO - 1);
        while (memo_k[slot] >= 0 && memo_key[slot] != key)
            slot = (slot + 1) & (MEMO - 1);
        float *h = f->h[k];
        if (memo_k[slot] >= 0) {
            int src = memo_k[slot];
            memcpy(f->s[k], f->s[src], sizeof f->s[k]);
            memcpy(h, f->h[src], sizeof f->h[k]);
            f->logit[k] = f->logit[src];
        } else {
            memo_key[slot] = key;
            memo_k[slot] = (int16_t)k;
            f->logit[k] = point_features(pn, f->row[k], f->s[k], h);
        }
        for (int i = 0; i < D; i++) {
            mean[i] += h[i];
            if (h[i] > mx[i]) {
                mx[i] = h[i];
                f->argmax[i] = (int16_t)k;
            }
        }
    }
    float inv = f->n > 0 ? 1.0f / f->n : 0;
    for (int j = 0; j < D; j++) {
        f->pool[j] = mean[j] * inv;
        f->pool[D + j] = f->n > 0 ? mx[j] : 0;
    }
    f->v = value_head(pn, f->pool, f->z);
    memset(f->gd, 0, sizeof f->gd);
    if (pn->dyn) {
        pool_policy(pn, f->pool, f->z, f->gd);
        for (int k = 0; k < f->n; k++)
            f->logit[k] += dot(f->gd, f->h[k]);
    }
    softmax(f->logit, f->n);
}

/* ---- evaluation ---- */

/* A point computed: its key (4 sorted rows), h_p and logit. No point has
 * 4 rows of the all-off-board code, so that key marks an empty slot. */
typedef struct point {
    float h[D];
    uint64_t key;
    float logit;
} point_t;

#define EMPTY_KEY UINT64_MAX
#define LOCAL_POINTS 256   /* patnet_eval's table, a power of two */
#define CTX_POINTS 8192    /* a context's, a power of two */

struct patnet_ctx {
    const patnet_t *pn;
    point_t pt[CTX_POINTS];
};

/* One board into its policy row (BOARD_CELLS) and value, the points looked
 * up in (and added to) the direct-mapped table pts of mask + 1 slots. The
 * same numbers as forward's: the same per-point code, summed in the same
 * order. */
static void eval_board(const patnet_t *pn, point_t *pts, unsigned mask, const board_t *b,
                       float *row, float *value)
{
    int size = b->size;
    uint8_t st[GRID * GRID];
    int W = board_grid(b, st);
    int16_t at[BOARD_CELLS];
    float logit[BOARD_CELLS];
    float hk[BOARD_CELLS][D];   /* each point's h_p, for the pool's policy (a net with U) */
    int n = legal_points(b, at);
    float mean[D] = {0}, mx[D];
    for (int j = 0; j < D; j++)
        mx[j] = -INFINITY;
    for (int k = 0; k < n; k++) {
        int q = (at[k] / size + PAD) * W + at[k] % size + PAD;
        uint16_t rows[4];
        uint64_t key = point_rows(pn, st, q, W, rows);
        point_t *e = &pts[(unsigned)((key * 0x9e3779b97f4a7c15ull) >> 40) & mask];
        if (e->key != key) {
            float s[D];
            e->logit = point_features(pn, rows, s, e->h);
            e->key = key;
        }
        logit[k] = e->logit;
        if (pn->dyn)
            memcpy(hk[k], e->h, sizeof hk[k]);
        for (int i = 0; i < D; i++) {
            mean[i] += e->h[i];
            mx[i] = e->h[i] > mx[i] ? e->h[i] : mx[i];
        }
    }
    float pool[2 * D], z[H];
    float inv = n > 0 ? 1.0f / n : 0;
    for (int j = 0; j < D; j++) {
        pool[j] = mean[j] * inv;
        pool[D + j] = n > 0 ? mx[j] : 0;
    }
    *value = value_head(pn, pool, z);
    if (pn->dyn) {
        float gd[D];
        pool_policy(pn, pool, z, gd);
        for (int k = 0; k < n; k++)
            logit[k] += dot(gd, hk[k]);
    }
    softmax(logit, n);
    memset(row, 0, BOARD_CELLS * sizeof *row);
    for (int k = 0; k < n; k++)
        row[at[k]] = logit[k];
}

static void clear_points(point_t *pts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pts[i].key = EMPTY_KEY;
}

void patnet_eval(void *user, const board_t *const *boards, int n, float *policy,
                 float *value)
{
    const patnet_t *pn = user;
    point_t pts[LOCAL_POINTS];
    for (int i = 0; i < n; i++) {
        clear_points(pts, LOCAL_POINTS);
        eval_board(pn, pts, LOCAL_POINTS - 1, boards[i], policy + (size_t)i * BOARD_CELLS,
                   &value[i]);
    }
}

patnet_ctx_t *patnet_ctx_create(const patnet_t *pn)
{
    patnet_ctx_t *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->pn = pn;
    clear_points(c->pt, CTX_POINTS);
    return c;
}

void patnet_ctx_free(patnet_ctx_t *c) { free(c); }

void patnet_ctx_eval(void *user, const board_t *const *boards, int n, float *policy,
                     float *value)
{
    patnet_ctx_t *c = user;
    for (int i = 0; i < n; i++)
        eval_board(c->pn, c->pt, CTX_POINTS - 1, boards[i], policy + (size_t)i * BOARD_CELLS,
                   &value[i]);
}

struct patnet_ens {
    int n;
    patnet_ctx_t *ctx[PATNET_ENSEMBLE_MAX];
    float row[BOARD_CELLS];   /* one net's priors of one position */
};

patnet_ens_t *patnet_ens_create(const patnet_t *const *nets, int n)
{
    if (n < 1 || n > PATNET_ENSEMBLE_MAX)
        return NULL;
    patnet_ens_t *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->n = n;
    for (int k = 0; k < n; k++) {
        if (!(e->ctx[k] = patnet_ctx_create(nets[k]))) {
            patnet_ens_free(e);
            return NULL;
        }
    }
    return e;
}

void patnet_ens_free(patnet_ens_t *e)
{
    if (!e)
        return;
    for (int k = 0; k < e->n; k++)
        patnet_ctx_free(e->ctx[k]);
    free(e);
}

void patnet_ens_eval(void *user, const board_t *const *boards, int n, float *policy,
                     float *value)
{
    patnet_ens_t *e = user;
    patnet_ctx_eval(e->ctx[0], boards, n, policy, value);
    if (e->n == 1)
        return;
    const float w = 1.0f / (float)e->n;
    for (int i = 0; i < n; i++) {
        float *p = policy + (size_t)i * BOARD_CELLS;
        for (int k = 1; k < e->n; k++) {
            float v;
            patnet_ctx_eval(e->ctx[k], &boards[i], 1, e->row, &v);
            value[i] += v;
            for (int j = 0; j < BOARD_CELLS; j++)
                p[j] += e->row[j];
        }
        value[i] *= w;
        for (int j = 0; j < BOARD_CELLS; j++)
            p[j] *= w;
    }
}

static void losses(const fwd_t *f, const float *policy, float value, double *lp, double *lv)
{
    double ce = 0;
    for (int k = 0; k < f->n; k++) {
        float t = policy[f->pt[k]];
        if (t > 0)
            ce -= t * log(f->logit[k] > 1e-30f ? f->logit[k] : 1e-30f);
    }
    *lp += ce;
    *lv += (f->v - value) * (f->v - value);
}

void patnet_loss(const patnet_t *pn, const board_t *b, const float *policy, float value,
                 double *lp, double *lv)
{
    fwd_t *f = malloc(sizeof *f);
    assert(f);
    forward(pn, b, f);
    losses(f, policy, value, lp, lv);
    free(f);
}

/* ---- training ---- */

struct patnet_trainer {
    patnet_t *pn;
    float lr;
    int t;                    /* Adam steps */
    int added;                /* positions since the last step */
    float *g, *m, *v;         /* NPARAMS each */
    uint8_t *touched;         /* table rows with a gradient this batch */
    uint16_t *rows;           /* their list */
    size_t nrows;
    fwd_t f;
};

patnet_trainer_t *patnet_trainer_create(patnet_t *pn, float lr)
{
    patnet_trainer_t *tr = calloc(1, sizeof *tr);
    if (!tr)
        return NULL;
    tr->pn = pn;
    tr->lr = lr;
    tr->g = calloc(NPARAMS, sizeof(float));
    tr->m = calloc(NPARAMS, sizeof(float));
    tr->v = calloc(NPARAMS, sizeof(float));
    tr->touched = calloc(ROWS, 1);
    tr->rows = calloc(ROWS, sizeof *tr->rows);
    if (!tr->g || !tr->m || !tr->v || !tr->touched || !tr->rows) {
        patnet_trainer_free(tr);
        return NULL;
    }
    return tr;
}

void patnet_trainer_free(patnet_trainer_t *tr)
{
    if (!tr)
        return;
    free(tr->g);
    free(tr->m);
    free(tr->v);
    free(tr->touched);
    free(tr->rows);
    free(tr);
}

void patnet_trainer_set_lr(patnet_trainer_t *tr, float lr) { tr->lr = lr; }

void patnet_trainer_add(patnet_trainer_t *tr, const board_t *b, const float *policy,
                        float value, double *lp, double *lv)
{
    patnet_t *pn = tr->pn;
    fwd_t *f = &tr->f;
    forward(pn, b, f);
    losses(f, policy, value, lp, lv);
    tr->added++;
    const float *p = pn->p;
    float *g = tr->g;
    float dpool[2 * D] = {0};
    float inv = f->n > 0 ? 1.0f / f->n : 0;
    float tsum = 0;
    for (int k = 0; k < f->n; k++)
        tsum += policy[f->pt[k]];
    float tnorm = tsum > 0 ? 1.0f / tsum : 0;
    const float *w1 = p + OFF_W1, *wp = p + OFF_WP, *u = p + OFF_U;
    /* the board's policy weights gd = U pool + Uz z: hs = sum_k dl_k h_k
     * is their gradient, hs pool' U's, U' hs the pool's, hs z' Uz's and
     * Uz' hs z's (added to the value's gradient of z below) */
    float dls[BOARD_CELLS], hs[D] = {0};   /* each point's softmax - target */
    for (int k = 0; k < f->n; k++) {
        dls[k] = tsum > 0 ? f->logit[k] - policy[f->pt[k]] * tnorm : 0;
        for (int i = 0; i < D; i++)
            hs[i] += dls[k] * f->h[k][i];
    }
    const float *uz = p + OFF_UZ;
    float dzp[H] = {0};   /* the policy's gradient of z, through Uz */
    for (int i = 0; i < D; i++) {
        if (hs[i] == 0)
            continue;
        for (int j = 0; j < 2 * D; j++) {
            g[OFF_U + i * 2 * D + j] += hs[i] * f->pool[j];
            dpool[j] += hs[i] * u[i * 2 * D + j];
        }
        for (int j = 0; j < H; j++) {
            g[OFF_UZ + i * H + j] += hs[i] * f->z[j];
            dzp[j] += hs[i] * uz[i * H + j];
        }
    }
    /* value head, with what the policy asks of z */
    float da = 2.0f * (f->v - value) * (1.0f - f->v * f->v);
    g[OFF_C2] += da;
    for (int i = 0; i < H; i++) {
        g[OFF_V2 + i] += da * f->z[i];
        if (f->z[i] <= 0)
            continue;
        float dz = da * p[OFF_V2 + i] + dzp[i];
        g[OFF_C1 + i] += dz;
        for (int j = 0; j < 2 * D; j++) {
            g[OFF_V1 + i * 2 * D + j] += dz * f->pool[j];
            dpool[j] += dz * p[OFF_V1 + i * 2 * D + j];
        }
    }
    for (int k = 0; k < f->n; k++) {
        float dl = dls[k];
        g[OFF_BP] += dl;
        float dh[D];
        for (int i = 0; i < D; i++) {
            dh[i] = dl * (wp[i] + f->gd[i]) + dpool[i] * inv +
                    (f->argmax[i] == k ? dpool[D + i] : 0);
            g[OFF_WP + i] += dl * f->h[k][i];
            if (f->h[k][i] <= 0)
                dh[i] = 0;
        }
        float ds[D] = {0};
        for (int i = 0; i < D; i++) {
            if (dh[i] == 0)
                continue;
            g[OFF_B1 + i] += dh[i];
            for (int j = 0; j < D; j++) {
                g[OFF_W1 + j * D + i] += dh[i] * f->s[k][j];
                ds[j] += dh[i] * w1[j * D + i];
            }
        }
        for (int j = 0; j < D; j++)
            if (f->s[k][j] <= 0)
                ds[j] = 0;
        for (int j = 0; j < D; j++)
            g[OFF_B0 + j] += ds[j];
        for (int d = 0; d < 4; d++) {
            uint16_t r = f->row[k][d];
            if (!tr->touched[r]) {
                tr->touched[r] = 1;
                tr->rows[tr->nrows++] = r;
            }
            float *gt = g + OFF_TABLE + (size_t)r * D;
            for (int j = 0; j < D; j++)
                gt[j] += ds[j];
        }
    }
}

void patnet_trainer_merge(patnet_trainer_t *tr, patnet_trainer_t *from)
{
    assert(tr->pn == from->pn && tr != from);
    float *g = tr->g, *f = from->g;
    for (size_t i = OFF_B0; i < NPARAMS; i++) {
        g[i] += f[i];
        f[i] = 0;
    }
    for (size_t k = 0; k < from->nrows; k++) {
        uint16_t r = from->rows[k];
        if (!tr->touched[r]) {
            tr->touched[r] = 1;
            tr->rows[tr->nrows++] = r;
        }
        float *gt = g + OFF_TABLE + (size_t)r * D, *ft = f + OFF_TABLE + (size_t)r * D;
        for (int j = 0; j < D; j++) {
            gt[j] += ft[j];
            ft[j] = 0;
        }
        from->touched[r] = 0;
    }
    from->nrows = 0;
    tr->added += from->added;
    from->added = 0;
}

static void adam(patnet_trainer_t *tr, size_t off, size_t n, float scale, float c1, float c2)
{
    float *p = tr->pn->p + off, *g = tr->g + off, *m = tr->m + off, *v = tr->v + off;
    for (size_t i = 0; i < n; i++) {
        float gi = g[i] * scale;
        m[i] = 0.9f * m[i] + 0.1f * gi;
        v[i] = 0.999f * v[i] + 0.001f * gi * gi;
        p[i] -= tr->lr * (m[i] * c1) / (sqrtf(v[i] * c2) + 1e-8f);
        g[i] = 0;
    }
}

void patnet_trainer_step(patnet_trainer_t *tr)
{
    if (tr->added == 0)
        return;
    tr->t++;
    float scale = 1.0f / tr->added;
    float c1 = 1.0f / (1.0f - powf(0.9f, (float)tr->t));
    float c2 = 1.0f / (1.0f - powf(0.999f, (float)tr->t));
    adam(tr, OFF_B0, NDENSE, scale, c1, c2);
    /* the table's rows: lazy Adam, only the rows this batch touched */
    for (size_t i = 0; i < tr->nrows; i++) {
        adam(tr, OFF_TABLE + (size_t)tr->rows[i] * D, D, scale, c1, c2);
        tr->touched[tr->rows[i]] = 0;
    }
    tr->nrows = 0;
    tr->added = 0;
    tr->pn->step++;
    note_dyn(tr->pn);
}

/* ---- file ---- */

#define MAGIC "GZPN"
#define HEADER_BYTES (4 + 4 * 4 + 8)

static void put_u32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* True when a board can read code: on each side of the point (cells 3..0
 * going out on one side, 4..7 on the other, cell 0 the code's top bits),
 * once a cell is off the board every farther one is. */
static bool code_on_board(uint32_t code)
{
    for (int side = 0; side < 2; side++) {
        bool off = false;
        for (int k = 0; k < 4; k++) {
            int cell = side ? 4 + k : 3 - k;
            bool o = ((code >> (2 * (7 - cell))) & 3u) == 3u;
            if (off && !o)
                return false;
            off = o;
        }
    }
    return true;
}

/* A file's parameter count: the table's rows (all, or the stored ones) and the rest. */
size_t patnet_file_params(uint32_t version)
{
    return (version == 1 ? (size_t)PATNET_CODES : PATNET_STORED_ROWS) * D +
           (version >= 4 ? NDENSE : version == 3 ? NDENSE_V3 : NDENSE_V2);
}

/* Parameter k of a file of version v: its place in pn->p, or SIZE_MAX for
 * a version-1 row no board reads (a code past its reversal, or one whose
 * off-board cells no board has). */
static size_t file_param_at(const patnet_t *pn, uint32_t v, size_t k)
{
    size_t t = (v == 1 ? (size_t)PATNET_CODES : PATNET_STORED_ROWS) * D;
    if (k >= t)
        return OFF_B0 + (k - t);
    if (v != 1)
        return OFF_TABLE + k;
    uint32_t code = (uint32_t)(k / D);
    uint16_t r = pn->row[code];
    if (r == ROW_NONE || reverse_code(code) < code)
        return SIZE_MAX;
    return OFF_TABLE + (size_t)r * D + k % D;
}

int patnet_save(const patnet_t *pn, const char *path, char *err, size_t errlen)
{
    size_t np = patnet_file_params(PATNET_VERSION), len = HEADER_BYTES + np * 4 + 4;
    uint8_t *buf = malloc(len);
    if (!buf) {
        util_errf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    memcpy(buf, MAGIC, 4);
    put_u32(buf + 4, PATNET_VERSION);
    put_u32(buf + 8, D);
    put_u32(buf + 12, H);
    put_u32(buf + 16, pn->rule);
    put_u32(buf + 20, (uint32_t)pn->step);
    put_u32(buf + 24, (uint32_t)(pn->step >> 32));
    for (size_t k = 0; k < np; k++) {
        uint32_t u;
        memcpy(&u, &pn->p[file_param_at(pn, PATNET_VERSION, k)], 4);
        put_u32(buf + HEADER_BYTES + 4 * k, u);
    }
    put_u32(buf + len - 4, (uint32_t)crc32(0L, buf, (uInt)(len - 4)));
    int rc = util_write_atomic(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

patnet_t *patnet_load(const char *path, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        util_errf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = HEADER_BYTES + patnet_file_params(1) * 4 + 4;   /* the larger version */
    uint8_t *buf = malloc(cap + 1);
    patnet_t *pn = NULL;
    if (!buf) {
        util_errf(err, errlen, "%s: out of memory", path);
        goto out_close;
    }
    size_t got = fread(buf, 1, cap + 1, fp);
    if (got < 4 || memcmp(buf, MAGIC, 4) != 0) {
        util_errf(err, errlen, "%s: not a pattern net file (no GZPN header)", path);
        goto out_free;
    }
    if (got < HEADER_BYTES) {
        util_errf(err, errlen, "%s: truncated (%zu bytes, a pattern net's header has %d)", path,
                  got, HEADER_BYTES);
        goto out_free;
    }
    uint32_t ver = get_u32(buf + 4), d = get_u32(buf + 8), h = get_u32(buf + 12);
    uint32_t rule = get_u32(buf + 16);
    if (ver < 1 || ver > PATNET_VERSION) {
        util_errf(err, errlen, "%s: pattern net version %u, this build reads 1 to %d", path, ver,
                  PATNET_VERSION);
        goto out_free;
    }
    if (d != D || h != H) {
        util_errf(err, errlen, "%s: dims %ux%u, this build reads %dx%d", path, d, h, D, H);
        goto out_free;
    }
    if (rule >= RULE_COUNT) {
        util_errf(err, errlen, "%s: unknown rule %u (0 to %d)", path, rule, RULE_COUNT - 1);
        goto out_free;
    }
    size_t np = patnet_file_params(ver), len = HEADER_BYTES + np * 4 + 4;
    if (got < len) {
        util_errf(err, errlen, "%s: truncated (%zu bytes where a version %u pattern net has %zu)",
                  path, got, ver, len);
        goto out_free;
    }
    if (got > len) {
        util_errf(err, errlen, "%s: trailing bytes after the %zu of a version %u pattern net",
                  path, len, ver);
        goto out_free;
    }
    if (get_u32(buf + len - 4) != (uint32_t)crc32(0L, buf, (uInt)(len - 4))) {
        util_errf(err, errlen, "%s: CRC mismatch (the file is corrupt)", path);
        goto out_free;
    }
    pn = alloc_net((rule_t)rule);
    if (!pn) {
        util_errf(err, errlen, "%s: out of memory", path);
        goto out_free;
    }
    pn->version = ver;
    pn->step = get_u32(buf + 20) | (uint64_t)get_u32(buf + 24) << 32;
    for (size_t k = 0; k < np; k++) {
        uint32_t u = get_u32(buf + HEADER_BYTES + 4 * k);
        float x;
        memcpy(&x, &u, 4);
        if (!isfinite(x)) {
            util_errf(err, errlen, "%s: parameter %zu is not finite", path, k);
            patnet_free(pn);
            pn = NULL;
            goto out_free;
        }
        size_t at = file_param_at(pn, ver, k);
        if (at != SIZE_MAX)
            pn->p[at] = x;
    }
    note_dyn(pn);
out_free:
    free(buf);
out_close:
    fclose(fp);
    return pn;
}
