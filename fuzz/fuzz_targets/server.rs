//! Any datagram from an address the server never validated: no panic, and never more than
//! 3× its size back (RFC 9000 §8). The first byte picks a catalogue object's EID to splice
//! in at offset 12 so the fuzzer reaches the Data-sending path.
//! The body is `rdtp_proto::fuzz::server`, which `cargo test` also replays on the corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| rdtp_proto::fuzz::server(input));
