#include "selfplay/replay.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nn/nn.h"
#include "util/util.h"

typedef struct entry {
    game_record_t rec;  /* owned */
    uint64_t start;     /* global index of its first position */
    uint32_t npos;      /* full-search plies */
} entry_t;

struct replay {
    pthread_rwlock_t lock;
    int window;
    rule_t rule;
    int size, board_max;
    int policy_outputs;   /* K */
    int features;         /* input feature set of the samples */
    double value_mix;     /* share of the root value in a sampled value target */
    entry_t *ring;      /* cap slots, count used from head */
    size_t cap, head, count;
    uint64_t end;       /* global index one past the newest position */
    uint64_t npos;      /* positions in the window */
};

replay_t *replay_create(int window, rule_t rule, int size, int board_max, int policy_outputs)
{
    assert(window > 0 && size >= BOARD_MIN && size <= board_max && board_max <= BOARD_MAX);
    assert(policy_outputs >= 1 && policy_outputs <= NN_MAX_POLICY_OUTPUTS);
    replay_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    /* the trainer's replay_add must not wait behind a stream of readers */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&r->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    r->window = window;
    r->rule = rule;
    r->size = size;
    r->board_max = board_max;
    r->policy_outputs = policy_outputs;
    return r;
}

void replay_free(replay_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->cap; i++)
        record_free(&r->ring[i].rec);
    free(r->ring);
    pthread_rwlock_destroy(&r->lock);
    free(r);
}

static int grow_ring(replay_t *r)
{
    size_t ncap = r->cap ? r->cap * 2 : 256;
    entry_t *n = calloc(ncap, sizeof *n);
    if (!n)
        return -1;
    for (size_t i = 0; i < r->count; i++)
        n[i] = r->ring[(r->head + i) % r->cap];
    /* slots not in use keep no memory: they were freed on eviction */
    for (size_t i = r->count; i < ncap; i++)
        record_init(&n[i].rec);
    free(r->ring);
    r->ring = n;
    r->cap = ncap;
    r->head = 0;
    return 0;
}

static int copy_record(game_record_t *dst, const game_record_t *src)
{
    record_clear(dst, (rule_t)src->rule, src->size, src->model_gen);
    for (uint32_t i = 0; i < src->nplies; i++) {
        const record_ply_t *p = &src->plies[i];
        if (record_add_ply(dst, p->move, p->full, p->root_value, src->visits + p->visit_off,
                           p->nvisits) != 0)
            return -1;
    }
    dst->result = src->result;
    dst->flags = src->flags;
    return 0;
}

int replay_add(replay_t *r, const game_record_t *rec)
{
    if (rec->rule != r->rule || rec->size != r->size)
        return -1;
    uint32_t npos = 0;
    for (uint32_t i = 0; i < rec->nplies; i++)
        npos += rec->plies[i].full ? 1 : 0;
    if (npos == 0)
        return 0;
    pthread_rwlock_wrlock(&r->lock);
    int rc = -1;
    if (r->count == r->cap && grow_ring(r) != 0)
        goto out_unlock;
    entry_t *e = &r->ring[(r->head + r->count) % r->cap];
    if (copy_record(&e->rec, rec) != 0)
        goto out_unlock;
    e->start = r->end;
    e->npos = npos;
    r->end += npos;
    r->npos += npos;
    r->count++;
    while (r->count > 1 && r->npos - r->ring[r->head].npos >= (uint64_t)r->window) {
        entry_t *old = &r->ring[r->head];
        r->npos -= old->npos;
        /* a slot not in use holds no memory, so grow_ring may drop it */
        record_free(&old->rec);
        record_init(&old->rec);
        r->head = (r->head + 1) % r->cap;
        r->count--;
    }
    rc = (int)npos;
out_unlock:
    pthread_rwlock_unlock(&r->lock);
    return rc;
}

uint64_t replay_positions(replay_t *r)
{
    pthread_rwlock_rdlock(&r->lock);
    uint64_t n = r->npos;
    pthread_rwlock_unlock(&r->lock);
    return n;
}

uint64_t replay_games(replay_t *r)
{
    pthread_rwlock_rdlock(&r->lock);
    uint64_t n = r->count;
    pthread_rwlock_unlock(&r->lock);
    return n;
}

