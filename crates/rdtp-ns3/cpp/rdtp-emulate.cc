// rdtp_ns3_emulate: the real-time emulator ("simulation in the loop").
//
// Real processes in Linux network namespaces send through persistent tap devices; this
// program opens each tap (entering its namespace with setns, TUNSETIFF on /dev/net/tun,
// then back), hands the descriptor to an FdNetDevice on a gateway node of the very
// topology the offline runner simulates (rdtp-topology.cc), and runs the simulator in real
// time (RealtimeSimulatorImpl, best effort). ns-3 forwards IPv4 between the taps across the
// emulated bottleneck or WiFi hop.
//
// It runs until SIGTERM/SIGINT or --Duration, then writes into --Out:
//   queue.csv       bottleneck queue every QueueInterval (as the offline runner)
//   timeseries.csv  time_s,client,dst_ip,mbps,payload_mbps,data_packets: what the last hop
//                   delivered to each client tap per Interval (IP bytes; TCP/UDP payload)
//   lag.csv         time_s,samples,mean_ms,max_ms,over_1ms: real-time lag per Interval
//   run.toml        parameters, derived values, per-tap counters, lag statistics, results
// and prints "READY" on stdout once scenario time 0 is reached (after Settle).
//
// Caching routers (--RouterTaps) are real processes too: each one's namespace hangs off the
// topology node it stands for (dumbbell r1 … r{Hops+1} from the clients' gateway, WiFi ap)
// through its own tap, exactly as a client's namespace hangs off its gateway.
//
// Real-time lag: an event every LagInterval compares the wall clock with its simulated
// timestamp; in best-effort mode an event runs late when the simulator cannot keep up.
#include "rdtp-recorder.h"
#include "rdtp-impair.h"
#include "rdtp-run.h"
#include "rdtp-rust.h"
#include "rdtp-topology.h"

#include "ns3/core-module.h"
#include "ns3/fd-net-device-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/realtime-simulator-impl.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

extern "C" void
OnStopSignal(int sig)
{
    g_signal.store(sig);
    g_stop.store(true);
}

struct EmuParams : RunParams
{
    EmuParams()
    {
        out = "rdtp-emulate-out";
        duration = 0.0; // 0 = until a signal (capped at 24 h)
    }

    std::string taps;
    std::string routerTaps;
    double lagInterval = 0.001;
    double lagThreshold = 0.001;
    uint32_t rxQueueSize = 1000;
    int32_t pinCpu = -1;
    std::string windowFile;
};

/// Delivered to one client tap in one Interval.
struct Bin
{
    uint64_t ipBytes = 0;
    uint64_t payloadBytes = 0;
    uint64_t dataPackets = 0;
};

struct Tap
{
    std::string label;
    std::string netns;
    std::string dev;
    Ipv4Address gateway;
    uint32_t prefix = 24;
    int fd = -1;
    Ptr<FdNetDevice> device;
    Ptr<Node> node;
    bool client = false;
    /// A router's tap: the topology node it hangs off (r1, …, ap); empty otherwise.
    std::string routerNode;
    bool hasGateway = false;
    std::string hostAddr; // the conventional host address (gateway + 1), for the CSV
    // counters
    uint64_t fromHostPackets = 0;
    uint64_t fromHostBytes = 0;
    uint64_t toHostPackets = 0;
    uint64_t toHostBytes = 0;
    uint64_t toHostDrops = 0;   // MacTxDrop: write to the tap failed
    uint64_t fromHostBad = 0;   // PhyRxDrop: runt frames
    std::vector<Bin> bins;
};

bool
ValidLabel(const std::string& s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
}

/// One "label:netns/dev[:a.b.c.d/prefix]" entry (the gateway stays unset without one).
Tap
ParseTapEntry(const std::string& item)
{
    auto parts = Split(item, ':');
    if (parts.size() < 2 || parts.size() > 3)
        Fail("bad --Taps entry '" + item + "' (want label:netns/tap[:gateway/prefix])");
    Tap t;
    t.label = parts[0];
    if (!ValidLabel(t.label))
        Fail("tap label '" + t.label + "' (letters, digits, '_' and '-' only)");
    size_t slash = parts[1].find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 >= parts[1].size())
        Fail("bad --Taps entry '" + item + "' (want netns/tap)");
    t.netns = parts[1].substr(0, slash);
    t.dev = parts[1].substr(slash + 1);
    if (t.dev.size() >= IFNAMSIZ)
        Fail("tap name '" + t.dev + "' is too long");
    if (t.netns.find('/') != std::string::npos || t.netns == "." || t.netns == "..")
        Fail("bad namespace name '" + t.netns + "'");
    if (parts.size() == 3)
    {
        const std::string& gw = parts[2];
        size_t s2 = gw.find('/');
        if (s2 == std::string::npos)
            Fail("gateway '" + gw + "' needs a prefix length (a.b.c.d/len)");
        try
        {
            t.prefix = static_cast<uint32_t>(std::stoul(gw.substr(s2 + 1)));
        }
        catch (const std::exception&)
        {
            Fail("bad prefix length in '" + gw + "'");
        }
        if (t.prefix < 8 || t.prefix > 30)
            Fail("prefix length of '" + gw + "' must be 8..30");
        t.gateway = Ipv4Address(gw.substr(0, s2).c_str());
        t.hasGateway = true;
    }
    return t;
}

