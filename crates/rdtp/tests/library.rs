//! The library API end to end on loopback: an in-process server on a `MemoryCatalog`,
//! read back through `FetchReader` (`std::io::Read`) with each controller.

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use rdtp::server::{ServeOptions, spawn};
use rdtp::{CcConfig, Eid, Error, Fetch};
use rdtp_proto::cc::fixed::FixedConfig;
use rdtp_proto::server::MemoryCatalog;

mod common;
use common::content;

fn serve(objects: Vec<(String, Vec<u8>)>) -> rdtp::server::ServerHandle {
    let opts = ServeOptions { listen: Some("127.0.0.1:0".parse().unwrap()), ..Default::default() };
    spawn(Arc::new(MemoryCatalog::new(objects)), opts).unwrap()
}

#[test]
fn reads_byte_exact_with_every_controller() {
    let data = content(3 << 20, 1);
    let server = serve(vec![("obj".into(), data.clone()), ("small".into(), b"tiny".to_vec())]);
    let ccs = [
        ("bbr", CcConfig::from_name("bbr").unwrap()),
        ("bbr-wifi", CcConfig::from_name("bbr-wifi").unwrap()),
        ("aimd", CcConfig::from_name("aimd").unwrap()),
        ("fixed", CcConfig::new(FixedConfig { window: 32 })),
    ];
    for (name, cc) in ccs {
        let mut r = Fetch::by_name(server.local_addr(), "obj").cc(cc).start().unwrap();
        let mut got = Vec::new();
        // Small reads exercise the receive-window wake-ups.
        let mut buf = [0u8; 7000];
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        assert!(got == data, "{name}: content differs");
        assert!(r.is_finished());
        let s = r.summary();
        assert_eq!(s.cc, name);
        assert_eq!(s.size, Some(data.len() as u64));
        assert_eq!(s.eid, Some(Eid::of(&data).to_hex()));
        assert_eq!(s.bytes_received, data.len() as u64);
        assert!(s.completed && s.goodput_bps > 0.0);
    }
    // By EID, with a small receive window and a non-default unit.
    let mut r = Fetch::by_eid(server.local_addr(), Eid::of(&data)).unit(1000).recv_window(64 << 10).start().unwrap();
    let mut got = Vec::new();
    r.read_to_end(&mut got).unwrap();
    assert!(got == data);
    assert_eq!(r.name(), "obj");
    // Resolution is visible before any byte is read.
    let r = Fetch::by_name(server.local_addr(), "obj").start().unwrap();
    assert_eq!(r.wait_resolved().unwrap(), (Eid::of(&data), data.len() as u64));
    assert_eq!(r.size(), Some(data.len() as u64));
    drop(r);
    // Tiny object.
    let mut r = Fetch::by_name(server.local_addr(), "small").start().unwrap();
    let mut got = Vec::new();
    r.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"tiny");
    let stats = server.stop().unwrap();
    assert!(stats.core.data_packets > 0);
}

#[test]
fn not_found_and_unreachable() {
    let server = serve(vec![("a".into(), b"a".to_vec())]);
    let mut r = Fetch::by_name(server.local_addr(), "nope").start().unwrap();
    let e = r.read(&mut [0u8; 16]).unwrap_err();
    assert_eq!(Error::from_io(&e).map(Error::exit_code), Some(3), "{e}");
    drop(server);

    // Nothing listens on this port any more: ICMP port unreachable. An ICMP
    // error is unauthenticated (anyone can forge one), so the fetch does not
    // give up on it at once; it keeps trying until the idle timeout and then
    // reports the ICMP error rather than a bare timeout.
    let addr = {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap()
    };
    let mut r = Fetch::by_name(addr, "x").idle_timeout(Duration::from_secs(1)).start().unwrap();
    let e = r.read(&mut [0u8; 16]).unwrap_err();
    assert_eq!(Error::from_io(&e).map(Error::exit_code), Some(6), "{e}");
    assert!(e.to_string().to_lowercase().contains("refused"), "{e}");
}

#[test]
fn drop_mid_transfer_stops_cleanly() {
    let data = content(8 << 20, 2);
    let server = serve(vec![("big".into(), data)]);
    let mut r = Fetch::by_name(server.local_addr(), "big").recv_window(1 << 20).start().unwrap();
    let mut buf = [0u8; 4096];
    let n = r.read(&mut buf).unwrap();
    assert!(n > 0);
    drop(r); // must not hang
    server.stop().unwrap();
}

/// Issue 11: a request from an address the server has not validated — what a spoofed
/// datagram is — gets a Retry of at most 3× its bytes, however much it asks for.
#[test]
fn an_unvalidated_source_gets_at_most_three_times_its_bytes() {
    use rdtp_proto::wire::{ByteRange, DEFAULT_HOP_LIMIT, MAX_UNIT, Options, Packet, Request, RequestFlags};
    let data = content(16 << 20, 3);
    let eid = Eid::of(&data);
    let server = serve(vec![("big".into(), data)]);
    let victim = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    victim.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let mut sent = 0;
    let mut buf = vec![0u8; 65_536];
    for (tag, unit) in [(1u32, MAX_UNIT), (2, 1402)] {
        let r = Request {
            flags: RequestFlags(0),
            hop_limit: DEFAULT_HOP_LIMIT,
            unit,
            tag,
            nonce: u64::from(tag),
            eid,
            range: ByteRange::new(0, 256 * u32::from(unit)),
            options: Options::EMPTY,
        };
        let n = r.encode(&mut buf).unwrap();
        victim.send_to(&buf[..n], server.local_addr()).unwrap();
        sent += n;
    }
    let (mut got, mut retries) = (0, 0);
    while let Ok(n) = victim.recv(&mut buf) {
        got += n;
        retries += usize::from(matches!(Packet::decode(&buf[..n]), Ok(Packet::Retry(_))));
    }
    assert_eq!(retries, 2, "each request is answered with a Retry");
    assert!(got <= 3 * sent, "{got} bytes back for {sent} sent");
    server.stop().unwrap();
}

/// Tokens are kept across fetches: the second fetch from this process pays no Retry.
#[test]
fn a_second_fetch_reuses_the_address_token() {
    let server = serve(vec![("a".into(), content(100_000, 4)), ("b".into(), content(50_000, 5))]);
    for name in ["a", "b", "a"] {
        let mut r = Fetch::by_name(server.local_addr(), name).start().unwrap();
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
    }
    let stats = server.stop().unwrap();
    assert_eq!(stats.core.retries, 1, "only the first fetch is refused");
}
