/* Option rows that several subcommands share, so each option has one
 * name, range and help text, and the model a command runs on is opened
 * in one place.
 *
 * A group writes its rows to out (room for OPTIONS_GROUP_MAX) and returns
 * how many; the rows point into the struct or variables passed, whose
 * current values are the defaults. */
#ifndef GZ_CLI_OPTIONS_H
#define GZ_CLI_OPTIONS_H

#include "cli/args.h"
#include "play/player.h"
#include "nn/nn.h"
#include "selfplay/selfplay.h"

#define OPTIONS_GROUP_MAX 8

/* Self-play search: --visits, --cheap-visits, --full-frac, --parallel,
 * --threads, --rule, --size, --seed into o. */
int options_selfplay(arg_spec_t *out, selfplay_opts_t *o);

/* Model players' search: --visits (help text given: its default differs
 * by command), --time, --threads, --device into o. */
int options_player(arg_spec_t *out, player_opts_t *o, const char *visits_help);

/* The shape of a randomly initialised net: --blocks, --channels. */
int options_net(arg_spec_t *out, int *blocks, int *channels);

/* The net a command runs: the weights file path when not NULL, else a
 * random net of blocks x channels for boards up to size, from seed. NULL
 * with err set when the file does not load or the shape is refused. The
 * caller frees it with nn_model_free. */
nn_model_t *options_model_open(const char *path, int blocks, int channels, int size,
                               uint64_t seed, char *err, size_t errlen);

/* Self-play with o on model m (its generation goes into the records),
 * which this frees. NULL after printing "gomoku CMD: why" to stderr; a
 * note on the device chosen goes to stderr too. */
selfplay_t *options_selfplay_create(const selfplay_opts_t *o, nn_model_t *m, const char *cmd);

#endif
