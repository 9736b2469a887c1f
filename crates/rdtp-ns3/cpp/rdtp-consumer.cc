#include "rdtp-consumer.h"

#include "ns3/address-utils.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdtpConsumer");
NS_OBJECT_ENSURE_REGISTERED(RdtpConsumer);

TypeId
RdtpConsumer::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdtpConsumer")
            .SetParent<RdtpNodeApp>()
            .SetGroupName("Applications")
            .AddConstructor<RdtpConsumer>()
            .AddAttribute("Remote",
                          "Address (InetSocketAddress) of the RdtpProducer",
                          AddressValue(),
                          MakeAddressAccessor(&RdtpConsumer::m_remote),
                          MakeAddressChecker())
            .AddAttribute("ObjectName",
                          "Name of the object to fetch (resolved by the producer)",
                          StringValue("object"),
                          MakeStringAccessor(&RdtpConsumer::m_objectName),
                          MakeStringChecker())
            .AddAttribute("ObjectEid",
                          "The object's EID in hex (64 digits), with ObjectSize: fetch it without "
                          "resolving ObjectName first (no resolution round trip)",
                          StringValue(""),
                          MakeStringAccessor(&RdtpConsumer::m_objectEid),
                          MakeStringChecker())
            .AddAttribute("ObjectSize",
                          "The object's size in bytes (with ObjectEid)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RdtpConsumer::m_objectSize),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Controller",
                          "Congestion controller spec NAME[:KEY=VALUE,...], e.g. bbr, bbr-wifi, "
                          "bbrp:probe_gain=2, fixed:window=32 (rdtp_cc_help() lists them all; default: rdtp_cc_default())",
                          StringValue(rdtp_cc_default()),
                          MakeStringAccessor(&RdtpConsumer::m_controller),
                          MakeStringChecker())
            .AddAttribute("Config",
                          "Receiver spec KEY=VALUE[,...] handed unchanged to the core, e.g. "
                          "rto_k=8,idle_timeout=30s,max_inflight=100 (rdtp_receiver_help() lists the keys)",
                          StringValue(""),
                          MakeStringAccessor(&RdtpConsumer::m_config),
                          MakeStringChecker())
            .AddAttribute("Seed",
                          "Seed of the receiver's randomness",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RdtpConsumer::m_seed),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("RcvBufSize",
                          "UDP receive buffer of the consumer socket, bytes",
                          UintegerValue(8 << 20),
                          MakeUintegerAccessor(&RdtpConsumer::m_rcvBufSize),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("InitialRate",
                          "Informed start (seed 002): attainable payload rate in bytes/s the controller "
                          "starts from (BBR: seeded BtlBw, straight to ProbeBW); 0 = normal start",
                          DoubleValue(0.0),
                          MakeDoubleAccessor(&RdtpConsumer::m_initialRate),
                          MakeDoubleChecker<double>(0.0))
            .AddTraceSource("Delivered",
                            "Bytes newly read by the application",
                            MakeTraceSourceAccessor(&RdtpConsumer::m_deliveredTrace),
                            "ns3::RdtpConsumer::DeliveredCallback")
            .AddTraceSource("Received",
                            "Payload bytes of units newly arrived, before reordering and "
                            "verification (what the path delivered)",
                            MakeTraceSourceAccessor(&RdtpConsumer::m_receivedTrace),
                            "ns3::RdtpConsumer::DeliveredCallback")
            .AddTraceSource("RttSample",
                            "RTT sample and smoothed RTT",
                            MakeTraceSourceAccessor(&RdtpConsumer::m_rttTrace),
                            "ns3::RdtpConsumer::RttSampleCallback")
            .AddTraceSource("Congestion",
                            "Controller snapshot: cwnd (units), pacing rate (bytes/s), "
                            "aggregation, state",
                            MakeTraceSourceAccessor(&RdtpConsumer::m_congestionTrace),
                            "ns3::RdtpConsumer::CongestionCallback")
            .AddTraceSource("Finished",
                            "All bytes arrived and matched the EID; argument: fetch duration",
                            MakeTraceSourceAccessor(&RdtpConsumer::m_finishedTrace),
                            "ns3::RdtpConsumer::FinishedCallback")
            .AddTraceSource("Failed",
                            "The fetch failed; argument: RdtpError",
                            MakeTraceSourceAccessor(&RdtpConsumer::m_failedTrace),
                            "ns3::RdtpConsumer::FailedCallback")
            .AddTraceSource("Tx",
                            "A request datagram was sent",
                            MakeTraceSourceAccessor(&RdtpConsumer::m_txTrace),
                            "ns3::RdtpConsumer::PacketCallback")
            .AddTraceSource("Rx",
                            "A datagram from the producer was received",
                            MakeTraceSourceAccessor(&RdtpConsumer::m_rxTrace),
                            "ns3::RdtpConsumer::PacketCallback")
            .AddTraceSource("Requested",
                            "A request left: first unit, units, re-request",
                            MakeTraceSourceAccessor(&RdtpConsumer::m_requestedTrace),
                            "ns3::RdtpConsumer::RequestedCallback");
    return tid;
}

