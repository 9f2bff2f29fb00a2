/* The command line: option parsing (cli/args.c) in-process, and the
 * program's answers to bad subcommands and options through the real
 * binary ($GOMOKU_BIN). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli/args.h"

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
    opts_t o;
    char *pos[2];
    int np;
    char *unknown[] = {"demo", "--gmaes", "3"};
    ck_assert_int_eq(parse(&o, pos, &np, 3, unknown), ARGS_ERROR);
    char *missing[] = {"demo", "--games"};
    ck_assert_int_eq(parse(&o, pos, &np, 2, missing), ARGS_ERROR);
    char *notint[] = {"demo", "--games", "12x"};
    ck_assert_int_eq(parse(&o, pos, &np, 3, notint), ARGS_ERROR);
    char *range[] = {"demo", "--games", "0"};
    ck_assert_int_eq(parse(&o, pos, &np, 3, range), ARGS_ERROR);
    char *huge[] = {"demo", "--games", "99999999999999999999"};
    ck_assert_int_eq(parse(&o, pos, &np, 3, huge), ARGS_ERROR);
    char *nan[] = {"demo", "--temp", "nan"};
    ck_assert_int_eq(parse(&o, pos, &np, 3, nan), ARGS_ERROR);
    char *flagval[] = {"demo", "--fast=1"};
    ck_assert_int_eq(parse(&o, pos, &np, 2, flagval), ARGS_ERROR);
    char *negseed[] = {"demo", "--seed", "-1"};
    ck_assert_int_eq(parse(&o, pos, &np, 3, negseed), ARGS_ERROR);
    char *toomany[] = {"demo", "a", "b", "c"};
    ck_assert_int_eq(parse(&o, pos, &np, 4, toomany), ARGS_ERROR);
    char *shortopt[] = {"demo", "-x"};
    ck_assert_int_eq(parse(&o, pos, &np, 2, shortopt), ARGS_ERROR);
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

/* Run the program; returns its exit status, stderr's line count in *lines. */
static int run_bin(const char *args, int *lines, char *first, size_t firstlen)
{
    const char *bin = getenv("GOMOKU_BIN");
    ck_assert_msg(bin != NULL, "GOMOKU_BIN is not set");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1 >/dev/null", bin, args);
    FILE *p = popen(cmd, "r");
    ck_assert(p != NULL);
    char buf[1024];
    *lines = 0;
    if (first && firstlen)
        first[0] = '\0';
    while (fgets(buf, sizeof buf, p)) {
        if (*lines == 0 && first)
            snprintf(first, firstlen, "%s", buf);
        (*lines)++;
    }
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
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
    TCase *tc = tcase_create("args");
    tcase_add_test(tc, test_args_values);
    tcase_add_test(tc, test_args_errors);
    tcase_add_test(tc, test_args_dashdash_and_help);
    suite_add_tcase(s, tc);
    TCase *tp = tcase_create("program");
    tcase_set_timeout(tp, 60);
    tcase_add_test(tp, test_program_errors);
    tcase_add_test(tp, test_each_command_options);
    suite_add_tcase(s, tp);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
