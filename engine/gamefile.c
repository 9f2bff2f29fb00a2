/* Piskvork .psq files and opening lines (see gamefile.h). */
#include "engine/gamefile.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* ---- small text scanning ---- */

static const char *skip_blank(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++;
    return s;
}

/* An optionally signed decimal of at most 6 digits at *s (before end);
 * advances *s. false when there is none. */
static bool scan_int(const char **s, const char *end, long *v)
{
    const char *p = *s;
    bool neg = false;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    long n = 0;
    int k = 0;
    while (p < end && isdigit((unsigned char)*p) && k < 7)
        n = n * 10 + (*p++ - '0'), k++;
    if (k == 0 || k > 6)
        return false;
    *v = neg ? -n : n;
    *s = p;
    return true;
}

/* One line of text[..end): the line's end (before '\n' or end) and the start
 * of the next. */
static const char *line_end(const char *s, const char *end)
{
    const char *e = memchr(s, '\n', (size_t)(end - s));
    return e ? e : end;
}

static bool is_blank_line(const char *s, const char *e)
{
    return skip_blank(s, e) == e;
}

/* "x,y[,ms]" with 1-based x, y on the whole line; false when the line is
 * something else (a name, the end code). */
static bool scan_psq_move(const char *s, const char *e, long *x, long *y, long *ms)
{
    *ms = 0;
    s = skip_blank(s, e);
    if (!scan_int(&s, e, x))
        return false;
    s = skip_blank(s, e);
    if (s >= e || *s++ != ',')
        return false;
    s = skip_blank(s, e);
    if (!scan_int(&s, e, y))
        return false;
    s = skip_blank(s, e);
    if (s < e && *s == ',') {
        s = skip_blank(s + 1, e);
        if (!scan_int(&s, e, ms))
            return false;
        s = skip_blank(s, e);
    }
    return s == e;
}

/* A line that starts as a move does ("12," or "-3 ,"), whatever follows:
 * a broken move, never a player's name. */
static bool looks_like_move(const char *s, const char *e)
{
    long v;
    s = skip_blank(s, e);
    if (!scan_int(&s, e, &v))
        return false;
    s = skip_blank(s, e);
    return s < e && *s == ',';
}

