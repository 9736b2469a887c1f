// Receive loss by node role and server-link outages: see rdtp-impair.h.
#include "rdtp-impair.h"

#include "ns3/arp-l3-protocol.h"
#include "ns3/ipv4-header.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/loopback-net-device.h"
#include "ns3/network-module.h"
#include "ns3/traffic-control-layer.h"

#include <algorithm>
#include <tuple>

namespace ns3
{

namespace
{

/// The IPv4 receive path of one device: drop, or hand to the traffic control layer.
class RxFilter : public SimpleRefCount<RxFilter>
{
  public:
    RxFilter(Ptr<TrafficControlLayer> tc, double loss, int64_t stream, uint64_t* lost, uint64_t* cut)
        : m_tc(tc),
          m_loss(loss),
          m_rng(CreateObject<UniformRandomVariable>()),
          m_lost(lost),
          m_cut(cut)
    {
        m_rng->SetStream(stream);
    }

    void Receive(Ptr<NetDevice> device,
                 Ptr<const Packet> packet,
                 uint16_t protocol,
                 const Address& from,
                 const Address& to,
                 NetDevice::PacketType type)
    {
        if (m_down)
        {
            ++*m_cut;
            return;
        }
        if (m_loss > 0.0 && Lost(packet))
        {
            ++*m_lost;
            return;
        }
        m_tc->Receive(device, packet, protocol, from, to, type);
    }

    /// One draw per IP datagram: every fragment of a datagram shares its first fragment's
    /// fate, so the loss rate is per datagram (per rdtp request or Data, as S1's per-packet
    /// rates are per NDN packet) whatever the MTU.
    bool Lost(Ptr<const Packet> packet)
    {
        Ipv4Header ip;
        if (packet->PeekHeader(ip) == 0 || (ip.IsLastFragment() && ip.GetFragmentOffset() == 0))
            return m_rng->GetValue() < m_loss; // not a fragment
        const Key key{ip.GetSource().Get(), ip.GetDestination().Get(), ip.GetIdentification(), ip.GetProtocol()};
        auto it = m_fragmented.find(key);
        bool lost;
        if (it == m_fragmented.end())
        {
            lost = m_rng->GetValue() < m_loss;
            if (m_fragmented.size() > 100000)
                m_fragmented.clear(); // datagrams whose last fragment never came
            m_fragmented[key] = lost;
        }
        else
            lost = it->second;
        if (ip.IsLastFragment() && it != m_fragmented.end())
            m_fragmented.erase(it);
        return lost;
    }

    void SetDown(bool down)
    {
        m_down = down;
    }

  private:
    Ptr<TrafficControlLayer> m_tc;
    double m_loss;
    Ptr<UniformRandomVariable> m_rng;
    uint64_t* m_lost;
    uint64_t* m_cut;
    bool m_down = false;
    using Key = std::tuple<uint32_t, uint32_t, uint16_t, uint8_t>;
    /// Fragmented datagrams seen in part: whether they are lost.
    std::map<Key, bool> m_fragmented;
};

/// Put an RxFilter with `loss` on every device of `node` (loopback excepted): the node's
/// traffic-control handlers are taken off and registered again, IPv4 through the filter.
std::map<Ptr<NetDevice>, Ptr<RxFilter>>
FilterNode(Ptr<Node> node, double loss, uint64_t* lost, uint64_t* cut)
{
    Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
    if (!tc)
        Fail("impairments need the internet stack on every node");
    node->UnregisterProtocolHandler(MakeCallback(&TrafficControlLayer::Receive, tc));
    std::map<Ptr<NetDevice>, Ptr<RxFilter>> filters;
    for (uint32_t d = 0; d < node->GetNDevices(); d++)
    {
        Ptr<NetDevice> dev = node->GetDevice(d);
        if (DynamicCast<LoopbackNetDevice>(dev))
            continue; // its handler is Ipv4L3Protocol's own, untouched
        const int64_t stream = 100000 + 16 * static_cast<int64_t>(node->GetId()) + d;
        Ptr<RxFilter> f = Create<RxFilter>(tc, loss, stream, lost, cut);
        node->RegisterProtocolHandler(MakeCallback(&RxFilter::Receive, f), Ipv4L3Protocol::PROT_NUMBER, dev);
        node->RegisterProtocolHandler(MakeCallback(&TrafficControlLayer::Receive, tc), ArpL3Protocol::PROT_NUMBER, dev);
        filters[dev] = f;
    }
    return filters;
}

/// "start:end,start:end" → intervals (scenario seconds).
std::vector<std::pair<double, double>>
ParseOutages(const std::string& text)
{
    std::vector<std::pair<double, double>> out;
    for (const auto& item : Split(text, ','))
    {
        const size_t colon = item.find(':');
        if (colon == std::string::npos)
            Fail("Outage '" + item + "': want start:end (seconds)");
        double a = 0, b = 0;
        try
        {
            a = std::stod(item.substr(0, colon));
            b = std::stod(item.substr(colon + 1));
        }
        catch (const std::exception&)
        {
            Fail("Outage '" + item + "': want start:end (seconds)");
        }
        if (!(a >= 0.0 && b > a))
            Fail("Outage '" + item + "': want 0 <= start < end");
        out.emplace_back(a, b);
    }
    return out;
}

} // namespace

bool
HasImpairments(const TopologyParams& p)
{
    return p.rxLossClient > 0.0 || p.rxLossRouter > 0.0 || p.rxLossServer > 0.0 || !p.outage.empty();
}

std::shared_ptr<ImpairmentCounts>
InstallImpairments(const RunParams& p, const Net& net)
{
    auto counts = std::make_shared<ImpairmentCounts>();
    if (!HasImpairments(p))
        return counts;
    if (p.topology == "graph")
        Fail("RxLoss* and Outage are for the dumbbell and wifi topologies");
    for (double l : {p.rxLossClient, p.rxLossRouter, p.rxLossServer})
        if (!(l >= 0.0 && l < 1.0))
            Fail("RxLossClient, RxLossRouter and RxLossServer must be in [0, 1)");
    const auto outages = ParseOutages(p.outage);
    uint64_t* cut = &(*counts)["outage"];
    std::map<Ptr<NetDevice>, Ptr<RxFilter>> all;
    auto filter = [&](Ptr<Node> node, double loss, const std::string& role) {
        for (const auto& [dev, f] : FilterNode(node, loss, &(*counts)["rx_loss_" + role], cut))
            all[dev] = f;
    };
    for (const auto& c : net.clients)
        filter(c, p.rxLossClient, "client");
    for (const auto& [name, node] : net.named)
        if (name != "server")
            filter(node, p.rxLossRouter, "router");
    filter(net.server, p.rxLossServer, "server");
    if (!outages.empty() && net.serverLink.size() != 2)
        Fail("Outage: this topology has no server access link");
    for (const auto& [from, to] : outages)
    {
        for (const auto& dev : net.serverLink)
        {
            Ptr<RxFilter> f = all.at(dev);
            Simulator::Schedule(AtScenario(p, from), [f]() { f->SetDown(true); });
            Simulator::Schedule(AtScenario(p, to), [f]() { f->SetDown(false); });
        }
    }
    return counts;
}

void
WriteImpairments(std::ostream& out, const RunParams& p, const ImpairmentCounts* counts)
{
    if (!HasImpairments(p) || counts == nullptr)
        return;
    out << "\n[impairments]\n";
    for (const auto& [cause, n] : *counts)
        out << "dropped_" << cause << " = " << n << "\n";
}

} // namespace ns3