static void *batch_alloc(const replay_alloc_t *a, size_t bytes)
{
    return a->alloc ? a->alloc(a->ctx, bytes) : malloc(bytes);
}

void replay_set_features(replay_t *r, int features)
{
    assert(features >= 0 && features < NN_FEATURES_COUNT);
    r->features = features;
}

void replay_set_value_mix(replay_t *r, double mix)
{
    assert(mix >= 0.0 && mix <= 1.0);
    r->value_mix = mix;
}

int replay_batch_alloc(replay_batch_t *b, int n, int board_max, int policy_outputs,
                       const replay_alloc_t *a)
{
    return replay_batch_alloc_features(b, n, board_max, policy_outputs, NN_FEATURES_BASIC, a);
}

int replay_batch_alloc_features(replay_batch_t *b, int n, int board_max, int policy_outputs,
                                int features, const replay_alloc_t *a)
{
    size_t mm = (size_t)board_max * board_max;
    memset(b, 0, sizeof *b);
    if (a)
        b->alloc = *a;
    b->n = n;
    b->board_max = board_max;
    b->policy_outputs = policy_outputs;
    b->features = features;
    b->in = batch_alloc(&b->alloc, (size_t)n * nn_feature_planes(features) * mm * sizeof(float));
    b->policy = batch_alloc(&b->alloc, (size_t)n * policy_outputs * mm * sizeof(float));
    b->value = batch_alloc(&b->alloc, (size_t)n * 3 * sizeof(float));
    if (!b->in || !b->policy || !b->value) {
        replay_batch_release_buffers(b);
        return -1;
    }
    return 0;
}
void replay_batch_release_buffers(replay_batch_t *b)
{
    float *bufs[] = {b->in, b->policy, b->value};
    for (int i = 0; i < 3; i++) {
        if (!bufs[i])
            continue;
        if (b->alloc.free)
            b->alloc.free(b->alloc.ctx, bufs[i]);
        else
            free(bufs[i]);
    }
    b->in = b->policy = b->value = NULL;
}

/* Sample i of b: position `pos` (0-based among full plies) of e's game;
 * its value target is (1 - mix) x the game's result + mix x the ply's root
 * value, both as win/draw/loss for the side to move. */
static void build_sample(const replay_t *r, const entry_t *e, uint32_t pos, int sym,
                         double mix, replay_batch_t *b, int i)
{
    const game_record_t *g = &e->rec;
    int size = r->size, m = r->board_max;
    size_t mm = (size_t)m * m;
    uint32_t ply = 0;
    for (uint32_t seen = 0;; ply++) {
        assert(ply < g->nplies);
        if (g->plies[ply].full && seen++ == pos)
            break;
    }
    board_t bd;
    board_init(&bd, size, (rule_t)g->rule);
    for (uint32_t k = 0; k < ply; k++) {
        move_status_t st = board_play(&bd, sym_point(sym, g->plies[k].move, size));
        assert(st == MOVE_OK); /* records were validated when accepted */
        (void)st;
    }
    nn_encode_features(&bd, b->features, m,
                       b->in + (size_t)i * nn_feature_planes(b->features) * mm);

    int K = b->policy_outputs;
    float *pt = b->policy + (size_t)i * K * mm;
    memset(pt, 0, (size_t)K * mm * sizeof(float));
    const record_ply_t *p = &g->plies[ply];
    double sum = 0;
    for (uint16_t k = 0; k < p->nvisits; k++)
        sum += g->visits[p->visit_off + k].count;
    if (sum > 0) {
        for (uint16_t k = 0; k < p->nvisits; k++) {
            const record_visit_t *v = &g->visits[p->visit_off + k];
            int mv = sym_point(sym, v->move, size);
            pt[nn_policy_index(mv, size, m)] += (float)(v->count / sum);
        }
    } else {
        pt[nn_policy_index(sym_point(sym, p->move, size), size, m)] = 1.0f;
    }
    if (K > NN_POLICY_OPP && ply + 1 < g->nplies)   /* the reply, side to move's view */
        pt[mm + nn_policy_index(sym_point(sym, g->plies[ply + 1].move, size), size, m)] = 1.0f;
    if (K > NN_POLICY_SOFT) {
        float *soft = pt + NN_POLICY_SOFT * mm;
        double ssum = 0.0;
        for (size_t q = 0; q < mm; q++)
            if (pt[q] > 0.0f)
                ssum += (soft[q] = (float)pow(pt[q], NN_SOFT_POWER));
        for (size_t q = 0; q < mm; q++)
            soft[q] = ssum > 0.0 ? (float)(soft[q] / ssum) : 0.0f;
    }

    double z[3] = {0.0, 0.0, 0.0};
    if (g->result == RESULT_DRAW || g->result == RESULT_NONE)
        z[1] = 1.0;
    else if ((g->result == RESULT_BLACK) == (bd.to_move == STONE_BLACK))
        z[0] = 1.0;
    else
        z[2] = 1.0;
    /* the root value q in [-1, 1] as a win/loss split (no draw share);
     * records were validated, so q is finite and in range */
    double q = p->root_value;
    double qs[3] = {(1.0 + q) / 2.0, 0.0, (1.0 - q) / 2.0};
    float *vt = b->value + (size_t)i * 3;
    for (int k = 0; k < 3; k++)
        vt[k] = (float)((1.0 - mix) * z[k] + mix * qs[k]);
}

