/* gomoku: entry point; dispatches to one file per subcommand. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmds.h"
#include "selfplay/settings.h"
#include "util/util.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    int hidden;        /* internal commands (spawned by the trainer) */
    int subcommands;   /* 'gomoku help NAME SUB' shows SUB's own help */
} command_t;

static const command_t commands[] = {
    {"rules", cmd_rules, "replay moves under a rule: side to move, winner, forbidden points", 0, 0},
    {"records", cmd_records, "dump, stats, psq: read game record files (.gzr)", 0, 1},
    {"play", cmd_play, "play in the terminal: human, bots or models", 0, 0},
    {"match", cmd_match, "play two players against each other; W-L-D and Elo", 0, 0},
    {"selfplay", cmd_selfplay, "batched self-play, writes game records", 0, 0},
    {"model", cmd_model, "init, grow, info, loss: create, grow and inspect weights files (.gzm)", 0, 1},
    {"train", cmd_train, "training run: spawns workers, trains, checkpoints, resumes", 0, 0},
    {"pbrain", cmd_pbrain, "Gomocup (piskvork) protocol engine on stdin/stdout", 0, 0},
    {"serve", cmd_serve, "a browser board: watch a training run live, play the model", 0, 0},
    {"analyze", cmd_analyze, "analysis engine: JSON queries on stdin, JSON answers (KataGo-style)", 0, 0},
    {"calibrate", cmd_calibrate, "the value head's win rate against solved positions and results", 0, 0},
    {"bench", cmd_bench, "throughput benchmarks (rules, nn, mcts, selfplay, train, vcf, vct, broker): JSON lines", 0, 1},
    {"device", cmd_device, "list compute devices and check each with a tiny convolution", 0, 0},
    {"worker", cmd_worker, "self-play worker: started by 'gomoku train' (or by hand with --broker)", 0, 0},
};
#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void usage(FILE *f)
{
    fprintf(f, "usage: gomoku COMMAND [options]   (gomoku help COMMAND for details)\n\ncommands:\n");
    for (int i = 0; i < NCOMMANDS; i++)
        if (!commands[i].hidden)
            fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'gomoku help settings' lists every setting of every command.\n");
}

static const command_t *find(const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int unknown(const char *name)
{
    fprintf(stderr, "gomoku: unknown command '%s'\n"
                    "usage: gomoku COMMAND [options] ('gomoku help' lists the commands)\n", name);
    return 2;
}

int main(int argc, char **argv)
{
    /* Gomocup managers run brains named pbrain-*: speak the protocol at once. */
    const char *base = strrchr(argv[0], '/');
    if (strncmp(base ? base + 1 : argv[0], "pbrain-", 7) == 0)
        return cmd_pbrain(argc, argv);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        if (argc >= 3 && strcmp(name, "help") == 0) {
            if (strcmp(argv[2], "settings") == 0) {
                settings_print(stdout);
                return 0;
            }
            const command_t *c = find(argv[2]);
            if (!c)
                return unknown(argv[2]);
            /* 'gomoku help model grow': a subcommand's own help */
            bool sub = c->subcommands && argc >= 4;
            char *hargv[] = {argv[2], sub ? argv[3] : "--help", "--help", NULL};
            return c->run(sub ? 3 : 2, hargv);
        }
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        printf("gomoku-zero %s\n", GZ_VERSION);
        return 0;
    }
    const command_t *c = find(name);
    if (!c)
        return unknown(name);
    return c->run(argc - 1, argv + 1);
}
