// rdtp_ns3_run: one ns-3 simulation configured by CommandLine attributes.
//
// Topologies: "dumbbell" (server - router - bottleneck - router - N clients) and "wifi"
// (server - wired p2p - AP - N stations). Flows: rdtp (RdtpConsumer/RdtpProducer around
// the real core), tcp-bbr / tcp-cubic (BulkSendApplication + PacketSink with ns-3's TCP
// models), udp (saturating OnOff CBR). Writes timeseries.csv, flows.csv, queue.csv and
// run.toml into --Out. No protocol logic here: see rdtp-consumer.cc / rdtp-producer.cc.
#include "rdtp-consumer.h"
#include "rdtp-producer.h"
#include "rdtp-recorder.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/neighbor-cache-helper.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/wifi-module.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

struct Params
{
    std::string topology = "dumbbell";
    double duration = 10.0;
    double warmup = 0.0;
    double interval = 0.1;
    double queueInterval = 0.01;
    uint32_t seed = 1;
    uint32_t run = 1;
    uint32_t clients = 0;
    std::string out = "rdtp-out";
    std::string flows = "kind=rdtp";
    uint32_t port = 7447;
    // dumbbell
    std::string rate = "100Mbps";
    std::string rtt = "20ms";
    std::string delay = "";
    std::string accessRate = "10Gbps";
    std::string accessDelay = "10us";
    uint32_t accessQueue = 1000;
    uint32_t queuePackets = 0;
    double queueBdp = 1.0;
    double loss = 0.0;
    double settle = -1.0;
    std::string rateSchedule = "";
    // wifi
    std::string standard = "80211n";
    std::string band = "5GHz";
    uint32_t channelWidth = 0;
    std::string rateControl = "constant";
    int32_t mcs = -1;
    uint32_t spatialStreams = 1;
    bool shortGuard = false;
    double distance = 5.0;
    std::string wiredRate = "1Gbps";
    std::string wiredDelay = "1ms";
    uint32_t maxAmpdu = 0;
    std::string wifiQdisc = "none";
    std::string pcap; // file prefix; empty = no capture
    // tcp
    uint32_t tcpBuf = 0;
    uint32_t tcpSendSize = 14480;
};

struct FlowSpec
{
    std::string kind = "rdtp";
    std::string cc;
    uint32_t client = 0;
    double start = 0.0;
    double stop = -1.0;
    uint64_t size = 0;
    std::string rate = "10Mbps";
    uint32_t agg = 0;
    uint32_t window = 0;
    uint32_t unit = 0;
    double gain = 0.0;
    std::string object; // resolved object name (rdtp)
};

