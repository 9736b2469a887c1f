// Topology building shared by the offline runner and the real-time emulator: see
// rdtp-topology.h. Moved here unchanged from rdtp-scenario.cc, plus the emulation hook
// (AttachEndpoints) and the p2p MTU.
#include "rdtp-topology.h"

#include "rdtp-rust.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/neighbor-cache-helper.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/wifi-module.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

namespace ns3
{

std::vector<std::string>
Split(const std::string& s, char sep)
{
    std::vector<std::string> parts;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, sep))
    {
        if (!item.empty())
        {
            parts.push_back(item);
        }
    }
    return parts;
}

[[noreturn]] void
Fail(const std::string& msg)
{
    std::cerr << "rdtp-sim: " << msg << std::endl;
    std::exit(2);
}

void
Must(bool connected, const char* what)
{
    if (!connected)
        Fail(std::string("cannot connect trace source ") + what);
}

std::vector<std::pair<std::string, std::string>>
KeyValues(const std::string& item)
{
    std::vector<std::pair<std::string, std::string>> kv;
    for (const auto& field : Split(item, ','))
    {
        const size_t eq = field.find('=');
        if (eq == std::string::npos)
            Fail("bad field '" + field + "' (want key=value)");
        kv.emplace_back(field.substr(0, eq), field.substr(eq + 1));
    }
    return kv;
}

std::string
TomlString(const std::string& s)
{
    std::string o = "\"";
    for (char c : s)
    {
        if (c == '"' || c == '\\')
            o += '\\';
        o += c;
    }
    return o + "\"";
}

void
CheckNoQdisc(bool allowWifi)
{
    for (uint32_t n = 0; n < NodeList::GetNNodes(); n++)
    {
        Ptr<Node> node = NodeList::GetNode(n);
        Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
        for (uint32_t d = 0; tc && d < node->GetNDevices(); d++)
        {
            Ptr<NetDevice> dev = node->GetDevice(d);
            if (allowWifi && DynamicCast<WifiNetDevice>(dev))
                continue;
            if (tc->GetRootQueueDiscOnDevice(dev))
                Fail("a queue disc is installed on node " + std::to_string(n) + " device " + std::to_string(d));
        }
    }
}

std::function<void(QueueMonitor*)>
MonitorDropTail(Ptr<Queue<Packet>> queue)
{
    return [queue](QueueMonitor* m) {
        Must(queue->TraceConnectWithoutContext(
            "Enqueue",
            Callback<void, Ptr<const Packet>>([m](Ptr<const Packet> pk) { m->OnEnqueue(pk->GetUid()); })), "queue Enqueue");
        Must(queue->TraceConnectWithoutContext(
            "Dequeue",
            Callback<void, Ptr<const Packet>>(
                [m](Ptr<const Packet> pk) { m->OnDequeue(pk->GetUid(), pk->GetSize()); })), "queue Dequeue");
        Must(queue->TraceConnectWithoutContext(
            "Drop",
            Callback<void, Ptr<const Packet>>([m](Ptr<const Packet> pk) { m->OnDrop(pk->GetUid(), false); })), "queue Drop");
    };
}

namespace
{

/// The nodes of a dumbbell or chain. ns-3 numbers nodes (and devices, and their random
/// streams) in creation order: the server, then the routers, then the clients.
struct DumbbellNodes
{
    NodeContainer server, routers, clients;
};

DumbbellNodes
CreateDumbbellNodes(const TopologyParams& p, uint32_t nClients, bool emulated)
{
    DumbbellNodes n;
    if (!emulated)
        n.server.Create(1);
    if (p.hops < 1 || p.hops > 200)
        Fail("Hops must be in 1..200");
    n.routers.Create(p.hops + 1);
    if (!emulated)
        n.clients.Create(nClients);
    InternetStackHelper stack;
    stack.Install(n.server);
    stack.Install(n.routers);
    stack.Install(n.clients);
    return n;
}

/// Delays, rate and bottleneck queue of a dumbbell, from its parameters.
struct DumbbellTiming
{
    Time accessDelay;
    /// One-way delay of the bottleneck path (split over the hops).
    Time oneWay;
    Time baseRtt;
    DataRate rate;
    double bdpBytes;
    /// The bottleneck queue, packets.
    uint32_t qPackets;
};

DumbbellTiming
DumbbellTimingOf(const TopologyParams& p, bool emulated)
{
    DumbbellTiming t;
    // Emulated, the real hosts sit right behind the routers: no access links, no access delay.
    t.accessDelay = emulated ? Time(0) : Time(p.accessDelay);
    if (!p.delay.empty())
        t.oneWay = Time(p.delay);
    else
        t.oneWay = Time(p.rtt) / 2 - t.accessDelay * 2;
    if (t.oneWay.IsNegative())
        Fail("Rtt is shorter than the access links' delay");
    t.baseRtt = (t.oneWay + t.accessDelay * 2) * 2;
    t.rate = DataRate(p.rate);
    t.bdpBytes = t.rate.GetBitRate() / 8.0 * t.baseRtt.GetSeconds();
    t.qPackets = p.queuePackets;
    if (t.qPackets == 0)
        t.qPackets = std::max<uint32_t>(2, static_cast<uint32_t>(std::ceil(p.queueBdp * t.bdpBytes / p.mtu)));
    return t;
}

/// The devices of a dumbbell: the server's access link, each bottleneck hop (router h to
/// h + 1; hop 0 is the bottleneck), each client's access link.
struct DumbbellLinks
{
    NetDeviceContainer server;
    std::vector<NetDeviceContainer> hops;
    std::vector<NetDeviceContainer> clients;
};

DumbbellLinks
InstallDumbbellLinks(const TopologyParams& p, const DumbbellNodes& n, const DumbbellTiming& t, bool emulated)
{
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(p.accessRate));
    access.SetDeviceAttribute("Mtu", UintegerValue(p.mtu));
    access.SetChannelAttribute("Delay", TimeValue(t.accessDelay));
    access.SetQueue("ns3::DropTailQueue<Packet>",
                    "MaxSize",
                    QueueSizeValue(QueueSize(std::to_string(p.accessQueue) + "p")));
    access.DisableFlowControl();

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(t.rate));
    bottleneck.SetDeviceAttribute("Mtu", UintegerValue(p.mtu));
    // A chain splits the one-way delay over its hops; the first hop's queue is the
    // bottleneck (later hops have the same rate, so nothing queues there).
    bottleneck.SetChannelAttribute("Delay", TimeValue(t.oneWay / static_cast<int64_t>(p.hops)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(std::to_string(t.qPackets) + "p")));
    bottleneck.DisableFlowControl();

    DumbbellLinks d;
    if (!emulated)
        d.server = access.Install(n.server.Get(0), n.routers.Get(0));
    for (uint32_t h = 0; h < p.hops; h++)
        d.hops.push_back(bottleneck.Install(n.routers.Get(h), n.routers.Get(h + 1)));
    if (!p.pcap.empty())
    {
        if (!emulated)
            access.EnablePcap(p.pcap + "-server", d.server.Get(0), true);
        bottleneck.EnablePcap(p.pcap + "-bottleneck", d.hops[0].Get(1), true);
    }
    for (uint32_t i = 0; i < n.clients.GetN() && !emulated; i++)
        d.clients.push_back(access.Install(n.routers.Get(p.hops), n.clients.Get(i)));
    return d;
}