static void copy_name(char *dst, const char *s, const char *e)
{
    s = skip_blank(s, e);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
    size_t n = (size_t)(e - s);
    if (n >= PSQ_NAME_MAX)
        n = PSQ_NAME_MAX - 1;
    for (size_t i = 0; i < n; i++)
        dst[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
    dst[n] = '\0';
}

/* ---- .psq ---- */

/* "Piskvork WxH, ..." -> size; -1 with err when the header is malformed. */
static int parse_header(const char *s, const char *e, char *err, size_t errlen)
{
    s = skip_blank(s, e);
    static const char word[] = "Piskvork";
    size_t wl = sizeof word - 1;
    if ((size_t)(e - s) < wl || strncmp(s, word, wl) != 0)
        return -2;   /* no header: the caller reads move lines */
    s = skip_blank(s + wl, e);
    long w, h;
    if (!scan_int(&s, e, &w) || s >= e || (*s != 'x' && *s != 'X')) {
        util_errf(err, errlen, "line 1: the header wants 'Piskvork WxH', as in 'Piskvork 15x15, 11:11, 0'");
        return -1;
    }
    s++;
    if (!scan_int(&s, e, &h)) {
        util_errf(err, errlen, "line 1: the header wants 'Piskvork WxH', as in 'Piskvork 15x15, 11:11, 0'");
        return -1;
    }
    if (w != h) {
        util_errf(err, errlen, "line 1: the board is %ldx%ld; only square boards are played", w, h);
        return -1;
    }
    if (w < BOARD_MIN || w > BOARD_MAX) {
        util_errf(err, errlen, "line 1: board size %ld is outside %d..%d", w, BOARD_MIN, BOARD_MAX);
        return -1;
    }
    return (int)w;
}

int psq_parse(const char *text, size_t len, psq_game_t *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    const char *s = text, *end = text + len;
    if (memchr(text, '\0', len)) {
        util_errf(err, errlen, "a NUL byte: this is not a .psq text file");
        return -1;
    }
    int line = 1;
    bool header = false;
    g->size = BOARD_DEFAULT;
    /* the header, unless the first non-blank line is already a move */
    while (s < end && is_blank_line(s, line_end(s, end))) {
        s = line_end(s, end) + 1;
        line++;
    }
    if (s < end) {
        const char *e = line_end(s, end);
        int size = parse_header(s, e, err, errlen);
        if (size == -1)
            return -1;
        if (size > 0) {
            g->size = size;
            header = true;
            s = e + 1;
            line++;
        }
    }
    uint8_t used[BOARD_CELLS] = {0};
    int after = 0;   /* lines read after the moves: black, white, end code */
    for (; s < end; s = line_end(s, end) + 1, line++) {
        const char *e = line_end(s, end);
        long x, y, ms;
        if (after == 0 && scan_psq_move(s, e, &x, &y, &ms)) {
            if (x < 1 || x > g->size || y < 1 || y > g->size) {
                util_errf(err, errlen, "line %d: move %ld,%ld is off the %dx%d board (x and y run 1..%d)",
                          line, x, y, g->size, g->size, g->size);
                return -1;
            }
            int m = (int)((y - 1) * g->size + (x - 1));
            if (used[m]) {
                util_errf(err, errlen, "line %d: move %ld,%ld is on a point already played", line, x, y);
                return -1;
            }
            if (g->nmoves >= g->size * g->size) {
                util_errf(err, errlen, "line %d: more moves than points on the board", line);
                return -1;
            }
            used[m] = 1;
            g->ms[g->nmoves] = ms < 0 ? 0 : (int)ms;   /* six digits at most */
            g->moves[g->nmoves++] = m;
            continue;
        }
        if (after == 0 && looks_like_move(s, e)) {
            util_errf(err, errlen, "line %d: a bad move line (want 'x,y[,ms]', 1-based integers)",
                      line);
            return -1;
        }
        if (after == 0 && g->nmoves == 0 && !header && !is_blank_line(s, e)) {
            util_errf(err, errlen, "line %d: expected 'Piskvork WxH' or a move 'x,y[,ms]' (1-based)",
                      line);
            return -1;
        }
        if (is_blank_line(s, e) && after == 0)
            continue;
        if (after == 0)
            copy_name(g->black, s, e);
        else if (after == 1)
            copy_name(g->white, s, e);
        after++;   /* the end code and anything after it is not read */
    }
    return 0;
}

char *gamefile_read_text(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        util_errf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(GAMEFILE_MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        util_errf(err, errlen, "out of memory reading %s", path);
        return NULL;
    }
    size_t n = fread(buf, 1, GAMEFILE_MAX_BYTES + 1, f);
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        util_errf(err, errlen, "cannot read %s", path);
        return NULL;
    }
    if (n > GAMEFILE_MAX_BYTES) {
        free(buf);
        util_errf(err, errlen, "%s is larger than %u bytes", path, GAMEFILE_MAX_BYTES);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

int psq_load(const char *path, psq_game_t *g, char *err, size_t errlen)
{
    size_t len;
    char *text = gamefile_read_text(path, &len, err, errlen);
    if (!text)
        return -1;
    char why[200];
    int rc = psq_parse(text, len, g, why, sizeof why);
    free(text);
    if (rc != 0)
        util_errf(err, errlen, "%s: %s", path, why);
    return rc;
}

/* Names go on a line of their own: keep them printable and single-line. */
static void write_name(FILE *f, const char *name)
{
    if (!name || !*name)
        name = "unknown";
    for (const char *p = name; *p && p - name < PSQ_NAME_MAX - 1; p++)
        fputc(isprint((unsigned char)*p) ? *p : '?', f);
    fputc('\n', f);
}

int psq_write(FILE *f, int size, const int *moves, const int *ms, int n, const char *black,
              const char *white)
{
    fprintf(f, "Piskvork %dx%d, 11:11, 0\n", size, size);
    for (int i = 0; i < n; i++)
        fprintf(f, "%d,%d,%d\n", moves[i] % size + 1, moves[i] / size + 1,
                !ms || ms[i] < 0 ? 0 : ms[i] > PSQ_MS_MAX ? PSQ_MS_MAX : ms[i]);
    write_name(f, black);
    write_name(f, white);
    fputs("0\n", f);
    return ferror(f) ? -1 : 0;
}

int psq_save(const char *path, int size, const int *moves, const int *ms, int n,
             const char *black, const char *white, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) {
        util_errf(err, errlen, "cannot write %s: out of memory", path);
        return -1;
    }
    int rc = psq_write(m, size, moves, ms, n, black, white);
    if (fclose(m) != 0 || rc != 0) {
        free(buf);
        util_errf(err, errlen, "cannot write %s: out of memory", path);
        return -1;
    }
    rc = util_write_atomic(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

static void board_moves(const board_t *b, int *moves)
{
    for (int i = 0; i < b->nmoves; i++)
        moves[i] = b->moves[i];
}

int psq_write_board(FILE *f, const board_t *b, const char *black, const char *white)
{
    int moves[BOARD_CELLS];
    board_moves(b, moves);
    return psq_write(f, b->size, moves, NULL, b->nmoves, black, white);
}

int psq_save_board(const char *path, const board_t *b, const int *ms, const char *black,
                   const char *white, char *err, size_t errlen)
{
    int moves[BOARD_CELLS];
    board_moves(b, moves);
    return psq_save(path, b->size, moves, ms, b->nmoves, black, white, err, errlen);
}

int psq_to_board(const psq_game_t *g, rule_t rule, board_t *b, char *err, size_t errlen)
{
    board_init(b, g->size, rule);
    for (int i = 0; i < g->nmoves; i++) {
        move_status_t st = board_play(b, g->moves[i]);
        if (st != MOVE_OK) {
            char mv[16];
            move_format_alpha(g->moves[i], g->size, mv, sizeof mv);
            util_errf(err, errlen, "move %d (%s) is not legal under %s: %s", i + 1, mv,
                      rule_name(rule), move_status_str(st));
            return -1;
        }
    }
    return 0;
}

/* ---- opening lines ---- */

static int opening_offsets(const char *s, const char *e, int size, int *moves, int max, char *err,
                           size_t errlen)
{
    int n = 0, c = size / 2;
    while (true) {
        long dx, dy;
        s = skip_blank(s, e);
        if (!scan_int(&s, e, &dx)) {
            util_errf(err, errlen, "expected an x offset at '%.20s'", s);
            return -1;
        }
        s = skip_blank(s, e);
        if (s >= e || *s++ != ',') {
            util_errf(err, errlen, "centre offsets come in x,y pairs");
            return -1;
        }
        s = skip_blank(s, e);
        if (!scan_int(&s, e, &dy)) {
            util_errf(err, errlen, "centre offsets come in x,y pairs");
            return -1;
        }
        long x = c + dx, y = c + dy;
        if (x < 0 || x >= size || y < 0 || y >= size) {
            util_errf(err, errlen, "offset %ld,%ld is off the %dx%d board", dx, dy, size, size);
            return -1;
        }
        if (n >= max) {
            util_errf(err, errlen, "more than %d stones", max);
            return -1;
        }
        moves[n++] = (int)(y * size + x);
        s = skip_blank(s, e);
        if (s >= e)
            return n;
        if (*s++ != ',') {
            util_errf(err, errlen, "expected ',' between offset pairs at '%.20s'", s - 1);
            return -1;
        }
    }
}

static int opening_alpha(const char *s, const char *e, int size, int *moves, int max, char *err,
                         size_t errlen)
{
    int n = 0;
    while (true) {
        s = skip_blank(s, e);
        if (s >= e)
            return n;
        const char *t = s;
        while (t < e && *t != ' ' && *t != '\t' && *t != '\r' && *t != ',')
            t++;
        char tok[16];
        size_t tl = (size_t)(t - s);
        if (tl == 0 || tl >= sizeof tok) {
            util_errf(err, errlen, "expected a move like h8 at '%.20s'", s);
            return -1;
        }
        memcpy(tok, s, tl);
        tok[tl] = '\0';
        int m;
        if (!isalpha((unsigned char)tok[0]) || !move_parse(tok, size, &m)) {
            util_errf(err, errlen, "'%s' is not a point on a %dx%d board", tok, size, size);
            return -1;
        }
        if (n >= max) {
            util_errf(err, errlen, "more than %d stones", max);
            return -1;
        }
        moves[n++] = m;
        s = t < e && *t == ',' ? t + 1 : t;
    }
}

int opening_parse_line(const char *line, int size, int *moves, int max, char *err, size_t errlen)
{
    if (size < BOARD_MIN || size > BOARD_MAX) {
        util_errf(err, errlen, "board size %d is outside %d..%d", size, BOARD_MIN, BOARD_MAX);
        return -1;
    }
    const char *e = line + strlen(line);
    const char *nl = memchr(line, '\n', (size_t)(e - line));
    if (nl)
        e = nl;
    const char *hash = memchr(line, '#', (size_t)(e - line));
    if (hash)
        e = hash;   /* a comment to the end of the line */
    const char *s = skip_blank(line, e);
    if (s == e)
        return 0;
    int n = isalpha((unsigned char)*s) ? opening_alpha(s, e, size, moves, max, err, errlen)
                                       : opening_offsets(s, e, size, moves, max, err, errlen);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (moves[i] == moves[j]) {
                char mv[16];
                move_format_alpha(moves[i], size, mv, sizeof mv);
                util_errf(err, errlen, "stone %d (%s) is on a point already used", i + 1, mv);
                return -1;
            }
    return n;
}
