/* Players for play and match: one interface over a person at the
 * terminal, the built-in bots, a model file searched with MCTS, and an
 * external Gomocup engine.
 *
 * Specs: "human", "bot:random", "bot:greedy", "pbrain:COMMAND", or a path
 * to a .gzm model file. */
#ifndef GZ_PLAY_PLAYER_H
#define GZ_PLAY_PLAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"
#include "nn/nn.h"
#include "play/movetime.h"
#include "play/searcher.h"

#define PLAYER_VISITS 800   /* model players' playouts per move by default */

typedef struct player_opts {
    int visits;          /* model players: playouts per move (0: use time_ms) */
    int time_ms;         /* model players: time per move when visits == 0 */
    int match_time_ms;   /* a clock per game (Gomocup's timeout_match); 0: none */
    int threads;         /* model players: search threads */
    search_settings_t search;   /* model players: c_puct, fpu, VCF checks */
    const char *device;  /* model players: "auto", "cpu", "cuda", ... */
    nn_precision_t precision;   /* model players: inference precision */
    uint64_t seed;
    int quiet;           /* no notes on stderr */
    size_t cache_bytes;  /* model players: NN cache size (0: 64 MiB) */
    const volatile int *stop; /* model players: a search in flight ends early (with the
                               * best move so far) once *stop != 0; borrowed, may be NULL */
} player_opts_t;

void player_opts_default(player_opts_t *o);

typedef struct player player_t;

#define PLAYER_FORFEIT (-2)   /* genmove: the player lost this game by failing */

/* What a searching player thought of its last move (player_analysis). */
#define PLAYER_PV_MAX 32
#define PLAYER_CAND_MAX 5
/* One root move the search weighed. */
typedef struct player_candidate {
    int move;
    uint32_t visits;
    float winrate;        /* in [0,1], for the player, after this move (0.5 when unvisited) */
} player_candidate_t;

typedef struct player_analysis {
    float winrate;        /* in [0,1], for the side that moved (the player) */
    int proven;           /* +1 proven win for the player, -1 proven loss, 0 not proven */
    uint32_t visits;      /* root visits behind it */
    int npv;
    int pv[PLAYER_PV_MAX]; /* best line from the position it was asked about, its move first */
    int ncand;
    player_candidate_t cand[PLAYER_CAND_MAX]; /* the most visited root moves, most first */
} player_analysis_t;

/* The vtable behind a player; each kind of player fills one. */
typedef struct player_ops {
    /* Pick a move for the side to move of b (not over). Returns 0;
     * PLAYER_FORFEIT with err set when the player lost the game by failing
     * at this move (an external engine that did not answer in time, died,
     * or answered no legal move: it is killed, and its next new_game
     * starts it again); or -1 with err set when it cannot go on (an engine
     * that cannot be started, or a person quit: then err is "quit"). */
    int (*genmove)(player_t *p, const board_t *b, int *move, char *err, size_t errlen);
    /* A new game starts from b (empty or set up). */
    void (*new_game)(player_t *p, const board_t *b);
    /* move was just played on the game's board (by either side); b is
     * the position after it. Lets searches reuse their tree. May be NULL. */
    void (*notify)(player_t *p, const board_t *b, int move);
    /* Let go of what impl holds (a search, a process); player_free then
     * frees impl and the player. May be NULL. */
    void (*release)(player_t *p);
    /* The analysis behind the last genmove; false when there is none (bots,
     * or no move generated yet). May be NULL. */
    bool (*analysis)(const player_t *p, player_analysis_t *out);
} player_ops_t;

struct player {
    const player_ops_t *ops;
    char name[128];       /* for reports: "bot:greedy", "models/x.gzm" */
    int is_human;
    long long time_left;  /* ms left on this game's clock (MOVETIME_UNLIMITED: no clock);
                           * the match sets it before each genmove */
    void *impl;
};

/* Whether spec names a player, without starting it: an unknown bot, an
 * empty pbrain: command or a model file that cannot be read is -1 with a
 * one-line message (so a command checks all its players before loading
 * any). */
int player_spec_check(const char *spec, char *err, size_t errlen);

/* NULL with a one-line message in err for an unknown spec or a model file
 * that does not load. */
player_t *player_create(const char *spec, rule_t rule, int size, const player_opts_t *o,
                        char *err, size_t errlen);
void player_free(player_t *p);

/* For the kinds' create functions: a player of kind ops, its impl a zeroed
 * block of impl_size bytes (none when 0), its name printf'd from name_fmt.
 * NULL with "out of memory" in err. player_free undoes it (a create
 * function that fails after it calls player_free too). */
player_t *player_alloc(const player_ops_t *ops, size_t impl_size, char *err, size_t errlen,
                       const char *name_fmt, ...) __attribute__((format(printf, 5, 6)));

/* Kinds implemented in their own files; player_create dispatches to them. */
/* A person at the terminal: genmove reads stdin until a legal move, or
 * returns -1 with err "quit" at end of input, or with err the line typed
 * when it starts with a prompt command: quit, undo, hint, help, save. */
player_t *player_human_create(char *err, size_t errlen);                        /* player.c */
player_t *player_bot_create(const char *name, uint64_t seed, char *err, size_t errlen); /* player.c */
player_t *player_model_create(const char *path, rule_t rule, int size, const player_opts_t *o,
                              char *err, size_t errlen);                         /* player_model.c */
player_t *player_pbrain_create(const char *command, rule_t rule, int size, const player_opts_t *o,
                               char *err, size_t errlen);                        /* player_pbrain.c */

/* For a person's prompts: prints prompt, reads a line from stdin into
 * line[len], surrounding blanks trimmed and blank lines skipped; false at
 * end of input. */
bool human_read_line(const char *prompt, char *line, size_t len);
/* Whether line is the command word alone or followed by blanks ("save F"). */
bool human_command_is(const char *line, const char *word);

static inline int player_genmove(player_t *p, const board_t *b, int *move, char *err,
                                 size_t errlen)
{ return p->ops->genmove(p, b, move, err, errlen); }
static inline void player_new_game(player_t *p, const board_t *b)
{ if (p->ops->new_game) p->ops->new_game(p, b); }
static inline bool player_analysis(const player_t *p, player_analysis_t *out)
{ return p->ops->analysis && p->ops->analysis(p, out); }
static inline void player_notify(player_t *p, const board_t *b, int move)
{ if (p->ops->notify) p->ops->notify(p, b, move); }

#endif
