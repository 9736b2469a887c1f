// RdtpWorkload: a reusable ns-3 application that fetches objects of a catalogue on one node
// as a Poisson process of requests, each for an object drawn from a Zipf(alpha) popularity
// (seed 003 §III; Icarus' and ndnSIM's ConsumerZipfMandelbrot workloads), any number of
// fetches at once, and reports each fetch when it ends (flow completion time, what the
// receiver counted, where its units came from).
//
// Each fetch is an RdtpConsumer of its own (its own UDP socket and receiver core), started
// without a resolution round trip (the catalogue gives every object's EID and size) and
// disposed of when it ends: no protocol logic here, only arrivals, draws and bookkeeping.
#ifndef RDTP_NS3_WORKLOAD_H
#define RDTP_NS3_WORKLOAD_H

#include "rdtp-consumer.h"
#include "rdtp.h"

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/inet-socket-address.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ns3
{

/// One object of the catalogue, in popularity order (the first is Zipf rank 1).
struct WorkloadObject
{
    std::string name;
    /// EID in hex (64 digits) and size in bytes.
    std::string eid;
    uint64_t size = 0;
    /// Where its producer is (the server node's name), and where fetches of it send their
    /// requests first (the first caching router on the way, or the producer).
    std::string server;
    InetSocketAddress firstHop = InetSocketAddress(Ipv4Address::GetAny(), 0);
};

/// One fetch, as reported when it ends (or when the workload stops).
struct WorkloadFetch
{
    uint64_t index = 0; // fetches of this workload, from 0
    uint32_t rank = 0;  // Zipf rank of the object, from 1
    const WorkloadObject* object = nullptr;
    Time start;
    /// When the last byte arrived and matched the EID; negative if it did not.
    Time finish = NanoSeconds(-1);
    bool failed = false;
    uint64_t bytes = 0;
    RdtpStats stats{};
    std::vector<RdtpSource> sources;
};

class RdtpWorkload : public Application
{
  public:
    static TypeId GetTypeId();
    RdtpWorkload();
    ~RdtpWorkload() override;

    /// The catalogue, most popular first. Set before the application starts.
    void SetCatalogue(std::vector<WorkloadObject> objects);
    /// Called for every fetch when it finishes, fails, or is cut short by the stop time.
    void SetFetchDone(std::function<void(const WorkloadFetch&)> done);
    /// Fetches running now.
    size_t Active() const;
    /// The catalogue, most popular first.
    const std::vector<WorkloadObject>& Catalogue() const;
    /// Report every fetch still running as unfinished and stop them (what stopping the
    /// application does; for a simulation that ends before the stop time's events run).
    void Flush();

    typedef void (*DeliveredCallback)(uint64_t bytes);

  protected:
    void DoDispose() override;

  private:
    struct Running
    {
        Ptr<RdtpConsumer> consumer;
        WorkloadFetch fetch;
    };

    void StartApplication() override;
    void StopApplication() override;
    void ScheduleNext();
    void StartFetch();
    /// Fetch `id` ended (`ok`: finished and verified): report it, dispose of its consumer.
    void End(uint64_t id);

    // Attributes
    double m_rate;
    double m_alpha;
    std::string m_controller;
    std::string m_config;
    uint64_t m_seed;
    int64_t m_stream;
    Time m_lastStart;

    std::vector<WorkloadObject> m_objects;
    std::function<void(const WorkloadFetch&)> m_done;
    Ptr<ExponentialRandomVariable> m_gap;
    Ptr<ZipfRandomVariable> m_zipf;
    EventId m_next;
    uint64_t m_count;
    std::map<uint64_t, Running> m_running;
    TracedCallback<uint64_t> m_deliveredTrace;
};

} // namespace ns3

#endif
