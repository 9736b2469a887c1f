//! What the receiver core costs per datagram, without sockets (issue 12, target 1: receiver
//! CPU per GiB). The server core answers in memory; only the receiver's calls are timed:
//! `handle_datagram` (decode, window, loss detection, controller, reassembly, verification),
//! `poll_transmit` (requests and proof requests) and reading the delivered bytes out.
//!
//! `cargo run --release -p rdtp-proto --example receiver_cost [MiB] [cc]` (default 256, bbr).
//! Virtual time advances 1.2 µs per Data (≈ 10 Gbit/s of 1472-byte datagrams), so pacing
//! and timers run as on a fast loopback path.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rdtp_proto::cc::CcConfig;
use rdtp_proto::receiver::{MAX_DATAGRAM, Receiver, ReceiverConfig, Target};
use rdtp_proto::server::{Catalog, MemoryCatalog, Server, ServerConfig};
use rdtp_proto::time::Time;

fn main() {
    let mib: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(256);
    let cc = std::env::args().nth(2).unwrap_or_else(|| "bbr".into());
    let mut data = vec![0u8; mib << 20];
    blake3::Hasher::new().update(b"receiver_cost").finalize_xof().fill(&mut data);
    let size = data.len() as u64;
    let catalog = MemoryCatalog::new([("obj".to_string(), data)]);
    let eid = catalog.resolve("obj").expect("object").0;
    let mut server = Server::new(ServerConfig {
        validation: rdtp_proto::token::ValidationConfig { enabled: false, ..Default::default() },
        ..ServerConfig::default()
    });
    let cfg = ReceiverConfig { cc: cc.parse::<CcConfig>().expect("a controller spec"), ..ReceiverConfig::default() };
    let (client, server_addr): (SocketAddr, SocketAddr) =
        ("192.0.2.1:5000".parse().unwrap(), "192.0.2.2:6000".parse().unwrap());
    let mut rx = Receiver::new(cfg, server_addr, Target::Eid(eid), Time::ZERO);
    let (mut now, mut req, mut reply_buf) = (Time::ZERO, vec![0u8; MAX_DATAGRAM], vec![0u8; 65_536]);
    let mut out = vec![0u8; 1 << 20];
    let (mut in_rx, mut datagrams, mut delivered) = (Duration::ZERO, 0u64, 0u64);
    let step = Duration::from_nanos(1200);
    let mut replies: Vec<Vec<u8>> = Vec::new();
    while !rx.is_finished() {
        let t = Instant::now();
        let mut requests = Vec::new();
        while let Some(t) = rx.poll_transmit(now, &mut req) {
            requests.push(req[..t.len].to_vec());
        }
        in_rx += t.elapsed();
        for r in &requests {
            let mut reply = server.handle(now, client, &catalog, r);
            while let Some(m) = reply.next_datagram(&mut reply_buf) {
                replies.push(reply_buf[..m].to_vec());
            }
        }
        let t = Instant::now();
        for d in replies.drain(..) {
            now += step;
            rx.handle_datagram(now, server_addr, &d);
            datagrams += 1;
        }
        loop {
            let n = rx.read(&mut out);
            if n == 0 {
                break;
            }
            delivered += n as u64;
        }
        if requests.is_empty() {
            match rx.poll_timeout() {
                Some(deadline) => {
                    now = now.max(deadline);
                    rx.handle_timeout(now);
                }
                None => break,
            }
        }
        in_rx += t.elapsed();
    }
    assert_eq!(delivered, size, "every byte delivered, verified");
    let gib = size as f64 / f64::from(1u32 << 30);
    println!(
        "{cc}: {mib} MiB, {datagrams} datagrams, receiver core {:.3} s: {:.0} ns per datagram, {:.3} s/GiB \
         (BLAKE3 alone is ≈ 0.27 s/GiB here: `--example verify_cost`)",
        in_rx.as_secs_f64(),
        in_rx.as_nanos() as f64 / datagrams as f64,
        in_rx.as_secs_f64() / gib
    );
}
