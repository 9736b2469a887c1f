// RdtpRouter: datagrams between one ns-3 UDP socket and the rdtp router core; see
// rdtp-router.h. No protocol logic: forwarding, caching and coalescing are the core's.
#include "rdtp-router.h"

#include "ns3/boolean.h"
#include "ns3/ipv4-address.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <cstdio>
#include <map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdtpRouter");
NS_OBJECT_ENSURE_REGISTERED(RdtpRouter);

TypeId
RdtpRouter::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdtpRouter")
            .SetParent<RdtpNodeApp>()
            .SetGroupName("Applications")
            .AddConstructor<RdtpRouter>()
            .AddAttribute("Port",
                          "UDP port of the router (downstreams send to it, upstreams answer to it)",
                          UintegerValue(7447),
                          MakeUintegerAccessor(&RdtpRouter::m_port),
                          MakeUintegerChecker<uint16_t>())
            .AddAttribute("Label",
                          "Node id label (1-8 printable characters) named in the Data it serves",
                          StringValue("router"),
                          MakeStringAccessor(&RdtpRouter::m_label),
                          MakeStringChecker())
            .AddAttribute("NodeId",
                          "Node id as the big-endian integer of its 8 bytes; 0 = the id of Label",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RdtpRouter::m_nodeId),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Config",
                          "Router spec KEY=VALUE[,...] handed unchanged to the core, e.g. "
                          "cs_units=1000,cs_policy=lfu,strategy=asf (rdtp_router_help() lists the keys; "
                          "before it the router has a simulated one's defaults: no byte limit on the "
                          "store, no upstream timeout, no source limits)",
                          StringValue(""),
                          MakeStringAccessor(&RdtpRouter::m_config),
                          MakeStringChecker())
            .AddAttribute("Seed",
                          "Seed of the router's randomness (tags, random replacement, prob:P)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RdtpRouter::m_seed),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("AddressValidation",
                          "Answer downstream requests without a valid address token with a Retry "
                          "(RFC 9000 section 8); off by default: a simulation has no spoofers",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdtpRouter::m_validation),
                          MakeBooleanChecker())
            .AddAttribute("Verify",
                          "Verify blocks before caching them (the default, and all rdtp route does); "
                          "false caches every unit as it arrives, unchecked and without proof "
                          "requests: an experiment-only baseline for what verification costs",
                          BooleanValue(true),
                          MakeBooleanAccessor(&RdtpRouter::m_verify),
                          MakeBooleanChecker())
            .AddAttribute("RcvBufSize",
                          "UDP receive buffer of the router socket, bytes",
                          UintegerValue(8 << 20),
                          MakeUintegerAccessor(&RdtpRouter::m_rcvBufSize),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("TraceInterval",
                          "How often the per-interval trace sources fire; 0 = only on FlushInterval",
                          TimeValue(MilliSeconds(100)),
                          MakeTimeAccessor(&RdtpRouter::m_traceInterval),
                          MakeTimeChecker(Time(0)))
            .AddTraceSource("CsHits",
                            "Units answered from the content store in the last trace interval",
                            MakeTraceSourceAccessor(&RdtpRouter::m_csHitsTrace),
                            "ns3::RdtpRouter::CountCallback")
            .AddTraceSource("CsMisses",
                            "Units the content store did not hold in the last trace interval",
                            MakeTraceSourceAccessor(&RdtpRouter::m_csMissesTrace),
                            "ns3::RdtpRouter::CountCallback")
            .AddTraceSource("Evictions",
                            "Content-store entries evicted in the last trace interval",
                            MakeTraceSourceAccessor(&RdtpRouter::m_evictionsTrace),
                            "ns3::RdtpRouter::CountCallback")
            .AddTraceSource("Interval",
                            "Counts of the last trace interval and the gauges at its end",
                            MakeTraceSourceAccessor(&RdtpRouter::m_intervalTrace),
                            "ns3::RdtpRouter::IntervalCallback")
            .AddTraceSource("Rx",
                            "A datagram from a peer",
                            MakeTraceSourceAccessor(&RdtpRouter::m_rxTrace),
                            "ns3::RdtpRouter::PacketAddressCallback")
            .AddTraceSource("Tx",
                            "A datagram to a peer",
                            MakeTraceSourceAccessor(&RdtpRouter::m_txTrace),
                            "ns3::RdtpRouter::PacketAddressCallback");
    return tid;
}

