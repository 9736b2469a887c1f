//! Datagrams from a downstream, the upstream or a stranger (the first byte picks which),
//! in sequence, through one router: no panic, and its queue always drains.
//! The body is `rdtp_proto::fuzz::router`, which `cargo test` also replays on the corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| rdtp_proto::fuzz::router(input));
