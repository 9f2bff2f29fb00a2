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

/* status.json, whole: the text grows as needed (never cut). When it cannot
 * be written (a full disk) the last good file stays, the progress line says
 * so, and the next second tries again. */
static void write_status(trainer_t *t)
{
    char esc[8192];
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) {
        snprintf(t->status_err, sizeof t->status_err, "out of memory");
        return;
    }
    double now = util_now_ms() * 1e-3;
    fprintf(f, "{\n  \"state\": \"%s\",\n  \"pid\": %ld,\n  \"step\": %" PRIu64 ",\n", t->state,
            (long)getpid(), t->step);
    fprintf(f, "  \"target_step\": %" PRIu64 ",\n  \"generation\": %" PRIu64 ",\n", t->target,
            t->generation);
    fprintf(f, "  \"model\": %s,\n", util_json_str(t->model_path, esc, sizeof esc));
    fprintf(f, "  \"device\": \"%s\",\n", t->device);
    char n1[32], n2[32], n3[32], n4[32];
    fprintf(f, "  \"losses\": {\"policy\": %s, \"value\": %s, \"l2\": %s, \"total\": %s},\n",
            json_num(t->last.policy, n1), json_num(t->last.value, n2), json_num(t->last.l2, n3),
            json_num(t->last.total, n4));
    fprintf(f, "  \"nonfinite_steps_skipped\": %" PRIu64 ",\n", t->nonfinite_skipped);
    fprintf(f, "  \"games_dir_writable\": %s,\n  \"games_dir_error\": %s,\n",
            t->disk_err[0] ? "false" : "true",
            t->disk_err[0] ? util_json_str(t->disk_err, esc, sizeof esc) : "null");
    fprintf(f, "  \"disk_full_s\": %.0f,\n  \"games_held\": %d,\n",
            t->disk_err[0] ? now - t->disk_since : 0.0, t->held_len > 0);
    fprintf(f, "  \"games_dropped\": %" PRIu64 ",\n  \"games_left_in_spools\": %" PRIu64 ",\n",
            t->games_dropped, t->games_deferred);
    fprintf(f, "  \"games_from_spools\": %" PRIu64 ",\n  \"duplicates_from_spools\": %" PRIu64
            ",\n", t->spool_games, t->spool_dups);
    fprintf(f, "  \"lr\": %.6g,\n", nn_schedule_lr(&t->sched, t->step));
    fprintf(f, "  \"games\": %" PRIu64 ",\n  \"positions\": %" PRIu64 ",\n", t->games,
            t->positions);
    fprintf(f, "  \"window_positions\": %" PRIu64 ",\n  \"window_games\": %" PRIu64 ",\n",
            replay_positions(t->replay), replay_games(t->replay));
    fprintf(f, "  \"games_per_s\": %s,\n  \"positions_per_s\": %s,\n  \"samples_per_s\": %s,\n",
            json_num(t->rate_games, n1), json_num(t->rate_positions, n2),
            json_num(t->rate_samples, n3));
    fprintf(f, "  \"ratio\": %.3g,\n  \"rejected_frames\": %" PRIu64 ",\n", t->cfg.ratio,
            t->rejected);
    fprintf(f, "  \"partial_frames_dropped\": %" PRIu64 ",\n  \"bad_frames_on_load\": %" PRIu64
            ",\n", t->partial, t->load_bad);
    fprintf(f, "  \"elapsed_s\": %.1f,\n  \"updated\": %ld,\n  \"workers\": [", now - t->t_start,
            (long)time(NULL));
    for (int i = 0; i < t->nw; i++) {
        const wslot_t *w = &t->w[i];
        fprintf(f, "%s\n    {\"id\": %d, \"pid\": %ld, \"state\": \"%s\", \"stalls\": %" PRIu64
                ", \"restarts\": %" PRIu64 ", \"games\": %" PRIu64 ", \"bad_frames\": %" PRIu64
                ", \"partial_frames\": %" PRIu64 ", \"duplicates\": %" PRIu64 "}", i ? "," : "", i,
                (long)w->pid, trainer_wstate_name(w->state), w->stalls, w->restarts, w->games,
                w->bad_frames, w->partial, w->duplicates);
    }
    fputs("\n  ]", f);
    trainer_broker_status(t, f);
    fputs("\n}\n", f);
    if (fclose(f) != 0 || !buf) {
        free(buf);
        snprintf(t->status_err, sizeof t->status_err, "out of memory");
        return;
    }
    char err[512];
    if (util_write_atomic(trainer_path(t, "status.json"), buf, n, err, sizeof err) != 0) {
        if (!t->status_err[0])
            trainer_log(t, "%s; the last status.json written stays (tried again every second)",
                        err);
        snprintf(t->status_err, sizeof t->status_err, "%s", err);
    } else if (t->status_err[0]) {
        trainer_log(t, "status.json written again");
        t->status_err[0] = '\0';
    }
    free(buf);
}

void trainer_progress(trainer_t *t, int force)
{
    double now = util_now_ms() * 1e-3;
    if (!force && now - t->t_status < 1.0)
        return;
    t->t_status = now;
    update_rates(t, now);
    int was_stale = t->status_err[0] != '\0';
    write_status(t);
    /* a change of the outage shows at once, not at the next 10 s line */
    int change = (t->disk_full != t->shown_full) || (was_stale != (t->status_err[0] != '\0'));
    t->shown_full = t->disk_full;
    if (!force && !change && !t->tty && now - t->t_progress < 10.0)
        return;
    t->t_progress = now;
    char tgt[32] = "", stale[600] = "", remote[48] = "";
    if (t->target)
        snprintf(tgt, sizeof tgt, "/%" PRIu64, t->target);
    if (t->status_err[0])
        snprintf(stale, sizeof stale, "  status.json not updated: %.500s", t->status_err);
    if (t->broker)   /* remote workers feed the run through the broker: count them too */
        snprintf(remote, sizeof remote, " local, %d remote",
                 trainer_remote_active(t, now, TRAINER_REMOTE_ACTIVE_S));
    fprintf(stderr, "%sstep %" PRIu64 "%s  loss p %.3f v %.3f  games %" PRIu64
            " (%.2f/s)  pos %" PRIu64 "  %.0f samples/s  workers %d/%d%s  rejected %" PRIu64
            "  %s%s%s", t->tty ? "\r\033[K" : "", t->step, tgt, t->last.policy, t->last.value,
            t->games, t->rate_games, t->positions, t->rate_samples, trainer_workers_running(t), t->nw,
            remote, t->rejected, t->state, stale, t->tty ? "" : "\n");
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

