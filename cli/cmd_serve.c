/* gomoku serve: options and signals; the server is web/server.c. */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "web/server.h"

static const cmd_help_t help = {
    "serve",
    "gomoku serve [--run RUN_DIR] [--model M] [--listen HOST:PORT] [--token T] [options]",
    "Serves a page to watch a training run and to play a model in a browser.\n"
    "Watch (with --run): the run's state, workers and rejected frames, loss and\n"
    "Elo curves, the newest self-play games move by move with the search's value,\n"
    "the checkpoints; updated live. The run directory is only read.\n"
    "Play: a board of any size and rule the model serves; its win rate and best\n"
    "line after each move, undo, new game, export as .psq. M is a model file or\n"
    "bot:greedy / bot:random; the default is the run's newest checkpoint with\n"
    "--run, else models/freestyle9-2x32.gzm.\n"
    "The server listens on 127.0.0.1:8080 by default (PORT 0: any free port; the\n"
    "address is printed). Another address needs --token T: the page is then\n"
    "http://HOST:PORT/?token=T, and every request must carry the token.",
};

int cmd_serve(int argc, char **argv)
{
    const char *run = NULL, *model = NULL, *listen = "127.0.0.1:8080", *token = NULL;
    const char *device = "auto", *prec_s = "auto";
    int visits = 400, games = 8, searches = 2;
    arg_spec_t specs[] = {
        {"run", ARG_STR, &run, 0, 0, "DIR  training run to watch (read only)"},
        {"model", ARG_STR, &model, 0, 0, "M  model file or bot:NAME to play (see above)"},
        {"listen", ARG_STR, &listen, 0, 0, "HOST:PORT  address (default 127.0.0.1:8080)"},
        {"token", ARG_STR, &token, 0, 0, "T  secret every request must carry (needed off loopback)"},
        {"visits", ARG_INT, &visits, 1, 1000000, "V  model playouts per move (default 400)"},
        {"device", ARG_STR, &device, 0, 0, "D  auto, cpu, cuda, ... (default auto)"},
        {"precision", ARG_STR, &prec_s, 0, 0, ARGS_PRECISION_HELP},
        {"games", ARG_INT, &games, 1, 64, "N  games kept at once (default 8)"},
        {"searches", ARG_INT, &searches, 1, 16, "N  searches running at once (default 2)"},
    };
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    nn_precision_t prec;
    if (args_precision(&help, prec_s, &prec) != ARGS_OK)
        return 2;
#if GZ_HAVE_HTTP
    if (!model && !run)
        model = "models/freestyle9-2x32.gzm";
    /* SIGINT/SIGTERM are taken by sigwait below: block them before any thread starts */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    web_server_opts_t wo = {.run_dir = run, .model = model, .listen = listen, .token = token,
                            .visits = visits, .device = device, .precision = prec,
                            .max_games = games, .max_searches = searches};
    char err[512], url[512];
    bool bad_arg;
    web_server_t *w = web_server_start(&wo, url, sizeof url, &bad_arg, err, sizeof err);
    if (!w) {
        pthread_sigmask(SIG_UNBLOCK, &sigs, NULL);
        if (bad_arg)
            return args_fail(&help, "%s", err);
        fprintf(stderr, "gomoku serve: %s\n", err);
        return 1;
    }
    printf("gomoku serve: %s%s\n", url, run ? "" : "  (no --run: play only)");
    fflush(stdout);
    int sig;
    sigwait(&sigs, &sig);
    fprintf(stderr, "gomoku serve: stopping\n");
    web_server_free(w);
    pthread_sigmask(SIG_UNBLOCK, &sigs, NULL);
    return 0;
#else
    (void)run;
    (void)model;
    (void)listen;
    (void)token;
    (void)device;
    (void)prec;
    fprintf(stderr, "gomoku serve: this build has no HTTP server (apt-get install "
                    "libmicrohttpd-dev, then meson setup --reconfigure with -Dhttp=enabled)\n");
    return 1;
#endif
}
