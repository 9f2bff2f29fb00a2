/* gomoku serve's HTTP server (libmicrohttpd): watch a training run live
 * (Server-Sent Events) and play the model.
 *
 * One thread per connection (MHD_USE_THREAD_PER_CONNECTION), so an event
 * stream that waits for news or a search that thinks for a second holds
 * only its own connection. Routes are fixed strings: no file is served
 * from disk, so no path can reach outside them.
 *
 * Slow clients: a connection that is still receiving a request (from its
 * accept, or from the end of its previous response) is "receiving". Each
 * must have its whole request in within SERVE_REQUEST_S, whatever it
 * trickles; and at most SERVE_RECEIVING_PER_ADDR of them per client
 * address (SERVE_RECEIVING_MAX in all) are kept: beyond that, the oldest
 * receiving one of the address that holds the most is closed, but never
 * one younger than SERVE_GRACE_S. A client that sends its request at once
 * is answered within the grace even while others of its address churn
 * through hundreds of connections a second (closing the oldest at every
 * accept closed it before its thread had read it); the limits may be
 * exceeded for that long, and the reaper restores them after it.
 * libmicrohttpd's own inactivity timeout restarts with every byte, and its
 * limits count every connection, so neither stops a client that trickles
 * bytes on many connections; these do (a reaper thread shuts the socket
 * down, and the connection's thread ends). Connections being answered
 * (a search, an event stream) are never closed this way. */
#include "web/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

#include "web/serve.h"

#define SERVE_MAX_BODY 4096
#define SERVE_MAX_PSQ (64u << 10)      /* a .psq body (a 20x20 game with times is ~8 KiB) */
#define SERVE_LOAD_URL "/api/game/load"
#define SERVE_PSQ_TYPE "application/x-psq" 
#define SERVE_MAX_STREAMS 16
#define SERVE_HEARTBEAT_MS 15000
#define SERVE_REQUEST_S 10.0            /* a whole request (headers and body) within this */
#define SERVE_RECEIVING_PER_ADDR 32     /* receiving connections kept per client address */
#define SERVE_RECEIVING_MAX 128         /* ... and in all */
#define SERVE_GRACE_S 1.0               /* a receiving connection is not closed for room before this */
/* libmicrohttpd's own limit, far above ours. It has a limit per address
 * too, but that one is not set: a connection we shut down (make_room)
 * still counts there until its thread ends, so during a storm of
 * reconnecting slow clients (hundreds closed and reopened a second) an
 * address was refused its plain requests for a moment. The receiving
 * connections per address are bounded by make_room instead. */
#define SERVE_CONNECTIONS_MAX 1024

/* One open connection (the socket context of libmicrohttpd's notify). */
typedef struct conn {
    struct conn *prev, *next;
    int fd;
    unsigned char addr[16];     /* the client's address (IPv4 in the first 4 bytes) */
    double since;               /* s: when it began to wait for the request it is receiving */
    bool receiving;             /* waiting for or receiving a request: may be closed by us */
    bool closing;               /* shut down by us: its thread is ending it */
} conn_t;

typedef struct server {
    serve_run_t *run;
    serve_play_t *play;
    const char *token;
    bool check_host;            /* loopback without token: Host must be loopback (DNS rebinding) */
    volatile int stop;          /* set by web_server_free: streams and model searches end */
    pthread_mutex_t lock;       /* streams, the connection list */
    int streams;
    conn_t *conns;              /* every open connection */
    uint64_t closed_slow;       /* closed for taking too long or for room */
    pthread_t reaper;
    bool reaper_on;
    pthread_cond_t reaper_cv;
} server_t;

typedef struct request {
    size_t n, max;
    bool too_big;
    char body[];                /* max + 1 bytes */
} request_t;

static enum MHD_Result reply(struct MHD_Connection *c, int status, const char *type, char *body,
                             size_t n, bool must_free)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        n, body, must_free ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (must_free)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

/* A response written by fn into a memory stream. */
static enum MHD_Result reply_stream(struct MHD_Connection *c, int status, const char *type,
                                    char *buf, size_t n)
{
    return reply(c, status, type, buf, n, true);
}

