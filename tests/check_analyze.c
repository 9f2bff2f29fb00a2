/* gomoku analyze (play/analyze.c) through the binary: many concurrent
 * queries answered once each and matched to their positions, bad queries
 * among good ones, proven results, terminate, and the command's own
 * errors. A small random net made by `gomoku model init` searches. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/board.h"
#include "util/sjson.h"
#include "tests/testkit.h"

#define OUT_MAX (4u << 20)

static char g_dir[512], g_model[600];

static void setup(void)
{
    make_tmpdir(g_dir, sizeof g_dir);
    snprintf(g_model, sizeof g_model, "%s/net.gzm", g_dir);
    expect_gomoku(0, "wrote", "model init --blocks 1 --channels 8 --board-max 15 --out '%s'",
                  g_model);
}

static void teardown(void) { remove_tree(g_dir); }

/* gomoku analyze --model (the small net) OPTS with INPUT on stdin: its exit
 * status; stdout into a malloc'd *out (the caller frees). */
static int analyze(const char *opts, const char *input, char **out)
{
    char in[600], args[2048];
    snprintf(in, sizeof in, "%s/queries.jsonl", g_dir);
    write_file(in, input, strlen(input), "wb");
    snprintf(args, sizeof args, "analyze --model '%s' --device cpu %s < '%s' 2>/dev/null",
             g_model, opts, in);
    *out = malloc(OUT_MAX);
    ck_assert_ptr_nonnull(*out);
    return run_gomoku(args, NULL, CAPTURE_OUT, *out, OUT_MAX);
}

/* The answers in out whose "id" is the JSON text id: how many; the last
 * one copied into line. Every line of out must be one JSON object. */
static int answers_for(const char *out, const char *id, char *line, size_t len)
{
    int count = 0;
    for (const char *p = out; *p;) {
        const char *e = strchr(p, '\n');
        ck_assert_msg(e != NULL, "an answer without a newline: %s", p);
        char buf[65536], why[256];
        size_t n = (size_t)(e - p);
        ck_assert_uint_lt(n, sizeof buf);
        memcpy(buf, p, n);
        buf[n] = '\0';
        ck_assert_msg(json_valid(buf, why, sizeof why), "not JSON (%s): %s", why, buf);
        sj_val_t v;
        ck_assert_msg(sj_get(buf, n, "id", &v), "an answer without id: %s", buf);
        if (v.n == strlen(id) && memcmp(v.p, id, v.n) == 0) {
            count++;
            snprintf(line, len, "%s", buf);
        }
        p = e + 1;
    }
    return count;
}

static long field_int(const char *line, const char *key)
{
    sj_val_t v;
    long x;
    ck_assert_msg(sj_get(line, strlen(line), key, &v) && sj_int(&v, -1000000000, 1000000000, &x),
                  "no integer %s in %s", key, line);
    return x;
}

static const char *field_str(const char *line, const char *key, char *buf, size_t len)
{
    sj_val_t v;
    if (!sj_get(line, strlen(line), key, &v) || !sj_str(&v, buf, len))
        buf[0] = '\0';
    return buf;
}

/* The "xy" of each candidate of an answer into moves (size board); how many. */
static int candidate_moves(const char *line, int size, int *moves, int max)
{
    sj_val_t cands, c, xy;
    ck_assert_msg(sj_get(line, strlen(line), "candidates", &cands) && cands.kind == SJ_ARR,
                  "no candidates in %s", line);
    const char *pos = NULL;
    int n = 0;
    while (n < max && sj_next(&cands, &pos, NULL, &c)) {
        char s[16];
        ck_assert(sj_get(c.p, c.n, "xy", &xy) && sj_str(&xy, s, sizeof s));
        ck_assert_msg(move_parse(s, size, &moves[n]), "candidate %s off the board", s);
        n++;
    }
    return n;
}

/* Query i: a board of 9..15, i % 9 stones (at most 4 a side: no five). */
static int query_position(int i, int *size, int *moves)
{
    *size = 9 + i % 7;
    int k = i % 9, n = 0;
    for (int j = 0; n < k; j++) {
        int mv = ((i * 7 + j * 5) % *size) * *size + (i / 3 + j * 3) % *size, dup = 0;
        for (int t = 0; t < n; t++)
            dup |= moves[t] == mv;
        if (!dup)
            moves[n++] = mv;
    }
    return n;
}

