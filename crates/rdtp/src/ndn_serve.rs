//! The NDN face of `rdtp serve --ndn-listen`: one UDP socket and one thread that run the
//! core's NDN producer ([`rdtp_proto::ndn::producer::Producer`]) over the server's
//! catalogue, so that NDN consumers (ndncatchunks, NDNts) fetch the files the rdtp server
//! serves, as ndnputchunks would publish them.
//!
//! It moves datagrams and time only: which Interest gets which Data, the allowed networks
//! and the send budget are the core's. An Interest is small and a Data large, and NDN has no
//! address validation: see the producer's module docs and docs/SECURITY.md for how the
//! answers are bounded.

use std::io;
use std::net::{SocketAddr, UdpSocket};

use rdtp_proto::ndn::producer::{Producer, ProducerConfig, ProducerStats};

use crate::background::{Background, StopSignal};
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::server::Served;
use crate::socket;

/// Where the NDN face listens and what it publishes.
#[derive(Clone, Debug)]
pub struct NdnOptions {
    /// Address of the UDP face (NDN's port is 6363).
    pub listen: SocketAddr,
    /// The producer's prefix, segment size, MTU, allowed networks and send budget.
    pub config: ProducerConfig,
}

/// A running NDN face. Dropping it stops the thread; [`Background::stop`] returns the
/// producer's counters.
pub type NdnHandle = Background<ProducerStats>;

/// Bind the face and answer Interests in a background thread, from `source` (a serving
/// thread's handle on the catalogue, e.g. [`crate::server::Parallel::worker`]).
pub fn spawn<S: Served + Send + 'static>(mut source: S, options: NdnOptions) -> Result<NdnHandle> {
    let sock = UdpSocket::bind(options.listen)
        .map_err(|e| Error::network(format!("cannot listen for NDN on {}", options.listen), e))?;
    sock.set_nonblocking(true).map_err(|e| Error::network("cannot set up the NDN socket", e))?;
    let addr = sock.local_addr().map_err(|e| Error::network("getsockname", e))?;
    let stop = StopSignal::new()?;
    let stopper = stop.remote()?;
    let mut producer = Producer::new(options.config);
    Background::spawn("rdtp-ndn", addr, stopper, move || {
        let clock = Clock::new();
        let mut buf = vec![0u8; 65_536];
        let mut out = Vec::new();
        while !stop.requested() {
            source.refresh();
            match sock.recv_from(&mut buf) {
                Ok((n, from)) => {
                    let from = socket::canonical(from);
                    out.clear();
                    producer.handle(clock.now(), from, source.catalog(), &buf[..n], &mut out);
                    for d in &out {
                        if let Err(e) = sock.send_to(d, from) {
                            tracing::debug!("NDN send to {from}: {e}");
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let r = socket::wait(&sock, false, Some(stop.wake_fd()), None, None)
                        .map_err(|e| Error::network("poll", e))?;
                    if r.wake {
                        stop.drain();
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // ICMP errors for earlier answers: not fatal for a producer.
                Err(e) => tracing::debug!("NDN recv: {e}"),
            }
        }
        Ok(*producer.stats())
    })
}