static enum MHD_Result reply_error(struct MHD_Connection *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum MHD_Result reply_error(struct MHD_Connection *c, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return MHD_NO;
    serve_error(f, status, "%s", msg);
    fclose(f);
    return reply_stream(c, status, "application/json", buf, n);
}

/* ---- Server-Sent Events ------------------------------------------------ */

typedef struct stream {
    server_t *s;
    serve_cursor_t cur;
    uint64_t seen;
    char *pending;              /* bytes not yet handed to MHD */
    size_t npending, at;
    bool started;
} stream_t;

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream_t *st = cls;
    server_t *s = st->s;
    while (st->at == st->npending) {
        free(st->pending);
        st->pending = NULL;
        st->npending = st->at = 0;
        if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
            return MHD_CONTENT_READER_END_OF_STREAM;
        FILE *f = open_memstream(&st->pending, &st->npending);
        if (!f)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        if (!st->started) {
            st->started = true;
            fputs("retry: 2000\n\n", f);
            if (!s->run)
                fputs("event: run\ndata: {\"none\": true}\n\n", f);
        }
        if (s->run) {
            /* wait in slices so that shutdown is prompt; heartbeat when idle */
            int waited = 0;
            uint64_t v = st->seen;
            while (v == st->seen && waited < SERVE_HEARTBEAT_MS && !__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
                v = serve_run_wait(s->run, st->seen, 500);
                waited += 500;
            }
            st->seen = v;
            char *js = NULL;
            size_t jn = 0;
            FILE *j = open_memstream(&js, &jn);
            bool any = j && serve_run_delta(s->run, &st->cur, j);
            if (j)
                fclose(j);
            if (any)
                fprintf(f, "event: run\ndata: %s\n\n", js);
            else
                fputs(": idle\n\n", f);
            free(js);
        } else {
            for (int i = 0; i < SERVE_HEARTBEAT_MS / 500 && !__atomic_load_n(&s->stop, __ATOMIC_RELAXED); i++)
                usleep(500 * 1000);
            fputs(": idle\n\n", f);
        }
        fclose(f);
    }
    size_t k = st->npending - st->at < max ? st->npending - st->at : max;
    memcpy(buf, st->pending + st->at, k);
    st->at += k;
    return (ssize_t)k;
}

static void stream_free(void *cls)
{
    stream_t *st = cls;
    pthread_mutex_lock(&st->s->lock);
    st->s->streams--;
    pthread_mutex_unlock(&st->s->lock);
    free(st->pending);
    free(st);
}

static enum MHD_Result start_stream(server_t *s, struct MHD_Connection *c)
{
    pthread_mutex_lock(&s->lock);
    bool full = s->streams >= SERVE_MAX_STREAMS;
    if (!full)
        s->streams++;
    pthread_mutex_unlock(&s->lock);
    if (full)
        return reply_error(c, 503, "too many event streams open (%d)", SERVE_MAX_STREAMS);
    stream_t *st = calloc(1, sizeof *st);
    struct MHD_Response *r = st ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384,
                                                                    stream_read, st, stream_free)
                                : NULL;
    if (!r) {
        pthread_mutex_lock(&s->lock);
        s->streams--;
        pthread_mutex_unlock(&s->lock);
        free(st);
        return MHD_NO;
    }
    st->s = s;
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

/* ---- slow clients ------------------------------------------------------ */

static double now_s(void) { return util_now_ms() * 1e-3; }

/* Close a receiving connection from outside its thread: its recv() ends
 * and libmicrohttpd closes it (the fd stays ours to touch until the CLOSED
 * notification, which takes the lock first). Under s->lock. */
static void conn_shut(server_t *s, conn_t *k)
{
    shutdown(k->fd, SHUT_RDWR);
    k->closing = true;
    s->closed_slow++;
}

/* A connection make_room may close: receiving for SERVE_GRACE_S or more. */
static bool conn_evictable(const conn_t *k, double now)
{
    return k->receiving && !k->closing && now - k->since >= SERVE_GRACE_S;
}

