//! Issue 23, item 5: an address token names an IP address *and a port*.
//!
//! A host that shares the victim's IP address (behind one NAT, or a multi-user machine)
//! gets a token for its own port, then sends requests carrying it with the victim's port as
//! source. At 0036bef tokens named the IP only, so a node answered in full: 11 777× toward
//! the victim's port on loopback. Now the node answers with a Retry, within 3× of what came
//! from that port — here through a router core in front of a server core (the router
//! validates its downstreams with the same [`rdtp_proto::token::Validator`] as the server;
//! the server's own case is `server::tests::a_token_names_the_port_too`).

use std::net::SocketAddr;

use rdtp_proto::router::fib::Fib;
use rdtp_proto::router::{Router, RouterConfig};
use rdtp_proto::server::{Catalog, PatternCatalog, Server};
use rdtp_proto::wire::tlv::write_address_token;
use rdtp_proto::wire::{ByteRange, DEFAULT_HOP_LIMIT, Options, Packet, Request, RequestFlags};
use rdtp_proto::{Eid, Time};

/// The server, as the router knows it.
const UPSTREAM: &str = "10.0.0.9:7447";
/// The router's upstream socket, as the server sees it.
const ROUTER_UP: &str = "10.0.0.2:40000";
/// Two sockets of one host behind one address.
const NEIGHBOUR: &str = "192.0.2.10:5000";
const VICTIM: &str = "192.0.2.10:4000";
const UNIT: u16 = 1402;
const UNITS: u32 = 64;

fn request(eid: Eid, offset: u64, token: Option<&[u8]>) -> Vec<u8> {
    let mut opts = [0u8; 80];
    let n = write_address_token(&mut opts, token);
    let r = Request {
        flags: RequestFlags(0),
        hop_limit: DEFAULT_HOP_LIMIT,
        unit: UNIT,
        tag: 11,
        nonce: offset + 1,
        eid,
        range: ByteRange::new(offset, UNITS * u32::from(UNIT)),
        options: Options::parse(&opts[..n]).unwrap(),
    };
    let mut b = vec![0u8; r.encoded_len()];
    r.encode(&mut b).unwrap();
    b
}

/// A router with a server behind it, relayed in one instant.
struct Path {
    router: Router,
    server: Server,
    catalog: PatternCatalog,
    now: Time,
}

impl Path {
    /// Hand `dgram` from `from` to the router and relay between router and server until
    /// both are quiet; every datagram the router sent back to `from`.
    fn exchange(&mut self, from: SocketAddr, dgram: &[u8]) -> Vec<Vec<u8>> {
        let (up, router_up): (SocketAddr, SocketAddr) = (UPSTREAM.parse().unwrap(), ROUTER_UP.parse().unwrap());
        self.now += core::time::Duration::from_millis(1);
        self.router.handle_datagram(self.now, from, dgram);
        let mut back = Vec::new();
        let mut buf = vec![0u8; 70_000];
        for _ in 0..10_000 {
            let mut to_router = Vec::new();
            while let Some(t) = self.router.poll_transmit(self.now, &mut buf) {
                if t.to == up {
                    let mut reply = self.server.handle(self.now, router_up, &self.catalog, &buf[..t.len]);
                    let mut out = vec![0u8; 70_000];
                    while let Some(n) = reply.next_datagram(&mut out) {
                        to_router.push(out[..n].to_vec());
                    }
                } else if t.to == from {
                    back.push(buf[..t.len].to_vec());
                }
            }
            if to_router.is_empty() {
                return back;
            }
            for d in to_router {
                self.router.handle_datagram(self.now, up, &d);
            }
        }
        panic!("the router and the server never went quiet");
    }
}

fn token_of(d: &[u8]) -> Vec<u8> {
    match Packet::decode(d) {
        Ok(Packet::Retry(r)) => r.token.to_vec(),
        other => panic!("expected a Retry, got {other:?}"),
    }
}

#[test]
fn a_neighbours_token_from_the_victims_port_gets_a_retry_only_through_a_router() {
    let catalog = PatternCatalog::new([("obj".to_string(), 8 << 20, 1)]);
    let eid = catalog.resolve("obj").unwrap().0;
    let router =
        Router::new(RouterConfig { fib: Fib::new(Some(UPSTREAM.parse().unwrap())), ..RouterConfig::default() });
    let mut path = Path { router, server: Server::default(), catalog, now: Time::ZERO };
    let (neighbour, victim): (SocketAddr, SocketAddr) = (NEIGHBOUR.parse().unwrap(), VICTIM.parse().unwrap());

    // The neighbour validates its own port, and its token opens the content there.
    let first = path.exchange(neighbour, &request(eid, 0, None));
    let token = token_of(&first[0]);
    let own = path.exchange(neighbour, &request(eid, 0, Some(&token)));
    let data = own.iter().filter(|d| matches!(Packet::decode(d), Ok(Packet::Data(_)))).count();
    assert_eq!(data, UNITS as usize, "the token works for the port it was issued to");

    // The same token with the victim's port as source: a Retry, ≤ 3× the request.
    for offset in [0, u64::from(UNITS) * u64::from(UNIT)] {
        let spoofed = request(eid, offset, Some(&token));
        let back = path.exchange(victim, &spoofed);
        let bytes: usize = back.iter().map(Vec::len).sum();
        assert!(bytes <= 3 * spoofed.len(), "{bytes} bytes toward the victim's port for {}", spoofed.len());
        assert_eq!(back.len(), 1);
        token_of(&back[0]);
    }
}