RdtpRouter::RdtpRouter()
    : m_port(7447),
      m_nodeId(0),
      m_seed(0),
      m_validation(false),
      m_verify(true),
      m_rcvBufSize(8 << 20),
      m_hasDefault(false),
      m_default(Ipv4Address::GetAny(), 0)
{
}

RdtpRouter::~RdtpRouter()
{
}

void
RdtpRouter::DoDispose()
{
    m_intervalEvent.Cancel();
    RdtpNodeApp::DoDispose();
}

void
RdtpRouter::SetDefaultRoute(const InetSocketAddress& nextHop)
{
    m_hasDefault = true;
    m_default = nextHop;
    if (m_core != nullptr)
        rdtp_router_set_default_route(m_core, ToRdtp(nextHop));
}

void
RdtpRouter::AddRoute(const std::string& key, const InetSocketAddress& nextHop)
{
    m_routes.emplace_back(key, nextHop);
    if (m_core != nullptr && !rdtp_router_add_route(m_core, key.c_str(), ToRdtp(nextHop)))
        NS_FATAL_ERROR("RdtpRouter: the core refused the route '" << key << "'");
}

void
RdtpRouter::AddNextHop(const std::string& key, const InetSocketAddress& nextHop)
{
    m_nextHops.emplace_back(key, nextHop);
    if (m_core != nullptr && !rdtp_router_add_next_hop(m_core, key.c_str(), ToRdtp(nextHop)))
        NS_FATAL_ERROR("RdtpRouter: the core refused the next hop for '" << key << "'");
}

std::string
NodeIdLabel(uint64_t id)
{
    char buf[32];
    return rdtp_node_id_label(id, buf, sizeof buf) > 0 ? std::string(buf) : std::string();
}

uint64_t
RdtpRouter::GetNodeId() const
{
    return m_nodeId != 0 ? m_nodeId : rdtp_node_id(m_label.c_str());
}

bool
RdtpRouter::WarmFetch(const std::vector<Ptr<RdtpRouter>>& path,
                      const uint8_t eid[32],
                      const std::vector<uint8_t>& object,
                      uint16_t unit,
                      std::vector<uint64_t>& answered)
{
    std::vector<RdtpNode*> cores;
    for (const auto& r : path)
    {
        if (r->m_core == nullptr)
            r->CreateCore();
        cores.push_back(r->m_core);
    }
    answered.assign(path.size(), 0);
    return rdtp_routers_warm_fetch(cores.data(), cores.size(), eid, object.data(), object.size(), unit, answered.data());
}

void
RdtpRouter::CreateCore()
{
    const uint64_t id = GetNodeId();
    if (id == 0)
        NS_FATAL_ERROR("RdtpRouter: Label '" << m_label << "' is not a node id (1-8 printable characters)");
    // The host's keys (its id, seed and address validation), then the user's spec.
    char hex[20];
    std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(id));
    const std::string spec = std::string("id=") + hex + ",seed=" + std::to_string(m_seed) +
                             ",validation=" + (m_validation ? "true" : "false") +
                             (m_config.empty() ? "" : ";" + m_config);
    char why[512] = "";
    m_core = rdtp_router_new_from_spec(spec.c_str(), why, sizeof why);
    if (m_core == nullptr)
        NS_FATAL_ERROR("RdtpRouter: the core refused Config '" << m_config << "': " << why);
    if (!m_verify)
        rdtp_router_cache_unverified(m_core, true);
    if (m_hasDefault)
        rdtp_router_set_default_route(m_core, ToRdtp(m_default));
    for (const auto& [key, hop] : m_routes)
        if (!rdtp_router_add_route(m_core, key.c_str(), ToRdtp(hop)))
            NS_FATAL_ERROR("RdtpRouter: the core refused the route '" << key << "'");
    for (const auto& [key, hop] : m_nextHops)
        if (!rdtp_router_add_next_hop(m_core, key.c_str(), ToRdtp(hop)))
            NS_FATAL_ERROR("RdtpRouter: the core refused the next hop for '" << key << "'");
}