/// Addresses (server 10.1.0.0/24, hop h 10.2.h.0/24, client i 10.(3 + i / 250).(i % 250).0/24)
/// and the names and endpoints of `net`.
void
AssignDumbbellAddresses(Net& net, const TopologyParams& p, const DumbbellNodes& n, const DumbbellLinks& d,
                        uint32_t nClients, bool emulated)
{
    Ipv4AddressHelper addr;
    Ipv4InterfaceContainer iServer;
    if (!emulated)
    {
        addr.SetBase("10.1.0.0", "255.255.255.0");
        iServer = addr.Assign(d.server);
    }
    for (uint32_t h = 0; h < p.hops; h++)
    {
        addr.SetBase(("10.2." + std::to_string(h) + ".0").c_str(), "255.255.255.0");
        addr.Assign(d.hops[h]);
    }
    // Scenario names: r1 is the clients' gateway, r{hops+1} the server's.
    for (uint32_t i = 1; i <= p.hops + 1; i++)
        net.named["r" + std::to_string(i)] = n.routers.Get(p.hops + 1 - i);
    if (emulated)
    {
        // The first router is the server's gateway, the last every client's.
        net.server = n.routers.Get(0);
        net.clients.assign(nClients, n.routers.Get(p.hops));
        return;
    }
    for (uint32_t i = 0; i < nClients; i++)
    {
        std::string base = "10." + std::to_string(3 + i / 250) + "." + std::to_string(i % 250) + ".0";
        addr.SetBase(base.c_str(), "255.255.255.0");
        Ipv4InterfaceContainer ic = addr.Assign(d.clients[i]);
        net.clientAddrs.push_back(ic.GetAddress(1));
        net.clients.push_back(n.clients.Get(i));
    }
    net.server = n.server.Get(0);
    net.serverAddr = iServer.GetAddress(0);
    net.named["server"] = net.server;
    net.serverLink = {d.server.Get(0), d.server.Get(1)};
}

/// Random packet loss on the bottleneck's receiving device (data direction), if any.
void
AddBottleneckLoss(const TopologyParams& p, const DumbbellLinks& d)
{
    if (p.loss <= 0.0)
        return;
    Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
    em->SetAttribute("ErrorRate", DoubleValue(p.loss));
    em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
    d.hops[0].Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));
}

/// The capacity timeline and the rate schedule (every hop, both directions change together).
void
ScheduleRates(Net& net, const TopologyParams& p, const DataRate& rate, const DumbbellLinks& d)
{
    net.capacity.push_back({0.0, static_cast<double>(rate.GetBitRate())});
    double maxRate = static_cast<double>(rate.GetBitRate());
    for (const auto& item : Split(p.rateSchedule, ','))
    {
        size_t c = item.find(':');
        if (c == std::string::npos)
            Fail("bad RateSchedule entry '" + item + "' (want time:rate)");
        double t = std::stod(item.substr(0, c));
        DataRate r(item.substr(c + 1));
        maxRate = std::max(maxRate, static_cast<double>(r.GetBitRate()));
        if (t <= 0.0)
            net.capacity[0].second = static_cast<double>(r.GetBitRate());
        else
            net.capacity.push_back({t, static_cast<double>(r.GetBitRate())});
        for (const auto& hop : d.hops)
            for (uint32_t i = 0; i < 2; i++)
            {
                Ptr<NetDevice> dev = hop.Get(i);
                Simulator::Schedule(Seconds(ScenarioOrigin() + std::max(t, 0.0)),
                                    [dev, r]() { dev->SetAttribute("DataRate", DataRateValue(r)); });
            }
    }
    net.capacityForSizing = maxRate;
}

