/* One copy of what the Check suites (tests/check_*.c) share: the suite
 * table and main(), the program under test ($GOMOKU_BIN) run with its
 * output captured, child processes, temporary directories and the files a
 * run writes. For tests only: helpers fail the running test through
 * ck_assert where a test cannot go on (no pipe, no temporary directory). */
#ifndef GZ_TESTS_TESTKIT_H
#define GZ_TESTS_TESTKIT_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/board.h"
#include "engine/bot.h"
#include "engine/record.h"
#include "engine/vcf.h"
#include "engine/vct.h"

/* ---- suites ---- */

/* Adds to S a test case NAME running TESTS (NULL-terminated) with Check's
 * time limit TIMEOUT_S seconds per test (0: none; < 0: Check's default).
 * Returns the case, owned by S, for fixtures. */
TCase *add_case(Suite *s, const char *name, double timeout_s, const TTest *const *tests);
#define ADD_CASE(s, name, timeout_s, ...) \
    add_case((s), (name), (timeout_s), (const TTest *const[]){__VA_ARGS__, NULL})

/* Runs every test of S (freed here), each in a fork unless CK_FORK=no;
 * returns main's exit status: 0 when all passed, 1 otherwise. */
int run_suite(Suite *s);

/* ---- the build under test ---- */

/* True when the suites run under ASan/UBSan (GOMOKU_ASAN set, not "0"). */
bool asan(void);
/* How much longer waits for child processes may be: 4 under ASan, else 1. */
double slow(void);
/* $GOMOKU_BIN (set by meson test); fails the test when unset. */
const char *bin(void);
/* Seconds on the monotonic clock. */
double now_s(void);

/* ---- child processes ---- */

/* Which of a child's output streams are captured. */
enum { CAPTURE_NONE = 0, CAPTURE_OUT = 1, CAPTURE_ERR = 2, CAPTURE_BOTH = 3 };

/* Runs `$GOMOKU_BIN ARGS` through /bin/sh (ARGS is shell text: quote what
 * needs it). Its stdin is INPUT as a printf(1) format (so "\\n" is a
 * newline), or /dev/null when INPUT is NULL. OUT (OUTLEN > 0) receives the
 * streams WHAT selects, NUL-terminated and cut to OUTLEN - 1 bytes; the
 * other stream is dropped, unless ARGS redirects it (ARGS' redirections
 * come last, so they win). Returns the exit status; -1 when a signal
 * ended it. */
int run_gomoku(const char *args, const char *input, int what, char *out, size_t outlen);

/* Starts ARGV (ARGV[0] a path) with the streams WHAT selects on a pipe
 * whose read end goes to *FD (the caller closes it); the other stream is
 * inherited. Returns the pid. */
pid_t spawn_piped(char *const argv[], int what, int *fd);

/* spawn_piped, then reads the pipe to its end into OUT (NUL-terminated,
 * cut to OUTLEN - 1 bytes) and reaps the child. A child still writing
 * after TIMEOUT_S seconds gets SIGTERM, and SIGKILL 30 s later. Returns
 * the exit status; -1 when a signal ended it. */
int run_argv(char *const argv[], int what, char *out, size_t outlen, double timeout_s);

/* Starts ARGV (ARGV[0] looked up in PATH) with stdout and stderr appended
 * to LOGPATH; the child is killed when the calling thread dies. */
pid_t spawn_logged(char *const argv[], const char *logpath);

/* Waits up to TIMEOUT_S * slow() seconds for PID to end. Returns its exit
 * status, 128 + the signal that ended it, or -1 after killing it (SIGKILL)
 * at the time limit. */
int wait_exit(pid_t pid, double timeout_s);

/* ---- files ---- */

/* Creates a fresh directory under $TMPDIR (else /tmp) into OUT. */
void make_tmpdir(char *out, size_t len);
/* make_tmpdir into DIR, and into PATH the name FMT (printf) in it, not
 * created: the usual start of a test that writes files. */
