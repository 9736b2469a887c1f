// RdtpProducer: an ns-3 application around the stateless rdtp server core.
//
// RdtpNodeApp moves the datagrams: every one received on the UDP port goes to the server
// node, every reply back to the datagram's source. This class adds the server's parts: its
// objects, node id and address validation, and its counters. It keeps no per-client state.
#ifndef RDTP_NS3_PRODUCER_H
#define RDTP_NS3_PRODUCER_H

#include "rdtp-node-app.h"

#include "ns3/address.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/// The 32 bytes of an EID written as 64 hex digits; false if `hex` is not that.
bool HexToEid(const std::string& hex, uint8_t eid[32]);

class RdtpProducer : public RdtpNodeApp
{
  public:
    static TypeId GetTypeId();
    RdtpProducer();
    ~RdtpProducer() override;

    /// The server's aggregate counters.
    RdtpServerStats GetServerStats() const;
    /// The EID (hex) and size of object `name`, as the server would resolve it (creates the
    /// server from the Objects attribute if it was not yet). False if it has no such object.
    bool Resolve(const std::string& name, std::string& eidHex, uint64_t& size);
    /// The whole object with EID `eidHex` (`size` bytes) into `out`, to warm caches with
    /// (creates the server like Resolve). False if it has no such object.
    bool Read(const std::string& eidHex, uint64_t size, std::vector<uint8_t>& out);

    /// A datagram received from / sent to a consumer, with the consumer's address.
    typedef void (*PacketAddressCallback)(Ptr<const Packet> packet, const Address& peer);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void OnReceive(Ptr<const Packet> packet, const Address& from) override;
    void OnSend(Ptr<const Packet> packet, const Address& to) override;
    void CreateServer();

    uint16_t m_port;
    std::string m_objects;
    std::string m_label;
    bool m_validation;
    uint32_t m_rcvBufSize;

    TracedCallback<Ptr<const Packet>, const Address&> m_rxTrace;
    TracedCallback<Ptr<const Packet>, const Address&> m_txTrace;
};

} // namespace ns3

#endif