uint64_t
SplitMix64(uint64_t x)
{
    uint64_t z = x + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

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

std::vector<FlowSpec>
ParseFlows(const std::string& text, double duration)
{
    std::vector<FlowSpec> flows;
    for (const auto& one : Split(text, ';'))
    {
        FlowSpec f;
        for (const auto& kv : Split(one, ','))
        {
            size_t eq = kv.find('=');
            if (eq == std::string::npos)
            {
                Fail("bad flow field '" + kv + "' (want key=value)");
            }
            std::string k = kv.substr(0, eq);
            std::string v = kv.substr(eq + 1);
            try
            {
                if (k == "kind")
                    f.kind = v;
                else if (k == "cc")
                    f.cc = v;
                else if (k == "client")
                    f.client = static_cast<uint32_t>(std::stoul(v));
                else if (k == "start")
                    f.start = std::stod(v);
                else if (k == "stop")
                    f.stop = std::stod(v);
                else if (k == "size")
                    f.size = std::stoull(v);
                else if (k == "rate")
                    f.rate = v;
                else if (k == "agg")
                    f.agg = static_cast<uint32_t>(std::stoul(v));
                else if (k == "window")
                    f.window = static_cast<uint32_t>(std::stoul(v));
                else if (k == "unit")
                    f.unit = static_cast<uint32_t>(std::stoul(v));
                else if (k == "gain")
                    f.gain = std::stod(v);
                else
                    Fail("unknown flow field '" + k + "'");
            }
            catch (const std::exception&)
            {
                Fail("bad value in flow field '" + kv + "'");
            }
        }
        // Normalise kind/cc: "tcp" + cc, "tcp-bbr", "tcp-cubic", "rdtp" + controller, "udp".
        if (f.kind == "tcp")
        {
            f.kind = "tcp-" + (f.cc.empty() ? std::string("cubic") : f.cc);
        }
        if (f.kind == "tcp-bbr" || f.kind == "tcp-cubic")
        {
            f.cc = f.kind.substr(4);
        }
        else if (f.kind == "rdtp")
        {
            if (f.cc.empty())
                f.cc = "bbr";
        }
        else if (f.kind == "udp")
        {
            f.cc = "cbr";
        }
        else
        {
            Fail("unknown flow kind '" + f.kind + "' (rdtp, tcp-bbr, tcp-cubic, udp)");
        }
        if (f.stop < 0 || f.stop > duration)
            f.stop = duration;
        if (f.start >= f.stop)
            Fail("a flow starts at or after its stop time");
        flows.push_back(f);
    }
    if (flows.empty())
        Fail("no flows");
    return flows;
}

/// Highest PHY rate of the configured WiFi (for sizing bulk objects only).
double
WifiPhyMaxBps(const Params& p, uint32_t width)
{
    double perSs;
    if (p.standard == "80211ac")
    {
        perSs = width >= 160 ? 866.7e6 : width >= 80 ? 433.3e6 : width >= 40 ? 200e6 : 86.7e6;
    }
    else
    {
        perSs = width >= 40 ? 150e6 : 72.2e6;
    }
    return perSs * std::max<uint32_t>(1, p.spatialStreams);
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

const char*
CongStateName(TcpSocketState::TcpCongState_t s)
{
    switch (s)
    {
    case TcpSocketState::CA_OPEN:
        return "open";
    case TcpSocketState::CA_DISORDER:
        return "disorder";
    case TcpSocketState::CA_CWR:
        return "cwr";
    case TcpSocketState::CA_RECOVERY:
        return "recovery";
    case TcpSocketState::CA_LOSS:
        return "loss";
    default:
        return "other";
    }
}

TypeId
TcpCcType(const std::string& cc)
{
    return cc == "bbr" ? TcpBbr::GetTypeId() : TcpCubic::GetTypeId();
}

/// What the topology builder hands to the flow and measurement code.
struct Net
{
    Ptr<Node> server;
    Ipv4Address serverAddr;
    std::vector<Ptr<Node>> clients;
    std::vector<Ipv4Address> clientAddrs;
    /// Capacity timeline of the bottleneck (time s, bit/s); empty for WiFi.
    std::vector<std::pair<double, double>> capacity;
    double capacityForSizing = 0.0;
    std::map<std::string, std::string> derived;
    std::function<void(QueueMonitor*)> attachQueue;
    QueueMonitor::Sampler sampleQueue;
    NetDeviceContainer stations; // WiFi station devices (empty for the dumbbell)
    /// MPDUs the stations' MACs dropped (uplink: requests, TCP ACKs), by reason.
    std::shared_ptr<std::map<std::string, uint64_t>> stationDrops =
        std::make_shared<std::map<std::string, uint64_t>>();
};

/// Fail unless no queue disc sits on any device (WiFi devices excepted if `allowWifi`): the
/// device queues (and the WiFi MAC queue) must be the only queues, so the sampled queue is
/// the bottleneck queue.
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

Net
BuildDumbbell(const Params& p, uint32_t nClients)
{
    Net net;
    NodeContainer server, routers, clients;
    server.Create(1);
    routers.Create(2);
    clients.Create(nClients);
    InternetStackHelper stack;
    stack.Install(server);
    stack.Install(routers);
    stack.Install(clients);

    const Time accessDelay = Time(p.accessDelay);
    Time oneWay;
    if (!p.delay.empty())
        oneWay = Time(p.delay);
    else
        oneWay = Time(p.rtt) / 2 - accessDelay * 2;
    if (oneWay.IsNegative())
        Fail("Rtt is shorter than the access links' delay");
    const Time baseRtt = (oneWay + accessDelay * 2) * 2;
    const DataRate rate(p.rate);
    const double bdpBytes = rate.GetBitRate() / 8.0 * baseRtt.GetSeconds();
    uint32_t qPackets = p.queuePackets;
    if (qPackets == 0)
        qPackets = std::max<uint32_t>(2, static_cast<uint32_t>(std::ceil(p.queueBdp * bdpBytes / 1500.0)));

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(p.accessRate));
    access.SetChannelAttribute("Delay", TimeValue(accessDelay));
    access.SetQueue("ns3::DropTailQueue<Packet>",
                    "MaxSize",
                    QueueSizeValue(QueueSize(std::to_string(p.accessQueue) + "p")));
    access.DisableFlowControl();

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(rate));
    bottleneck.SetChannelAttribute("Delay", TimeValue(oneWay));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(std::to_string(qPackets) + "p")));
    bottleneck.DisableFlowControl();

    NetDeviceContainer dServer = access.Install(server.Get(0), routers.Get(0));
    NetDeviceContainer dBottle = bottleneck.Install(routers.Get(0), routers.Get(1));
    if (!p.pcap.empty())
    {
        access.EnablePcap(p.pcap + "-server", dServer.Get(0), true);
        bottleneck.EnablePcap(p.pcap + "-bottleneck", dBottle.Get(1), true);
    }
    std::vector<NetDeviceContainer> dClients;
    for (uint32_t i = 0; i < nClients; i++)
        dClients.push_back(access.Install(routers.Get(1), clients.Get(i)));

    Ipv4AddressHelper addr;
    addr.SetBase("10.1.0.0", "255.255.255.0");
    Ipv4InterfaceContainer iServer = addr.Assign(dServer);
    addr.SetBase("10.2.0.0", "255.255.255.0");
    addr.Assign(dBottle);
    for (uint32_t i = 0; i < nClients; i++)
    {
        std::string base = "10." + std::to_string(3 + i / 250) + "." + std::to_string(i % 250) + ".0";
        addr.SetBase(base.c_str(), "255.255.255.0");
        Ipv4InterfaceContainer ic = addr.Assign(dClients[i]);
        net.clientAddrs.push_back(ic.GetAddress(1));
        net.clients.push_back(clients.Get(i));
    }
    net.server = server.Get(0);
    net.serverAddr = iServer.GetAddress(0);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    NeighborCacheHelper().PopulateNeighborCache(); // static ARP: no resolution delays or drops
    CheckNoQdisc(false);

    if (p.loss > 0.0)
    {
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetAttribute("ErrorRate", DoubleValue(p.loss));
        em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
        dBottle.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));
    }

    // Capacity timeline and the rate schedule (both directions change together).
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
        for (uint32_t d = 0; d < 2; d++)
        {
            Ptr<NetDevice> dev = dBottle.Get(d);
            Simulator::Schedule(Seconds(ScenarioOrigin() + std::max(t, 0.0)),
                                [dev, r]() { dev->SetAttribute("DataRate", DataRateValue(r)); });
        }
    }
    net.capacityForSizing = maxRate;

    // The DropTail queue of router 1's bottleneck device (data direction) is the bottleneck
    // queue; flow control is disabled on every device so no queue disc sits in front of it.
    Ptr<PointToPointNetDevice> bdev = DynamicCast<PointToPointNetDevice>(dBottle.Get(0));
    Ptr<Queue<Packet>> queue = bdev->GetQueue();
    net.attachQueue = [queue](QueueMonitor* m) {
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
    net.derived["queue_sampled"] = "router1 bottleneck PointToPointNetDevice DropTail queue";
    net.derived["bottleneck_delay_ms"] = Fmt(oneWay.GetSeconds() * 1e3, 6);
    net.derived["base_rtt_ms"] = Fmt(baseRtt.GetSeconds() * 1e3, 6);
    net.derived["bdp_bytes"] = Fmt(bdpBytes, 0);
    net.derived["queue_packets"] = std::to_string(qPackets);
    net.derived["qdisc"] = "none (flow control disabled: device DropTail queues only)";
    net.derived["tcp_buffer_hint"] = Fmt(bdpBytes + qPackets * 1500.0, 0);
    net.sampleQueue = [queue]() {
        return std::make_pair<uint64_t, uint64_t>(queue->GetNPackets(), queue->GetNBytes());
    };
    return net;
}