/// The bottleneck queue's monitor and sampler, and the derived values run.toml records.
void
DescribeDumbbell(Net& net, const TopologyParams& p, const DumbbellTiming& t, const DumbbellLinks& d, bool emulated)
{
    // The DropTail queue of router 1's bottleneck device (data direction) is the bottleneck
    // queue; flow control is disabled on every device so no queue disc sits in front of it.
    Ptr<PointToPointNetDevice> bdev = DynamicCast<PointToPointNetDevice>(d.hops[0].Get(0));
    Ptr<Queue<Packet>> queue = bdev->GetQueue();
    net.attachQueue = MonitorDropTail(queue);
    net.derived["queue_sampled"] = "router1 bottleneck PointToPointNetDevice DropTail queue";
    net.derived["bottleneck_delay_ms"] = Fmt(t.oneWay.GetSeconds() * 1e3, 6);
    net.derived["hops"] = std::to_string(p.hops);
    net.derived["base_rtt_ms"] = Fmt(t.baseRtt.GetSeconds() * 1e3, 6);
    net.derived["bdp_bytes"] = Fmt(t.bdpBytes, 0);
    net.derived["queue_packets"] = std::to_string(t.qPackets);
    net.derived["qdisc"] = "none (flow control disabled: device DropTail queues only)";
    net.derived["tcp_buffer_hint"] = Fmt(t.bdpBytes + t.qPackets * 1500.0, 0);
    if (emulated)
        net.derived["queue_bytes_max"] = Fmt(static_cast<double>(t.qPackets) * p.mtu, 0);
    net.sampleQueue = [queue]() {
        return std::make_pair<uint64_t, uint64_t>(queue->GetNPackets(), queue->GetNBytes());
    };
}

} // namespace

Net
BuildDumbbell(const TopologyParams& p, uint32_t nClients, const AttachEndpoints& attach)
{
    Net net;
    const bool emulated = static_cast<bool>(attach);
    const DumbbellNodes nodes = CreateDumbbellNodes(p, nClients, emulated);
    const DumbbellTiming timing = DumbbellTimingOf(p, emulated);
    const DumbbellLinks links = InstallDumbbellLinks(p, nodes, timing, emulated);
    AssignDumbbellAddresses(net, p, nodes, links, nClients, emulated);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    NeighborCacheHelper().PopulateNeighborCache(); // static ARP: no resolution delays or drops
    CheckNoQdisc(false);
    if (emulated)
        attach(net.server, net.clients);
    AddBottleneckLoss(p, links);
    ScheduleRates(net, p, timing.rate, links);
    DescribeDumbbell(net, p, timing, links, emulated);
    return net;
}

namespace
{

/// The 802.11 settings of a WiFi topology, checked: standard, band, channel width, MCS, and
/// the stations' fixed 802.11g rates and distances.
struct WifiSettings
{
    bool ac = false;
    bool g = false;
    uint32_t width = 20;
    std::string band;
    std::vector<double> rates;
    std::vector<double> dists;
    int32_t mcs = 7;

    /// Station i's fixed 802.11g rate, Mbit/s (S2 §III: 54 Mbit/s for all, or 12/24/54).
    double StationRate(uint32_t i) const
    {
        return rates.empty() ? 54.0 : rates[std::min<size_t>(i, rates.size() - 1)];
    }
};

std::string
ErpMode(double mbps)
{
    std::ostringstream m;
    m << "ErpOfdmRate" << mbps << "Mbps";
    return m.str();
}

WifiSettings
CheckWifiSettings(const TopologyParams& p)
{
    WifiSettings s;
    s.ac = p.standard == "80211ac";
    s.g = p.standard == "80211g";
    if (!s.ac && !s.g && p.standard != "80211n")
        Fail("Standard must be 80211g, 80211n or 80211ac");
    s.width = p.channelWidth != 0 ? p.channelWidth : (s.ac ? 80 : 20);
    s.band = p.band;
    if (s.ac)
        s.band = "5GHz";
    if (s.g)
    {
        s.band = "2.4GHz";
        s.width = 20;
    }
    if (!s.g && !p.phyRates.empty())
        Fail("PhyRates needs Standard=80211g");
    // 802.11g: one fixed rate per station (S2 §III: 54 Mbit/s for all, or 12/24/54).
    for (const auto& r : Split(p.phyRates, ','))
        s.rates.push_back(std::stod(r));
    for (const auto& d : Split(p.distances, ','))
        s.dists.push_back(std::stod(d));
    if (s.band != "5GHz" && s.band != "2.4GHz")
        Fail("Band must be 5GHz or 2.4GHz");
    s.mcs = p.mcs >= 0 ? p.mcs : (s.ac ? 9 : 7);
    return s;
}

/// The server's wired access link to the AP (ServerLink=p2p), with its pcap if asked for.
NetDeviceContainer
InstallWiredUplink(const TopologyParams& p, NodeContainer& server, NodeContainer& ap)
{
    PointToPointHelper wired;
    wired.SetDeviceAttribute("DataRate", StringValue(p.wiredRate));
    wired.SetDeviceAttribute("Mtu", UintegerValue(p.mtu));
    wired.SetChannelAttribute("Delay", StringValue(p.wiredDelay));
    wired.SetQueue("ns3::DropTailQueue<Packet>",
                   "MaxSize",
                   QueueSizeValue(QueueSize(std::to_string(p.accessQueue) + "p")));
    wired.DisableFlowControl();
    NetDeviceContainer dWired = wired.Install(server.Get(0), ap.Get(0));
    if (!p.pcap.empty())
    {
        wired.EnablePcap(p.pcap + "-server", dWired.Get(0), true);
        wired.EnablePcap(p.pcap + "-apwired", dWired.Get(1), true);
    }
    return dWired;
}

/// The stations' PHY on a channel of `channel`.
YansWifiPhyHelper
MakeWifiPhy(const TopologyParams& p, const WifiSettings& s, YansWifiChannelHelper& channel)
{
    YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());
    const std::string bandName = s.band == "5GHz" ? "BAND_5GHZ" : "BAND_2_4GHZ";
    phy.Set("ChannelSettings", StringValue("{0, " + std::to_string(s.width) + ", " + bandName + ", 0}"));
    phy.Set("Antennas", UintegerValue(p.spatialStreams));
    phy.Set("MaxSupportedTxSpatialStreams", UintegerValue(p.spatialStreams));
    phy.Set("MaxSupportedRxSpatialStreams", UintegerValue(p.spatialStreams));
    return phy;
}