/* The entry holding global position gidx (in the window); lock held. */
static const entry_t *find_entry(const replay_t *r, uint64_t gidx)
{
    size_t lo = 0, hi = r->count; /* last entry with start <= gidx */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (r->ring[(r->head + mid) % r->cap].start <= gidx)
            lo = mid;
        else
            hi = mid;
    }
    const entry_t *e = &r->ring[(r->head + lo) % r->cap];
    assert(gidx >= e->start && gidx < e->start + e->npos);
    return e;
}

int replay_fill(replay_t *r, replay_batch_t *b, uint64_t first, int n)
{
    assert(b->board_max == r->board_max && b->features == r->features && n <= b->n);
    pthread_rwlock_rdlock(&r->lock);
    uint64_t base = r->count ? r->ring[r->head].start : 0;
    int k = 0;
    for (; k < n && first + (uint64_t)k < r->npos; k++) {
        uint64_t gidx = base + first + (uint64_t)k;
        const entry_t *e = find_entry(r, gidx);
        build_sample(r, e, (uint32_t)(gidx - e->start), 0, 0.0, b, k);
    }
    pthread_rwlock_unlock(&r->lock);
    return k;
}

int replay_loss(replay_t *r, nn_net_t *net, nn_losses_t *out, char *err, size_t errlen)
{
    const nn_config_t *cfg = nn_net_config(net);
    memset(out, 0, sizeof *out);
    if (cfg->board_max != r->board_max || cfg->features != r->features ||
        cfg->policy_outputs != r->policy_outputs) {
        snprintf(err, errlen, "the net's input or outputs do not match the replay's");
        return -1;
    }
    replay_batch_t b;
    int bs = nn_net_max_batch(net);
    if (replay_batch_alloc_features(&b, bs, r->board_max, r->policy_outputs, r->features,
                                    NULL) != 0) {
        snprintf(err, errlen, "out of memory for a batch of %d", bs);
        return -1;
    }
    double sp = 0, sv = 0;
    uint64_t total = replay_positions(r), done = 0;
    int rc = 0;
    while (done < total) {
        int n = replay_fill(r, &b, done, bs);
        nn_losses_t l;
        if ((rc = nn_net_loss_grad(net, b.in, b.policy, b.value, n, 0.0f, &l, NULL, err,
                                   errlen)) != 0)
            break;
        sp += (double)l.policy * n;
        sv += (double)l.value * n;
        done += (uint64_t)n;
    }
    replay_batch_release_buffers(&b);
    if (rc == 0 && done > 0) {
        out->policy = (float)(sp / (double)done);
        out->value = (float)(sv / (double)done);
        out->total = out->policy + out->value;
    }
    return rc;
}

