// Where packets go missing (--DropTrace=1): see rdtp-drop-trace.h.
#include "rdtp-drop-trace.h"

#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/wifi-module.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace ns3
{

namespace
{

/// Datagrams at least this large (IP payload, UDP header included) are counted as "large":
/// rdtp's Data, against its requests (tens of bytes to a few hundred).
constexpr uint32_t LARGE = 1000;

/// The scenario's name of every node: `named` (server, ap, r1…, a graph's names), then the
/// clients in order (client0…); anything else by its ns-3 id.
std::map<uint32_t, std::string>
NodeNames(const Net& net)
{
    std::map<uint32_t, std::string> names;
    for (const auto& [name, node] : net.named)
        names[node->GetId()] = name;
    for (size_t i = 0; i < net.clients.size(); i++)
        names.emplace(net.clients[i]->GetId(), "client" + std::to_string(i));
    return names;
}

template <typename E>
std::string
Str(const E& e)
{
    std::ostringstream s;
    s << e;
    return s.str();
}

const char*
IpDropReason(Ipv4L3Protocol::DropReason r)
{
    switch (r)
    {
    case Ipv4L3Protocol::DROP_TTL_EXPIRED:
        return "ttl_expired";
    case Ipv4L3Protocol::DROP_NO_ROUTE:
        return "no_route";
    case Ipv4L3Protocol::DROP_BAD_CHECKSUM:
        return "bad_checksum";
    case Ipv4L3Protocol::DROP_INTERFACE_DOWN:
        return "interface_down";
    case Ipv4L3Protocol::DROP_ROUTE_ERROR:
        return "route_error";
    case Ipv4L3Protocol::DROP_FRAGMENT_TIMEOUT:
        return "fragment_timeout";
    default:
        return "other";
    }
}

} // namespace

void
DropTrace::Attach(const Net& net)
{
    const auto names = NodeNames(net);
    auto counts = m_counts;
    // One counter; a trace source that does not exist in this ns-3 is listed with
    // detail "unavailable" (and count 0) rather than failing the run.
    auto counter = [counts](Key k) {
        (*counts)[k] += 0;
        return [counts, k]() { (*counts)[k]++; };
    };
    auto soft = [counts](bool connected, const Key& k) {
        if (!connected)
        {
            Key u = k;
            std::get<4>(u) = "unavailable";
            (*counts)[u] += 0;
        }
    };
    using PacketCb = Callback<void, Ptr<const Packet>>;
    for (uint32_t n = 0; n < NodeList::GetNNodes(); n++)
    {
        Ptr<Node> node = NodeList::GetNode(n);
        auto it = names.find(node->GetId());
        const std::string nodeName = it != names.end() ? it->second : "node" + std::to_string(node->GetId());
        for (uint32_t d = 0; d < node->GetNDevices(); d++)
        {
            Ptr<NetDevice> dev = node->GetDevice(d);
            if (Ptr<WifiNetDevice> wdev = DynamicCast<WifiNetDevice>(dev))
            {
                Ptr<WifiMac> mac = wdev->GetMac();
                SsidValue ssid;
                mac->GetAttribute("Ssid", ssid);
                const std::string role = mac->GetInstanceTypeId().GetName() == "ns3::ApWifiMac" ? "ap" : "sta";
                const std::string devName = "dev" + std::to_string(d) + ":wifi-" + role + ":" + ssid.Get().PeekString();
                auto key = [&](const std::string& layer, const std::string& event, const std::string& detail = "") {
                    return Key{nodeName, devName, layer, event, detail};
                };
                for (const char* ev : {"MacTx", "MacTxDrop", "MacRx", "MacRxDrop"})
                {
                    auto c = counter(key("mac", ev));
                    soft(mac->TraceConnectWithoutContext(ev, PacketCb([c](Ptr<const Packet>) { c(); })), key("mac", ev));
                }
                for (const char* ev : {"AckedMpdu", "NAckedMpdu"})
                {
                    auto c = counter(key("mac", ev));
                    soft(mac->TraceConnectWithoutContext(
                             ev, Callback<void, Ptr<const WifiMpdu>>([c](Ptr<const WifiMpdu>) { c(); })),
                         key("mac", ev));
                }
                const std::string devCopy = devName;
                soft(mac->TraceConnectWithoutContext(
                         "DroppedMpdu",
                         Callback<void, WifiMacDropReason, Ptr<const WifiMpdu>>(
                             [counts, nodeName, devCopy](WifiMacDropReason r, Ptr<const WifiMpdu>) {
                                 (*counts)[Key{nodeName, devCopy, "mac", "DroppedMpdu", WifiMacDropReasonName(r)}]++;
                             })),
                     key("mac", "DroppedMpdu"));
                Ptr<WifiMacQueue> queue = mac->GetTxopQueue(AC_BE);
                // The most MPDUs the queue held (read after each enqueue; MaxSize is its limit).
                const Key maxKey = key("mac-queue-be", "MaxPackets");
                (*counts)[maxKey] += 0;
                WifiMacQueue* q = PeekPointer(queue);
                soft(queue->TraceConnectWithoutContext(
                         "Enqueue", Callback<void, Ptr<const WifiMpdu>>([counts, maxKey, q](Ptr<const WifiMpdu>) {
                             uint64_t& m = (*counts)[maxKey];
                             m = std::max<uint64_t>(m, q->GetNPackets());
                         })),
                     maxKey);
                for (const char* ev : {"Enqueue", "Drop", "Expired"})
                {
                    auto c = counter(key("mac-queue-be", ev));
                    soft(queue->TraceConnectWithoutContext(
                             ev, Callback<void, Ptr<const WifiMpdu>>([c](Ptr<const WifiMpdu>) { c(); })),
                         key("mac-queue-be", ev));
                }
                Ptr<WifiPhy> phy = wdev->GetPhy();
                {
                    auto c = counter(key("phy", "PhyTxDrop"));
                    soft(phy->TraceConnectWithoutContext("PhyTxDrop", PacketCb([c](Ptr<const Packet>) { c(); })),
                         key("phy", "PhyTxDrop"));
                }
                soft(phy->TraceConnectWithoutContext(
                         "PhyRxDrop",
                         Callback<void, Ptr<const Packet>, WifiPhyRxfailureReason>(
                             [counts, nodeName, devCopy](Ptr<const Packet>, WifiPhyRxfailureReason r) {
                                 (*counts)[Key{nodeName, devCopy, "phy", "PhyRxDrop", Str(r)}]++;
                             })),
                     key("phy", "PhyRxDrop"));
            }
            else if (Ptr<PointToPointNetDevice> pdev = DynamicCast<PointToPointNetDevice>(dev))
            {
                const std::string devName = "dev" + std::to_string(d) + ":p2p";
                auto key = [&](const std::string& layer, const std::string& event) {
                    return Key{nodeName, devName, layer, event, ""};
                };
                for (const char* ev : {"MacTx", "MacTxDrop", "MacRx", "PhyTxDrop", "PhyRxDrop"})
                {
                    auto c = counter(key("p2p", ev));
                    soft(pdev->TraceConnectWithoutContext(ev, PacketCb([c](Ptr<const Packet>) { c(); })),
                         key("p2p", ev));
                }
                auto c = counter(key("p2p-queue", "Drop"));
                soft(pdev->GetQueue()->TraceConnectWithoutContext("Drop", PacketCb([c](Ptr<const Packet>) { c(); })),
                     key("p2p-queue", "Drop"));
            }
        }
        Ptr<Ipv4L3Protocol> ip = node->GetObject<Ipv4L3Protocol>();
        if (!ip)
            continue;
        auto ipKey = [nodeName](uint32_t iface, const std::string& event, const std::string& detail = "") {
            return Key{nodeName, "if" + std::to_string(iface), "ipv4", event, detail};
        };
        for (const char* ev : {"Tx", "Rx"})
        {
            const std::string e = ev;
            soft(ip->TraceConnectWithoutContext(
                     ev, Callback<void, Ptr<const Packet>, Ptr<Ipv4>, uint32_t>(
                             [counts, ipKey, e](Ptr<const Packet>, Ptr<Ipv4>, uint32_t i) { (*counts)[ipKey(i, e)]++; })),
                 ipKey(0, ev));
        }
        for (const char* ev : {"SendOutgoing", "LocalDeliver", "UnicastForward"})
        {
            const std::string e = ev;
            soft(ip->TraceConnectWithoutContext(
                     ev, Callback<void, const Ipv4Header&, Ptr<const Packet>, uint32_t>(
                             [counts, ipKey, e](const Ipv4Header&, Ptr<const Packet> pk, uint32_t i) {
                                 (*counts)[ipKey(i, e, pk->GetSize() >= LARGE ? "large" : "small")]++;
                             })),
                 ipKey(0, ev));
        }
        soft(ip->TraceConnectWithoutContext(
                 "Drop",
                 Callback<void, const Ipv4Header&, Ptr<const Packet>, Ipv4L3Protocol::DropReason, Ptr<Ipv4>, uint32_t>(
                     [counts, ipKey](const Ipv4Header&, Ptr<const Packet>, Ipv4L3Protocol::DropReason r, Ptr<Ipv4>,
                                     uint32_t i) { (*counts)[ipKey(i, "Drop", IpDropReason(r))]++; })),
             ipKey(0, "Drop"));
    }
}

void
DropTrace::Write(const std::string& dir) const
{
    std::ofstream f(dir + "/drops.csv");
    f << "node,device,layer,event,detail,count\n";
    for (const auto& [k, n] : *m_counts)
        f << std::get<0>(k) << "," << std::get<1>(k) << "," << std::get<2>(k) << "," << std::get<3>(k) << ","
          << std::get<4>(k) << "," << n << "\n";
}

} // namespace ns3
