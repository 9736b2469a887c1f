//! Address tokens over real UDP on loopback (issue 23, item 5): a token names an IP address
//! and a port, so a host sharing the victim's address cannot aim a server at the victim's
//! port; a process's fetches keep their token by reusing its port when it is free.

use std::io::Read;
use std::net::UdpSocket;
use std::sync::Arc;
use std::time::Duration;

use rdtp::server::{ServeOptions, spawn};
use rdtp::{Eid, Fetch};
use rdtp_proto::server::MemoryCatalog;
use rdtp_proto::wire::{ByteRange, MAX_UNIT, Packet};

mod common;
use common::content;

fn serve(objects: Vec<(String, Vec<u8>)>) -> rdtp::server::ServerHandle {
    // Several workers, as `rdtp serve` has on a multi-core host: any of them checks tokens.
    let opts = ServeOptions { listen: Some("127.0.0.1:0".parse().unwrap()), workers: 2, ..Default::default() };
    spawn(Arc::new(MemoryCatalog::new(objects)), opts).unwrap()
}

fn request(eid: Eid, tag: u32, token: Option<&[u8]>) -> Vec<u8> {
    common::raw::request(eid, tag, ByteRange::new(0, 16 * u32::from(MAX_UNIT)), MAX_UNIT, token)
}

/// Every datagram that arrives on `sock` until it is quiet for 300 ms.
fn drain(sock: &UdpSocket) -> Vec<Vec<u8>> {
    let mut buf = vec![0u8; 65_536];
    let mut out = Vec::new();
    while let Ok(n) = sock.recv(&mut buf) {
        out.push(buf[..n].to_vec());
    }
    out
}

/// The attack: a neighbour on the victim's IP address (two sockets of 127.0.0.1)
/// uses the token it got for its port with the victim's port as source. 0036bef sent
/// ≈ 1 MiB per 89-byte request to the victim's port (11 777×); now one Retry each.
#[test]
fn a_neighbours_token_sent_from_another_port_gets_only_a_retry() {
    let data = content(16 << 20, 7);
    let eid = Eid::of(&data);
    let server = serve(vec![("big".into(), data)]);
    let neighbour = UdpSocket::bind("127.0.0.1:0").unwrap();
    let victim = UdpSocket::bind("127.0.0.1:0").unwrap();
    for s in [&neighbour, &victim] {
        s.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        s.connect(server.local_addr()).unwrap();
    }
    neighbour.send(&request(eid, 1, None)).unwrap();
    let answers = drain(&neighbour);
    let token = match answers.first().map(|d| Packet::decode(d)) {
        Some(Ok(Packet::Retry(r))) => r.token.to_vec(),
        other => panic!("expected a Retry, got {other:?}"),
    };
    neighbour.send(&request(eid, 2, Some(&token))).unwrap();
    // (The socket's buffer may not hold all 16 datagrams of 64 KiB; one shows the point.)
    let data = drain(&neighbour).iter().filter(|d| matches!(Packet::decode(d), Ok(Packet::Data(_)))).count();
    assert!(data > 0, "the token opens the content for the neighbour's own port");

    let (mut sent, mut got, mut retries) = (0, 0, 0);
    for tag in 10..20 {
        let d = request(eid, tag, Some(&token));
        victim.send(&d).unwrap();
        sent += d.len();
        for a in drain(&victim) {
            got += a.len();
            retries += usize::from(matches!(Packet::decode(&a), Ok(Packet::Retry(_))));
        }
    }
    assert_eq!(retries, 10, "each request from the victim's port is answered with a Retry");
    assert!(got <= 3 * sent, "{got} bytes toward the victim's port for {sent} sent from it");
    server.stop().unwrap();
}

/// Two fetches from one process at once: the second cannot have the first one's port, so
/// it pays one Retry; later fetches reuse a port and its token again.
#[test]
fn fetches_at_once_each_get_a_port_and_a_token() {
    let (a, b) = (content(200_000, 8), content(300_000, 9));
    let server = serve(vec![("a".into(), a.clone()), ("b".into(), b.clone())]);
    let mut first = Fetch::by_name(server.local_addr(), "a").start().unwrap();
    let mut got = Vec::new();
    first.read_to_end(&mut got).unwrap();
    assert!(got == a);
    drop(first);
    // Now two at once: the first takes the remembered port, the other needs a token.
    let mut r1 = Fetch::by_name(server.local_addr(), "a").start().unwrap();
    let mut r2 = Fetch::by_name(server.local_addr(), "b").start().unwrap();
    let (mut g1, mut g2) = (Vec::new(), Vec::new());
    r1.read_to_end(&mut g1).unwrap();
    r2.read_to_end(&mut g2).unwrap();
    assert!(g1 == a && g2 == b);
    drop((r1, r2));
    // And again one at a time: a remembered port and token, no Retry.
    let mut r3 = Fetch::by_name(server.local_addr(), "b").start().unwrap();
    let mut g3 = Vec::new();
    r3.read_to_end(&mut g3).unwrap();
    assert!(g3 == b);
    drop(r3);
    let stats = server.stop().unwrap();
    assert_eq!(stats.core.retries, 2, "the first fetch and the second of the pair pay a Retry");
}
