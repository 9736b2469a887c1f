// Caching routers on a built topology: an RdtpRouter on each node --Routers names, with its
// router spec (passed to the core unchanged) and its routes, and the address one node is reached at from another
// (for routes and for rdtp consumers' first hops). Which router is whose next hop, and which
// router a consumer sends to first, is decided once in Rust (crates/rdtp-scenario/src/
// routing.rs) and arrives here by node name; this file turns names into addresses.
#ifndef RDTP_NS3_PLACEMENT_H
#define RDTP_NS3_PLACEMENT_H

#include "rdtp-router.h"
#include "rdtp-topology.h"

#include "ns3/inet-socket-address.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ns3
{

/// A router installed on a named node.
struct PlacedRouter
{
    std::string node;
    Ptr<RdtpRouter> app;
    /// Its routes: name prefix ("" = the default route) and next hop.
    std::vector<std::pair<std::string, InetSocketAddress>> routes;
    /// The same routes with the next hop's node name.
    std::vector<std::pair<std::string, std::string>> hops;
};

/// Route the EID `eidHex` of an object of server `server` at every router the way it routes
/// the server's name prefix (or by its default route): requests that skip resolution (a
/// workload's known objects) then find their way without the routers learning the EID.
void RouteObject(const std::vector<PlacedRouter>& routers, const std::string& server, const std::string& eidHex);

/// Undo the %XX escapes of a field of the runner's lists: a spec's own `,` and `;` (and `%`)
/// arrive as %2C, %3B and %25 (rdtp-scenario's `escape`).
std::string PercentDecode(const std::string& v);

/// Node `name` of `net` (Fail if it has none).
Ptr<Node> NamedNode(const Net& net, const std::string& name);

/// The address `to` is reached at from `from`: `to`'s source address on its route back to
/// `from`. Datagrams `from` sends there arrive at `to`, and `to`'s answers carry it as their
/// source, so a connected socket at `from` (RdtpConsumer's) and a router core, which matches
/// answers to the peer it asked, both accept them. Call after the routing tables exist.
Ipv4Address AddressFacing(Ptr<Node> to, Ptr<Node> from);

/// Install the routers of `spec` — "node=r1,id=<u64>,config=<router spec, %-escaped>,
/// [verify=0,]up=<node>,route=<prefix>:<node>;…" (RouterSpec::sim_spec), each with its spec
/// handed to the core unchanged (RdtpRouter's Config) — each on UDP `port`, sending to `port` of its next hops, seeded by `seed(node)`, started
/// at `start`.
std::vector<PlacedRouter> InstallRouters(const Net& net,
                                         const std::string& spec,
                                         uint16_t port,
                                         const std::function<uint64_t(const std::string&)>& seed,
                                         Time start);

} // namespace ns3

#endif