/* Room for receiving connections from addr: while addr holds too many or
 * all do, close the oldest evictable one of addr (when over its own share)
 * or of the address holding the most. Younger ones are left over the limit
 * for the reaper to come back to. Under s->lock. */
static void make_room(server_t *s, const unsigned char *addr)
{
    double now = now_s();
    for (;;) {
        int total = 0, mine = 0;
        for (conn_t *k = s->conns; k; k = k->next)
            if (k->receiving && !k->closing) {
                total++;
                mine += memcmp(k->addr, addr, sizeof k->addr) == 0;
            }
        if (mine <= SERVE_RECEIVING_PER_ADDR && total <= SERVE_RECEIVING_MAX)
            return;
        /* the address to take from: addr itself when over its own share,
         * else the one with the most (counted by a scan per candidate: the
         * list is short, at most the limits above plus what is answered) */
        const unsigned char *from = addr;
        if (mine <= SERVE_RECEIVING_PER_ADDR) {
            int best = 0;
            for (conn_t *k = s->conns; k; k = k->next) {
                if (!conn_evictable(k, now))
                    continue;
                int c = 0;
                for (conn_t *q = s->conns; q; q = q->next)
                    c += conn_evictable(q, now) && memcmp(q->addr, k->addr, 16) == 0;
                if (c > best) {
                    best = c;
                    from = k->addr;
                }
            }
        }
        conn_t *old = NULL;
        for (conn_t *k = s->conns; k; k = k->next)
            if (conn_evictable(k, now) && memcmp(k->addr, from, 16) == 0 &&
                (!old || k->since < old->since))
                old = k;
        if (!old)
            return;
        conn_shut(s, old);
    }
}

