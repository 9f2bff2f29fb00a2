/* gomoku records dump|stats|psq: read game record files (.gzr).
 *
 * Bad frames are reported one line each on stderr ("FILE: bad frame at
 * byte N: why"); reading goes on with the next frame, and the exit status
 * is 1 if any frame was bad or any file could not be read. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmds.h"
#include "engine/board.h"
#include "engine/gamefile.h"
#include "engine/record.h"
#include "selfplay/args.h"
#include "util/util.h"

static const cmd_help_t help = {
    .cmd = "records",
    .by = BY_RECORDS,
    .usage = "gomoku records dump FILE | stats FILE... | psq FILE OUTDIR",
    .summary =
        "Read game record files (.gzr: frames of zlib-compressed game records).\n"
        "  dump FILE        one header line per game, then one line per ply: index,\n"
        "                   move as x,y and h8, full/cheap search, root value (side to\n"
        "                   move), total root visits and the most visited points\n"
        "  stats FILE...    games, positions, results by colour, average length,\n"
        "                   full-search fraction, bad frames: per file and in total\n"
        "  psq FILE OUTDIR  one Piskvork .psq file per game (OUTDIR/game_000001.psq, ...)\n"
        "A corrupt or truncated frame is reported on stderr and skipped; the exit\n"
        "status is then 1.",
};

typedef struct file_stats {
    uint64_t games, plies, full, resigned, openings, bad;
    uint64_t results[4];   /* by result_t */
} file_stats_t;

/* Calls fn for each good record of path (stopping when fn returns nonzero);
 * returns 0, 1 if a frame was bad (each reported on stderr) or fn failed,
 * 2 if the file could not be opened. */
typedef int (*record_fn)(void *user, const game_record_t *r, uint64_t index);

static int read_file(const char *path, record_fn fn, void *user, uint64_t *nbad)
{
    char err[256];
    record_reader_t *fr = record_reader_open(path, err, sizeof err);
    if (!fr) {
        fprintf(stderr, "gomoku records: %s\n", err);
        return 2;
    }
    game_record_t r;
    record_init(&r);
    uint64_t index = 0, bad = 0;
    int rc = 0, st;
    while ((st = record_reader_next(fr, &r, err, sizeof err)) != 0) {
        if (st < 0) {
            fprintf(stderr, "%s: %s\n", path, err);
            bad++;
            continue;
        }
        index++;
        if (fn(user, &r, index) != 0) {
            rc = 1;
            break;
        }
    }
    record_free(&r);
    record_reader_free(fr);
    if (nbad)
        *nbad = bad;
    return (rc || bad) ? 1 : 0;
}

static void format_flags(unsigned flags, char *buf, size_t len)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{RECORD_FLAG_RESIGNED, "resigned"},
                 {RECORD_FLAG_NO_RESIGN, "no_resign"},
                 {RECORD_FLAG_OPENING, "opening"}};
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((flags & names[i].bit) && n < len)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", names[i].name);
    if (!n)
        snprintf(buf, len, "none");
}

typedef struct dump_ctx {
    int top;
} dump_ctx_t;

static int dump_record(void *user, const game_record_t *r, uint64_t index)
{
    const dump_ctx_t *d = user;
    char flags[64], xy[16], alpha[16];
    format_flags(r->flags, flags, sizeof flags);
    char id[48] = "";
    if (r->worker_id != 0) /* a game id (record version 2): worker id in hex, sequence */
        snprintf(id, sizeof id, ", id %016llx:%llu", (unsigned long long)r->worker_id,
                 (unsigned long long)r->game_seq);
    printf("game %llu: rule %s, size %d, result %s, gen %" PRIu64 ", plies %u, flags %s%s\n",
           (unsigned long long)index, rule_name((rule_t)r->rule), r->size,
           result_str((result_t)r->result), r->model_gen, (unsigned)r->nplies, flags, id);
    record_visit_t top[BOARD_CELLS];
    bool opening = (r->flags & RECORD_FLAG_OPENING) != 0;
    for (uint32_t i = 0; i < r->nplies; i++) {
        const record_ply_t *p = &r->plies[i];
        const record_visit_t *v = &r->visits[p->visit_off];
        uint64_t total = 0;
        for (unsigned k = 0; k < p->nvisits; k++)
            total += v[k].count;
        /* Partial selection sort: the d->top most visited, ties by point. */
        int n = p->nvisits;
        memcpy(top, v, (size_t)n * sizeof *v);
        int shown = n < d->top ? n : d->top;
        for (int a = 0; a < shown; a++) {
            int best = a;
            for (int b = a + 1; b < n; b++)
                if (top[b].count > top[best].count ||
                    (top[b].count == top[best].count && top[b].move < top[best].move))
                    best = b;
            record_visit_t t = top[a];
            top[a] = top[best];
            top[best] = t;
        }
        move_format_xy(p->move, r->size, xy, sizeof xy);
        move_format_alpha(p->move, r->size, alpha, sizeof alpha);
        /* a random opening's plies: before the first searched one */
        opening = opening && !p->full && p->nvisits == 0;
        printf("  %3u %-5s %-4s %-5s value %+.3f visits %llu", (unsigned)i + 1, xy, alpha,
               opening ? "opening" : p->full ? "full" : "cheap", (double)p->root_value,
               (unsigned long long)total);
        for (int a = 0; a < shown; a++) {
            move_format_alpha(top[a].move, r->size, alpha, sizeof alpha);
            printf(" %s:%u", alpha, (unsigned)top[a].count);
        }
        printf("\n");
    }
    return 0;
}