START_TEST(test_concurrent_queries)
{
    enum { NQ = 100, BAD = 50 };
    size_t cap = 1 << 20, len = 0;
    char *in = malloc(cap);
    ck_assert_ptr_nonnull(in);
    for (int i = 0; i < NQ; i++) {
        int size, moves[16], n = query_position(i, &size, moves);
        len += (size_t)snprintf(in + len, cap - len, "{\"id\":\"q%d\",\"size\":%d,\"moves\":[", i,
                                size);
        for (int j = 0; j < n; j++)
            len += (size_t)snprintf(in + len, cap - len, "%s\"%d,%d\"", j ? "," : "",
                                    moves[j] % size, moves[j] / size);
        len += (size_t)snprintf(in + len, cap - len, "],\"visits\":%d,\"candidates\":3}\n",
                                8 + i % 5);
        if (i == BAD)
            len += (size_t)snprintf(in + len, cap - len,
                                    "{\"id\":\"bad\",\"moves\":[\"h8\",\"h8\"]}\n");
    }
    char *out;
    ck_assert_int_eq(analyze("--parallel 4", in, &out), 0);
    char line[65536], id[16], side[16];
    for (int i = 0; i < NQ; i++) {
        int size, moves[16], n = query_position(i, &size, moves);
        snprintf(id, sizeof id, "\"q%d\"", i);
        ck_assert_msg(answers_for(out, id, line, sizeof line) == 1, "%s not answered once", id);
        ck_assert_msg(!strstr(line, "\"error\""), "%s: %s", id, line);
        ck_assert_int_eq(field_int(line, "size"), size);
        ck_assert_int_eq(field_int(line, "stones"), n);
        ck_assert_str_eq(field_str(line, "to_move", side, sizeof side), n % 2 ? "white" : "black");
        int cand[8], nc = candidate_moves(line, size, cand, 8);
        ck_assert_msg(nc >= 1 && nc <= 3, "%s: %d candidates", id, nc);
        for (int c = 0; c < nc; c++)
            for (int j = 0; j < n; j++)
                ck_assert_msg(cand[c] != moves[j], "%s proposes a taken point: %s", id, line);
    }
    ck_assert_int_eq(answers_for(out, "\"bad\"", line, sizeof line), 1);
    ck_assert_msg(strstr(line, "taken"), "%s", line);
    free(out);
    free(in);
}
END_TEST

/* One line each; the answer's id (JSON text) and a piece of its error. */
static const struct { const char *query, *id, *error; } bad_queries[] = {
    {"not json", "null", "bad JSON"},
    {"[1,2]", "null", "a query is a JSON object"},
    {"{\"moves\":[]}", "null", "the query has no id"},
    {"{\"id\":[1]}", "null", "id must be"},
    {"{\"id\":\"b1\",\"moves\":[\"z99\"]}", "\"b1\"", "moves[0] is not a point"},
    {"{\"id\":\"b2\",\"moves\":\"h8\"}", "\"b2\"", "moves must be an array"},
    {"{\"id\":\"b3\",\"moves\":[\"h8\",\"h8\"]}", "\"b3\"", "taken"},
    {"{\"id\":\"b4\",\"visits\":0}", "\"b4\"", "visits must be"},
    {"{\"id\":\"b5\",\"visits\":1e999}", "\"b5\"", "visits must be"},
    {"{\"id\":\"b6\",\"time_ms\":-5}", "\"b6\"", "time_ms must be"},
    {"{\"id\":\"b7\",\"candidates\":65}", "\"b7\"", "candidates must be"},
    {"{\"id\":\"b8\",\"size\":16}", "\"b8\"", "size must be an integer from 5 to 15"},
    {"{\"id\":\"b9\",\"rule\":\"caro\"}", "\"b9\"", "rule must be"},
    {"{\"id\":\"b10\",\"psq\":\"/nonexistent/x.psq\"}", "\"b10\"", "/nonexistent/x.psq"},
    {"{\"id\":\"b11\",\"moves\":[\"h8\"],\"psq\":\"x.psq\"}", "\"b11\"", "not both"},
    {"{\"id\":\"b12\",\"colour\":\"black\"}", "\"b12\"", "unknown field"},
    {"{\"id\":\"b13\",\"visits\":5,\"visits\":6}", "\"b13\"", "repeated field"},
    {"{\"id\":\"b14\",\"action\":\"fly\"}", "\"b14\"", "action must be"},
    {"{\"id\":\"b15\",\"action\":\"terminate\"}", "\"b15\"", "terminate_id"},
    {"{\"id\":\"b16\",\"moves\":[\"a1\",\"a3\",\"b1\",\"b3\",\"c1\",\"c3\",\"d1\",\"d3\",\"e1\"]}",
     "\"b16\"", "the game is over (black won)"},
    {"{\"id\":\"b17\",\"visits\":NaN}", "null", "bad JSON"},
    {"{\"id\":\"b18\",\"size\":9,\"moves\":[\"j10\"]}", "\"b18\"", "not a point of the 9x9"},
    {"{\"id\":\"b19\",\"rule\":\"renju\",\"moves\":[\"h8\",\"a1\",\"i8\",\"a3\",\"j9\",\"a5\","
     "\"j10\",\"a7\",\"j8\"]}", "\"b19\"", "forbidden"},
    {"{\"id\":\"b20\",\"visits\":3.5}", "\"b20\"", "visits must be"},
    {"{\"id\":\"b21\",\"time_ms\":1e300}", "\"b21\"", "time_ms must be"},
};

