//! Any bytes: decoding never panics, and a packet that decodes encodes to bytes that decode
//! to the same packet (reserved fields are ignored on receipt, so the bytes themselves may
//! differ there: PROTOCOL.md, Conventions).
//! The body is `rdtp_proto::fuzz::decode`, which `cargo test` also replays on the corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| rdtp_proto::fuzz::decode(input));