static int stats_record(void *user, const game_record_t *r, uint64_t index)
{
    (void)index;
    file_stats_t *s = user;
    s->games++;
    s->plies += r->nplies;
    for (uint32_t i = 0; i < r->nplies; i++)
        s->full += r->plies[i].full;
    if (r->flags & RECORD_FLAG_RESIGNED)
        s->resigned++;
    if (r->flags & RECORD_FLAG_OPENING)
        s->openings++;
    s->results[r->result & 3]++;
    return 0;
}

static void print_stats(const char *name, const file_stats_t *s)
{
    printf("%s: games %llu, positions %llu, full %.1f%%, black %llu, white %llu, draw %llu, "
           "unfinished %llu, resigned %llu, random openings %llu, avg length %.1f, "
           "bad frames %llu\n",
           name, (unsigned long long)s->games, (unsigned long long)s->plies,
           s->plies ? 100.0 * (double)s->full / (double)s->plies : 0.0,
           (unsigned long long)s->results[RESULT_BLACK],
           (unsigned long long)s->results[RESULT_WHITE],
           (unsigned long long)s->results[RESULT_DRAW],
           (unsigned long long)s->results[RESULT_NONE], (unsigned long long)s->resigned,
           (unsigned long long)s->openings,
           s->games ? (double)s->plies / (double)s->games : 0.0, (unsigned long long)s->bad);
}

typedef struct psq_ctx {
    const char *dir;
    uint64_t written;
} psq_ctx_t;

/* One Piskvork .psq per game (engine/gamefile.h), both players named after
 * the model generation that played it. */
static int psq_record(void *user, const game_record_t *r, uint64_t index)
{
    psq_ctx_t *c = user;
    char path[4096], name[64], err[4400];
    snprintf(path, sizeof path, "%s/game_%06llu.psq", c->dir, (unsigned long long)index);
    snprintf(name, sizeof name, "gomoku-zero gen %" PRIu64, r->model_gen);
    int moves[BOARD_CELLS];
    for (uint32_t i = 0; i < r->nplies; i++)
        moves[i] = r->plies[i].move;
    if (psq_save(path, r->size, moves, NULL, (int)r->nplies, name, name, err, sizeof err) != 0) {
        fprintf(stderr, "gomoku records: %s\n", err);
        return -1;
    }
    c->written++;
    return 0;
}

int cmd_records(int argc, char **argv)
{
    int top;
    arg_spec_t specs[] = {
        ARG(S_TOP, &top),
    };
    const int nspecs = ARGS_COUNT(specs);
    char **pos = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *pos);
    if (!pos) {
        fprintf(stderr, "gomoku records: out of memory\n");
        return 1;
    }
    int npos = 0, rc;
    rc = args_parse(&help, specs, nspecs, argc, argv, pos, argc, &npos);
    if (rc != ARGS_OK) {
        rc = args_exit_status(rc);
        goto out_free_pos;
    }
    if (npos == 0) {
        rc = args_fail(&help, "missing action: dump, stats or psq");
        goto out_free_pos;
    }
    const char *action = pos[0];
    if (strcmp(action, "dump") == 0) {
        if (npos != 2) {
            rc = args_fail(&help, "dump wants one FILE, got %d arguments", npos - 1);
            goto out_free_pos;
        }
        dump_ctx_t d = {.top = top};
        rc = read_file(pos[1], dump_record, &d, NULL) ? 1 : 0;
    } else if (strcmp(action, "stats") == 0) {
        if (npos < 2) {
            rc = args_fail(&help, "stats wants at least one FILE");
            goto out_free_pos;
        }
        file_stats_t total = {0};
        rc = 0;
        for (int i = 1; i < npos; i++) {
            file_stats_t s = {0};
            int frc = read_file(pos[i], stats_record, &s, &s.bad);
            if (frc != 0)
                rc = 1;
            if (frc == 2)
                continue;
            print_stats(pos[i], &s);
            total.games += s.games;
            total.plies += s.plies;
            total.full += s.full;
            total.resigned += s.resigned;
            total.openings += s.openings;
            total.bad += s.bad;
            for (int k = 0; k < 4; k++)
                total.results[k] += s.results[k];
        }
        print_stats("total", &total);
    } else if (strcmp(action, "psq") == 0) {
        if (npos != 3) {
            rc = args_fail(&help, "psq wants FILE OUTDIR, got %d arguments", npos - 1);
            goto out_free_pos;
        }
        char err[4200];
        if (util_mkdir(pos[2], err, sizeof err) != 0) {
            fprintf(stderr, "gomoku records: %s\n", err);
            rc = 1;
            goto out_free_pos;
        }
        psq_ctx_t c = {.dir = pos[2]};
        int frc = read_file(pos[1], psq_record, &c, NULL);
        rc = frc ? 1 : 0;
        if (frc != 2)
            printf("%llu games written to %s\n", (unsigned long long)c.written, pos[2]);
    } else {
        rc = args_fail(&help, "unknown action '%s' (dump, stats or psq)", action);
    }
out_free_pos:
    free(pos);
    return rc;
}