START_TEST(test_bad_queries)
{
    size_t cap = 1 << 20, len = 0;
    char *in = malloc(cap), psq[600];
    ck_assert_ptr_nonnull(in);
    snprintf(psq, sizeof psq, "%s/garbage.psq", g_dir);
    const char *bad_psq = "Piskvork 15x15, 11:11, 0\n16,1,0\n";   /* off the board */
    write_file(psq, bad_psq, strlen(bad_psq), "wb");
    int nbad = (int)(sizeof bad_queries / sizeof bad_queries[0]);
    for (int i = 0; i < nbad; i++)
        len += (size_t)snprintf(in + len, cap - len, "%s\n", bad_queries[i].query);
    len += (size_t)snprintf(in + len, cap - len, "{\"id\":\"g1\",\"psq\":\"%s\"}\n", psq);
    memset(in + len, ' ', 70000);   /* a line too long for a query */
    len += 70000;
    len += (size_t)snprintf(in + len, cap - len, "\n\n{\"id\":\"ok\",\"visits\":5}\n");
    char *out;
    ck_assert_int_eq(analyze("", in, &out), 0);
    char line[65536], exp[128];
    int nnull = 0;
    for (int i = 0; i < nbad; i++) {
        if (strcmp(bad_queries[i].id, "null") == 0) {
            nnull++;
            continue;
        }
        ck_assert_msg(answers_for(out, bad_queries[i].id, line, sizeof line) == 1,
                      "%s: not answered once", bad_queries[i].query);
        ck_assert_msg(strstr(line, "\"error\"") && strstr(line, bad_queries[i].error),
                      "%s: answered %s, not '%s'", bad_queries[i].query, line,
                      bad_queries[i].error);
    }
    /* the nameless ones and the long line: one answer each */
    ck_assert_int_eq(answers_for(out, "null", line, sizeof line), nnull + 1);
    ck_assert_msg(strstr(line, "longer than 65536 bytes"), "%s", line);
    for (int i = 0; i < nbad; i++)
        if (strcmp(bad_queries[i].id, "null") == 0) {
            snprintf(exp, sizeof exp, "{\"id\":null,\"error\":\"%s", bad_queries[i].error);
            ck_assert_msg(strstr(out, exp), "%s: no answer '%s'", bad_queries[i].query, exp);
        }
    ck_assert_int_eq(answers_for(out, "\"g1\"", line, sizeof line), 1);
    ck_assert_msg(strstr(line, "garbage.psq") && strstr(line, "\"error\""), "%s", line);
    ck_assert_int_eq(answers_for(out, "\"ok\"", line, sizeof line), 1);
    ck_assert_msg(!strstr(line, "\"error\"") && field_int(line, "visits") >= 1, "%s", line);
    free(out);
    free(in);
}
END_TEST

