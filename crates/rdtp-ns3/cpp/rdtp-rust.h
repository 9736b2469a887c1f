// Definitions the C++ uses but does not write: each lives once, in Rust, and rdtp-sim
// exports it (crates/rdtp-ns3/src/exports.rs). The WiFi PHY-rate table and the testbed's
// address plan are crate rdtp-scenario's, the quantile definition crate rdtp-units'.
#ifndef RDTP_NS3_RUST_H
#define RDTP_NS3_RUST_H

#include <cstddef>
#include <cstdint>

extern "C"
{
    /// Highest PHY rate (bit/s) of a WiFi hop ("80211ac", else 802.11n; MHz; streams).
    double rdtp_wifi_phy_max_bps(const char* standard, uint32_t width_mhz, uint32_t spatial_streams);
    /// Gateway address (IPv4, host byte order) of the server (client < 0) or client `client`
    /// in the testbed's address plan.
    uint32_t rdtp_plan_gateway(int64_t client);
    /// Gateway address (IPv4, host byte order) of the caching router on the `slot`-th router
    /// node in path order from the clients (r1 = 0, r2 = 1, …; WiFi's ap = 0).
    uint32_t rdtp_plan_router_gateway(uint32_t slot);
    /// Prefix length of the plan's subnets.
    uint32_t rdtp_plan_prefix_len();
    /// Nearest-rank q-quantile of n ascending values; NaN for none.
    double rdtp_quantile_f32(const float* sorted, size_t n, double q);
}

#endif
