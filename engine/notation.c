/* Move notation: Gomocup "x,y" and letter-number "h8". */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/board.h"

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Reads a non-negative decimal of at most 3 digits; NULL on failure. */
static const char *read_num(const char *s, int *v)
{
    int n = 0, k = 0;
    while (isdigit((unsigned char)s[k]) && k < 4)
        n = n * 10 + (s[k++] - '0');
    if (k == 0 || k > 3)
        return NULL;
    *v = n;
    return s + k;
}

bool move_parse(const char *s, int size, int *move)
{
    int x, y;
    if (!s || size < BOARD_MIN || size > BOARD_MAX)
        return false;
    s = skip_space(s);
    if (isdigit((unsigned char)*s)) {
        s = read_num(s, &x);
        if (!s)
            return false;
        s = skip_space(s);
        if (*s++ != ',')
            return false;
        s = read_num(skip_space(s), &y);
        if (!s)
            return false;
    } else if (isalpha((unsigned char)*s)) {
        x = tolower((unsigned char)*s) - 'a';
        int row;
        s = read_num(s + 1, &row);
        if (!s || row < 1 || row > size)
            return false;
        y = size - row;
    } else {
        return false;
    }
    if (*skip_space(s) != '\0' || x < 0 || x >= size || y < 0 || y >= size)
        return false;
    *move = y * size + x;
    return true;
}

void move_format_xy(int move, int size, char *buf, size_t len)
{
    if (move < 0)
        snprintf(buf, len, "none");
    else
        snprintf(buf, len, "%d,%d", move % size, move / size);
}

void move_format_alpha(int move, int size, char *buf, size_t len)
{
    if (move < 0)
        snprintf(buf, len, "none");
    else
        snprintf(buf, len, "%c%d", 'a' + move % size, size - move / size);
}
