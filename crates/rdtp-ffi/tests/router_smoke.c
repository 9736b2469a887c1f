/* A receiver fetches a 1 MB object twice through a router, all over the C API only: the
 * first time the router forwards to the server, the second time it answers from its
 * content store. Datagrams are handed over directly (no loss), every node driven by the same
 * rdtp_node_* calls; the counters are read by name, and each fetch prints where its units came from (rdtp_receiver_sources). */
#include <stdio.h>
#include <string.h>
#include "rdtp.h"

#define SIZE 1000000

static uint64_t counter(RdtpNode *r, const char *name) {
    uint64_t values[128];
    size_t n = rdtp_router_counters(r, values, 128);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rdtp_router_counter_name(i), name) == 0) return values[i];
    return (uint64_t)-1;
}

static int same(RdtpAddr a, RdtpAddr b) {
    return a.family == b.family && a.port == b.port && memcmp(a.ip, b.ip, 16) == 0;
}

/* Deliver everything the router sends until it has nothing more: to the receiver, or to
 * the server (whose answers go back into the router, as `me`'s upstream). 0, or an error. */
static int pump(RdtpNode *router, RdtpNode *srv, RdtpNode *rx, RdtpAddr rx_addr, RdtpAddr up, RdtpAddr me,
                uint64_t now) {
    static uint8_t dgram[65536], fwd[65536];
    RdtpAddr to;
    size_t m;
    while ((m = rdtp_node_poll_transmit(router, now, fwd, sizeof fwd, &to)) > 0) {
        if (same(to, rx_addr)) {
            rdtp_node_handle_datagram(rx, now, me, fwd, m);
        } else if (same(to, up)) {
            rdtp_node_handle_datagram(srv, now, me, fwd, m);
            size_t k;
            RdtpAddr back;
            while ((k = rdtp_node_poll_transmit(srv, now, dgram, sizeof dgram, &back)) > 0) {
                if (!same(back, me)) return -3;
                rdtp_node_handle_datagram(router, now, up, dgram, k);
            }
        } else {
            return -2;
        }
    }
    return 0;
}

/* One fetch; returns bytes read, or a negative error. */
static long fetch(RdtpNode *router, RdtpNode *srv, RdtpAddr rx_addr, RdtpAddr up, RdtpAddr me, uint64_t seed) {
    static uint8_t req[RDTP_MAX_REQUEST], out[65536];
    char spec[32];
    snprintf(spec, sizeof spec, "seed=%llu", (unsigned long long)seed);
    RdtpNode *rx = rdtp_receiver_new_from_spec(NULL, spec, "object", me, 0, NULL, 0);
    if (!rx) return -1;
    uint64_t now = 1000000;
    long read_total = 0;
    int finished = 0;
    for (int step = 0; step < 100000 && !finished; step++) {
        size_t n;
        RdtpAddr to;
        while ((n = rdtp_node_poll_transmit(rx, now, req, sizeof req, &to)) > 0) {
            if (!same(to, me)) return -3;
            rdtp_node_handle_datagram(router, now, rx_addr, req, n);
            int e = pump(router, srv, rx, rx_addr, up, me, now);
            if (e) return e;
        }
        now += 1000000;
        RdtpEvent ev;
        while (rdtp_receiver_poll_event(rx, &ev)) {
            if (ev.kind == RDTP_EVENT_KIND_FINISHED) finished = 1;
            if (ev.kind == RDTP_EVENT_KIND_FAILED) return -10 - (int)ev.error;
        }
        while ((n = rdtp_receiver_read(rx, out, sizeof out)) > 0) read_total += (long)n;
        uint64_t at;
        if (!finished && rdtp_node_poll_timeout(rx, &at) && at > now) now = at;
        rdtp_node_handle_timeout(rx, now);
        rdtp_node_handle_timeout(router, now);
    }
    /* Where the units came from, as the receiver counted them. */
    RdtpSource src[8];
    size_t n_src = rdtp_receiver_sources(rx, src, 8);
    for (size_t i = 0; i < n_src && i < 8; i++) {
        char label[19];
        if (rdtp_node_id_label(src[i].node, label, sizeof label) == 0) return -5;
        printf("source %s cached=%d hops=%u units=%llu bytes=%llu\n", label, (int)src[i].cached,
               (unsigned)src[i].hops, (unsigned long long)src[i].units, (unsigned long long)src[i].bytes);
    }
    rdtp_node_free(rx);
    return finished ? read_total : -4;
}

int main(void) {
    const char *names[] = {"object"};
    uint64_t sizes[] = {SIZE};
    uint64_t seeds[] = {7};
    RdtpNode *srv = rdtp_server_new_pattern(names, sizes, seeds, 1);
    char why[256];
    RdtpNode *router = rdtp_router_new_from_spec("id=ap,cs_policy=lru,validation=true", why, sizeof why);
    if (!srv || !router) return 10;
    if (rdtp_router_new_from_spec("id=ap;cs_policy=no-such-policy", why, sizeof why) != NULL) return 11;
    if (!strstr(why, "router: cs_policy=no-such-policy: the value must be one of lru, lfu")) return 11;
    const char *help = rdtp_router_help();
    if (!help || !strstr(help, "strategy=best-route") || !strstr(help, "control_capacity=4096")) return 11;
    RdtpAddr rx_addr = rdtp_addr_v4(0x0a000001, 5000), up = rdtp_addr_v4(0x0a000002, 7447);
    RdtpAddr me = rdtp_addr_v4(0x0a000003, 7448);
    /* The server validates its downstream (the router), the router its own (the receiver):
     * tokens are exchanged on both hops. */
    if (!rdtp_server_set_validation(srv, true, NULL)) return 13;
    if (!rdtp_router_set_default_route(router, up)) return 12;

    long first = fetch(router, srv, rx_addr, up, me, 1);
    uint64_t forwarded = counter(router, "forwarded_units");
    long second = fetch(router, srv, rx_addr, up, me, 2);
    uint64_t hits = counter(router, "cs_hits"), units = (SIZE + 1401) / 1402;
    printf("first=%ld second=%ld forwarded=%llu hits=%llu cs_entries=%llu counters=%zu\n", first, second,
           (unsigned long long)forwarded, (unsigned long long)hits,
           (unsigned long long)counter(router, "cs_entries"), rdtp_router_counter_count());
    if (first != SIZE || second != SIZE) return 20;
    if (forwarded != units || hits != units || counter(router, "forwarded_units") != units) return 21;
    rdtp_node_free(router);
    rdtp_node_free(srv);
    return 0;
}
