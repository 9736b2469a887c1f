//! Datagrams from a downstream, the upstream or a stranger (the first byte picks which),
//! in sequence, through one router: no panic, and its queue always drains.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdtp_proto::Time;
use rdtp_proto::router::fib::Fib;
use rdtp_proto::router::{Router, RouterConfig};

fuzz_target!(|input: &[u8]| {
    let up = "10.0.0.9:7447".parse().unwrap();
    let peers = [up, "10.0.0.1:5000".parse().unwrap(), "198.51.100.3:1".parse().unwrap()];
    let mut r = Router::new(RouterConfig { fib: Fib::new(Some(up)), ..RouterConfig::default() });
    let mut buf = vec![0u8; 70_000];
    // Records: [peer selector, length, bytes...].
    let mut rest = input;
    let mut now = Time::ZERO;
    while rest.len() >= 2 {
        let from = peers[usize::from(rest[0]) % peers.len()];
        let len = usize::from(rest[1]).min(rest.len() - 2);
        r.handle_datagram(now, from, &rest[2..2 + len]);
        rest = &rest[2 + len..];
        let mut n = 0;
        while r.poll_transmit(&mut buf).is_some() {
            n += 1;
            assert!(n < 100_000, "the router's queue does not drain");
        }
        now = now + core::time::Duration::from_millis(3);
        r.handle_timeout(now);
    }
});
