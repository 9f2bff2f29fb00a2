/* Board, rules (freestyle, standard, renju), Zobrist hash, symmetries,
 * move notation.
 *
 * A move is a point index `y * size + x` on a board of `size` (x is the
 * column, 0 at the left; y the row, 0 at the top, as in Gomocup's "x,y").
 * MOVE_NONE (-1) means no move. Black moves first.
 *
 * board_t is a plain value: copy it with `=` or memcpy to branch a search.
 * Read it through the functions below; the fields are visible only so that
 * copies are cheap and the struct can live on the stack. */
#ifndef GZ_ENGINE_BOARD_H
#define GZ_ENGINE_BOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BOARD_MIN 5
#define BOARD_MAX 20
#define BOARD_DEFAULT 15
#define BOARD_CELLS (BOARD_MAX * BOARD_MAX)
#define MOVE_NONE (-1)

typedef enum { RULE_FREESTYLE = 0, RULE_STANDARD = 1, RULE_RENJU = 2, RULE_COUNT } rule_t;

typedef enum { STONE_EMPTY = 0, STONE_BLACK = 1, STONE_WHITE = 2 } stone_t;

/* Result of a finished game, or RESULT_NONE while it goes on. */
typedef enum { RESULT_NONE = 0, RESULT_BLACK = 1, RESULT_WHITE = 2, RESULT_DRAW = 3 } result_t;

/* Why a move was refused (board_check_move / board_play). */
typedef enum {
    MOVE_OK = 0,
    MOVE_OFF_BOARD,
    MOVE_OCCUPIED,
    MOVE_FORBIDDEN,   /* renju: black double-three, double-four or overline */
    MOVE_GAME_OVER,
} move_status_t;

typedef struct board {
    uint8_t size;                 /* BOARD_MIN..BOARD_MAX */
    uint8_t rule;                 /* rule_t */
    uint8_t to_move;              /* STONE_BLACK or STONE_WHITE */
    uint8_t result;               /* result_t */
    int16_t nmoves;
    int16_t last;                 /* last move or MOVE_NONE */
    uint64_t hash;                /* Zobrist of stones + side to move (not size/rule) */
    uint8_t cells[BOARD_CELLS];   /* stone_t, index y*size+x */
    int16_t moves[BOARD_CELLS];   /* history, for undo and records */
} board_t;

/* Start an empty board. size outside BOARD_MIN..BOARD_MAX is a caller bug (assert). */
void board_init(board_t *b, int size, rule_t rule);

/* Whether `move` may be played now; MOVE_OK or the reason it may not. */
move_status_t board_check_move(const board_t *b, int move);

/* Play `move` for the side to move if board_check_move allows it; updates
 * hash, history, side to move and result (five, or full board = draw). */
move_status_t board_play(board_t *b, int move);

/* Take back the last move; false when there is none. */
bool board_undo(board_t *b);

/* The other side to move, as if the side to move passed: to_move and hash
 * change, the history does not. For threat queries ("what if it were the
 * opponent's turn"); board_undo after a pass takes back the last stone. */
void board_pass(board_t *b);

/* Renju only: would black playing the empty point `move` be forbidden
 * (double-three, double-four or overline, and it does not make exactly five)?
 * Always false for other rules, for white, and for occupied points. */
bool board_is_forbidden(const board_t *b, int move);

/* Renju: why black playing `move` is forbidden; FORBID_NONE where
 * board_is_forbidden is false. */
typedef enum { FORBID_NONE = 0, FORBID_DOUBLE_THREE, FORBID_DOUBLE_FOUR, FORBID_OVERLINE } forbid_t;
forbid_t board_forbidden_kind(const board_t *b, int move);
const char *forbid_str(forbid_t f);   /* "double-three", "double-four", "overline", "none" */

/* Forbidden points for the side to move, ascending; returns the count. */
int board_forbidden_points(const board_t *b, int *out);

/* Would the side to move win at once by playing `move` (legal and making five)? */
bool board_is_winning_move(const board_t *b, int move);

