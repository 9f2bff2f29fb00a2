/* gomoku serve: the parts behind the HTTP layer (cmd_serve.c).
 *
 *   serve_run.c    watches a run directory (read only) and turns what changed
 *                  into JSON deltas for the page
 *   serve_play.c   a fixed number of games against the model, each with its own
 *                  board and player
 *
 * Every function that answers a request returns an HTTP status and writes a
 * JSON body to a stdio stream (an object with "error" for a 4xx/5xx). */
#ifndef GZ_WEB_SERVE_H
#define GZ_WEB_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nn/nn.h"
#include "util/sjson.h"
#include "play/searcher.h"

/* ---- run directory (serve_run.c) -------------------------------------- */

typedef struct serve_run serve_run_t;

/* What a reader has been sent so far; zero it for "nothing yet". */
typedef struct serve_cursor {
    uint64_t status_ver;
    uint64_t metrics_epoch, metrics_rows;
    uint64_t elo_epoch, elo_rows;
    uint64_t last_game;     /* id of the newest game sent */
    uint64_t ckpt_ver;
    uint64_t notes_ver;
} serve_cursor_t;

/* Watch dir (a run directory: status.json, metrics.csv, elo.csv, games/,
 * models/): a thread polls the files about once a second and never writes
 * anything there. Files may be missing, rewritten, truncated or garbled:
 * what cannot be read is skipped and reported in "notes". NULL with err when
 * dir is not a readable directory or the thread cannot start. */
serve_run_t *serve_run_create(const char *dir, char *err, size_t errlen);
void serve_run_free(serve_run_t *r);

/* Block until something changed since version `seen` or timeout_ms passed;
 * returns the current version (0 before the first poll). Thread-safe. */
uint64_t serve_run_wait(serve_run_t *r, uint64_t seen, int timeout_ms);

/* Write one JSON object with what changed since *c ("status", "metrics",
 * "elo", "games", "checkpoints", "notes": each only when changed; "metrics"
 * and "elo" carry "reset": true when the reader must drop its rows) on one
 * line, and advance *c. Returns whether anything had changed. Thread-safe. */
bool serve_run_delta(serve_run_t *r, serve_cursor_t *c, FILE *f);

/* The run's checkpoints (models/NNNNNN.gzm): the numbers of the newest
 * max of them into nums, newest first; how many (0 when none, -1 when
 * models/ cannot be read). */
int serve_run_models(const char *dir, uint64_t *nums, int max);

/* ---- games against the model (serve_play.c) --------------------------- */

typedef struct serve_play serve_play_t;

typedef struct serve_play_opts {
    const char *model;     /* a player spec (model file or bot:NAME); NULL: newest checkpoint of run_dir */
    const char *run_dir;   /* used when model is NULL */
    int visits;            /* model playouts per move */
    const char *device;
    nn_precision_t precision;   /* of the model's nets */
    search_settings_t search;   /* c_puct, fpu, VCF checks of the model's searches */
    int max_games;         /* concurrent games kept (the oldest idle one is dropped for a new one) */
    int max_searches;      /* searches running at once */
    const char *load;      /* a .psq file the page's first game starts from, or NULL */
    const volatile int *stop; /* the server stopping: a model's move in flight ends early */
} serve_play_opts_t;

/* NULL with err when the model does not load, or o->load does not read as a
 * game under the model's rule (freestyle for a bot) on a board it serves. */
serve_play_t *serve_play_create(const serve_play_opts_t *o, char *err, size_t errlen);
void serve_play_free(serve_play_t *p);

/* {"model", "min_size", "max_size", "default_size", "visits", "rules", "max_games",
 * "model_rule" (the rule the net was trained for; absent for a bot), "start"
 * (--load: {"size", "rule", "moves"}, the first game's position)} */
void serve_play_info(serve_play_t *p, FILE *f);
/* POST /api/game: body {"size", "rule", "color" (the person's), "moves" (optional
 * opening: array of points y*size+x, black first)}. Plays the model's move
 * when it is to move. 200 with the game's state: {"id", "size", "rule",
 * "human", "to_move", "result", "model", "moves", "forbidden" (black's
 * forbidden points when black is to move under renju), "black_winrates" (per
 * ply: black's win rate by the model's search after its own moves, null after
 * the person's), "note" (when the rule is not the one the net was trained
 * for), "analysis" (of the model's last move: "ply", "winrate" for
 * "winrate_for" (the model's colour), "proven", "visits", "pv",
 * "candidates" [{"move", "visits", "winrate"}] its most visited moves)}. */
int serve_play_new(serve_play_t *p, const char *body, size_t n, FILE *f);
/* POST /api/game/load?rule=R&color=C: a new game from the .psq text[0..n)
 * (psq_parse, then psq_to_board under rule R, default freestyle); the person
 * plays C (default: the side to move). 400 with the reason for a text that
 * is not a game under R or a board larger than the model serves. */
int serve_play_load(serve_play_t *p, const char *rule, const char *color, const char *text,
                    size_t n, FILE *f);
/* GET /api/game/ID: the game's state (JSON); with psq, GET
 * /api/game/ID/psq: the game as Piskvork .psq text (not JSON on success). */
int serve_play_get(serve_play_t *p, const char *id, bool psq, FILE *f);
/* POST /api/game/ID/move: body {"x", "y"} (0-based, y from the top); the
 * person's move, then the model's reply. 400 off the board / bad JSON, 409
 * occupied, game over or busy, 422 renju-forbidden (the reason in "error"). */
int serve_play_move(serve_play_t *p, const char *id, const char *body, size_t n, FILE *f);
/* POST /api/game/ID/undo: back to the person's previous turn. */
int serve_play_undo(serve_play_t *p, const char *id, FILE *f);

/* Write {"error": msg} to f and return status (for one-line error returns). */
int serve_error(FILE *f, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The page (web/index.html), embedded at build time (serve_page.c). */
extern const unsigned char serve_page[];
extern const size_t serve_page_len;

#endif
