// What the offline runner (rdtp-scenario.cc, rdtp_ns3_run) and the real-time emulator
// (rdtp-emulate.cc, rdtp_ns3_emulate) share beyond the topology: the command-line attributes
// both have, the start of a run (seeds, settle time, output directory), and the bottleneck
// lines of run.toml's [results].
#ifndef RDTP_NS3_RUN_H
#define RDTP_NS3_RUN_H

#include "rdtp-recorder.h"
#include "rdtp-topology.h"

#include "ns3/command-line.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace ns3
{

/// The attributes of a run that both runners have, on top of the topology's.
struct RunParams : TopologyParams
{
    std::string out;
    /// Scenario seconds (emulator: 0 = until a signal).
    double duration = 0.0;
    double warmup = 0.0;
    double interval = 0.1;
    double queueInterval = 0.01;
    uint32_t seed = 1;
    uint32_t run = 1;
    /// Seconds before scenario time 0 (-1 = 0 for dumbbell, 0.5 for wifi).
    double settle = -1.0;
};

enum class RunMode
{
    Offline,
    Emulate
};

/// Register Topology, Out, Duration, Warmup, Interval, QueueInterval, Seed, Run and Settle,
/// each with the help text of `mode` (the topology's own: AddTopologyArguments).
void AddRunArguments(CommandLine& cmd, RunParams& p, RunMode mode);

/// Make a panic inside the rdtp core fail the run (exit 2, "rdtp-sim: the rdtp core panicked
/// …" with the entry point, the message and the simulated time) instead of aborting the
/// process: the C ABI catches it at its boundary and calls this handler (rdtp.h,
/// rdtp_set_panic_handler). Called first by both runners.
void FailOnCorePanic();

/// Fail unless Seed > 0 (checked first, before each runner's own checks).
void CheckSeed(const RunParams& p);

/// Seed ns-3's RNG (Seed, Run), resolve Settle, put scenario time 0 at Settle and create Out.
void StartRun(RunParams& p);

/// Scenario time `s` as simulator time (Settle later).
Time AtScenario(const RunParams& p, double s);

/// `ns3_version = "3.37.0"` (run.toml [run]).
void WriteNs3Version(std::ostream& out);

/// `utilisation` and `mean_queue_delay_ms` where defined (run.toml [results]).
void WriteBottleneckResults(std::ostream& out, const WindowResults& w);

/// `queue_drops`, the MPDUs refused silently by a full WiFi queue folded in (run.toml).
void WriteQueueDrops(std::ostream& out, QueueMonitor& qmon);

/// `drops_<reason>`, `queue_max_packets`, `station_drops_<reason>` (run.toml [results]).
void WriteDropDetails(std::ostream& out, const QueueMonitor& qmon, const Net& net);

} // namespace ns3

#endif
