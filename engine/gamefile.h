/* Games as text: Piskvork .psq files and opening lines.
 *
 * .psq (what Piskvork saves and Gomocup publishes):
 *   Piskvork 15x15, 11:11, 0         header: board width x height (square)
 *   8,8,0                            one move per line: x,y (1-based, x the
 *   9,9,1200                           column, y the row from the top), then
 *   ...                                the ms it took (optional)
 *   black-name                       then, optionally, the players' names
 *   white-name                         (black first) and an end code
 *   0
 * A file with no header ("x,y[,ms]" lines only) reads as a 15x15 board.
 * Names are kept when present (at most 63 bytes each).
 *
 * An opening line is one opening's stones, black first, in one of two forms:
 *   h8 i9 j7                     letter-number moves (row 1 at the bottom)
 *   0,0, 1,-1, 2,0               Gomocup/c-gomoku-cli centre offsets: x,y
 *                                pairs, x to the right, y down, 0,0 the
 *                                centre point (size/2, size/2)
 * '#' starts a comment to the end of the line; blank lines are skipped.
 *
 * Every reader checks what it is given and fails with a one-line reason;
 * nothing here allocates except gamefile_read_text. */
#ifndef GZ_ENGINE_GAMEFILE_H
#define GZ_ENGINE_GAMEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/board.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PSQ_NAME_MAX 64
#define PSQ_MS_MAX 999999   /* a move's time in a file: six digits at most (longer ones written as this) */
#define GAMEFILE_MAX_BYTES (1u << 20)   /* a .psq or opening file larger than this is refused */

typedef struct psq_game {
    int size;
    int nmoves;
    int moves[BOARD_CELLS];       /* point indices, y * size + x */
    int ms[BOARD_CELLS];          /* each move's time as the file gives it (ms), 0 when it does not */
    char black[PSQ_NAME_MAX];     /* "" when the file names nobody */
    char white[PSQ_NAME_MAX];
} psq_game_t;

/* Parse .psq text (text[len], need not be NUL-terminated). 0, or -1 with err
 * naming the line and what was wrong with it (a bad header, a move off the
 * board or on an occupied point, a size other than BOARD_MIN..BOARD_MAX). */
int psq_parse(const char *text, size_t len, psq_game_t *g, char *err, size_t errlen);

/* Read and parse the .psq file at path (at most GAMEFILE_MAX_BYTES). */
int psq_load(const char *path, psq_game_t *g, char *err, size_t errlen);

/* Write moves[0..n) on a size board as .psq to f, each with its time from
 * ms[0..n) (NULL: 0; clamped to 0..PSQ_MS_MAX); names may be NULL. 0, or -1 when a write fails. */
int psq_write(FILE *f, int size, const int *moves, const int *ms, int n, const char *black,
              const char *white);

/* Write the game to path atomically (util_write_atomic): a crash leaves the
 * old file or the new one. 0, or -1 with err. */
int psq_save(const char *path, int size, const int *moves, const int *ms, int n,
             const char *black, const char *white, char *err, size_t errlen);

/* The same for the moves of board b (its history, in order; psq_save_board
 * with each ply's time from ms, NULL: 0). */
int psq_write_board(FILE *f, const board_t *b, const char *black, const char *white);
int psq_save_board(const char *path, const board_t *b, const int *ms, const char *black,
                   const char *white, char *err, size_t errlen);

/* Play g's moves on a fresh board of g->size under rule. 0, or -1 with err
 * naming the first move the rule refuses (forbidden, after the game ended). */
int psq_to_board(const psq_game_t *g, rule_t rule, board_t *b, char *err, size_t errlen);

/* Parse one opening line for a size board into moves[0..max): the number of
 * stones (0 for a blank or comment line), or -1 with err. The stones must
 * be distinct points on the board; whether they are a legal game under a
 * rule is psq-independent and left to the caller (board_play). */
int opening_parse_line(const char *line, int size, int *moves, int max, char *err, size_t errlen);

/* Read a whole file into a NUL-terminated malloc'ed buffer (at most
 * GAMEFILE_MAX_BYTES); NULL with err. *len gets the length. */
char *gamefile_read_text(const char *path, size_t *len, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