/// The conventional host address of a tap's subnet (gateway + 1), for the CSV and run.toml.
std::string
HostAddress(const Tap& t)
{
    std::ostringstream o;
    Ipv4Address(t.gateway.Get() + 1).Print(o);
    return o.str();
}

/// "label:netns/dev[:a.b.c.d/prefix],..." ; the first must be the server.
std::vector<Tap>
ParseTaps(const std::string& text)
{
    std::vector<Tap> taps;
    uint32_t clients = 0;
    for (const auto& item : Split(text, ','))
    {
        Tap t = ParseTapEntry(item);
        t.client = !taps.empty();
        if (taps.empty() && t.label != "server")
            Fail("the first --Taps entry must be the server (server:netns/tap)");
        if (!t.hasGateway)
        {
            // The testbed's address plan (rdtp-scenario, through rdtp-rust.h).
            t.gateway = Ipv4Address(rdtp_plan_gateway(t.client ? int64_t(clients) : -1));
            t.prefix = rdtp_plan_prefix_len();
        }
        t.hostAddr = HostAddress(t);
        if (t.client)
            clients++;
        taps.push_back(t);
    }
    if (taps.size() < 2)
        Fail("--Taps needs the server and at least one client");
    return taps;
}

/// "node:netns/dev[:a.b.c.d/prefix],...": the taps of the routers' namespaces, labelled
/// router_<node> (their gateways are resolved when the nodes are known: AttachRouterTaps).
std::vector<Tap>
ParseRouterTaps(const std::string& text)
{
    std::vector<Tap> taps;
    for (const auto& item : Split(text, ','))
    {
        Tap t = ParseTapEntry(item);
        t.routerNode = t.label;
        t.label = "router_" + t.routerNode;
        for (const auto& other : taps)
            if (other.routerNode == t.routerNode)
                Fail("two --RouterTaps entries for node " + t.routerNode);
        taps.push_back(t);
    }
    return taps;
}

/// Open the persistent tap `dev` inside network namespace `netns` (/var/run/netns/NAME).
int
OpenTap(const std::string& netns, const std::string& dev)
{
    const std::string path = "/var/run/netns/" + netns;
    int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (self < 0)
        Fail(std::string("cannot open /proc/self/ns/net: ") + std::strerror(errno));
    int target = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (target < 0)
    {
        int e = errno;
        close(self);
        Fail("cannot open network namespace " + path + ": " + std::strerror(e));
    }
    if (setns(target, CLONE_NEWNET) != 0)
    {
        int e = errno;
        close(self);
        close(target);
        Fail("setns(" + path + "): " + std::strerror(e) + (e == EPERM ? " (needs root / CAP_SYS_ADMIN)" : ""));
    }
    std::string err;
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0)
    {
        err = std::string("cannot open /dev/net/tun: ") + std::strerror(errno);
    }
    else
    {
        struct ifreq ifr;
        std::memset(&ifr, 0, sizeof ifr);
        ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
        std::strncpy(ifr.ifr_name, dev.c_str(), IFNAMSIZ - 1);
        if (ioctl(fd, TUNSETIFF, &ifr) != 0)
        {
            err = "TUNSETIFF " + dev + " in " + netns + ": " + std::strerror(errno) +
                  " (is it a persistent tap, not attached elsewhere?)";
            close(fd);
            fd = -1;
        }
    }
    // Back to our own namespace whatever happened: every later socket and thread lives there.
    if (setns(self, CLONE_NEWNET) != 0)
        Fail(std::string("cannot return to the original network namespace: ") + std::strerror(errno));
    close(self);
    close(target);
    if (fd < 0)
        Fail(err);
    return fd;
}

