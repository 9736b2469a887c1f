#include "rdtp-recorder.h"

#include "rdtp-router.h"
#include "rdtp-topology.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ns3
{

static double g_origin = 0.0;

void
SetScenarioOrigin(double seconds)
{
    g_origin = seconds;
}

double
ScenarioOrigin()
{
    return g_origin;
}

double
ScenarioNow()
{
    return Simulator::Now().GetSeconds() - g_origin;
}

std::string
Fmt(double v, int decimals)
{
    if (std::isnan(v) || std::isinf(v))
    {
        return "";
    }
    if (v == 0.0)
    {
        v = 0.0; // no "-0.000"
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

double
FlowRecord::ActiveEnd(double duration) const
{
    double end = std::min(stop, duration);
    if (completed && !std::isnan(finishS))
    {
        end = std::min(end, finishS);
    }
    return end;
}

void
FlowRecord::OnBytes(double now, const MeasureWindow& w, uint64_t n)
{
    bytes += n;
    intervalBytes += n;
    if (now >= w.warmup && now < w.duration && now <= stop)
    {
        windowBytes += n;
    }
}

void
FlowRecord::OnReceived(uint64_t n)
{
    hasReceived = true;
    intervalReceived += n;
}

void
FlowRecord::OnRtt(double now, const MeasureWindow& w, double ms)
{
    lastRttMs = ms;
    rttSumInterval += ms;
    rttCountInterval++;
    minRttMs = std::min(minRttMs, ms);
    if (now >= w.warmup && now < w.duration)
    {
        rttSumWindow += ms;
        rttCountWindow++;
    }
}

FlowRecorder::FlowRecorder(const std::string& dir, MeasureWindow w, double interval)
    : m_window(w),
      m_interval(interval),
      m_dir(dir)
{
    m_ts.open(dir + "/timeseries.csv");
    m_ts << "time_s,flow,kind,cc,goodput_mbps,rtt_ms,cwnd,pacing_mbps,state,aggregation,received_mbps\n";
}

FlowRecord&
FlowRecorder::Add(FlowRecord r)
{
    m_flows.push_back(std::make_unique<FlowRecord>(std::move(r)));
    return *m_flows.back();
}

FlowRecord&
FlowRecorder::Get(uint32_t i)
{
    return *m_flows.at(i);
}

const MeasureWindow&
FlowRecorder::Window() const
{
    return m_window;
}

void
FlowRecorder::Start()
{
    Simulator::Schedule(Seconds(g_origin + m_interval), &FlowRecorder::Tick, this);
}

void
FlowRecorder::Tick()
{
    m_tick++;
    // Compute the row time from the tick count, not by accumulating floats.
    const double t = static_cast<double>(m_tick) * m_interval;
    for (auto& fp : m_flows)
    {
        FlowRecord& f = *fp;
        const bool active = t > f.start + 1e-12 && (t - m_interval) < f.ActiveEnd(m_window.duration);
        if (active)
        {
            const double goodput = static_cast<double>(f.intervalBytes) * 8.0 / m_interval / 1e6;
            const double received =
                f.hasReceived ? static_cast<double>(f.intervalReceived) * 8.0 / m_interval / 1e6 : goodput;
            const double rtt = f.rttCountInterval > 0
                                   ? f.rttSumInterval / static_cast<double>(f.rttCountInterval)
                                   : f.lastRttMs;
            m_ts << Fmt(t, 3) << ',' << f.index << ',' << f.kind << ',' << f.cc << ','
                 << Fmt(goodput, 3) << ',' << Fmt(rtt, 3) << ',' << Fmt(f.cwnd, 1) << ','
                 << Fmt(f.pacingMbps, 3) << ',' << f.state << ',' << Fmt(f.aggregation, 0) << ','
                 << Fmt(received, 3) << '\n';
        }
        f.intervalBytes = 0;
        f.intervalReceived = 0;
        f.rttSumInterval = 0.0;
        f.rttCountInterval = 0;
    }
    if (t + m_interval <= m_window.duration + 1e-9)
    {
        Simulator::Schedule(Seconds(m_interval), &FlowRecorder::Tick, this);
    }
}

double
FlowRecorder::BusyEnd() const
{
    double end = 0.0;
    for (const auto& f : m_flows)
    {
        end = std::max(end, f->ActiveEnd(m_window.duration));
    }
    return end;
}

std::vector<FlowRecord>&
FlowRecorder::All()
{
    m_view.clear();
    for (const auto& f : m_flows)
    {
        m_view.push_back(*f);
    }
    return m_view;
}

void
FlowRecorder::AddServedBy()
{
    m_servedBy = true;
}

void
FlowRecorder::Finish()
{
    m_ts.flush();
    std::ofstream out(m_dir + "/flows.csv");
    out << "flow,kind,cc,client,start_s,stop_s,bytes,goodput_mbps,mean_rtt_ms,min_rtt_ms,"
           "retransmissions,timeouts,completed,finish_s,window_bytes,duplicates,lost,invalid"
        << (m_servedBy ? ",cached_bytes,sources\n" : "\n");
    for (const auto& fp : m_flows)
    {
        const FlowRecord& f = *fp;
        const double from = std::max(f.start, m_window.warmup);
        const double to = f.ActiveEnd(m_window.duration);
        const double goodput = to > from
                                   ? static_cast<double>(f.windowBytes) * 8.0 / (to - from) / 1e6
                                   : std::numeric_limits<double>::quiet_NaN();
        const double meanRtt = f.rttCountWindow > 0
                                   ? f.rttSumWindow / static_cast<double>(f.rttCountWindow)
                                   : std::numeric_limits<double>::quiet_NaN();
        out << f.index << ',' << f.kind << ',' << f.cc << ',' << f.client << ','
            << Fmt(f.start, 3) << ',' << Fmt(std::min(f.stop, m_window.duration), 3) << ','
            << f.bytes << ',' << Fmt(goodput, 3) << ',' << Fmt(meanRtt, 3) << ','
            << Fmt(f.minRttMs, 3) << ',' << f.retransmissions << ',' << f.timeouts << ','
            << (f.completed ? 1 : 0) << ',' << Fmt(f.finishS, 6) << ',' << f.windowBytes << ','
            << (f.duplicates >= 0 ? std::to_string(f.duplicates) : std::string()) << ','
            << (f.lost >= 0 ? std::to_string(f.lost) : std::string()) << ','
            << (f.invalid >= 0 ? std::to_string(f.invalid) : std::string());
        if (m_servedBy)
            out << ',' << (f.cachedBytes >= 0 ? std::to_string(f.cachedBytes) : std::string()) << ',' << f.sources;
        out << '\n';
    }
}

CsTracer::CsTracer(const std::string& dir, MeasureWindow w, double interval)
    : m_window(w),
      m_interval(interval)
{
    m_out.open(dir + "/cs.csv");
    m_out << "time_s,node,id,cs_hits,cs_misses,hit_ratio,coalesced,forwarded_units,evictions,cs_entries,"
             "pit_entries,upstream_bytes,downstream_bytes\n";
}

CsTracer::~CsTracer() = default;

void
CsTracer::Add(Ptr<RdtpRouter> router, const std::string& node)
{
    const std::string id = NodeIdLabel(router->GetNodeId());
    Must(router->TraceConnectWithoutContext(
             "Interval",
             Callback<void, const RdtpRouterInterval&>(
                 [this, node, id](const RdtpRouterInterval& iv) { Row(node, id, iv); })),
         "RdtpRouter Interval");
    m_routers.push_back(router);
}

void
CsTracer::Row(const std::string& node, const std::string& id, const RdtpRouterInterval& iv)
{
    const uint64_t lookups = iv.csHits + iv.csMisses;
    const double ratio = lookups > 0 ? static_cast<double>(iv.csHits) / static_cast<double>(lookups)
                                     : std::numeric_limits<double>::quiet_NaN();
    m_out << Fmt(iv.end.GetSeconds() - g_origin, 3) << ',' << node << ',' << id << ',' << iv.csHits << ','
          << iv.csMisses << ',' << Fmt(ratio, 4) << ',' << iv.coalesced << ',' << iv.forwardedUnits << ','
          << iv.evictions << ',' << iv.csEntries << ',' << iv.pitEntries << ',' << iv.upstreamBytes << ','
          << iv.downstreamBytes << '\n';
}

void
CsTracer::Start()
{
    Simulator::Schedule(Seconds(g_origin + m_interval), &CsTracer::Tick, this);
}

void
CsTracer::Tick()
{
    m_tick++;
    for (const auto& r : m_routers)
        r->FlushInterval();
    const double t = static_cast<double>(m_tick) * m_interval;
    if (t + m_interval <= m_window.duration + 1e-9)
        Simulator::Schedule(Seconds(m_interval), &CsTracer::Tick, this);
}

void
CsTracer::Finish()
{
    for (const auto& r : m_routers)
        r->FlushInterval();
    m_out.flush();
}

QueueMonitor::QueueMonitor(const std::string& dir,
                           double interval,
                           Sampler sampler,
                           MeasureWindow w)
    : m_interval(interval),
      m_sampler(std::move(sampler)),
      m_window(w)
{
    m_out.open(dir + "/queue.csv");
    m_out << "time_s,packets,bytes,drops\n";
    const size_t bins = static_cast<size_t>(std::ceil(w.duration / interval)) + 2;
    binBytes.assign(bins, 0);
    binSojournMs.assign(bins, 0.0);
    binSojournCount.assign(bins, 0);
}

void
QueueMonitor::Start()
{
    if (!m_sampler)
        return; // nothing to sample (a graph without a monitored link): queue.csv keeps its header
    Simulator::Schedule(Seconds(g_origin), &QueueMonitor::Sample, this);
}

void
QueueMonitor::Sample()
{
    const double t = static_cast<double>(m_tick) * m_interval;
    m_tick++;
    auto [packets, bytes] = m_sampler();
    maxPackets = std::max(maxPackets, packets);
    m_out << Fmt(t, 3) << ',' << packets << ',' << bytes << ',' << drops << '\n';
    if (t + m_interval <= m_window.duration + 1e-9)
    {
        Simulator::Schedule(Seconds(m_interval), &QueueMonitor::Sample, this);
    }
}

void
QueueMonitor::OnEnqueue(uint64_t uid)
{
    m_enqueued[uid] = Simulator::Now().GetNanoSeconds();
}

void
QueueMonitor::OnDequeue(uint64_t uid, uint32_t bytes)
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    const double t = ScenarioNow();
    const size_t bin = t < 0 ? binBytes.size() : static_cast<size_t>(t / m_interval);
    if (bin < binBytes.size())
    {
        binBytes[bin] += bytes;
    }
    auto it = m_enqueued.find(uid);
    if (it != m_enqueued.end())
    {
        if (bin < binBytes.size())
        {
            binSojournMs[bin] += static_cast<double>(now - it->second) / 1e6;
            binSojournCount[bin]++;
        }
        m_enqueued.erase(it);
    }
}

void
QueueMonitor::OnDrop(uint64_t uid, bool wasQueued)
{
    drops++;
    if (wasQueued)
    {
        m_enqueued.erase(uid);
    }
}

static std::pair<size_t, size_t>
BinSpan(double from, double to, double width, size_t n)
{
    size_t a = static_cast<size_t>(std::ceil(from / width - 1e-9));
    size_t b = static_cast<size_t>(std::floor(to / width + 1e-9));
    b = std::min(b, n);
    return {a, std::max(a, b)};
}

uint64_t
QueueMonitor::BytesBetween(double from, double to) const
{
    auto [a, b] = BinSpan(from, to, m_interval, binBytes.size());
    uint64_t sum = 0;
    for (size_t i = a; i < b; i++)
    {
        sum += binBytes[i];
    }
    return sum;
}

double
QueueMonitor::MeanSojournMsBetween(double from, double to) const
{
    auto [a, b] = BinSpan(from, to, m_interval, binBytes.size());
    double sum = 0.0;
    uint64_t count = 0;
    for (size_t i = a; i < b; i++)
    {
        sum += binSojournMs[i];
        count += binSojournCount[i];
    }
    return count > 0 ? sum / static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN();
}

} // namespace ns3
