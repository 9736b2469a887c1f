#include "rdtp-producer.h"

#include "ns3/boolean.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4-address.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "ns3/udp-socket-factory.h"

#include <cctype>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdtpProducer");
NS_OBJECT_ENSURE_REGISTERED(RdtpProducer);

TypeId
RdtpProducer::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdtpProducer")
            .SetParent<Application>()
            .SetGroupName("Applications")
            .AddConstructor<RdtpProducer>()
            .AddAttribute("Port",
                          "UDP port the producer listens on",
                          UintegerValue(7447),
                          MakeUintegerAccessor(&RdtpProducer::m_port),
                          MakeUintegerChecker<uint16_t>())
            .AddAttribute("Objects",
                          "Generated objects served: \"name:size:seed,name2:size2:seed2\"",
                          StringValue(""),
                          MakeStringAccessor(&RdtpProducer::m_objects),
                          MakeStringChecker())
            .AddAttribute("Label",
                          "Node id label (1-8 printable characters) named in every Data it sends",
                          StringValue("origin"),
                          MakeStringAccessor(&RdtpProducer::m_label),
                          MakeStringChecker())
            .AddAttribute("AddressValidation",
                          "Answer requests without a valid address token with a Retry (RFC 9000 "
                          "section 8); off by default: a simulation has no spoofers",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdtpProducer::m_validation),
                          MakeBooleanChecker())
            .AddAttribute("RcvBufSize",
                          "UDP receive buffer of the producer socket, bytes",
                          UintegerValue(8 << 20),
                          MakeUintegerAccessor(&RdtpProducer::m_rcvBufSize),
                          MakeUintegerChecker<uint32_t>())
            .AddTraceSource("Rx",
                            "A datagram from a consumer",
                            MakeTraceSourceAccessor(&RdtpProducer::m_rxTrace),
                            "ns3::RdtpProducer::PacketAddressCallback")
            .AddTraceSource("Tx",
                            "A reply datagram to a consumer",
                            MakeTraceSourceAccessor(&RdtpProducer::m_txTrace),
                            "ns3::RdtpProducer::PacketAddressCallback");
    return tid;
}

RdtpProducer::RdtpProducer()
    : m_port(7447),
      m_validation(false),
      m_rcvBufSize(8 << 20),
      m_server(nullptr),
      m_in(RDTP_MAX_DATAGRAM),
      m_out(RDTP_MAX_DATAGRAM)
{
}

RdtpProducer::~RdtpProducer()
{
    rdtp_server_free(m_server);
    m_server = nullptr;
}

void
RdtpProducer::DoDispose()
{
    m_socket = nullptr;
    rdtp_server_free(m_server);
    m_server = nullptr;
    Application::DoDispose();
}

void
RdtpProducer::CreateServer()
{
    std::vector<std::string> names;
    std::vector<uint64_t> sizes;
    std::vector<uint64_t> seeds;
    std::stringstream all(m_objects);
    std::string item;
    while (std::getline(all, item, ','))
    {
        if (item.empty())
        {
            continue;
        }
        size_t a = item.find(':');
        size_t b = item.find(':', a == std::string::npos ? a : a + 1);
        if (a == std::string::npos || b == std::string::npos)
        {
            NS_FATAL_ERROR("RdtpProducer: bad Objects entry '" << item
                                                              << "' (want name:size:seed)");
        }
        names.push_back(item.substr(0, a));
        sizes.push_back(std::stoull(item.substr(a + 1, b - a - 1)));
        seeds.push_back(std::stoull(item.substr(b + 1)));
    }
    std::vector<const char*> cnames;
    for (const auto& n : names)
    {
        cnames.push_back(n.c_str());
    }
    m_server = rdtp_server_new_pattern(cnames.data(), sizes.data(), seeds.data(), names.size());
    if (m_server == nullptr)
    {
        NS_FATAL_ERROR("RdtpProducer: the core refused the object list");
    }
    if (!rdtp_server_set_id(m_server, rdtp_node_id(m_label.c_str())))
    {
        NS_FATAL_ERROR("RdtpProducer: Label '" << m_label << "' is not a node id (1-8 printable characters)");
    }
    rdtp_server_set_validation(m_server, m_validation, nullptr);
}

bool
RdtpProducer::Resolve(const std::string& name, std::string& eidHex, uint64_t& size)
{
    if (m_server == nullptr)
    {
        CreateServer();
    }
    uint8_t eid[32];
    if (!rdtp_server_resolve(m_server, name.c_str(), eid, &size))
    {
        return false;
    }
    static const char* digits = "0123456789abcdef";
    eidHex.clear();
    for (uint8_t b : eid)
    {
        eidHex += digits[b >> 4];
        eidHex += digits[b & 15];
    }
    return true;
}

bool
RdtpProducer::Read(const std::string& eidHex, uint64_t size, std::vector<uint8_t>& out)
{
    if (m_server == nullptr)
    {
        CreateServer();
    }
    uint8_t eid[32];
    if (!HexToEid(eidHex, eid))
    {
        return false;
    }
    out.resize(size);
    return rdtp_server_read(m_server, eid, 0, out.data(), out.size());
}

bool
HexToEid(const std::string& hex, uint8_t eid[32])
{
    if (hex.size() != 64)
    {
        return false;
    }
    for (size_t i = 0; i < 32; i++)
    {
        const std::string byte = hex.substr(2 * i, 2);
        if (!std::isxdigit(static_cast<unsigned char>(byte[0])) || !std::isxdigit(static_cast<unsigned char>(byte[1])))
        {
            return false;
        }
        eid[i] = static_cast<uint8_t>(std::stoul(byte, nullptr, 16));
    }
    return true;
}

void
RdtpProducer::StartApplication()
{
    NS_LOG_FUNCTION(this);
    if (m_server == nullptr)
    {
        CreateServer();
    }
    m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    m_socket->SetAttribute("RcvBufSize", UintegerValue(m_rcvBufSize));
    if (m_socket->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port)) != 0)
    {
        NS_FATAL_ERROR("RdtpProducer: cannot bind UDP port " << m_port);
    }
    m_socket->SetRecvCallback(MakeCallback(&RdtpProducer::HandleRead, this));
}

void
RdtpProducer::StopApplication()
{
    if (m_socket)
    {
        m_socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
        m_socket->Close();
    }
}

void
RdtpProducer::HandleRead(Ptr<Socket> socket)
{
    Ptr<Packet> packet;
    Address from;
    while ((packet = socket->RecvFrom(from)))
    {
        m_rxTrace(packet, from);
        uint32_t len = packet->CopyData(m_in.data(), m_in.size());
        const InetSocketAddress src = InetSocketAddress::ConvertFrom(from);
        const RdtpAddr addr = rdtp_addr_v4(src.GetIpv4().Get(), src.GetPort());
        const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
        size_t replies = rdtp_server_handle(m_server, now, addr, m_in.data(), len);
        for (size_t i = 0; i < replies; i++)
        {
            size_t n = rdtp_server_next(m_server, m_out.data(), m_out.size());
            if (n == 0)
            {
                break;
            }
            Ptr<Packet> reply = Create<Packet>(m_out.data(), static_cast<uint32_t>(n));
            m_txTrace(reply, from);
            socket->SendTo(reply, 0, from);
        }
    }
}

RdtpServerStats
RdtpProducer::GetServerStats() const
{
    RdtpServerStats s{};
    if (m_server != nullptr)
    {
        rdtp_server_stats(m_server, &s);
    }
    return s;
}

} // namespace ns3