/// IP bytes, transport payload bytes and whether it carries TCP/UDP payload, for an
/// Ethernet frame carrying IPv4. Returns false for anything else.
bool
ParseIpv4(Ptr<const Packet> p, uint64_t& ipBytes, uint64_t& payload, bool& data)
{
    uint8_t b[80];
    const uint32_t n = p->CopyData(b, sizeof b);
    // FdNetDevice (DIX) fires MacTx with the Ethernet header in place.
    const uint32_t off = 14;
    if (n < 34 || b[12] != 0x08 || b[13] != 0x00 || (b[14] >> 4) != 4)
        return false;
    const uint32_t ihl = (b[off] & 0x0f) * 4u;
    const uint32_t total = (uint32_t(b[off + 2]) << 8) | b[off + 3];
    const uint8_t proto = b[off + 9];
    ipBytes = total;
    payload = 0;
    data = false;
    if (ihl < 20 || total < ihl)
        return true;
    const uint32_t l4 = off + ihl;
    if (proto == 6 && n >= l4 + 13)
    {
        const uint32_t doff = (b[l4 + 12] >> 4) * 4u;
        if (total >= ihl + doff)
            payload = total - ihl - doff;
    }
    else if (proto == 17 && total >= ihl + 8)
    {
        payload = total - ihl - 8;
    }
    data = payload > 0;
    return true;
}

struct LagStats
{
    size_t samples = 0;
    double p50 = std::nan(""), p99 = std::nan(""), p999 = std::nan(""), max = std::nan(""), mean = std::nan("");
    size_t over = 0;
};

LagStats
Summarise(std::vector<float> v, double thresholdMs)
{
    LagStats s;
    s.samples = v.size();
    if (v.empty())
        return s;
    std::sort(v.begin(), v.end());
    double sum = 0.0;
    for (float x : v)
    {
        sum += x;
        if (x > thresholdMs)
            s.over++;
    }
    s.mean = sum / static_cast<double>(v.size());
    s.p50 = rdtp_quantile_f32(v.data(), v.size(), 0.50);
    s.p99 = rdtp_quantile_f32(v.data(), v.size(), 0.99);
    s.p999 = rdtp_quantile_f32(v.data(), v.size(), 0.999);
    s.max = v.back();
    return s;
}

void
WriteLag(std::ostream& o, const std::string& prefix, const LagStats& s)
{
    o << prefix << "lag_samples = " << s.samples << "\n";
    if (s.samples == 0)
        return;
    o << prefix << "lag_mean_ms = " << Fmt(s.mean, 4) << "\n";
    o << prefix << "lag_p50_ms = " << Fmt(s.p50, 4) << "\n";
    o << prefix << "lag_p99_ms = " << Fmt(s.p99, 4) << "\n";
    o << prefix << "lag_p999_ms = " << Fmt(s.p999, 4) << "\n";
    o << prefix << "lag_max_ms = " << Fmt(s.max, 4) << "\n";
    o << prefix << "lag_over_threshold = " << s.over << "\n";
    o << prefix << "lag_over_threshold_fraction = "
      << Fmt(static_cast<double>(s.over) / static_cast<double>(s.samples), 6) << "\n";
}

