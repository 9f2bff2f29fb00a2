/* The command line: option parsing (selfplay/args.c) in-process, the
 * settings table (selfplay/settings.c), and the program's answers to bad
 * subcommands and options through the real binary ($GOMOKU_BIN). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/gamefile.h"
#include "selfplay/args.h"
#include "selfplay/rundir.h"
#include "selfplay/selfplay.h"
#include "tests/testkit.h"

static const cmd_help_t help = {"demo", 0, "gomoku demo [--games N] FILE", "A demo command."};

static const setting_t rows[] = {
    {"fast", "fast", SET_FLAG, 0, 0, NULL, "", "go fast", 0, 0, 0, NULL},
    {"games", "games", SET_INT, 1, 1000, "7", "N", "games", 0, 0, 0, NULL},
    {"temp", "temp", SET_DOUBLE, 0, 2, "1.5", "T", "temperature", 0, 0, 0, NULL},
    {"out", "out", SET_STR, 0, 0, NULL, "DIR", "output", 0, 0, 0, NULL},
    {"seed", "seed", SET_U64, 0, 0, "1", "S", "seed", 0, 0, 0, NULL},
};

typedef struct opts {
    bool fast;
    int games;
    double temp;
    const char *out;
    uint64_t seed;
} opts_t;

static int parse(opts_t *o, char **pos, int *npos, int argc, char **argv)
{
    arg_spec_t specs[] = {
        {&rows[0], &o->fast, 0, false}, {&rows[1], &o->games, 0, false},
        {&rows[2], &o->temp, 0, false}, {&rows[3], &o->out, 0, false},
        {&rows[4], &o->seed, 0, false},
    };
    memset(o, 0, sizeof *o);
    /* stderr goes to /dev/null: only return codes and values are checked here */
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w");
    int rc = args_parse(&help, specs, 5, argc, argv, pos, 2, npos);
    fclose(stderr);
    stderr = saved;
    return rc;
}

/* Without options every value is its row's default. */
START_TEST(test_args_defaults)
{
    char *argv[] = {"demo"};
    opts_t o;
    int np = -1;
    ck_assert_int_eq(parse(&o, NULL, &np, 1, argv), ARGS_OK);
    ck_assert(!o.fast);
    ck_assert_int_eq(o.games, 7);
    ck_assert(o.temp == 1.5);
    ck_assert_ptr_null(o.out);
    ck_assert(o.seed == 1);
    ck_assert_int_eq(np, 0);
}
END_TEST

START_TEST(test_args_values)
{
    char *argv[] = {"demo", "--games", "12", "--temp=0.5", "--fast", "a.gzr", "--out", "d",
                    "--seed", "18446744073709551615", "b.gzr"};
    opts_t o;
    char *pos[2];
    int np = -1;
    ck_assert_int_eq(parse(&o, pos, &np, 11, argv), ARGS_OK);
    ck_assert_int_eq(o.games, 12);
    ck_assert(o.temp == 0.5);
    ck_assert(o.fast);
    ck_assert_str_eq(o.out, "d");
    ck_assert(o.seed == UINT64_MAX);
    ck_assert_int_eq(np, 2);
    ck_assert_str_eq(pos[0], "a.gzr");
    ck_assert_str_eq(pos[1], "b.gzr");
}
END_TEST

START_TEST(test_args_errors)
{
    static const struct {
        int argc;
        char *argv[4];
    } bad[] = {
        {3, {"demo", "--gmaes", "3"}},                   /* unknown */
        {2, {"demo", "--games"}},                        /* missing value */
        {3, {"demo", "--games", "12x"}},                 /* not an integer */
        {3, {"demo", "--games", "0"}},                   /* out of range */
        {3, {"demo", "--games", "99999999999999999999"}},
        {3, {"demo", "--temp", "nan"}},
        {2, {"demo", "--fast=1"}},                       /* a flag with a value */
        {3, {"demo", "--seed", "-1"}},
        {4, {"demo", "a", "b", "c"}},                    /* too many positionals */
        {2, {"demo", "-x"}},                             /* short option */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        opts_t o;
        char *pos[2], *argv[4];
        int np;
        memcpy(argv, bad[i].argv, sizeof argv);
        ck_assert_msg(parse(&o, pos, &np, bad[i].argc, argv) == ARGS_ERROR,
                      "case %zu (%s) accepted", i, argv[1]);
    }
}
END_TEST

START_TEST(test_args_dashdash_and_help)
{
    opts_t o;
    char *pos[2];
    int np;
    char *dd[] = {"demo", "--", "--games"};
    ck_assert_int_eq(parse(&o, pos, &np, 3, dd), ARGS_OK);
    ck_assert_int_eq(np, 1);
    ck_assert_str_eq(pos[0], "--games");
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w");
    char *h[] = {"demo", "--games", "3", "--help"};
    int rc = parse(&o, pos, &np, 4, h);
    fclose(stdout);
    stdout = saved;
    ck_assert_int_eq(rc, ARGS_HELP);
}
END_TEST

/* Run the program; returns its exit status, stderr's line count in *lines
 * and its first line in FIRST. */
static int run_bin(const char *args, int *lines, char *first, size_t firstlen)
{
    char err[8192];
    int rc = run_gomoku(args, NULL, CAPTURE_ERR, err, sizeof err);
    *lines = 0;
    for (const char *p = err; *p; p += *p == '\n') {
        (*lines)++;
        p += strcspn(p, "\n");
    }
    if (first && firstlen)
        snprintf(first, firstlen, "%.*s", (int)strcspn(err, "\n"), err);
    return rc;
}

START_TEST(test_program_errors)
{
    int lines;
    char first[1024];
    ck_assert_int_eq(run_bin("frobnicate", &lines, first, sizeof first), 2);
    ck_assert_int_eq(lines, 2);
    ck_assert_ptr_nonnull(strstr(first, "unknown command 'frobnicate'"));
    ck_assert_int_eq(run_bin("help frobnicate", &lines, first, sizeof first), 2);
    ck_assert_int_eq(run_bin("", &lines, NULL, 0), 2);
    ck_assert_int_eq(run_bin("bench nosuch", &lines, first, sizeof first), 2);
    ck_assert_ptr_nonnull(strstr(first, "unknown benchmark 'nosuch'"));
    ck_assert_int_eq(run_bin("help", &lines, NULL, 0), 0);
    ck_assert_int_eq(lines, 0);
    /* a range is written as the user types numbers, never 1e+06 */
    expect_gomoku(2, "--games must be in 1..1000000, got 0", "match bot:random bot:greedy --games 0");
    expect_gomoku(2, "--vct-depth must be in 0..32, got 33",
                  "match bot:random bot:greedy --vct-depth 33");
    expect_gomoku(2, "--vct-quiet-nodes must be in 0..100000000, got -1",
                  "pbrain --model bot:greedy --vct-quiet-nodes -1");
    expect_gomoku(2, "--search-batch must be in 1..64, got 0",
                  "match bot:random bot:greedy --search-batch 0");
    expect_gomoku(2, "--select-lcb wants a number, got 'nan'",
                  "pbrain --model bot:greedy --select-lcb nan");
    expect_gomoku(2, "--pattern-prior wants a number, got 'nan'",
                  "analyze --model bot:greedy --pattern-prior nan");
    expect_gomoku(2, "--pattern-prior must be in 0..1, got 1.5",
                  "match bot:random bot:greedy --pattern-prior 1.5");
    expect_gomoku(2, "--policy-temp must be in 0.1..10, got 0",
                  "pbrain --model bot:greedy --policy-temp 0");
    expect_gomoku(2, "--policy-temp wants a number, got 'inf'",
                  "analyze --model bot:greedy --policy-temp inf");
    expect_gomoku(2, "--minimax-mix must be in 0..1, got 1.5",
                  "match bot:greedy bot:random --minimax-mix 1.5");
    expect_gomoku(2, "--minimax-mix wants a number, got 'nan'",
                  "play --black bot:greedy --minimax-mix nan");
    expect_gomoku(2, "--select-lcb must be in 0..10, got -1",
                  "analyze --model bot:greedy --select-lcb -1");
    expect_gomoku(2, "--gumbel must be in 0..64, got 65",
                  "selfplay --random-net --games 1 --gumbel 65");
    expect_gomoku(2, "--strong-frac wants a number, got 'nan'",
                  "selfplay --random-net --games 1 --strong-frac nan");
    expect_gomoku(2, "--strong-visits must be in 0..1000000, got -3",
                  "selfplay --random-net --games 1 --strong-visits -3");
    char dir[64];
    make_tmpdir(dir, sizeof dir);
    expect_gomoku(1, "forced playouts and the Gumbel root exclude each other",
                  "selfplay --random-net --blocks 1 --channels 8 --size 9 --games 1 --gumbel 8 "
                  "--forced-k 1 --device cpu --out %s/g", dir);
    expect_gomoku(2, "--opponent-frac must be in 0..1, got 2",
                  "selfplay --random-net --games 1 --opponent-frac 2");
    expect_gomoku(1, "self-play options: an opponent fraction needs an opponent pattern net "
                     "(--opponent F)",
                  "selfplay --random-net --blocks 1 --channels 8 --size 9 --games 1 "
                  "--opponent-frac 0.5 --device cpu --out %s/g", dir);
    expect_gomoku(1, "--opponent: ",
                  "selfplay --random-net --blocks 1 --channels 8 --size 9 --games 1 "
                  "--opponent %s/none.gzp --opponent-frac 0.5 --device cpu --out %s/g", dir, dir);
    /* what the workers would refuse, a run refuses before it saves anything */
    expect_gomoku(1, "self-play options: a strong side needs strong visits of at least the full "
                     "search's visits",
                  "train %s/r --blocks 1 --channels 8 --size 9 --visits 16 --strong-frac 0.5 "
                  "--strong-visits 8 --device cpu --steps 1", dir);
    char cfg[128];
    snprintf(cfg, sizeof cfg, "%s/r/config", dir);
    ck_assert_int_ne(access(cfg, F_OK), 0);
    expect_gomoku(1, "forced playouts and the Gumbel root exclude each other",
                  "train %s/r --blocks 1 --channels 8 --size 9 --gumbel 8 --forced-k 1 "
                  "--device cpu --steps 1", dir);
    remove_tree(dir);
}
END_TEST

