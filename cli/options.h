/* Option groups that several commands share, for the options structs of
 * layers below selfplay/ (which cannot bind their own; selfplay_args and
 * the like are theirs). Each writes its rows to out and returns how many. */
#ifndef GZ_CLI_OPTIONS_H
#define GZ_CLI_OPTIONS_H

#include "play/player.h"
#include "play/searcher.h"
#include "selfplay/args.h"

/* --c-puct, --fpu, --fpu-root, and the threat search: --vct-nodes, --vct-root-nodes,
 * --vct-defend-nodes, --vct-share, --threat-prune */
int options_search(arg_spec_t *out, search_settings_t *s);
/* Model players (play, match): --visits (row visits: its default differs
 * by command), --time, --threads, --device, --precision, options_search. */
int options_player(arg_spec_t *out, player_opts_t *o, setting_id_t visits);

#endif
