#include "cli/options.h"

int options_search(arg_spec_t *out, search_settings_t *s)
{
    const arg_spec_t specs[] = {
        ARG(S_C_PUCT, &s->c_puct), ARG(S_FPU, &s->fpu), ARG(S_FPU_ROOT, &s->fpu_root),
        ARG(S_VCT_NODES, &s->vct_nodes), ARG(S_VCT_DEPTH, &s->vct_depth),
        ARG(S_VCT_ROOT_NODES, &s->vct_root_nodes),
        ARG(S_VCT_DEFEND_NODES, &s->vct_defend_nodes), ARG(S_VCT_SHARE, &s->vct_share),
        ARG(S_VCT_DEFEND_SHARE, &s->vct_defend_share),
        ARG(S_VCT_VERIFY_NODES, &s->vct_verify_nodes),
        ARG(S_VCT_VERIFY_SHARE, &s->vct_verify_share),
        ARG(S_VCT_QUIET_NODES, &s->vct_quiet_nodes),
        ARG(S_VCT_WATCH_NODES, &s->vct_watch_nodes),
        ARG(S_VCT_WATCH_QUIET_NODES, &s->vct_watch_quiet_nodes),
        ARG(S_THREAT_PRUNE, &s->threat_prune), ARG(S_SELECT_LCB, &s->select_lcb),
        ARG(S_PATTERN_PRIOR, &s->pattern_prior), ARG(S_POLICY_TEMP, &s->policy_temp),
        ARG(S_MINIMAX_MIX, &s->minimax_mix),
        ARG(S_SEARCH_BATCH, &s->batch), ARG(S_SYMMETRY, &s->symmetry),
        ARG(S_ROOT_SYMMETRY, &s->root_symmetry), ARG(S_ROOT_NET, &s->root_net),
        ARG(S_ROOT_NET_PLIES, &s->root_net_plies), ARG(S_ENSEMBLE, &s->ensemble),
    };
    return args_append(out, specs, ARGS_COUNT(specs));
}

int options_player(arg_spec_t *out, player_opts_t *o, setting_id_t visits)
{
    const arg_spec_t specs[] = {
        ARG(visits, &o->visits), ARG(S_TIME, &o->time_ms), ARG(S_SEARCH_THREADS, &o->threads),
        ARG(S_DEVICE, &o->device), ARG(S_PRECISION, &o->precision),
    };
    int n = args_append(out, specs, ARGS_COUNT(specs));
    return n + options_search(out + n, &o->search);
}