/// The standard, rate control, guard interval and flow control of every 802.11 device;
/// returns the data mode's name (run.toml's data_mode).
std::string
ConfigureWifi(WifiHelper& wifi, const TopologyParams& p, const WifiSettings& s, uint32_t nStations)
{
    wifi.SetStandard(s.ac ? WIFI_STANDARD_80211ac : (s.g ? WIFI_STANDARD_80211g : WIFI_STANDARD_80211n));
    std::string mode;
    if (s.g && p.rateControl == "constant")
    {
        double apRate = 0.0;
        for (uint32_t i = 0; i < nStations; i++)
            apRate = std::max(apRate, s.StationRate(i));
        mode = ErpMode(apRate == 0.0 ? 54.0 : apRate);
        wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                     "DataMode",
                                     StringValue(mode),
                                     "ControlMode",
                                     StringValue("ErpOfdmRate6Mbps"));
    }
    else if (s.g && p.rateControl == "minstrel")
    {
        mode = "Minstrel";
        wifi.SetRemoteStationManager("ns3::MinstrelWifiManager");
    }
    else if (p.rateControl == "constant")
    {
        mode = std::string(s.ac ? "VhtMcs" : "HtMcs") + std::to_string(s.mcs);
        wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                     "DataMode",
                                     StringValue(mode),
                                     "ControlMode",
                                     StringValue(mode));
    }
    else if (p.rateControl == "minstrel")
    {
        mode = "MinstrelHt";
        wifi.SetRemoteStationManager("ns3::MinstrelHtWifiManager");
    }
    else
    {
        Fail("RateControl must be constant or minstrel");
    }
    wifi.ConfigHtOptions("ShortGuardIntervalSupported", BooleanValue(p.shortGuard));
    if (p.wifiQdisc == "none")
        wifi.DisableFlowControl();
    else if (p.wifiQdisc != "default")
        Fail("WifiQdisc must be none or default");
    return mode;
}

/// The stations' devices in the BSS `ssid`, and their fixed PHY rates in `net`.
NetDeviceContainer
InstallStations(const TopologyParams& p,
                const WifiSettings& s,
                WifiHelper& wifi,
                YansWifiPhyHelper& phy,
                WifiMacHelper& mac,
                const Ssid& ssid,
                NodeContainer& stas,
                Net& net)
{
    const uint32_t nStations = stas.GetN();
    // 802.11g with WMM (QoS data, EDCA AC_BE), as Linux and hostapd run it by default; the
    // MAC queue sampled and traced is AC_BE's in every standard.
    mac.SetType("ns3::StaWifiMac", "Ssid", SsidValue(ssid), "QosSupported", BooleanValue(true));
    NetDeviceContainer dStas;
    if (s.g && p.rateControl == "constant")
    {
        // Each station its own fixed rate (the AP sends at the highest of them).
        for (uint32_t i = 0; i < nStations; i++)
        {
            WifiHelper one = wifi;
            one.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                        "DataMode",
                                        StringValue(ErpMode(s.StationRate(i))),
                                        "ControlMode",
                                        StringValue("ErpOfdmRate6Mbps"));
            dStas.Add(one.Install(phy, mac, stas.Get(i)));
            net.stationPhyBps.push_back(s.StationRate(i) * 1e6);
            net.apPhyBps = std::max(net.apPhyBps, s.StationRate(i) * 1e6);
        }
    }
    else
    {
        dStas = wifi.Install(phy, mac, stas);
        net.stationPhyBps.assign(nStations, 0.0);
    }
    return dStas;
}