Net
BuildWifi(const Params& p, uint32_t nStations)
{
    Net net;
    NodeContainer server, ap, stas;
    server.Create(1);
    ap.Create(1);
    stas.Create(nStations);

    PointToPointHelper wired;
    wired.SetDeviceAttribute("DataRate", StringValue(p.wiredRate));
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

    const bool ac = p.standard == "80211ac";
    if (!ac && p.standard != "80211n")
        Fail("Standard must be 80211n or 80211ac");
    uint32_t width = p.channelWidth != 0 ? p.channelWidth : (ac ? 80 : 20);
    std::string band = p.band;
    if (ac)
        band = "5GHz";
    if (band != "5GHz" && band != "2.4GHz")
        Fail("Band must be 5GHz or 2.4GHz");
    int32_t mcs = p.mcs >= 0 ? p.mcs : (ac ? 9 : 7);

    YansWifiChannelHelper channel = YansWifiChannelHelper::Default();
    YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());
    phy.Set("ChannelSettings",
            StringValue("{0, " + std::to_string(width) + ", " +
                        (band == "5GHz" ? "BAND_5GHZ" : "BAND_2_4GHZ") + ", 0}"));
    phy.Set("Antennas", UintegerValue(p.spatialStreams));
    phy.Set("MaxSupportedTxSpatialStreams", UintegerValue(p.spatialStreams));
    phy.Set("MaxSupportedRxSpatialStreams", UintegerValue(p.spatialStreams));

    WifiHelper wifi;
    wifi.SetStandard(ac ? WIFI_STANDARD_80211ac : WIFI_STANDARD_80211n);
    std::string mode;
    if (p.rateControl == "constant")
    {
        mode = std::string(ac ? "VhtMcs" : "HtMcs") + std::to_string(mcs);
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

    WifiMacHelper mac;
    Ssid ssid("rdtp");
    mac.SetType("ns3::StaWifiMac", "Ssid", SsidValue(ssid));
    NetDeviceContainer dStas = wifi.Install(phy, mac, stas);
    mac.SetType("ns3::ApWifiMac", "Ssid", SsidValue(ssid));
    NetDeviceContainer dAp = wifi.Install(phy, mac, ap);
    if (!p.pcap.empty())
    {
        phy.SetPcapDataLinkType(WifiPhyHelper::DLT_IEEE802_11_RADIO);
        phy.EnablePcap(p.pcap + "-sta", dStas);
        phy.EnablePcap(p.pcap + "-ap", dAp);
    }
    if (p.maxAmpdu > 0)
    {
        Config::Set("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Mac/BE_MaxAmpduSize",
                    UintegerValue(p.maxAmpdu));
    }

    MobilityHelper mobility;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0.0, 0.0, 0.0));
    for (uint32_t i = 0; i < nStations; i++)
    {
        double a = 2.0 * M_PI * i / nStations;
        pos->Add(Vector(p.distance * std::cos(a), p.distance * std::sin(a), 0.0));
    }
    mobility.SetPositionAllocator(pos);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(ap);
    mobility.Install(stas);

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
    for (uint32_t i = 0; i < nStations; i++)
    {
        net.clients.push_back(stas.Get(i));
        net.clientAddrs.push_back(iStas.GetAddress(i));
    }
    net.server = server.Get(0);
    net.serverAddr = iWired.GetAddress(0);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    NeighborCacheHelper().PopulateNeighborCache(); // static ARP: no resolution delays or drops

    CheckNoQdisc(p.wifiQdisc == "default");
    // Stations must be associated by scenario time 0 (see Settle); count those that are not.
    net.stations = dStas;
    for (uint32_t i = 0; i < dStas.GetN(); i++)
    {
        Ptr<WifiMac> mac = DynamicCast<WifiNetDevice>(dStas.Get(i))->GetMac();
        auto drops = net.stationDrops;
        Must(mac->TraceConnectWithoutContext(
                 "DroppedMpdu",
                 Callback<void, WifiMacDropReason, Ptr<const WifiMpdu>>([drops](WifiMacDropReason r, Ptr<const WifiMpdu>) {
                     static const char* names[] = {"failed_enqueue", "expired_lifetime", "retry_limit", "qos_old_packet"};
                     (*drops)[r < 4 ? names[r] : "other"]++;
                 })),
             "station WifiMac DroppedMpdu");
        Must(mac->GetTxopQueue(AC_BE)->TraceConnectWithoutContext(
                 "Drop", Callback<void, Ptr<const WifiMpdu>>([drops](Ptr<const WifiMpdu>) { (*drops)["queue_drop"]++; })),
             "station WifiMacQueue Drop");
    }

    net.capacityForSizing =
        std::min(static_cast<double>(DataRate(p.wiredRate).GetBitRate()), WifiPhyMaxBps(p, width));

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
                         static const char* names[] = {"failed_enqueue", "expired_lifetime", "retry_limit", "qos_old_packet"};
                         m->OnDrop(q->GetPacket()->GetUid(), true);
                         m->dropReasons[reason < 4 ? names[reason] : "other"]++;
                     })),
             "WifiMac DroppedMpdu");
        // Every MPDU the MAC queue itself drops (DropOldest eviction) or lets expire.
        Must(queue->TraceConnectWithoutContext("Drop", Cb([m](Ptr<const WifiMpdu> q) {
                 m->OnDrop(q->GetPacket()->GetUid(), false);
                 m->dropReasons["queue_drop"]++;
             })),
             "WifiMacQueue Drop");
        // With the default DropNewest policy, ns-3 3.37 refuses an MPDU at a full queue without
        // firing any trace: count packets handed to the MAC (MacTx) that never got enqueued.
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
    net.derived["queue_sampled"] = "AP WifiMacQueue AC_BE (MPDUs stay queued until acknowledged)";
    net.derived["channel_width_mhz"] = std::to_string(width);
    net.derived["band"] = band;
    net.derived["data_mode"] = mode;
    net.derived["qdisc"] = p.wifiQdisc == "none" ? "none (WiFi MAC queue only)" : "ns-3 default on the AP";
    net.derived["tcp_buffer_hint"] = "0";
    return net;
}

} // namespace

