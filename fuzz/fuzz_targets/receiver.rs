//! A receiver mid-fetch fed hostile datagrams between its own requests: no panic, and
//! whatever it delivers is a prefix of the real object (nothing unverified is readable).
//! The body is `rdtp_proto::fuzz::receiver`, which `cargo test` also replays on the corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| rdtp_proto::fuzz::receiver(input));
