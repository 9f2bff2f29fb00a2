/* Input encoding: a position for the side to move as the planes of a
 * feature set (nn.h). */
#include "nn/nn.h"

#include <assert.h>
#include <string.h>

/* Threat levels of nn.h, indexed by threat_t; -1: no plane. */
static const int threat_level[THREAT_COUNT] = {
    [THREAT_NONE] = -1, [THREAT_TWO] = -1, [THREAT_OPEN_TWO] = -1, [THREAT_THREE] = 4,
    [THREAT_OPEN_THREE] = 3, [THREAT_FOUR] = 2, [THREAT_OPEN_FOUR] = 1, [THREAT_FIVE] = 0,
};

/* The threat planes: each side's threat map, one-hot by level. */
static void encode_threats(const board_t *b, int board_max, float *out)
{
    int s = b->size, M = board_max, hw = M * M;
    int own = b->to_move, opp = STONE_BLACK + STONE_WHITE - own;
    uint8_t map[2][BOARD_CELLS];
    board_threat_map(b, own, map[0]);
    board_threat_map(b, opp, map[1]);
    for (int side = 0; side < 2; side++) {
        float *base = out + (size_t)(side ? NN_PLANE_THREAT_OPP : NN_PLANE_THREAT_OWN) * hw;
        for (int m = 0; m < s * s; m++) {
            int lv = threat_level[map[side][m]];
            if (lv >= 0)
                base[lv * hw + nn_policy_index(m, s, M)] = 1.0f;
        }
    }
}

void nn_encode_features(const board_t *b, int features, int board_max, float *out)
{
    int s = b->size, M = board_max, hw = M * M;
    assert(s <= M && features >= 0 && features < NN_FEATURES_COUNT);
    memset(out, 0, sizeof(float) * (size_t)nn_feature_planes(features) * (size_t)hw);
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
    if (features == NN_FEATURES_THREAT)
        encode_threats(b, board_max, out);
}

void nn_encode(const board_t *b, int board_max, float *out)
{
    nn_encode_features(b, NN_FEATURES_BASIC, board_max, out);
}
