#include "selfplay/checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/util.h"

#define OPT_HEADER 24
static const unsigned char OPT_MAGIC[4] = {'G', 'Z', 'O', '1'};

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

void ckpt_opt_path(const char *gzm_path, char *out, size_t outlen)
{
    size_t l = strlen(gzm_path);
    if (l > 4 && strcmp(gzm_path + l - 4, ".gzm") == 0)
        snprintf(out, outlen, "%.*s.opt", (int)(l - 4), gzm_path);
    else
        snprintf(out, outlen, "%s.opt", gzm_path);
}

int ckpt_save(nn_net_t *net, nn_model_t *m, const char *gzm_path, char *err, size_t errlen)
{
    size_t n = m->nparams, len = OPT_HEADER + 4 * n + 4;
    unsigned char *buf = malloc(len);
    if (!buf) {
        util_errf(err, errlen, "%s: out of memory", gzm_path);
        return -1;
    }
    float *mom = (float *)malloc(n * sizeof(float));
    if (!mom) {
        free(buf);
        util_errf(err, errlen, "%s: out of memory", gzm_path);
        return -1;
    }
    nn_net_get_momentum(net, mom);
    memcpy(buf, OPT_MAGIC, 4);
    put32(buf + 4, 1);
    put64(buf + 8, m->step);
    put64(buf + 16, n);
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &mom[i], 4);
        put32(buf + OPT_HEADER + 4 * i, u);
    }
    free(mom);
    put32(buf + len - 4, (uint32_t)crc32(0L, buf, (uInt)(len - 4)));
    char opt[4200];
    ckpt_opt_path(gzm_path, opt, sizeof opt);
    int rc = util_write_atomic(opt, buf, len, err, errlen);
    free(buf);
    if (rc != 0)
        return -1;
    nn_net_get_weights(net, m->params);
    return nn_model_save(m, gzm_path, err, errlen);
}

int ckpt_load_optimizer(nn_net_t *net, const nn_model_t *m, const char *gzm_path, char *err,
                        size_t errlen)
{
    char opt[4200];
    ckpt_opt_path(gzm_path, opt, sizeof opt);
    FILE *f = fopen(opt, "rbe");
    if (!f) {
        util_errf(err, errlen, "%s: %s", opt, strerror(errno));
        return 0;
    }
    size_t n = m->nparams, len = OPT_HEADER + 4 * n + 4;
    unsigned char *buf = malloc(len + 1);
    float *mom = malloc(n * sizeof(float));
    int rc = -1;
    if (!buf || !mom) {
        util_errf(err, errlen, "%s: out of memory", opt);
        goto out_free;
    }
    rc = 0;
    size_t got = fread(buf, 1, len + 1, f);
    if (got < OPT_HEADER || memcmp(buf, OPT_MAGIC, 4) != 0 || get32(buf + 4) != 1) {
        util_errf(err, errlen, "%s: not an optimizer state file of this version", opt);
        goto out_free;
    }
    if (get64(buf + 8) != m->step || get64(buf + 16) != n || got != len) {
        util_errf(err, errlen, "%s: for step %llu with %llu parameters, the model is step "
                  "%llu with %zu", opt, (unsigned long long)get64(buf + 8),
                  (unsigned long long)get64(buf + 16), (unsigned long long)m->step, n);
        goto out_free;
    }
    if (get32(buf + len - 4) != (uint32_t)crc32(0L, buf, (uInt)(len - 4))) {
        util_errf(err, errlen, "%s: CRC mismatch (torn or corrupt)", opt);
        goto out_free;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t u = get32(buf + OPT_HEADER + 4 * i);
        memcpy(&mom[i], &u, 4);
        if (!isfinite(mom[i])) {
            util_errf(err, errlen, "%s: momentum %zu is not finite", opt, i);
            goto out_free;
        }
    }
    nn_net_set_momentum(net, mom);
    rc = 1;
out_free:
    fclose(f);
    free(buf);
    free(mom);
    return rc;
}
