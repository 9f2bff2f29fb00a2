/* gomoku bench selfplay: self-play throughput with a real (randomly
 * initialised) net of the given shape, as games/hour. */
#include <stdio.h>
#include <time.h>

#include "bench/bench.h"
#include "selfplay/args.h"
#include "selfplay/selfplay.h"
#include "util/util.h"

static int count_game(void *user, const game_record_t *rec)
{
    uint64_t *plies = user;
    *plies += rec->nplies;
    return 0;
}

static const cmd_help_t help = {
    "bench selfplay", BY_BENCH_SELFPLAY,
    "gomoku bench selfplay [--device D --blocks 6 --channels 64 --visits 200 "
    "--parallel G --seconds S]",
    "Runs batched self-play with a randomly initialised net of the given shape\n"
    "for S seconds and prints one JSON line: moves/s, evals/s, average batch\n"
    "and games/hour = moves/s * 3600 / mean plies of the games finished (the\n"
    "games under way at the end count only through their moves)."};

int bench_selfplay(int argc, char **argv)
{
    selfplay_opts_t o;
    selfplay_opts_default(&o);
    o.quiet = 1;
    int blocks, channels;
    double seconds;
    arg_spec_t specs[ARGS_MAX] = {
        ARG(S_BENCH_DEVICE, &o.device), ARG(S_BENCH_SELFPLAY_SECONDS, &seconds),
        ARG(S_BLOCKS, &blocks), ARG(S_CHANNELS, &channels),
    };
    int ns = args_count(specs, ARGS_MAX);
    ns += selfplay_args(specs + ns, &o);
    int rc = args_parse(&help, specs, ns, argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    char err[512];
    nn_model_t *m = nn_model_open(NULL, blocks, channels, o.size, o.seed, err, sizeof err);
    if (!m) {
        fprintf(stderr, "gomoku bench selfplay: %s\n", err);
        return 1;
    }
    selfplay_t *sp = selfplay_start(&o, m, "bench selfplay");
    if (!sp)
        return 1;
    uint64_t plies = 0;
    double t0 = util_now_ms() * 1e-3, secs = 0.0;
    while ((secs = util_now_ms() * 1e-3 - t0) < seconds) {
        if (selfplay_step(sp, count_game, &plies, err, sizeof err) < 0) {
            fprintf(stderr, "gomoku bench selfplay: %s\n", err);
            selfplay_free(sp);
            return 1;
        }
    }
    selfplay_stats_t st;
    selfplay_get_stats(sp, &st);
    double mean_len = st.games ? (double)plies / (double)st.games : 0.0;
    double moves_s = st.moves / secs;
    /* no finished game: no game length to divide by, so no figure (null) */
    char gph[32] = "null";
    if (mean_len > 0)
        snprintf(gph, sizeof gph, "%.1f", moves_s * 3600.0 / mean_len);
    printf("{\"bench\":\"selfplay\",\"device\":\"%s\",\"blocks\":%d,\"channels\":%d,"
           "\"rule\":\"%s\",\"size\":%d,\"visits\":%d,\"cheap_visits\":%d,\"full_frac\":%.2f,"
           "\"parallel\":%d,\"seconds\":%.1f,\"games_finished\":%llu,\"moves\":%llu,"
           "\"mean_plies\":%.1f,\"moves_per_s\":%.2f,\"evals_per_s\":%.1f,\"avg_batch\":%.2f,"
           "\"games_per_hour\":%s}\n",
           o.device, blocks, channels, rule_name(o.rule), o.size, o.visits, o.cheap_visits,
           o.full_frac, o.parallel, secs, (unsigned long long)st.games,
           (unsigned long long)st.moves, mean_len, moves_s, st.evals / secs,
           st.batches ? (double)st.evals / st.batches : 0.0,
           gph);
    selfplay_free(sp);
    return 0;
}