/* What a stone of `color` at an empty point would make, best first by
 * value: THREAT_FIVE (wins under the rule: exactly five where an overline
 * does not win), THREAT_OPEN_FOUR (two or more five points: a straight
 * four, two fours in one line, or fours in two lines), THREAT_FOUR (one
 * five point), THREAT_OPEN_THREE (a line where one more stone makes two
 * five points in that line), THREAT_THREE (one more stone makes one five
 * point), THREAT_OPEN_TWO / THREAT_TWO (the greedy bot's twos). */
typedef enum {
    THREAT_NONE = 0, THREAT_TWO, THREAT_OPEN_TWO, THREAT_THREE, THREAT_OPEN_THREE,
    THREAT_FOUR, THREAT_OPEN_FOUR, THREAT_FIVE, THREAT_COUNT
} threat_t;

/* The best of the four lines through the empty point `move` for a stone
 * of `color`, whoever is to move; twos are not looked for (THREAT_NONE
 * below a three). THREAT_NONE on an occupied point and, under renju, on a
 * point forbidden to black when color is black. A three's completing
 * point is not itself checked for being forbidden. No allocation; reads
 * the 4 x 11 cells around the point. */
threat_t board_threat_at(const board_t *b, int move, int color);
/* board_threat_at of every point (a threat_t each, n = size * size bytes
 * into out), computed only on the lines through a point that hold two or
 * more other stones of color within four of it (no other line makes a
 * three). No allocation. */
void board_threat_map(const board_t *b, int color, uint8_t *out);

/* Points where colour `color` would make a winning five under the rule
 * (freestyle: five or more; standard: exactly five; renju: exactly five
 * for black, five or more for white), whoever is to move. A five point is
 * never forbidden, so these are legal moves for color. Writes them to out
 * (ascending, at most board_npoints) and returns the count. */
int board_five_points(const board_t *b, int color, int *out);

/* The same, but only the points p on the four lines through `center`
 * (center itself excluded), within four of it, that make a five along
 * that line: the fives a stone at center can be part of. At most 32
 * points, in no particular order, no duplicates. center must be on the
 * board. O(1): the search's cheap threat query after a move. */
int board_five_points_near(const board_t *b, int color, int center, int *out);

/* Would colour `color` make a winning five by playing the empty point move? */
bool board_makes_five(const board_t *b, int move, int color);

static inline int board_xy(const board_t *b, int x, int y) { return y * b->size + x; }
static inline int board_x(const board_t *b, int move) { return move % b->size; }
static inline int board_y(const board_t *b, int move) { return move / b->size; }
static inline bool board_over(const board_t *b) { return b->result != RESULT_NONE; }
static inline int board_npoints(const board_t *b) { return b->size * b->size; }

const char *rule_name(rule_t r);                  /* "freestyle", "standard", "renju" */
bool rule_parse(const char *s, rule_t *out);      /* accepts those names */
const char *move_status_str(move_status_t s);    /* "occupied", ... */
const char *result_str(result_t r);               /* "black", "white", "draw", "none" */

/* Zobrist keys, independent of board size: key index is y*BOARD_MAX+x. */
uint64_t zobrist_stone(int color, int x, int y);
uint64_t zobrist_side(void);   /* xor-ed in while white is to move */

/* Recompute the hash from scratch (tests compare it with the incremental one). */
uint64_t board_hash_full(const board_t *b);

/* The 8 symmetries of the square: 0 is identity, 1..3 rotations by 90,
 * 180, 270 degrees, 4..7 those composed with a mirror. */
#define SYM_COUNT 8
int sym_point(int sym, int move, int size);
int sym_inverse(int sym);
/* dst = sym applied to src (replays the history transformed, so hash,
 * history and result are those of the transformed game). */
void board_transform(board_t *dst, const board_t *src, int sym);

/* Move notation. Gomocup "x,y" (0-based, x column, y row from the top) and
 * letter-number "h8" (column letter a.. from the left, row number 1.. from
 * the bottom, as on printed boards). board_parse_move accepts either and
 * returns false for text that is neither or is off the board. */
bool move_parse(const char *s, int size, int *move);
void move_format_xy(int move, int size, char *buf, size_t len);   /* "7,7" */
void move_format_alpha(int move, int size, char *buf, size_t len); /* "h8" */

#ifdef __cplusplus
}
#endif
#endif
