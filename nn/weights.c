/* The .gzm weights file: header, little-endian fp32 tensors, CRC32.
 *
 *   off  size  field
 *     0     4  magic "GZM1"
 *     4     4  version (NN_FILE_VERSION)
 *     8    36  board_max, in_planes, blocks, channels, policy_head,
 *              value_head, value_hidden, rule, policy_outputs   (u32 each;
 *              version 1, written for one output, has 0 there)
 *    44     8  step (u64)
 *    52     8  generation (u64)
 *    60     8  nparams (u64)
 *    68     4  version 3 and 4: input feature set (nn_features_t; not 0 in 3)
 *    72     4  version 4 only: value pooling (nn_value_pool_t, not 0)
 * 68|72|76 4*np  params (fp32)
 *   end     4  CRC32 (zlib) of every byte before it
 * All integers little endian. */
#include "nn/nn.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/util.h"

#define HEADER_BYTES 68
static const unsigned char MAGIC[4] = {'G', 'Z', 'M', '1'};

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

int nn_file_version(const nn_config_t *cfg)
{
    return cfg->value_pool != NN_POOL_MEAN       ? 4
           : cfg->features != NN_FEATURES_BASIC ? 3
           : cfg->policy_outputs > 1            ? 2
                                                : 1;
}

/* Bytes before the params in a file of version v. */
static size_t header_bytes(uint32_t v)
{
    return v >= 4 ? HEADER_BYTES + 8 : v >= 3 ? HEADER_BYTES + 4 : HEADER_BYTES;
}

/* Serialise the whole file into one buffer (owned by the caller). */
static unsigned char *model_serialise(const nn_model_t *m, size_t *len)
{
    const nn_config_t *c = &m->cfg;
    int version = nn_file_version(c);
    size_t hb = header_bytes((uint32_t)version), n = hb + 4 * m->nparams + 4;
    unsigned char *buf = malloc(n);
    if (!buf)
        return NULL;
    memcpy(buf, MAGIC, 4);
    put32(buf + 4, (uint32_t)version);
    const uint32_t dims[9] = {(uint32_t)c->board_max, (uint32_t)c->in_planes,
                              (uint32_t)c->blocks, (uint32_t)c->channels,
                              (uint32_t)c->policy_head, (uint32_t)c->value_head,
                              (uint32_t)c->value_hidden, m->rule,
                              version == 1 ? 0 : (uint32_t)c->policy_outputs};
    for (int i = 0; i < 9; i++)
        put32(buf + 8 + 4 * i, dims[i]);
    put64(buf + 44, m->step);
    put64(buf + 52, m->generation);
    put64(buf + 60, m->nparams);
    if (version >= 3)
        put32(buf + HEADER_BYTES, (uint32_t)c->features);
    if (version >= 4)
        put32(buf + HEADER_BYTES + 4, (uint32_t)c->value_pool);
    unsigned char *p = buf + hb;
    for (size_t i = 0; i < m->nparams; i++) {
        uint32_t u;
        memcpy(&u, &m->params[i], 4);
        put32(p + 4 * i, u);
    }
    uLong crc = crc32(0L, Z_NULL, 0);
    size_t body = n - 4;
    for (size_t off = 0; off < body;) {   /* zlib takes uInt lengths */
        uInt chunk = (uInt)(body - off > (1u << 30) ? (1u << 30) : body - off);
        crc = crc32(crc, buf + off, chunk);
        off += chunk;
    }
    put32(buf + body, (uint32_t)crc);
    *len = n;
    return buf;
}

int nn_model_save(const nn_model_t *m, const char *path, char *err, size_t errlen)
{
    size_t len;
    unsigned char *buf = model_serialise(m, &len);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int rc = util_write_atomic(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

/* Read a whole regular file; NULL with err set. */
static unsigned char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        fclose(f);
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    unsigned char *buf = malloc(n ? n : 1);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory for %zu bytes", path, n);
        fclose(f);
        return NULL;
    }
    size_t got = fread(buf, 1, n, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != n) {
        snprintf(err, errlen, "%s: read failed", path);
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

static uint32_t crc_of(const unsigned char *p, size_t n)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t off = 0; off < n;) {
        uInt chunk = (uInt)(n - off > (1u << 30) ? (1u << 30) : n - off);
        crc = crc32(crc, p + off, chunk);
        off += chunk;
    }
    return (uint32_t)crc;
}

