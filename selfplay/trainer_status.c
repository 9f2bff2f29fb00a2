/* The trainer's reports: status.json, the progress line, metrics.csv. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/frame.h"
#include "engine/record.h"
#include "util/util.h"
#include "selfplay/trainer_int.h"
#include "selfplay/wire.h"

/* ---- status ----------------------------------------------------------- */

int trainer_workers_running(const trainer_t *t)
{
    int n = 0;
    for (int i = 0; i < t->nw; i++)
        n += t->w[i].state == W_RUNNING;
    return n;
}

static void update_rates(trainer_t *t, double now)
{
    snap_t s = {now, t->session_games, t->session_positions, t->session_samples};
    if (t->nsnaps == RATE_SNAPS) {
        memmove(t->snaps, t->snaps + 1, (RATE_SNAPS - 1) * sizeof(snap_t));
        t->nsnaps--;
    }
    t->snaps[t->nsnaps++] = s;
    const snap_t *a = &t->snaps[0];
    double dt = now - a->t;
    if (dt > 0.5) {
        t->rate_games = (double)(s.games - a->games) / dt;
        t->rate_positions = (double)(s.positions - a->positions) / dt;
        t->rate_samples = (double)(s.samples - a->samples) / dt;
    }
}

/* v as a JSON number, or null when it is not finite (JSON has no NaN). */
static const char *json_num(double v, char buf[32])
{
    if (!isfinite(v))
        return "null";
    snprintf(buf, 32, "%.6g", v);
    return buf;
}

static void write_status(trainer_t *t)
{
    char esc[8192];
    static char buf[65536];
    size_t cap = sizeof buf, n = 0;
#define PUT(...) do { int k_ = snprintf(buf + n, cap - n, __VA_ARGS__); \
                      if (k_ > 0) n = n + (size_t)k_ < cap ? n + (size_t)k_ : cap - 1; } while (0)
    PUT("{\n  \"state\": \"%s\",\n  \"pid\": %ld,\n  \"step\": %" PRIu64 ",\n", t->state,
        (long)getpid(), t->step);
    PUT("  \"target_step\": %" PRIu64 ",\n  \"generation\": %" PRIu64 ",\n", t->target,
        t->generation);
    PUT("  \"model\": %s,\n", util_json_str(t->model_path, esc, sizeof esc));
    PUT("  \"device\": \"%s\",\n", t->device);
    char n1[32], n2[32], n3[32], n4[32];
    PUT("  \"losses\": {\"policy\": %s, \"value\": %s, \"l2\": %s, \"total\": %s},\n",
        json_num(t->last.policy, n1), json_num(t->last.value, n2), json_num(t->last.l2, n3),
        json_num(t->last.total, n4));
    PUT("  \"nonfinite_steps_skipped\": %" PRIu64 ",\n", t->nonfinite_skipped);
    PUT("  \"games_dir_writable\": %s,\n  \"games_dropped\": %" PRIu64 ",\n",
        t->disk_err[0] ? "false" : "true", t->games_dropped);
    PUT("  \"lr\": %.6g,\n", nn_schedule_lr(&t->sched, t->step));
    PUT("  \"games\": %" PRIu64 ",\n  \"positions\": %" PRIu64 ",\n", t->games, t->positions);
    PUT("  \"window_positions\": %" PRIu64 ",\n  \"window_games\": %" PRIu64 ",\n",
        replay_positions(t->replay), replay_games(t->replay));
    PUT("  \"games_per_s\": %s,\n  \"positions_per_s\": %s,\n  \"samples_per_s\": %s,\n",
        json_num(t->rate_games, n1), json_num(t->rate_positions, n2),
        json_num(t->rate_samples, n3));
    PUT("  \"ratio\": %.3g,\n  \"rejected_frames\": %" PRIu64 ",\n", t->cfg.ratio, t->rejected);
    PUT("  \"partial_frames_dropped\": %" PRIu64 ",\n  \"bad_frames_on_load\": %" PRIu64 ",\n",
        t->partial, t->load_bad);
    PUT("  \"elapsed_s\": %.1f,\n  \"updated\": %ld,\n  \"workers\": [", util_now_ms() * 1e-3 - t->t_start,
        (long)time(NULL));
    for (int i = 0; i < t->nw; i++) {
        const wslot_t *w = &t->w[i];
        PUT("%s\n    {\"id\": %d, \"pid\": %ld, \"state\": \"%s\", \"stalls\": %" PRIu64 ", \"restarts\": %" PRIu64
            ", \"games\": %" PRIu64 ", \"bad_frames\": %" PRIu64 ", \"partial_frames\": %"
            PRIu64 "}", i ? "," : "", i, (long)w->pid, trainer_wstate_name(w->state), w->stalls, w->restarts,
            w->games, w->bad_frames, w->partial);
    }
    PUT("\n  ]");
    n += trainer_broker_status(t, buf + n, cap - n);
    PUT("\n}\n");
