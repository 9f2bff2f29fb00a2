/* The browser board's HTTP server: the page, the JSON API (web/serve.h)
 * and the live event stream of a run, on one address.
 *
 * Ownership: web_server_start copies nothing from o; its strings must
 * outlive the server. The server runs on threads of its own until
 * web_server_free, which stops it, waits for every request and frees it. */
#ifndef GZ_WEB_SERVER_H
#define GZ_WEB_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "nn/nn.h"
#include "play/searcher.h"

typedef struct web_server_opts {
    const char *run_dir;    /* a run directory to watch (read only), or NULL */
    const char *model;      /* a player spec to play; NULL: the run's newest checkpoint */
    const char *listen;     /* "HOST:PORT", "[IPV6]:PORT"; port 0: any free one */
    const char *token;      /* secret every request carries, or NULL (loopback only) */
    int visits;             /* model playouts per move */
    const char *device;
    nn_precision_t precision;
    search_settings_t search;   /* c_puct, fpu, VCF checks of the model's searches */
    int max_games;          /* games kept at once */
    int max_searches;       /* searches running at once */
    const char *load;       /* a .psq file the page's first game starts from, or NULL */
} web_server_opts_t;

typedef struct web_server web_server_t;

/* Start serving; url gets the page's address (with ?token=T). NULL with
 * err on failure; *bad_arg is then true when the options themselves are
 * wrong (a bad --listen or --token: a usage error), false when starting
 * failed (the model does not load, the address is taken). */
web_server_t *web_server_start(const web_server_opts_t *o, char *url, size_t urllen,
                               bool *bad_arg, char *err, size_t errlen);
/* Stop and free; NULL is a no-op. */
void web_server_free(web_server_t *w);

#endif