/// Parse and check the CommandLine attributes (real time, best effort, real checksums set
/// first, so --ns3:: arguments can still override them), then start the run.
EmuParams
ParseEmulateArguments(int argc, char** argv)
{
    EmuParams p;
    CommandLine cmd("rdtp-sim --emulate");
    cmd.Usage("Real-time emulator: forwards between persistent tap devices in network namespaces "
              "across the dumbbell bottleneck or WiFi hop of rdtp-sim (see the README of "
              "crates/rdtp-testbed). Stops on SIGTERM/SIGINT or after Duration.");
    cmd.AddValue("Taps",
                 "server:NETNS/TAP[:GW/LEN],client0:NETNS/TAP[:GW/LEN],... (default gateways "
                 "10.200.0.1/24 for the server, 10.(201+i/256).(i%256).1/24 for client i)",
                 p.taps);
    cmd.AddValue("RouterTaps",
                 "NODE:NETNS/TAP[:GW/LEN],... taps of caching routers' namespaces, each attached to "
                 "topology node NODE (dumbbell r1..r{Hops+1} from the clients' gateway, wifi ap; "
                 "default gateway 10.199.SLOT.1/24, SLOT = 0 for r1 or ap)",
                 p.routerTaps);
    AddRunArguments(cmd, p, RunMode::Emulate);
    cmd.AddValue("LagInterval", "Real-time lag sampling period, seconds", p.lagInterval);
    cmd.AddValue("LagThreshold", "Lag counted as 'over threshold', seconds", p.lagThreshold);
    cmd.AddValue("RxQueueSize", "FdNetDevice read queue, packets", p.rxQueueSize);
    cmd.AddValue("Mtu", "MTU of the tap FdNetDevices and point-to-point devices", p.mtu);
    cmd.AddValue("PinCpu", "Pin the simulator thread to this CPU (-1 = no)", p.pinCpu);
    cmd.AddValue("WindowFile",
                 "If this file exists at exit and holds 'FROM TO' (scenario seconds), the windowed "
                 "results use [FROM, TO) instead of [Warmup, end) (the caller learns the window late)",
                 p.windowFile);
    AddTopologyArguments(cmd, p);
    cmd.AddValue("Pcap", "Write pcap captures of the bottleneck / WiFi with this file prefix", p.pcap);

    // Real time, best effort, and real checksums (Linux drops packets with checksum 0).
    GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::RealtimeSimulatorImpl"));
    GlobalValue::Bind("ChecksumEnabled", BooleanValue(true));
    Config::SetDefault("ns3::RealtimeSimulatorImpl::SynchronizationMode", StringValue("BestEffort"));
    Config::SetDefault("ns3::ArpCache::PendingQueueSize", UintegerValue(256));
    Config::SetDefault("ns3::ArpCache::AliveTimeout", TimeValue(Seconds(3600)));
    cmd.Parse(argc, argv);

    CheckSeed(p);
    if (HasImpairments(p))
        Fail("RxLossClient, RxLossRouter, RxLossServer and Outage are for the offline runner");
    if (p.duration < 0 || p.interval <= 0 || p.queueInterval <= 0 || p.lagInterval <= 0)
        Fail("Duration must be >= 0; Interval, QueueInterval and LagInterval > 0");
    if (p.mtu < 576 || p.mtu > 65000)
        Fail("Mtu must be 576..65000");
    if (p.topology == "wifi" && p.mtu > 2296)
        Fail("the WiFi topology carries at most a 2296-byte MTU (802.11 MSDU); use Mtu <= 2296");
    StartRun(p);
    return p;
}

/// A core address of `node` (before its tap interface exists).
Ipv4Address
CoreAddress(Ptr<Node> node, const std::string& label)
{
    Ptr<Ipv4> ip = node->GetObject<Ipv4>();
    for (uint32_t k = 0; k < ip->GetNInterfaces(); k++)
    {
        for (uint32_t a = 0; a < ip->GetNAddresses(k); a++)
        {
            Ipv4Address x = ip->GetAddress(k, a).GetLocal();
            if (!x.IsLocalhost())
                return x;
        }
    }
    Fail("gateway node of " + label + " has no address");
}

/// Attach an FdNetDevice for tap `t` to `node`, give it the gateway address, and route the
/// tap's subnet from every other node the way routing reaches `node`.
void
AttachTap(Tap& t, const EmuParams& p, Ptr<Node> node)
{
    t.node = node;
    Ptr<Ipv4> gwIp = node->GetObject<Ipv4>();
    const Ipv4Address core = CoreAddress(node, t.label);

    Ptr<FdNetDevice> dev = CreateObject<FdNetDevice>();
    dev->SetAddress(Mac48Address::Allocate());
    dev->SetMtu(static_cast<uint16_t>(p.mtu));
    dev->SetAttribute("RxQueueSize", UintegerValue(p.rxQueueSize));
    dev->SetFileDescriptor(t.fd);
    node->AddDevice(dev);
    t.device = dev;
    const uint32_t ifIndex = gwIp->AddInterface(dev);
    const Ipv4Mask mask(("/" + std::to_string(t.prefix)).c_str());
    gwIp->AddAddress(ifIndex, Ipv4InterfaceAddress(t.gateway, mask));
    gwIp->SetMetric(ifIndex, 1);
    gwIp->SetUp(ifIndex);

    const Ipv4Address subnet = t.gateway.CombineMask(mask);
    Ipv4StaticRoutingHelper staticHelper;
    for (uint32_t n = 0; n < NodeList::GetNNodes(); n++)
    {
        Ptr<Node> other = NodeList::GetNode(n);
        Ptr<Ipv4> ip = other->GetObject<Ipv4>();
        if (!ip || other == node)
            continue;
        Ipv4Header h;
        h.SetDestination(core);
        Socket::SocketErrno err;
        Ptr<Ipv4Route> r = ip->GetRoutingProtocol()->RouteOutput(nullptr, h, nullptr, err);
        if (!r)
            continue; // not connected to this gateway (cannot happen in these topologies)
        Ipv4Address via = r->GetGateway() == Ipv4Address::GetAny() ? core : r->GetGateway();
        int32_t outIf = ip->GetInterfaceForDevice(r->GetOutputDevice());
        if (outIf < 0)
            Fail("no interface for the route toward " + t.label);
        staticHelper.GetStaticRouting(ip)->AddNetworkRouteTo(subnet, mask, via, outIf);
    }
}

