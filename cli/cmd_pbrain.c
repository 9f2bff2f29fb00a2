/* gomoku pbrain: the Gomocup (piskvork) protocol on stdin/stdout. */
#include <stdio.h>
#include <string.h>

#include "cli/cmds.h"
#include "play/pbrain.h"
#include "cli/options.h"
#include "selfplay/args.h"

static const cmd_help_t help = {
    "pbrain", BY_PBRAIN,
    "gomoku pbrain --model M [--threads T] [--device D] [--precision P] [--seed S]",
    "Play through the Gomocup (piskvork) protocol on stdin/stdout, as a brain for\n"
    "Piskvork, Yixin Board or a tournament manager. M is a model file (.gzm)\n"
    "searched with MCTS, bot:greedy or bot:random, or mcts:uniform (the search\n"
    "with uniform priors and no value net: tactics only). The program installed\n"
    "as pbrain-gomoku-zero runs this command; there --model defaults to\n"
    "gomoku-zero.gzm next to the program, else bot:greedy.\n"
    "Commands: START RECTSTART RESTART BEGIN TURN BOARD INFO END ABOUT TAKEBACK\n"
    "PLAY SWAP2BOARD YXSTOP STOP, and Yixin Board's YXSHOWINFO YXBOARD YXNBEST\n"
    "YXSHOWFORBID YXBLOCK YXBLOCKUNDO YXBLOCKRESET YXSEARCHDEFEND YXBALANCEONE\n"
    "YXBALANCETWO (INFO show_detail 1: realtime lines while searching; the README\n"
    "lists every reply). INFO timeout_turn / time_left bound every move (a\n"
    "measured safety margin is kept, at most 45% of the move's time); max_memory\n"
    "sizes the search tree and cache. Input is read while a move is searched: END\n"
    "ends a search at once, YXSTOP plays the best move found so far.",
};

/* For pbrain-gomoku-zero started by a manager with no arguments. */
static const char *default_model(const char *argv0, char *buf, size_t len)
{
    const char *slash = strrchr(argv0, '/');
    if (slash && (size_t)(slash - argv0) + 20 < len) {
        snprintf(buf, len, "%.*s/gomoku-zero.gzm", (int)(slash - argv0), argv0);
        FILE *f = fopen(buf, "rb");
        if (f) {
            fclose(f);
            return buf;
        }
    }
    return NULL;
}

int cmd_pbrain(int argc, char **argv)
{
    pbrain_opts_t o;
    pbrain_opts_default(&o);
    o.model = NULL;
    arg_spec_t specs[ARGS_MAX] = {
        ARG(S_PBRAIN_MODEL, &o.model), ARG(S_SEARCH_THREADS, &o.threads),
        ARG(S_DEVICE, &o.device), ARG(S_PRECISION, &o.precision), ARG(S_SEED, &o.seed),
    };
    int ns = args_count(specs, ARGS_MAX);
    ns += options_search(specs + ns, &o.search);
    int rc = args_parse(&help, specs, ns, argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    char buf[4096];
    int installed = strncmp(argv[0], "pbrain-", 7) == 0 || strstr(argv[0], "/pbrain-") != NULL;
    if (!o.model && installed) {
        o.model = default_model(argv[0], buf, sizeof buf);
        if (!o.model)
            o.model = "bot:greedy";
    }
    if (!o.model)
        return args_fail(&help, "--model is required");
    char err[512];
    pbrain_t *pb = pbrain_create(&o, err, sizeof err);
    if (!pb) {
        fprintf(stderr, "gomoku pbrain: %s\n", err);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    pbrain_run(pb, stdin, stdout);
    pbrain_free(pb);
    return 0;
}
