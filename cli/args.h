/* Command-line option parsing shared by every subcommand.
 *
 * Options are `--name value` or `--name=value`; flags take no value.
 * Anything not starting with "--" is a positional argument. A bad option
 * prints one line "gomoku CMD: <what is wrong>" plus the usage line to
 * stderr and args_parse returns ARGS_ERROR (the command exits 2).
 * `--help` / `-h` prints the full help to stdout and returns ARGS_HELP
 * (the command exits 0). */
#ifndef GZ_CLI_ARGS_H
#define GZ_CLI_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/board.h"
#include "nn/nn.h"

/* ARG_RULE: a rule name (freestyle, standard, renju) into a rule_t. */
typedef enum { ARG_FLAG, ARG_INT, ARG_DOUBLE, ARG_STR, ARG_U64, ARG_RULE } arg_kind_t;

typedef struct arg_spec {
    const char *name;      /* without the dashes: "games" */
    arg_kind_t kind;
    void *dst;             /* bool*, int*, double*, const char**, uint64_t*, rule_t* */
    double min, max;       /* range for ARG_INT / ARG_DOUBLE / ARG_U64 (both 0: any) */
    const char *help;      /* "N  games to play (default 100)" */
} arg_spec_t;

typedef struct cmd_help {
    const char *cmd;       /* "selfplay" */
    const char *usage;     /* "gomoku selfplay --model M [options]" */
    const char *summary;   /* one paragraph */
} cmd_help_t;

enum { ARGS_OK = 0, ARGS_HELP = 1, ARGS_ERROR = 2 };

/* Rows of a spec table declared as an array. */
#define ARGS_COUNT(specs) ((int)(sizeof(specs) / sizeof(specs)[0]))
/* Room for a table built from a command's own rows plus shared groups. */
#define ARGS_MAX 40

/* Parse argv[1..argc-1] (argv[0] is the subcommand). Positionals go to
 * pos[0..*npos-1] (at most maxpos; more is an error). */
int args_parse(const cmd_help_t *h, const arg_spec_t *specs, int nspecs, int argc,
               char **argv, char **pos, int maxpos, int *npos);
/* The exit status of a command whose args_parse gave rc != ARGS_OK: 0
 * after --help, 2 after a bad option. */
static inline int args_exit_status(int rc) { return rc == ARGS_HELP ? 0 : 2; }
/* Rows of specs[0..max-1] before the first one without a name (the end
 * of the rows given in a table of ARGS_MAX). */
int args_count(const arg_spec_t *specs, int max);
void args_print_help(const cmd_help_t *h, const arg_spec_t *specs, int nspecs);
/* One-line error + usage to stderr; returns 2 for `return args_fail(...)`. */
int args_fail(const cmd_help_t *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* --precision: the option's help text, and its check: fp32, bf16 or auto
 * into *out; ARGS_OK, or args_fail's code naming the valid values. */
#define ARGS_PRECISION_HELP \
    "P  inference precision: fp32, bf16 or auto (bf16 when the CPU has it and the net passes a check; default auto)"
int args_precision(const cmd_help_t *h, const char *s, nn_precision_t *out);

#endif
