#include "rdtp-workload.h"

#include "ns3/double.h"
#include "ns3/integer.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdtpWorkload");
NS_OBJECT_ENSURE_REGISTERED(RdtpWorkload);

TypeId
RdtpWorkload::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdtpWorkload")
            .SetParent<Application>()
            .SetGroupName("Applications")
            .AddConstructor<RdtpWorkload>()
            .AddAttribute("Rate",
                          "Mean fetches started per second (a Poisson process)",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&RdtpWorkload::m_rate),
                          MakeDoubleChecker<double>(1e-9))
            .AddAttribute("Alpha",
                          "Zipf exponent of the objects' popularity (0: uniform)",
                          DoubleValue(0.8),
                          MakeDoubleAccessor(&RdtpWorkload::m_alpha),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("Controller",
                          "Controller spec of every fetch (see RdtpConsumer)",
                          StringValue(rdtp_cc_default()),
                          MakeStringAccessor(&RdtpWorkload::m_controller),
                          MakeStringChecker())
            .AddAttribute("Config",
                          "Receiver spec of every fetch (see RdtpConsumer)",
                          StringValue(""),
                          MakeStringAccessor(&RdtpWorkload::m_config),
                          MakeStringChecker())
            .AddAttribute("Seed",
                          "Seed of the fetches' receivers (each gets its own)",
                          UintegerValue(0),
                          MakeUintegerAccessor(&RdtpWorkload::m_seed),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Stream",
                          "ns-3 random stream of the arrivals (the Zipf draws use the next one); "
                          "-1 = assigned automatically",
                          IntegerValue(-1),
                          MakeIntegerAccessor(&RdtpWorkload::m_stream),
                          MakeIntegerChecker<int64_t>())
            .AddAttribute("LastStart",
                          "No fetch starts after this simulation time (negative: none until the "
                          "application stops); the fetches running then go on until it stops",
                          TimeValue(Seconds(-1)),
                          MakeTimeAccessor(&RdtpWorkload::m_lastStart),
                          MakeTimeChecker())
            .AddTraceSource("Delivered",
                            "Bytes newly read by any of the fetches",
                            MakeTraceSourceAccessor(&RdtpWorkload::m_deliveredTrace),
                            "ns3::RdtpWorkload::DeliveredCallback");
    return tid;
}

RdtpWorkload::RdtpWorkload()
    : m_rate(1.0),
      m_alpha(0.8),
      m_seed(0),
      m_stream(-1),
      m_lastStart(Seconds(-1)),
      m_count(0)
{
}

RdtpWorkload::~RdtpWorkload() = default;

void
RdtpWorkload::SetCatalogue(std::vector<WorkloadObject> objects)
{
    m_objects = std::move(objects);
}

void
RdtpWorkload::SetFetchDone(std::function<void(const WorkloadFetch&)> done)
{
    m_done = std::move(done);
}

const std::vector<WorkloadObject>&
RdtpWorkload::Catalogue() const
{
    return m_objects;
}

size_t
RdtpWorkload::Active() const
{
    return m_running.size();
}

void
RdtpWorkload::DoDispose()
{
    m_next.Cancel();
    for (auto& [id, r] : m_running)
        r.consumer->Dispose();
    m_running.clear();
    Application::DoDispose();
}

void
RdtpWorkload::StartApplication()
{
    if (m_objects.empty())
        NS_FATAL_ERROR("RdtpWorkload: no catalogue");
    m_gap = CreateObject<ExponentialRandomVariable>();
    m_gap->SetAttribute("Mean", DoubleValue(1.0 / m_rate));
    m_zipf = CreateObject<ZipfRandomVariable>();
    m_zipf->SetAttribute("N", IntegerValue(static_cast<int64_t>(m_objects.size())));
    m_zipf->SetAttribute("Alpha", DoubleValue(m_alpha));
    if (m_stream >= 0)
    {
        m_gap->SetStream(m_stream);
        m_zipf->SetStream(m_stream + 1);
    }
    ScheduleNext();
}

void
RdtpWorkload::StopApplication()
{
    Flush();
}

void
RdtpWorkload::Flush()
{
    m_next.Cancel();
    // Fetches still running are reported unfinished, in the order they started.
    std::vector<uint64_t> ids;
    for (const auto& [id, r] : m_running)
        ids.push_back(id);
    for (uint64_t id : ids)
        End(id);
}

void
RdtpWorkload::ScheduleNext()
{
    const Time gap = Seconds(m_gap->GetValue());
    if (!m_lastStart.IsNegative() && Simulator::Now() + gap > m_lastStart)
        return;
    m_next = Simulator::Schedule(gap, &RdtpWorkload::StartFetch, this);
}

void
RdtpWorkload::StartFetch()
{
    const uint32_t rank = static_cast<uint32_t>(m_zipf->GetInteger());
    const WorkloadObject& o = m_objects.at(rank - 1);
    const uint64_t id = m_count++;
    Ptr<RdtpConsumer> c = CreateObject<RdtpConsumer>();
    c->SetAttribute("Remote", AddressValue(o.firstHop));
    c->SetAttribute("ObjectName", StringValue(o.name));
    c->SetAttribute("ObjectEid", StringValue(o.eid));
    c->SetAttribute("ObjectSize", UintegerValue(o.size));
    c->SetAttribute("Controller", StringValue(m_controller));
    c->SetAttribute("Config", StringValue(m_config));
    // Each fetch its own receiver seed (tags, nonces): receivers sharing a router must differ.
    uint64_t z = m_seed + 0x9e3779b97f4a7c15ULL * (id + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    c->SetAttribute("Seed", UintegerValue(z ^ (z >> 31)));
    Running r;
    r.consumer = c;
    r.fetch.index = id;
    r.fetch.rank = rank;
    r.fetch.object = &o;
    r.fetch.start = Simulator::Now();
    m_running.emplace(id, r);
    // Not one of the node's applications (a node cannot drop one): started and disposed of here.
    c->SetNode(GetNode());
    c->SetStartTime(Seconds(0));
    c->TraceConnectWithoutContext("Delivered", Callback<void, uint64_t>([this, id](uint64_t n) {
        auto it = m_running.find(id);
        if (it != m_running.end())
            it->second.fetch.bytes += n;
        m_deliveredTrace(n);
    }));
    // End from a fresh event: the consumer is inside its own code when it fires these.
    c->TraceConnectWithoutContext("Finished", Callback<void, Time>([this, id](Time) {
        Simulator::ScheduleNow(&RdtpWorkload::End, this, id);
    }));
    c->TraceConnectWithoutContext("Failed", Callback<void, int>([this, id](int) {
        Simulator::ScheduleNow(&RdtpWorkload::End, this, id);
    }));
    c->Initialize();
    ScheduleNext();
}

void
RdtpWorkload::End(uint64_t id)
{
    auto it = m_running.find(id);
    if (it == m_running.end())
        return;
    Running r = it->second;
    m_running.erase(it);
    r.fetch.finish = r.consumer->GetFinishTime();
    r.fetch.failed = r.consumer->GetStatus() == 2;
    r.fetch.stats = r.consumer->GetStats();
    r.fetch.sources = r.consumer->GetSources();
    if (m_done)
        m_done(r.fetch);
    r.consumer->Dispose();
}

} // namespace ns3
