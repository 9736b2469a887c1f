// See rdtp-wifi-monitor.h.
#include "rdtp-wifi-monitor.h"

#include "rdtp-recorder.h"
#include "rdtp-run.h"
#include "rdtp-topology.h"

#include "ns3/simulator.h"
#include "ns3/wifi-module.h"

#include <cstdio>

namespace ns3
{

std::string
MacText(const uint8_t mac[6])
{
    char s[18];
    std::snprintf(s, sizeof s, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
    return s;
}

WifiMonitor::WifiMonitor(Ptr<NetDevice> dev)
    : m_est(rdtp_wifi_estimator_new(0, 0.0, nullptr))
{
    Ptr<WifiNetDevice> wdev = DynamicCast<WifiNetDevice>(dev);
    if (!wdev || !m_est)
        Fail("WifiMonitor: not a WiFi device, or the estimator could not be created");
    const Mac48Address own = Mac48Address::ConvertFrom(wdev->GetAddress());
    Ptr<WifiPhy> phy = wdev->GetPhy();
    Must(phy->TraceConnectWithoutContext(
             "MonitorSnifferRx",
             Callback<void, Ptr<const Packet>, uint16_t, WifiTxVector, MpduInfo, SignalNoiseDbm, uint16_t>(
                 [this, own](Ptr<const Packet> pk, uint16_t, WifiTxVector tx, MpduInfo, SignalNoiseDbm, uint16_t) {
                     const uint32_t len = pk->GetSize();
                     m_buf.resize(len);
                     pk->CopyData(m_buf.data(), len);
                     // Frames this node sent itself are not contenders (its own MPDUs are
                     // not reported here anyway: a PHY does not receive while sending).
                     uint8_t ta[6];
                     own.CopyTo(ta);
                     if (len >= 16 && std::equal(ta, ta + 6, m_buf.data() + 10))
                         return;
                     const double rate = static_cast<double>(tx.GetMode().GetDataRate(tx));
                     // ns-3's MPDUs carry the FCS (WifiMacTrailer), as radiotap's FCS flag says.
                     if (rdtp_wifi_observe_mpdu(m_est, Simulator::Now().GetNanoSeconds(), m_buf.data(), len, len,
                                                true, rate))
                         m_frames++;
                 })),
         "WifiPhy MonitorSnifferRx");
}

WifiMonitor::~WifiMonitor()
{
    rdtp_wifi_estimator_free(m_est);
}

RdtpWifiEstimate
WifiMonitor::Estimate(double newcomerPhyBps) const
{
    RdtpWifiEstimate e{};
    rdtp_wifi_estimate(m_est, Simulator::Now().GetNanoSeconds(), newcomerPhyBps, &e);
    return e;
}

double
WifiMonitor::InformedRateBytes(double newcomerPhyBps) const
{
    const RdtpWifiEstimate e = Estimate(newcomerPhyBps);
    if (e.has_model && e.model_bps > 0)
        return e.model_bps / 8.0;
    if (e.has_n_plus_one && e.n_plus_one_bps > 0)
        return e.n_plus_one_bps / 8.0;
    return 0.0;
}

std::vector<RdtpWifiStation>
WifiMonitor::Stations() const
{
    const uint64_t now = Simulator::Now().GetNanoSeconds();
    std::vector<RdtpWifiStation> out(rdtp_wifi_stations(m_est, now, nullptr, 0));
    rdtp_wifi_stations(m_est, now, out.data(), out.size());
    return out;
}

uint64_t
WifiMonitor::Frames() const
{
    return m_frames;
}

WifiTracer::WifiTracer(const std::string& dir,
                       const WifiMonitor* mon,
                       std::map<std::string, std::string> labels,
                       double interval)
    : m_mon(mon),
      m_labels(std::move(labels)),
      m_interval(interval),
      m_est(dir + "/wifi.csv"),
      m_sta(dir + "/wifi-stations.csv")
{
    m_est << "time_s,n_active,total_mbps,busy,n_plus_one_mbps,model_mbps,anomaly_mbps,airtime_share_mbps\n";
    m_sta << "time_s,station,mac,active,throughput_mbps,phy_mbps,airtime_share,frames,retries\n";
}

std::string
WifiTracer::Label(const uint8_t mac[6]) const
{
    const std::string text = MacText(mac);
    auto it = m_labels.find(text);
    return it == m_labels.end() ? text : it->second;
}

void
WifiTracer::Start(Time zero, double end)
{
    m_end = end;
    Simulator::Schedule(zero, [this]() { Tick(); });
}

void
WifiTracer::Tick()
{
    const double t = ScenarioNow();
    if (m_tick > 0)
    {
        const RdtpWifiEstimate e = m_mon->Estimate(0.0);
        m_est << Fmt(t, 3) << "," << e.n_active << "," << Fmt(e.total_bps / 1e6, 4) << "," << Fmt(e.busy, 4) << ","
              << (e.has_n_plus_one ? Fmt(e.n_plus_one_bps / 1e6, 4) : "") << ","
              << (e.has_model ? Fmt(e.model_bps / 1e6, 4) : "") << "," << Fmt(e.anomaly_bps / 1e6, 4) << ","
              << Fmt(e.airtime_share_bps / 1e6, 4) << "\n";
        for (const RdtpWifiStation& s : m_mon->Stations())
        {
            m_sta << Fmt(t, 3) << "," << Label(s.mac) << "," << MacText(s.mac) << "," << (s.active ? 1 : 0) << ","
                  << Fmt(s.throughput_bps / 1e6, 4) << "," << Fmt(s.phy_rate_bps / 1e6, 1) << ","
                  << Fmt(s.airtime_share, 4) << "," << s.frames << "," << s.retries << "\n";
        }
    }
    m_tick++;
    if (t + m_interval <= m_end + 1e-9)
        Simulator::Schedule(Seconds(m_interval), [this]() { Tick(); });
}

} // namespace ns3