/// The producer's own 802.11 network (ServerLink=wifi): a channel object of its own (no
/// interference with the stations'), the AP's second radio its access point, the server a
/// station. Its devices join `dWired` (server first) and the stations that must associate.
void
InstallWifiUplink(const TopologyParams& p,
                  WifiHelper& wifi,
                  const YansWifiPhyHelper& phy,
                  YansWifiChannelHelper& channel,
                  WifiMacHelper& mac,
                  NodeContainer& server,
                  NodeContainer& ap,
                  NetDeviceContainer& dWired,
                  Net& net)
{
    YansWifiPhyHelper upPhy = phy;
    upPhy.SetChannel(channel.Create());
    Ssid upSsid("rdtp-up");
    mac.SetType("ns3::StaWifiMac", "Ssid", SsidValue(upSsid), "QosSupported", BooleanValue(true));
    NetDeviceContainer dUpSta = wifi.Install(upPhy, mac, server);
    mac.SetType("ns3::ApWifiMac", "Ssid", SsidValue(upSsid), "QosSupported", BooleanValue(true));
    NetDeviceContainer dUpAp = wifi.Install(upPhy, mac, ap);
    dWired.Add(dUpSta);
    dWired.Add(dUpAp);
    net.stations.Add(dUpSta); // must be associated by scenario time 0 too
    if (!p.pcap.empty())
    {
        upPhy.SetPcapDataLinkType(WifiPhyHelper::DLT_IEEE802_11_RADIO);
        upPhy.EnablePcap(p.pcap + "-server", dUpSta);
        upPhy.EnablePcap(p.pcap + "-apup", dUpAp);
    }
}

/// Seed 002's monitor-mode WNIC: a station of no BSS (passive scanning, so it never
/// transmits) whose PHY decodes every frame in range; its device is `net.sniffer`.
NetDeviceContainer
InstallSniffer(WifiHelper& wifi, YansWifiPhyHelper& phy, WifiMacHelper& mac, NodeContainer& sniffer, Net& net)
{
    sniffer.Create(1);
    mac.SetType("ns3::StaWifiMac", "Ssid", SsidValue(Ssid("rdtp-sniffer")), "ActiveProbing", BooleanValue(false));
    NetDeviceContainer dSniffer = wifi.Install(phy, mac, sniffer);
    net.sniffer = dSniffer.Get(0);
    return dSniffer;
}

/// Positions: the AP at the origin, the stations on a circle around it (Distance, or each
/// its own of Distances), the WiFi-linked producer and the sniffer beside it.
void
PlaceWifiNodes(const TopologyParams& p,
               const WifiSettings& s,
               bool wifiUplink,
               NodeContainer& server,
               NodeContainer& ap,
               NodeContainer& stas,
               NodeContainer& sniffer)
{
    const uint32_t nStations = stas.GetN();
    MobilityHelper mobility;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0.0, 0.0, 0.0));
    for (uint32_t i = 0; i < nStations; i++)
    {
        double a = 2.0 * M_PI * i / nStations;
        double d = s.dists.empty() ? p.distance : s.dists[std::min<size_t>(i, s.dists.size() - 1)];
        pos->Add(Vector(d * std::cos(a), d * std::sin(a), 0.0));
    }
    if (wifiUplink)
        pos->Add(Vector(-p.distance, 0.0, 1.0)); // the producer, on its own channel
    if (p.sniffer)
        pos->Add(Vector(0.0, 0.5, 0.0)); // next to the AP: it hears every station the AP hears
    mobility.SetPositionAllocator(pos);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(ap);
    mobility.Install(stas);
    if (wifiUplink)
        mobility.Install(server);
    mobility.Install(sniffer);
}

/// IP stacks, the address plan (10.1.0.0/24 the server's link, 10.2.0.0/16 the BSS),
/// global routes and static ARP; the nodes and addresses into `net`.
void
AddressWifiNodes(const TopologyParams& p,
                 NodeContainer& server,
                 NodeContainer& ap,
                 NodeContainer& stas,
                 NodeContainer& sniffer,
                 const NetDeviceContainer& dWired,
                 const NetDeviceContainer& dAp,
                 const NetDeviceContainer& dStas,
                 const NetDeviceContainer& dSniffer,
                 Net& net)
{
    InternetStackHelper stack;
    stack.Install(server);
    stack.Install(ap);
    stack.Install(stas);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.0.0", "255.255.255.0");
    Ipv4InterfaceContainer iWired = addr.Assign(dWired);
    addr.SetBase("10.2.0.0", "255.255.0.0");
    addr.Assign(dAp);
    Ipv4InterfaceContainer iStas = addr.Assign(dStas);
    if (p.sniffer)
    {
        // An address so ns-3's static ARP fill finds an IP stack on every device of the
        // channel; nothing ever sends from it.
        stack.Install(sniffer);
        addr.Assign(dSniffer);
    }
    for (uint32_t i = 0; i < stas.GetN(); i++)
    {
        net.clients.push_back(stas.Get(i));
        net.clientAddrs.push_back(iStas.GetAddress(i));
    }
    net.server = server.Get(0);
    net.serverAddr = iWired.GetAddress(0);
    net.named["server"] = net.server;
    net.named["ap"] = ap.Get(0);
    net.serverLink = {dWired.Get(0), dWired.Get(1)};
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    NeighborCacheHelper().PopulateNeighborCache(); // static ARP: no resolution delays or drops
}

} // namespace

const char*
WifiMacDropReasonName(int reason)
{
    static const char* names[] = {"failed_enqueue", "expired_lifetime", "retry_limit", "qos_old_packet"};
    return reason >= 0 && reason < 4 ? names[reason] : "other";
}