#undef PUT
    char err[512];
    if (util_write_atomic(trainer_path(t, "status.json"), buf, n, err, sizeof err) != 0)
        trainer_log(t, "%s", err);
}

void trainer_progress(trainer_t *t, int force)
{
    double now = util_now_ms() * 1e-3;
    if (!force && now - t->t_status < 1.0)
        return;
    t->t_status = now;
    update_rates(t, now);
    write_status(t);
    if (!force && !t->tty && now - t->t_progress < 10.0)
        return;
    t->t_progress = now;
    char tgt[32] = "";
    if (t->target)
        snprintf(tgt, sizeof tgt, "/%" PRIu64, t->target);
    fprintf(stderr, "%sstep %" PRIu64 "%s  loss p %.3f v %.3f  games %" PRIu64
            " (%.2f/s)  pos %" PRIu64 "  %.0f samples/s  workers %d/%d  rejected %" PRIu64
            "  %s%s", t->tty ? "\r\033[K" : "", t->step, tgt, t->last.policy, t->last.value,
            t->games, t->rate_games, t->positions, t->rate_samples, trainer_workers_running(t), t->nw,
            t->rejected, t->state, t->tty ? "" : "\n");
    fflush(stderr);
}

void trainer_metrics_row(trainer_t *t)
{
    if (t->loss_n == 0)
        return;
    const char *p = trainer_path(t, "metrics.csv");
    struct stat st;
    int fresh = stat(p, &st) != 0 || st.st_size == 0;
    FILE *f = fopen(p, "ae");
    if (!f) {
        trainer_log(t, "cannot append to %s: %s", p, strerror(errno));
        return;
    }
    /* runs with extra policy outputs have two more columns (older runs' files
     * keep their header) */
    bool aux = t->cfg.policy_heads > 1;
    if (fresh)
        fprintf(f, "unix_time,step,generation,lr,loss_policy,loss_value,loss_l2,loss_total,"
                   "games,positions,games_per_s,samples_per_s,rejected_frames%s\n",
                aux ? ",loss_opp_policy,loss_soft_policy" : "");
    double k = 1.0 / t->loss_n;
    fprintf(f, "%ld,%" PRIu64 ",%" PRIu64 ",%.6g,%.5f,%.5f,%.5f,%.5f,%" PRIu64 ",%" PRIu64
            ",%.3f,%.1f,%" PRIu64, (long)time(NULL), t->step, t->generation,
            nn_schedule_lr(&t->sched, t->step), t->loss_sum[0] * k, t->loss_sum[1] * k,
            t->loss_sum[2] * k, t->loss_sum[3] * k, t->games, t->positions, t->rate_games,
            t->rate_samples, t->rejected);
    if (aux)
        fprintf(f, ",%.5f,%.5f", t->loss_sum[4] * k, t->loss_sum[5] * k);
    fputc('\n', f);
    fclose(f);
    memset(t->loss_sum, 0, sizeof t->loss_sum);
    t->loss_n = 0;
}

