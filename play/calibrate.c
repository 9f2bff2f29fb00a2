/* Value-head calibration against solved positions and game results; see
 * calibrate.h. */
#include "play/calibrate.h"

#include <stdio.h>
#include <string.h>

#include "engine/record.h"
#include "engine/vct.h"
#include "nn/eval.h"

#define EVAL_BATCH 64

typedef struct calib_run {
    const calib_opts_t *o;
    calib_report_t *rep;
    vct_t *vct;
    nn_eval_t *ev;
    board_t batch[EVAL_BATCH];
    float score[EVAL_BATCH];    /* outcome score, side to move */
    int exact[EVAL_BATCH];      /* +1 solved win, -1 solved loss, 0 unsolved */
    int n;
    float policy[EVAL_BATCH * BOARD_CELLS];
    float value[EVAL_BATCH];
} calib_run_t;

/* +1: the side to move wins by force; -1: it loses whatever it plays; 0:
 * neither is proven within the budget. */
static int solve(calib_run_t *c, const board_t *b)
{
    vct_limits_t lim = {.nodes = c->o->vct_nodes};
    if (vct_solve(c->vct, b, &lim, NULL) == VCT_WIN)
        return 1;
    /* a loss is proven when every move fails: each of those solves gets a
     * tenth of the budget (one out of budget counts as a refutation, so a
     * small budget finds fewer losses, never a false one) */
    lim.nodes = c->o->vct_nodes / 10 > 200 ? c->o->vct_nodes / 10 : 200;
    int def[BOARD_CELLS];
    return vct_defend(c->vct, b, &lim, def, NULL) == 0 ? -1 : 0;
}

static void flush(calib_run_t *c)
{
    if (c->n == 0)
        return;
    const board_t *bp[EVAL_BATCH];
    for (int i = 0; i < c->n; i++)
        bp[i] = &c->batch[i];
    nn_eval_eval(c->ev, bp, c->n, c->policy, c->value);
    calib_report_t *r = c->rep;
    for (int i = 0; i < c->n; i++) {
        double p = (c->value[i] + 1.0) * 0.5;
        int k = (int)(p * CALIB_BUCKETS);
        k = k < 0 ? 0 : k >= CALIB_BUCKETS ? CALIB_BUCKETS - 1 : k;
        calib_bucket_t *bk = &r->b[k];
        bk->n++;
        bk->pred += p;
        bk->score += c->score[i];
        r->brier_outcome += (p - c->score[i]) * (p - c->score[i]);
        if (c->exact[i]) {
            double s = c->exact[i] > 0 ? 1.0 : 0.0;
            bk->n_exact++;
            bk->pred_exact += p;
            bk->score_exact += s;
            r->brier_exact += (p - s) * (p - s);
            if (c->exact[i] > 0) {
                r->exact_wins++;
                r->wins_rated_low += p < 0.5;
            } else {
                r->exact_losses++;
                r->losses_rated_high += p > 0.5;
            }
        }
        r->positions++;
    }
    c->n = 0;
}

/* The game's positions one in `every` after `skip`, into the batch. */
static void add_game(calib_run_t *c, const game_record_t *g)
{
    board_t b;
    board_init(&b, g->size, (rule_t)g->rule);
    for (uint32_t i = 0; i < g->nplies; i++) {
        bool full = c->o->max_positions > 0 &&
                    c->rep->positions + (uint32_t)c->n >= (uint32_t)c->o->max_positions;
        if (full || board_over(&b))
            return;
        if ((int)i >= c->o->skip && ((int)i - c->o->skip) % c->o->every == 0) {
            board_t *dst = &c->batch[c->n];
            *dst = b;
            int me = b.to_move;
            c->score[c->n] = g->result == RESULT_DRAW ? 0.5f : g->result == me ? 1.0f : 0.0f;
            c->exact[c->n] = solve(c, &b);
            if (++c->n == EVAL_BATCH)
                flush(c);
        }
        if (board_play(&b, g->plies[i].move) != MOVE_OK)
            return;
    }
}

int calibrate_run(const calib_opts_t *o, calib_report_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int rc = -1;
    calib_run_t c = {.o = o, .rep = out};
    game_record_t g;
    record_init(&g);
    char note[256];
    nn_model_t *m = nn_model_load(o->model, err, errlen);
    if (!m)
        goto out_record;
    int rows = EVAL_BATCH * (o->symmetry == NN_SYM_ALL ? SYM_COUNT : 1);
    nn_net_t *net = nn_net_create(m, o->device, rows, 0, note, sizeof note, err, errlen);
    if (!net)
        goto out_model;
    if (nn_net_set_precision(net, o->precision, NULL, 0, err, errlen))
        goto out_net;
    if (!(c.ev = nn_eval_create(net, NULL, EVAL_BATCH, err, errlen)))
        goto out_net;
    if (nn_eval_set_symmetry(c.ev, o->symmetry, err, errlen))
        goto out_eval;
    if (!(c.vct = vct_create((size_t)4 << 20, err, errlen)))
        goto out_eval;
    for (int f = 0; f < o->nfiles; f++) {
        record_reader_t *rr = record_reader_open(o->files[f], err, errlen);
        if (!rr)
            goto out_vct;
        int r;
        char why[256];
        while ((o->max_positions == 0 || out->positions + (uint32_t)c.n <
                                               (uint32_t)o->max_positions) &&
               (r = record_reader_next(rr, &g, why, sizeof why)) != 0) {
            if (r < 0 || g.size > m->cfg.board_max) {
                out->bad_records++;
                continue;
            }
            out->games++;
            add_game(&c, &g);
        }
        record_reader_free(rr);
    }
    flush(&c);
    if (out->positions) {
        out->brier_outcome /= out->positions;
        uint32_t ne = out->exact_wins + out->exact_losses;
        out->brier_exact = ne ? out->brier_exact / ne : 0.0;
    }
    rc = 0;
out_vct:
    vct_free(c.vct);
out_eval:
    nn_eval_free(c.ev);
out_net:
    nn_net_free(net);
out_model:
    nn_model_free(m);
out_record:
    record_free(&g);
    return rc;
}