/// Attach one FdNetDevice per tap to its gateway node (the server's, each client's).
void
AttachTapDevices(std::vector<Tap>& taps,
                 const EmuParams& p,
                 Ptr<Node> serverGw,
                 const std::vector<Ptr<Node>>& clientGws)
{
    for (uint32_t i = 0; i < taps.size(); i++)
        AttachTap(taps[i], p, i == 0 ? serverGw : clientGws[i - 1]);
}

/// The node that owns IPv4 address `a`, or null.
Ptr<Node>
NodeWithAddress(Ipv4Address a)
{
    for (uint32_t n = 0; n < NodeList::GetNNodes(); n++)
    {
        Ptr<Ipv4> ip = NodeList::GetNode(n)->GetObject<Ipv4>();
        if (ip && ip->GetInterfaceForAddress(a) >= 0)
            return NodeList::GetNode(n);
    }
    return nullptr;
}

/// The nodes a packet crosses from `from` to `to` (both included), as routing sends it.
std::vector<Ptr<Node>>
RoutedPath(Ptr<Node> from, Ptr<Node> to)
{
    const Ipv4Address dst = CoreAddress(to, "the server");
    std::vector<Ptr<Node>> path{from};
    while (path.back() != to)
    {
        if (path.size() > NodeList::GetNNodes())
            Fail("routing loop between the clients' and the server's gateways");
        Ipv4Header h;
        h.SetDestination(dst);
        Socket::SocketErrno err;
        Ptr<Ipv4RoutingProtocol> routing = path.back()->GetObject<Ipv4>()->GetRoutingProtocol();
        Ptr<Ipv4Route> r = routing->RouteOutput(nullptr, h, nullptr, err);
        Ptr<Node> next;
        if (r)
            next = NodeWithAddress(r->GetGateway() == Ipv4Address::GetAny() ? dst : r->GetGateway());
        if (!next)
            Fail("no route from the clients' gateway to the server's");
        path.push_back(next);
    }
    return path;
}

/// The nodes routers may run on, named and ordered as rdtp-scenario's router_nodes (path
/// order from the clients; the index is the router's slot in the address plan): the dumbbell
/// or chain's r1 (the clients' gateway) … r{Hops+1} (the server's), WiFi's ap (the node
/// between the stations and the server's node).
std::vector<std::pair<std::string, Ptr<Node>>>
RouterNodes(const EmuParams& p, const Net& net)
{
    const std::vector<Ptr<Node>> path = RoutedPath(net.clients.at(0), net.server);
    std::vector<std::pair<std::string, Ptr<Node>>> nodes;
    if (p.topology == "wifi")
    {
        if (path.size() != 3)
            Fail("unexpected WiFi path (" + std::to_string(path.size()) +
                 " nodes from a station to the server)");
        nodes.emplace_back("ap", path[1]);
        return nodes;
    }
    if (path.size() != p.hops + 1)
        Fail("unexpected path (" + std::to_string(path.size()) + " routers for Hops=" + std::to_string(p.hops) +
             ")");
    for (size_t k = 0; k < path.size(); k++)
        nodes.emplace_back("r" + std::to_string(k + 1), path[k]);
    return nodes;
}

/// Attach each router's tap to its node (gateway from the plan unless given) and append it
/// to `taps` (not a client: no delivered series, but counters and run.toml like the others).
void
AttachRouterTaps(std::vector<Tap>& routerTaps, const EmuParams& p, const Net& net, std::vector<Tap>& taps)
{
    if (routerTaps.empty())
        return;
    const auto nodes = RouterNodes(p, net);
    for (auto& t : routerTaps)
    {
        auto at =
            std::find_if(nodes.begin(), nodes.end(), [&t](const auto& n) { return n.first == t.routerNode; });
        if (at == nodes.end())
        {
            std::string names;
            for (const auto& n : nodes)
                names += (names.empty() ? "" : ", ") + n.first;
            Fail("--RouterTaps node '" + t.routerNode + "' (this " + p.topology + " has " + names + ")");
        }
        if (!t.hasGateway)
        {
            t.gateway = Ipv4Address(rdtp_plan_router_gateway(static_cast<uint32_t>(at - nodes.begin())));
            t.prefix = rdtp_plan_prefix_len();
        }
        t.hostAddr = HostAddress(t);
        AttachTap(t, p, at->second);
        taps.push_back(t);
    }
}

