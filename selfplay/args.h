/* Command-line options, parsed against the settings table
 * (selfplay/settings.h): a command lists the rows it takes and where each
 * value goes; names, types, ranges, defaults and help come from the rows.
 *
 * Options are `--name value` or `--name=value`; flags take no value.
 * Anything not starting with "--" is a positional argument. A bad option
 * prints one line "gomoku CMD: <what is wrong>" plus the usage line to
 * stderr and args_parse returns ARGS_ERROR (the command exits 2).
 * `--help` / `-h` prints the full help to stdout and returns ARGS_HELP
 * (the command exits 0). */
#ifndef GZ_SELFPLAY_ARGS_H
#define GZ_SELFPLAY_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "selfplay/settings.h"

typedef struct cmd_help {
    const char *cmd;       /* "selfplay", "bench mcts" */
    unsigned by;           /* the command's BY_* bit: every row it takes has it */
    const char *usage;     /* "gomoku selfplay --model M [options]" */
    const char *summary;   /* one paragraph */
} cmd_help_t;

/* arg_spec_t.flags */
enum {
    ARG_REQUIRED = 1u << 0,   /* the option must be given; help says "(required)" */
    ARG_TEXT = 1u << 1,       /* dst (const char **) gets the text, unchecked, no default */
};

/* One option of a command: a row of the table and where its value goes
 * (int *, double *, uint64_t *, rule_t *, nn_precision_t *, bool * for
 * flags, const char ** for text; see settings_parse). */
typedef struct arg_spec {
    const setting_t *row;
    void *dst;
    unsigned flags;        /* ARG_* */
    bool given;            /* set by args_parse: it was on the command line */
} arg_spec_t;

/* A row of specs: ARG(S_VISITS, &o.visits). */
#define ARG(id, dst) {&settings_table[(id)], (dst), 0, false}
#define ARG_FLAGS(id, dst, flags) {&settings_table[(id)], (dst), (flags), false}

enum { ARGS_OK = 0, ARGS_HELP = 1, ARGS_ERROR = 2 };

/* Rows of a spec table declared as an array. */
#define ARGS_COUNT(specs) ((int)(sizeof(specs) / sizeof(specs)[0]))
/* Room for a table built from a command's own rows plus groups. */
#define ARGS_MAX 128
/* Room for one group: the options of a module's opts struct, which its
 * X_args(out, o) writes to out (selfplay_args, trainer_args,
 * remote_worker_args) and its X_opts_default takes the defaults from. */
#define ARGS_GROUP_MAX 32

/* Write each row's default into its dst (flags: false; rows without a
 * default and ARG_TEXT rows keep what dst holds). */
void args_defaults(arg_spec_t *specs, int nspecs);
/* args_defaults, then parse argv[1..argc-1] (argv[0] is the subcommand)
 * into the dsts; a missing ARG_REQUIRED option is an error. Positionals go
 * to pos[0..*npos-1] (at most maxpos; more is an error). Text values point
 * into argv. */
int args_parse(const cmd_help_t *h, arg_spec_t *specs, int nspecs, int argc, char **argv,
               char **pos, int maxpos, int *npos);
/* The exit status of a command whose args_parse gave rc != ARGS_OK: 0
 * after --help, 2 after a bad option. */
static inline int args_exit_status(int rc) { return rc == ARGS_HELP ? 0 : 2; }
/* Whether the option of row id was given (false when specs lack it). */
bool args_given(const arg_spec_t *specs, int nspecs, setting_id_t id);
/* Rows of specs[0..max-1] before the first one without a row (the end of
 * the rows given in a table of ARGS_MAX). */
int args_count(const arg_spec_t *specs, int max);
/* Copy n specs to out; returns n (for building a command's table from groups). */
int args_append(arg_spec_t *out, const arg_spec_t *specs, int n);
void args_print_help(const cmd_help_t *h, const arg_spec_t *specs, int nspecs);
/* One-line error + usage to stderr; returns 2 for `return args_fail(...)`. */
int args_fail(const cmd_help_t *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