nn_model_t *nn_model_load(const char *path, char *err, size_t errlen)
{
    size_t len;
    unsigned char *buf = read_file(path, &len, err, errlen);
    if (!buf)
        return NULL;
    nn_model_t *m = NULL;
    if (len < 4 || memcmp(buf, MAGIC, 4) != 0) {
        if (len < 4 && memcmp(buf, MAGIC, len) == 0)
            snprintf(err, errlen, "%s: truncated: %zu bytes, a model header is %d bytes",
                     path, len, HEADER_BYTES);
        else
            snprintf(err, errlen, "%s: not a gomoku model file (bad magic)", path);
        goto out_free_buf;
    }
    if (len < 8) {
        snprintf(err, errlen, "%s: truncated: %zu bytes, a model header is %d bytes", path,
                 len, HEADER_BYTES);
        goto out_free_buf;
    }
    uint32_t version = get32(buf + 4);
    if (version < 1 || version > NN_FILE_VERSION) {
        snprintf(err, errlen,
                 "%s: unknown model file version %u (this build reads versions 1..%d; "
                 "use the gomoku that wrote it, or re-create the model)",
                 path, version, NN_FILE_VERSION);
        goto out_free_buf;
    }
    size_t hb = header_bytes(version);
    if (len < hb) {
        snprintf(err, errlen, "%s: truncated: %zu bytes, a model header is %zu bytes", path,
                 len, hb);
        goto out_free_buf;
    }
    uint32_t d[9];
    for (int i = 0; i < 9; i++)
        d[i] = get32(buf + 8 + 4 * i);
    nn_config_t cfg;
    uint32_t maxdim = 1u << 20;   /* keeps the int casts below meaningful */
    static const char *const dim_names[7] = {"board max", "input planes", "blocks", "channels",
                                             "policy head", "value head", "value hidden"};
    for (int i = 0; i < 7; i++)
        if (d[i] > maxdim) {
            snprintf(err, errlen, "%s: dims out of range: %s %u", path, dim_names[i], d[i]);
            goto out_free_buf;
        }
    cfg.board_max = (int)d[0];
    cfg.in_planes = (int)d[1];
    cfg.blocks = (int)d[2];
    cfg.channels = (int)d[3];
    cfg.policy_head = (int)d[4];
    cfg.value_head = (int)d[5];
    cfg.value_hidden = (int)d[6];
    if (version == 1)
        cfg.policy_outputs = 1;   /* the field was reserved (0) */
    else if (d[8] >= 1 && d[8] <= NN_MAX_POLICY_OUTPUTS)
        cfg.policy_outputs = (int)d[8];
    else {
        snprintf(err, errlen, "%s: dims out of range: policy outputs %u (1..%d)", path, d[8],
                 NN_MAX_POLICY_OUTPUTS);
        goto out_free_buf;
    }
    cfg.features = NN_FEATURES_BASIC;
    if (version >= 3) {
        uint32_t f = get32(buf + HEADER_BYTES);
        if (f >= NN_FEATURES_COUNT) {
            snprintf(err, errlen, "%s: unknown input feature set %u (this build knows 0 basic, "
                     "1 threat; use the gomoku that wrote it)", path, f);
            goto out_free_buf;
        }
        cfg.features = (int)f;
    }
    cfg.value_pool = NN_POOL_MEAN;
    if (version >= 4) {
        uint32_t vp = get32(buf + HEADER_BYTES + 4);
        if (vp >= NN_POOL_COUNT) {
            snprintf(err, errlen, "%s: unknown value pooling %u (this build knows 0 mean, "
                     "1 mean and max; use the gomoku that wrote it)", path, vp);
            goto out_free_buf;
        }
        cfg.value_pool = (int)vp;
    }
    char why[160];
    if (nn_config_check(&cfg, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: dims out of range: %s", path, why);
        goto out_free_buf;
    }
    if (d[7] >= RULE_COUNT) {
        snprintf(err, errlen, "%s: dims out of range: rule %u unknown", path, d[7]);
        goto out_free_buf;
    }
    uint64_t np = get64(buf + 60);
    size_t want_np = nn_param_count(&cfg);
    if (np != want_np) {
        snprintf(err, errlen,
                 "%s: parameter count %llu does not match the dims (%d blocks x %d channels "
                 "need %zu)", path, (unsigned long long)np, cfg.blocks, cfg.channels, want_np);
        goto out_free_buf;
    }
    size_t want = hb + 4 * want_np + 4;
    if (len < want) {
        snprintf(err, errlen, "%s: truncated: %zu bytes, expected %zu", path, len, want);
        goto out_free_buf;
    }
    if (len > want) {
        snprintf(err, errlen, "%s: %zu trailing bytes after the model (expected %zu bytes)",
                 path, len - want, want);
        goto out_free_buf;
    }
    uint32_t stored = get32(buf + want - 4), computed = crc_of(buf, want - 4);
    if (stored != computed) {
        snprintf(err, errlen, "%s: CRC mismatch (stored %08x, computed %08x): file is corrupt",
                 path, stored, computed);
        goto out_free_buf;
    }
    m = calloc(1, sizeof *m);
    if (!m)
        goto out_nomem;
    m->cfg = cfg;
    m->rule = d[7];
    m->step = get64(buf + 44);
    m->generation = get64(buf + 52);
    m->nparams = want_np;
    m->params = malloc(want_np * sizeof(float));
    if (!m->params)
        goto out_free_model;
    for (size_t i = 0; i < want_np; i++) {
        uint32_t u = get32(buf + hb + 4 * i);
        memcpy(&m->params[i], &u, 4);
        if (!isfinite(m->params[i])) {
            /* a diverged run's weights: refuse them rather than play NaN */
            snprintf(err, errlen, "%s: weight %zu of %zu is %s: the model is unusable "
                     "(a diverged training run?)", path, i, want_np,
                     isnan(m->params[i]) ? "NaN" : "infinite");
            free(m->params);
            free(m);
            m = NULL;
            goto out_free_buf;
        }
    }
    free(buf);
    return m;

out_free_model:
    free(m);
    m = NULL;
out_nomem:
    snprintf(err, errlen, "%s: out of memory", path);
out_free_buf:
    free(buf);
    return NULL;
}

int nn_file_crc(const char *path, uint32_t *crc, char *err, size_t errlen)
{
    size_t len;
    unsigned char *buf = read_file(path, &len, err, errlen);
    if (!buf)
        return -1;
    *crc = nn_weights_crc(buf, len);
    free(buf);
    return 0;
}

uint32_t nn_weights_crc(const void *data, size_t len)
{
    /* not over the trailer: the CRC of bytes followed by their own CRC is
     * one constant for every intact file */
    return crc_of(data, len >= 4 ? len - 4 : len);
}

nn_model_t *nn_model_open(const char *path, int blocks, int channels, int board_max,
                          uint64_t seed, char *err, size_t errlen)
{
    if (path)
        return nn_model_load(path, err, errlen);
    nn_config_t cfg;
    nn_config_default(&cfg, blocks, channels, board_max);
    return nn_model_create(&cfg, seed, err, errlen);
}