/// Counters of every tap's device and the per-client delivered series.
void
InstallTapCounters(std::vector<Tap>& taps, double interval)
{
    for (auto& t : taps)
    {
        Tap* tp = &t;
        Must(t.device->TraceConnectWithoutContext(
                 "MacRx", Callback<void, Ptr<const Packet>>([tp](Ptr<const Packet> pk) {
                     tp->fromHostPackets++;
                     tp->fromHostBytes += pk->GetSize();
                 })),
             "FdNetDevice MacRx");
        Must(t.device->TraceConnectWithoutContext(
                 "MacTxDrop", Callback<void, Ptr<const Packet>>([tp](Ptr<const Packet>) { tp->toHostDrops++; })),
             "FdNetDevice MacTxDrop");
        t.device->TraceConnectWithoutContext(
            "PhyRxDrop", Callback<void, Ptr<const Packet>>([tp](Ptr<const Packet>) { tp->fromHostBad++; }));
        Must(t.device->TraceConnectWithoutContext(
                 "MacTx", Callback<void, Ptr<const Packet>>([tp, interval](Ptr<const Packet> pk) {
                     tp->toHostPackets++;
                     uint64_t ipBytes = 0, payload = 0;
                     bool data = false;
                     if (!ParseIpv4(pk, ipBytes, payload, data))
                         return;
                     tp->toHostBytes += ipBytes;
                     const double now = ScenarioNow();
                     if (!tp->client || now < 0)
                         return;
                     const size_t bin = static_cast<size_t>(now / interval);
                     if (bin >= tp->bins.size())
                         tp->bins.resize(bin + 1);
                     tp->bins[bin].ipBytes += ipBytes;
                     tp->bins[bin].payloadBytes += payload;
                     tp->bins[bin].dataPackets += data ? 1 : 0;
                 })),
             "FdNetDevice MacTx");
    }
}

/// The real-time lag, sampled every LagInterval by an event that compares the wall clock
/// with its simulated timestamp; it also notices the stop signal and stops the simulator.
struct LagSampler
{
    std::vector<std::pair<float, float>> lag; // scenario time s, lag ms
    std::string stoppedBy = "duration";
    double stopAt = std::nan("");
    std::function<void()> sample;

    void Start(const EmuParams& p, double duration)
    {
        Ptr<RealtimeSimulatorImpl> rt = DynamicCast<RealtimeSimulatorImpl>(Simulator::GetImplementation());
        if (!rt)
            Fail("the real-time simulator implementation is not active");
        lag.reserve(static_cast<size_t>(std::min(duration, 600.0) / p.lagInterval) + 16);
        const double settle = p.settle;
        const double period = p.lagInterval;
        sample = [this, rt, settle, period]() {
            const Time now = Simulator::Now();
            const double lagMs = (rt->RealtimeNow() - now).GetSeconds() * 1e3;
            lag.emplace_back(static_cast<float>(now.GetSeconds() - settle), static_cast<float>(lagMs));
            if (g_stop.load())
            {
                stoppedBy = "signal " + std::to_string(g_signal.load());
                stopAt = ScenarioNow();
                Simulator::Stop();
                return;
            }
            Simulator::Schedule(Seconds(period), sample);
        };
        Simulator::Schedule(Seconds(p.lagInterval), sample);
    }
};

/// Print "READY label=netns/dev/gateway/prefix ..." on stdout at scenario time 0.
void
AnnounceReady(const std::vector<Tap>& taps, const EmuParams& p)
{
    Simulator::Schedule(Seconds(p.settle), [&taps]() {
        std::printf("READY");
        for (const auto& t : taps)
        {
            std::ostringstream gw;
            t.gateway.Print(gw);
            std::printf(" %s=%s/%s/%s/%u", t.label.c_str(), t.netns.c_str(), t.dev.c_str(), gw.str().c_str(),
                        t.prefix);
        }
        std::printf("\n");
        std::fflush(stdout);
    });
}

/// Pin the simulator thread to `cpu`, after the devices started (their reader threads keep
/// the default affinity).
void
PinSimulatorThread(int32_t cpu)
{
    if (cpu < 0)
        return;
    Simulator::Schedule(MilliSeconds(1), [cpu]() {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0)
            std::cerr << "rdtp-sim: warning: cannot pin to CPU " << cpu << ": " << std::strerror(errno)
                      << std::endl;
    });
}

/// SIGTERM and SIGINT set g_stop; the lag sampler stops the simulator.
void
CatchStopSignals()
{
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = OnStopSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
}

