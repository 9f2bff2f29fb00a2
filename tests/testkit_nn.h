/* Model helpers for the suites that link nn; header-only, because the test
 * kit itself (testkit.c) links no nn and serves the engine-only suites too. */
#ifndef GZ_TESTS_TESTKIT_NN_H
#define GZ_TESTS_TESTKIT_NN_H

#include "nn/nn.h"
#include "tests/testkit.h"

/* A new model: BLOCKS residual blocks of CHANNELS, boards up to SIZE,
 * weights drawn from SEED; fails the test when it cannot be made. The
 * caller frees it. */
static inline nn_model_t *small_model(int blocks, int channels, int size, uint64_t seed)
{
    nn_config_t cfg;
    nn_config_default(&cfg, blocks, channels, size);
    char err[256];
    nn_model_t *m = nn_model_create(&cfg, seed, err, sizeof err);
    ck_assert_msg(m != NULL, "nn_model_create: %s", err);
    return m;
}

/* Saves M to PATH; fails the test when that fails. */
static inline void save_model(const nn_model_t *m, const char *path)
{
    char err[256];
    ck_assert_msg(nn_model_save(m, path, err, sizeof err) == 0, "nn_model_save: %s", err);
}

/* A fresh temporary file (its name into PATH, LEN bytes) holding
 * small_model(BLOCKS, CHANNELS, SIZE, SEED). */
static inline void small_model_file(char *path, size_t len, int blocks, int channels, int size,
                                    uint64_t seed)
{
    make_tmpfile(path, len);
    nn_model_t *m = small_model(blocks, channels, size, seed);
    save_model(m, path);
    nn_model_free(m);
}

/* Scales M's policy and value output weights by K: sharper logits, as a
 * trained net's. */
static inline void sharpen_model(nn_model_t *m, float k)
{
    nn_layout_t L;
    nn_param_layout(&m->cfg, &L);
    for (int i = 0; i < m->cfg.policy_head; i++)
        m->params[L.pol_w2 + i] *= k;
    for (int i = 0; i < 3 * m->cfg.value_hidden; i++)
        m->params[L.val_fc2_w + i] *= k;
}

#endif