namespace
{

/// Count the MPDUs the stations' MACs drop (uplink: requests, TCP ACKs), by reason, into
/// `net.stationDrops`.
void
MonitorStationDrops(const NetDeviceContainer& dStas, Net& net)
{
    for (uint32_t i = 0; i < dStas.GetN(); i++)
    {
        Ptr<WifiMac> mac = DynamicCast<WifiNetDevice>(dStas.Get(i))->GetMac();
        auto drops = net.stationDrops;
        Must(mac->TraceConnectWithoutContext(
                 "DroppedMpdu",
                 Callback<void, WifiMacDropReason, Ptr<const WifiMpdu>>([drops](WifiMacDropReason r, Ptr<const WifiMpdu>) {
                     (*drops)[WifiMacDropReasonName(r)]++;
                 })),
             "station WifiMac DroppedMpdu");
        Must(mac->GetTxopQueue(AC_BE)->TraceConnectWithoutContext(
                 "Drop", Callback<void, Ptr<const WifiMpdu>>([drops](Ptr<const WifiMpdu>) { (*drops)["queue_drop"]++; })),
             "station WifiMacQueue Drop");
    }
}

/// The AP's AC_BE MAC queue as the run's bottleneck queue: `net.attachQueue` (enqueue,
/// dequeue and every drop, by reason) and `net.sampleQueue`.
void
MonitorApQueue(const NetDeviceContainer& dAp, Net& net)
{
    Ptr<WifiNetDevice> apDev = DynamicCast<WifiNetDevice>(dAp.Get(0));
    Ptr<WifiMac> apMac = apDev->GetMac();
    Ptr<WifiMacQueue> queue = apMac->GetTxopQueue(AC_BE);
    net.attachQueue = [queue, apMac](QueueMonitor* m) {
        using Cb = Callback<void, Ptr<const WifiMpdu>>;
        Must(queue->TraceConnectWithoutContext(
                 "Enqueue", Cb([m](Ptr<const WifiMpdu> q) { m->OnEnqueue(q->GetPacket()->GetUid()); })),
             "WifiMacQueue Enqueue");
        Must(queue->TraceConnectWithoutContext(
                 "Dequeue",
                 Cb([m](Ptr<const WifiMpdu> q) { m->OnDequeue(q->GetPacket()->GetUid(), q->GetSize()); })),
             "WifiMacQueue Dequeue");
        // Every MPDU the AP's MAC drops (queue full, lifetime expired, retry limit), by reason.
        Must(apMac->TraceConnectWithoutContext(
                 "DroppedMpdu",
                 Callback<void, WifiMacDropReason, Ptr<const WifiMpdu>>(
                     [m](WifiMacDropReason reason, Ptr<const WifiMpdu> q) {
                         m->OnDrop(q->GetPacket()->GetUid(), true);
                         m->dropReasons[WifiMacDropReasonName(reason)]++;
                     })),
             "WifiMac DroppedMpdu");
        // Every MPDU the MAC queue itself drops (DropOldest eviction) or lets expire.
        Must(queue->TraceConnectWithoutContext("Drop", Cb([m](Ptr<const WifiMpdu> q) {
                 m->OnDrop(q->GetPacket()->GetUid(), false);
                 m->dropReasons["queue_drop"]++;
             })),
             "WifiMacQueue Drop");
        // With the default DropNewest policy, ns-3 (3.37 and 3.44 alike: the queue scheduler's
        // HasToDropBeforeEnqueue) refuses an MPDU at a full queue without firing any trace:
        // count packets handed to the MAC (MacTx) that never got enqueued.
        auto handed = std::make_shared<uint64_t>(0);
        auto enqueued = std::make_shared<uint64_t>(0);
        Must(apMac->TraceConnectWithoutContext("MacTx",
                                               Callback<void, Ptr<const Packet>>([handed](Ptr<const Packet>) { ++*handed; })),
             "WifiMac MacTx");
        Must(queue->TraceConnectWithoutContext("Enqueue", Cb([enqueued](Ptr<const WifiMpdu>) { ++*enqueued; })),
             "WifiMacQueue Enqueue (count)");
        m->silentDrops = [handed, enqueued]() { return *handed > *enqueued ? *handed - *enqueued : 0; };
        Must(queue->TraceConnectWithoutContext("Expired", Cb([m](Ptr<const WifiMpdu> q) {
                 m->OnDrop(q->GetPacket()->GetUid(), true);
                 m->dropReasons["expired"]++;
             })),
             "WifiMacQueue Expired");
    };
    net.sampleQueue = [queue]() {
        return std::make_pair<uint64_t, uint64_t>(queue->GetNPackets(), queue->GetNBytes());
    };
}

} // namespace

