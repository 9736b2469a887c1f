// Seed 002's listening host in ns-3: a WiFi device's monitor trace (MonitorSnifferRx, every
// MPDU its PHY decodes, whoever it is addressed to) feeds the core's passive estimator
// (rdtp_wifi_* in rdtp.h) with the MPDU bytes and PHY rate. No estimation logic here: the
// core parses the 802.11 header and keeps the window; this file moves bytes and writes CSV.
#ifndef RDTP_NS3_WIFI_MONITOR_H
#define RDTP_NS3_WIFI_MONITOR_H

#include "rdtp.h"

#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace ns3
{

class WifiMonitor
{
  public:
    /// Listen on `dev` (a WifiNetDevice), ignoring frames its own MAC sends.
    explicit WifiMonitor(Ptr<NetDevice> dev);
    ~WifiMonitor();
    WifiMonitor(const WifiMonitor&) = delete;
    WifiMonitor& operator=(const WifiMonitor&) = delete;

    /// The estimate now for a newcomer at `newcomerPhyBps` (≤ 0: the stations' mean rate).
    RdtpWifiEstimate Estimate(double newcomerPhyBps) const;
    /// Informed start's rate (bytes/s): the model's prediction, else the N + 1 rule, else 0.
    double InformedRateBytes(double newcomerPhyBps) const;
    /// The transmitters of the window.
    std::vector<RdtpWifiStation> Stations() const;
    /// Data frames counted so far.
    uint64_t Frames() const;

  private:
    RdtpWifiEstimator* m_est;
    uint64_t m_frames = 0;
    std::vector<uint8_t> m_buf;
};

/// `wifi.csv` (the estimate every interval) and `wifi-stations.csv` (every transmitter every
/// interval) from the sniffer's monitor; `labels` names MAC addresses ("ap", "sta0", …).
class WifiTracer
{
  public:
    WifiTracer(const std::string& dir, const WifiMonitor* mon, std::map<std::string, std::string> labels,
               double interval);
    /// Schedule the rows at scenario times interval, 2·interval, … up to `end` (`zero` is
    /// scenario time 0 as a delay from now).
    void Start(Time zero, double end);
    /// The label of a MAC address (its text if unknown).
    std::string Label(const uint8_t mac[6]) const;

  private:
    void Tick();
    const WifiMonitor* m_mon;
    std::map<std::string, std::string> m_labels;
    double m_interval;
    double m_end = 0.0;
    uint64_t m_tick = 0;
    std::ofstream m_est;
    std::ofstream m_sta;
};

/// "aa:bb:cc:dd:ee:ff".
std::string MacText(const uint8_t mac[6]);

} // namespace ns3

#endif
