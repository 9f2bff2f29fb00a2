/* Swap2 openings and decisions (Gomocup's SWAP2BOARD; serve and match
 * may use them too).
 *
 * The opener proposes three stones (black, white, black) from a small
 * book of openings near the centre, picking the most balanced by the
 * engine's value (a bot picks one by its seed).
 *
 * The other side, to move as white after 3 stones, decides by white's
 * value v (its own view) after a search:
 *   - v < SWAP2_THRESHOLD_3: black is better: take black (SWAP);
 *   - v > SWAP2_STAY_3: white is better: stay white and play the 4th stone;
 *   - in between, too close to call within a search's noise: place two
 *     more stones (a white, then a black; play/balance.h, target 0) and let
 *     the opener choose the colour. When the pair found leaves |value| above
 *     SWAP2_BALANCED it falls back to the better colour (v < 0: black).
 * By value alone the better colour is never worse than a balanced pair
 * (it is worth |v| >= 0, the pair about 0): the pair is the choice only
 * where the sign of v is not to be trusted, so that the colour choice
 * becomes the opener's problem in a position our search calls even.
 * After 5 stones the opener (white to move) takes black when white's
 * value is below SWAP2_THRESHOLD_5, else plays. Without a value (bots)
 * the side to move stays white and plays. */
#ifndef GZ_PLAY_SWAP2_H
#define GZ_PLAY_SWAP2_H

#include <stdbool.h>
#include <stdint.h>

#define SWAP2_BOOK_MAX 8
#define SWAP2_THRESHOLD_3 (-0.05)
#define SWAP2_STAY_3 0.05
#define SWAP2_BALANCED 0.05
#define SWAP2_THRESHOLD_5 0.0

typedef enum {
    SWAP2_PLAY_WHITE = 0,   /* stay white: play the next stone */
    SWAP2_TAKE_BLACK,       /* SWAP */
    SWAP2_PLACE_TWO,        /* 3 stones only: a white and a black stone, the opener chooses */
} swap2_choice_t;

/* The book's openings that fit a size x size board, in book order:
 * moves[i] = {black, white, black} points, index[i] its book number (for
 * messages). Returns the count (0: the board is too small). */
int swap2_book(int size, int16_t (*moves)[3], int *index);

/* The choice of white, to move after nstones (3 or 5) opening stones and
 * valued white_value from its own view (NAN: no value: SWAP2_PLAY_WHITE). */
swap2_choice_t swap2_choose(int nstones, double white_value);

#endif
