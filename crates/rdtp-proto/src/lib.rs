//! # rdtp-proto — the sans-IO core of rdtp
//!
//! rdtp is a receiver-driven transport for information-centric networks: the receiver
//! requests byte ranges of content named by an EID, a stateless server answers, and the
//! receiver runs the congestion control (Liu et al., "Toward ICN receiver-driven transmission
//! mechanism over WLAN"). This crate is all of its protocol logic and none of its I/O:
//!
//! * [`wire`] — the datagram format (version 3; `docs/PROTOCOL.md` has layouts and vectors);
//! * [`recovery`] — what the receiver measures and how it finds losses, below both the
//!   controllers and the receiver: the request window, RTT/RTO (RFC 6298), delivery-rate
//!   samples, the loss detectors (the default, ndnget's per-unit timers, BBR-CD's) and the
//!   sample types controllers read;
//! * [`cc`] — the congestion controllers, one table of them ([`cc::registry::CONTROLLERS`],
//!   `rdtp fetch --cc help`): the BBR family (`bbr`, `bbr-wifi`, `bbrp`, `bbr-orig`, `bbr3`,
//!   and BBR-CD, Hu et al.), ndnget's window pipelines (`aimd`, `cubic`), `fixed`, `sirc`,
//!   and Saino, Cocora and Pavlou's CCTCP (`cctcp`, `cctcp-single`) with its ICP baseline
//!   (`icp`); each is a folder plus one registry row, configured by a spec string
//!   (`bbr:probe_gain=1.5`);
//! * [`receiver`] — the receiver state machine: resolution, the request window's use,
//!   pacing, aggregation, re-requests, refusals, reassembly, EID verification;
//! * [`server`] — the stateless server (0 bytes of state per receiver) and content catalogues;
//! * [`lister`] — the client side of catalogue listing;
//! * [`router`] — the caching router: content store, pending requests (coalescing),
//!   forwarding table, forwarding strategies and cache policies chosen by name;
//! * [`node`] — the call contract every core keeps ([`Node`], [`Transmit`]: peers are
//!   addresses) and node ids: who served a unit (origin or router), carried in every Data.
//! * [`ndn`] — the NDN packet codec beside rdtp's own format: NDN v0.3 TLV, names and
//!   naming conventions, Interest, Data (DigestSha256), NDNLPv2 LpPacket with Nack and
//!   fragmentation/reassembly, segmented objects and RDR metadata; and the NDN consumer
//!   ([`ndn::Consumer`]), a translator around the one receiver;
//! * [`spec`] — key tables: the one parser of configuration strings, for controllers
//!   (`bbr:probe_gain=2`), receivers (`rto_k=8`), routers (`cs_policy=lfu,pit_size=4096`)
//!   and content stores (`lfu:units=1000`), with their help texts and canonical forms;
//! * [`wifi`] — passive WiFi rate estimation (Hiorth and Welzl): per-station throughput,
//!   active stations, the newcomer-rate prediction that informed start uses.
//!
//! ## Layers
//!
//! `wire` < `recovery` < `cc` < `receiver` / `router` / `server` (and `lister`): a module
//! imports only modules to its left (and the leaves `time`, `node`, `eid`, `tree`, `token`).
//! No file under `cc/` imports `receiver/`; nothing under `recovery/` imports `cc/` or
//! `receiver/`. [`ndn`]'s codec stands apart: it imports only `time`; its consumer
//! (`ndn/consumer/`) sits beside the receiver it wraps and imports `receiver` and `wire`. The front ends (the `rdtp`
//! runtime, the C ABI, the harness, ns-3) sit above the whole crate.
//!
//! ## What this crate must not do
//!
//! No sockets, no threads, no clock reads (`now` is always passed in as a [`Time`]), no
//! ambient randomness (seeds are passed in configuration), no file access (content comes
//! through the [`server::Catalog`] trait). The UDP runtime (`rdtp` crate), the ns-3
//! applications and the test harness all drive this same code.
//!
//! ## Call order
//!
//! Every core — receiver, lister, server ([`server::ServerNode`]) and router — is driven
//! the same way ([`node::Node`]), in the manner of `quinn-proto`: the owner hands it the
//! datagrams that arrive and the passing of time, and sends what `poll_transmit` gives to
//! the address it names.
//!
//! ```
//! use std::sync::Arc;
//! use rdtp_proto::receiver::{Receiver, ReceiverConfig, Target};
//! use rdtp_proto::server::{MemoryCatalog, Server, ServerNode};
//! use rdtp_proto::{Node, Time};
//!
//! let catalog = MemoryCatalog::new([("hello.txt".to_string(), b"hello, world".to_vec())]);
//! let client: std::net::SocketAddr = "192.0.2.1:5000".parse().unwrap();
//! let server_addr: std::net::SocketAddr = "192.0.2.2:6000".parse().unwrap();
//! let mut server = ServerNode::new(Server::default(), Arc::new(catalog));
//! let mut rx = Receiver::new(ReceiverConfig::default(), server_addr, Target::Name("hello.txt".into()), Time::ZERO);
//!
//! // No network in between: what one sends, the other handles at once. (The server
//! // validates the client's address with one Retry round trip before it sends data.)
//! let (mut now, mut buf) = (Time::ZERO, vec![0u8; 65536]);
//! while !rx.is_finished() {
//!     // 1. send what is due
//!     while let Some(t) = rx.poll_transmit(now, &mut buf) {
//!         assert_eq!(t.to, server_addr);
//!         server.handle_datagram(now, client, &buf[..t.len]);
//!         // 2. feed back what the server answers
//!         let mut replies = Vec::new();
//!         while let Some(r) = server.poll_transmit(now, &mut buf) {
//!             replies.push(buf[..r.len].to_vec());
//!         }
//!         for d in replies {
//!             rx.handle_datagram(now, server_addr, &d);
//!         }
//!     }
//!     // 3. otherwise wait for the next deadline
//!     if let Some(t) = rx.poll_timeout() {
//!         now = now.max(t);
//!         rx.handle_timeout(now);
//!     }
//! }
//! let mut out = [0u8; 64];
//! let n = rx.read(&mut out);
//! assert_eq!(&out[..n], b"hello, world");
//! ```
//!
//! [`testing::Pair`] (feature `testing`) runs two nodes over a delay this way.
//! See [`receiver`] for the full contract and [`server`] for the server's.

// Safe Rust only: the C ABI (rdtp-ffi) and the runtimes hold every `unsafe` block of rdtp.
#![forbid(unsafe_code)]

/// `pub fn add(&mut self, other: &Self)` for a struct of counters, adding every field
/// listed; the pattern names them all, so a field added later and not listed is a compile
/// error rather than a counter silently left out of totals.
macro_rules! impl_add {
    ($t:ty { $($f:ident),* $(,)? }) => {
        impl $t {
            /// Add `other`'s counts (several workers, or several runs, counted together).
            pub fn add(&mut self, other: &$t) {
                let Self { $($f),* } = other;
                $( self.$f += *$f; )*
            }
        }
    };
}
pub(crate) use impl_add;

pub mod cc;
pub mod eid;
mod fair;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzz;
pub mod lister;
pub mod ndn;
pub mod node;
pub mod receiver;
pub mod recovery;
pub mod router;
pub mod server;
pub mod spec;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod time;
pub mod token;
pub mod tree;
pub mod wifi;
pub mod wire;

pub use eid::Eid;
pub use node::{Node, NodeId, Transmit};
pub use time::Time;
