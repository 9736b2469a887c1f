// The networks rdtp-sim simulates, shared by the offline scenario runner (rdtp-scenario.cc)
// and the real-time emulator (rdtp-emulate.cc), so both put traffic through the very same
// bottleneck or WiFi hop.
//
// dumbbell: server -(access)- router1 -(bottleneck p2p, DropTail)- router2 -(access)- clients
// wifi:     server -(wired p2p, or a second WiFi network)- AP ~ stations (802.11g/n/ac)
//           [+ a sniffer that only listens]
// graph:    named nodes (servers, routers, clients) and p2p links between them, offline only
//
// Nodes caching routers may run on are named as the scenario names them (Net::named):
// "server"; on a dumbbell or chain "r1" (the clients' gateway) … "r{hops+1}" (the server's);
// on WiFi "ap"; in a graph every node by its own name.
//
// Offline, the end hosts are ns-3 nodes running ns-3 applications. In emulation the end hosts
// are real Linux hosts (network namespaces behind tap devices): the builder then calls an
// AttachEndpoints hook with the gateway nodes the real hosts hang off, after routing is
// computed. The dumbbell then has no access links (router1 is the server's gateway, router2
// every client's), the WiFi topology keeps all its nodes (the server node and the stations
// forward to the taps).
#ifndef RDTP_NS3_TOPOLOGY_H
#define RDTP_NS3_TOPOLOGY_H

#include "rdtp-recorder.h"

#include "ns3/command-line.h"
#include "ns3/ipv4-address.h"
#include "ns3/net-device-container.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/queue.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/// Everything that describes the network (both topologies), as CommandLine attributes.
struct TopologyParams
{
    std::string topology = "dumbbell";
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
    std::string rateSchedule = "";
    /// Bottleneck-rate links in series (1 = dumbbell; N > 1 = a chain of N + 1 routers that
    /// share the one-way delay equally).
    uint32_t hops = 1;
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
    /// The server's link to the AP: "p2p" (WiredRate, WiredDelay) or "wifi" (a second 802.11
    /// network on its own channel, the AP's second radio as its access point, same PHY
    /// settings as the stations' network; S1 §IV-A's producer link).
    std::string serverLink = "p2p";
    // impairments (rdtp-impair.h; offline only)
    double rxLossClient = 0.0;
    double rxLossRouter = 0.0;
    double rxLossServer = 0.0;
    /// "start:end,…" scenario seconds during which the server's access link is down.
    std::string outage;
    /// 802.11g: each station's fixed PHY rate, Mbit/s, comma-separated (the last repeats).
    std::string phyRates;
    /// Each station's distance from the AP, metres, comma-separated (default: distance).
    std::string distances;
    /// A listening node next to the AP that never transmits (seed 002's monitor capture).
    bool sniffer = false;
    // graph
    /// "name:role,…" (role server, router or client).
    std::string nodes;
    /// "from=a,to=b,rate=…,delay=…,queue=…[,monitor=1];…".
    std::string links;
    std::string pcap; // file prefix; empty = no capture
    /// MTU of the point-to-point devices; also the packet size a "QueueBdp" queue is counted in.
    uint32_t mtu = 1500;
};

/// Register the topology attributes (Rate … WifiQdisc) on `cmd`.
void AddTopologyArguments(CommandLine& cmd, TopologyParams& p);

/// Write the topology attributes of `p` as TOML `key = value` lines (run.toml [params]).
void WriteTopologyParams(std::ostream& out, const TopologyParams& p, bool withMtu);

/// Emulation hook: `attach(serverGateway, clientGateways)` adds the devices that lead to the
/// real hosts (and their addresses and routes) on the given nodes. Runs after global routing
/// was computed (ns-3's global router cannot handle channel-less devices such as
/// FdNetDevice), so the hook adds static routes toward the new subnets itself.
using AttachEndpoints = std::function<void(Ptr<Node>, const std::vector<Ptr<Node>>&)>;