static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                              enum MHD_ConnectionNotificationCode code)
{
    server_t *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        conn_t *k = *socket_context;
        if (!k)
            return;
        pthread_mutex_lock(&s->lock);
        if (k->prev)
            k->prev->next = k->next;
        else
            s->conns = k->next;
        if (k->next)
            k->next->prev = k->prev;
        pthread_mutex_unlock(&s->lock);
        free(k);
        *socket_context = NULL;
        return;
    }
    conn_t *k = calloc(1, sizeof *k);
    const union MHD_ConnectionInfo *fi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ai = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!k || !fi) {   /* not tracked: only libmicrohttpd's own limits apply to it */
        free(k);
        return;
    }
    k->fd = fi->connect_fd;
    if (ai && ai->client_addr) {
        const struct sockaddr *sa = ai->client_addr;
        if (sa->sa_family == AF_INET)
            memcpy(k->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        else if (sa->sa_family == AF_INET6)
            memcpy(k->addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    }
    k->since = now_s();
    k->receiving = true;
    pthread_mutex_lock(&s->lock);
    k->next = s->conns;
    if (s->conns)
        s->conns->prev = k;
    s->conns = k;
    make_room(s, k->addr);
    pthread_mutex_unlock(&s->lock);
    *socket_context = k;
}

/* The connection's request is in (receiving = false) or answered (true again). */
static void conn_receiving(server_t *s, struct MHD_Connection *c, bool receiving)
{
    const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    conn_t *k = i ? i->socket_context : NULL;
    if (!k)
        return;
    pthread_mutex_lock(&s->lock);
    k->receiving = receiving;
    k->since = now_s();
    pthread_mutex_unlock(&s->lock);
}

/* Closes receiving connections past SERVE_REQUEST_S, four times a second. */
static void *reaper_main(void *arg)
{
    server_t *s = arg;
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        double now = now_s();
        for (conn_t *k = s->conns; k; k = k->next)
            if (k->receiving && !k->closing && now - k->since > SERVE_REQUEST_S)
                conn_shut(s, k);
        if (s->conns)   /* the newest connection's address and the total, past their grace */
            make_room(s, s->conns->addr);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&s->reaper_cv, &s->lock, &ts);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- requests ---------------------------------------------------------- */

static bool token_ok(const server_t *s, struct MHD_Connection *c)
{
    if (!s->token)
        return true;
    const char *t = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Token");
    if (!t)
        t = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    if (!t)
        return false;
    size_t a = strlen(t), b = strlen(s->token);
    unsigned char diff = a != b;
    for (size_t i = 0; i < a && i < b; i++)   /* the same time for every wrong guess of a length */
        diff |= (unsigned char)(t[i] ^ s->token[i]);
    return diff == 0;
}

/* Host header names a loopback host (with or without a port). */
static bool host_ok(struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    if (!h)
        return false;
    char host[128];
    snprintf(host, sizeof host, "%s", h);
    if (host[0] == '[') {
        char *e = strchr(host, ']');
        if (!e)
            return false;
        *e = '\0';
        return strcmp(host + 1, "::1") == 0;
    }
    char *colon = strchr(host, ':');
    if (colon)
        *colon = '\0';
    struct in_addr a;
    return strcmp(host, "localhost") == 0 ||
           (inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127);
}

static enum MHD_Result route(server_t *s, struct MHD_Connection *c, const char *url,
                             const char *method, request_t *rq)
{
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    bool post = strcmp(method, "POST") == 0;
    if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0) {
        if (!get)
            return reply_error(c, 405, "%s %s: only GET", method, url);
        struct MHD_Response *r = MHD_create_response_from_buffer(
            serve_page_len, (void *)serve_page, MHD_RESPMEM_PERSISTENT);
        if (!r)
            return MHD_NO;
        MHD_add_response_header(r, "Content-Type", "text/html; charset=utf-8");
        MHD_add_response_header(r, "Cache-Control", "no-store");
        MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
        MHD_add_response_header(r, "X-Frame-Options", "DENY");
        MHD_add_response_header(r, "Content-Security-Policy",
                                "default-src 'none'; script-src 'unsafe-inline'; "
                                "style-src 'unsafe-inline'; connect-src 'self'; img-src data:; "
                                "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
        enum MHD_Result ret = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        return ret;
    }
    if (strcmp(url, "/api/events") == 0) {
        if (!get)
            return reply_error(c, 405, "%s %s: only GET", method, url);
        return start_stream(s, c);
    }
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return MHD_NO;
    int status = 0;
    const char *type = "application/json";
    const char *gp = "/api/game/";
    if (strcmp(url, "/api/info") == 0) {
        if (get) {
            fputs("{\"play\": ", f);
            serve_play_info(s->play, f);
            fprintf(f, ", \"run\": %s}", s->run ? "true" : "false");
            status = 200;
        }
    } else if (strcmp(url, "/api/run") == 0) {
        if (get && s->run) {
            serve_cursor_t cur = {0};
            serve_run_delta(s->run, &cur, f);
            status = 200;
        } else if (get) {
            status = serve_error(f, 404, "no run is watched (start with --run RUN_DIR)");
        }
    } else if (strcmp(url, "/api/game") == 0) {
        if (post)
            status = serve_play_new(s->play, rq->body, rq->n, f);
    } else if (strcmp(url, SERVE_LOAD_URL) == 0) {
        if (post)
            status = serve_play_load(
                s->play, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "rule"),
                MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "color"), rq->body, rq->n, f);
    } else if (strncmp(url, gp, strlen(gp)) == 0) {
        char id[32];
        const char *rest = url + strlen(gp), *slash = strchr(rest, '/');
        size_t idn = slash ? (size_t)(slash - rest) : strlen(rest);
        snprintf(id, sizeof id, "%.*s", (int)(idn < sizeof id - 1 ? idn : sizeof id - 1), rest);
        const char *action = slash ? slash + 1 : "";
        if (idn >= sizeof id) {
            status = serve_error(f, 404, "no such game (a game id is 16 hex digits)");
        } else if (!*action) {
            if (get)
                status = serve_play_get(s->play, id, false, f);
        } else if (strcmp(action, "move") == 0) {
            if (post)
                status = serve_play_move(s->play, id, rq->body, rq->n, f);
        } else if (strcmp(action, "undo") == 0) {
            if (post)
                status = serve_play_undo(s->play, id, f);
        } else if (strcmp(action, "psq") == 0) {
            if (get) {
                status = serve_play_get(s->play, id, true, f);
                if (status == 200)
                    type = "text/plain; charset=utf-8";
            }
        } else {
            status = serve_error(f, 404, "unknown path %.200s", url);
        }
        if (!status)
            status = serve_error(f, 405, "%s not allowed on %.200s", method, url);
    } else {
        status = serve_error(f, 404, "unknown path %.200s", url);
    }
    if (!status)
        status = serve_error(f, 405, "%s not allowed on %.200s", method, url);
    fclose(f);
    return reply_stream(c, status, type, buf, n);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)version;
    server_t *s = cls;
    request_t *rq = *con_cls;
    if (!rq) {   /* headers are in: check what can be checked before any body */
        bool psq = strcmp(url, SERVE_LOAD_URL) == 0;
        size_t max = psq ? SERVE_MAX_PSQ : SERVE_MAX_BODY;
        rq = calloc(1, sizeof *rq + max + 1);
        if (!rq)
            return MHD_NO;
        rq->max = max;
        *con_cls = rq;
        if (s->check_host && !host_ok(c))
            return reply_error(c, 403, "Host must be a loopback name (localhost, 127.0.0.1, [::1])");
        if (!token_ok(s, c))
            return reply_error(c, 403, "missing or wrong token (open the page as /?token=T)");
        const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (len && strtoull(len, NULL, 10) > max)
            return reply_error(c, 413, "request body over %zu bytes", max);
        if (strcmp(method, "POST") == 0) {
            /* JSON (or .psq text on its own type) only: a cross-site form cannot
             * send either without a CORS preflight */
            const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
            const char *want = psq ? SERVE_PSQ_TYPE : "application/json";
            if (!ct || strncmp(ct, want, strlen(want)) != 0)
                return reply_error(c, 415, "POST bodies %smust be Content-Type: %s",
                                   psq ? "to " SERVE_LOAD_URL " " : "", want);
        }
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (rq->n + *upload_size > rq->max)
            rq->too_big = true;
        else {
            memcpy(rq->body + rq->n, upload, *upload_size);
            rq->n += *upload_size;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    conn_receiving(s, c, false);   /* the whole request is in: being answered now */
    if (rq->too_big)
        return reply_error(c, 413, "request body over %zu bytes", rq->max);
    rq->body[rq->n] = '\0';
    return route(s, c, url, method, rq);
}

static void request_done(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    free(*con_cls);
    *con_cls = NULL;
    conn_receiving(cls, c, true);   /* waiting for its next request (keep-alive) */
}

/* HOST:PORT (HOST a name, an IPv4 address or [IPv6]) into addr. */
static int parse_listen(const char *spec, struct sockaddr_storage *addr, socklen_t *alen,
                        bool *loopback, char *err, size_t errlen)
{
    char host[256];
    const char *port;
    if (spec[0] == '[') {
        const char *e = strchr(spec, ']');
        if (!e || e[1] != ':' || (size_t)(e - spec - 1) >= sizeof host)
            return snprintf(err, errlen, "--listen wants HOST:PORT or [IPV6]:PORT, got '%s'",
                            spec), -1;
        snprintf(host, sizeof host, "%.*s", (int)(e - spec - 1), spec + 1);
        port = e + 2;
    } else {
        const char *colon = strrchr(spec, ':');
        if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof host ||
            memchr(spec, ':', (size_t)(colon - spec)))
            return snprintf(err, errlen, "--listen wants HOST:PORT or [IPV6]:PORT, got '%s'",
                            spec), -1;
        snprintf(host, sizeof host, "%.*s", (int)(colon - spec), spec);
        port = colon + 1;
    }
    char *end;
    long p = strtol(port, &end, 10);
    if (!*port || *end || p < 0 || p > 65535)
        return snprintf(err, errlen, "--listen: port '%s' is not 0..65535", port), -1;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    int rc = getaddrinfo(host, NULL, &hints, &ai);
    if (rc != 0)
        return snprintf(err, errlen, "--listen: cannot resolve '%s': %s", host,
                        gai_strerror(rc)), -1;
    memcpy(addr, ai->ai_addr, ai->ai_addrlen);
    *alen = ai->ai_addrlen;
    freeaddrinfo(ai);
    if (addr->ss_family == AF_INET) {
        struct sockaddr_in *a4 = (struct sockaddr_in *)addr;
        a4->sin_port = htons((uint16_t)p);
        *loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
    } else {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;
        a6->sin6_port = htons((uint16_t)p);
        *loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
    }
    return 0;
}

