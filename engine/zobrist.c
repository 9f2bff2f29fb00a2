/* Zobrist keys: a pure function of (colour, x, y), so no table to
 * initialise and no shared state between threads. */
#include "engine/board.h"
#include "util/rng.h"

uint64_t zobrist_stone(int color, int x, int y)
{
    uint64_t s = 0x676f6d6f6b75ULL + (uint64_t)(color * BOARD_CELLS + y * BOARD_MAX + x);
    return util_rng_next(&s);   /* splitmix64 of the point: a pure function */
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
