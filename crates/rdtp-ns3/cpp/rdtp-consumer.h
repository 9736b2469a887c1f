// RdtpConsumer: an ns-3 application that fetches one object with the real rdtp receiver.
//
// The protocol lives entirely in the Rust core behind the C ABI (rdtp.h). Moving datagrams
// and time between a UDP socket and the core is RdtpNodeApp's; this class adds the
// receiver's parts: creating it, reading its bytes and events after each step, its
// statistics. Attributes and trace sources follow the ndnSIM consumer idiom.
#ifndef RDTP_NS3_CONSUMER_H
#define RDTP_NS3_CONSUMER_H

#include "rdtp-node-app.h"

#include "ns3/address.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ns3
{

class RdtpConsumer : public RdtpNodeApp
{
  public:
    static TypeId GetTypeId();
    RdtpConsumer();
    ~RdtpConsumer() override;

    /// Receiver statistics: live while running, frozen at stop/finish.
    RdtpStats GetStats() const;
    /// 0 = running (or not started), 1 = finished and verified, 2 = failed.
    int32_t GetStatus() const;
    /// Simulation time at which the FINISHED event arrived (or -1 ns if it did not).
    Time GetFinishTime() const;
    /// Bytes read from the receiver (in order, as the application sees them).
    uint64_t GetDeliveredBytes() const;
    /// Error of the FAILED event (RDTP_ERROR_NONE if none).
    int GetError() const;
    /// Where the units came from: the core's per-source accounting (origin or a router's
    /// content store; units, bytes, RTTs), read until the application is disposed.
    std::vector<RdtpSource> GetSources() const;
    /// Informed start (seed 002) with a rate known only when the fetch starts: `source` is
    /// asked in StartApplication for the attainable payload rate in bytes/s (≤ 0: none, the
    /// controller starts normally). Overrides the InitialRate attribute.
    void SetInitialRateSource(std::function<double()> source);
    /// The rate informed start used (bytes/s), or 0 if the controller started normally.
    double GetInformedRate() const;

    /// Bytes newly read by the application.
    typedef void (*DeliveredCallback)(uint64_t bytes);
    /// One RTT sample and the smoothed RTT after it.
    typedef void (*RttSampleCallback)(Time rtt, Time srtt);
    /// Controller snapshot: window (units), pacing rate (bytes/s, negative if unpaced),
    /// aggregation count, controller state.
    typedef void (*CongestionCallback)(uint64_t cwnd,
                                       double pacingRate,
                                       uint32_t aggregation,
                                       const std::string& state);
    /// The fetch finished (all bytes arrived and matched the EID); argument = fetch duration.
    typedef void (*FinishedCallback)(Time elapsed);
    /// The fetch failed; argument = RdtpError.
    typedef void (*FailedCallback)(int error);
    /// A datagram sent to / received from the producer.
    typedef void (*PacketCallback)(Ptr<const Packet> packet);
    /// A request left: its first unit, how many units, whether they are asked for again.
    typedef void (*RequestedCallback)(uint64_t firstUnit, uint64_t units, bool retransmission);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    /// Send what the core wants sent, read bytes, drain events, re-arm the timer.
    void Service() override;
    bool Active() const override;
    void OnReceive(Ptr<const Packet> packet, const Address& from) override;
    void OnSend(Ptr<const Packet> packet, const Address& to) override;
    void Freeze();

    // Attributes
    Address m_remote;
    std::string m_objectName;
    std::string m_objectEid;
    uint64_t m_objectSize;
    std::string m_controller;
    std::string m_config;
    uint64_t m_seed;
    uint32_t m_rcvBufSize;
    double m_initialRate;
    std::function<double()> m_initialRateSource;
    double m_informedRate;

    // State
    bool m_done;
    bool m_frozen;
    Time m_startTime;
    Time m_finishTime;
    uint64_t m_delivered;
    uint64_t m_received; //!< bytes_received at the last Received trace
    int m_error;
    RdtpStats m_stats;
    std::vector<uint8_t> m_readBuf;

    // Trace sources
    TracedCallback<uint64_t> m_deliveredTrace;
    TracedCallback<uint64_t> m_receivedTrace;
    TracedCallback<Time, Time> m_rttTrace;
    TracedCallback<uint64_t, double, uint32_t, const std::string&> m_congestionTrace;
    TracedCallback<Time> m_finishedTrace;
    TracedCallback<int> m_failedTrace;
    TracedCallback<Ptr<const Packet>> m_txTrace;
    TracedCallback<Ptr<const Packet>> m_rxTrace;
    TracedCallback<uint64_t, uint64_t, bool> m_requestedTrace;
};

} // namespace ns3

#endif
