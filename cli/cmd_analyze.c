/* gomoku analyze: JSON queries on stdin, JSON answers on stdout (the
 * engine is play/analyze.c). */
#include <stdio.h>

#include "cli/cmds.h"
#include "cli/options.h"
#include "play/analyze.h"
#include "selfplay/args.h"

static const cmd_help_t help = {
    "analyze", BY_ANALYZE,
    "gomoku analyze --model M [--visits V | --time MS] [--parallel N] [--threads T] [options]",
    "An analysis engine in the manner of KataGo's: one JSON query per line on\n"
    "stdin, e.g. {\"id\":\"a\",\"moves\":[\"h8\",\"i9\"],\"visits\":800,\"candidates\":5}\n"
    "(or \"psq\":\"game.psq\"; \"rule\", \"size\", \"time_ms\"), one JSON answer per line\n"
    "on stdout as each search finishes: side to move, the root's win/draw/loss,\n"
    "the best moves with visits, win/draw/loss, prior, best line and proven\n"
    "results. N queries are searched at once, each with T threads; a bad query\n"
    "gets {\"id\":...,\"error\":\"...\"}. {\"id\":\"t\",\"action\":\"terminate\",\n"
    "\"terminate_id\":\"a\"} stops query a; \"action\":\"query_version\" names the\n"
    "version. Rule and size default to the model's (rule trained on; 15, or its\n"
    "largest board if smaller). At end of input the answers still due are\n"
    "written, then it exits 0. The format is in README (gomoku analyze).",
};

int cmd_analyze(int argc, char **argv)
{
    analyze_opts_t o;
    analyze_opts_default(&o);
    rule_t rule = RULE_FREESTYLE;   /* set only when --rule is given */
    int tree_mb;
    arg_spec_t specs[ARGS_MAX] = {
        ARG(S_ANALYZE_MODEL, &o.model), ARG(S_ANALYZE_RULE, &rule), ARG(S_ANALYZE_SIZE, &o.size),
        ARG(S_ANALYZE_VISITS, &o.visits), ARG(S_TIME, &o.time_ms),
        ARG(S_ANALYZE_CANDIDATES, &o.candidates), ARG(S_ANALYZE_PARALLEL, &o.workers),
        ARG(S_SEARCH_THREADS, &o.threads), ARG(S_DEVICE, &o.device),
        ARG(S_PRECISION, &o.precision), ARG(S_ANALYZE_TREE_MB, &tree_mb),
    };
    int ns = args_count(specs, ARGS_MAX);
    ns += options_search(specs + ns, &o.search);
    int rc = args_parse(&help, specs, ns, argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (!o.model)
        return args_fail(&help, "--model is required");
    o.rule = args_given(specs, ns, S_ANALYZE_RULE) ? (int)rule : -1;
    o.tree_bytes = (size_t)tree_mb << 20;
    if (o.visits == 0 && o.time_ms == 0)
        return args_fail(&help, "--visits 0 needs --time MS");
    char err[512], note[768];
    analyze_t *a = analyze_create(&o, note, sizeof note, err, sizeof err);
    if (!a) {
        fprintf(stderr, "gomoku analyze: %s\n", err);
        return 1;
    }
    fprintf(stderr, "gomoku analyze: %s; %d at once\n", note, o.workers);
    rc = analyze_run(a, stdin, stdout, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "gomoku analyze: %s\n", err);
    analyze_free(a);
    return rc == 0 ? 0 : 1;
}
