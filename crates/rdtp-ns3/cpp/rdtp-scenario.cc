// rdtp_ns3_run: one ns-3 simulation configured by CommandLine attributes.
//
// Topologies (built by rdtp-topology.cc, shared with the real-time emulator): "dumbbell"
// (server - router - bottleneck - router - N clients), "wifi" (server - wired p2p - AP -
// N stations) and "graph" (rdtp-graph.cc: named servers, routers and clients). Flows: rdtp
// (RdtpConsumer/RdtpProducer around the real core), workload (RdtpWorkload: Poisson × Zipf
// fetches of a catalogue, seed 003 §III; fetches.csv), tcp-bbr / tcp-cubic
// (BulkSendApplication + PacketSink with ns-3's TCP models), udp (saturating OnOff CBR). Caching routers
// (RdtpRouter, placed by rdtp-placement.cc) on the nodes --Routers names. Writes
// timeseries.csv, flows.csv, queue.csv, cs.csv (with routers), drops.csv (with DropTrace)
// and run.toml into --Out. No
// protocol logic here: see rdtp-consumer.cc / rdtp-producer.cc / rdtp-router.cc.
#include "rdtp-consumer.h"
#include "rdtp-drop-trace.h"
#include "rdtp-impair.h"
#include "rdtp-placement.h"
#include "rdtp-producer.h"
#include "rdtp-recorder.h"
#include "rdtp-run.h"
#include "rdtp-topology.h"
#include "rdtp-wifi-monitor.h"
#include "rdtp-workload.h"

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
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

using namespace ns3;

namespace
{

struct Params : RunParams
{
    Params()
    {
        out = "rdtp-out";
        duration = 10.0;
    }

