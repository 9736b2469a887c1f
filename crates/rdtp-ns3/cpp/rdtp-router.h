// RdtpRouter: an ns-3 application around the rdtp caching router core — content store,
// pending-request table with coalescing, forwarding table (docs/PROTOCOL.md "Routers";
// seeds 001 §II and 003 §I: NDN-style forwarders between consumers and producers).
//
// Like RdtpConsumer and RdtpProducer it holds no protocol logic, and RdtpNodeApp moves its
// datagrams and time: one UDP socket (Port) serves downstreams and upstreams alike; every
// datagram goes to the router node with its source, every datagram it hands out is sent to
// its destination, one Simulator event stays armed at its timeout. Routes are set by whoever
// builds the network (SetDefaultRoute, AddRoute). The counters are the core's, read by name;
// every TraceInterval the trace sources fire with what happened in that interval.
#ifndef RDTP_NS3_ROUTER_H
#define RDTP_NS3_ROUTER_H

#include "rdtp-node-app.h"

#include "ns3/event-id.h"
#include "ns3/inet-socket-address.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/// What a router did in one trace interval (counts) and holds at its end (gauges).
struct RdtpRouterInterval
{
    Time start;
    Time end;
    /// Units answered from the content store / not found there.
    uint64_t csHits = 0;
    uint64_t csMisses = 0;
    /// Missed units already pending upstream (the asker joined the entry).
    uint64_t coalesced = 0;
    /// Units forwarded upstream for the first time.
    uint64_t forwardedUnits = 0;
    /// Content-store entries evicted to make room.
    uint64_t evictions = 0;
    /// Data payload bytes received from upstream / sent downstream (hits and forwarded).
    uint64_t upstreamBytes = 0;
    uint64_t downstreamBytes = 0;
    /// Gauges at the end of the interval: units in the store, units pending.
    uint64_t csEntries = 0;
    uint64_t pitEntries = 0;
};

/// A node id as people read it: its label ("r1", "origin"), else 0x and 16 hex digits.
std::string NodeIdLabel(uint64_t id);

class RdtpRouter : public RdtpNodeApp
{
  public:
    static TypeId GetTypeId();
    RdtpRouter();
    ~RdtpRouter() override;

    /// Send what no other route matches to `nextHop` (a router or a producer).
    void SetDefaultRoute(const InetSocketAddress& nextHop);
    /// Route `key` — a name prefix, or an EID as 64 hex digits — to `nextHop`.
    void AddRoute(const std::string& key, const InetSocketAddress& nextHop);
    /// Another next hop for `key` ("" = the default route, or an EID; a name prefix keeps
    /// one), after those it has, for the forwarding strategy (Config `strategy=asf`) to
    /// choose among.
    void AddNextHop(const std::string& key, const InetSocketAddress& nextHop);

    /// The core's counters and gauges by name (cs_hits, cs_misses, coalesced,
    /// forwarded_units, store_evictions, bytes_in, bytes_out, cs_entries, pit_entries, …);
    /// all zero before the application started.
    std::vector<std::pair<std::string, uint64_t>> GetCounters() const;
    /// One counter by name (0 if unknown).
    uint64_t GetCounter(const std::string& name) const;
    /// Its node id (NodeId, else Label's), as in the Data it serves.
    uint64_t GetNodeId() const;
    /// Warm `path` (the receiver's first hop first) without packets: one fetch of the whole
    /// `object`, whose EID is `eid`, in units of `unit` bytes (rdtp_routers_warm_fetch; the
    /// routers' cores are created if they were not yet). `answered` gets how many units each
    /// router answered. False if the core refused (bytes not the EID's, a router twice).
    static bool WarmFetch(const std::vector<Ptr<RdtpRouter>>& path,
                          const uint8_t eid[32],
                          const std::vector<uint8_t>& object,
                          uint16_t unit,
                          std::vector<uint64_t>& answered);
    /// Close the current trace interval now: fire the trace sources with what happened
    /// since the last one (call after Simulator::Run so the totals of every trace add up to
    /// the counters). Nothing fires if no time passed and nothing changed.
    void FlushInterval();

    /// Per-interval count (hits, misses, evictions).
    typedef void (*CountCallback)(uint64_t delta);
    /// Everything about one interval.
    typedef void (*IntervalCallback)(const RdtpRouterInterval& interval);
    /// A datagram received from / sent to a peer, with the peer's address.
    typedef void (*PacketAddressCallback)(Ptr<const Packet> packet, const Address& peer);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void CreateCore();
    void OnReceive(Ptr<const Packet> packet, const Address& from) override;
    void OnSend(Ptr<const Packet> packet, const Address& to) override;
    void IntervalTick();
    std::vector<uint64_t> ReadCounters() const;

    // Attributes
    uint16_t m_port;
    std::string m_label;
    uint64_t m_nodeId;
    std::string m_config;
    uint64_t m_seed;
    bool m_validation;
    bool m_verify;
    uint32_t m_rcvBufSize;
    Time m_traceInterval;

    // State
    EventId m_intervalEvent;
    Time m_intervalStart;
    std::vector<uint64_t> m_lastCounters;
    bool m_hasDefault;
    InetSocketAddress m_default;
    std::vector<std::pair<std::string, InetSocketAddress>> m_routes;
    std::vector<std::pair<std::string, InetSocketAddress>> m_nextHops;

    // Trace sources
    TracedCallback<uint64_t> m_csHitsTrace;
    TracedCallback<uint64_t> m_csMissesTrace;
    TracedCallback<uint64_t> m_evictionsTrace;
    TracedCallback<const RdtpRouterInterval&> m_intervalTrace;
    TracedCallback<Ptr<const Packet>, const Address&> m_rxTrace;
    TracedCallback<Ptr<const Packet>, const Address&> m_txTrace;
};

} // namespace ns3

#endif
