// Where packets go missing: an optional count, per node and device, of what every layer
// below the applications sent, received and dropped (`--DropTrace=1`, `drops.csv`). Off by
// default: without it nothing is connected and no other output changes.
//
// It counts ns-3's own trace sources only — 802.11 MAC (MacTx, MacTxDrop, MacRx, MacRxDrop,
// AckedMpdu, NAckedMpdu, DroppedMpdu by reason; the AC_BE queue's Enqueue, Drop, Expired),
// 802.11 PHY (PhyTxDrop, PhyRxDrop by reason), point-to-point devices (MacTx, MacTxDrop,
// MacRx, PhyTxDrop, PhyRxDrop; the DropTail queue's Drop) and IPv4 (Tx and Rx per interface,
// SendOutgoing and LocalDeliver split by size, Drop by reason) — so that hop-by-hop
// differences (sent here, not received there) locate a loss. It must not draw randomness,
// schedule events or touch a packet: the run with it is the run without it.
#ifndef RDTP_NS3_DROP_TRACE_H
#define RDTP_NS3_DROP_TRACE_H

#include "rdtp-topology.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace ns3
{

/// Counters keyed by (node, device or interface, layer, event, detail).
class DropTrace
{
  public:
    /// Connect to every WiFi and point-to-point device and every IPv4 stack of `net`'s
    /// nodes (named as the scenario names them: server, ap, r1…, sta0…).
    void Attach(const Net& net);
    /// Write `dir/drops.csv`: `node,device,layer,event,detail,count`, sorted.
    void Write(const std::string& dir) const;

  private:
    using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;
    std::shared_ptr<std::map<Key, uint64_t>> m_counts = std::make_shared<std::map<Key, uint64_t>>();
};

} // namespace ns3

#endif
