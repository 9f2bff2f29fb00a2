/* Swap2 openings and decisions (Gomocup's SWAP2BOARD; serve and match
 * may use them too).
 *
 * The opener proposes three stones (black, white, black) from a small
 * book of openings near the centre, picking the most balanced by the
 * engine's value (a bot picks one by its seed). The other side, to move
 * as white after 3 stones, takes black when white's value is below
 * SWAP2_THRESHOLD_3; after 5 stones, below SWAP2_THRESHOLD_5. Without a
 * value (bots) it stays white and plays. The "two more stones" option is
 * not chosen. */
#ifndef GZ_PLAY_SWAP2_H
#define GZ_PLAY_SWAP2_H

#include <stdbool.h>
#include <stdint.h>

#define SWAP2_BOOK_MAX 8
#define SWAP2_THRESHOLD_3 (-0.1)
#define SWAP2_THRESHOLD_5 0.0

/* The book's openings that fit a size x size board, in book order:
 * moves[i] = {black, white, black} points, index[i] its book number (for
 * messages). Returns the count (0: the board is too small). */
int swap2_book(int size, int16_t (*moves)[3], int *index);

/* Whether white, to move after nstones (3 or 5) opening stones and
 * valued white_value from its own view (NAN: no value), takes black. */
bool swap2_take_black(int nstones, double white_value);

#endif
