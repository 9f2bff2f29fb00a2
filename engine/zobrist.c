/* Zobrist keys: a pure function of (colour, x, y), so no table to
 * initialise and no shared state between threads. */
#include "engine/board.h"

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t zobrist_stone(int color, int x, int y)
{
    return mix64(0x676f6d6f6b75ULL + (uint64_t)(color * BOARD_CELLS + y * BOARD_MAX + x));
}

uint64_t zobrist_side(void)
{
    return 0xd1b54a32d192ed03ULL;
}

uint64_t board_hash_full(const board_t *b)
{
    uint64_t h = 0;
    int n = b->size;
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++)
            if (b->cells[y * n + x] != STONE_EMPTY)
                h ^= zobrist_stone(b->cells[y * n + x], x, y);
    if (b->to_move == STONE_WHITE)
        h ^= zobrist_side();
    return h;
}
