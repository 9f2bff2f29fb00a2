/* The 8 symmetries of the square board. Sym k < 4 rotates by k*90 degrees
 * (clockwise on the printed board, y down); k >= 4 mirrors x first, then
 * rotates by (k-4)*90 degrees. */
#include <assert.h>

#include "engine/board.h"

int sym_point(int sym, int move, int size)
{
    assert(sym >= 0 && sym < SYM_COUNT);
    if (move < 0)
        return move;
    int x = move % size, y = move / size, m = size - 1;
    if (sym >= 4)
        x = m - x;
    for (int r = 0; r < (sym & 3); r++) {
        int t = x;
        x = m - y;
        y = t;
    }
    return y * size + x;
}

int sym_inverse(int sym)
{
    assert(sym >= 0 && sym < SYM_COUNT);
    static const int inv[SYM_COUNT] = {0, 3, 2, 1, 4, 5, 6, 7};
    return inv[sym];
}

void board_transform(board_t *dst, const board_t *src, int sym)
{
    assert(dst != src);
    board_init(dst, src->size, (rule_t)src->rule);
    for (int i = 0; i < src->nmoves; i++) {
        move_status_t st = board_play(dst, sym_point(sym, src->moves[i], src->size));
        assert(st == MOVE_OK);
        (void)st;
    }
}
