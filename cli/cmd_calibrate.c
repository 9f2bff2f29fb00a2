/* gomoku calibrate: the value head's win rate against solved positions
 * and game results (play/calibrate.h), as a table and a JSON line. */
#include <stdio.h>

#include "cli/cmds.h"
#include "play/calibrate.h"
#include "selfplay/args.h"

static const cmd_help_t help = {
    "calibrate", BY_CALIBRATE,
    "gomoku calibrate --model M [--positions N --every K --skip K --vct-nodes N\n"
    "                 --symmetry 0|1|8] GAMES.gzr...",
    "Samples positions of the saved games (one ply in K after the first --skip),\n"
    "solves each with the VCF/VCT solvers and evaluates it with the model's value\n"
    "head. Prints, per bucket of predicted win rate (side to move), the positions,\n"
    "the mean prediction and the mean game result, and the same for the positions\n"
    "with an exact result (a forced win for the side to move, or a forced loss\n"
    "no move refutes); then the Brier scores and how many exact wins the net\n"
    "rated below 50% and exact losses above 50%. --json: one JSON line instead.",
};

int cmd_calibrate(int argc, char **argv)
{
    const char *model = NULL, *device = NULL;
    nn_precision_t prec;
    int positions, every, skip, vct_nodes, symmetry;
    bool json;
    arg_spec_t specs[] = {
        ARG_FLAGS(S_CALIB_MODEL, &model, ARG_REQUIRED), ARG(S_CALIB_POSITIONS, &positions),
        ARG(S_CALIB_EVERY, &every), ARG(S_CALIB_SKIP, &skip), ARG(S_CALIB_VCT_NODES, &vct_nodes),
        ARG(S_DEVICE, &device), ARG(S_PRECISION, &prec), ARG(S_SYMMETRY, &symmetry),
        ARG(S_JSON, &json),
    };
    char *files[256];
    int nfiles = 0;
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, files, 256, &nfiles);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (nfiles == 0)
        return args_fail(&help, "no game record files given");
    calib_opts_t o = {.model = model, .files = (const char *const *)files, .nfiles = nfiles,
                      .max_positions = positions, .every = every, .skip = skip,
                      .vct_nodes = (uint32_t)vct_nodes, .device = device, .precision = prec,
                      .symmetry = symmetry};
    calib_report_t r;
    char err[512];
    if (calibrate_run(&o, &r, err, sizeof err)) {
        fprintf(stderr, "gomoku calibrate: %s\n", err);
        return 1;
    }
    if (json) {
        printf("{\"positions\":%u,\"games\":%u,\"bad_records\":%u,\"exact_wins\":%u,"
               "\"exact_losses\":%u,\"brier_outcome\":%.4f,\"brier_exact\":%.4f,"
               "\"wins_rated_low\":%u,\"losses_rated_high\":%u,\"buckets\":[",
               r.positions, r.games, r.bad_records, r.exact_wins, r.exact_losses,
               r.brier_outcome, r.brier_exact, r.wins_rated_low, r.losses_rated_high);
        for (int k = 0; k < CALIB_BUCKETS; k++) {
            const calib_bucket_t *b = &r.b[k];
            printf("%s{\"n\":%u,\"pred\":%.4f,\"score\":%.4f,\"n_exact\":%u,"
                   "\"pred_exact\":%.4f,\"score_exact\":%.4f}", k ? "," : "", b->n,
                   b->n ? b->pred / b->n : 0.0, b->n ? b->score / b->n : 0.0, b->n_exact,
                   b->n_exact ? b->pred_exact / b->n_exact : 0.0,
                   b->n_exact ? b->score_exact / b->n_exact : 0.0);
        }
        printf("]}\n");
        return 0;
    }
    printf("%u positions from %u games (%u bad records skipped); win rate of the side to move\n",
           r.positions, r.games, r.bad_records);
    printf("predicted     positions  mean pred  mean result   exact  mean pred  exact result\n");
    for (int k = 0; k < CALIB_BUCKETS; k++) {
        const calib_bucket_t *b = &r.b[k];
        printf("%3d-%3d%%  %12u  %9.3f  %11.3f  %6u", 10 * k, 10 * (k + 1), b->n,
               b->n ? b->pred / b->n : 0.0, b->n ? b->score / b->n : 0.0, b->n_exact);
        if (b->n_exact)
            printf("  %9.3f  %12.3f\n", b->pred_exact / b->n_exact, b->score_exact / b->n_exact);
        else
            printf("  %9s  %12s\n", "-", "-");
    }
    printf("exact: %u wins, %u losses; wins rated below 50%%: %u; losses rated above 50%%: %u\n",
           r.exact_wins, r.exact_losses, r.wins_rated_low, r.losses_rated_high);
    printf("brier: %.4f against game results, %.4f against exact results\n", r.brier_outcome,
           r.brier_exact);
    return 0;
}
