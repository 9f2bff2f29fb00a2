/* The command line: option parsing (cli/args.c) in-process, and the
 * program's answers to bad subcommands and options through the real
 * binary ($GOMOKU_BIN). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "tests/testkit.h"

static const cmd_help_t help = {"demo", "gomoku demo [--games N] FILE", "A demo command."};

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
        {"fast", ARG_FLAG, &o->fast, 0, 0, "go fast"},
        {"games", ARG_INT, &o->games, 1, 1000, "N games"},
        {"temp", ARG_DOUBLE, &o->temp, 0, 2, "T temperature"},
        {"out", ARG_STR, &o->out, 0, 0, "DIR output"},
        {"seed", ARG_U64, &o->seed, 0, 0, "S seed"},
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
}
END_TEST

/* Every public subcommand answers --help with exit 0 and an unknown option
 * with exit 2 and a first line naming the option. */
START_TEST(test_each_command_options)
{
    static const char *cmds[] = {"rules", "records", "play", "match", "selfplay", "model",
                                 "train", "pbrain", "device"};
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

int main(void)
{
    Suite *s = suite_create("cli");
    ADD_CASE(s, "args", -1, test_args_values, test_args_errors, test_args_dashdash_and_help);
    ADD_CASE(s, "program", 60, test_program_errors, test_each_command_options);
    return run_suite(s);
}
