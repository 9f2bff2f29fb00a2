/* PLACEHOLDER: replaced by the real model player. */
#include <stdio.h>
#include "cli/player.h"
player_t *player_model_create(const char *spec, rule_t rule, int size, const player_opts_t *o,
                             char *err, size_t errlen)
{ (void)rule; (void)size; (void)o; snprintf(err, errlen, "model players are not built yet: %s", spec); return NULL; }