void make_tmppath(char *dir, size_t dirlen, char *path, size_t pathlen, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Creates a fresh empty file under $TMPDIR (else /tmp) into OUT. */
void make_tmpfile(char *out, size_t len);
/* rm -rf PATH; fails the test when that fails. */
void remove_tree(const char *path);
/* The whole file as a NUL-terminated string (malloc'd; the caller frees),
 * or NULL when it cannot be opened. *LEN, when LEN is not NULL, gets its
 * size (which may be more than strlen for binary files). */
char *slurp_len(const char *path, size_t *len);
#define slurp(path) slurp_len((path), NULL)
/* slurp, failing the test when PATH cannot be read. */
char *must_slurp(const char *path);
/* True when the file PATH exists and contains NEEDLE. */
bool file_contains(const char *path, const char *needle);
/* Writes LEN bytes of BUF to PATH (MODE as for fopen: "wb", "ab"); fails
 * the test when that fails. */
void write_file(const char *path, const void *buf, size_t len, const char *mode);

/* ---- positions ---- */

/* A position from a diagram: rows separated by newlines, one character a
 * point ('X' black, 'O' white, anything else empty), as many rows as
 * columns (the board size, BOARD_MIN..BOARD_MAX). Cells, history (the
 * stones in reading order: only the set matters), hash and side to move
 * are set directly, so any stone counts can be written down. */
void board_from_diagram(board_t *b, rule_t rule, int to_move, const char *diagram);

/* Plays on B black's four stones in a row from (X, Y) rightwards, white
 * answering at (0, 0), (0, 2), (0, 4), (0, 6): black to move with a five
 * point at each end. */
void play_black_four(board_t *b, int x, int y);

/* A random position on a SIZE board under RULE for the solvers' tests:
 * up to NSTONES stones, clustered away from the edge (more threats), no
 * five, the side to move as it falls. */
void random_clustered(board_t *b, int size, rule_t rule, int nstones, uint64_t *rng);

/* A threat solver with its limits, for check_defences: the VCF solver
 * when VCF is set, else the VCT one. */
typedef struct threat_check {
    vcf_t *vcf;
    const vcf_limits_t *vcf_lim;
    vct_t *vct;
    const vct_limits_t *vct_lim;
} threat_check_t;

/* The listed defences MOVES[0..N) of B are exactly its legal moves after
 * which T's solver proves the opponent has no threat (vcf_solve_reply's
 * VCF_NONE, vct_solve_reply's VCT_NONE): every legal move is tried. */
void check_defences(const board_t *b, const int *moves, int n, const threat_check_t *t);

/* bot:NAME is bot KIND (parsed, named and listed in BOT_LIST); with both
 * sides played by it from B (a copy), the game ends within PLIES moves
 * with RESULT. */
void check_bot_plays(const char *name, bot_kind_t kind, board_t b, int plies, result_t result);

/* ---- run directories (gomoku train) ---- */

/* The number after "key": in the JSON text S (first occurrence); -1 when
 * absent or S is NULL. */
long long json_num(const char *s, const char *key);
/* json_num of RUN/status.json; -1 when absent. */
long long status_num(const char *run, const char *key);
/* Polls RUN/status.json until KEY is at least V: true, or false after
 * TIMEOUT_S * slow() seconds. */
bool wait_status(const char *run, const char *key, long long v, double timeout_s);

/* ---- the program's answers ---- */

/* Runs `$GOMOKU_BIN ARGS` (ARGS printf'd from FMT: shell text) with stdout
 * and stderr captured together; fails the test unless it exits with
 * STATUS and, when NEEDLE is not NULL, the output holds NEEDLE (the
 * message names the command and shows the output). */
void expect_gomoku(int status, const char *needle, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* SIGTERM to PID, then fails the test unless it exits 0 within
 * TIMEOUT_S * slow() seconds (a clean stop). */
void stop_child(pid_t pid, double timeout_s);

/* ---- game records ---- */

/* A game on an empty SIZE x SIZE freestyle board (model generation 3):
 * black plays the top row, white the row under it, black wins with five.
 * Each ply records 30 visits on its move and 10 on a point two rows lower;
 * ply 1 is a cheap search, the others full. */
void game_in_a_row(game_record_t *r, int size);
/* Reads every frame of the files in DIR whose names end in SUFFIX (".gzr"):
 * FN (when not NULL) gets each good record (a frame that decodes and
 * passes record_validate) and may fail the test. Returns the good ones;
 * *BAD (when not NULL) gets the others. Fails the test when DIR or one of
 * its files cannot be opened. */
long read_records(const char *dir, const char *suffix,
                  void (*fn)(void *user, const game_record_t *r), void *user, long *bad);
/* Files in DIR whose names end in SUFFIX; -1 when DIR cannot be opened. */
int count_files(const char *dir, const char *suffix);
/* ---- game ids: games sent against games stored ---- */

/* A game's id as workers log it (--games-log: "WID SEQ" lines, hex and
 * decimal) and records carry it. */
typedef struct game_id {
    uint64_t worker, seq;
} game_id_t;
/* A set of them: add, then game_ids_sort before game_ids_has. */
typedef struct game_ids {
    game_id_t *v;
    size_t n, cap;
} game_ids_t;

/* Adds the ids of the good records in the files of DIR whose names end
 * in SUFFIX; nothing when DIR does not exist. */
void game_ids_add_dir(game_ids_t *g, const char *dir, const char *suffix);
void game_ids_sort(game_ids_t *g);
/* Fails the test when an id of the sorted G is there twice (worker 0's,
 * from games recorded without a worker, excepted when ANON_OK). */
void check_ids_once(const game_ids_t *g, bool anon_ok);
bool game_ids_has(const game_ids_t *g, uint64_t worker, uint64_t seq);
void game_ids_free(game_ids_t *g);
/* Every game in the games log LOG is in A or (not NULL) B; fails the test
 * naming the first that is not. Returns the games in LOG. */
size_t check_sent_in(const char *log, const game_ids_t *a, const game_ids_t *b);

/* ---- JSON ---- */

/* Whether S is one whole, valid JSON text (RFC 8259); when not, WHY says
 * what and at which byte. */
bool json_valid(const char *s, char *why, size_t whylen);

#endif