Net
BuildWifi(const TopologyParams& p, uint32_t nStations, const AttachEndpoints& attach)
{
    Net net;
    NodeContainer server, ap, stas;
    server.Create(1);
    ap.Create(1);
    stas.Create(nStations);

    if (p.serverLink != "p2p" && p.serverLink != "wifi")
        Fail("ServerLink must be p2p or wifi");
    const bool wifiUplink = p.serverLink == "wifi";
    NetDeviceContainer dWired; // server, AP (p2p or the uplink WiFi network)
    if (!wifiUplink)
        dWired = InstallWiredUplink(p, server, ap);

    const WifiSettings s = CheckWifiSettings(p);
    YansWifiChannelHelper channel = YansWifiChannelHelper::Default();
    YansWifiPhyHelper phy = MakeWifiPhy(p, s, channel);
    WifiHelper wifi;
    const std::string mode = ConfigureWifi(wifi, p, s, nStations);

    WifiMacHelper mac;
    Ssid ssid("rdtp");
    NetDeviceContainer dStas = InstallStations(p, s, wifi, phy, mac, ssid, stas, net);
    mac.SetType("ns3::ApWifiMac", "Ssid", SsidValue(ssid), "QosSupported", BooleanValue(true));
    NetDeviceContainer dAp = wifi.Install(phy, mac, ap);
    if (wifiUplink)
        InstallWifiUplink(p, wifi, phy, channel, mac, server, ap, dWired, net);
    NodeContainer sniffer;
    NetDeviceContainer dSniffer;
    if (p.sniffer)
        dSniffer = InstallSniffer(wifi, phy, mac, sniffer, net);
    net.apDevice = dAp.Get(0);
    if (!p.pcap.empty())
    {
        phy.SetPcapDataLinkType(WifiPhyHelper::DLT_IEEE802_11_RADIO);
        phy.EnablePcap(p.pcap + "-sta", dStas);
        phy.EnablePcap(p.pcap + "-ap", dAp);
        if (p.sniffer)
            phy.EnablePcap(p.pcap + "-sniffer", dSniffer);
    }
    if (p.maxAmpdu > 0)
    {
        Config::Set("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Mac/BE_MaxAmpduSize",
                    UintegerValue(p.maxAmpdu));
    }

    PlaceWifiNodes(p, s, wifiUplink, server, ap, stas, sniffer);
    AddressWifiNodes(p, server, ap, stas, sniffer, dWired, dAp, dStas, dSniffer, net);

    CheckNoQdisc(p.wifiQdisc == "default");
    if (attach)
    {
        // The server node and every station forward to the real hosts behind them.
        attach(net.server, net.clients);
    }
    // Stations must be associated by scenario time 0 (see Settle); count those that are not.
    net.stations.Add(dStas);
    MonitorStationDrops(dStas, net);

    const double phyMax = rdtp_wifi_phy_max_bps(p.standard.c_str(), s.width, p.spatialStreams);
    net.capacityForSizing =
        wifiUplink ? phyMax : std::min(static_cast<double>(DataRate(p.wiredRate).GetBitRate()), phyMax);
    MonitorApQueue(dAp, net);
    net.derived["queue_sampled"] = "AP WifiMacQueue AC_BE (MPDUs stay queued until acknowledged)";
    net.derived["channel_width_mhz"] = std::to_string(s.width);
    net.derived["band"] = s.band;
    net.derived["data_mode"] = mode;
    net.derived["qdisc"] = p.wifiQdisc == "none" ? "none (WiFi MAC queue only)" : "ns-3 default on the AP";
    net.derived["server_link"] = wifiUplink ? "802.11 (own channel, AP second radio)" : "p2p";
    net.derived["tcp_buffer_hint"] = "0";
    return net;
}

Net
BuildTopology(const TopologyParams& p, uint32_t nClients, const AttachEndpoints& attach)
{
    if (p.topology == "dumbbell")
        return BuildDumbbell(p, nClients, attach);
    if (p.topology == "wifi")
        return BuildWifi(p, nClients, attach);
    if (p.topology == "graph")
        return BuildGraph(p, nClients, attach);
    Fail("Topology must be dumbbell, wifi or graph");
}

void
AddTopologyArguments(CommandLine& cmd, TopologyParams& p)
{
    cmd.AddValue("Rate", "dumbbell: bottleneck rate", p.rate);
    cmd.AddValue("Rtt", "dumbbell: base RTT (bottleneck one-way delay derived)", p.rtt);
    cmd.AddValue("Delay", "dumbbell: bottleneck one-way delay (overrides Rtt)", p.delay);
    cmd.AddValue("AccessRate", "dumbbell: access link rate", p.accessRate);
    cmd.AddValue("AccessDelay", "dumbbell: access link one-way delay", p.accessDelay);
    cmd.AddValue("AccessQueue", "DropTail packets of non-bottleneck devices", p.accessQueue);
    cmd.AddValue("QueuePackets", "dumbbell: bottleneck DropTail packets (0 = use QueueBdp)", p.queuePackets);
    cmd.AddValue("QueueBdp", "dumbbell: bottleneck queue in BDPs (counted in MTU-sized packets)", p.queueBdp);
    cmd.AddValue("Loss", "dumbbell: random packet loss rate on the bottleneck (data direction)", p.loss);
    cmd.AddValue("RateSchedule", "dumbbell: 'time:rate,...' bottleneck rate changes", p.rateSchedule);
    cmd.AddValue("Hops", "dumbbell: bottleneck-rate links in series (N > 1: a chain of routers sharing the delay)", p.hops);
    cmd.AddValue("Standard", "wifi: 80211g, 80211n or 80211ac", p.standard);
    cmd.AddValue("Band", "wifi: 5GHz or 2.4GHz (802.11n)", p.band);
    cmd.AddValue("ChannelWidth", "wifi: MHz (0 = 20 for n, 80 for ac)", p.channelWidth);
    cmd.AddValue("RateControl", "wifi: constant or minstrel", p.rateControl);
    cmd.AddValue("Mcs", "wifi: MCS for constant rate (-1 = 7 for n, 9 for ac)", p.mcs);
    cmd.AddValue("SpatialStreams", "wifi: spatial streams (antennas)", p.spatialStreams);
    cmd.AddValue("ShortGuard", "wifi: short guard interval", p.shortGuard);
    cmd.AddValue("Distance", "wifi: station distance from the AP, metres", p.distance);
    cmd.AddValue("WiredRate", "wifi: server-AP link rate", p.wiredRate);
    cmd.AddValue("WiredDelay", "wifi: server-AP one-way delay", p.wiredDelay);
    cmd.AddValue("MaxAmpdu", "wifi: BE_MaxAmpduSize bytes (0 = ns-3 default)", p.maxAmpdu);
    cmd.AddValue("WifiQdisc", "wifi: none (MAC queue only) or default (ns-3 default qdisc at AP)", p.wifiQdisc);
    cmd.AddValue("ServerLink", "wifi: the server-AP link, p2p (WiredRate/WiredDelay) or wifi (a second 802.11 network)",
                 p.serverLink);
    cmd.AddValue("RxLossClient", "offline: drop this share of the IP packets each client receives", p.rxLossClient);
    cmd.AddValue("RxLossRouter", "offline: drop this share of the IP packets each router node (r1…, ap) receives",
                 p.rxLossRouter);
    cmd.AddValue("RxLossServer", "offline: drop this share of the IP packets the server receives", p.rxLossServer);
    cmd.AddValue("Outage", "offline: 'start:end,...' scenario seconds the server's access link is down", p.outage);
    cmd.AddValue("PhyRates", "wifi 80211g: each station's fixed PHY rate, Mbit/s, 'r0,r1,...' (last repeats)", p.phyRates);
    cmd.AddValue("Distances", "wifi: each station's distance from the AP, metres, 'd0,d1,...'", p.distances);
    cmd.AddValue("Sniffer", "wifi: add a listening node next to the AP (WiFi estimator, sniffer pcap)", p.sniffer);
    cmd.AddValue("Nodes", "graph: 'name:role,...' (role server, router or client)", p.nodes);
    cmd.AddValue("Links", "graph: 'from=a,to=b,rate=100Mbps,delay=1ms,queue=100[,monitor=1];...'", p.links);
}

