/* gomoku serve: options and signals; the server is web/server.c. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli/cmds.h"
#include "cli/options.h"
#include "selfplay/args.h"
#include "util/util.h"
#include "web/server.h"

static const cmd_help_t help = {
    "serve", BY_SERVE,
    "gomoku serve [--run RUN_DIR] [--model M] [--load FILE.psq] [--listen HOST:PORT] [--token T]\n"
    "             [options]",
    "Serves a page to watch a training run and to play a model in a browser.\n"
    "Watch (with --run): the run's state, workers and rejected frames, loss and\n"
    "Elo curves, the newest self-play games move by move with the search's value,\n"
    "the checkpoints; updated live. The run directory is only read.\n"
    "Play: a board of any size and rule the model serves; its win rate and best\n"
    "line and its candidate moves after each move, the game's win-rate graph,\n"
    "undo, new game, load and save .psq (--load: the first game starts from\n"
    "FILE.psq, under the model's rule). M is a model file or\n"
    "bot:greedy / bot:random; the default is the run's newest checkpoint with\n"
    "--run, else models/freestyle9-2x32.gzm.\n"
    "The server listens on 127.0.0.1:8080 by default (PORT 0: any free port; the\n"
    "address is printed). Another address needs --token T: the page is then\n"
    "http://HOST:PORT/?token=T, and every request must carry the token.",
};

#if GZ_HAVE_HTTP
/* Posted by SIGINT/SIGTERM, whichever thread the kernel hands them to
 * (sem_post is async-signal-safe); the main thread waits on it. */
static sem_t stop_sem;

static void on_stop_signal(int sig)
{
    (void)sig;
    sem_post(&stop_sem);
}
#endif

int cmd_serve(int argc, char **argv)
{
    web_server_opts_t wo = {0};
    arg_spec_t specs[ARGS_MAX] = {
        ARG(S_SERVE_RUN, &wo.run_dir), ARG(S_SERVE_MODEL, &wo.model),
        ARG(S_LISTEN, &wo.listen), ARG(S_TOKEN, &wo.token),
        ARG(S_SERVE_VISITS, &wo.visits), ARG(S_DEVICE, &wo.device), ARG(S_PRECISION, &wo.precision),
        ARG(S_SERVE_GAMES, &wo.max_games), ARG(S_SEARCHES, &wo.max_searches),
        ARG(S_LOAD, &wo.load),
    };
    search_settings_default(&wo.search);   /* the VCF checks: not options of serve */
    int ns = args_count(specs, ARGS_MAX);
    ns += options_search(specs + ns, &wo.search);
    int rc = args_parse(&help, specs, ns, argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
#if GZ_HAVE_HTTP
    if (!wo.model && !wo.run_dir)
        wo.model = "models/freestyle9-2x32.gzm";
    /* SIGINT/SIGTERM: blocked in the server's threads (they inherit the
     * mask), and caught by a handler: a thread started before main (a BLAS
     * library's pool) does not block them, and with the default action a
     * signal the kernel hands to it would kill the process before the
     * server stops (check_serve saw it) */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    sem_init(&stop_sem, 0, 0);
    struct sigaction old[2];
    util_catch_stop_signals(on_stop_signal, old);
    signal(SIGPIPE, SIG_IGN);
    char err[512], url[512];
    bool bad_arg;
    web_server_t *w = web_server_start(&wo, url, sizeof url, &bad_arg, err, sizeof err);
    if (!w) {
        util_restore_stop_signals(old);
        sem_destroy(&stop_sem);
        pthread_sigmask(SIG_UNBLOCK, &sigs, NULL);
        if (bad_arg)
            return args_fail(&help, "%s", err);
        fprintf(stderr, "gomoku serve: %s\n", err);
        return 1;
    }
    printf("gomoku serve: %s%s\n", url, wo.run_dir ? "" : "  (no --run: play only)");
    fflush(stdout);
    pthread_sigmask(SIG_UNBLOCK, &sigs, NULL);   /* this thread waits for them */
    while (sem_wait(&stop_sem) != 0 && errno == EINTR)
        ;
    fprintf(stderr, "gomoku serve: stopping\n");
    web_server_free(w);
    util_restore_stop_signals(old);
    sem_destroy(&stop_sem);
    return 0;
#else
    fprintf(stderr, "gomoku serve: this build has no HTTP server (apt-get install "
                    "libmicrohttpd-dev, then meson setup --reconfigure with -Dhttp=enabled)\n");
    return 1;
#endif
}