/// lag.csv: per Interval, the samples, their mean and maximum and how many were over `ms`.
void
WriteLagCsv(const EmuParams& p, const std::vector<std::pair<float, float>>& lag, double end, double ms)
{
    std::ofstream f(p.out + "/lag.csv");
    f << "time_s,samples,mean_ms,max_ms,over_threshold\n";
    size_t k = 0;
    for (uint64_t bin = 0;; bin++)
    {
        const double t1 = static_cast<double>(bin + 1) * p.interval;
        if (t1 > end + 1e-9)
            break;
        size_t n = 0, over = 0;
        double sum = 0, mx = 0;
        while (k < lag.size() && lag[k].first < t1)
        {
            if (lag[k].first >= 0)
            {
                n++;
                sum += lag[k].second;
                mx = std::max(mx, static_cast<double>(lag[k].second));
                over += lag[k].second > ms ? 1 : 0;
            }
            k++;
        }
        f << Fmt(t1, 3) << ',' << n << ',' << Fmt(n ? sum / n : std::nan(""), 4) << ',' << Fmt(n ? mx : std::nan(""), 4)
          << ',' << over << '\n';
    }
}

/// timeseries.csv: what the last hop delivered to each client tap per Interval.
void
WriteTimeseriesCsv(const EmuParams& p, const std::vector<Tap>& taps, double end)
{
    std::ofstream f(p.out + "/timeseries.csv");
    f << "time_s,client,dst_ip,mbps,payload_mbps,data_packets\n";
    const uint64_t nBins = static_cast<uint64_t>(std::floor(end / p.interval + 1e-9));
    for (uint64_t bin = 0; bin < nBins; bin++)
    {
        for (const auto& t : taps)
        {
            if (!t.client)
                continue;
            Bin b = bin < t.bins.size() ? t.bins[bin] : Bin{};
            const double scale = 8.0 / p.interval / 1e6;
            f << Fmt(static_cast<double>(bin + 1) * p.interval, 3) << ',' << t.label << ',' << t.hostAddr << ','
              << Fmt(static_cast<double>(b.ipBytes) * scale, 4) << ','
              << Fmt(static_cast<double>(b.payloadBytes) * scale, 4) << ',' << b.dataPackets << '\n';
        }
    }
}

/// The measurement window: [Warmup, end), or what WindowFile holds if it exists at exit.
struct Window
{
    double from;
    double to;
    std::string source;
};

Window
ReadWindow(const EmuParams& p, double end)
{
    Window w{p.warmup, end, "Warmup"};
    if (!p.windowFile.empty())
    {
        std::ifstream wf(p.windowFile);
        double a = 0, b = 0;
        if (wf && (wf >> a >> b) && a >= 0 && b > a)
        {
            w.from = a;
            w.to = std::min(b, end);
            w.source = "WindowFile";
        }
    }
    return w;
}

/// run.toml: parameters, derived values, per-tap counters, lag statistics and results.
void
WriteEmulatorRunToml(const EmuParams& p,
                     const Net& net,
                     const std::vector<Tap>& taps,
                     QueueMonitor& qmon,
                     const LagSampler& sampler,
                     double end,
                     double wall,
                     const Window& win,
                     const WindowResults& bw,
                     const LagStats& sAll,
                     const LagStats& sWin)
{
    const double ms = p.lagThreshold * 1e3;
    std::ofstream run(p.out + "/run.toml");
    run << "# rdtp-sim --emulate: parameters, derived values, per-tap counters and results\n";
    run << "[run]\n";
    WriteNs3Version(run);
    run << "mode = \"realtime-best-effort\"\n";
    run << "stopped_by = " << TomlString(sampler.stoppedBy) << "\n";
    run << "scenario_s = " << Fmt(end, 6) << "\n";
    run << "wall_s = " << Fmt(wall, 3) << "\n";
    run << "settle_s = " << Fmt(p.settle, 6) << "\n";
    run << "\n[params]\n";
    run << "Taps = " << TomlString(p.taps) << "\nTopology = " << TomlString(p.topology) << "\n";
    if (!p.routerTaps.empty())
        run << "RouterTaps = " << TomlString(p.routerTaps) << "\n";
    run << "Duration = " << p.duration << "\nWarmup = " << p.warmup << "\nInterval = " << p.interval
        << "\nQueueInterval = " << p.queueInterval << "\nLagInterval = " << p.lagInterval
        << "\nLagThreshold = " << p.lagThreshold << "\nRxQueueSize = " << p.rxQueueSize << "\nSeed = " << p.seed
        << "\nRun = " << p.run << "\nPinCpu = " << p.pinCpu << "\nWindowFile = " << TomlString(p.windowFile) << "\n";
    WriteTopologyParams(run, p, true);
    run << "\n[derived]\n";
    for (const auto& [k, v] : net.derived)
        run << k << " = " << TomlString(v) << "\n";
    run << "clients = " << std::count_if(taps.begin(), taps.end(), [](const Tap& t) { return t.client; }) << "\n";
    for (const auto& t : taps)
    {
        std::ostringstream gw;
        t.gateway.Print(gw);
        run << "\n[tap." << t.label << "]\n";
        run << "netns = " << TomlString(t.netns) << "\ndev = " << TomlString(t.dev) << "\ngateway = "
            << TomlString(gw.str()) << "\nprefix = " << t.prefix << "\nhost = " << TomlString(t.hostAddr) << "\n";
        run << "from_host_packets = " << t.fromHostPackets << "\nfrom_host_bytes = " << t.fromHostBytes
            << "\nto_host_packets = " << t.toHostPackets << "\nto_host_bytes = " << t.toHostBytes
            << "\nto_host_write_drops = " << t.toHostDrops << "\nfrom_host_runts = " << t.fromHostBad << "\n";
    }
    run << "\n[results]\n";
    run << "window_source = " << TomlString(win.source) << "\n";
    run << "window_start_s = " << Fmt(bw.from, 6) << "\nwindow_end_s = " << Fmt(bw.to, 6) << "\n";
    run << "lag_threshold_ms = " << Fmt(ms, 4) << "\n";
    WriteLag(run, "", sAll);
    WriteLag(run, "window_", sWin);
    WriteBottleneckResults(run, bw);
    WriteQueueDrops(run, qmon);
    WriteDropDetails(run, qmon, net);
}

} // namespace