RdtpConsumer::RdtpConsumer()
    : m_objectSize(0),
      m_seed(0),
      m_rcvBufSize(8 << 20),
      m_initialRate(0.0),
      m_informedRate(0.0),
      m_done(false),
      m_frozen(false),
      m_finishTime(NanoSeconds(-1)),
      m_delivered(0),
      m_received(0),
      m_error(RDTP_ERROR_NONE),
      m_stats(),
      m_readBuf(1 << 20)
{
}

RdtpConsumer::~RdtpConsumer()
{
}

void
RdtpConsumer::DoDispose()
{
    // Release the port (a workload disposes of finished consumers without stopping them).
    CloseSocket();
    RdtpNodeApp::DoDispose();
}

static uint64_t
NowNs()
{
    return static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
}

void
RdtpConsumer::StartApplication()
{
    NS_LOG_FUNCTION(this);
    // The host's keys (its seed; trace events feed the traces), then the user's spec.
    const std::string spec =
        "seed=" + std::to_string(m_seed) + ",trace=true" + (m_config.empty() ? "" : ";" + m_config);
    char why[512] = "";
    m_startTime = Simulator::Now();
    if (!InetSocketAddress::IsMatchingType(m_remote))
    {
        NS_FATAL_ERROR("RdtpConsumer: Remote must be an InetSocketAddress");
    }
    const RdtpAddr peer = ToRdtp(InetSocketAddress::ConvertFrom(m_remote));
    if (m_objectEid.empty())
    {
        m_core = rdtp_receiver_new_from_spec(m_controller.c_str(), spec.c_str(), m_objectName.c_str(), peer, NowNs(),
                                             why, sizeof why);
    }
    else
    {
        uint8_t eid[32];
        if (m_objectEid.size() != 64)
            NS_FATAL_ERROR("RdtpConsumer: ObjectEid must be 64 hex digits");
        for (int i = 0; i < 32; i++)
            eid[i] = static_cast<uint8_t>(std::stoi(m_objectEid.substr(2 * i, 2), nullptr, 16));
        m_core = rdtp_receiver_new_known_from_spec(m_controller.c_str(), spec.c_str(), eid, m_objectSize, peer,
                                                   NowNs(), why, sizeof why);
    }
    if (m_core == nullptr)
    {
        NS_FATAL_ERROR("RdtpConsumer: the core refused the configuration (Controller '"
                       << m_controller << "', Config '" << m_config << "'): " << why);
    }
    const double rate = m_initialRateSource ? m_initialRateSource() : m_initialRate;
    if (rate > 0.0 && rdtp_receiver_informed_start(m_core, NowNs(), rate))
        m_informedRate = rate;
    if (!OpenSocket(0, m_rcvBufSize) || m_socket->Connect(m_remote) != 0)
    {
        NS_FATAL_ERROR("RdtpConsumer: cannot bind/connect the UDP socket");
    }
    Service();
}