int replay_model_loss(const nn_model_t *m, const char *const *files, int nfiles, int threads,
                      replay_loss_report_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int M = m->cfg.board_max, rc = -1;
    replay_t *r = replay_create(1 << 30, (rule_t)m->rule, M, M, m->cfg.policy_outputs);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    replay_set_features(r, m->cfg.features);
    game_record_t g;
    record_init(&g);
    for (int f = 0; f < nfiles; f++) {
        record_reader_t *rr = record_reader_open(files[f], err, errlen);
        if (!rr)
            goto out_free;
        int k;
        char why[256];
        while ((k = record_reader_next(rr, &g, why, sizeof why)) != 0) {
            if (k < 0 || g.size != M || g.rule != m->rule) {
                out->skipped++;
                continue;
            }
            if (replay_add(r, &g) < 0) {
                record_reader_free(rr);
                snprintf(err, errlen, "out of memory for the games");
                goto out_free;
            }
            out->games++;
        }
        record_reader_free(rr);
    }
    out->positions = replay_positions(r);
    if (out->positions == 0) {
        snprintf(err, errlen, "no training positions of a %dx%d %s game in the files", M, M,
                 rule_name((rule_t)m->rule));
        goto out_free;
    }
    char note[256];
    nn_net_t *net = nn_net_create(m, "cpu", 256, threads, note, sizeof note, err, errlen);
    if (!net)
        goto out_free;
    rc = replay_loss(r, net, &out->loss, err, errlen);
    nn_net_free(net);
out_free:
    record_free(&g);
    replay_free(r);
    return rc;
}

int replay_sample(replay_t *r, replay_batch_t *b, uint64_t *rng)
{
    assert(b->board_max == r->board_max && b->features == r->features);
    pthread_rwlock_rdlock(&r->lock);
    if (r->npos == 0) {
        pthread_rwlock_unlock(&r->lock);
        return -1;
    }
    uint64_t base = r->ring[r->head].start;
    for (int i = 0; i < b->n; i++) {
        uint64_t x = util_rng_next(rng);
        uint64_t gidx = base + x % r->npos;
        int sym = (int)((x >> 59) & 7);
        const entry_t *e = find_entry(r, gidx);
        build_sample(r, e, (uint32_t)(gidx - e->start), sym, r->value_mix, b, i);
    }
    pthread_rwlock_unlock(&r->lock);
    return 0;
}

enum { SLOT_FREE, SLOT_FILLING, SLOT_READY, SLOT_TAKEN };

struct replay_batcher {
    replay_t *r;
    int nbuf, nthreads;
    uint64_t min_positions;
    replay_batch_t *bufs;
    int *state;
    uint64_t *order;     /* when each READY slot was filled: hand out the oldest */
    uint64_t filled;
    pthread_t *threads;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    uint64_t seed;
    uint64_t samples;
    double busy_s;
};

typedef struct { replay_batcher_t *bt; int id; } thread_arg_t;

static void *batcher_main(void *arg)
{
    replay_batcher_t *bt = ((thread_arg_t *)arg)->bt;
    int id = ((thread_arg_t *)arg)->id;
    free(arg);
    uint64_t rng = bt->seed ^ (0x5851f42d4c957f2dull * (uint64_t)(id + 1));
    pthread_mutex_lock(&bt->mu);
    for (;;) {
        int slot = -1;
        while (!bt->stop) {
            if (replay_positions(bt->r) >= bt->min_positions)
                for (int i = 0; i < bt->nbuf && slot < 0; i++)
                    if (bt->state[i] == SLOT_FREE)
                        slot = i;
            if (slot >= 0)
                break;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 200000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&bt->cv, &bt->mu, &ts);
        }
        if (bt->stop)
            break;
        bt->state[slot] = SLOT_FILLING;
        pthread_mutex_unlock(&bt->mu);
        double t0 = util_now_ms() * 1e-3;
        int rc = replay_sample(bt->r, &bt->bufs[slot], &rng);
        double dt = util_now_ms() * 1e-3 - t0;
        pthread_mutex_lock(&bt->mu);
        bt->state[slot] = rc == 0 ? SLOT_READY : SLOT_FREE;
        if (rc == 0) {
            bt->order[slot] = bt->filled++;
            bt->samples += (uint64_t)bt->bufs[slot].n;
            bt->busy_s += dt;
        }
        pthread_cond_broadcast(&bt->cv);
    }
    pthread_mutex_unlock(&bt->mu);
    return NULL;
}