START_TEST(test_proven)
{
    /* black's open four h8..k8 (white's stones far away): black to move
     * wins at g8 or l8; with white to move, white is lost */
    char psq[600], in[2048];
    snprintf(psq, sizeof psq, "%s/four.psq", g_dir);
    const char *game = "Piskvork 15x15, 11:11, 0\n8,8,0\n1,1,0\n9,8,0\n1,3,0\n10,8,0\n1,5,0\n"
                       "11,8,0\n";
    write_file(psq, game, strlen(game), "wb");
    snprintf(in, sizeof in,
             "{\"id\":\"win\",\"moves\":[\"h8\",\"a1\",\"i8\",\"a3\",\"j8\",\"a5\",\"k8\",\"a7\"],"
             "\"visits\":50}\n"
             "{\"id\":\"loss\",\"psq\":\"%s\",\"visits\":50}\n", psq);
    char *out, line[65536], s[16];
    ck_assert_int_eq(analyze("", in, &out), 0);
    ck_assert_int_eq(answers_for(out, "\"win\"", line, sizeof line), 1);
    ck_assert_str_eq(field_str(line, "proven", s, sizeof s), "win");
    ck_assert_str_eq(field_str(line, "to_move", s, sizeof s), "black");
    ck_assert_msg(strstr(line, "\"value\":{\"win\":1.0000,\"draw\":0.0000,\"loss\":0.0000}"),
                  "%s", line);
    int cand[8], nc = candidate_moves(line, 15, cand, 8);
    ck_assert_int_ge(nc, 1);
    char first[16];
    move_format_alpha(cand[0], 15, first, sizeof first);
    ck_assert_msg(strcmp(first, "g8") == 0 || strcmp(first, "l8") == 0, "best %s: %s", first,
                  line);
    ck_assert_msg(strstr(line, "\"pv\":[\"g8\"") || strstr(line, "\"pv\":[\"l8\""), "%s", line);
    ck_assert_msg(strstr(line, "\"proven\":\"win\"},") || strstr(line, "\"proven\":\"win\"}]"),
                  "the winning candidate is not marked: %s", line);
    ck_assert_int_eq(answers_for(out, "\"loss\"", line, sizeof line), 1);
    ck_assert_str_eq(field_str(line, "proven", s, sizeof s), "loss");
    ck_assert_str_eq(field_str(line, "to_move", s, sizeof s), "white");
    ck_assert_int_eq(field_int(line, "stones"), 7);
    free(out);
}
END_TEST

START_TEST(test_terminate_and_version)
{
    /* one worker: "long" searches (for ten minutes unless stopped), "queued"
     * waits behind it; both are terminated, each answered once */
    const char *in =
        "{\"id\":\"long\",\"time_ms\":600000}\n"
        "{\"id\":\"queued\",\"visits\":10}\n"
        "{\"id\":\"t1\",\"action\":\"terminate\",\"terminate_id\":\"queued\"}\n"
        "{\"id\":\"t2\",\"action\":\"terminate\",\"terminate_id\":\"long\"}\n"
        "{\"id\":7,\"action\":\"query_version\"}\n";
    char *out, line[65536], s[64];
    ck_assert_int_eq(analyze("--parallel 1 --tree-mb 256", in, &out), 0);
    ck_assert_int_eq(answers_for(out, "\"queued\"", line, sizeof line), 1);
    ck_assert_str_eq(field_str(line, "error", s, sizeof s), "terminated");
    ck_assert_int_eq(answers_for(out, "\"long\"", line, sizeof line), 1);
    ck_assert_msg(strstr(line, "\"terminated\":true") || strstr(line, "\"error\":\"terminated\""),
                  "%s", line);
    ck_assert_int_eq(answers_for(out, "\"t1\"", line, sizeof line), 1);
    ck_assert_int_eq(field_int(line, "found"), 1);
    ck_assert_int_eq(answers_for(out, "\"t2\"", line, sizeof line), 1);
    ck_assert_int_eq(field_int(line, "found"), 1);
    ck_assert_int_eq(answers_for(out, "7", line, sizeof line), 1);
    ck_assert_str_eq(field_str(line, "version", s, sizeof s), "0.1.0");
    free(out);
}
END_TEST

START_TEST(test_command_errors)
{
    expect_gomoku(2, "--model is required", "analyze --visits 5 </dev/null");
    expect_gomoku(2, "--visits 0 needs --time", "analyze --model '%s' --visits 0 </dev/null",
                  g_model);
    expect_gomoku(2, "--parallel", "analyze --model '%s' --parallel 0 </dev/null", g_model);
    expect_gomoku(1, "no-such.gzm", "analyze --model '%s/no-such.gzm' </dev/null", g_dir);
    expect_gomoku(1, "up to 15x15", "analyze --model '%s' --size 19 </dev/null", g_model);
    /* the model's defaults, and nothing to answer on empty input */
    expect_gomoku(0, "rule freestyle, 15x15 by default", "analyze --model '%s' </dev/null",
                  g_model);
    expect_gomoku(0, "analyze", "help settings");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("analyze");
    TCase *tc = ADD_CASE(s, "analyze", 300, test_concurrent_queries, test_bad_queries,
                         test_proven, test_terminate_and_version, test_command_errors);
    tcase_add_checked_fixture(tc, setup, teardown);
    return run_suite(s);
}