/* Every public subcommand answers --help with exit 0 and an unknown option
 * with exit 2 and a first line naming the option. */
START_TEST(test_each_command_options)
{
    static const char *cmds[] = {"rules", "records", "play", "match", "selfplay", "model",
                                 "train", "pbrain", "device", "calibrate", "analyze"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char args[128];
        int lines;
        char first[1024];
        snprintf(args, sizeof args, "help %s", cmds[i]);
        ck_assert_msg(run_bin(args, &lines, NULL, 0) == 0, "gomoku help %s failed", cmds[i]);
        snprintf(args, sizeof args, "%s --no-such-option", cmds[i]);
        int rc = run_bin(args, &lines, first, sizeof first);
        ck_assert_msg(rc == 2, "gomoku %s --no-such-option exited %d", cmds[i], rc);
        ck_assert_msg(strstr(first, "--no-such-option") != NULL,
                      "gomoku %s: first line does not name the option: %s", cmds[i], first);
        ck_assert_msg(lines <= 3, "gomoku %s: %d lines of error", cmds[i], lines);
    }
}
END_TEST

/* Every row is whole, its key unique, its default valid and in range,
 * and a run setting has a field of its own. */
START_TEST(test_settings_rows)
{
    size_t fields[S_COUNT];
    int nfields = 0;
    for (int i = 0; i < S_COUNT; i++) {
        const setting_t *s = &settings_table[i];
        ck_assert_msg(s->key && s->opt && s->arg && s->help && s->by, "row %d is empty", i);
        ck_assert_msg(settings_find(s->key) == s, "key %s is not unique", s->key);
        ck_assert_msg(s->type != SET_CHOICE || s->choices, "%s: no choices", s->key);
        if (s->def && s->type != SET_STR) {
            union { int i; double d; uint64_t u; const char *p; bool b; int e; } v;
            const char *why;
            ck_assert_msg(settings_parse(s, s->def, &v, &why) == 0, "%s: default '%s': %s",
                          s->key, s->def, why);
        }
        if (s->flags & SETTING_RUN) {
            ck_assert_msg(run_setting_find(s->key) == s, "%s", s->key);
            for (int k = 0; k < nfields; k++)
                ck_assert_msg(fields[k] != s->field, "%s: field used twice", s->key);
            fields[nfields++] = s->field;
        }
    }
    ck_assert_int_ge(nfields, 30);
}
END_TEST

/* `gomoku CMD --help` shows each of SHOWN (NULL-terminated) and none of
 * HIDDEN. */
static void help_shows(const char *cmd, const char *const *shown, const char *const *hidden)
{
    char args[64], out[1 << 15];
    snprintf(args, sizeof args, "%s --help", cmd);
    ck_assert_int_eq(run_gomoku(args, NULL, CAPTURE_OUT, out, sizeof out), 0);
    for (; *shown; shown++)
        ck_assert_msg(strstr(out, *shown), "gomoku %s lacks '%s'", args, *shown);
    for (; *hidden; hidden++)
        ck_assert_msg(!strstr(out, *hidden), "gomoku %s shows '%s'", args, *hidden);
}

/* `gomoku help settings` lists every key; --help of a command shows its
 * options with their defaults but not the hidden ones (tests, trainer). */
START_TEST(test_settings_help)
{
    size_t len = 1 << 17;
    char *out = malloc(len);
    ck_assert_int_eq(run_gomoku("help settings", NULL, CAPTURE_OUT, out, len), 0);
    for (int i = 0; i < S_COUNT; i++) {
        char key[96];
        snprintf(key, sizeof key, "\n%s ", settings_table[i].key);
        ck_assert_msg(strstr(out, key), "help settings lacks %s", settings_table[i].key);
    }
    free(out);
    help_shows("train", (const char *const[]){"--c-puct", "(default 1.5)",
                                              "(default 1; may change on resume)", NULL},
               (const char *const[]){"--fault", "--worker-fault", NULL});
    help_shows("worker", (const char *const[]){"--spool-max", NULL},
               (const char *const[]){"--records-fd", "--control-fd", "--games-log", "--fault",
                                     "--run-dir", "--parent-pid", NULL});
    help_shows("pbrain", (const char *const[]){"--search-batch", "(default 8)", NULL},
               (const char *const[]){NULL});
    help_shows("play", (const char *const[]){"(default 800)", "--fpu-root", NULL},
               (const char *const[]){NULL});
}
END_TEST

/* A version 4 config (before the search settings) reads with the search
 * its run used; the current version round-trips. */
