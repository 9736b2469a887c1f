//! # rdtp — UDP runtime and library API of the rdtp transport
//!
//! rdtp is a receiver-driven transport for information-centric networks: a receiver
//! requests byte ranges of an object named by its EID (the BLAKE3 hash of its bytes), a
//! *stateless* server answers, and the receiver runs the congestion control (BBR by
//! default). All protocol logic lives in the sans-IO crate [`rdtp_proto`]; this crate only
//! moves datagrams and time between UDP sockets and its state machines:
//!
//! * [`fetch`] — [`Fetch`] builder and [`FetchReader`] (`std::io::Read`) around a
//!   [`rdtp_proto::receiver::Receiver`] driven on its own thread;
//! * [`server`] — the server runtime around [`rdtp_proto::server::Server`]: batched
//!   receive (GRO), GSO replies, no per-client state; [`server::spawn`] runs one in a
//!   background thread;
//! * [`catalog`] — [`DirCatalog`], a catalogue over the files of a directory, kept up to
//!   date while served (changed files are hashed again; their old EID is never served
//!   with new bytes);
//! * [`list`] — listing a server's catalogue;
//! * [`output`] — where `rdtp fetch` writes: a file that appears only once complete and
//!   verified (written under a temporary name, renamed on success);
//! * [`summary`] — ndnget's end-of-transfer summary and its JSON form;
//! * [`interval`] — per-interval reports of a running fetch (iperf3/hiperf style);
//! * [`trace`] — ndnget-format cwnd/RTT logs and verbose lines;
//! * [`tcp`] — the kernel-TCP comparison baseline (`serve --tcp`, `fetch --tcp`), not rdtp;
//! * [`clock`], [`socket`], [`args`], [`error`] — monotonic time, UDP plumbing, argument
//!   parsing, the error type and exit codes.
//!
//! ## Example
//!
//! Serve an in-memory object on loopback and read it back:
//!
//! ```
//! use std::io::Read;
//! use std::sync::Arc;
//! use rdtp::{Fetch, server::{spawn, ServeOptions}};
//! use rdtp_proto::server::MemoryCatalog;
//!
//! let content: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
//! let catalog = Arc::new(MemoryCatalog::new([("greeting".to_string(), content.clone())]));
//! let opts = ServeOptions { listen: Some("127.0.0.1:0".parse().unwrap()), ..Default::default() };
//! let server = spawn(catalog, opts).unwrap();
//!
//! let mut reader = Fetch::by_name(server.local_addr(), "greeting").start().unwrap();
//! let mut got = Vec::new();
//! reader.read_to_end(&mut got).unwrap(); // Ok only once the bytes matched the EID
//! assert_eq!(got, content);
//! println!("{}", reader.summary().to_text());
//! ```
//!
//! ## Exit codes of the `rdtp` binary
//!
//! See [`error`]: 0 ok, 1 runtime error, 2 usage, 3 content not found, 4 local I/O error,
//! 5 data validation failure, 6 server unreachable, 130/143 interrupted by SIGINT/SIGTERM.

#![warn(missing_docs)]

pub mod args;
pub mod background;
pub mod catalog;
pub mod clock;
pub mod error;
pub mod fetch;
pub mod interval;
pub mod list;
pub mod ndn_serve;
pub mod output;
pub mod router;
pub mod server;
pub use rdtp_signals as signals;
pub mod socket;
pub mod summary;
pub mod tcp;
pub mod tokens;
pub mod trace;
pub mod wifi;

pub use catalog::{DirCatalog, DirOptions, DirSnapshot, DirView, IndexProgress, open_dir};
pub use clock::Clock;
pub use error::{Error, Result};
pub use fetch::{Fetch, FetchMonitor, FetchReader, Progress};
pub use rdtp_proto::Eid;
pub use rdtp_proto::cc::CcConfig;
pub use rdtp_proto::receiver::Target;
pub use summary::Summary;

/// A seed drawn from the OS random source: what fetches and routers use unless told a
/// seed. It makes their tags and nonces unpredictable off the path; node secrets come
/// from [`tokens::secret`].
pub fn random_seed() -> u64 {
    // The receiver's tags come from this seed: they must be unpredictable (issue 11).
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        use std::hash::{BuildHasher, RandomState};
        return RandomState::new().hash_one(std::time::SystemTime::now());
    }
    u64::from_le_bytes(b)
}

/// The Rust examples in the repository's README.md compile (`cargo test --doc`).
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
