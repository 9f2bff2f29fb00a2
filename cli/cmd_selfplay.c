/* gomoku selfplay: batched self-play from the command line, games written
 * as record frames to rotating shards DIR/selfplay-<seed>-NNNN.gzr
 * (selfplay/shards.h). SIGINT/SIGTERM: stop, drop the games in flight,
 * close and rename the shard, print the summary, exit 0. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmds.h"
#include "selfplay/args.h"
#include "selfplay/selfplay.h"
#include "selfplay/shards.h"
#include "util/util.h"

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

static void print_progress(const selfplay_stats_t *st, uint64_t target, double secs, bool tty,
                           bool final)
{
    double avg = st->batches ? (double)st->evals / (double)st->batches : 0.0;
    fprintf(stderr, "%sgames %llu/%llu  %.2f games/s  %.0f evals/s  avg batch %.1f  moves %llu%s",
            tty ? "\r" : "", (unsigned long long)st->games, (unsigned long long)target,
            secs > 0 ? st->games / secs : 0.0, secs > 0 ? st->evals / secs : 0.0, avg,
            (unsigned long long)st->moves, tty && !final ? "   " : "\n");
    fflush(stderr);
}

static const cmd_help_t help = {
    "selfplay", BY_SELFPLAY,
    "gomoku selfplay --model M|--random-net --games N --out DIR [options]",
    "Plays N self-play games, G at a time with one batched NN call per step\n"
    "for all G trees, and writes them as record frames to rotating shards\n"
    "DIR/selfplay-<seed>-NNNN.gzr (each written as .tmp and renamed when\n"
    "complete). A progress line goes to stderr, a JSON summary to stdout.\n"
    "Ctrl-C stops cleanly: games in flight are dropped, the shard is closed."};

int cmd_selfplay(int argc, char **argv)
{
    selfplay_opts_t o;
    selfplay_opts_default(&o);
    const char *model_path = NULL, *out = NULL;
    bool random_net;
    int games, blocks, channels, shard_games;
    arg_spec_t specs[ARGS_MAX] = {
        ARG(S_SELFPLAY_MODEL, &model_path), ARG(S_RANDOM_NET, &random_net),
        ARG(S_SELFPLAY_GAMES, &games), ARG(S_SELFPLAY_OUT, &out), ARG(S_DEVICE, &o.device),
        ARG(S_SHARD_GAMES, &shard_games), ARG(S_PATNET, &o.patnet),
        ARG(S_OPPONENT, &o.opponent), ARG(S_OPPONENT_FRAC, &o.opponent_frac),
        ARG(S_BLOCKS, &blocks), ARG(S_CHANNELS, &channels),
    };
    int ns = args_count(specs, ARGS_MAX);
    ns += selfplay_args(specs + ns, &o);
    int rc = args_parse(&help, specs, ns, argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (!model_path == !random_net)
        return args_fail(&help, "give exactly one of --model M and --random-net");
    if (!out || !out[0])
        return args_fail(&help, "--out DIR is required");
    if (o.cheap_visits > o.visits)
        fprintf(stderr, "gomoku selfplay: --cheap-visits %d is above --visits %d: cheap searches "
                "use %d visits\n", o.cheap_visits, o.visits, o.visits);

    char err[512];
    nn_model_t *m = nn_model_open(model_path, blocks, channels, o.size, o.seed, err,
                                       sizeof err);
    if (!m) {
        fprintf(stderr, "gomoku selfplay: %s\n", err);
        return 1;
    }
    shard_writer_t w;
    if (shard_writer_init(&w, out, o.seed, shard_games, err, sizeof err) != 0) {
        fprintf(stderr, "gomoku selfplay: %s\n", err);
        nn_model_free(m);
        return 1;
    }
    selfplay_t *sp = selfplay_start(&o, m, "selfplay");
    if (!sp)
        return 1;
    selfplay_set_max_games(sp, (uint64_t)games);

    struct sigaction old_sigs[2];
    util_catch_stop_signals(on_signal, old_sigs);
    g_stop = 0;

    bool tty = isatty(2);
    double t0 = util_now_ms() * 1e-3, last = t0;
    selfplay_stats_t st;
    int status = 0;
    for (;;) {
        selfplay_get_stats(sp, &st);
        if (st.games >= (uint64_t)games || g_stop || w.err[0])
            break;
        if (selfplay_step(sp, shard_writer_add, &w, err, sizeof err) < 0) {
            fprintf(stderr, "%sgomoku selfplay: %s\n", tty ? "\n" : "", err);
            status = 1;
            break;
        }
        double t = util_now_ms() * 1e-3;
        if (t - last >= (tty ? 1.0 : 10.0)) {
            selfplay_get_stats(sp, &st);
            print_progress(&st, (uint64_t)games, t - t0, tty, false);
            last = t;
        }
        if (selfplay_active(sp) == 0)
            break;
    }
    double secs = util_now_ms() * 1e-3 - t0;
    selfplay_get_stats(sp, &st);
    print_progress(&st, (uint64_t)games, secs, tty, true);
    if (shard_writer_close(&w) < 0 || w.err[0]) {
        fprintf(stderr, "gomoku selfplay: %s\n", w.err);
        status = 1;
    }
    util_restore_stop_signals(old_sigs);
    double avg = st.batches ? (double)st.evals / (double)st.batches : 0.0;
    printf("{\"out\":");
    util_json_write(stdout, out);
    printf(",\"games\":%llu,\"written\":%llu,\"shards\":%d,\"moves\":%llu,"
           "\"seconds\":%.3f,\"games_per_s\":%.4f,\"evals\":%llu,\"evals_per_s\":%.1f,"
           "\"avg_batch\":%.2f,\"cache_hits\":%llu,\"black\":%llu,\"white\":%llu,\"draws\":%llu,"
           "\"resigns\":%llu,\"no_resign_games\":%llu,\"false_resigns\":%llu,"
           "\"openings\":%llu,\"openings_redrawn\":%llu,\"openings_given_up\":%llu,"
           "\"vct_checks\":%llu,\"vct_wins\":%llu,\"vct_defences\":%llu,"
           "\"strong_black\":%llu,\"strong_black_wins\":%llu,"
           "\"strong_white\":%llu,\"strong_white_wins\":%llu,"
           "\"opponent_black\":%llu,\"opponent_black_wins\":%llu,"
           "\"opponent_white\":%llu,\"opponent_white_wins\":%llu,"
           "\"rule\":\"%s\",\"size\":%d,\"visits\":%d,\"cheap_visits\":%d,\"full_frac\":%.3f,"
           "\"parallel\":%d,\"interrupted\":%s}\n",
           (unsigned long long)st.games, (unsigned long long)w.games, w.shards,
           (unsigned long long)st.moves, secs, secs > 0 ? st.games / secs : 0.0,
           (unsigned long long)st.evals, secs > 0 ? st.evals / secs : 0.0, avg,
           (unsigned long long)st.cache_hits, (unsigned long long)st.results[RESULT_BLACK],
           (unsigned long long)st.results[RESULT_WHITE], (unsigned long long)st.results[RESULT_DRAW],
           (unsigned long long)st.resigns, (unsigned long long)st.no_resign_games,
           (unsigned long long)st.false_resigns, (unsigned long long)st.openings,
           (unsigned long long)st.openings_redrawn, (unsigned long long)st.openings_given_up,
           (unsigned long long)st.vct_checks, (unsigned long long)st.vct_wins,
           (unsigned long long)st.vct_defences, (unsigned long long)st.strong_games[0],
           (unsigned long long)st.strong_wins[0], (unsigned long long)st.strong_games[1],
           (unsigned long long)st.strong_wins[1], (unsigned long long)st.opponent_games[0],
           (unsigned long long)st.opponent_wins[0], (unsigned long long)st.opponent_games[1],
           (unsigned long long)st.opponent_wins[1], rule_name(o.rule), o.size, o.visits,
           o.cheap_visits, o.full_frac, o.parallel, g_stop ? "true" : "false");
    selfplay_free(sp);
    return status;
}