struct web_server {
    server_t s;
    struct MHD_Daemon *d;
};

web_server_t *web_server_start(const web_server_opts_t *o, char *url, size_t urllen,
                               bool *bad_arg, char *err, size_t errlen)
{
    *bad_arg = false;
    struct sockaddr_storage addr;
    socklen_t alen = 0;
    bool loopback = false;
    const char *token = o->token;
    if (parse_listen(o->listen, &addr, &alen, &loopback, err, errlen) != 0)
        goto out_bad_arg;
    if (token && (strlen(token) < 8 || strlen(token) > 128 || strspn(token,
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~") != strlen(token))) {
        snprintf(err, errlen, "--token wants 8..128 characters from A-Z a-z 0-9 - _ . ~");
        goto out_bad_arg;
    }
    if (!loopback && !token) {
        snprintf(err, errlen, "--listen %s is not a loopback address: give --token T too",
                 o->listen);
        goto out_bad_arg;
    }
    web_server_t *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    server_t *s = &w->s;
    s->token = token;
    s->check_host = loopback && !token;
    pthread_mutex_init(&s->lock, NULL);
    if (o->run_dir && !(s->run = serve_run_create(o->run_dir, err, errlen)))
        goto out_free;
    serve_play_opts_t po = {.model = o->model, .run_dir = o->run_dir, .visits = o->visits,
                            .device = o->device, .precision = o->precision,
                            .search = o->search, .max_games = o->max_games,
                            .max_searches = o->max_searches, .load = o->load,
                            .stop = &s->stop};
    if (!(s->play = serve_play_create(&po, err, errlen)))
        goto out_free;
    pthread_cond_init(&s->reaper_cv, NULL);
    if (pthread_create(&s->reaper, NULL, reaper_main, s) != 0) {
        snprintf(err, errlen, "cannot start a thread: %s", strerror(errno));
        goto out_free;
    }
    s->reaper_on = true;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     (addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    w->d = MHD_start_daemon(
        flags, 0, NULL, NULL, handle, s,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_CONNECTIONS_MAX,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 << 10),
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024,
        MHD_OPTION_NOTIFY_COMPLETED, request_done, s,
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s,
        MHD_OPTION_END);
    if (!w->d) {
        snprintf(err, errlen, "cannot listen on %s (address in use or not ours?)", o->listen);
        goto out_free;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(w->d, MHD_DAEMON_INFO_BIND_PORT);
    char host[64] = "";
    if (addr.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)&addr)->sin_addr, host, sizeof host);
    else {
        host[0] = '[';
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&addr)->sin6_addr, host + 1,
                  sizeof host - 2);
        strcat(host, "]");
    }
    snprintf(url, urllen, "http://%s:%u/%s%s", host, info ? (unsigned)info->port : 0u,
             token ? "?token=" : "", token ? token : "");
    return w;
out_free:
    web_server_free(w);
    return NULL;
out_bad_arg:
    *bad_arg = true;
    return NULL;
}

void web_server_free(web_server_t *w)
{
    if (!w)
        return;
    __atomic_store_n(&w->s.stop, 1, __ATOMIC_RELAXED);
    if (w->d)
        MHD_stop_daemon(w->d);
    if (w->s.reaper_on) {
        pthread_mutex_lock(&w->s.lock);
        pthread_cond_signal(&w->s.reaper_cv);
        pthread_mutex_unlock(&w->s.lock);
        pthread_join(w->s.reaper, NULL);
        pthread_cond_destroy(&w->s.reaper_cv);
    }
    serve_play_free(w->s.play);
    serve_run_free(w->s.run);
    pthread_mutex_destroy(&w->s.lock);
    free(w);
}
