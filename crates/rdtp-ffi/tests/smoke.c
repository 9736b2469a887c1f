/* Drives an rdtp receiver and server through the C API only: fetch a 3 MB object over a
 * loss-free pipe (datagrams handed over directly, both nodes driven by the same rdtp_node_*
 * calls), check it completes and arrives whole. The server validates addresses, so the
 * receiver's first request gets a Retry. */
#include <stdio.h>
#include <string.h>
#include "rdtp.h"

static int same(RdtpAddr a, RdtpAddr b) {
    return a.family == b.family && a.port == b.port && memcmp(a.ip, b.ip, 16) == 0;
}

int main(void) {
    const char *names[] = {"object"};
    uint64_t sizes[] = {3000000};
    uint64_t seeds[] = {42};
    RdtpNode *srv = rdtp_server_new_pattern(names, sizes, seeds, 1);
    if (!srv) return 10;
    uint8_t eid[32];
    uint64_t size = 0;
    if (!rdtp_server_resolve(srv, "object", eid, &size) || size != 3000000) return 11;
    if (!rdtp_server_set_validation(srv, true, NULL)) return 11;
    RdtpAddr rx_addr = rdtp_addr_v4(0xc0000201, 5000), srv_addr = rdtp_addr_v4(0xc0000202, 7447);

    char why[256];
    RdtpNode *rx = rdtp_receiver_new_from_spec("bbr", "trace=true", "object", srv_addr, 0, why, sizeof why);
    if (!rx || rdtp_node_kind(rx) != RDTP_NODE_KIND_RECEIVER || rdtp_node_kind(srv) != RDTP_NODE_KIND_SERVER) return 12;
    if (rdtp_receiver_new_from_spec("bbr", NULL, "object", (RdtpAddr){0}, 0, why, sizeof why) != NULL) return 35;
    if (!strstr(why, "the peer is no IPv4 or IPv6 address")) return 35;
    if (rdtp_receiver_new_from_spec("no-such-controller", NULL, "object", srv_addr, 0, why, sizeof why) != NULL) return 13;
    if (!strstr(why, "unknown controller 'no-such-controller'")) return 13;
    /* Receiver specs: a bad key or value is refused with a message naming it, a host's keys
     * may come first and the user's after (';'), and the help text lists every key. */
    if (rdtp_receiver_new_from_spec(NULL, "rto_k=8,unit=10", "object", srv_addr, 0, why, sizeof why) != NULL) return 30;
    if (!strstr(why, "receiver: unit=10: the value must be an integer in 64..=")) return 31;
    if (rdtp_receiver_new_from_spec(NULL, "nope=1", "object", srv_addr, 0, NULL, 0) != NULL) return 32;
    RdtpNode *spec = rdtp_receiver_new_from_spec(NULL, "seed=1,trace=true;seed=2,max_inflight=8", "object", srv_addr, 0, why, 1);
    if (!spec) return 33;
    rdtp_node_free(spec);
    const char *rhelp = rdtp_receiver_help();
    if (!rhelp || !strstr(rhelp, "rto_min=200ms") || !strstr(rhelp, "max_inflight=0")) return 34;
    /* Controller specs: valid ones are accepted, a bad key is refused with a message that
     * lists the accepted keys, and the help text lists every controller. */
    RdtpNode *tuned = rdtp_receiver_new_from_spec("bbrp:probe_gain=2,init_cwnd=20", NULL, "object", srv_addr, 0, NULL, 0);
    if (!tuned || rdtp_cc_error("bbrp:probe_gain=2,init_cwnd=20", NULL, 0) != 0) return 15;
    rdtp_node_free(tuned);
    size_t len = rdtp_cc_error("fixed:probe_gain=2", why, sizeof why);
    if (len == 0 || len != strlen(why) || !strstr(why, "its keys: window")) return 16;
    if (rdtp_cc_error("bbr", why, 4) != 0 || rdtp_cc_error(NULL, NULL, 0) != 0) return 17;
    if (rdtp_cc_error("reno", why, 8) == 0 || strlen(why) != 7) return 18;
    /* The default controller (a null spec) has a name, and that name is a valid spec. */
    const char *dflt = rdtp_cc_default();
    if (!dflt || strcmp(dflt, "bbr3-rdtp") != 0 || rdtp_cc_error(dflt, NULL, 0) != 0) return 36;
    const char *help = rdtp_cc_help();
    if (!help || !strstr(help, "bbr-wifi") || !strstr(help, "window=64") || !strstr(help, "probe_gain=1.25")) return 19;

    static uint8_t req[RDTP_MAX_REQUEST], dgram[RDTP_MAX_DATAGRAM], out[65536];
    uint64_t now = 1000000, read_total = 0;
    int rtt_samples = 0, finished = 0;
    for (int step = 0; step < 1000000 && !finished; step++) {
        size_t n, m;
        RdtpAddr to;
        while ((n = rdtp_node_poll_transmit(rx, now, req, sizeof req, &to)) > 0) {
            if (!same(to, srv_addr) || !rdtp_node_handle_datagram(srv, now, rx_addr, req, n)) return 40;
            while ((m = rdtp_node_poll_transmit(srv, now, dgram, sizeof dgram, &to)) > 0) {
                if (!same(to, rx_addr)) return 41;
                rdtp_node_handle_datagram(rx, now + 2000000, srv_addr, dgram, m);
            }
        }
        now += 2000000; /* replies arrive 2 ms later */
        RdtpEvent ev;
        while (rdtp_receiver_poll_event(rx, &ev)) {
            if (ev.kind == RDTP_EVENT_KIND_RTT_SAMPLE) rtt_samples++;
            if (ev.kind == RDTP_EVENT_KIND_FINISHED) finished = 1;
            if (ev.kind == RDTP_EVENT_KIND_FAILED) return 20 + (int)ev.error;
            if (ev.kind == RDTP_EVENT_KIND_CONGESTION && ev.state == NULL) return 14;
        }
        while ((n = rdtp_receiver_read(rx, out, sizeof out)) > 0) read_total += n;
        uint64_t at;
        if (!finished && rdtp_node_poll_timeout(rx, &at) && at > now) now = at;
        rdtp_node_handle_timeout(rx, now);
    }
    RdtpStats st;
    rdtp_receiver_stats(rx, &st);
    printf("finished=%d read=%llu units=%llu rtt_samples=%d rtt_avg_ms=%.3f status=%d\n", finished,
           (unsigned long long)read_total, (unsigned long long)st.units_received, rtt_samples,
           st.rtt_avg_ns / 1e6, rdtp_receiver_status(rx));
    if (!finished || read_total != 3000000 || rdtp_receiver_status(rx) != 1 || rtt_samples == 0) return 30;
    rdtp_node_free(rx);
    rdtp_node_free(srv);
    return 0;
}