// The emulator: parse, open the taps, build the topology with them attached, run in real
// time until a signal or Duration, then write the outputs.
extern "C" int
rdtp_ns3_emulate(int argc, char** argv)
{
    FailOnCorePanic();
    const auto wallStart = std::chrono::steady_clock::now();
    EmuParams p = ParseEmulateArguments(argc, argv);
    const double duration = p.duration > 0 ? p.duration : 86400.0;

    std::vector<Tap> taps = ParseTaps(p.taps);
    std::vector<Tap> routerTaps = ParseRouterTaps(p.routerTaps);
    for (auto& t : taps)
        t.fd = OpenTap(t.netns, t.dev);
    for (auto& t : routerTaps)
        t.fd = OpenTap(t.netns, t.dev);
    const uint32_t nClients = static_cast<uint32_t>(taps.size() - 1);
    Net net = BuildTopology(p, nClients, [&taps, &p](Ptr<Node> serverGw, const std::vector<Ptr<Node>>& clientGws) {
        AttachTapDevices(taps, p, serverGw, clientGws);
    });
    AttachRouterTaps(routerTaps, p, net, taps);
    InstallTapCounters(taps, p.interval);

    MeasureWindow window{p.warmup, duration};
    QueueMonitor qmon(p.out, p.queueInterval, net.sampleQueue, window);
    net.attachQueue(&qmon);
    qmon.Start();
    LagSampler sampler;
    sampler.Start(p, duration);
    AnnounceReady(taps, p);
    PinSimulatorThread(p.pinCpu);
    CatchStopSignals();

    Simulator::Stop(Seconds(p.settle + duration));
    Simulator::Run();
    const double end = std::isnan(sampler.stopAt) ? ScenarioNow() : sampler.stopAt;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();

    const Window win = ReadWindow(p, end);
    const double ms = p.lagThreshold * 1e3;
    std::vector<float> all, inWindow;
    all.reserve(sampler.lag.size());
    for (const auto& [t, l] : sampler.lag)
    {
        if (t < 0)
            continue;
        all.push_back(l);
        if (t >= win.from && t < win.to)
            inWindow.push_back(l);
    }
    const LagStats sAll = Summarise(all, ms);
    const LagStats sWin = Summarise(inWindow, ms);
    WriteLagCsv(p, sampler.lag, end, ms);
    WriteTimeseriesCsv(p, taps, end);
    // Utilisation over the window (dumbbell), as the offline runner computes it.
    const WindowResults bw = BottleneckWindow(net, qmon, win.from, win.to);
    WriteEmulatorRunToml(p, net, taps, qmon, sampler, end, wall, win, bw, sAll, sWin);

    std::printf("rdtp-sim --emulate: %s, %.1f s in real time (%s); lag p50 %.3f p99 %.3f max %.3f ms, "
                "%zu of %zu samples over %.1f ms\n",
                p.topology.c_str(), end, sampler.stoppedBy.c_str(), sAll.p50, sAll.p99, sAll.max, sAll.over,
                sAll.samples, ms);
    std::fflush(stdout);
    Simulator::Destroy();
    return 0;
}
