// RdtpNodeApp: datagrams and time between one ns-3 UDP socket and an rdtp node; see
// rdtp-node-app.h.
#include "rdtp-node-app.h"

#include "ns3/ipv4-address.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"
#include "ns3/udp-socket-factory.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdtpNodeApp);

RdtpAddr
ToRdtp(const InetSocketAddress& a)
{
    return rdtp_addr_v4(a.GetIpv4().Get(), a.GetPort());
}

InetSocketAddress
FromRdtp(const RdtpAddr& a)
{
    const uint32_t ip = (uint32_t(a.ip[0]) << 24) | (uint32_t(a.ip[1]) << 16) | (uint32_t(a.ip[2]) << 8) | a.ip[3];
    return InetSocketAddress(Ipv4Address(ip), a.port);
}

TypeId
RdtpNodeApp::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdtpNodeApp").SetParent<Application>().SetGroupName("Applications");
    return tid;
}

RdtpNodeApp::RdtpNodeApp()
    : m_core(nullptr),
      m_rxBuf(RDTP_MAX_DATAGRAM),
      m_txBuf(RDTP_MAX_DATAGRAM)
{
}

RdtpNodeApp::~RdtpNodeApp()
{
    rdtp_node_free(m_core);
    m_core = nullptr;
}

void
RdtpNodeApp::DoDispose()
{
    m_timer.Cancel();
    m_socket = nullptr;
    rdtp_node_free(m_core);
    m_core = nullptr;
    Application::DoDispose();
}

static uint64_t
NowNs()
{
    return static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
}

bool
RdtpNodeApp::OpenSocket(uint16_t port, uint32_t rcvBufSize)
{
    m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    m_socket->SetAttribute("RcvBufSize", UintegerValue(rcvBufSize));
    const int bound = port == 0 ? m_socket->Bind() : m_socket->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    if (bound != 0)
        return false;
    m_socket->SetRecvCallback(MakeCallback(&RdtpNodeApp::HandleRead, this));
    return true;
}

void
RdtpNodeApp::CloseSocket()
{
    if (m_socket)
    {
        m_socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
        m_socket->Close();
    }
}

bool
RdtpNodeApp::Active() const
{
    return m_core != nullptr;
}

void
RdtpNodeApp::OnReceive(Ptr<const Packet> packet, const Address& from)
{
}

void
RdtpNodeApp::OnSend(Ptr<const Packet> packet, const Address& to)
{
}

void
RdtpNodeApp::HandleRead(Ptr<Socket> socket)
{
    Ptr<Packet> packet;
    Address from;
    while ((packet = socket->RecvFrom(from)))
    {
        if (!Active() || !InetSocketAddress::IsMatchingType(from))
            continue;
        OnReceive(packet, from);
        const uint32_t len = packet->CopyData(m_rxBuf.data(), m_rxBuf.size());
        rdtp_node_handle_datagram(m_core, NowNs(), ToRdtp(InetSocketAddress::ConvertFrom(from)), m_rxBuf.data(), len);
        Service();
    }
}

void
RdtpNodeApp::HandleTimer()
{
    if (!Active())
        return;
    rdtp_node_handle_timeout(m_core, NowNs());
    Service();
}

void
RdtpNodeApp::Service()
{
    Transmit();
    ArmTimer();
}

void
RdtpNodeApp::Transmit()
{
    const uint64_t now = NowNs();
    RdtpAddr to;
    size_t n;
    while ((n = rdtp_node_poll_transmit(m_core, now, m_txBuf.data(), m_txBuf.size(), &to)) > 0)
    {
        Ptr<Packet> p = Create<Packet>(m_txBuf.data(), static_cast<uint32_t>(n));
        const InetSocketAddress peer = FromRdtp(to);
        OnSend(p, peer);
        m_socket->SendTo(p, 0, peer);
    }
}

void
RdtpNodeApp::ArmTimer()
{
    uint64_t at = 0;
    if (!rdtp_node_poll_timeout(m_core, &at))
    {
        m_timer.Cancel();
        return;
    }
    const Time when = std::max(NanoSeconds(static_cast<int64_t>(at)), Simulator::Now());
    if (m_timer.IsRunning() && m_timerAt == when)
        return;
    m_timer.Cancel();
    m_timerAt = when;
    m_timer = Simulator::Schedule(when - Simulator::Now(), &RdtpNodeApp::HandleTimer, this);
}

void
RdtpNodeApp::CancelTimer()
{
    m_timer.Cancel();
}

} // namespace ns3
