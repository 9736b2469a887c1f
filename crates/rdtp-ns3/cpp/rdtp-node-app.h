// RdtpNodeApp: the one loop every rdtp ns-3 application runs around its core (an RdtpNode of
// the C ABI: receiver, server or router; rdtp_proto::Node's call contract).
//
// It owns the node and its UDP socket: every datagram the socket receives goes to
// rdtp_node_handle_datagram with its source, then Service() sends everything
// rdtp_node_poll_transmit hands out to its destination and keeps one Simulator event armed at
// rdtp_node_poll_timeout, which calls rdtp_node_handle_timeout. RdtpConsumer, RdtpProducer
// and RdtpRouter derive from it and add only their kind's parts (attributes, traces, what to
// read from the core after each step). No protocol logic here, and no per-kind copy of this
// loop elsewhere.
#ifndef RDTP_NS3_NODE_APP_H
#define RDTP_NS3_NODE_APP_H

#include "rdtp.h"

#include "ns3/address.h"
#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/inet-socket-address.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/socket.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/// An ns-3 IPv4 socket address as the C ABI's, and back.
RdtpAddr ToRdtp(const InetSocketAddress& a);
InetSocketAddress FromRdtp(const RdtpAddr& a);

class RdtpNodeApp : public Application
{
  public:
    static TypeId GetTypeId();
    ~RdtpNodeApp() override;

  protected:
    RdtpNodeApp();
    /// Cancels the timer, drops the socket, frees the node.
    void DoDispose() override;

    /// Open the UDP socket on `port` (0: any free one) with a receive buffer of `rcvBufSize`
    /// bytes; from now on what it receives goes to the node. False if it cannot bind.
    bool OpenSocket(uint16_t port, uint32_t rcvBufSize);
    /// Stop receiving and close the socket (if open).
    void CloseSocket();
    /// After the node took a datagram or a timeout: Transmit(), then ArmTimer().
    virtual void Service();
    /// Send every datagram the node has for now to its destination.
    void Transmit();
    /// Keep the one timer at the node's poll_timeout (none: cancelled).
    void ArmTimer();
    void CancelTimer();
    /// Whether datagrams and timeouts still reach the node (a finished consumer stops).
    virtual bool Active() const;
    /// A datagram from `from` is about to go to the node / to the network (for traces).
    virtual void OnReceive(Ptr<const Packet> packet, const Address& from);
    virtual void OnSend(Ptr<const Packet> packet, const Address& to);

    /// The core (null until the derived application creates it); freed here.
    RdtpNode* m_core;
    Ptr<Socket> m_socket;

  private:
    void HandleRead(Ptr<Socket> socket);
    void HandleTimer();

    EventId m_timer;
    Time m_timerAt;
    std::vector<uint8_t> m_rxBuf;
    std::vector<uint8_t> m_txBuf;
};

} // namespace ns3

#endif
