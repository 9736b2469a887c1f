//! NDN datagrams (LpPacket, Interest, Data) from three peers in sequence: decoding never
//! panics, whatever decodes survives a round trip, and the reassembler stays in its limits.
//! The body is `rdtp_proto::fuzz::ndn`, which `cargo test` also replays on `fuzz/seeds-ndn`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| rdtp_proto::fuzz::ndn(input));