/// What the topology builder hands to the flow and measurement code.
struct Net
{
    /// Offline: the server host. Emulated: the server's gateway node.
    Ptr<Node> server;
    Ipv4Address serverAddr; // offline only
    /// Offline: the client hosts. Emulated: each client's gateway node.
    std::vector<Ptr<Node>> clients;
    std::vector<Ipv4Address> clientAddrs; // offline only
    /// The nodes by the names scenarios use (see the file comment).
    std::map<std::string, Ptr<Node>> named;
    /// Capacity timeline of the bottleneck (time s, bit/s); empty for WiFi.
    std::vector<std::pair<double, double>> capacity;
    double capacityForSizing = 0.0;
    std::map<std::string, std::string> derived;
    std::function<void(QueueMonitor*)> attachQueue;
    QueueMonitor::Sampler sampleQueue;
    NetDeviceContainer stations; // WiFi station devices (empty for the dumbbell)
    /// Both ends of the server's access link, server side first (offline dumbbell and wifi).
    std::vector<Ptr<NetDevice>> serverLink;
    Ptr<NetDevice> apDevice;     // WiFi: the AP's device
    Ptr<NetDevice> sniffer;      // WiFi with Sniffer: the listening node's device
    /// WiFi: each station's fixed PHY rate and the AP's (bit/s; 0 under rate control).
    std::vector<double> stationPhyBps;
    double apPhyBps = 0.0;
    /// MPDUs the stations' MACs dropped (uplink: requests, TCP ACKs), by reason.
    std::shared_ptr<std::map<std::string, uint64_t>> stationDrops =
        std::make_shared<std::map<std::string, uint64_t>>();
};

/// Build p.topology ("dumbbell", "wifi" or "graph") with `nClients` clients/stations. Without
/// `attach` the end hosts are ns-3 nodes (offline); with it, see the file comment.
Net BuildTopology(const TopologyParams& p, uint32_t nClients, const AttachEndpoints& attach = nullptr);
Net BuildDumbbell(const TopologyParams& p, uint32_t nClients, const AttachEndpoints& attach = nullptr);
Net BuildWifi(const TopologyParams& p, uint32_t nStations, const AttachEndpoints& attach = nullptr);
/// A graph topology (offline only: `attach` must be empty).
Net BuildGraph(const TopologyParams& p, uint32_t nClients, const AttachEndpoints& attach = nullptr);

/// A QueueMonitor hook on a DropTail device queue (enqueue, dequeue, drop traces).
std::function<void(QueueMonitor*)> MonitorDropTail(Ptr<Queue<Packet>> queue);

/// Bottleneck results over a measurement window, snapped inward to the queue monitor's bins.
struct WindowResults
{
    double from = 0.0;
    double to = 0.0;
    /// Bytes that left the bottleneck / what its capacity timeline allowed; NaN for WiFi
    /// (no capacity timeline) or an empty window.
    double utilisation = 0.0;
    /// Mean queue sojourn (ms); NaN when nothing was dequeued.
    double meanQueueDelayMs = 0.0;
};

/// Utilisation and queueing delay over [from, to): shared by the offline runner and the
/// emulator so both report the same quantity.
WindowResults BottleneckWindow(const Net& net, const QueueMonitor& qmon, double from, double to);

/// Print "rdtp-sim: msg" to stderr and exit(2).
[[noreturn]] void Fail(const std::string& msg);
/// Fail unless a trace source was connected.
void Must(bool connected, const char* what);
/// Split on `sep`, dropping empty items.
std::vector<std::string> Split(const std::string& s, char sep);
/// The `key=value` fields of one comma-separated item (Fail on a field without '=').
std::vector<std::pair<std::string, std::string>> KeyValues(const std::string& item);
/// Fail unless no queue disc sits on any device (WiFi devices excepted if `allowWifi`): the
/// device queues (and the WiFi MAC queue) must be the only queues, so the sampled queue is
/// the bottleneck queue.
void CheckNoQdisc(bool allowWifi);
/// The name of an 802.11 MAC drop reason (`WifiMacDropReason`, passed as its value):
/// failed_enqueue, expired_lifetime, retry_limit, qos_old_packet, else "other".
const char* WifiMacDropReasonName(int reason);
/// A TOML basic string.
std::string TomlString(const std::string& s);

} // namespace ns3

#endif
