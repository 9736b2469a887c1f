//! Two routers that route to each other (issue 23, item 8): "a router never sends a request
//! back to the peer it came from" (`docs/PROTOCOL.md`, Routers: Loops) must hold on real
//! sockets. Each router sends everything from its listening address, the one in the other's
//! forwarding table, so a resolve, list, proof request or request that A forwards to B is
//! refused by B with `NoRoute` at once instead of bouncing until the hop limit runs out (on
//! 0036bef, where routers forwarded from an upstream socket of their own, one 44-byte resolve
//! put 55.8 kB on the loop). Each router has two workers: the refusals reach the worker that
//! forwarded the request by its tag.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use rdtp::router::{RouteOptions, RouterRuntime};
use rdtp_proto::router::RouterConfig;
use rdtp_proto::router::fib::Fib;
use rdtp_proto::wire::tlv::write_address_token;
use rdtp_proto::wire::{
    ByteRange, ListRequest, Options, Packet, ProofRequest, Query, Request, RequestFlags, ResolveRequest,
};
use rdtp_proto::{Eid, NodeId};

/// Writes a datagram into the buffer, with the address token if one is given; its length.
type Encode<'a> = &'a dyn Fn(&mut [u8], Option<&[u8]>) -> usize;

/// A router on 127.0.0.1 with two workers and no route yet.
fn router(id: &str) -> RouterRuntime {
    let config = RouterConfig { id: NodeId::label(id).unwrap(), fib: Fib::new(None), ..RouterConfig::default() };
    RouterRuntime::bind(RouteOptions { listen: Some("127.0.0.1:0".parse().unwrap()), config, workers: 2 }).unwrap()
}

/// Send what `encode` writes (given the token, if any) to `to` until something other than
/// a Retry comes back (a Retry's token is used for the next try); return that answer's
/// type, Nack code and sender id, and how many datagrams were sent.
fn ask(sock: &UdpSocket, to: SocketAddr, encode: Encode<'_>) -> (String, usize) {
    let mut token: Option<Vec<u8>> = None;
    let mut buf = vec![0u8; 65_536];
    let mut sent = 0;
    let t0 = Instant::now();
    loop {
        assert!(t0.elapsed() < Duration::from_secs(10), "no answer from {to}");
        let n = encode(&mut buf, token.as_deref());
        sock.send_to(&buf[..n], to).unwrap();
        sent += 1;
        let Ok(n) = sock.recv(&mut buf) else { continue };
        match Packet::decode(&buf[..n]) {
            Ok(Packet::Retry(r)) => token = Some(r.token.to_vec()),
            Ok(Packet::Nack(k)) => return (format!("Nack {:?} from {}", k.code, k.from), sent),
            Ok(p) => return (format!("{p:?}"), sent),
            Err(e) => panic!("undecodable answer: {e}"),
        }
    }
}

fn options<'a>(buf: &'a mut [u8; 80], token: Option<&[u8]>) -> Options<'a> {
    let n = write_address_token(buf, token);
    Options::parse(&buf[..n]).unwrap()
}

#[test]
fn two_routers_that_route_to_each_other_refuse_instead_of_bouncing() {
    let (mut a, mut b) = (router("a"), router("b"));
    let (a_addr, b_addr) = (a.local_addr(), b.local_addr());
    a.set_default_route(Some(b_addr));
    b.set_default_route(Some(a_addr));
    let (a, b) = (a.spawn().unwrap(), b.spawn().unwrap());
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let eid = Eid::of(b"nowhere");
    let hop_limit = 255; // the most a sender can set
    let resolve = |b: &mut [u8], t: Option<&[u8]>| {
        let mut o = [0u8; 80];
        ResolveRequest { hop_limit, tag: 11, query: Query::Name("videos/x"), options: options(&mut o, t) }
            .encode(b)
            .unwrap()
    };
    let list = |b: &mut [u8], t: Option<&[u8]>| {
        let mut o = [0u8; 80];
        ListRequest { hop_limit, tag: 12, cursor: 0, options: options(&mut o, t) }.encode(b).unwrap()
    };
    let proof = |b: &mut [u8], t: Option<&[u8]>| {
        let mut o = [0u8; 80];
        let flags = RequestFlags(0);
        ProofRequest { flags, hop_limit, tag: 13, eid, block: 1, depth: 2, options: options(&mut o, t) }
            .encode(b)
            .unwrap()
    };
    let request = |b: &mut [u8], t: Option<&[u8]>| {
        let mut o = [0u8; 80];
        let (flags, range) = (RequestFlags(0), ByteRange::new(0, 4 * 1402));
        Request { flags, hop_limit, unit: 1402, tag: 14, nonce: 5, eid, range, options: options(&mut o, t) }
            .encode(b)
            .unwrap()
    };
    let mut sent = 0;
    for (what, encode) in
        [("resolve", &resolve as Encode<'_>), ("list", &list), ("proof request", &proof), ("request", &request)]
    {
        let (answer, n) = ask(&sock, a_addr, encode);
        assert_eq!(answer, "Nack NoRoute from b", "{what}");
        sent += n;
    }
    let (sa, sb) = (a.stop().unwrap(), b.stop().unwrap());
    // Received: the client's datagrams by A; per query A → B and B's NoRoute back, and a
    // Retry from B with A's resend for each of A's workers the first time it forwards (the
    // workers keep B's token each). On 0036bef: hundreds, until the hop limit ran out.
    let exchanged = sa.socket.datagrams_in + sb.socket.datagrams_in;
    eprintln!("{sent} datagrams sent to A, {exchanged} received by A and B");
    assert!(exchanged <= sent as u64 + 2 * (4 + 2), "{exchanged} datagrams received for {sent} sent: {sa:?} {sb:?}");
    assert_eq!((sa.router.hop_limit, sb.router.hop_limit), (0, 0));
    assert_eq!(sb.router.no_route, 4, "B refuses each of the four at once");
    assert_eq!(sa.router.unsolicited + sb.router.unsolicited, 0, "every answer reached the worker that asked");
}