void
RdtpConsumer::StopApplication()
{
    NS_LOG_FUNCTION(this);
    CancelTimer();
    CloseSocket();
    m_done = true;
    Freeze();
}

void
RdtpConsumer::Freeze()
{
    if (m_core != nullptr && !m_frozen)
    {
        rdtp_receiver_stats(m_core, &m_stats);
        m_frozen = true;
    }
}

bool
RdtpConsumer::Active() const
{
    return m_core != nullptr && !m_done;
}

void
RdtpConsumer::OnReceive(Ptr<const Packet> packet, const Address& from)
{
    m_rxTrace(packet);
}

void
RdtpConsumer::OnSend(Ptr<const Packet> packet, const Address& to)
{
    m_txTrace(packet);
}

void
RdtpConsumer::Service()
{
    if (!Active())
    {
        return;
    }
    Transmit();
    const uint64_t received = rdtp_receiver_bytes_received(m_core);
    if (received > m_received)
    {
        m_receivedTrace(received - m_received);
        m_received = received;
    }
    size_t n;
    while ((n = rdtp_receiver_read(m_core, m_readBuf.data(), m_readBuf.size())) > 0)
    {
        m_delivered += n;
        m_deliveredTrace(n);
    }
    RdtpEvent ev;
    bool finished = false;
    bool failed = false;
    while (rdtp_receiver_poll_event(m_core, &ev))
    {
        switch (ev.kind)
        {
        case RDTP_EVENT_KIND_RTT_SAMPLE:
            m_rttTrace(NanoSeconds(static_cast<int64_t>(ev.rtt_ns)),
                       NanoSeconds(static_cast<int64_t>(ev.srtt_ns)));
            break;
        case RDTP_EVENT_KIND_CONGESTION:
            m_congestionTrace(ev.cwnd,
                              ev.pacing_rate,
                              ev.aggregation,
                              std::string(ev.state != nullptr ? ev.state : ""));
            break;
        case RDTP_EVENT_KIND_REQUESTED:
            m_requestedTrace(ev.unit_index, ev.units, ev.retransmission);
            break;
        case RDTP_EVENT_KIND_FINISHED:
            finished = true;
            break;
        case RDTP_EVENT_KIND_FAILED:
            failed = true;
            m_error = static_cast<int>(ev.error);
            break;
        default:
            break;
        }
    }
    if (finished || failed)
    {
        m_done = true;
        CancelTimer();
        Freeze();
        if (finished)
        {
            m_finishTime = Simulator::Now();
            m_finishedTrace(Simulator::Now() - m_startTime);
        }
        else
        {
            m_failedTrace(m_error);
        }
        return;
    }
    ArmTimer();
}

RdtpStats
RdtpConsumer::GetStats() const
{
    if (m_frozen || m_core == nullptr)
    {
        return m_stats;
    }
    RdtpStats s;
    rdtp_receiver_stats(m_core, &s);
    return s;
}

int32_t
RdtpConsumer::GetStatus() const
{
    if (m_finishTime.IsPositive() || (m_finishTime.IsZero()))
    {
        return 1;
    }
    if (m_error != RDTP_ERROR_NONE)
    {
        return 2;
    }
    return 0;
}

Time
RdtpConsumer::GetFinishTime() const
{
    return m_finishTime;
}

uint64_t
RdtpConsumer::GetDeliveredBytes() const
{
    return m_delivered;
}

int
RdtpConsumer::GetError() const
{
    return m_error;
}

std::vector<RdtpSource>
RdtpConsumer::GetSources() const
{
    std::vector<RdtpSource> sources(rdtp_receiver_sources(m_core, nullptr, 0));
    if (!sources.empty())
        rdtp_receiver_sources(m_core, sources.data(), sources.size());
    return sources;
}

void
RdtpConsumer::SetInitialRateSource(std::function<double()> source)
{
    m_initialRateSource = std::move(source);
}

double
RdtpConsumer::GetInformedRate() const
{
    return m_informedRate;
}

} // namespace ns3
