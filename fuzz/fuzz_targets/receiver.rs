//! A receiver mid-fetch fed hostile datagrams between its own requests: no panic, and
//! whatever it delivers is a prefix of the real object (nothing unverified is readable).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rdtp_proto::receiver::{MAX_DATAGRAM, Receiver, ReceiverConfig, Target};
use rdtp_proto::{Eid, Time};

fn object() -> &'static (Vec<u8>, Eid) {
    static O: OnceLock<(Vec<u8>, Eid)> = OnceLock::new();
    O.get_or_init(|| {
        let v: Vec<u8> = (0..40_000u32).map(|i| (i % 253) as u8).collect();
        let e = Eid::of(&v);
        (v, e)
    })
}

fuzz_target!(|input: &[u8]| {
    let (content, eid) = object();
    let target = Target::Known { eid: *eid, size: content.len() as u64 };
    let mut rx = Receiver::new(ReceiverConfig::default(), target, Time::ZERO);
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut now = Time::ZERO;
    let mut got = Vec::new();
    let mut rest = input;
    while rest.len() >= 2 {
        while rx.poll_transmit(now, &mut buf).is_some() {}
        let len = (usize::from(rest[0]) << 8 | usize::from(rest[1])).min(rest.len() - 2);
        rx.handle_datagram(now, &rest[2..2 + len]);
        rest = &rest[2 + len..];
        let mut out = [0u8; 4096];
        loop {
            let n = rx.read(&mut out);
            if n == 0 {
                break;
            }
            got.extend_from_slice(&out[..n]);
        }
        now = now + core::time::Duration::from_millis(7);
        rx.handle_timeout(now);
    }
    assert_eq!(&got[..], &content[..got.len()], "a byte that is not the object's was delivered");
});
