//! Issue 23, item 12: a router answers a malformed request it can attribute (its tag is
//! readable) with a Nack `Malformed` carrying that tag, as a server does — within 3×
//! toward an unvalidated address, with a Retry first when not even the Nack fits — and
//! forwards nothing. At 0036bef it sent a blank Nack (tag 0) when that fitted, which no
//! receiver may act on, so a fetch of an empty name waited for its timeout. (The server's
//! case is `server::tests::malformed_requests_are_answered_with_their_tag`.)

use std::net::SocketAddr;

use rdtp_proto::Time;
use rdtp_proto::router::fib::Fib;
use rdtp_proto::router::{Router, RouterConfig};
use rdtp_proto::wire::tlv::write_address_token;
use rdtp_proto::wire::{Nack, NackCode, Packet, VERSION};

const UPSTREAM: &str = "10.0.0.9:7447";
const CLIENT: &str = "192.0.2.20:4000";

/// A ResolveRequest by name, written by hand (the encoder refuses bad names).
fn resolve(name: &[u8], tag: u32, token: Option<&[u8]>) -> Vec<u8> {
    let mut opts = [0u8; 80];
    let n = write_address_token(&mut opts, token);
    let mut d = vec![b'R', b'D', VERSION, 0x04, 1, 8];
    d.extend_from_slice(&(name.len() as u16).to_be_bytes());
    d.extend_from_slice(&tag.to_be_bytes());
    d.extend_from_slice(&(n as u16).to_be_bytes());
    d.extend_from_slice(name);
    d.extend_from_slice(&opts[..n]);
    d
}

/// Everything the router sends after `d` arrives from `from`: (to, datagram).
fn exchange(router: &mut Router, now: Time, from: SocketAddr, d: &[u8]) -> Vec<(SocketAddr, Vec<u8>)> {
    router.handle_datagram(now, from, d);
    let mut buf = vec![0u8; 70_000];
    let mut out = Vec::new();
    while let Some(t) = router.poll_transmit(now, &mut buf) {
        out.push((t.to, buf[..t.len].to_vec()));
    }
    out
}

#[test]
fn a_router_answers_an_attributable_malformed_request_with_its_tag() {
    let id = rdtp_proto::NodeId::label("r1").unwrap();
    let fib = Fib::new(Some(UPSTREAM.parse().unwrap()));
    let mut router = Router::new(RouterConfig { id, fib, ..RouterConfig::default() });
    let me: SocketAddr = CLIENT.parse().unwrap();

    // An empty name without a token (14 bytes): no Nack fits 42 bytes, a Retry does.
    let bare = resolve(b"", 5, None);
    let out = exchange(&mut router, Time::ZERO, me, &bare);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].0, me);
    assert!(out[0].1.len() <= 3 * bare.len());
    let token = match Packet::decode(&out[0].1) {
        Ok(Packet::Retry(r)) if r.tag == 5 => r.token.to_vec(),
        other => panic!("expected a Retry with tag 5, got {other:?}"),
    };
    // With the token: a Nack with the tag and the reason, from the router; nothing upstream.
    let out = exchange(&mut router, Time::from_millis(1), me, &resolve(b"", 6, Some(&token)));
    assert_eq!(out.len(), 1, "{out:?}");
    let n = Nack::decode(&out[0].1).unwrap();
    assert_eq!((out[0].0, n.code, n.tag, n.detail, n.from), (me, NackCode::Malformed, 6, "empty name", id));
    // A 5 000-byte name from an address never seen: the Nack fits 3×, so at once.
    let stranger: SocketAddr = "198.51.100.1:9".parse().unwrap();
    let long = resolve(&[b'x'; 5000], 7, None);
    let out = exchange(&mut router, Time::from_millis(2), stranger, &long);
    assert_eq!(out.len(), 1, "{out:?}");
    let n = Nack::decode(&out[0].1).unwrap();
    assert_eq!((n.code, n.tag, n.detail), (NackCode::Malformed, 7, "name longer than 1024 bytes"));
    assert!(out[0].1.len() <= 3 * long.len());
}
