// The graph topology (kind = "graph"): named nodes with roles and point-to-point links, each
// with its own rate, one-way delay and DropTail queue, from --Nodes and --Links (written by
// crates/rdtp-scenario/src/graph.rs) — for networks such as seed 003's five sources, eight
// caches and five receivers (S3 §III). Link i gets subnet 10.(1 + i/256).(i%256).0/24; ns-3's
// global routing takes shortest paths in links, as crates/rdtp-scenario/src/routing.rs does
// when it routes rdtp requests through caching routers. Offline only.
#include "rdtp-topology.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/neighbor-cache-helper.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <algorithm>

namespace ns3
{

namespace
{

struct GraphNodeSpec
{
    std::string name;
    std::string role;
};

struct GraphLinkSpec
{
    std::string from;
    std::string to;
    std::string rate = "100Mbps";
    std::string delay = "1ms";
    uint32_t queue = 100;
    bool monitor = false;
};

std::vector<GraphNodeSpec>
ParseNodes(const std::string& text)
{
    std::vector<GraphNodeSpec> nodes;
    for (const auto& item : Split(text, ','))
    {
        const size_t colon = item.find(':');
        if (colon == std::string::npos)
            Fail("bad Nodes entry '" + item + "' (want name:role)");
        GraphNodeSpec n{item.substr(0, colon), item.substr(colon + 1)};
        if (n.role != "server" && n.role != "router" && n.role != "client")
            Fail("node '" + n.name + "': role must be server, router or client");
        nodes.push_back(n);
    }
    if (nodes.empty())
        Fail("a graph needs Nodes");
    return nodes;
}

std::vector<GraphLinkSpec>
ParseLinks(const std::string& text)
{
    std::vector<GraphLinkSpec> links;
    for (const auto& item : Split(text, ';'))
    {
        GraphLinkSpec l;
        for (const auto& [k, v] : KeyValues(item))
        {
            if (k == "from")
                l.from = v;
            else if (k == "to")
                l.to = v;
            else if (k == "rate")
                l.rate = v;
            else if (k == "delay")
                l.delay = v;
            else if (k == "queue")
                l.queue = static_cast<uint32_t>(std::stoul(v));
            else if (k == "monitor")
                l.monitor = v == "1" || v == "true";
            else
                Fail("unknown link field '" + k + "'");
        }
        links.push_back(l);
    }
    return links;
}

Ipv4Address
FirstAddress(Ptr<Node> node)
{
    Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
    if (ipv4->GetNInterfaces() < 2)
        Fail("a graph node has no link");
    return ipv4->GetAddress(1, 0).GetLocal();
}

/// The monitored link's `from` device queue becomes the run's sampled queue and capacity.
void
MonitorLink(Net& net, const GraphLinkSpec& l, const NetDeviceContainer& d)
{
    Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(d.Get(0));
    Ptr<Queue<Packet>> queue = dev->GetQueue();
    net.attachQueue = MonitorDropTail(queue);
    net.sampleQueue = [queue]() {
        return std::make_pair<uint64_t, uint64_t>(queue->GetNPackets(), queue->GetNBytes());
    };
    net.capacity.push_back({0.0, static_cast<double>(DataRate(l.rate).GetBitRate())});
    net.derived["queue_sampled"] = "link " + l.from + " - " + l.to + ": " + l.from + "'s DropTail queue";
}

} // namespace

Net
BuildGraph(const TopologyParams& p, uint32_t nClients, const AttachEndpoints& attach)
{
    if (attach)
        Fail("graph topologies are simulated only (the emulator has dumbbell and wifi)");
    Net net;
    const std::vector<GraphNodeSpec> nodes = ParseNodes(p.nodes);
    NodeContainer all;
    all.Create(nodes.size());
    InternetStackHelper().Install(all);
    for (uint32_t i = 0; i < nodes.size(); i++)
    {
        if (!net.named.emplace(nodes[i].name, all.Get(i)).second)
            Fail("node '" + nodes[i].name + "' twice");
    }
    auto node = [&net](const std::string& name) {
        auto it = net.named.find(name);
        if (it == net.named.end())
            Fail("a link names no node '" + name + "'");
        return it->second;
    };

    double maxRate = 0.0;
    double delaySum = 0.0;
    uint32_t maxQueue = 0;
    Ipv4AddressHelper addr;
    const std::vector<GraphLinkSpec> links = ParseLinks(p.links);
    for (uint32_t i = 0; i < links.size(); i++)
    {
        const GraphLinkSpec& l = links[i];
        PointToPointHelper h;
        h.SetDeviceAttribute("DataRate", StringValue(l.rate));
        h.SetDeviceAttribute("Mtu", UintegerValue(p.mtu));
        h.SetChannelAttribute("Delay", StringValue(l.delay));
        h.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(std::to_string(l.queue) + "p")));
        h.DisableFlowControl();
        NetDeviceContainer d = h.Install(node(l.from), node(l.to));
        const std::string base = "10." + std::to_string(1 + i / 256) + "." + std::to_string(i % 256) + ".0";
        addr.SetBase(base.c_str(), "255.255.255.0");
        addr.Assign(d);
        if (!p.pcap.empty())
            h.EnablePcap(p.pcap + "-" + l.from + "-" + l.to, d.Get(0), true);
        if (l.monitor)
            MonitorLink(net, l, d);
        maxRate = std::max(maxRate, static_cast<double>(DataRate(l.rate).GetBitRate()));
        delaySum += Time(l.delay).GetSeconds();
        maxQueue = std::max(maxQueue, l.queue);
    }

    for (const auto& n : nodes)
    {
        if (n.role == "client")
        {
            net.clients.push_back(net.named[n.name]);
            net.clientAddrs.push_back(FirstAddress(net.named[n.name]));
        }
        else if (n.role == "server" && !net.server)
        {
            net.server = net.named[n.name];
            net.serverAddr = FirstAddress(net.server);
        }
    }
    if (!net.server || net.clients.size() < nClients)
        Fail("the graph has no server, or fewer client nodes than the flows use");
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    NeighborCacheHelper().PopulateNeighborCache(); // static ARP: no resolution delays or drops
    CheckNoQdisc(false);

    net.capacityForSizing = maxRate;
    net.derived["nodes"] = std::to_string(nodes.size());
    net.derived["links"] = std::to_string(links.size());
    net.derived["qdisc"] = "none (flow control disabled: device DropTail queues only)";
    // Generous: the fastest link over the longest conceivable round trip, plus a queue.
    net.derived["tcp_buffer_hint"] = Fmt(maxRate / 8.0 * 2.0 * delaySum + maxQueue * 1500.0, 0);
    if (net.derived.count("queue_sampled") == 0)
        net.derived["queue_sampled"] = "none (no link has monitor = true)";
    return net;
}

} // namespace ns3
