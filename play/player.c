/* Players: dispatch on the spec, the human player (a person typing moves
 * on stdin) and the built-in bots. Model and pbrain players live in
 * player_model.c and player_pbrain.c. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "play/player.h"
#include "engine/bot.h"

void player_opts_default(player_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->visits = PLAYER_VISITS;
    o->time_ms = 0;
    o->threads = 1;
    search_settings_default(&o->search);
    o->device = "auto";
    o->precision = NN_PRECISION_AUTO;
    o->seed = 1;
    o->quiet = 0;
}

int player_spec_check(const char *spec, char *err, size_t errlen)
{
    bot_kind_t kind;
    if (!spec || !*spec)
        snprintf(err, errlen, "empty player spec (want human, %s, pbrain:COMMAND or a model file)",
                 BOT_LIST);
    else if (strcmp(spec, "human") == 0)
        return 0;
    else if (strncmp(spec, "bot:", 4) == 0 && !bot_parse(spec + 4, &kind))
        snprintf(err, errlen, "unknown bot '%s' (bots: %s)", spec, BOT_LIST);
    else if (strncmp(spec, "bot:", 4) == 0)
        return 0;
    else if (strcmp(spec, "pbrain:") == 0)
        snprintf(err, errlen, "pbrain: needs a command, e.g. pbrain:./pbrain-engine");
    else if (strncmp(spec, "pbrain:", 7) == 0)
        return 0;
    else if (strncmp(spec, "patnet:", 7) == 0 && access(spec + 7, R_OK) != 0)
        snprintf(err, errlen, "cannot read pattern net %s: %s", spec + 7, strerror(errno));
    else if (strncmp(spec, "patnet:", 7) == 0)
        return 0;
    else if (access(spec, R_OK) != 0)
        snprintf(err, errlen, "cannot read model %s: %s (a player is human, %s, pbrain:COMMAND "
                 "or a model file)", spec, strerror(errno), BOT_LIST);
    else
        return 0;
    return -1;
}

player_t *player_create(const char *spec, rule_t rule, int size, const player_opts_t *o,
                        char *err, size_t errlen)
{
    if (player_spec_check(spec, err, errlen) != 0)
        return NULL;
    if (strcmp(spec, "human") == 0)
        return player_human_create(err, errlen);
    if (strncmp(spec, "bot:", 4) == 0)
        return player_bot_create(spec, o->seed, err, errlen);
    if (strncmp(spec, "pbrain:", 7) == 0)
        return player_pbrain_create(spec + 7, rule, size, o, err, errlen);
    return player_model_create(spec, rule, size, o, err, errlen);
}

void player_free(player_t *p)
{
    if (!p)
        return;
    if (p->ops->release)
        p->ops->release(p);
    free(p->impl);
    free(p);
}

player_t *player_alloc(const player_ops_t *ops, size_t impl_size, char *err, size_t errlen,
                       const char *name_fmt, ...)
{
    player_t *p = calloc(1, sizeof *p);
    void *impl = impl_size ? calloc(1, impl_size) : NULL;
    if (!p || (impl_size && !impl)) {
        free(p);
        free(impl);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->ops = ops;
    p->impl = impl;
    p->time_left = MOVETIME_UNLIMITED;
    va_list ap;
    va_start(ap, name_fmt);
    vsnprintf(p->name, sizeof p->name, name_fmt, ap);
    va_end(ap);
    return p;
}

/* ---- human ---- */

bool human_read_line(const char *prompt, char *line, size_t len)
{
    for (;;) {
        printf("%s", prompt);
        fflush(stdout);
        if (!fgets(line, (int)len, stdin)) {
            printf("\n");
            return false;
        }
        char *s = line, *e;
        while (isspace((unsigned char)*s))
            s++;
        e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1]))
            *--e = '\0';
        if (*s == '\0')
            continue;
        memmove(line, s, (size_t)(e - s) + 1);
        return true;
    }
}

bool human_command_is(const char *line, const char *word)
{
    size_t n = strlen(word);
    return strncmp(line, word, n) == 0 && (line[n] == '\0' || isspace((unsigned char)line[n]));
}

/* The prompt's commands other than moves (player.h). */
static const char *const human_words[] = {"quit", "undo", "hint", "help", "save"};

/* genmove returns -1 with err "quit" at end of input, or the line typed
 * when it is a command (human_words); the caller acts on it. Bad input
 * re-prompts with the reason. Prompts and refusals go to stdout, where the
 * board is. */
static int human_genmove(player_t *p, const board_t *b, int *move, char *err, size_t errlen)
{
    (void)p;
    char line[1024], prompt[64];
    snprintf(prompt, sizeof prompt, "%s to move (x,y or h8; help)> ",
             b->to_move == STONE_BLACK ? "black" : "white");
    for (;;) {
        if (!human_read_line(prompt, line, sizeof line)) {
            snprintf(err, errlen, "quit");
            return -1;
        }
        for (size_t i = 0; i < sizeof human_words / sizeof human_words[0]; i++)
            if (human_command_is(line, human_words[i])) {
                snprintf(err, errlen, "%s", line);
                return -1;
            }
        int m;
        if (!move_parse(line, b->size, &m)) {
            printf("refused: '%s' is not a move on this %dx%d board (try 7,7 or h8; help lists "
                   "the commands)\n", line, b->size, b->size);
            continue;
        }
        move_status_t st = board_check_move(b, m);
        if (st == MOVE_FORBIDDEN) {
            printf("refused: %s is forbidden for black in renju (%s)\n", line,
                   forbid_str(board_forbidden_kind(b, m)));
            continue;
        }
        if (st != MOVE_OK) {
            printf("refused: %s is %s\n", line, move_status_str(st));
            continue;
        }
        *move = m;
        return 0;
    }
}

static const player_ops_t human_ops = {
    .genmove = human_genmove,
};

player_t *player_human_create(char *err, size_t errlen)
{
    player_t *p = player_alloc(&human_ops, 0, err, errlen, "human");
    if (p)
        p->is_human = 1;
    return p;
}

/* ---- bots ---- */

typedef struct bot_player {
    bot_kind_t kind;
    uint64_t rng;
} bot_player_t;

static int bot_genmove(player_t *p, const board_t *b, int *move, char *err, size_t errlen)
{
    bot_player_t *bp = p->impl;
    int m = bot_move(bp->kind, b, &bp->rng);
    if (m == MOVE_NONE) {
        snprintf(err, errlen, "%s: no legal move", p->name);
        return -1;
    }
    *move = m;
    return 0;
}

static const player_ops_t bot_ops = {
    .genmove = bot_genmove,
};

/* name: "bot:greedy" or "greedy". */
player_t *player_bot_create(const char *name, uint64_t seed, char *err, size_t errlen)
{
    bot_kind_t kind;
    const char *bare = strncmp(name, "bot:", 4) == 0 ? name + 4 : name;
    if (!bot_parse(bare, &kind)) {
        snprintf(err, errlen, "unknown bot '%s' (bots: %s)", name, BOT_LIST);
        return NULL;
    }
    player_t *p = player_alloc(&bot_ops, sizeof(bot_player_t), err, errlen, "bot:%s",
                               bot_name(kind));
    if (!p)
        return NULL;
    bot_player_t *bp = p->impl;
    bp->kind = kind;
    bp->rng = seed;
    return p;
}