replay_batcher_t *replay_batcher_create(replay_t *r, int batch, int threads, int nbuf,
                                        uint64_t min_positions, uint64_t seed,
                                        const replay_alloc_t *a)
{
    assert(batch > 0 && threads >= 1 && nbuf >= 2);
    replay_batcher_t *bt = calloc(1, sizeof *bt);
    if (!bt)
        return NULL;
    bt->r = r;
    bt->nbuf = nbuf;
    bt->nthreads = threads;
    bt->min_positions = min_positions > 0 ? min_positions : 1;
    bt->seed = seed;
    pthread_mutex_init(&bt->mu, NULL);
    pthread_cond_init(&bt->cv, NULL);
    bt->bufs = calloc((size_t)nbuf, sizeof *bt->bufs);
    bt->state = calloc((size_t)nbuf, sizeof *bt->state);
    bt->order = calloc((size_t)nbuf, sizeof *bt->order);
    bt->threads = calloc((size_t)threads, sizeof *bt->threads);
    if (!bt->bufs || !bt->state || !bt->order || !bt->threads)
        goto out_free;
    for (int i = 0; i < nbuf; i++)
        if (replay_batch_alloc_features(&bt->bufs[i], batch, r->board_max, r->policy_outputs,
                                        r->features, a) != 0)
            goto out_free;
    for (int i = 0; i < threads; i++) {
        thread_arg_t *a = malloc(sizeof *a);
        if (!a)
            goto out_free;
        a->bt = bt;
        a->id = i;
        if (pthread_create(&bt->threads[i], NULL, batcher_main, a) != 0) {
            free(a);
            goto out_free;
        }
        bt->started++;
    }
    return bt;
out_free:
    replay_batcher_free(bt);
    return NULL;
}

void replay_batcher_free(replay_batcher_t *bt)
{
    if (!bt)
        return;
    pthread_mutex_lock(&bt->mu);
    bt->stop = 1;
    pthread_cond_broadcast(&bt->cv);
    pthread_mutex_unlock(&bt->mu);
    for (int i = 0; i < bt->started; i++)
        pthread_join(bt->threads[i], NULL);
    if (bt->bufs)
        for (int i = 0; i < bt->nbuf; i++)
            replay_batch_release_buffers(&bt->bufs[i]);
    free(bt->bufs);
    free(bt->state);
    free(bt->order);
    free(bt->threads);
    pthread_cond_destroy(&bt->cv);
    pthread_mutex_destroy(&bt->mu);
    free(bt);
}

replay_batch_t *replay_batcher_take(replay_batcher_t *bt)
{
    pthread_mutex_lock(&bt->mu);
    int slot;
    for (;;) {
        slot = -1;
        for (int i = 0; i < bt->nbuf; i++)
            if (bt->state[i] == SLOT_READY && (slot < 0 || bt->order[i] < bt->order[slot]))
                slot = i;
        if (slot >= 0)
            break;
        pthread_cond_wait(&bt->cv, &bt->mu);
    }
    bt->state[slot] = SLOT_TAKEN;
    pthread_mutex_unlock(&bt->mu);
    return &bt->bufs[slot];
}

void replay_batcher_release(replay_batcher_t *bt, replay_batch_t *b)
{
    pthread_mutex_lock(&bt->mu);
    int slot = (int)(b - bt->bufs);
    assert(slot >= 0 && slot < bt->nbuf && bt->state[slot] == SLOT_TAKEN);
    bt->state[slot] = SLOT_FREE;
    pthread_cond_broadcast(&bt->cv);
    pthread_mutex_unlock(&bt->mu);
}

void replay_batcher_stats(replay_batcher_t *bt, uint64_t *samples, double *busy_s)
{
    pthread_mutex_lock(&bt->mu);
    *samples = bt->samples;
    *busy_s = bt->busy_s;
    pthread_mutex_unlock(&bt->mu);
}

void replay_batcher_notify(replay_batcher_t *bt)
{
    pthread_mutex_lock(&bt->mu);
    pthread_cond_broadcast(&bt->cv);
    pthread_mutex_unlock(&bt->mu);
}
