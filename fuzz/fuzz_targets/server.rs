//! Any datagram from an address the server never validated: no panic, and never more than
//! 3× its size back (RFC 9000 §8). The first byte picks a catalogue object's EID to splice
//! in at offset 12 so the fuzzer reaches the Data-sending path.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rdtp_proto::Time;
use rdtp_proto::server::{Catalog, PatternCatalog, Server};

fn catalog() -> &'static PatternCatalog {
    static C: OnceLock<PatternCatalog> = OnceLock::new();
    C.get_or_init(|| PatternCatalog::new([("a".to_string(), 100_000, 1), ("b".to_string(), 5, 2)]))
}

fuzz_target!(|input: &[u8]| {
    let Some((&pick, rest)) = input.split_first() else { return };
    let mut d = rest.to_vec();
    if pick & 1 == 1 && d.len() >= 44 {
        let name = if pick & 2 == 0 { "a" } else { "b" };
        let eid = catalog().resolve(name).unwrap().0;
        d[12..44].copy_from_slice(&eid.0);
    }
    let mut server = Server::default();
    let mut reply = server.handle(Time::ZERO, "192.0.2.1:9".parse().unwrap(), catalog(), &d);
    let mut buf = vec![0u8; 70_000];
    let mut sent = 0;
    while let Some(n) = reply.next_datagram(&mut buf) {
        sent += n;
    }
    assert!(sent <= 3 * d.len(), "{sent} bytes for a {}-byte datagram", d.len());
});