extern "C" int
rdtp_ns3_run(int argc, char** argv)
{
    const auto wallStart = std::chrono::steady_clock::now();
    Params p;
    CommandLine cmd("rdtp-sim --run-one");
    cmd.Usage("One rdtp/TCP/UDP simulation over a dumbbell or WiFi topology (see the README of "
              "crates/rdtp-ns3).");
    cmd.AddValue("Topology", "dumbbell or wifi", p.topology);
    cmd.AddValue("Duration", "Simulated seconds", p.duration);
    cmd.AddValue("Warmup", "Seconds excluded from the steady-state numbers", p.warmup);
    cmd.AddValue("Interval", "timeseries.csv interval, seconds", p.interval);
    cmd.AddValue("QueueInterval", "queue.csv sampling interval, seconds", p.queueInterval);
    cmd.AddValue("Seed", "RngSeedManager seed (also seeds rdtp receivers and objects)", p.seed);
    cmd.AddValue("Run", "RngSeedManager run number", p.run);
    cmd.AddValue("Clients", "Number of clients/stations (0 = as many as the flows need)", p.clients);
    cmd.AddValue("Out", "Output directory", p.out);
    cmd.AddValue("Flows",
                 "Flows: 'kind=rdtp,cc=bbr,client=0,start=0,stop=10,size=0;kind=tcp-cubic,...'",
                 p.flows);
    cmd.AddValue("Port", "UDP port of the RdtpProducer", p.port);
    cmd.AddValue("Rate", "dumbbell: bottleneck rate", p.rate);
    cmd.AddValue("Rtt", "dumbbell: base RTT (bottleneck one-way delay derived)", p.rtt);
    cmd.AddValue("Delay", "dumbbell: bottleneck one-way delay (overrides Rtt)", p.delay);
    cmd.AddValue("AccessRate", "dumbbell: access link rate", p.accessRate);
    cmd.AddValue("AccessDelay", "dumbbell: access link one-way delay", p.accessDelay);
    cmd.AddValue("AccessQueue", "DropTail packets of non-bottleneck devices", p.accessQueue);
    cmd.AddValue("QueuePackets", "dumbbell: bottleneck DropTail packets (0 = use QueueBdp)", p.queuePackets);
    cmd.AddValue("QueueBdp", "dumbbell: bottleneck queue in BDPs (1500-byte packets)", p.queueBdp);
    cmd.AddValue("Loss", "dumbbell: random packet loss rate on the bottleneck (data direction)", p.loss);
    cmd.AddValue("RateSchedule", "dumbbell: 'time:rate,...' bottleneck rate changes", p.rateSchedule);
    cmd.AddValue("Standard", "wifi: 80211n or 80211ac", p.standard);
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
    cmd.AddValue("Pcap",
                 "Write pcap captures with this file prefix (dumbbell: server access link and bottleneck; "
                 "wifi: server-AP link and every station, radiotap)",
                 p.pcap);
    cmd.AddValue("Settle",
                 "Seconds the network runs before scenario time 0 (-1 = 0 for dumbbell, 0.5 for "
                 "wifi, so stations are associated when flows start)",
                 p.settle);
    cmd.AddValue("TcpBuf", "TCP send/receive buffer bytes (0 = auto)", p.tcpBuf);
    cmd.AddValue("TcpSendSize", "BulkSendApplication SendSize", p.tcpSendSize);
    cmd.Parse(argc, argv);

    if (p.seed == 0)
        Fail("Seed must be > 0");
    if (p.duration <= 0 || p.interval <= 0 || p.queueInterval <= 0)
        Fail("Duration, Interval and QueueInterval must be > 0");
    RngSeedManager::SetSeed(p.seed);
    RngSeedManager::SetRun(p.run);

    if (p.settle < 0)
        p.settle = p.topology == "wifi" ? 0.5 : 0.0;
    SetScenarioOrigin(p.settle);
    auto At = [&p](double s) { return Seconds(p.settle + s); };
    std::filesystem::create_directories(p.out);
    std::vector<FlowSpec> flows = ParseFlows(p.flows, p.duration);
    uint32_t nClients = p.clients;
    for (const auto& f : flows)
        nClients = std::max(nClients, f.client + 1);

    // Defaults that must precede the topology; users override via --ns3::... (applied by Parse,
    // so only set what the user did not).
    Config::SetDefault("ns3::ArpCache::PendingQueueSize", UintegerValue(256));
    Config::SetDefault("ns3::ArpCache::AliveTimeout", TimeValue(Seconds(3600)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    std::string globalTcp;
    for (const auto& f : flows)
        if (f.kind.rfind("tcp-", 0) == 0 && globalTcp.empty())
            globalTcp = f.cc;
    if (!globalTcp.empty())
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCcType(globalTcp)));

    Net net;
    if (p.topology == "dumbbell")
        net = BuildDumbbell(p, nClients);
    else if (p.topology == "wifi")
        net = BuildWifi(p, nClients);
    else
        Fail("Topology must be dumbbell or wifi");

    uint32_t tcpBuf = p.tcpBuf;
    if (tcpBuf == 0)
    {
        double hint = std::stod(net.derived["tcp_buffer_hint"]);
        tcpBuf = static_cast<uint32_t>(std::min(256.0 * (1 << 20), std::max(8.0 * (1 << 20), 4.0 * hint)));
    }
    // TcpBuf sets both buffers unless the user set one directly with --ns3::TcpSocket::...
    auto userSet = [argc, argv](const std::string& name) {
        for (int i = 1; i < argc; i++)
            if (std::string(argv[i]).find(name) != std::string::npos)
                return true;
        return false;
    };
    if (!userSet("TcpSocket::SndBufSize"))
        Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(tcpBuf));
    if (!userSet("TcpSocket::RcvBufSize"))
        Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(tcpBuf));

    // Objects served by the producer: explicit sizes get "obj-<size>", bulk flows (size 0)
    // share one "bulk" object large enough that no flow runs out.
    std::map<std::string, uint64_t> objects;
    uint64_t bulk = 0;
    for (auto& f : flows)
    {
        if (f.kind != "rdtp")
            continue;
        if (f.size > 0)
        {
            f.object = "obj-" + std::to_string(f.size);
            objects[f.object] = f.size;
        }
        else
        {
            double need = net.capacityForSizing / 8.0 * (f.stop - f.start) * 1.25 + (1 << 20);
            bulk = std::max(bulk, static_cast<uint64_t>(std::ceil(need / 1e6) * 1e6));
            f.object = "bulk";
        }
    }
    if (bulk > 0)
        objects["bulk"] = bulk;
    std::string objectList;
    for (const auto& [name, size] : objects)
    {
        uint64_t s = 0;
        for (char c : name)
            s = s * 131 + static_cast<unsigned char>(c);
        uint64_t objSeed = SplitMix64((uint64_t(p.seed) << 32) ^ (uint64_t(p.run) << 8) ^ s);
        if (!objectList.empty())
            objectList += ",";
        objectList += name + ":" + std::to_string(size) + ":" + std::to_string(objSeed);
    }

    MeasureWindow window{p.warmup, p.duration};
    FlowRecorder recorder(p.out, window, p.interval);
    FlowRecorder* rec = &recorder;

    if (!objects.empty())
    {
        Ptr<RdtpProducer> producer = CreateObject<RdtpProducer>();
        producer->SetAttribute("Port", UintegerValue(p.port));
        producer->SetAttribute("Objects", StringValue(objectList));
        net.server->AddApplication(producer);
        producer->SetStartTime(Seconds(0));
        producer->SetStopTime(At(p.duration));
    }

    std::vector<Ptr<RdtpConsumer>> consumers(flows.size());
    for (uint32_t i = 0; i < flows.size(); i++)
    {
        FlowSpec& f = flows[i];
        if (f.client >= net.clients.size())
            Fail("flow client index out of range");
        FlowRecord r;
        r.index = i;
        r.kind = f.kind;
        r.cc = f.cc;
        r.client = f.client;
        r.start = f.start;
        r.stop = f.stop;
        r.objectSize = f.kind == "rdtp" ? objects[f.object] : f.size;
        FlowRecord* fr = &rec->Add(r);
        Ptr<Node> client = net.clients[f.client];
        const uint16_t port = static_cast<uint16_t>(50000 + i);

        if (f.kind == "rdtp")
        {
            Ptr<RdtpConsumer> c = CreateObject<RdtpConsumer>();
            c->SetAttribute("Remote", AddressValue(InetSocketAddress(net.serverAddr, p.port)));
            c->SetAttribute("ObjectName", StringValue(f.object));
            c->SetAttribute("Controller", StringValue(f.cc));
            c->SetAttribute("Unit", UintegerValue(f.unit));
            c->SetAttribute("MaxAggregation", UintegerValue(f.agg));
            c->SetAttribute("ProbeGain", DoubleValue(f.gain));
            c->SetAttribute("FixedWindow", UintegerValue(f.window));
            c->SetAttribute("Seed", UintegerValue(SplitMix64((uint64_t(p.seed) << 32) + p.run) ^ (i + 1)));
            client->AddApplication(c);
            c->SetStartTime(At(f.start));
            c->SetStopTime(At(f.stop));
            Must(c->TraceConnectWithoutContext(
                "Delivered",
                Callback<void, uint64_t>([fr, rec](uint64_t n) {
                    fr->OnBytes(ScenarioNow(), rec->Window(), n);
                })), "c Delivered");
            Must(c->TraceConnectWithoutContext(
                "RttSample",
                Callback<void, Time, Time>([fr, rec](Time rtt, Time) {
                    fr->OnRtt(ScenarioNow(), rec->Window(), rtt.GetSeconds() * 1e3);
                })), "c RttSample");
            Must(c->TraceConnectWithoutContext(
                "Congestion",
                Callback<void, uint64_t, double, uint32_t, const std::string&>(
                    [fr](uint64_t cwnd, double pacing, uint32_t agg, const std::string& state) {
                        fr->cwnd = static_cast<double>(cwnd);
                        fr->pacingMbps = pacing >= 0 ? pacing * 8.0 / 1e6 : std::nan("");
                        fr->aggregation = agg;
                        fr->state = state;
                    })), "c Congestion");
            Must(c->TraceConnectWithoutContext("Finished", Callback<void, Time>([fr](Time) {
                                              fr->completed = true;
                                              fr->finishS = ScenarioNow();
                                          })), "c Finished");
            Must(c->TraceConnectWithoutContext("Failed", Callback<void, int>([fr](int err) {
                                              fr->failed = true;
                                              fr->state = "failed:" + std::to_string(err);
                                          })), "c Failed");
            consumers[i] = c;
        }
        else if (f.kind == "udp")
        {
            Ptr<PacketSink> sink = CreateObject<PacketSink>();
            sink->SetAttribute("Protocol", TypeIdValue(UdpSocketFactory::GetTypeId()));
            sink->SetAttribute("Local", AddressValue(InetSocketAddress(Ipv4Address::GetAny(), port)));
            client->AddApplication(sink);
            sink->SetStartTime(Seconds(0));
            sink->SetStopTime(At(p.duration));
            Must(sink->TraceConnectWithoutContext(
                "Rx", Callback<void, Ptr<const Packet>, const Address&>([fr, rec](Ptr<const Packet> pk, const Address&) {
                    fr->OnBytes(ScenarioNow(), rec->Window(), pk->GetSize());
                })), "sink Rx");
            Ptr<OnOffApplication> src = CreateObject<OnOffApplication>();
            src->SetAttribute("Protocol", TypeIdValue(UdpSocketFactory::GetTypeId()));
            src->SetAttribute("Remote", AddressValue(InetSocketAddress(net.clientAddrs[f.client], port)));
            src->SetAttribute("DataRate", DataRateValue(DataRate(f.rate)));
            src->SetAttribute("PacketSize", UintegerValue(1472));
            src->SetAttribute("OnTime", StringValue("ns3::ConstantRandomVariable[Constant=1e9]"));
            src->SetAttribute("OffTime", StringValue("ns3::ConstantRandomVariable[Constant=0]"));
            src->SetAttribute("MaxBytes", UintegerValue(f.size));
            net.server->AddApplication(src);
            src->SetStartTime(At(f.start));
            src->SetStopTime(At(f.stop));
        }
        else // tcp-bbr / tcp-cubic
        {
            Ptr<PacketSink> sink = CreateObject<PacketSink>();
            sink->SetAttribute("Protocol", TypeIdValue(TcpSocketFactory::GetTypeId()));
            sink->SetAttribute("Local", AddressValue(InetSocketAddress(Ipv4Address::GetAny(), port)));
            client->AddApplication(sink);
            sink->SetStartTime(Seconds(0));
            sink->SetStopTime(At(p.duration));
            Must(sink->TraceConnectWithoutContext(
                "Rx", Callback<void, Ptr<const Packet>, const Address&>([fr, rec](Ptr<const Packet> pk, const Address&) {
                    fr->OnBytes(ScenarioNow(), rec->Window(), pk->GetSize());
                    // A sized TCP transfer is complete when the sink has every byte.
                    if (fr->objectSize > 0 && !fr->completed && fr->bytes >= fr->objectSize)
                    {
                        fr->completed = true;
                        fr->finishS = ScenarioNow();
                    }
                })), "sink Rx");
            Ptr<BulkSendApplication> src = CreateObject<BulkSendApplication>();
            src->SetAttribute("Protocol", TypeIdValue(TcpSocketFactory::GetTypeId()));
            src->SetAttribute("Remote", AddressValue(InetSocketAddress(net.clientAddrs[f.client], port)));
            src->SetAttribute("MaxBytes", UintegerValue(f.size));
            src->SetAttribute("SendSize", UintegerValue(p.tcpSendSize));
            net.server->AddApplication(src);
            src->SetStartTime(At(f.start));
            src->SetStopTime(At(f.stop));
            fr->segmentSize = 1448;
            const std::string cc = f.cc;
            const bool swap = cc != globalTcp;
            // The socket exists once StartApplication ran. This event is queued before the
            // application's start event (same timestamp, earlier insertion), so ScheduleNow
            // from here runs right after StartApplication, before any packet left the node.
            auto attach = std::make_shared<std::function<void()>>();
            *attach = [src, fr, rec, cc, swap, attach]() {
                Ptr<TcpSocketBase> sock = DynamicCast<TcpSocketBase>(src->GetSocket());
                if (!sock)
                {
                    Simulator::Schedule(NanoSeconds(1), *attach);
                    return;
                }
                if (swap)
                {
                    ObjectFactory factory;
                    factory.SetTypeId(TcpCcType(cc));
                    sock->SetCongestionControlAlgorithm(factory.Create<TcpCongestionOps>());
                }
                // ns-3's TcpBbr requires a paced socket (TcpBbr::Init asserts it, but the
                // Debian build compiles asserts out and BBR then runs unpaced and stalls).
                // CUBIC stays unpaced, as Linux CUBIC without an fq qdisc. The connection is
                // not established yet, so this precedes the congestion control's Init.
                sock->SetPacingStatus(cc == "bbr");
                Must(sock->TraceConnectWithoutContext(
                    "CongestionWindow", Callback<void, uint32_t, uint32_t>([fr](uint32_t, uint32_t v) {
                        fr->cwnd = static_cast<double>(v) / fr->segmentSize;
                    })), "sock CongestionWindow");
                Must(sock->TraceConnectWithoutContext(
                    "RTT", Callback<void, Time, Time>([fr, rec](Time, Time v) {
                        if (v.IsStrictlyPositive())
                            fr->OnRtt(ScenarioNow(), rec->Window(), v.GetSeconds() * 1e3);
                    })), "sock RTT");
                Must(sock->TraceConnectWithoutContext(
                    "PacingRate", Callback<void, DataRate, DataRate>([fr](DataRate, DataRate v) {
                        fr->pacingMbps = static_cast<double>(v.GetBitRate()) / 1e6;
                    })), "sock PacingRate");
                Must(sock->TraceConnectWithoutContext(
                    "CongState",
                    Callback<void, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t>(
                        [fr](TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t v) {
                            fr->state = CongStateName(v);
                            if (v == TcpSocketState::CA_LOSS)
                                fr->timeouts++;
                        })), "sock CongState");
                Must(sock->TraceConnectWithoutContext(
                    "Tx",
                    Callback<void, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>>(
                        [fr](Ptr<const Packet> pk, const TcpHeader& h, Ptr<const TcpSocketBase>) {
                            uint32_t len = pk->GetSize();
                            if (len == 0)
                                return;
                            SequenceNumber32 seq = h.GetSequenceNumber();
                            SequenceNumber32 end = seq + len;
                            if (fr->haveHighTx && seq < SequenceNumber32(fr->highTx))
                                fr->retransmissions++;
                            if (!fr->haveHighTx || end > SequenceNumber32(fr->highTx))
                            {
                                fr->highTx = end.GetValue();
                                fr->haveHighTx = true;
                            }
                        })), "sock Tx");
                fr->state = "open";
            };
            Simulator::Schedule(At(f.start), [attach]() { Simulator::ScheduleNow(*attach); });
        }
    }

    QueueMonitor* qmon = nullptr;
    std::unique_ptr<QueueMonitor> qmonOwner;
    qmonOwner = std::make_unique<QueueMonitor>(p.out, p.queueInterval, net.sampleQueue, window);
    qmon = qmonOwner.get();
    net.attachQueue(qmon);
    qmon->Start();
    recorder.Start();
    uint32_t unassociated = 0;
    Simulator::Schedule(At(0), [&net, &unassociated]() {
        for (uint32_t i = 0; i < net.stations.GetN(); i++)
        {
            Ptr<WifiNetDevice> d = DynamicCast<WifiNetDevice>(net.stations.Get(i));
            Ptr<StaWifiMac> mac = DynamicCast<StaWifiMac>(d->GetMac());
            if (mac && !mac->IsAssociated())
                unassociated++;
        }
        if (unassociated > 0)
            std::cerr << "rdtp-sim: warning: " << unassociated
                      << " station(s) not associated at scenario time 0; raise Settle" << std::endl;
    });

    Simulator::Stop(At(p.duration));
    Simulator::Run();
    const double simulated = Simulator::Now().GetSeconds();

    // Final rdtp statistics from the core.
    for (uint32_t i = 0; i < flows.size(); i++)
    {
        if (!consumers[i])
            continue;
        RdtpStats st = consumers[i]->GetStats();
        FlowRecord& fr = recorder.Get(i);
        fr.retransmissions = st.units_rerequested;
        fr.timeouts = st.timeouts;
        fr.duplicates = static_cast<int64_t>(st.duplicates);
        fr.lost = static_cast<int64_t>(st.units_lost);
        fr.invalid = static_cast<int64_t>(st.invalid);
    }
    recorder.Finish();

    // Bottleneck utilisation and queueing delay over [warmup, busy end).
    const double busyEnd = std::max(p.warmup, recorder.BusyEnd());
    const double w = qmon->BinWidth();
    const double from = std::ceil(p.warmup / w - 1e-9) * w;
    const double to = std::floor(busyEnd / w + 1e-9) * w;
    double utilisation = std::nan("");
    if (!net.capacity.empty() && to > from)
    {
        double capBits = 0.0;
        for (size_t k = 0; k < net.capacity.size(); k++)
        {
            double a = std::max(from, net.capacity[k].first);
            double b = std::min(to, k + 1 < net.capacity.size() ? net.capacity[k + 1].first : to);
            if (b > a)
                capBits += (b - a) * net.capacity[k].second;
        }
        utilisation = static_cast<double>(qmon->BytesBetween(from, to)) * 8.0 / capBits;
    }
    const double meanQueueDelay = qmon->MeanSojournMsBetween(from, to);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();

    std::ofstream run(p.out + "/run.toml");
    run << "# rdtp-sim run: resolved parameters, derived values and results\n";
    run << "[run]\n";
    run << "ns3_version = \"" << Version::Major() << "." << Version::Minor() << "." << Version::Patch()
        << "\"\n";
    run << "seed = " << p.seed << "\n";
    run << "run = " << p.run << "\n";
    run << "simulated_s = " << Fmt(simulated, 6) << "\n";
    run << "wall_s = " << Fmt(wall, 3) << "\n";
    run << "settle_s = " << Fmt(p.settle, 6) << "\n";
    run << "sim_per_wall = " << Fmt(wall > 0 ? simulated / wall : 0.0, 3) << "\n";
    run << "\n[params]\n";
    run << "Topology = " << TomlString(p.topology) << "\n";
    run << "Duration = " << p.duration << "\nWarmup = " << p.warmup << "\nInterval = " << p.interval
        << "\nQueueInterval = " << p.queueInterval << "\nClients = " << nClients << "\n";
    run << "Flows = " << TomlString(p.flows) << "\nPort = " << p.port << "\n";
    if (p.topology == "dumbbell")
    {
        run << "Rate = " << TomlString(p.rate) << "\nRtt = " << TomlString(p.rtt)
            << "\nDelay = " << TomlString(p.delay) << "\nAccessRate = " << TomlString(p.accessRate)
            << "\nAccessDelay = " << TomlString(p.accessDelay) << "\nAccessQueue = " << p.accessQueue
            << "\nQueuePackets = " << p.queuePackets << "\nQueueBdp = " << p.queueBdp
            << "\nLoss = " << p.loss << "\nRateSchedule = " << TomlString(p.rateSchedule) << "\n";
    }
    else
    {
        run << "Standard = " << TomlString(p.standard) << "\nBand = " << TomlString(p.band)
            << "\nChannelWidth = " << p.channelWidth << "\nRateControl = " << TomlString(p.rateControl)
            << "\nMcs = " << p.mcs << "\nSpatialStreams = " << p.spatialStreams
            << "\nShortGuard = " << (p.shortGuard ? "true" : "false") << "\nDistance = " << p.distance
            << "\nWiredRate = " << TomlString(p.wiredRate) << "\nWiredDelay = " << TomlString(p.wiredDelay)
            << "\nAccessQueue = " << p.accessQueue << "\nMaxAmpdu = " << p.maxAmpdu
            << "\nWifiQdisc = " << TomlString(p.wifiQdisc) << "\n";
    }
    run << "TcpBuf = " << tcpBuf << "\nTcpSendSize = " << p.tcpSendSize << "\n";
    run << "\n[derived]\n";
    for (const auto& [k, v] : net.derived)
        run << k << " = " << TomlString(v) << "\n";
    run << "objects = " << TomlString(objectList) << "\n";
    run << "tcp_socket_type = " << TomlString(globalTcp.empty() ? "" : TcpCcType(globalTcp).GetName()) << "\n";
    run << "\n[results]\n";
    run << "window_start_s = " << Fmt(from, 6) << "\n";
    run << "window_end_s = " << Fmt(to, 6) << "\n";
    if (!std::isnan(utilisation))
        run << "utilisation = " << Fmt(utilisation, 6) << "\n";
    if (!std::isnan(meanQueueDelay))
        run << "mean_queue_delay_ms = " << Fmt(meanQueueDelay, 6) << "\n";
    if (qmon->silentDrops)
    {
        const uint64_t silent = qmon->silentDrops();
        qmon->drops += silent;
        if (silent > 0)
            qmon->dropReasons["queue_full_untraced"] = silent;
    }
    run << "queue_drops = " << qmon->drops << "\n";
    run << "unassociated_at_start = " << unassociated << "\n";
    for (const auto& [reason, n] : qmon->dropReasons)
        run << "drops_" << reason << " = " << n << "\n";
    run << "queue_max_packets = " << qmon->maxPackets << "\n";
    for (const auto& [reason, n] : *net.stationDrops)
        run << "station_drops_" << reason << " = " << n << "\n";
    run.close();

    std::printf("rdtp-sim: %s, %.1f s simulated in %.2f s wall (%.2f sim-s per wall-s)\n",
                p.topology.c_str(), simulated, wall, wall > 0 ? simulated / wall : 0.0);
    for (auto& f : recorder.All())
    {
        std::printf("  flow %u %s/%s client %u: %llu bytes, %s%s\n",
                    f.index, f.kind.c_str(), f.cc.c_str(), f.client,
                    static_cast<unsigned long long>(f.bytes),
                    f.completed ? "completed at " : (f.failed ? "FAILED" : "running"),
                    f.completed ? (Fmt(f.finishS, 3) + " s").c_str() : "");
    }
    if (!std::isnan(utilisation))
        std::printf("  bottleneck utilisation %.4f, mean queueing delay %.3f ms\n", utilisation, meanQueueDelay);
    std::fflush(stdout);

    Simulator::Destroy();
    return 0;
}