START_TEST(test_run_config_versions)
{
    static const char v4[] = "version=4\nvisits=8\nsize=9\n";
    run_config_t c;
    char err[256], text[RUN_CONFIG_TEXT_MAX];
    ck_assert_msg(run_config_parse(&c, v4, sizeof v4 - 1, "v4", err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.visits, 8);
    ck_assert(c.c_puct == 1.5 && c.fpu == 0.2 && c.fpu_root == 0.0);
    ck_assert_int_eq(c.temp_moves, 8);
    ck_assert_int_eq(c.vcf_nodes, 200);
    ck_assert_int_eq(c.vcf_root_nodes, 5000);
    c.c_puct = 2.25;
    c.fpu = 0.5;
    size_t n = run_config_format(&c, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "version=13\n"));
    ck_assert_ptr_nonnull(strstr(text, "value_pool=mean\n")); /* and the mean alone */
    ck_assert_ptr_nonnull(strstr(text, "gumbel=0\n"));       /* and the Gumbel root */
    ck_assert_ptr_nonnull(strstr(text, "strong_frac=0\n"));  /* and symmetric games */
    ck_assert_ptr_nonnull(strstr(text, "planes=basic\n"));   /* runs before the planes */
    ck_assert_ptr_nonnull(strstr(text, "open_frac=0\n"));    /* and before the openings */
    ck_assert_ptr_nonnull(strstr(text, "value_mix=0\n"));    /* and the mixed value target */
    /* and self-play's threat budgets, as fixed before they were settings */
    ck_assert_ptr_nonnull(strstr(text, "selfplay_vct_root_nodes=2000\n"));
    ck_assert_ptr_nonnull(strstr(text, "selfplay_vct_defend_nodes=0\n"));
    run_config_t d;
    ck_assert_msg(run_config_parse(&d, text, n, "v5", err, sizeof err) == 0, "%s", err);
    ck_assert(d.c_puct == 2.25 && d.fpu == 0.5 && d.visits == 8 && d.size == 9);
    static const char bad[] = "version=5\nblocks=41\n";   /* above NN_MAX_BLOCKS */
    ck_assert_int_eq(run_config_parse(&d, bad, sizeof bad - 1, "bad", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "bad:2: bad value for blocks"));
    static const char v8[] = "version=8\nselfplay_vct_root_nodes=30000\n";   /* a later key */
    ck_assert_msg(run_config_parse(&d, v8, sizeof v8 - 1, "v8", err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(d.selfplay_vct_root_nodes, 2000);
    static const char v9[] = "version=9\nselfplay_vct_root_nodes=30000\nselfplay_vct_defend_nodes=500\n";
    ck_assert_msg(run_config_parse(&d, v9, sizeof v9 - 1, "v9", err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(d.selfplay_vct_root_nodes, 30000);
    ck_assert_int_eq(d.selfplay_vct_cheap_nodes, 30000);   /* what its cheap searches had */
    ck_assert_int_eq(d.selfplay_vct_defend_nodes, 500);
    selfplay_opts_t so;   /* what a worker of that run searches with */
    selfplay_opts_default(&so);
    run_config_selfplay_opts(&d, &so);
    ck_assert_int_eq(so.vct_root_nodes, 30000);
    ck_assert_int_eq(so.vct_cheap_nodes, 30000);
    ck_assert_int_eq(so.vct_defend_nodes, 500);
    static const char v10[] = "version=10\nselfplay_vct_root_nodes=30000\n"
                              "selfplay_vct_cheap_nodes=700\n";
    ck_assert_msg(run_config_parse(&d, v10, sizeof v10 - 1, "v10", err, sizeof err) == 0, "%s",
                  err);
    run_config_selfplay_opts(&d, &so);
    ck_assert_int_eq(so.vct_root_nodes, 30000);
    ck_assert_int_eq(so.vct_cheap_nodes, 700);
    static const char v10g[] = "version=10\ngumbel=16\n";   /* a later key */
    ck_assert_msg(run_config_parse(&d, v10g, sizeof v10g - 1, "v10g", err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(d.gumbel, 0);
    static const char v11s[] = "version=11\nstrong_frac=0.5\nstrong_visits=900\n";
    ck_assert_msg(run_config_parse(&d, v11s, sizeof v11s - 1, "v11s", err, sizeof err) == 0, "%s",
                  err);
    ck_assert(d.strong_frac == 0.0 && d.strong_visits == 0);
    static const char v12p[] = "version=12\nvalue_pool=max\n";   /* a later key */
    ck_assert_msg(run_config_parse(&d, v12p, sizeof v12p - 1, "v12p", err, sizeof err) == 0, "%s",
                  err);
    ck_assert_str_eq(d.value_pool, "mean");
    static const char v13p[] = "version=13\nvalue_pool=max\n";
    ck_assert_msg(run_config_parse(&d, v13p, sizeof v13p - 1, "v13p", err, sizeof err) == 0, "%s",
                  err);
    ck_assert_str_eq(d.value_pool, "max");
    static const char bad_pool[] = "version=13\nvalue_pool=median\n";
    ck_assert_int_eq(run_config_parse(&d, bad_pool, sizeof bad_pool - 1, "pool", err, sizeof err),
                     -1);
    ck_assert_msg(strstr(err, "pool:2: bad value for value_pool"), "%s", err);
    /* every self-play setting of a run reaches its workers; the seed is the
     * worker's own */
    static const char all[] = "version=12\nrule=renju\nsize=11\nparallel=5\nvisits=40\n"
                              "cheap_visits=9\nfull_frac=0.3\nresign=0.8\ntemp_moves=3\n"
                              "dirichlet_alpha=0.07\nforced_k=1.5\nopen_frac=0.6\n"
                              "open_stones=5\nopen_balance=0.15\nc_puct=2.25\nfpu=0.4\n"
                              "fpu_root=0.1\nvcf_nodes=77\nvcf_root_nodes=999\n"
                              "selfplay_vct_defend_nodes=123\nseed=555\ngumbel=12\ngumbel_scale=0.7\n"
                              "strong_frac=0.25\nstrong_visits=160\n";
    ck_assert_msg(run_config_parse(&d, all, sizeof all - 1, "all", err, sizeof err) == 0, "%s",
                  err);
    selfplay_opts_default(&so);
    so.seed = 9;
    run_config_selfplay_opts(&d, &so);
    ck_assert(so.rule == RULE_RENJU && so.size == 11 && so.parallel == 5 && so.visits == 40);
    ck_assert(so.cheap_visits == 9 && so.full_frac == 0.3 && so.resign_threshold == 0.8);
    ck_assert(so.temp_moves == 3 && so.dirichlet_alpha == 0.07 && so.forced_k == 1.5);
    ck_assert(so.open_frac == 0.6 && so.open_stones == 5 && so.open_balance == 0.15);
    ck_assert(so.search.c_puct == 2.25 && so.search.fpu == 0.4 && so.search.fpu_root == 0.1);
    ck_assert(so.search.vcf_nodes == 77 && so.search.vcf_root_nodes == 999);
    ck_assert(so.vct_root_nodes == 2000 && so.vct_cheap_nodes == 2000);
    ck_assert_int_eq(so.vct_defend_nodes, 123);
    ck_assert(so.gumbel == 12 && so.gumbel_scale == 0.7);
    ck_assert(so.strong_frac == 0.25 && so.strong_visits == 160);
    ck_assert_uint_eq(so.seed, 9);
    d.dirichlet_alpha = 0;   /* 0: scaled to the board, 10 / 121 */
    run_config_selfplay_opts(&d, &so);
    ck_assert(fabs(so.dirichlet_alpha - 10.0 / 121) < 1e-12);
    static const char v8c[] = "version=8\n";   /* before both: 2000 and 2000 */
    ck_assert_msg(run_config_parse(&d, v8c, sizeof v8c - 1, "v8c", err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(d.selfplay_vct_cheap_nodes, 2000);
    static const char bad_vct[] = "version=9\nselfplay_vct_defend_nodes=-1\n";
    ck_assert_int_eq(run_config_parse(&d, bad_vct, sizeof bad_vct - 1, "vct", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "vct:2: bad value for selfplay_vct_defend_nodes"), "%s", err);
    static const char bad_cheap[] = "version=10\nselfplay_vct_cheap_nodes=-5\n";
    ck_assert_int_eq(run_config_parse(&d, bad_cheap, sizeof bad_cheap - 1, "cheap", err, sizeof err),
                     -1);
    ck_assert_msg(strstr(err, "cheap:2: bad value for selfplay_vct_cheap_nodes"), "%s", err);
    static const char bad_mix[] = "version=8\nvalue_mix=-0.1\n";
    ck_assert_int_eq(run_config_parse(&d, bad_mix, sizeof bad_mix - 1, "mix", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "mix:2: bad value for value_mix"), "%s", err);
}
END_TEST

/* gomoku bench targets on a small net's own positions: a line for the
 * prior, PUCT and the Gumbel root, each over the positions kept; bad
 * input ends in one clear line. */
START_TEST(test_bench_targets)
{
    char dir[64], cmd[512], path[128], out[8192];
    make_tmpdir(dir, sizeof dir);
    expect_gomoku(0, NULL, "model init --blocks 1 --channels 8 --board-max 9 --out %s/m.gzm", dir);
    snprintf(path, sizeof path, "%s/pos.txt", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("# three positions\ne5 d4\ne5 d4 f6\nc3 e5 g7 d5\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "bench targets --model %s/m.gzm --file %s --ref-visits 40 "
             "--visits 12 --gumbel 4 --threads 1", dir, path);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    const char *arms[] = {"\"arm\":\"prior\"", "\"arm\":\"puct\"", "\"arm\":\"gumbel\""};
    for (int i = 0; i < 3; i++)
        ck_assert_msg(strstr(out, arms[i]), "no %s in:\n%s", arms[i], out);
    ck_assert_msg(strstr(out, "\"ref_visits\":40") && strstr(out, "\"gumbel\":4"), "%s", out);
    int kept = -1, left = -1;
    const char *g = strstr(out, "\"arm\":\"gumbel\"");
    ck_assert(sscanf(strstr(g, "\"positions\":"), "\"positions\":%d,\"left_out\":%d", &kept,
                     &left) == 2);
    ck_assert_int_eq(kept + left, 3);
    expect_gomoku(2, "--model and --file are required", "bench targets --file %s", path);
    expect_gomoku(1, "gomoku bench targets: ", "bench targets --model %s/m.gzm --file %s/none.txt",
                  dir, dir);
    expect_gomoku(1, "gomoku bench targets: ", "bench targets --model %s/none.gzm --file %s", dir,
                  path);
    expect_gomoku(2, "--gumbel must be in 0..64, got 65",
                  "bench targets --model %s/m.gzm --file %s --gumbel 65", dir, path);
    expect_gomoku(2, "--gumbel-scale wants a number, got 'nan'",
                  "bench targets --model %s/m.gzm --file %s --gumbel-scale nan", dir, path);
    expect_gomoku(2, "--gumbel-scale must be in 0.01..10, got 0",
                  "selfplay --random-net --games 1 --gumbel-scale 0");
    f = fopen(path, "w");   /* a line that is no position */
    ck_assert_ptr_nonnull(f);
    fputs("e5 zz9\n", f);
    fclose(f);
    expect_gomoku(1, "gomoku bench targets: ", "bench targets --model %s/m.gzm --file %s", dir,
                  path);
    remove_tree(dir);
}
END_TEST

/* gomoku calibrate on a small net's own games: every sampled position is
 * in one bucket, the solved ones are a part of them, and bad input (no
 * model, no file, a file of garbage) ends in one clear line. */
START_TEST(test_calibrate)
{
    char dir[64], cmd[512], out[8192];
    make_tmpdir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "model init --blocks 1 --channels 8 --board-max 9 --out %s/m.gzm", dir);
    expect_gomoku(0, NULL, "%s", cmd);
    expect_gomoku(0, NULL, "selfplay --model %s/m.gzm --games 4 --parallel 4 --visits 16 "
                  "--cheap-visits 0 --size 9 --device cpu --out %s/g > /dev/null", dir, dir);
    snprintf(cmd, sizeof cmd, "calibrate --model %s/m.gzm --positions 30 --every 1 --skip 0 "
             "--vct-nodes 500 --device cpu --json %s/g/*.gzr", dir, dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    long pos = -1, wins = -1, losses = -1, sum = 0;
    const char *p = strstr(out, "\"positions\":");
    ck_assert_msg(p && sscanf(p, "\"positions\":%ld", &pos) == 1, "%s", out);
    ck_assert_int_gt(pos, 0);
    ck_assert_int_le(pos, 30);
    p = strstr(out, "\"exact_wins\":");
    ck_assert(p && sscanf(p, "\"exact_wins\":%ld,\"exact_losses\":%ld", &wins, &losses) == 2);
    ck_assert_int_le(wins + losses, pos);
    for (p = out; (p = strstr(p, "{\"n\":")); p++) {
        long n;
        ck_assert(sscanf(p, "{\"n\":%ld", &n) == 1);
        sum += n;
    }
    ck_assert_int_eq(sum, pos);
    /* the net's 8 views averaged: the same positions; a view count it has not */
    char out8[8192];
    snprintf(cmd, sizeof cmd, "calibrate --model %s/m.gzm --positions 30 --every 1 --skip 0 "
             "--vct-nodes 500 --device cpu --symmetry 8 --json %s/g/*.gzr", dir, dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out8, sizeof out8), 0);
    long pos8 = -1;
    p = strstr(out8, "\"positions\":");
    ck_assert_msg(p && sscanf(p, "\"positions\":%ld", &pos8) == 1 && pos8 == pos, "%s", out8);
    expect_gomoku(1, "symmetry 3: 0, 1 or 8",
                  "calibrate --model %s/m.gzm --device cpu --symmetry 3 %s/g/*.gzr", dir, dir);
    /* a player refuses it too, in one line, before any game */
    expect_gomoku(1, "search options: symmetry not 0, 1 or 8",
                  "match %s/m.gzm bot:random --size 9 --games 2 --visits 4 --device cpu "
                  "--symmetry 3", dir);
    expect_gomoku(2, "--root-symmetry must be in 0..1, got 2",
                  "match %s/m.gzm bot:random --size 9 --root-symmetry 2", dir);
    expect_gomoku(2, "--model is required", "calibrate %s/g/x.gzr", dir);
    expect_gomoku(2, "no game record files given", "calibrate --model %s/m.gzm", dir);
    expect_gomoku(1, "nope.gzr: No such file", "calibrate --model %s/m.gzm %s/nope.gzr", dir, dir);
    expect_gomoku(1, "nope.gzm", "calibrate --model %s/nope.gzm %s/g/x.gzr", dir, dir);
    snprintf(cmd, sizeof cmd, "%s/junk.gzr", dir);
    FILE *f = fopen(cmd, "w");
    ck_assert_ptr_nonnull(f);
    fputs("not a game record at all", f);
    fclose(f);
    expect_gomoku(0, "0 positions from 0 games (1 bad records skipped)",
                  "calibrate --model %s/m.gzm --device cpu %s/junk.gzr", dir, dir);
    remove_tree(dir);
}
END_TEST

/* Self-play of DIR/A (4 games on 9x9 into DIR/GAMES), then the same
 * held-out loss for DIR/A and DIR/B on them: B computes what A does. */
static void same_loss_on_games(const char *dir, const char *a, const char *b, const char *games)
{
    char cmd[1024], out[8192], out2[8192];
    expect_gomoku(0, NULL, "selfplay --model %s/%s --games 4 --parallel 4 --visits 16 "
                  "--cheap-visits 0 --size 9 --device cpu --out %s/%s > /dev/null", dir, a, dir,
                  games);
    snprintf(cmd, sizeof cmd, "model loss %s/%s %s/%s/*.gzr", dir, a, dir, games);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd, "model loss %s/%s %s/%s/*.gzr", dir, b, dir, games);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out2, sizeof out2), 0);
    ck_assert_msg(strcmp(strstr(out, "\"games\""), strstr(out2, "\"games\"")) == 0, "%s%s", out,
                  out2);
}

/* model grow end to end: the grown net's loss on games is the old one's,
 * a run starts from it with its shape, and bad input (a shrink, no model,
 * a file in the way) ends in one clear line. */
START_TEST(test_model_grow)
{
    char dir[64], cmd[1024], out[8192];
    make_tmpdir(dir, sizeof dir);
    expect_gomoku(0, NULL, "model init --blocks 1 --channels 8 --board-max 9 --planes threat "
                  "--out %s/m.gzm", dir);
    expect_gomoku(0, "2 blocks x 12 channels from", "model grow %s/m.gzm --blocks 2 --channels 12 "
                  "--seed 3 --out %s/g.gzm", dir, dir);
    snprintf(cmd, sizeof cmd, "model info %s/g.gzm", dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "blocks        2\n") && strstr(out, "channels      12\n") &&
                  strstr(out, "(threat)"), "%s", out);
    same_loss_on_games(dir, "m.gzm", "g.gzm", "g");
    expect_gomoku(0, NULL, "train %s/run --init-model %s/g.gzm --workers 0 --steps 1 --batch 8 "
                  "--device cpu 2> /dev/null", dir, dir);
    snprintf(cmd, sizeof cmd, "%s/run/config", dir);
    char *conf = slurp(cmd);
    ck_assert_msg(conf && strstr(conf, "blocks=2\n") && strstr(conf, "channels=12\n"), "%s",
                  conf ? conf : "(none)");
    free(conf);
    expect_gomoku(1, "cannot shrink a net from 1 blocks x 8 channels to 1 x 4",
                  "model grow %s/m.gzm --blocks 1 --channels 4 --out %s/s.gzm", dir, dir);
    expect_gomoku(1, "exists (use --force", "model grow %s/m.gzm --blocks 1 --channels 8 "
                  "--out %s/g.gzm", dir, dir);
    expect_gomoku(0, "the new blocks the identity", "help model grow");
    expect_gomoku(2, "a model file is required", "model grow --blocks 2 --channels 8 --out %s/x.gzm",
                  dir);
    expect_gomoku(2, "--channels", "model grow %s/m.gzm --blocks 2 --out %s/x.gzm", dir, dir);
    expect_gomoku(1, "nope.gzm", "model grow %s/nope.gzm --blocks 2 --channels 8 --out %s/x.gzm",
                  dir, dir);
    snprintf(cmd, sizeof cmd, "%s/junk.gzm", dir);
    FILE *f = fopen(cmd, "w");
    ck_assert_ptr_nonnull(f);
    fputs("GZM1 but torn", f);
    fclose(f);
    expect_gomoku(1, "junk.gzm", "model grow %s/junk.gzm --blocks 2 --channels 8 --out %s/x.gzm",
                  dir, dir);
    expect_gomoku(2, "--blocks", "model grow %s/m.gzm --blocks -1 --channels 8 --out %s/x.gzm",
                  dir, dir);
    remove_tree(dir);
}
END_TEST

/* Threat input planes end to end: model init --planes threat, info shows
 * them, self-play evaluates with them, model loss reads the games, and
 * train --workers 0 --steps trains on stored games alone; bad input ends
 * in one clear line. */
START_TEST(test_threat_planes)
{
    char dir[64], cmd[1024], out[8192];
    make_tmpdir(dir, sizeof dir);
    expect_gomoku(0, "threat planes", "model init --blocks 1 --channels 8 --board-max 9 "
                  "--planes threat --out %s/m.gzm", dir);
    snprintf(cmd, sizeof cmd, "model info %s/m.gzm", dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "input planes  15 (threat)") && strstr(out, "version 3"), "%s", out);
    expect_gomoku(2, "--planes must be basic or threat, got 'fancy'",
                  "model init --blocks 1 --channels 8 --planes fancy --out %s/x.gzm", dir);
    expect_gomoku(0, NULL, "selfplay --model %s/m.gzm --games 4 --parallel 4 --visits 16 "
                  "--cheap-visits 0 --size 9 --device cpu --out %s/g > /dev/null", dir, dir);
    snprintf(cmd, sizeof cmd, "model loss %s/m.gzm %s/g/*.gzr", dir, dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    double pl = -1, vl = -1;
    long games = 0;
    const char *p = strstr(out, "\"games\":");
    ck_assert_msg(p && sscanf(p, "\"games\":%ld", &games) == 1 && games == 4, "%s", out);
    p = strstr(out, "\"policy_loss\":");
    ck_assert_msg(p && sscanf(p, "\"policy_loss\":%lf,\"value_loss\":%lf", &pl, &vl) == 2, "%s",
                  out);
    ck_assert(pl > 0 && pl < 10 && vl > 0 && vl < 3);
    expect_gomoku(2, "a model file and game files are required", "model loss %s/m.gzm", dir);
    expect_gomoku(1, "nope.gzr", "model loss %s/m.gzm %s/nope.gzr", dir, dir);

    expect_gomoku(2, "--workers 0 needs --broker or --steps",
                  "train %s/run --init-model %s/m.gzm --workers 0", dir, dir);
    expect_gomoku(0, NULL, "train %s/run --init-model %s/m.gzm --workers 0 --steps 3 --batch 8 "
                  "--device cpu 2> /dev/null", dir, dir);
    snprintf(cmd, sizeof cmd, "cat %s/g/*.gzr > %s/run/games/shard-000000.gzr", dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    expect_gomoku(0, NULL, "train %s/run --workers 0 --steps 3 2> /dev/null", dir);
    snprintf(cmd, sizeof cmd, "model info %s/run/models/000003.gzm", dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "(threat)") && strstr(out, "step          3"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s/run/config", dir);
    char *conf = slurp(cmd);
    ck_assert_msg(conf && strstr(conf, "planes=threat\n"), "%s", conf ? conf : "(none)");
    free(conf);
    expect_gomoku(1, "--planes basic, but --init-model",
                  "train %s/run2 --init-model %s/m.gzm --planes basic --workers 0 --steps 1", dir,
                  dir);
    /* a basic initial model widened to the threat planes */
    expect_gomoku(0, NULL, "model init --blocks 1 --channels 8 --board-max 9 --planes basic "
                  "--out %s/basic.gzm", dir);
    expect_gomoku(0, NULL, "train %s/run4 --init-model %s/basic.gzm --planes threat --workers 0 "
                  "--steps 1 --device cpu 2> %s/run4.log", dir, dir, dir);
    snprintf(cmd, sizeof cmd, "model info %s/run4/models/000000.gzm", dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "input planes  15 (threat)"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s/run4.log", dir);
    conf = slurp(cmd);
    ck_assert_msg(conf && strstr(conf, "from basic to threat planes"), "%s", conf ? conf : "");
    free(conf);
    /* a new run without an initial model: --planes makes its net */
    expect_gomoku(0, NULL, "train %s/run3 --planes threat --blocks 1 --channels 8 --size 9 "
                  "--workers 0 --steps 1 --device cpu 2> /dev/null", dir);
    snprintf(cmd, sizeof cmd, "model info %s/run3/models/000000.gzm", dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "input planes  15 (threat)"), "%s", out);
    expect_gomoku(2, "bad value for planes: 'x' (basic or threat)",
                  "train %s/run4 --planes x --workers 0 --steps 1", dir);
    remove_tree(dir);
}
END_TEST

/* The value head's max end to end: model init and info, grow widening a
 * mean net (the same loss on games), self-play with it, train widening an
 * initial model and making a new net, the run's config; bad input (an
 * unknown pooling, max back to mean) ends in one clear line. */
START_TEST(test_value_pool)
{
    char dir[64], cmd[1024], out[8192];
    make_tmpdir(dir, sizeof dir);
    expect_gomoku(0, "value pooling max", "model init --blocks 1 --channels 8 --board-max 9 "
                  "--value-pool max --out %s/x.gzm", dir);
    snprintf(cmd, sizeof cmd, "model info %s/x.gzm", dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "pooling mean and max") && strstr(out, "version 4"), "%s", out);
    expect_gomoku(2, "--value-pool must be mean or max, got 'median'",
                  "model init --blocks 1 --channels 8 --value-pool median --out %s/y.gzm", dir);
    expect_gomoku(0, NULL, "model init --blocks 1 --channels 8 --board-max 9 --out %s/m.gzm",
                  dir);
    expect_gomoku(0, "value pooling max", "model grow %s/m.gzm --blocks 1 --channels 8 "
                  "--value-pool max --out %s/g.gzm", dir, dir);
    expect_gomoku(1, "cannot change a net's value pooling from max to mean",
                  "model grow %s/g.gzm --blocks 1 --channels 8 --value-pool mean --out %s/z.gzm",
                  dir, dir);
    same_loss_on_games(dir, "g.gzm", "m.gzm", "games");   /* self-play with the max */
    /* train: an initial mean model given the max, then trained on games */
    expect_gomoku(0, NULL, "train %s/run --init-model %s/m.gzm --value-pool max --workers 0 "
                  "--steps 1 --batch 8 --device cpu 2> %s/run.log", dir, dir, dir);
    snprintf(cmd, sizeof cmd, "%s/run.log", dir);
    char *log = slurp(cmd);
    ck_assert_msg(log && strstr(log, "the max pooling"), "%s", log ? log : "");
    free(log);
    snprintf(cmd, sizeof cmd, "%s/run/config", dir);
    char *conf = slurp(cmd);
    ck_assert_msg(conf && strstr(conf, "value_pool=max\n"), "%s", conf ? conf : "(none)");
    free(conf);
    snprintf(cmd, sizeof cmd, "cat %s/games/*.gzr > %s/run/games/shard-000000.gzr", dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    expect_gomoku(0, NULL, "train %s/run --workers 0 --steps 3 2> /dev/null", dir);
    snprintf(cmd, sizeof cmd, "model info %s/run/models/000003.gzm", dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "pooling mean and max") && strstr(out, "step          3"), "%s",
                  out);
    /* an initial model already pooling by max takes the run there */
    expect_gomoku(0, NULL, "train %s/run2 --init-model %s/g.gzm --workers 0 --steps 1 "
                  "--device cpu 2> /dev/null", dir, dir);
    snprintf(cmd, sizeof cmd, "%s/run2/config", dir);
    conf = slurp(cmd);
    ck_assert_msg(conf && strstr(conf, "value_pool=max\n"), "%s", conf ? conf : "(none)");
    free(conf);
    expect_gomoku(1, "--value-pool mean, but --init-model",
                  "train %s/run3 --init-model %s/g.gzm --value-pool mean --workers 0 --steps 1",
                  dir, dir);
    /* a new net */
    expect_gomoku(0, NULL, "train %s/run4 --value-pool max --blocks 1 --channels 8 --size 9 "
                  "--workers 0 --steps 1 --device cpu 2> /dev/null", dir);
    snprintf(cmd, sizeof cmd, "model info %s/run4/models/000000.gzm", dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "pooling mean and max"), "%s", out);
    expect_gomoku(2, "bad value for value_pool: 'x' (mean or max)",
                  "train %s/run5 --value-pool x --workers 0 --steps 1", dir);
    remove_tree(dir);
}
END_TEST

/* True when the files A and B hold the same bytes. */
static bool same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = slurp_len(a, &la), *y = slurp_len(b, &lb);
    bool same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* The training steps in distill's last line ("wrote P: N steps"); -1 when absent. */
static long distill_steps(const char *out)
{
    const char *w = strstr(out, "\nwrote ");
    long n = -1;
    if (w && (w = strstr(w, ": ")))
        sscanf(w, ": %ld steps", &n);
    return n;
}

/* The held-out positions of distill's last epoch line and, of them, those
 * with a policy target ("(N, M with a policy target)"); false when absent. */
static bool distill_held(const char *out, long *n, long *with_policy)
{
    const char *e = NULL;
    for (const char *p = out; (p = strstr(p, "\nepoch ")); p++)
        e = p;
    const char *h = e ? strstr(e, "held out policy ") : NULL;
    h = h ? strstr(h, " (") : NULL;
    return h && sscanf(h, " (%ld, %ld with a policy target)", n, with_policy) == 2;
}

/* A 9x9 game of records written before 2026-12-07, `copies` times into
 * path: black makes five on row 4 while white answers on row 6; black's
 * last two moves are proven wins (root value +1) whose visits were a reused
 * tree's (on a point far from the win) and none at all. */
static void write_old_won_games(const char *path, int copies)
{
    static const int xs[9] = {2, 2, 3, 3, 4, 4, 5, 5, 6};
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    game_record_t g;
    record_init(&g);
    char err[256];
    for (int c = 0; c < copies; c++) {
        record_clear(&g, RULE_FREESTYLE, 9, 1);
        for (int i = 0; i < 9; i++) {
            int move = (i % 2 ? 6 : 4) * 9 + xs[i];
            record_visit_t v = {.move = (int16_t)move, .count = 10};
            float value = i == 6 || i == 8 ? 1.0f : i == 7 ? -1.0f : 0.0f;
            if (i == 6)
                v.move = 0;   /* the reused tree's visits, on the corner */
            ck_assert_int_eq(record_add_ply(&g, move, 1, value, &v, i == 8 ? 0 : 1), 0);
        }
        g.result = RESULT_BLACK;
        ck_assert_msg(record_validate(&g, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(record_write(f, &g, err, sizeof err) == 0, "%s", err);
    }
    record_free(&g);
    ck_assert_int_eq(fclose(f), 0);
}

/* gomoku pbrain with the pattern net PATH (and pbrain's options EXTRA)
 * opens a 9x9 game with a move on the board (the search ends at 100 ms,
 * its move comes before stdin's end ends the brain). */
static void brain_plays_with(const char *path, const char *extra)
{
    char cmd[512], out[4096];
    snprintf(cmd, sizeof cmd, "pbrain --model patnet:%s %s", path, extra);
    int rc = run_gomoku(cmd, "START 9\\nINFO timeout_turn 100\\nBEGIN\\n", CAPTURE_OUT, out,
                        sizeof out);
    int x = -1, y = -1;
    /* the move is the first line after OK that is not a MESSAGE or DEBUG line */
    const char *line = strstr(out, "OK\n");
    if (line)
        line += 3;
    while (line && (strncmp(line, "MESSAGE", 7) == 0 || strncmp(line, "DEBUG", 5) == 0))
        line = (line = strchr(line, '\n')) ? line + 1 : NULL;
    ck_assert_msg(rc == 0 && line && sscanf(line, "%d,%d", &x, &y) == 2 && x >= 0 && x < 9 &&
                  y >= 0 && y < 9, "gomoku %s: exit %d, no move in:\n%s", cmd, rc, out);
}

static void brain_plays(const char *path) { brain_plays_with(path, ""); }

/* gomoku model distill end to end on a tiny net's games: a line per
 * epoch, a pattern net that gomoku pbrain plays with, --targets records
 * and --init going on from a net, --targets search (reanalysis), the same
 * net from the same --threads;
 * bad input (no --out, no games, a missing
 * file, games of another size, a bad --init, an output in the way) ends in
 * a clear error and leaves the output file as it was. */
START_TEST(test_model_distill)
{
    char dir[64], cmd[1024], out[8192], path[128], keep[128];
    make_tmpdir(dir, sizeof dir);
    expect_gomoku(0, NULL, "model init --blocks 1 --channels 8 --board-max 9 --out %s/m.gzm", dir);
    expect_gomoku(0, NULL, "selfplay --random-net --blocks 1 --channels 8 --size 9 --games 4 "
                  "--parallel 4 --visits 16 --cheap-visits 0 --device cpu --out %s/g > /dev/null",
                  dir);
    snprintf(cmd, sizeof cmd, "model distill %s/m.gzm %s/g/*.gzr --out %s/p.gzp --epochs 2", dir,
             dir, dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    snprintf(path, sizeof path, "\nwrote %s/p.gzp: ", dir);
    ck_assert_msg(strstr(out, "distill: 4 games (0 skipped)") && strstr(out, "\nepoch 1: train ") &&
                  strstr(out, "\nepoch 2: train ") && !strstr(out, "epoch 3") &&
                  strstr(out, path), "%s", out);
    long steps = distill_steps(out);
    ck_assert_msg(steps > 0, "%s", out);
    snprintf(path, sizeof path, "%s/p.gzp", dir);
    brain_plays(path);
    /* the games' own targets, and training on from the net written */
    snprintf(cmd, sizeof cmd, "model distill %s/m.gzm %s/g/*.gzr --targets records --holdout 0.5 "
             "--out %s/r.gzp --epochs 1", dir, dir, dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "\nepoch 1: train ") && distill_steps(out) > 0, "%s", out);
    snprintf(cmd, sizeof cmd, "%s/r.gzp", dir);
    brain_plays(cmd);
    long held, with_policy;
    ck_assert_msg(distill_held(out, &held, &with_policy) && held > 0 && with_policy == held,
                  "every ply of these games is a full search's: %s", out);
    /* cheap plies train the value alone: the policy's losses are over the
     * full plies (the others would add nothing to the sum but count) */
    expect_gomoku(0, NULL, "selfplay --random-net --blocks 1 --channels 8 --size 9 --games 6 "
                  "--parallel 6 --visits 16 --cheap-visits 4 --full-frac 0.5 --device cpu "
                  "--out %s/gc > /dev/null", dir);
    snprintf(cmd, sizeof cmd, "model distill %s/m.gzm %s/gc/*.gzr --targets records --holdout 0.5 "
             "--out %s/c.gzp --epochs 1", dir, dir, dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    double floor_h, loss_h;
    const char *fl = strstr(out, "the teacher's policy entropy ");
    const char *hl = strstr(out, "held out policy ");
    ck_assert_msg(distill_held(out, &held, &with_policy) && with_policy > 0 &&
                  with_policy < held && fl && sscanf(fl, "the teacher's policy entropy %lf",
                  &floor_h) == 1 && hl && sscanf(hl, "held out policy %lf", &loss_h) == 1 &&
                  loss_h >= floor_h, "%s", out);
    /* a proven win's policy target is the move played (--won move, the
     * default): old records' plies with no visits there get one; with
     * --won visits they train the value alone */
    snprintf(path, sizeof path, "%s/old.gzr", dir);
    write_old_won_games(path, 20);
    long held_v, with_v;
    snprintf(cmd, sizeof cmd, "model distill %s/m.gzm %s --targets records --holdout 0.5 "
             "--out %s/w.gzp --epochs 1 --force", dir, path, dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(distill_held(out, &held, &with_policy) && held > 0 && with_policy == held,
                  "%s", out);
    snprintf(cmd, sizeof cmd, "model distill %s/m.gzm %s --targets records --holdout 0.5 "
             "--won visits --out %s/w.gzp --epochs 1 --force", dir, path, dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(distill_held(out, &held_v, &with_v) && held_v == held &&
                  with_v == held - held / 9, "one ply in 9 without a target: %s", out);
    expect_gomoku(2, "--won must be move or visits, got 'x'",
                  "model distill %s/m.gzm %s --targets records --won x --out %s/x.gzp", dir, path,
                  dir);
    snprintf(path, sizeof path, "%s/p.gzp", dir);
    snprintf(cmd, sizeof cmd, "model distill %s/m.gzm %s/g/*.gzr --init %s/p.gzp --out %s/i.gzp "
             "--epochs 1", dir, dir, dir, dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(distill_steps(out) > steps, "from %ld steps: %s", steps, out);
    /* reanalysis: each position searched anew by the --init net, its visits
     * and root value the targets; refused without a net to search with */
    snprintf(cmd, sizeof cmd, "model distill %s/m.gzm %s/g/*.gzr --targets search "
             "--search-visits 32 --init %s/p.gzp --out %s/s.gzp --epochs 1 --threads 2", dir,
             dir, dir, dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(strstr(out, " positions with 32 playouts each in ") &&
                  strstr(out, "\nepoch 1: train ") && distill_steps(out) > steps, "%s", out);
    snprintf(cmd, sizeof cmd, "%s/s.gzp", dir);
    brain_plays(cmd);
    /* a position the search proves won gets its winning move as the target
     * (proved before any playout, its root has no visits to give); the one
     * proven lost at once (white facing black's open four, 1 ply in 9)
     * trains the value alone */
    snprintf(cmd, sizeof cmd, "model distill %s/m.gzm %s/old.gzr --targets search "
             "--search-visits 32 --init %s/p.gzp --holdout 0.5 --out %s/sw.gzp --epochs 1", dir,
             dir, dir, dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(distill_held(out, &held, &with_policy) && held > 0 &&
                  with_policy == held - held / 9, "%s", out);
    expect_gomoku(2, "--search-visits", "model distill %s/m.gzm %s/g/*.gzr --targets search "
                  "--search-visits 0 --init %s/p.gzp --out %s/x.gzp", dir, dir, dir, dir);
    expect_gomoku(1, "--targets search needs the pattern net to search with (--init)",
                  "model distill %s/m.gzm %s/g/*.gzr --targets search --out %s/x.gzp", dir, dir,
                  dir);
    /* the training's threads share each minibatch: the same count, the same net */
    char t1[128], t2[128];
    for (int i = 1; i <= 2; i++)
        expect_gomoku(0, NULL, "model distill %s/m.gzm %s/g/*.gzr --targets records --threads 3 "
                      "--epochs 2 --out %s/t%d.gzp > /dev/null", dir, dir, dir, i);
    snprintf(t1, sizeof t1, "%s/t1.gzp", dir);
    snprintf(t2, sizeof t2, "%s/t2.gzp", dir);
    ck_assert_msg(same_file(t1, t2), "two runs on 3 threads trained different nets");

    /* bad input: the output is neither made nor touched */
    snprintf(keep, sizeof keep, "%s/keep.gzp", dir);
    snprintf(cmd, sizeof cmd, "cp %s %s", path, keep);
    ck_assert_int_eq(system(cmd), 0);
    expect_gomoku(2, "--out is required", "model distill %s/m.gzm %s/g/*.gzr", dir, dir);
    expect_gomoku(2, "a model file and game files are required",
                  "model distill %s/m.gzm --out %s/x.gzp", dir, dir);
    expect_gomoku(2, "--targets must be net, records or search, got 'bogus'",
                  "model distill %s/m.gzm %s/g/*.gzr --targets bogus --out %s/x.gzp", dir, dir,
                  dir);
    expect_gomoku(1, "nope.gzr: No such file", "model distill %s/m.gzm %s/nope.gzr --out %s/x.gzp",
                  dir, dir, dir);
    expect_gomoku(1, "nope.gzm", "model distill %s/nope.gzm %s/g/*.gzr --out %s/x.gzp", dir, dir,
                  dir);
    expect_gomoku(0, NULL, "model init --blocks 1 --channels 8 --board-max 11 --out %s/m11.gzm",
                  dir);
    expect_gomoku(1, "no training positions of a 11x11 freestyle game in the files",
                  "model distill %s/m11.gzm %s/g/*.gzr --out %s/x.gzp", dir, dir, dir);
    expect_gomoku(1, "m.gzm: not a pattern net file",
                  "model distill %s/m.gzm %s/g/*.gzr --init %s/m.gzm --out %s/x.gzp", dir, dir,
                  dir, dir);
    snprintf(cmd, sizeof cmd, "%s/x.gzp", dir);
    ck_assert_msg(access(cmd, F_OK) != 0, "a failed run left %s", cmd);
    expect_gomoku(1, "p.gzp exists (use --force",
                  "model distill %s/m.gzm %s/g/*.gzr --out %s/p.gzp", dir, dir, dir);
    expect_gomoku(1, "nope.gzr: No such file",
                  "model distill %s/m.gzm %s/nope.gzr --out %s/p.gzp --force", dir, dir, dir);
    expect_gomoku(1, "no training positions",
                  "model distill %s/m11.gzm %s/g/*.gzr --out %s/p.gzp --force", dir, dir, dir);
    ck_assert_msg(same_file(path, keep), "a failed run changed %s", path);
    /* a runtime error is one line */
    int lines;
    snprintf(cmd, sizeof cmd, "model distill %s/m.gzm %s/nope.gzr --out %s/x.gzp", dir, dir, dir);
    ck_assert_int_eq(run_bin(cmd, &lines, NULL, 0), 1);
    ck_assert_int_eq(lines, 1);
    /* a net for the root's priors */
    snprintf(cmd, sizeof cmd, "--root-net %s/m.gzm", dir);
    brain_plays_with(path, cmd);
    expect_gomoku(1, "--root-net) goes with a pattern net as the model",
                  "pbrain --model %s/m.gzm --root-net %s/m.gzm", dir, dir);
    expect_gomoku(1, "--root-net: ", "pbrain --model patnet:%s --root-net %s/none.gzm", path, dir);
    /* an ensemble of pattern nets: here the net with itself */
    snprintf(cmd, sizeof cmd, "--ensemble %s", path);
    brain_plays_with(path, cmd);
    expect_gomoku(1, "--ensemble) goes with a pattern net as the model",
                  "pbrain --model %s/m.gzm --ensemble %s", dir, path);
    expect_gomoku(1, "--ensemble: an empty file name", "pbrain --model patnet:%s --ensemble %s,",
                  path, path);
    /* a damaged pattern net is refused by the brain in one line */
    snprintf(cmd, sizeof cmd, "head -c 1000 %s > %s/torn.gzp", path, dir);
    ck_assert_int_eq(system(cmd), 0);
    expect_gomoku(1, "torn.gzp: truncated", "pbrain --model patnet:%s/torn.gzp", dir);
    /* and by gomoku match, in one line that names the file once */
    snprintf(cmd, sizeof cmd, "match patnet:%s/torn.gzp bot:random --games 2 --size 9", dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_ERR, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "gomoku match: ") && strstr(out, "torn.gzp: truncated (1000 bytes") &&
                  strstr(strstr(out, "torn.gzp") + 1, "torn.gzp") == NULL &&
                  strchr(out, '\n') == strrchr(out, '\n'), "%s", out);
    expect_gomoku(2, "cannot read pattern net", "match patnet:%s/none.gzp bot:random --games 2 "
                  "--size 9", dir);
    /* a pattern net of another rule: refused by distill --init and self-play, noted by match */
    expect_gomoku(0, NULL, "model init --blocks 1 --channels 8 --board-max 9 --rule renju "
                  "--out %s/mr.gzm", dir);
    expect_gomoku(1, "p.gzp is a pattern net for freestyle, but",
                  "model distill %s/mr.gzm %s/g/*.gzr --init %s/p.gzp --out %s/x.gzp", dir, dir,
                  dir, dir);
    expect_gomoku(1, "p.gzp is a pattern net for freestyle, but the games are renju",
                  "selfplay --model %s/mr.gzm --patnet %s/p.gzp --rule renju --size 9 --games 2 "
                  "--out %s/sr", dir, dir, dir);
    snprintf(cmd, sizeof cmd, "match patnet:%s/p.gzp bot:random --games 2 --size 9 --rule renju "
             "--visits 8", dir);
    ck_assert_int_eq(run_gomoku(cmd, NULL, CAPTURE_ERR, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "p.gzp was trained for freestyle, playing renju"), "%s", out);
    remove_tree(dir);
}
END_TEST

/* ---- gomoku play at the terminal ---- */

#define PLAY_OUT (1 << 18)

/* `gomoku play ARGS` with INPUT (printf format) on stdin: its stdout in
 * OUT (PLAY_OUT bytes); fails the test unless it exits 0. */
static void play(const char *args, const char *input, char *out)
{
    int rc = run_gomoku(args, input, CAPTURE_OUT, out, PLAY_OUT);
    ck_assert_msg(rc == 0, "gomoku %s: exit %d:\n%s", args, rc, out);
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Fails the test unless OUT holds every one of NEEDLES (NULL-terminated). */
static void shows_all(const char *out, const char *const *needles)
{
    for (; *needles; needles++)
        ck_assert_msg(strstr(out, *needles), "no '%s' in:\n%s", *needles, out);
}

/* The rows of the K-th board (0-based; -1: the last) in OUT, into ROWS. */
static void board_rows(const char *out, int k, char *rows, size_t len)
{
    int n = count(out, "<- x\n");
    if (k < 0)
        k += n;
    ck_assert_msg(k >= 0 && k < n, "no board %d of %d in:\n%s", k, n, out);
    const char *p = out;
    for (int i = 0; i <= k; i++)
        p = strstr(p, "<- x\n") + 5;
    const char *e = strstr(p, "\n  X black");
    ck_assert(e != NULL);
    snprintf(rows, len, "%.*s", (int)(e - p), p);
}

/* Black (the person) has four on the top row of a 9x9 board: a9..d9. */
static const char black_four[] = "Piskvork 9x9, 11:11, 0\n1,1,0\n1,9,0\n2,1,0\n2,9,0\n3,1,0\n"
                                 "3,9,0\n4,1,0\n9,9,0\n";
/* White has four on the bottom row, a1..d1; black to move. */
static const char white_four[] = "Piskvork 9x9, 11:11, 0\n5,5,0\n1,9,0\n9,1,0\n2,9,0\n9,3,0\n"
                                 "3,9,0\n7,1,0\n4,9,0\n";

/* save FILE writes the moves played; --load of that file shows the same
 * board, the same side to move, and the names black first. */
START_TEST(test_play_save_load)
{
    char dir[64], path[128], args[256], rows1[4096], rows2[4096];
    char *out = malloc(PLAY_OUT);
    make_tmppath(dir, sizeof dir, path, sizeof path, "g.psq");
    snprintf(args, sizeof args, "play --white bot:greedy --size 9 --seed 5");
    char input[256];
    snprintf(input, sizeof input, "e5\\nsave %s/no/such/dir.psq\\nsave\\nf5\\nsave %s\\nquit\\n",
             dir, path);
    play(args, input, out);
    shows_all(out, (const char *const[]){"not saved: ", "No such file or directory",
                                         "not saved: say where",
                                         "saved 4 moves to ", NULL});
    board_rows(out, -1, rows1, sizeof rows1);
    psq_game_t g;
    char err[256];
    ck_assert_msg(psq_load(path, &g, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(g.size, 9);
    ck_assert_int_eq(g.nmoves, 4);
    ck_assert_int_eq(g.moves[0], 4 * 9 + 4);   /* e5 */
    ck_assert_int_eq(g.moves[2], 4 * 9 + 5);   /* f5 */
    ck_assert_str_eq(g.black, "human");
    ck_assert_str_eq(g.white, "bot:greedy");
    for (int i = 1; i < 4; i += 2) {   /* the bot's replies as the game printed them */
        char mv[16], line[64];
        move_format_alpha(g.moves[i], 9, mv, sizeof mv);
        snprintf(line, sizeof line, "move %d: white %s ", i + 1, mv);
        ck_assert_msg(strstr(out, line), "no '%s' in:\n%s", line, out);
    }
    /* no --size: the file's */
    snprintf(args, sizeof args, "play --black human --white human --load %s", path);
    play(args, "quit\\n", out);
    ck_assert_msg(strstr(out, "freestyle 9x9:") && strstr(out, ": 4 moves, black to move"),
                  "%s", out);
    board_rows(out, 0, rows2, sizeof rows2);
    ck_assert_str_eq(rows1, rows2);
    remove_tree(dir);
    free(out);
}
END_TEST

/* A --load file that cannot be played is one line on stderr and exit 1. */
START_TEST(test_play_load_errors)
{
    char dir[64], path[128], args[256], first[1024];
    int lines;
    make_tmppath(dir, sizeof dir, path, sizeof path, "x.psq");
    static const struct {
        const char *text, *opts, *needle;
    } bad[] = {
        {NULL, "", "cannot open"},
        {"this is not a game\n", "", "line 1: expected 'Piskvork WxH'"},
        {"Piskvork 15x15, 11:11, 0\n8,8,0\n1,1,0\n9,8,0\n1,3,0\n8,9,0\n1,5,0\n9,10,0\n1,7,0\n"
         "7,8,0\n", "--rule renju", "move 9 (g8) is not legal under renju: forbidden"},
        {black_four, "--size 15", "is a 9x9 game; --size is 15"},
        {"Piskvork 9x9, 11:11, 0\n1,1,0\n1,9,0\n2,1,0\n2,9,0\n3,1,0\n3,9,0\n4,1,0\n4,9,0\n5,1,0\n",
         "", "the game is over (black won after move 9)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (bad[i].text)
            write_file(path, bad[i].text, strlen(bad[i].text), "wb");
        snprintf(args, sizeof args, "play --black human --white human --load %s %s", path,
                 bad[i].opts);
        ck_assert_int_eq(run_bin(args, &lines, first, sizeof first), 1);
        ck_assert_msg(lines == 1 && strstr(first, bad[i].needle) && strstr(first, "--load"),
                      "case %zu: %d lines, first: %s", i, lines, first);
    }
    remove_tree(dir);
}
END_TEST

/* After the game: undo takes back the person's last move and play goes
 * on, new starts again from the same position, save works, quit and end
 * of input end it with the result printed. */
START_TEST(test_play_menu)
{
    char dir[64], path[128], args[256], input[512];
    char *out = malloc(PLAY_OUT);
    make_tmppath(dir, sizeof dir, path, sizeof path, "b4.psq");
    write_file(path, black_four, strlen(black_four), "wb");
    snprintf(args, sizeof args, "play --white bot:greedy --load %s", path);
    snprintf(input, sizeof input,
             "e9\\nhelp\\nhint\\nundo\\ne9\\nsave %s/won.psq\\nnew\\ni5\\nquit\\n", dir);
    play(args, input, out);
    ck_assert_int_eq(count(out, "move 9: black e9 (4,0)"), 2);
    ck_assert_int_eq(count(out, "result: black wins (human) after 9 moves"), 2);
    shows_all(out, (const char *const[]){
        "game over (undo, new, save FILE, quit; help)> ", "  new        a new game",
        "refused: 'hint': the game is over", "undone: back to move 9", "saved 9 moves to ",
        "new game: you play black (X)",
        "move 9: black i5 (8,4)",   /* on the loaded start */
        "result: none (quit) after 10 moves", NULL});
    psq_game_t g;
    char err[256], won[128];
    snprintf(won, sizeof won, "%s/won.psq", dir);
    ck_assert_msg(psq_load(won, &g, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(g.nmoves, 9);
    /* end of input at the menu: the result stays the last word */
    play(args, "e9\\n", out);
    ck_assert_msg(strstr(out, "result: black wins (human) after 9 moves\ngame over"), "%s", out);
    /* the engine wins: undo takes back its five and the person's move, and
     * its view of the five is no 'VCF (0 fours)' */
    snprintf(path, sizeof path, "%s/w4.psq", dir);
    write_file(path, white_four, strlen(white_four), "wb");
    snprintf(args, sizeof args, "play --white bot:greedy --load %s", path);
    play(args, "a5\\nundo\\nquit\\n", out);
    ck_assert_msg(strstr(out, "result: white wins (bot:greedy) after 10 moves"), "%s", out);
    ck_assert_msg(strstr(out, "undone: back to move 9"), "%s", out);
    ck_assert_msg(!strstr(out, "fours)"), "%s", out);
    ck_assert_int_eq(count(out, "black to move (x,y"), 2);
    remove_tree(dir);
    free(out);
}
END_TEST

/* hint suggests a move with whose it is and plays nothing; help lists
 * every command of the prompt. */
START_TEST(test_play_hint_help)
{
    char *out = malloc(PLAY_OUT);
    play("play --white bot:greedy --size 9", "hint\\nhelp\\nquit\\n", out);
    ck_assert_msg(strstr(out, "hint for you (black): "), "%s", out);
    ck_assert_msg(!strstr(out, "move 1:"), "%s", out);
    ck_assert_msg(strstr(out, "result: none (quit) after 0 moves"), "%s", out);
    static const char *const cmds[] = {"h8 or 7,7", "undo", "hint", "save FILE", "help", "quit"};
    const char *h = strstr(out, "at your move:");
    ck_assert_msg(h != NULL, "%s", out);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char line[32];
        snprintf(line, sizeof line, "\n  %s ", cmds[i]);
        ck_assert_msg(strstr(h, line), "help lacks %s:\n%s", cmds[i], h);
    }
    /* a model's hint has its win rate, for the person's side; --hint and
     * hint print the same */
    const char *src = getenv("GOMOKU_SRC");
    ck_assert(src != NULL);
    char args[512];
    snprintf(args, sizeof args, "play --model %s/models/freestyle9-2x32.gzm --size 9 --visits 20 "
             "--device cpu --quiet --human-color white", src);
    play(args, "hint\\nquit\\n", out);
    /* the engine's first stone, the centre, comes without a search */
    ck_assert_msg(strstr(out, "move 1: black e5 (4,4)") && !strstr(out, "engine (black) "), "%s",
                  out);
    ck_assert_msg(strstr(out, "% win, 20 visits"), "%s", out);
    ck_assert_msg(strstr(out, "hint for you (white): ") && strstr(out, "  you (white) "), "%s",
                  out);
    ck_assert_int_eq(count(out, "move 1:"), 1);
    ck_assert_msg(!strstr(out, "move 2:"), "%s", out);
    free(out);
}
END_TEST

/* Renju: black's forbidden points are marked on the board while black is
 * to move, with the legend; never under freestyle. */
START_TEST(test_play_forbidden_mark)
{
    char *out = malloc(PLAY_OUT);
    static const char moves[] = "7,7\\n0,0\\n8,7\\n0,2\\n7,8\\n0,4\\n8,9\\n0,6\\nquit\\n";
    play("play --black human --white human --rule renju", moves, out);
    char rows[4096];
    board_rows(out, -1, rows, sizeof rows);
    ck_assert_msg(strstr(rows, "\n   8  .  .  .  .  .  .  #  X  X  ."), "%s", rows);
    ck_assert_int_eq(count(out, "#  X  X"), 1);
    ck_assert_msg(strstr(out, ", # forbidden for black\n"), "%s", out);
    play("play --black human --white human", moves, out);
    ck_assert_msg(!strchr(out, '#'), "%s", out);
    free(out);
}
END_TEST

/* Against an engine the board is shown once a turn, after its reply,
 * with both last moves marked; between two people once a move. */
START_TEST(test_play_one_board_per_turn)
{
    char *out = malloc(PLAY_OUT);
    play("play --white bot:greedy --size 9 --seed 2", "e5\\nf5\\ng4\\nquit\\n", out);
    ck_assert_int_eq(count(out, "<- x\n"), 4);
    for (int k = 1; k < 4; k++) {
        char rows[4096];
        board_rows(out, k, rows, sizeof rows);
        ck_assert_msg(strstr(rows, "[O]") && strstr(rows, "(X)"), "board %d:\n%s", k, rows);
    }
    play("play --black human --white human --size 9", "e5\\nf5\\ng4\\nquit\\n", out);
    ck_assert_int_eq(count(out, "<- x\n"), 4);
    free(out);
}
END_TEST

/* Help texts: every command in gomoku --help (worker too), every bot among
 * play's and match's opponents. */
START_TEST(test_help_lists)
{
    char out[1 << 14];
    ck_assert_int_eq(run_gomoku("--help", NULL, CAPTURE_OUT, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "  worker ") && strstr(out, "gomoku train"), "%s", out);
    const char *const bots[] = {"bot:random", "bot:greedy", "bot:vcf", "bot:vct", NULL};
    help_shows("play", bots, (const char *const[]){NULL});
    help_shows("match", bots, (const char *const[]){NULL});
    help_shows("play", (const char *const[]){"--load FILE", NULL}, (const char *const[]){NULL});
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli");
    ADD_CASE(s, "args", -1, test_args_defaults, test_args_values, test_args_errors,
             test_args_dashdash_and_help);
    ADD_CASE(s, "settings", 60, test_settings_rows, test_settings_help, test_run_config_versions);
    ADD_CASE(s, "program", 60, test_program_errors, test_each_command_options, test_calibrate, test_bench_targets,
             test_threat_planes, test_model_grow, test_value_pool, test_model_distill);
    ADD_CASE(s, "play", 120, test_play_save_load, test_play_load_errors, test_play_menu,
             test_play_hint_help, test_play_forbidden_mark, test_play_one_board_per_turn,
             test_help_lists);
    return run_suite(s);
}
