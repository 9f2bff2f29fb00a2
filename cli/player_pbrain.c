/* PLACEHOLDER: replaced by the real pbrain player. */
#include <stdio.h>
#include "cli/player.h"
player_t *player_pbrain_create(const char *spec, rule_t rule, int size, const player_opts_t *o,
                             char *err, size_t errlen)
{ (void)rule; (void)size; (void)o; snprintf(err, errlen, "pbrain players are not built yet: %s", spec); return NULL; }
