#include "cli/options.h"

#include <stdio.h>

int options_selfplay(arg_spec_t *out, selfplay_opts_t *o)
{
    const arg_spec_t rows[] = {
        {"visits", ARG_INT, &o->visits, 1, 1000000, "V  root visits of a full search (default 200)"},
        {"cheap-visits", ARG_INT, &o->cheap_visits, 0, 1000000,
         "V  visits of a cheap search, at most --visits (default 50; 0: every search full)"},
        {"full-frac", ARG_DOUBLE, &o->full_frac, 0, 1,
         "F  fraction of moves searched fully (default 0.25)"},
        {"parallel", ARG_INT, &o->parallel, 1, 65536, "G  concurrent games (default 16)"},
        {"threads", ARG_INT, &o->threads, 0, 256, "T  CPU backend threads (default 0: all cores)"},
        {"rule", ARG_RULE, &o->rule, 0, 0, "R  freestyle, standard or renju (default freestyle)"},
        {"size", ARG_INT, &o->size, BOARD_MIN, BOARD_MAX, "N  board size (default 15)"},
        {"seed", ARG_U64, &o->seed, 0, 0, "S  random seed (default 1)"},
    };
    for (int i = 0; i < ARGS_COUNT(rows); i++)
        out[i] = rows[i];
    return ARGS_COUNT(rows);
}

int options_player(arg_spec_t *out, player_opts_t *o, const char *visits_help)
{
    const arg_spec_t rows[] = {
        {"visits", ARG_INT, &o->visits, 0, 10000000, visits_help},
        {"time", ARG_INT, &o->time_ms, 0, 86400000,
         "MS  model players: time per move when --visits 0"},
        {"threads", ARG_INT, &o->threads, 1, 16,
         "T  model players: search threads on one tree, each with its own net, 1..16 (default 1)"},
        {"device", ARG_STR, &o->device, 0, 0, "D  model players: auto, cpu, cuda (default auto)"},
    };
    for (int i = 0; i < ARGS_COUNT(rows); i++)
        out[i] = rows[i];
    return ARGS_COUNT(rows);
}

int options_net(arg_spec_t *out, int *blocks, int *channels)
{
    out[0] = (arg_spec_t){"blocks", ARG_INT, blocks, 0, NN_MAX_BLOCKS,
                          "B  residual blocks of a random net (default 6)"};
    out[1] = (arg_spec_t){"channels", ARG_INT, channels, 1, NN_MAX_CHANNELS,
                          "C  trunk channels of a random net (default 64)"};
    return 2;
}

nn_model_t *options_model_open(const char *path, int blocks, int channels, int size,
                               uint64_t seed, char *err, size_t errlen)
{
    if (path)
        return nn_model_load(path, err, errlen);
    nn_config_t cfg;
    nn_config_default(&cfg, blocks, channels, size);
    return nn_model_create(&cfg, seed, err, errlen);
}

selfplay_t *options_selfplay_create(const selfplay_opts_t *o, nn_model_t *m, const char *cmd)
{
    char err[512], note[256];
    selfplay_t *sp = selfplay_create(o, m, m->generation, note, sizeof note, err, sizeof err);
    nn_model_free(m);
    if (!sp) {
        fprintf(stderr, "gomoku %s: %s\n", cmd, err);
        return NULL;
    }
    if (note[0])
        fprintf(stderr, "%s\n", note);
    return sp;
}
