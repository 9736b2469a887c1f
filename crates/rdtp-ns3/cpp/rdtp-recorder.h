// Measurement side of the scenario runner: per-flow accumulators written as
// timeseries.csv / flows.csv, the bottleneck queue monitor written as queue.csv, and the
// caching routers' per-interval counters written as cs.csv.
// Nothing here touches the protocol; the inputs are trace-source callbacks.
#ifndef RDTP_NS3_RECORDER_H
#define RDTP_NS3_RECORDER_H

#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3
{

class RdtpRouter;
struct RdtpRouterInterval;

/// The measured window and the simulation length every recorder shares, in scenario time.
struct MeasureWindow
{
    double warmup = 0.0;
    double duration = 0.0;
};

/// Scenario time 0 in simulator seconds (the WiFi topology lets stations associate first).
void SetScenarioOrigin(double seconds);
double ScenarioOrigin();
/// Simulator::Now() in scenario seconds.
double ScenarioNow();

/// Everything measured about one flow.
struct FlowRecord
{
    uint32_t index = 0;
    std::string kind; // rdtp | tcp-bbr | tcp-cubic | udp
    std::string cc;   // controller (rdtp), bbr/cubic (tcp), cbr (udp)
    uint32_t client = 0;
    double start = 0.0;
    double stop = 0.0;
    uint64_t objectSize = 0; // rdtp: bytes of the object fetched; tcp/udp: MaxBytes (0 = unlimited)

    // Delivered bytes (to the application).
    uint64_t bytes = 0;
    uint64_t intervalBytes = 0;
    uint64_t windowBytes = 0;

    // rdtp: payload bytes arrived (before reordering and verification) this interval; for
    // flows without that trace the received rate is the delivered one.
    uint64_t intervalReceived = 0;
    bool hasReceived = false;

    // RTT samples, milliseconds.
    double rttSumInterval = 0.0;
    uint64_t rttCountInterval = 0;
    double lastRttMs = std::numeric_limits<double>::quiet_NaN();
    double rttSumWindow = 0.0;
    uint64_t rttCountWindow = 0;
    double minRttMs = std::numeric_limits<double>::infinity();

    // Controller snapshot (last value).
    double cwnd = std::numeric_limits<double>::quiet_NaN(); // segments / units
    double pacingMbps = std::numeric_limits<double>::quiet_NaN();
    std::string state;
    double aggregation = std::numeric_limits<double>::quiet_NaN();

    uint64_t retransmissions = 0;
    uint64_t timeouts = 0;
    /// rdtp only: units that arrived twice (spurious re-requests); -1 = not measured.
    int64_t duplicates = -1;
    /// rdtp only: units the receiver declared lost (fast re-request or timeout); -1 = not measured.
    int64_t lost = -1;
    /// rdtp only: datagrams that were not valid answers for the transfer; -1 = not measured.
    int64_t invalid = -1;
    /// rdtp through routers: payload bytes served from routers' content stores, and each
    /// source's share of the bytes ("origin:61.2%;r1:38.8%"); -1 / empty = not measured.
    int64_t cachedBytes = -1;
    std::string sources;
    bool completed = false;
    bool failed = false;
    double finishS = std::numeric_limits<double>::quiet_NaN();

    // TCP retransmission detection: highest sequence number sent so far.
    bool haveHighTx = false;
    uint32_t highTx = 0;
    uint32_t segmentSize = 1448;

    /// End of the flow's active time: stop, completion, or the end of the run.
    double ActiveEnd(double duration) const;
    void OnBytes(double now, const MeasureWindow& w, uint64_t n);
    /// rdtp: payload bytes arrived, before reordering and verification.
    void OnReceived(uint64_t n);
    void OnRtt(double now, const MeasureWindow& w, double ms);
};

/// Owns the flow records and writes timeseries.csv (every Interval) and flows.csv.
class FlowRecorder
{
  public:
    FlowRecorder(const std::string& dir, MeasureWindow w, double interval);
    FlowRecord& Add(FlowRecord r);
    FlowRecord& Get(uint32_t i);
    std::vector<FlowRecord>& All();
    /// Schedules the periodic timeseries rows.
    void Start();
    /// Writes flows.csv (call after Simulator::Run).
    void Finish();
    /// The latest active end over all flows (for the utilisation window).
    double BusyEnd() const;
    const MeasureWindow& Window() const;
    /// Add flows.csv's served-by columns (cached_bytes, sources): runs with routers.
    void AddServedBy();

  private:
    void Tick();
    bool m_servedBy = false;
    MeasureWindow m_window;
    double m_interval;
    std::string m_dir;
    std::ofstream m_ts;
    uint64_t m_tick = 0;
    std::vector<std::unique_ptr<FlowRecord>> m_flows;
    std::vector<FlowRecord> m_view;
};

/// Samples a queue every QueueInterval into queue.csv and measures sojourn times and
/// departures through enqueue/dequeue/drop hooks keyed by packet uid.
class QueueMonitor
{
  public:
    using Sampler = std::function<std::pair<uint64_t, uint64_t>()>; // packets, bytes
    QueueMonitor(const std::string& dir, double interval, Sampler sampler, MeasureWindow w);
    void Start();
    void OnEnqueue(uint64_t uid);
    void OnDequeue(uint64_t uid, uint32_t bytes);
    void OnDrop(uint64_t uid, bool wasQueued);

    /// Bytes that left the queue, sojourn-time sum (ms) and count, per QueueInterval bin.
    std::vector<uint64_t> binBytes;
    std::vector<double> binSojournMs;
    std::vector<uint64_t> binSojournCount;
    uint64_t drops = 0;
    std::map<std::string, uint64_t> dropReasons;
    /// Drops that no ns-3 trace reports, counted at the end (WiFi: MacTx − enqueued).
    std::function<uint64_t()> silentDrops;
    uint64_t maxPackets = 0;
    double BinWidth() const { return m_interval; }
    /// Departed bytes and mean sojourn (ms) over whole bins inside [from, to).
    uint64_t BytesBetween(double from, double to) const;
    double MeanSojournMsBetween(double from, double to) const;

  private:
    void Sample();
    double m_interval;
    Sampler m_sampler;
    MeasureWindow m_window;
    std::ofstream m_out;
    uint64_t m_tick = 0;
    std::unordered_map<uint64_t, int64_t> m_enqueued; // uid -> enqueue time (ns)
};

/// Writes cs.csv: one row per caching router per Interval (from its Interval trace source,
/// which this tracer closes every Interval, routers in the order added): the interval's
/// content-store hits and misses, hit ratio, coalesced and forwarded units, evictions, Data
/// payload bytes from upstream and to downstreams, and the store's and pending table's sizes
/// at the interval's end. Finish() closes the last intervals, so each column adds up to the
/// router's own counter.
class CsTracer
{
  public:
    CsTracer(const std::string& dir, MeasureWindow w, double interval);
    ~CsTracer();
    /// Record `router`, which runs on node `node` (set its TraceInterval to 0: this tracer
    /// closes its intervals).
    void Add(Ptr<RdtpRouter> router, const std::string& node);
    /// Schedules the periodic rows.
    void Start();
    /// Close the last intervals (call after Simulator::Run).
    void Finish();

  private:
    void Tick();
    void Row(const std::string& node, const std::string& id, const RdtpRouterInterval& iv);
    MeasureWindow m_window;
    double m_interval;
    uint64_t m_tick = 0;
    std::ofstream m_out;
    std::vector<Ptr<RdtpRouter>> m_routers;
};

/// Fixed-point formatting (deterministic, locale-free); NaN prints as an empty field.
std::string Fmt(double v, int decimals);

} // namespace ns3

#endif