void
RdtpRouter::StartApplication()
{
    NS_LOG_FUNCTION(this);
    if (m_core == nullptr)
        CreateCore();
    if (!OpenSocket(m_port, m_rcvBufSize))
        NS_FATAL_ERROR("RdtpRouter: cannot bind UDP port " << m_port);
    m_intervalStart = Simulator::Now();
    m_lastCounters = ReadCounters();
    if (m_traceInterval.IsStrictlyPositive())
        m_intervalEvent = Simulator::Schedule(m_traceInterval, &RdtpRouter::IntervalTick, this);
}

void
RdtpRouter::StopApplication()
{
    CancelTimer();
    m_intervalEvent.Cancel();
    CloseSocket();
}

void
RdtpRouter::OnReceive(Ptr<const Packet> packet, const Address& from)
{
    m_rxTrace(packet, from);
}

void
RdtpRouter::OnSend(Ptr<const Packet> packet, const Address& to)
{
    m_txTrace(packet, to);
}

std::vector<uint64_t>
RdtpRouter::ReadCounters() const
{
    std::vector<uint64_t> v(rdtp_router_counter_count(), 0);
    if (m_core != nullptr)
        rdtp_router_counters(m_core, v.data(), v.size());
    return v;
}

std::vector<std::pair<std::string, uint64_t>>
RdtpRouter::GetCounters() const
{
    const std::vector<uint64_t> v = ReadCounters();
    std::vector<std::pair<std::string, uint64_t>> named;
    for (size_t i = 0; i < v.size(); i++)
        named.emplace_back(rdtp_router_counter_name(i), v[i]);
    return named;
}

uint64_t
RdtpRouter::GetCounter(const std::string& name) const
{
    for (const auto& [n, v] : GetCounters())
        if (n == name)
            return v;
    return 0;
}

/// Index of each counter the interval traces use, by name (the C ABI's order is fixed).
static size_t
CounterIndex(const std::string& name)
{
    static std::map<std::string, size_t> index;
    if (index.empty())
        for (size_t i = 0; i < rdtp_router_counter_count(); i++)
            index[rdtp_router_counter_name(i)] = i;
    auto it = index.find(name);
    if (it == index.end())
        NS_FATAL_ERROR("RdtpRouter: the core has no counter '" << name << "'");
    return it->second;
}

void
RdtpRouter::FlushInterval()
{
    const std::vector<uint64_t> now = ReadCounters();
    if (m_lastCounters.size() != now.size())
        m_lastCounters.assign(now.size(), 0);
    if (Simulator::Now() == m_intervalStart && now == m_lastCounters)
        return;
    auto delta = [&](const char* name) {
        const size_t i = CounterIndex(name);
        return now[i] - m_lastCounters[i];
    };
    RdtpRouterInterval iv;
    iv.start = m_intervalStart;
    iv.end = Simulator::Now();
    iv.csHits = delta("cs_hits");
    iv.csMisses = delta("cs_misses");
    iv.coalesced = delta("coalesced");
    iv.forwardedUnits = delta("forwarded_units");
    iv.evictions = delta("store_evictions");
    iv.upstreamBytes = delta("bytes_in");
    iv.downstreamBytes = delta("bytes_out");
    iv.csEntries = now[CounterIndex("cs_entries")];
    iv.pitEntries = now[CounterIndex("pit_entries")];
    m_lastCounters = now;
    m_intervalStart = Simulator::Now();
    m_csHitsTrace(iv.csHits);
    m_csMissesTrace(iv.csMisses);
    m_evictionsTrace(iv.evictions);
    m_intervalTrace(iv);
}

void
RdtpRouter::IntervalTick()
{
    FlushInterval();
    m_intervalEvent = Simulator::Schedule(m_traceInterval, &RdtpRouter::IntervalTick, this);
}

} // namespace ns3
