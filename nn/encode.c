/* Input encoding: a position for the side to move as NN_PLANES planes. */
#include "nn/nn.h"

#include <assert.h>
#include <string.h>

void nn_encode(const board_t *b, int board_max, float *out)
{
    int s = b->size, M = board_max, hw = M * M;
    assert(s <= M);
    memset(out, 0, sizeof(float) * (size_t)NN_PLANES * (size_t)hw);
    int own = b->to_move, black = b->to_move == STONE_BLACK;
    for (int y = 0; y < s; y++)
        for (int x = 0; x < s; x++) {
            int i = y * M + x, c = b->cells[y * s + x];
            out[NN_PLANE_OWN * hw + i] = c == own ? 1.0f : 0.0f;
            out[NN_PLANE_OPP * hw + i] = c != STONE_EMPTY && c != own ? 1.0f : 0.0f;
            out[NN_PLANE_ONBOARD * hw + i] = 1.0f;
            out[NN_PLANE_BLACK * hw + i] = black ? 1.0f : 0.0f;
        }
    if (b->rule == RULE_RENJU && black && !board_over(b)) {
        int pts[BOARD_CELLS];
        int n = board_forbidden_points(b, pts);
        for (int k = 0; k < n; k++)
            out[NN_PLANE_FORBIDDEN * hw + nn_policy_index(pts[k], s, M)] = 1.0f;
    }
}
