//! Any bytes: decoding never panics, and a packet that decodes encodes to bytes that decode
//! to the same packet (reserved fields are ignored on receipt, so the bytes themselves may
//! differ there: PROTOCOL.md, Conventions).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdtp_proto::wire::Packet;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::decode(data) {
        let mut out = vec![0u8; data.len() + 64];
        let n = p.encode(&mut out).expect("a decoded packet encodes");
        assert_eq!(n, data.len(), "{p:?} re-encodes to another length");
        assert_eq!(Packet::decode(&out[..n]).as_ref(), Ok(&p), "{p:?} does not survive a round trip");
    }
});