void
WriteTopologyParams(std::ostream& run, const TopologyParams& p, bool withMtu)
{
    if (p.topology == "dumbbell")
    {
        run << "Rate = " << TomlString(p.rate) << "\nRtt = " << TomlString(p.rtt)
            << "\nDelay = " << TomlString(p.delay) << "\nAccessRate = " << TomlString(p.accessRate)
            << "\nAccessDelay = " << TomlString(p.accessDelay) << "\nAccessQueue = " << p.accessQueue
            << "\nQueuePackets = " << p.queuePackets << "\nQueueBdp = " << p.queueBdp
            << "\nLoss = " << p.loss << "\nRateSchedule = " << TomlString(p.rateSchedule)
            << "\nHops = " << p.hops << "\n";
    }
    else if (p.topology == "graph")
    {
        run << "Nodes = " << TomlString(p.nodes) << "\nLinks = " << TomlString(p.links) << "\n";
    }
    else
    {
        run << "Standard = " << TomlString(p.standard) << "\nBand = " << TomlString(p.band)
            << "\nChannelWidth = " << p.channelWidth << "\nRateControl = " << TomlString(p.rateControl)
            << "\nMcs = " << p.mcs << "\nSpatialStreams = " << p.spatialStreams
            << "\nShortGuard = " << (p.shortGuard ? "true" : "false") << "\nDistance = " << p.distance
            << "\nWiredRate = " << TomlString(p.wiredRate) << "\nWiredDelay = " << TomlString(p.wiredDelay)
            << "\nAccessQueue = " << p.accessQueue << "\nMaxAmpdu = " << p.maxAmpdu
            << "\nWifiQdisc = " << TomlString(p.wifiQdisc) << "\nServerLink = " << TomlString(p.serverLink)
            << "\nPhyRates = " << TomlString(p.phyRates) << "\nDistances = " << TomlString(p.distances)
            << "\nSniffer = " << (p.sniffer ? "true" : "false") << "\n";
    }
    if (p.rxLossClient > 0 || p.rxLossRouter > 0 || p.rxLossServer > 0 || !p.outage.empty())
        run << "RxLossClient = " << p.rxLossClient << "\nRxLossRouter = " << p.rxLossRouter
            << "\nRxLossServer = " << p.rxLossServer << "\nOutage = " << TomlString(p.outage) << "\n";
    if (withMtu)
        run << "Mtu = " << p.mtu << "\n";
}

WindowResults
BottleneckWindow(const Net& net, const QueueMonitor& qmon, double from, double to)
{
    WindowResults r;
    const double w = qmon.BinWidth();
    r.from = std::ceil(from / w - 1e-9) * w;
    r.to = std::floor(to / w + 1e-9) * w;
    r.utilisation = std::nan("");
    if (!net.capacity.empty() && r.to > r.from)
    {
        double capBits = 0.0;
        for (size_t k = 0; k < net.capacity.size(); k++)
        {
            double a = std::max(r.from, net.capacity[k].first);
            double b = std::min(r.to, k + 1 < net.capacity.size() ? net.capacity[k + 1].first : r.to);
            if (b > a)
                capBits += (b - a) * net.capacity[k].second;
        }
        r.utilisation = static_cast<double>(qmon.BytesBetween(r.from, r.to)) * 8.0 / capBits;
    }
    r.meanQueueDelayMs = qmon.MeanSojournMsBetween(r.from, r.to);
    return r;
}

} // namespace ns3
