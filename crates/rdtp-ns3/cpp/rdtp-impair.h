// Impairments on a built topology (offline runner only), for seed 001's lossy and
// intermittent settings (S1 §IV-C, §IV-D):
//
// * receive loss by node role: each IP packet a client, a router node (r1 …, ap) or the
//   server receives from a link is dropped with that role's probability (RxLossClient,
//   RxLossRouter, RxLossServer) — ns-3's "receive error model", placed above the MAC so that
//   WiFi's link-layer retransmissions do not hide it. The draw is per IP datagram: a datagram
//   larger than the link MTU travels as IP fragments, which all share the first one's fate,
//   so the rates are per rdtp packet (S1's are per NDN packet) at any unit size;
// * outages of the server's access link (Outage = "start:end,…", scenario seconds): while
//   down, every packet arriving at either end of that link is dropped (the radio or wire
//   keeps working; the network layer loses connectivity, as when the producer walks away).
//
// The drop happens in a protocol handler that sits between the device and ns-3's traffic
// control layer for IPv4 (ARP goes through untouched). No protocol logic.
#ifndef RDTP_NS3_IMPAIR_H
#define RDTP_NS3_IMPAIR_H

#include "rdtp-run.h"
#include "rdtp-topology.h"

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>

namespace ns3
{

/// Packets the impairments dropped, by cause (`rx_loss_client`, …, `outage`).
using ImpairmentCounts = std::map<std::string, uint64_t>;

/// Install the receive losses and outages `p` asks for on `net` (nothing if none); the
/// counters fill as the run goes. Fails on a graph topology (no roles there) or a bad schedule.
std::shared_ptr<ImpairmentCounts> InstallImpairments(const RunParams& p, const Net& net);

/// `[impairments]` of run.toml (nothing without impairments).
void WriteImpairments(std::ostream& out, const RunParams& p, const ImpairmentCounts* counts);

/// Whether `p` asks for any impairment (the emulator refuses them).
bool HasImpairments(const TopologyParams& p);

} // namespace ns3

#endif