    uint32_t clients = 0;
    std::string flows = "kind=rdtp";
    uint32_t port = 7447;
    /// Caching routers: RouterSpec::sim_spec items, ';'-separated.
    std::string routers;
    /// Write requests.csv (every rdtp request).
    bool requests = false;
    /// Write drops.csv (rdtp-drop-trace.h: sent, received and dropped per device and layer).
    bool dropTrace = false;
    /// End the run once every flow (all sized rdtp fetches) finished or failed.
    bool stopWhenDone = false;
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
    std::string config; // rdtp, workload: the receiver spec, handed to the core unchanged
    uint32_t unit = 0;  // workload: its unit, for prewarm (also a key of `config`)
    std::string object; // resolved object name (rdtp)
    std::string via;    // rdtp: the node of the first caching router (empty: the server)
    std::string server; // graph: the server node (empty: the topology's server)
    bool up = false;    // tcp/udp: client → server (seed 002's uplink stations)
    /// rdtp informed start: "" (none), "auto" (the station's own estimate), or bytes/s.
    std::string initialRate;
    // workload (seed 003 §III): fetches per second, Zipf exponent, catalogue size, the servers
    // the objects are spread over (round robin by rank) and each one's first hop ("-": none).
    double requests = 0.0;
    double alpha = 0.8;
    uint32_t objects = 0;
    double lastStart = -1.0; // no fetch starts after this (scenario seconds; < 0: none)
    uint32_t prewarm = 0;    // fetches replayed through the caches before the run (no packets)
    std::vector<std::string> servers;
    std::vector<std::string> vias;
};

/// Seed 002's listeners: the sniffer node's monitor (wifi.csv, joins.csv) and each informed
/// rdtp consumer's own station (initial_rate = auto).
struct WifiObservers
{
    std::unique_ptr<WifiMonitor> sniffer;
    std::unique_ptr<WifiTracer> tracer;
    std::vector<std::unique_ptr<WifiMonitor>> stations;
    /// joins.csv rows: what the sniffer predicted when each flow started.
    std::vector<std::string> joins;
};

uint64_t
SplitMix64(uint64_t x)
{
    uint64_t z = x + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
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
                    f.cc = PercentDecode(v);
                else if (k == "client")
                    f.client = static_cast<uint32_t>(std::stoul(v));
                else if (k == "start")
                    f.start = std::stod(v);
                else if (k == "stop")
                    f.stop = std::stod(v);
                else if (k == "via")
                    f.via = v;
                else if (k == "server")
                    f.server = v;
                else if (k == "size")
                    f.size = std::stoull(v);
                else if (k == "rate")
                    f.rate = v;
                else if (k == "config")
                    f.config = PercentDecode(v);
                else if (k == "unit")
                    f.unit = static_cast<uint32_t>(std::stoul(v));
                else if (k == "dir")
                {
                    if (v != "up" && v != "down")
                        Fail("flow dir must be up or down");
                    f.up = v == "up";
                }
                else if (k == "requests")
                    f.requests = std::stod(v);
                else if (k == "alpha")
                    f.alpha = std::stod(v);
                else if (k == "objects")
                    f.objects = static_cast<uint32_t>(std::stoul(v));
                else if (k == "last_start")
                    f.lastStart = std::stod(v);
                else if (k == "prewarm")
                    f.prewarm = static_cast<uint32_t>(std::stoul(v));
                else if (k == "servers")
                    f.servers = Split(v, ':');
                else if (k == "vias")
                    f.vias = Split(v, ':');
                else if (k == "initial_rate")
                {
                    if (v != "auto")
                        (void)std::stod(v);
                    f.initialRate = v;
                }
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
        if (f.kind == "tcp-bbr" || f.kind == "tcp-cubic" || f.kind == "tcp-reno")
        {
            f.cc = f.kind.substr(4);
        }
        else if (f.kind == "rdtp" || f.kind == "workload")
        {
            if (f.cc.empty())
                f.cc = rdtp_cc_default(); // the receivers' default controller
            if (f.kind == "workload" &&
                (f.requests <= 0 || f.objects == 0 || f.size == 0 || f.servers.empty() || f.vias.size() != f.servers.size()))
                Fail("a workload needs requests > 0, objects > 0, size > 0, servers and as many vias");
        }
        else if (f.kind == "udp")
        {
            f.cc = "cbr";
        }
        else
        {
            Fail("unknown flow kind '" + f.kind + "' (rdtp, workload, tcp-bbr, tcp-cubic, tcp-reno, udp)");
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
    if (cc == "reno")
        return TcpLinuxReno::GetTypeId();
    return cc == "bbr" ? TcpBbr::GetTypeId() : TcpCubic::GetTypeId();
}


/// Parse and check the CommandLine attributes, then start the run (seeds, Settle, Out).
Params
ParseRunArguments(int argc, char** argv)
{
    Params p;
    CommandLine cmd("rdtp-sim --run-one");
    cmd.Usage("One rdtp/TCP/UDP simulation over a dumbbell or WiFi topology (see the README of "
              "crates/rdtp-ns3).");
    AddRunArguments(cmd, p, RunMode::Offline);
    cmd.AddValue("Clients", "Number of clients/stations (0 = as many as the flows need)", p.clients);
    cmd.AddValue("Flows",
                 "Flows: 'kind=rdtp,cc=bbr,config=<receiver spec, %-escaped>,client=0,start=0,stop=10,size=0;"
                 "kind=tcp-cubic,...'",
                 p.flows);
    cmd.AddValue("Port", "UDP port of the RdtpProducer and the RdtpRouters", p.port);
    cmd.AddValue("Routers",
                 "Caching routers: 'node=r1,id=<u64>,config=<router spec, %-escaped: cs_units=N%2Ccs_policy=lru"
                 "%2C...>,up=<node>,route=<prefix>:<node>;node=...' (rdtp_router_help() lists the keys)",
                 p.routers);
    AddTopologyArguments(cmd, p);
    cmd.AddValue("Pcap",
                 "Write pcap captures with this file prefix (dumbbell: server access link and bottleneck; "
                 "wifi: server-AP link and every station, radiotap)",
                 p.pcap);
    cmd.AddValue("Requests", "Write requests.csv: every request of every rdtp flow", p.requests);
    cmd.AddValue("DropTrace",
                 "Write drops.csv: what every WiFi/p2p device and IPv4 stack sent, received and dropped, "
                 "per node, by reason",
                 p.dropTrace);
    cmd.AddValue("StopWhenDone",
                 "End the run when every flow finished or failed (all flows must be sized rdtp fetches)",
                 p.stopWhenDone);
    cmd.AddValue("TcpBuf", "TCP send/receive buffer bytes (0 = auto)", p.tcpBuf);
    cmd.AddValue("TcpSendSize", "BulkSendApplication SendSize", p.tcpSendSize);
    cmd.Parse(argc, argv);

    CheckSeed(p);
    if (p.duration <= 0 || p.interval <= 0 || p.queueInterval <= 0)
        Fail("Duration, Interval and QueueInterval must be > 0");
    StartRun(p);
    return p;
}

/// Defaults that must precede the topology; users override via --ns3::... Returns the CC of
/// the first TCP flow, which becomes the global TCP socket type ("" without TCP flows).
std::string
SetDefaults(const std::vector<FlowSpec>& flows)
{
    Config::SetDefault("ns3::ArpCache::PendingQueueSize", UintegerValue(256));
    Config::SetDefault("ns3::ArpCache::AliveTimeout", TimeValue(Seconds(3600)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    std::string globalTcp;
    for (const auto& f : flows)
        if (f.kind.rfind("tcp-", 0) == 0 && globalTcp.empty())
            globalTcp = f.cc;
    if (!globalTcp.empty())
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCcType(globalTcp)));
    return globalTcp;
}

/// The TCP buffers (TcpBuf, else max(8 MiB, 4 × the topology's hint), at most 256 MiB): both
/// unless the user set one directly with --ns3::TcpSocket::...
uint32_t
SetTcpBuffers(const Params& p, const Net& net, int argc, char** argv)
{
    uint32_t tcpBuf = p.tcpBuf;
    if (tcpBuf == 0)
    {
        double hint = std::stod(net.derived.at("tcp_buffer_hint"));
        tcpBuf = static_cast<uint32_t>(std::min(256.0 * (1 << 20), std::max(8.0 * (1 << 20), 4.0 * hint)));
    }
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
    return tcpBuf;
}

/// The objects the producers serve: explicit sizes get "obj-<size>", bulk flows (size 0)
/// share one "bulk" object large enough that no flow runs out; in a graph each server's
/// objects are "<server>/…" (the prefix its routes match). Sets each rdtp flow's object.
struct Objects
{
    std::map<std::string, uint64_t> sizes;
    /// The server node of each object ("" = the topology's server).
    std::map<std::string, std::string> server;
    /// Every object as name:size:seed,... (run.toml).
    std::string list;
    /// Each server's RdtpProducer "Objects" attribute: name:size:seed,...
    std::map<std::string, std::string> byServer;
};

/// A seed for `name`, derived from the run's Seed and Run.
uint64_t
NameSeed(const Params& p, const std::string& name)
{
    uint64_t s = 0;
    for (char c : name)
        s = s * 131 + static_cast<unsigned char>(c);
    return SplitMix64((uint64_t(p.seed) << 32) ^ (uint64_t(p.run) << 8) ^ s);
}

/// The name of the object of Zipf rank `rank` in a workload's catalogue of `size`-byte objects.
std::string
CatalogueName(const std::string& server, uint64_t size, uint32_t rank)
{
    return (server.empty() ? "" : server + "/") + "cat-" + std::to_string(size) + "-" + std::to_string(rank);
}

Objects
PlanObjects(std::vector<FlowSpec>& flows, const Net& net, const Params& p)
{
    Objects o;
    uint64_t bulk = 0;
    std::vector<std::string> bulkNames;
    for (auto& f : flows)
    {
        if (f.kind == "workload")
        {
            // The catalogue: rank i (from 1) is <server>/cat-<size>-<i>, servers in turn.
            for (uint32_t i = 1; i <= f.objects; i++)
            {
                const std::string& server = f.servers[(i - 1) % f.servers.size()];
                const std::string name = CatalogueName(server, f.size, i);
                o.sizes[name] = f.size;
                o.server[name] = server;
            }
            continue;
        }
        if (f.kind != "rdtp")
            continue;
        const std::string prefix = f.server.empty() ? "" : f.server + "/";
        if (f.size > 0)
        {
            f.object = prefix + "obj-" + std::to_string(f.size);
            o.sizes[f.object] = f.size;
        }
        else
        {
            double need = net.capacityForSizing / 8.0 * (f.stop - f.start) * 1.25 + (1 << 20);
            bulk = std::max(bulk, static_cast<uint64_t>(std::ceil(need / 1e6) * 1e6));
            f.object = prefix + "bulk";
            bulkNames.push_back(f.object);
        }
        o.server[f.object] = f.server;
    }
    for (const auto& name : bulkNames)
        o.sizes[name] = bulk;
    for (const auto& [name, size] : o.sizes)
    {
        const std::string entry = name + ":" + std::to_string(size) + ":" + std::to_string(NameSeed(p, name));
        std::string& own = o.byServer[o.server[name]];
        for (std::string* list : {&o.list, &own})
            *list += (list->empty() ? "" : ",") + entry;
    }
    return o;
}

/// The node of server `name` ("" = the topology's server).
Ptr<Node>
ServerNode(const Net& net, const std::string& name)
{
    return name.empty() ? net.server : NamedNode(net, name);
}

/// A producer and the name of its node.
struct Producer
{
    std::string node;
    Ptr<RdtpProducer> app;
};

/// One RdtpProducer on each server that serves an rdtp flow's object.
std::vector<Producer>
InstallProducers(const Net& net, const Params& p, const Objects& objects)
{
    std::vector<Producer> producers;
    for (const auto& [server, list] : objects.byServer)
    {
        Ptr<RdtpProducer> producer = CreateObject<RdtpProducer>();
        producer->SetAttribute("Port", UintegerValue(p.port));
        producer->SetAttribute("Objects", StringValue(list));
        if (!server.empty())
            producer->SetAttribute("Label", StringValue(server)); // a graph's server: its node name
        ServerNode(net, server)->AddApplication(producer);
        producer->SetStartTime(Seconds(0));
        producer->SetStopTime(AtScenario(p, p.duration));
        producers.push_back({server.empty() ? "server" : server, producer});
    }
    return producers;
}

/// Where flow `f`'s consumer sends its requests: its first caching router, else its server.
InetSocketAddress
FirstHop(const Net& net, const Params& p, const FlowSpec& f, Ptr<Node> client)
{
    if (f.via.empty() && f.server.empty())
        return InetSocketAddress(net.serverAddr, p.port);
    Ptr<Node> hop = f.via.empty() ? ServerNode(net, f.server) : NamedNode(net, f.via);
    return InetSocketAddress(AddressFacing(hop, client), p.port);
}

/// A PacketSink on `node` for the UDP and TCP baselines, running for the whole scenario.
Ptr<PacketSink>
InstallSink(const Params& p, Ptr<Node> node, TypeId factory, uint16_t sinkPort)
{
    Ptr<PacketSink> sink = CreateObject<PacketSink>();
    sink->SetAttribute("Protocol", TypeIdValue(factory));
    sink->SetAttribute("Local", AddressValue(InetSocketAddress(Ipv4Address::GetAny(), sinkPort)));
    node->AddApplication(sink);
    sink->SetStartTime(Seconds(0));
    sink->SetStopTime(AtScenario(p, p.duration));
    return sink;
}

/// The PHY rate a newcomer flow would be sent at (bit/s; 0 = unknown, under rate control):
/// its station's for uplink flows, the AP's for downlink ones.
double
NewcomerPhyBps(const Net& net, const FlowSpec& f)
{
    if (f.up)
        return f.client < net.stationPhyBps.size() ? net.stationPhyBps[f.client] : 0.0;
    return net.apPhyBps;
}

/// Informed start of an rdtp flow: a fixed rate, or (auto) what the client's own station
/// predicts from the frames it overheard when the fetch starts (seed 002 §II).
void
SetInitialRate(const Net& net, const FlowSpec& f, Ptr<RdtpConsumer> c, WifiObservers& wifi)
{
    if (f.initialRate.empty())
        return;
    if (f.initialRate != "auto")
    {
        c->SetAttribute("InitialRate", DoubleValue(std::stod(f.initialRate)));
        return;
    }
    if (f.client >= net.stations.GetN())
        Fail("initial_rate=auto needs a WiFi station");
    wifi.stations.push_back(std::make_unique<WifiMonitor>(net.stations.Get(f.client)));
    const WifiMonitor* mon = wifi.stations.back().get();
    const double phy = NewcomerPhyBps(net, f);
    c->SetInitialRateSource([mon, phy]() { return mon->InformedRateBytes(phy); });
}

/// Flow `i` of kind rdtp: an RdtpConsumer on its client, its traces into `fr`.
Ptr<RdtpConsumer>
InstallRdtpFlow(const Params& p,
                const Net& net,
                const FlowSpec& f,
                uint32_t i,
                FlowRecord* fr,
                FlowRecorder* rec,
                WifiObservers& wifi)
{
    Ptr<Node> client = net.clients[f.client];
    Ptr<RdtpConsumer> c = CreateObject<RdtpConsumer>();
    SetInitialRate(net, f, c, wifi);
    c->SetAttribute("Remote", AddressValue(FirstHop(net, p, f, client)));
    c->SetAttribute("ObjectName", StringValue(f.object));
    c->SetAttribute("Controller", StringValue(f.cc));
    c->SetAttribute("Config", StringValue(f.config));
    c->SetAttribute("Seed", UintegerValue(SplitMix64((uint64_t(p.seed) << 32) + p.run) ^ (i + 1)));
    client->AddApplication(c);
    c->SetStartTime(AtScenario(p, f.start));
    c->SetStopTime(AtScenario(p, f.stop));
    Must(c->TraceConnectWithoutContext(
        "Delivered",
        Callback<void, uint64_t>([fr, rec](uint64_t n) {
            fr->OnBytes(ScenarioNow(), rec->Window(), n);
        })), "c Delivered");
    Must(c->TraceConnectWithoutContext(
        "Received",
        Callback<void, uint64_t>([fr](uint64_t n) { fr->OnReceived(n); })), "c Received");
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
    return c;
}

/// fetches.csv: one row per fetch of every workload flow (seed 003 §III's flow completion
/// times), written as fetches end.
class FetchLog
{
  public:
    explicit FetchLog(const std::string& dir, double warmup)
        : m_out(dir + "/fetches.csv"),
          m_warmup(warmup)
    {
        m_out << "flow,fetch,client,cc,object,rank,server,start_s,finish_s,fct_s,completed,failed,measured,"
                 "bytes,timeouts,late_arrivals,duplicates,rerequested,lost,n_sources,cached_bytes,sources\n";
    }

    void Row(uint32_t flow, const FlowSpec& f, const WorkloadFetch& w, double settle)
    {
        const double start = w.start.GetSeconds() - settle;
        const bool done = !w.finish.IsNegative();
        const double finish = done ? w.finish.GetSeconds() - settle : std::nan("");
        uint64_t cached = 0;
        std::vector<std::pair<std::string, uint64_t>> shares;
        for (const RdtpSource& src : w.sources)
        {
            shares.emplace_back(NodeIdLabel(src.node), src.bytes);
            if (src.cached)
                cached += src.bytes;
        }
        std::sort(shares.begin(), shares.end(), [](const auto& a, const auto& b) {
            return a.second != b.second ? a.second > b.second : a.first < b.first;
        });
        std::string list;
        for (const auto& [label, bytes] : shares)
            list += (list.empty() ? "" : ";") + label + ":" + std::to_string(bytes);
        const RdtpStats& st = w.stats;
        m_out << flow << "," << w.index << "," << f.client << "," << f.cc.substr(0, f.cc.find(':')) << ","
              << w.object->name << "," << w.rank << "," << w.object->server << "," << Fmt(start, 6) << ","
              << (done ? Fmt(finish, 6) : "") << "," << (done ? Fmt(finish - start, 6) : "") << ","
              << (done ? 1 : 0) << "," << (w.failed ? 1 : 0) << "," << (start >= m_warmup ? 1 : 0) << ","
              << w.bytes << "," << st.timeouts << "," << st.late_arrivals << "," << st.duplicates << ","
              << st.units_rerequested << "," << st.units_lost << "," << w.sources.size() << "," << cached
              << "," << list << "\n";
    }

  private:
    std::ofstream m_out;
    double m_warmup;
};

/// A workload flow (seed 003 §III): an RdtpWorkload on its client fetching the catalogue's
/// objects — their EIDs from the producers, so no fetch waits for a resolution — each fetch
/// into fetches.csv; the bytes of all its fetches count as the flow's.
Ptr<RdtpWorkload>
InstallWorkloadFlow(const Params& p,
                    const Net& net,
                    const FlowSpec& f,
                    uint32_t i,
                    FlowRecord* fr,
                    FlowRecorder* rec,
                    const std::vector<Producer>& producers,
                    FetchLog* log)
{
    Ptr<Node> client = net.clients[f.client];
    std::vector<WorkloadObject> catalogue;
    for (uint32_t rank = 1; rank <= f.objects; rank++)
    {
        const size_t k = (rank - 1) % f.servers.size();
        WorkloadObject o;
        o.server = f.servers[k];
        o.name = CatalogueName(o.server, f.size, rank);
        auto prod = std::find_if(producers.begin(), producers.end(), [&o](const Producer& x) { return x.node == o.server; });
        if (prod == producers.end() || !prod->app->Resolve(o.name, o.eid, o.size))
            Fail("workload object " + o.name + " has no producer");
        FlowSpec hop = f;
        hop.server = o.server;
        hop.via = f.vias[k] == "-" ? "" : f.vias[k];
        o.firstHop = FirstHop(net, p, hop, client);
        catalogue.push_back(o);
    }
    Ptr<RdtpWorkload> w = CreateObject<RdtpWorkload>();
    w->SetAttribute("Rate", DoubleValue(f.requests));
    w->SetAttribute("Alpha", DoubleValue(f.alpha));
    w->SetAttribute("Controller", StringValue(f.cc));
    w->SetAttribute("Config", StringValue(f.config));
    w->SetAttribute("Seed", UintegerValue(SplitMix64((uint64_t(p.seed) << 32) + p.run) ^ (i + 1)));
    w->SetAttribute("Stream", IntegerValue(1000 + 2 * int64_t(i)));
    if (f.lastStart >= 0)
        w->SetAttribute("LastStart", TimeValue(AtScenario(p, f.lastStart)));
    w->SetCatalogue(std::move(catalogue));
    const double settle = p.settle;
    w->SetFetchDone([log, i, f, settle](const WorkloadFetch& fetch) { log->Row(i, f, fetch, settle); });
    client->AddApplication(w);
    w->SetStartTime(AtScenario(p, f.start));
    w->SetStopTime(AtScenario(p, f.stop));
    Must(w->TraceConnectWithoutContext("Delivered", Callback<void, uint64_t>([fr, rec](uint64_t n) {
                                      fr->OnBytes(ScenarioNow(), rec->Window(), n);
                                  })), "w Delivered");
    return w;
}

/// Seed 003's warm-up without packets, as Icarus warms caches: every workload flow with
/// `prewarm` = N replays N fetches (the flows in turn) of objects drawn from its own Zipf
/// popularity — on a random stream of its own, so the measured arrivals stay the same —
/// unit by unit along the caching routers from its client to the object's server, each
/// router looking the unit up and the ones that missed caching it on the way back
/// (RdtpRouter::WarmFetch). Then the run warms up with packets as usual (`Warmup`).
void
PrewarmCaches(const std::vector<FlowSpec>& flows,
              const std::vector<Ptr<RdtpWorkload>>& workloads,
              const std::vector<PlacedRouter>& routers,
              const std::vector<Producer>& producers)
{
    std::map<std::string, const PlacedRouter*> byNode;
    for (const auto& r : routers)
        byNode[r.node] = &r;
    std::vector<Ptr<ZipfRandomVariable>> draws(flows.size());
    uint32_t rounds = 0;
    for (uint32_t i = 0; i < flows.size(); i++)
    {
        if (!workloads[i] || flows[i].prewarm == 0)
            continue;
        if (flows[i].unit == 0 || flows[i].unit > 65535)
            Fail("prewarm needs the workload's unit (bytes per Data)");
        draws[i] = CreateObject<ZipfRandomVariable>();
        draws[i]->SetAttribute("N", IntegerValue(static_cast<int64_t>(workloads[i]->Catalogue().size())));
        draws[i]->SetAttribute("Alpha", DoubleValue(flows[i].alpha));
        draws[i]->SetStream(5000 + int64_t(i));
        rounds = std::max(rounds, flows[i].prewarm);
    }
    std::map<std::string, uint64_t> answered; // units per router, and "origin"
    uint64_t fetches = 0;
    std::vector<uint8_t> object;
    for (uint32_t k = 0; k < rounds; k++)
    {
        for (uint32_t i = 0; i < flows.size(); i++)
        {
            const FlowSpec& f = flows[i];
            if (!draws[i] || f.prewarm <= k)
                continue;
            const uint32_t rank = static_cast<uint32_t>(draws[i]->GetInteger());
            const WorkloadObject& o = workloads[i]->Catalogue().at(rank - 1);
            // The routers a request for it crosses: the client's first hop, then each
            // router's route for the server's name (or its default route).
            std::vector<Ptr<ns3::RdtpRouter>> path;
            std::vector<std::string> names;
            std::string at = f.vias[(rank - 1) % f.servers.size()];
            while (byNode.count(at) && path.size() < 64)
            {
                const PlacedRouter* r = byNode[at];
                path.push_back(r->app);
                names.push_back(at);
                std::string next;
                for (const auto& [prefix, node] : r->hops)
                    if (prefix == o.server || (prefix.empty() && next.empty()))
                        next = node;
                at = next;
            }
            auto prod = std::find_if(producers.begin(), producers.end(), [&o](const Producer& x) { return x.node == o.server; });
            uint8_t eid[32];
            if (prod == producers.end() || !HexToEid(o.eid, eid) || !prod->app->Read(o.eid, o.size, object))
                Fail("prewarm: cannot read " + o.name + " from its producer");
            std::vector<uint64_t> counts;
            if (!ns3::RdtpRouter::WarmFetch(path, eid, object, static_cast<uint16_t>(f.unit), counts))
                Fail("prewarm: the routers refused " + o.name);
            uint64_t fromCaches = 0;
            for (size_t j = 0; j < names.size(); j++)
            {
                answered[names[j]] += counts[j];
                fromCaches += counts[j];
            }
            answered["origin"] += (o.size + f.unit - 1) / f.unit - fromCaches;
            fetches++;
        }
    }
    if (fetches > 0)
    {
        std::cout << "prewarm: " << fetches << " fetches; units answered:";
        for (const auto& [node, n] : answered)
            std::cout << " " << node << " " << n;
        std::cout << std::endl;
    }
}

/// Route every workload object's EID at every caching router as its server's name.
void
RouteWorkloadObjects(const std::vector<Ptr<RdtpWorkload>>& workloads, const std::vector<PlacedRouter>& routers)
{
    for (const auto& w : workloads)
        if (w)
            for (const WorkloadObject& o : w->Catalogue())
                RouteObject(routers, o.server, o.eid);
}

/// A udp flow: a saturating OnOff CBR source on the server, a PacketSink on the client.
void
InstallUdpFlow(const Params& p, const Net& net, const FlowSpec& f, uint16_t port, FlowRecord* fr, FlowRecorder* rec)
{
    // Down: server → client; up (seed 002): the station sends to the server.
    Ptr<Node> receiver = f.up ? ServerNode(net, f.server) : net.clients[f.client];
    Ptr<PacketSink> sink = InstallSink(p, receiver, UdpSocketFactory::GetTypeId(), port);
    Must(sink->TraceConnectWithoutContext(
        "Rx", Callback<void, Ptr<const Packet>, const Address&>([fr, rec](Ptr<const Packet> pk, const Address&) {
            fr->OnBytes(ScenarioNow(), rec->Window(), pk->GetSize());
        })), "sink Rx");
    Ptr<OnOffApplication> src = CreateObject<OnOffApplication>();
    src->SetAttribute("Protocol", TypeIdValue(UdpSocketFactory::GetTypeId()));
    src->SetAttribute("Remote",
                      AddressValue(InetSocketAddress(f.up ? net.serverAddr : net.clientAddrs[f.client], port)));
    src->SetAttribute("DataRate", DataRateValue(DataRate(f.rate)));
    src->SetAttribute("PacketSize", UintegerValue(1472));
    src->SetAttribute("OnTime", StringValue("ns3::ConstantRandomVariable[Constant=1e9]"));
    src->SetAttribute("OffTime", StringValue("ns3::ConstantRandomVariable[Constant=0]"));
    src->SetAttribute("MaxBytes", UintegerValue(f.size));
    (f.up ? net.clients[f.client] : ServerNode(net, f.server))->AddApplication(src);
    src->SetStartTime(AtScenario(p, f.start));
    src->SetStopTime(AtScenario(p, f.stop));
}

/// The traces of a TCP sender's socket into `fr`; with `swap` the socket first gets the
/// flow's congestion control (it differs from the global socket type).
void
AttachTcpSocket(Ptr<TcpSocketBase> sock, const std::string& cc, bool swap, FlowRecord* fr, FlowRecorder* rec)
{
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
}

/// A tcp-bbr / tcp-cubic flow: BulkSendApplication on the server, PacketSink on the client.
void
InstallTcpFlow(const Params& p,
               const Net& net,
               const FlowSpec& f,
               uint16_t port,
               const std::string& globalTcp,
               FlowRecord* fr,
               FlowRecorder* rec)
{
    Ptr<Node> receiver = f.up ? ServerNode(net, f.server) : net.clients[f.client];
    Ptr<PacketSink> sink = InstallSink(p, receiver, TcpSocketFactory::GetTypeId(), port);
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
    src->SetAttribute("Remote",
                      AddressValue(InetSocketAddress(f.up ? net.serverAddr : net.clientAddrs[f.client], port)));
    src->SetAttribute("MaxBytes", UintegerValue(f.size));
    src->SetAttribute("SendSize", UintegerValue(p.tcpSendSize));
    (f.up ? net.clients[f.client] : ServerNode(net, f.server))->AddApplication(src);
    src->SetStartTime(AtScenario(p, f.start));
    src->SetStopTime(AtScenario(p, f.stop));
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
        AttachTcpSocket(sock, cc, swap, fr, rec);
    };
    Simulator::Schedule(AtScenario(p, f.start), [attach]() { Simulator::ScheduleNow(*attach); });
}

/// Every flow on its client, recorded by `recorder`; the rdtp consumers by flow index
/// (null for the baselines), and the workloads likewise.
std::vector<Ptr<RdtpConsumer>>
InstallFlows(const Params& p,
             const Net& net,
             const std::vector<FlowSpec>& flows,
             const Objects& objects,
             const std::string& globalTcp,
             FlowRecorder& recorder,
             WifiObservers& wifi,
             const std::vector<Producer>& producers,
             FetchLog* fetchLog,
             std::vector<Ptr<RdtpWorkload>>& workloads)
{
    FlowRecorder* rec = &recorder;
    std::vector<Ptr<RdtpConsumer>> consumers(flows.size());
    workloads.assign(flows.size(), nullptr);
    for (uint32_t i = 0; i < flows.size(); i++)
    {
        const FlowSpec& f = flows[i];
        if (f.client >= net.clients.size())
            Fail("flow client index out of range");
        FlowRecord r;
        r.index = i;
        r.kind = f.kind;
        r.cc = f.cc.substr(0, f.cc.find(':')); // the controller's name, without its keys
        r.client = f.client;
        r.start = f.start;
        r.stop = f.stop;
        r.objectSize = f.kind == "rdtp" ? objects.sizes.at(f.object) : (f.kind == "workload" ? 0 : f.size);
        FlowRecord* fr = &rec->Add(r);
        const uint16_t port = static_cast<uint16_t>(50000 + i);
        if (f.kind == "rdtp")
            consumers[i] = InstallRdtpFlow(p, net, f, i, fr, rec, wifi);
        else if (f.kind == "workload")
            workloads[i] = InstallWorkloadFlow(p, net, f, i, fr, rec, producers, fetchLog);
        else if (f.kind == "udp")
            InstallUdpFlow(p, net, f, port, fr, rec);
        else // tcp-bbr / tcp-cubic / tcp-reno
            InstallTcpFlow(p, net, f, port, globalTcp, fr, rec);
    }
    return consumers;
}

/// With a sniffer: its monitor feeds wifi.csv / wifi-stations.csv every Interval, and each
/// flow's start gets a joins.csv row with what the sniffer predicted for it then.
void
StartSniffer(const Params& p, const Net& net, const std::vector<FlowSpec>& flows, WifiObservers& wifi)
{
    if (!net.sniffer)
        return;
    wifi.sniffer = std::make_unique<WifiMonitor>(net.sniffer);
    std::map<std::string, std::string> labels;
    auto label = [&labels](Ptr<NetDevice> d, const std::string& name) {
        uint8_t mac[6];
        Mac48Address::ConvertFrom(d->GetAddress()).CopyTo(mac);
        labels[MacText(mac)] = name;
    };
    label(net.apDevice, "ap");
    for (uint32_t i = 0; i < net.stations.GetN(); i++)
        label(net.stations.Get(i), "sta" + std::to_string(i));
    wifi.tracer = std::make_unique<WifiTracer>(p.out, wifi.sniffer.get(), labels, p.interval);
    wifi.tracer->Start(AtScenario(p, 0), p.duration);
    const WifiMonitor* mon = wifi.sniffer.get();
    for (uint32_t i = 0; i < flows.size(); i++)
    {
        const FlowSpec& f = flows[i];
        const double phy = NewcomerPhyBps(net, f);
        std::vector<std::string>* rows = &wifi.joins;
        Simulator::Schedule(AtScenario(p, f.start), [rows, mon, phy, i, f]() {
            const RdtpWifiEstimate e = mon->Estimate(phy);
            std::ostringstream row;
            row << i << "," << f.kind << "," << f.client << "," << (f.up ? "up" : "down") << "," << Fmt(f.start, 3)
                << "," << Fmt(phy / 1e6, 1) << "," << e.n_active << "," << Fmt(e.total_bps / 1e6, 4) << ","
                << (e.has_n_plus_one ? Fmt(e.n_plus_one_bps / 1e6, 4) : "") << ","
                << (e.has_model ? Fmt(e.model_bps / 1e6, 4) : "") << "," << Fmt(e.anomaly_bps / 1e6, 4) << ","
                << Fmt(e.airtime_share_bps / 1e6, 4);
            rows->push_back(row.str());
        });
    }
}

/// joins.csv (with a sniffer): per flow, the estimate at its start; informed_mbps is the
/// rate an rdtp consumer's informed start used (empty: normal start).
void
WriteJoins(const Params& p, const WifiObservers& wifi, const std::vector<Ptr<RdtpConsumer>>& consumers)
{
    if (!wifi.sniffer)
        return;
    std::ofstream out(p.out + "/joins.csv");
    out << "flow,kind,client,dir,start_s,newcomer_phy_mbps,n_active,total_mbps,n_plus_one_mbps,model_mbps,"
           "anomaly_mbps,airtime_share_mbps,informed_mbps\n";
    for (const std::string& row : wifi.joins)
    {
        const uint32_t i = static_cast<uint32_t>(std::stoul(row.substr(0, row.find(','))));
        const double informed = i < consumers.size() && consumers[i] ? consumers[i]->GetInformedRate() : 0.0;
        out << row << "," << (informed > 0 ? Fmt(informed * 8 / 1e6, 4) : "") << "\n";
    }
}

/// At scenario time 0, count the WiFi stations that are not associated (and warn).
void
CountUnassociated(const Params& p, Net& net, uint32_t& unassociated)
{
    Simulator::Schedule(AtScenario(p, 0), [&net, &unassociated]() {
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
}

/// Final rdtp statistics from the cores, into the flow records.
void
CollectRdtpStats(const std::vector<Ptr<RdtpConsumer>>& consumers, FlowRecorder& recorder)
{
    for (uint32_t i = 0; i < consumers.size(); i++)
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
}

/// flows.csv's served-by columns of rdtp flow `fr` from its consumer's per-source accounting:
/// bytes from content stores, and each source's share ("origin:61.2%;r1:38.8%", largest
/// first, then by name).
void
RecordSources(const RdtpConsumer& consumer, FlowRecord& fr)
{
    std::vector<std::pair<std::string, uint64_t>> shares;
    uint64_t total = 0;
    fr.cachedBytes = 0;
    for (const RdtpSource& s : consumer.GetSources())
    {
        shares.emplace_back(NodeIdLabel(s.node), s.bytes);
        total += s.bytes;
        if (s.cached)
            fr.cachedBytes += static_cast<int64_t>(s.bytes);
    }
    std::sort(shares.begin(), shares.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    fr.sources.clear();
    for (const auto& [label, bytes] : shares)
    {
        const double pct = total > 0 ? 100.0 * static_cast<double>(bytes) / static_cast<double>(total) : 0.0;
        fr.sources += (fr.sources.empty() ? "" : ";") + label + ":" + Fmt(pct, 1) + "%";
    }
}

/// requests.csv: `time_s,flow,unit,units,retransmission` for every request of every rdtp flow
/// (scenario time; `unit` is the request's first unit).
void
RecordRequests(const Params& p, const std::vector<Ptr<RdtpConsumer>>& consumers)
{
    auto out = std::make_shared<std::ofstream>(p.out + "/requests.csv");
    *out << "time_s,flow,unit,units,retransmission\n";
    for (uint32_t i = 0; i < consumers.size(); i++)
    {
        if (!consumers[i])
            continue;
        Must(consumers[i]->TraceConnectWithoutContext(
                 "Requested",
                 Callback<void, uint64_t, uint64_t, bool>([out, i](uint64_t unit, uint64_t units, bool retx) {
                     *out << Fmt(ScenarioNow(), 6) << "," << i << "," << unit << "," << units << ","
                          << (retx ? 1 : 0) << "\n";
                 })),
             "c Requested");
    }
}

/// --StopWhenDone: stop the simulator once every consumer finished or failed. Every flow must be
/// a sized rdtp fetch (a bulk flow or a TCP flow never "finishes" for this purpose).
void
StopWhenDone(const std::vector<FlowSpec>& flows, const std::vector<Ptr<RdtpConsumer>>& consumers)
{
    for (const auto& f : flows)
        if (f.kind != "rdtp" || f.size == 0)
            Fail("StopWhenDone needs every flow to be a sized rdtp fetch");
    auto left = std::make_shared<size_t>(0);
    auto done = [left]() {
        if (--*left == 0)
            Simulator::Stop();
    };
    for (const auto& c : consumers)
    {
        if (!c)
            continue;
        ++*left;
        Must(c->TraceConnectWithoutContext("Finished", Callback<void, Time>([done](Time) { done(); })),
             "c Finished");
        Must(c->TraceConnectWithoutContext("Failed", Callback<void, int>([done](int) { done(); })), "c Failed");
    }
}

/// Caching routers (--Routers) on their nodes, started at scenario time 0, their counters
/// into cs.csv every Interval; with any, flows.csv gets served-by columns.
std::vector<PlacedRouter>
InstallCachingRouters(const Params& p, const Net& net, FlowRecorder& recorder, std::unique_ptr<CsTracer>& cs)
{
    const auto seed = [&p](const std::string& node) { return NameSeed(p, "router " + node); };
    std::vector<PlacedRouter> routers = InstallRouters(net, p.routers, static_cast<uint16_t>(p.port), seed, AtScenario(p, 0));
    if (routers.empty())
        return routers;
    recorder.AddServedBy();
    cs = std::make_unique<CsTracer>(p.out, recorder.Window(), p.interval);
    for (const auto& r : routers)
    {
        r.app->SetAttribute("TraceInterval", TimeValue(Time(0)));
        cs->Add(r.app, r.node);
    }
    cs->Start();
    return routers;
}

/// What run.toml reports besides the parameters.
struct Outcome
{
    double simulated = 0.0;
    double wall = 0.0;
    uint32_t nClients = 0;
    uint32_t tcpBuf = 0;
    uint32_t unassociated = 0;
    std::string globalTcp;
    WindowResults window;
};

/// run.toml: resolved parameters, derived values and results.
/// run.toml with routers: each router's counters and each producer's, totals of the run.
void
WriteNodeCounters(std::ostream& run, const std::vector<PlacedRouter>& routers, const std::vector<Producer>& producers)
{
    for (const auto& r : routers)
    {
        run << "\n[routers." << TomlString(r.node) << "]\n";
        run << "id = " << TomlString(NodeIdLabel(r.app->GetNodeId())) << "\n";
        for (const auto& [name, value] : r.app->GetCounters())
            run << name << " = " << value << "\n";
    }
    for (const auto& pr : producers)
    {
        const RdtpServerStats st = pr.app->GetServerStats();
        run << "\n[producers." << TomlString(pr.node) << "]\n";
        run << "requests = " << st.requests << "\ndata_packets = " << st.data_packets
            << "\ndata_bytes = " << st.data_bytes << "\nnacks = " << st.nacks << "\n";
    }
}

void
WriteRunToml(const Params& p,
             const Net& net,
             const Objects& objects,
             QueueMonitor& qmon,
             const Outcome& o,
             const std::vector<PlacedRouter>& routers,
             const std::vector<Producer>& producers)
{
    std::ofstream run(p.out + "/run.toml");
    run << "# rdtp-sim run: resolved parameters, derived values and results\n";
    run << "[run]\n";
    WriteNs3Version(run);
    run << "seed = " << p.seed << "\n";
    run << "run = " << p.run << "\n";
    run << "simulated_s = " << Fmt(o.simulated, 6) << "\n";
    run << "wall_s = " << Fmt(o.wall, 3) << "\n";
    run << "settle_s = " << Fmt(p.settle, 6) << "\n";
    run << "sim_per_wall = " << Fmt(o.wall > 0 ? o.simulated / o.wall : 0.0, 3) << "\n";
    run << "\n[params]\n";
    run << "Topology = " << TomlString(p.topology) << "\n";
    run << "Duration = " << p.duration << "\nWarmup = " << p.warmup << "\nInterval = " << p.interval
        << "\nQueueInterval = " << p.queueInterval << "\nClients = " << o.nClients << "\n";
    run << "Flows = " << TomlString(p.flows) << "\nPort = " << p.port << "\n";
    if (!p.routers.empty())
        run << "Routers = " << TomlString(p.routers) << "\n";
    WriteTopologyParams(run, p, false);
    run << "TcpBuf = " << o.tcpBuf << "\nTcpSendSize = " << p.tcpSendSize << "\n";
    run << "\n[derived]\n";
    for (const auto& [k, v] : net.derived)
        run << k << " = " << TomlString(v) << "\n";
    run << "objects = " << TomlString(objects.list) << "\n";
    run << "tcp_socket_type = " << TomlString(o.globalTcp.empty() ? "" : TcpCcType(o.globalTcp).GetName()) << "\n";
    run << "\n[results]\n";
    run << "window_start_s = " << Fmt(o.window.from, 6) << "\n";
    run << "window_end_s = " << Fmt(o.window.to, 6) << "\n";
    WriteBottleneckResults(run, o.window);
    WriteQueueDrops(run, qmon);
    run << "unassociated_at_start = " << o.unassociated << "\n";
    WriteDropDetails(run, qmon, net);
    if (!routers.empty())
        WriteNodeCounters(run, routers, producers);
}

/// The summary on stdout (log.txt of the runner).
void
PrintSummary(const Params& p, FlowRecorder& recorder, const Outcome& o)
{
    std::printf("rdtp-sim: %s, %.1f s simulated in %.2f s wall (%.2f sim-s per wall-s)\n",
                p.topology.c_str(), o.simulated, o.wall, o.wall > 0 ? o.simulated / o.wall : 0.0);
    for (auto& f : recorder.All())
    {
        std::printf("  flow %u %s/%s client %u: %llu bytes, %s%s\n",
                    f.index, f.kind.c_str(), f.cc.c_str(), f.client,
                    static_cast<unsigned long long>(f.bytes),
                    f.completed ? "completed at " : (f.failed ? "FAILED" : "running"),
                    f.completed ? (Fmt(f.finishS, 3) + " s").c_str() : "");
    }
    if (!std::isnan(o.window.utilisation))
        std::printf("  bottleneck utilisation %.4f, mean queueing delay %.3f ms\n", o.window.utilisation,
                    o.window.meanQueueDelayMs);
    std::fflush(stdout);
}

} // namespace

// One simulation: parse, build the topology, install the flows, run, write the outputs.
static int
RunScenario(int argc, char** argv)
{
    FailOnCorePanic();
    const auto wallStart = std::chrono::steady_clock::now();
    Params p = ParseRunArguments(argc, argv);
    std::vector<FlowSpec> flows = ParseFlows(p.flows, p.duration);
    Outcome o;
    o.nClients = p.clients;
    for (const auto& f : flows)
        o.nClients = std::max(o.nClients, f.client + 1);
    o.globalTcp = SetDefaults(flows);

    Net net = BuildTopology(p, o.nClients);
    const auto impairments = InstallImpairments(p, net);
    o.tcpBuf = SetTcpBuffers(p, net, argc, argv);
    const Objects objects = PlanObjects(flows, net, p);

    MeasureWindow window{p.warmup, p.duration};
    FlowRecorder recorder(p.out, window, p.interval);
    const std::vector<Producer> producers = InstallProducers(net, p, objects);
    WifiObservers wifi;
    std::unique_ptr<FetchLog> fetchLog;
    if (std::any_of(flows.begin(), flows.end(), [](const FlowSpec& f) { return f.kind == "workload"; }))
        fetchLog = std::make_unique<FetchLog>(p.out, p.warmup);
    std::vector<Ptr<RdtpWorkload>> workloads;
    const std::vector<Ptr<RdtpConsumer>> consumers =
        InstallFlows(p, net, flows, objects, o.globalTcp, recorder, wifi, producers, fetchLog.get(), workloads);
    StartSniffer(p, net, flows, wifi);
    if (p.requests)
        RecordRequests(p, consumers);
    if (p.stopWhenDone)
        StopWhenDone(flows, consumers);
    std::unique_ptr<CsTracer> cs;
    const std::vector<PlacedRouter> routers = InstallCachingRouters(p, net, recorder, cs);
    RouteWorkloadObjects(workloads, routers);
    PrewarmCaches(flows, workloads, routers, producers);
    QueueMonitor qmon(p.out, p.queueInterval, net.sampleQueue, window);
    if (net.attachQueue)
        net.attachQueue(&qmon);
    qmon.Start();
    recorder.Start();
    CountUnassociated(p, net, o.unassociated);
    DropTrace drops;
    if (p.dropTrace)
        drops.Attach(net);

    Simulator::Stop(AtScenario(p, p.duration));
    Simulator::Run();
    o.simulated = Simulator::Now().GetSeconds();
    for (const auto& w : workloads)
        if (w)
            w->Flush();
    CollectRdtpStats(consumers, recorder);
    if (cs)
    {
        for (uint32_t i = 0; i < consumers.size(); i++)
            if (consumers[i])
                RecordSources(*consumers[i], recorder.Get(i));
        cs->Finish();
    }
    recorder.Finish();
    WriteJoins(p, wifi, consumers);
    if (p.dropTrace)
        drops.Write(p.out);

    // Bottleneck utilisation and queueing delay over [warmup, busy end).
    o.window = BottleneckWindow(net, qmon, p.warmup, std::max(p.warmup, recorder.BusyEnd()));
    o.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    WriteRunToml(p, net, objects, qmon, o, routers, producers);
    {
        std::ofstream run(p.out + "/run.toml", std::ios::app);
        WriteImpairments(run, p, impairments.get());
    }
    PrintSummary(p, recorder, o);
    Simulator::Destroy();
    return 0;
}

// The C entry point. No C++ exception may cross into Rust (the process would abort with
// "Rust cannot catch foreign exceptions"): ns-3 3.37's 802.11 model can throw from inside an
// event (seen: std::out_of_range from HtFrameExchangeManager::EndReceiveAmpdu in a 10-station
// seed 001 run, early in the run). Such a run fails with a message saying where, and exit
// status 3, which rdtp-sim reports as an ns-3 model error rather than a crash of ours.
extern "C" int
rdtp_ns3_run(int argc, char** argv)
{
    try
    {
        return RunScenario(argc, argv);
    }
    catch (const std::exception& e)
    {
        std::cerr << "rdtp-sim: ns-3 threw " << typeid(e).name() << " (" << e.what() << ") at "
                  << Simulator::Now().GetSeconds()
                  << " s simulated: an ns-3 model error, this run has no results\n";
    }
    catch (...)
    {
        std::cerr << "rdtp-sim: ns-3 threw a non-standard exception at " << Simulator::Now().GetSeconds()
                  << " s simulated: an ns-3 model error, this run has no results\n";
    }
    return 3;
}
