// What rdtp_ns3_run and rdtp_ns3_emulate share: see rdtp-run.h.
#include "rdtp-run.h"

#include "rdtp.h"

#include "ns3/core-module.h"

#include <cmath>
#include <filesystem>
#include <string>

namespace ns3
{

void
AddRunArguments(CommandLine& cmd, RunParams& p, RunMode mode)
{
    const bool emulate = mode == RunMode::Emulate;
    cmd.AddValue("Topology", emulate ? "dumbbell or wifi" : "dumbbell, wifi or graph", p.topology);
    cmd.AddValue("Out", "Output directory", p.out);
    cmd.AddValue("Duration",
                 emulate ? "Seconds of scenario time to run (0 = until SIGTERM/SIGINT, at most 24 h)"
                         : "Simulated seconds",
                 p.duration);
    cmd.AddValue("Warmup",
                 emulate ? "Seconds excluded from the windowed results"
                         : "Seconds excluded from the steady-state numbers",
                 p.warmup);
    cmd.AddValue("Interval",
                 emulate ? "timeseries.csv and lag.csv interval, seconds" : "timeseries.csv interval, seconds",
                 p.interval);
    cmd.AddValue("QueueInterval", "queue.csv sampling interval, seconds", p.queueInterval);
    cmd.AddValue("Seed",
                 emulate ? "RngSeedManager seed" : "RngSeedManager seed (also seeds rdtp receivers and objects)",
                 p.seed);
    cmd.AddValue("Run", "RngSeedManager run number", p.run);
    cmd.AddValue("Settle",
                 emulate ? "Seconds before scenario time 0 (READY) (-1 = 0 for dumbbell, 0.5 for wifi)"
                         : "Seconds the network runs before scenario time 0 (-1 = 0 for dumbbell, 0.5 for "
                           "wifi, so stations are associated when flows start)",
                 p.settle);
}

void
FailOnCorePanic()
{
    rdtp_set_panic_handler([](const char* message) {
        Fail(std::string("the rdtp core panicked at ") + std::to_string(Simulator::Now().GetSeconds()) +
             " s simulated (" + message + "); this run has no results");
    });
}

void
CheckSeed(const RunParams& p)
{
    if (p.seed == 0)
        Fail("Seed must be > 0");
}

void
StartRun(RunParams& p)
{
    RngSeedManager::SetSeed(p.seed);
    RngSeedManager::SetRun(p.run);
    if (p.settle < 0)
        p.settle = p.topology == "wifi" ? 0.5 : 0.0;
    SetScenarioOrigin(p.settle);
    std::filesystem::create_directories(p.out);
}

Time
AtScenario(const RunParams& p, double s)
{
    return Seconds(p.settle + s);
}

void
WriteNs3Version(std::ostream& out)
{
    // build.rs defines RDTP_NS3_VERSION from the installation it compiles against (the
    // PyPI wheel has no version.h).
    out << "ns3_version = \"" << RDTP_NS3_VERSION << "\"\n";
}

void
WriteBottleneckResults(std::ostream& out, const WindowResults& w)
{
    if (!std::isnan(w.utilisation))
        out << "utilisation = " << Fmt(w.utilisation, 6) << "\n";
    if (!std::isnan(w.meanQueueDelayMs))
        out << "mean_queue_delay_ms = " << Fmt(w.meanQueueDelayMs, 6) << "\n";
}

void
WriteQueueDrops(std::ostream& out, QueueMonitor& qmon)
{
    if (qmon.silentDrops)
    {
        const uint64_t silent = qmon.silentDrops();
        qmon.drops += silent;
        if (silent > 0)
            qmon.dropReasons["queue_full_untraced"] = silent;
    }
    out << "queue_drops = " << qmon.drops << "\n";
}

void
WriteDropDetails(std::ostream& out, const QueueMonitor& qmon, const Net& net)
{
    for (const auto& [reason, n] : qmon.dropReasons)
        out << "drops_" << reason << " = " << n << "\n";
    out << "queue_max_packets = " << qmon.maxPackets << "\n";
    for (const auto& [reason, n] : *net.stationDrops)
        out << "station_drops_" << reason << " = " << n << "\n";
}

} // namespace ns3
