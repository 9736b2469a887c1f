// Caching routers on a built topology: see rdtp-placement.h.
#include "rdtp-placement.h"

#include "ns3/internet-module.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <cctype>
#include <set>

namespace ns3
{

std::string
PercentDecode(const std::string& v)
{
    std::string out;
    for (size_t i = 0; i < v.size(); i++)
    {
        if (v[i] == '%' && i + 2 < v.size() && std::isxdigit(static_cast<unsigned char>(v[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(v[i + 2])))
        {
            out += static_cast<char>(std::stoi(v.substr(i + 1, 2), nullptr, 16));
            i += 2;
        }
        else
        {
            out += v[i];
        }
    }
    return out;
}

Ptr<Node>
NamedNode(const Net& net, const std::string& name)
{
    auto it = net.named.find(name);
    if (it == net.named.end())
        Fail("the topology has no node '" + name + "'");
    return it->second;
}

/// `node`'s source address on its route to `dst`.
static Ipv4Address
SourceTowards(Ptr<Node> node, Ipv4Address dst)
{
    Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
    Ipv4Header header;
    header.SetDestination(dst);
    header.SetProtocol(UdpL4Protocol::PROT_NUMBER);
    Socket::SocketErrno err;
    Ptr<Ipv4Route> route = ipv4->GetRoutingProtocol()->RouteOutput(nullptr, header, nullptr, err);
    if (!route)
        Fail("no route from node " + std::to_string(node->GetId()) + " to the next hop");
    return route->GetSource();
}

Ipv4Address
AddressFacing(Ptr<Node> to, Ptr<Node> from)
{
    Ptr<Ipv4> ipv4 = to->GetObject<Ipv4>();
    if (ipv4->GetNInterfaces() < 2)
        Fail("node " + std::to_string(to->GetId()) + " has no address");
    const Ipv4Address fromAddr = SourceTowards(from, ipv4->GetAddress(1, 0).GetLocal());
    const Ipv4Address toAddr = SourceTowards(to, fromAddr);
    // Both ends must see the same pair, or answers would not match what was asked.
    if (SourceTowards(from, toAddr) != fromAddr)
        Fail("asymmetric routes between nodes " + std::to_string(from->GetId()) + " and " +
             std::to_string(to->GetId()));
    return toAddr;
}

/// One router's fields onto its application — its node id, its spec (`config`, handed to the
/// core unchanged) and the unverified baseline — and its routes into `routes` (prefix, node;
/// an empty prefix is the default route).
static void
Configure(Ptr<RdtpRouter> r,
          const std::string& item,
          std::string& node,
          std::vector<std::pair<std::string, std::string>>& routes)
{
    for (const auto& [k, v] : KeyValues(item))
    {
        if (k == "node")
            node = v;
        else if (k == "id")
            r->SetAttribute("NodeId", UintegerValue(std::stoull(v)));
        else if (k == "config")
            r->SetAttribute("Config", StringValue(PercentDecode(v)));
        else if (k == "verify")
            r->SetAttribute("Verify", BooleanValue(v != "0"));
        else if (k == "up")
            routes.emplace_back("", v);
        else if (k == "route" && v.find(':') != std::string::npos)
            routes.emplace_back(v.substr(0, v.find(':')), v.substr(v.find(':') + 1));
        else
            Fail("bad router field '" + k + "=" + v + "'");
    }
    if (node.empty())
        Fail("a router without node= in Routers");
}

std::vector<PlacedRouter>
InstallRouters(const Net& net,
               const std::string& spec,
               uint16_t port,
               const std::function<uint64_t(const std::string&)>& seed,
               Time start)
{
    std::vector<PlacedRouter> placed;
    for (const auto& item : Split(spec, ';'))
    {
        Ptr<RdtpRouter> r = CreateObject<RdtpRouter>();
        std::string node;
        std::vector<std::pair<std::string, std::string>> routes;
        std::vector<std::pair<std::string, InetSocketAddress>> resolved;
        Configure(r, item, node, routes);
        Ptr<Node> at = NamedNode(net, node);
        r->SetAttribute("Label", StringValue(node.size() <= 8 ? node : "router"));
        r->SetAttribute("Port", UintegerValue(port));
        r->SetAttribute("Seed", UintegerValue(seed(node)));
        std::set<std::string> routed;
        for (const auto& [prefix, hop] : routes)
        {
            const InetSocketAddress next(AddressFacing(NamedNode(net, hop), at), port);
            // A route named again: another next hop of it (RouterSpec's next_hops). The core's
            // name prefixes keep one next hop, so theirs serve the object routes RouteObject adds.
            if (!routed.insert(prefix).second)
            {
                if (prefix.empty())
                    r->AddNextHop(prefix, next);
            }
            else if (prefix.empty())
                r->SetDefaultRoute(next);
            else
                r->AddRoute(prefix, next);
            resolved.emplace_back(prefix, next);
        }
        at->AddApplication(r);
        r->SetStartTime(start);
        placed.push_back({node, r, resolved, routes});
    }
    return placed;
}

void
RouteObject(const std::vector<PlacedRouter>& routers, const std::string& server, const std::string& eidHex)
{
    for (const auto& r : routers)
    {
        bool first = true;
        for (const auto& [prefix, next] : r.routes)
            if (prefix == server)
            {
                if (first)
                    r.app->AddRoute(eidHex, next);
                else
                    r.app->AddNextHop(eidHex, next);
                first = false;
            }
    }
}

} // namespace ns3
