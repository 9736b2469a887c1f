//! One validated source flooding a router with requests for made-up content (issue 23,
//! item 4): each request asks for 256 units of 64 B of an EID nobody serves, which costs a
//! router 256 pending entries and its upstream one Nack. `docs/SECURITY.md` ("Per-source
//! limits at routers") measures an honest fetch beside it.
//!
//! ```text
//! cargo run --release -p rdtp --example router_flood -- 127.0.0.1:7448 \
//!     [--rate 8000] [--secs 30] [--like EID] [--units 256] [--unit 64]
//! ```
//!
//! It obtains an address token from the router first (one Retry), then sends `--rate`
//! requests per second from one socket, each for a new made-up EID (so nothing coalesces),
//! whose first four bytes are those of `--like` (routers with several workers steer a
//! request by them: the flood lands on the worker that serves that object). It reads and
//! counts whatever comes back, and prints the counts at the end. Loopback addresses only.

use std::collections::BTreeMap;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use rdtp_proto::Eid;
use rdtp_proto::wire::{ByteRange, Packet};

#[path = "../tests/common/raw.rs"]
mod raw;

fn usage() -> ! {
    eprintln!("usage: router_flood ADDR:PORT [--rate REQ/S] [--secs S] [--like EID] [--units N] [--unit BYTES]");
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let to: SocketAddr = args.next().and_then(|a| a.parse().ok()).unwrap_or_else(|| usage());
    if !to.ip().is_loopback() {
        eprintln!("router_flood: {to} is not a loopback address; this tool floods loopback only");
        std::process::exit(2);
    }
    let (mut rate, mut secs, mut like, mut units, mut unit) = (8000.0f64, 30.0f64, Eid::default(), 256u32, 64u16);
    while let Some(a) = args.next() {
        let v = args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--rate" => rate = v.parse().unwrap_or_else(|_| usage()),
            "--secs" => secs = v.parse().unwrap_or_else(|_| usage()),
            "--like" => like = v.parse().unwrap_or_else(|_| usage()),
            "--units" => units = v.parse().unwrap_or_else(|_| usage()),
            "--unit" => unit = v.parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let mut buf = vec![0u8; 65_536];
    let mut seq = 0u64;
    let mut request = |token: Option<&[u8]>| {
        seq += 1;
        let mut eid = like;
        eid.0[4..12].copy_from_slice(&seq.to_be_bytes());
        eid.0[31] ^= 0x5a; // never `like` itself
        raw::request(eid, seq as u32 | 1, ByteRange::new(0, units * u32::from(unit)), unit, token)
    };

    // The token: ask without one until a Retry brings it.
    sock.set_read_timeout(Some(Duration::from_millis(200))).expect("timeout");
    let token = raw::fetch_token(&sock, to, &request(None), || false);
    let Some(token) = token else {
        eprintln!("router_flood: no Retry from {to} (is it running, with address validation?)");
        std::process::exit(1)
    };
    sock.set_nonblocking(true).expect("nonblocking");

    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let (mut sent, mut bytes_sent, mut answers) = (0u64, 0u64, BTreeMap::<String, u64>::new());
    while Instant::now() < end {
        // Catch up with the schedule (1 ms steps).
        let due = (start.elapsed().as_secs_f64() * rate) as u64;
        while sent < due {
            let d = request(Some(&token));
            if sock.send_to(&d, to).is_ok() {
                bytes_sent += d.len() as u64;
            }
            sent += 1;
        }
        while let Ok(m) = sock.recv(&mut buf) {
            let what = match Packet::decode(&buf[..m]) {
                Ok(Packet::Nack(n)) => format!("Nack {:?}", n.code),
                Ok(Packet::Data(_)) => "Data".to_string(),
                Ok(Packet::Retry(_)) => "Retry".to_string(),
                Ok(_) => "other".to_string(),
                Err(_) => "undecodable".to_string(),
            };
            *answers.entry(what).or_default() += 1;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let t = start.elapsed().as_secs_f64();
    println!(
        "router_flood: {sent} requests in {t:.1} s ({:.0}/s, {:.2} Mbit/s of UDP payload) to {to}",
        sent as f64 / t,
        bytes_sent as f64 * 8.0 / t / 1e6
    );
    for (what, n) in answers {
        println!("  {what}: {n}");
    }
}
