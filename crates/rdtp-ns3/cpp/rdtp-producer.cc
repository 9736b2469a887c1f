#include "rdtp-producer.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

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
            .SetParent<RdtpNodeApp>()
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
      m_rcvBufSize(8 << 20)
{
}

RdtpProducer::~RdtpProducer()
{
}

void
RdtpProducer::DoDispose()
{
    RdtpNodeApp::DoDispose();
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
    m_core = rdtp_server_new_pattern(cnames.data(), sizes.data(), seeds.data(), names.size());
    if (m_core == nullptr)
    {
        NS_FATAL_ERROR("RdtpProducer: the core refused the object list");
    }
    if (!rdtp_server_set_id(m_core, rdtp_node_id(m_label.c_str())))
    {
        NS_FATAL_ERROR("RdtpProducer: Label '" << m_label << "' is not a node id (1-8 printable characters)");
    }
    rdtp_server_set_validation(m_core, m_validation, nullptr);
}

bool
RdtpProducer::Resolve(const std::string& name, std::string& eidHex, uint64_t& size)
{
    if (m_core == nullptr)
    {
        CreateServer();
    }
    uint8_t eid[32];
    if (!rdtp_server_resolve(m_core, name.c_str(), eid, &size))
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
    if (m_core == nullptr)
    {
        CreateServer();
    }
    uint8_t eid[32];
    if (!HexToEid(eidHex, eid))
    {
        return false;
    }
    out.resize(size);
    return rdtp_server_read(m_core, eid, 0, out.data(), out.size());
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
    if (m_core == nullptr)
    {
        CreateServer();
    }
    if (!OpenSocket(m_port, m_rcvBufSize))
    {
        NS_FATAL_ERROR("RdtpProducer: cannot bind UDP port " << m_port);
    }
}

void
RdtpProducer::StopApplication()
{
    CloseSocket();
}

void
RdtpProducer::OnReceive(Ptr<const Packet> packet, const Address& from)
{
    m_rxTrace(packet, from);
}

void
RdtpProducer::OnSend(Ptr<const Packet> packet, const Address& to)
{
    m_txTrace(packet, to);
}

RdtpServerStats
RdtpProducer::GetServerStats() const
{
    RdtpServerStats s{};
    if (m_core != nullptr)
    {
        rdtp_server_stats(m_core, &s);
    }
    return s;
}

} // namespace ns3
