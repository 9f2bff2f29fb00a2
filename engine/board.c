/* Board state, move legality, win detection and undo. board_play is on
 * the search hot path: no allocation, incremental hash, and the win check
 * only counts the four lines through the new stone. */
#include <assert.h>
#include <string.h>

#include "engine/board.h"
#include "util/util.h"
#include "engine/line.h"

void board_init(board_t *b, int size, rule_t rule)
{
    assert(size >= BOARD_MIN && size <= BOARD_MAX);
    assert(rule >= 0 && rule < RULE_COUNT);
    b->size = (uint8_t)size;
    b->rule = (uint8_t)rule;
    b->to_move = STONE_BLACK;
    b->result = RESULT_NONE;
    b->nmoves = 0;
    b->last = MOVE_NONE;
    b->hash = 0;
    memset(b->cells, 0, sizeof b->cells);
}

move_status_t board_check_move(const board_t *b, int move)
{
    if (b->result != RESULT_NONE)
        return MOVE_GAME_OVER;
    if (move < 0 || move >= b->size * b->size)
        return MOVE_OFF_BOARD;
    if (b->cells[move] != STONE_EMPTY)
        return MOVE_OCCUPIED;
    if (b->rule == RULE_RENJU && b->to_move == STONE_BLACK && board_is_forbidden(b, move))
        return MOVE_FORBIDDEN;
    return MOVE_OK;
}

int board_run_length(const board_t *b, int x, int y, int dx, int dy, int c)
{
    int n = 1, size = b->size;
    for (int px = x + dx, py = y + dy;
         px >= 0 && px < size && py >= 0 && py < size && b->cells[py * size + px] == c;
         px += dx, py += dy)
        n++;
    for (int px = x - dx, py = y - dy;
         px >= 0 && px < size && py >= 0 && py < size && b->cells[py * size + px] == c;
         px -= dx, py -= dy)
        n++;
    return n;
}

bool board_makes_five(const board_t *b, int move, int c)
{
    int x = move % b->size, y = move / b->size;
    for (int d = 0; d < NDIRS; d++)
        if (rule_is_five(b->rule, c, board_run_length(b, x, y, line_dx[d], line_dy[d], c)))
            return true;
    return false;
}

move_status_t board_play(board_t *b, int move)
{
    move_status_t st = board_check_move(b, move);
    if (st != MOVE_OK)
        return st;
    board_place(b, move, board_makes_five(b, move, b->to_move));
    return MOVE_OK;
}

void board_place(board_t *b, int move, bool five)
{
    int c = b->to_move, x = move % b->size, y = move / b->size;
    b->cells[move] = (uint8_t)c;
    b->hash ^= zobrist_stone(c, x, y) ^ zobrist_side();
    b->moves[b->nmoves++] = (int16_t)move;
    b->last = (int16_t)move;
    b->to_move = (uint8_t)(STONE_BLACK + STONE_WHITE - c);
    if (five)
        b->result = c == STONE_BLACK ? RESULT_BLACK : RESULT_WHITE;
    else if (b->nmoves == b->size * b->size)
        b->result = RESULT_DRAW;
}

bool board_undo(board_t *b)
{
    if (b->nmoves == 0)
        return false;
    int move = b->moves[--b->nmoves];
    int c = b->cells[move];
    assert(c == STONE_BLACK || c == STONE_WHITE);
    b->cells[move] = STONE_EMPTY;
    b->hash ^= zobrist_stone(c, move % b->size, move / b->size) ^ zobrist_side();
    b->to_move = (uint8_t)c;
    b->result = RESULT_NONE;
    b->last = b->nmoves > 0 ? b->moves[b->nmoves - 1] : MOVE_NONE;
    return true;
}

void board_pass(board_t *b)
{
    b->to_move = (uint8_t)(STONE_BLACK + STONE_WHITE - b->to_move);
    b->hash ^= zobrist_side();
}

bool board_is_winning_move(const board_t *b, int move)
{
    if (b->result != RESULT_NONE || move < 0 || move >= b->size * b->size ||
        b->cells[move] != STONE_EMPTY)
        return false;
    /* Exactly five is never forbidden in renju, so no forbidden check. */
    return board_makes_five(b, move, b->to_move);
}

int board_five_points(const board_t *b, int color, int *out)
{
    int n = 0;
    for (int m = 0; m < b->size * b->size; m++)
        if (b->cells[m] == STONE_EMPTY && board_makes_five(b, m, color))
            out[n++] = m;
    return n;
}

int board_five_points_near(const board_t *b, int color, int center, int *out)
{
    int n = 0, size = b->size, cx = center % size, cy = center / size;
    assert(center >= 0 && center < size * size);
    for (int d = 0; d < NDIRS; d++)
        for (int k = -4; k <= 4; k++) {
            int x = cx + k * line_dx[d], y = cy + k * line_dy[d];
            if (k == 0 || x < 0 || y < 0 || x >= size || y >= size)
                continue;
            int p = y * size + x;
            /* each (d, k) is a different point: no duplicates */
            if (b->cells[p] == STONE_EMPTY &&
                rule_is_five(b->rule, color, board_run_length(b, x, y, line_dx[d], line_dy[d], color)))
                out[n++] = p;
        }
    return n;
}

int board_forbidden_points(const board_t *b, int *out)
{
    int n = 0;
    if (b->rule != RULE_RENJU || b->to_move != STONE_BLACK || b->result != RESULT_NONE)
        return 0;
    for (int m = 0; m < b->size * b->size; m++)
        if (b->cells[m] == STONE_EMPTY && board_is_forbidden(b, m))
            out[n++] = m;
    return n;
}

static const char *const rule_names[RULE_COUNT] = {
    [RULE_FREESTYLE] = "freestyle", [RULE_STANDARD] = "standard", [RULE_RENJU] = "renju",
};
static const char *const move_status_names[] = {
    [MOVE_OK] = "ok", [MOVE_OFF_BOARD] = "off the board", [MOVE_OCCUPIED] = "occupied",
    [MOVE_FORBIDDEN] = "forbidden", [MOVE_GAME_OVER] = "the game is over",
};
static const char *const result_names[] = {
    [RESULT_NONE] = "none", [RESULT_BLACK] = "black", [RESULT_WHITE] = "white",
    [RESULT_DRAW] = "draw",
};
#define NAMES(t) t, (int)(sizeof t / sizeof t[0])

const char *rule_name(rule_t r) { return util_name_of(NAMES(rule_names), (int)r); }

bool rule_parse(const char *s, rule_t *out)
{
    int k = util_name_find(NAMES(rule_names), s);
    if (k >= 0)
        *out = (rule_t)k;
    return k >= 0;
}

const char *move_status_str(move_status_t s)
{
    return util_name_of(NAMES(move_status_names), (int)s);
}

const char *result_str(result_t r) { return util_name_of(NAMES(result_names), (int)r); }
#undef NAMES
