/* Swap2 book and decisions; see swap2.h. */
#include "play/swap2.h"

#include <math.h>

/* Three-stone openings (black, white, black) as offsets from the centre. */
static const int8_t book[SWAP2_BOOK_MAX][6] = {
    {0, 0, 1, 0, 0, 2},   {0, 0, 1, 1, 2, 0},  {0, 0, 2, 1, 1, -2}, {0, 0, -1, 1, 3, 0},
    {0, 0, 0, 1, 2, 2},   {0, 0, 1, -1, -2, -1}, {0, 0, 2, 0, 0, 3},  {0, 0, 1, 2, 3, 1},
};

int swap2_book(int size, int16_t (*moves)[3], int *index)
{
    int c = size / 2, n = 0;
    for (int k = 0; k < SWAP2_BOOK_MAX; k++) {
        bool fits = true;
        for (int i = 0; i < 3; i++) {
            int x = c + book[k][2 * i], y = c + book[k][2 * i + 1];
            if (x < 0 || y < 0 || x >= size || y >= size)
                fits = false;
            else
                moves[n][i] = (int16_t)(y * size + x);
        }
        if (fits)
            index[n++] = k;
    }
    return n;
}

swap2_choice_t swap2_choose(int nstones, double white_value)
{
    if (isnan(white_value))
        return SWAP2_PLAY_WHITE;
    if (nstones != 3)
        return white_value < SWAP2_THRESHOLD_5 ? SWAP2_TAKE_BLACK : SWAP2_PLAY_WHITE;
    if (white_value < SWAP2_THRESHOLD_3)
        return SWAP2_TAKE_BLACK;
    if (white_value > SWAP2_STAY_3)
        return SWAP2_PLAY_WHITE;
    return SWAP2_PLACE_TWO;
}
