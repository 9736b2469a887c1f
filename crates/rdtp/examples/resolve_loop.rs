//! One resolve with the highest hop limit a sender can set, sent to a router (issue 23,
//! item 8): on two routers whose default routes point at each other it shows how often the
//! resolve goes round before it is refused, and what comes back. `docs/SECURITY.md`
//! ("Hop limits and loops") counts the bytes on the loop with it.
//!
//! ```text
//! cargo run --release -p rdtp --example resolve_loop -- 127.0.0.1:7621 [NAME] [--hop-limit N]
//! ```
//!
//! It obtains an address token first (one Retry), sends the resolve once, and prints the
//! answer that comes back within 3 s. Loopback addresses only.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use rdtp_proto::wire::tlv::write_address_token;
use rdtp_proto::wire::{Options, Packet, Query, ResolveRequest};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || -> ! {
        eprintln!("usage: resolve_loop ADDR:PORT [NAME] [--hop-limit N]");
        std::process::exit(2)
    };
    let to: SocketAddr = args.first().and_then(|a| a.parse().ok()).unwrap_or_else(|| usage());
    if !to.ip().is_loopback() {
        eprintln!("resolve_loop: {to} is not a loopback address");
        std::process::exit(2);
    }
    let mut name = "no/such/name".to_string();
    let mut hop_limit = 255u8;
    let mut rest = args[1..].iter();
    while let Some(a) = rest.next() {
        match a.as_str() {
            "--hop-limit" => hop_limit = rest.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| usage()),
            n => name = n.to_string(),
        }
    }
    let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
    sock.set_read_timeout(Some(Duration::from_millis(200))).expect("timeout");
    let resolve = |tag: u32, token: Option<&[u8]>| {
        let mut opts = [0u8; 64];
        let n = write_address_token(&mut opts, token);
        let options = Options::parse(&opts[..n]).expect("options");
        let mut b = vec![0u8; 2048];
        let len = ResolveRequest { hop_limit, tag, query: Query::Name(&name), options }.encode(&mut b).expect("encode");
        b.truncate(len);
        b
    };
    let mut buf = vec![0u8; 65_536];
    let mut token = None;
    for _ in 0..25 {
        sock.send_to(&resolve(1, None), to).expect("send");
        if let Ok(m) = sock.recv(&mut buf)
            && let Ok(Packet::Retry(r)) = Packet::decode(&buf[..m])
        {
            token = Some(r.token.to_vec());
            break;
        }
    }
    let Some(token) = token else {
        eprintln!("resolve_loop: no Retry from {to}");
        std::process::exit(1)
    };
    let d = resolve(2, Some(&token));
    sock.send_to(&d, to).expect("send");
    println!("sent one {}-byte resolve for {name:?} with hop limit {hop_limit} to {to}", d.len());
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(3) {
        let Ok(m) = sock.recv(&mut buf) else { continue };
        match Packet::decode(&buf[..m]) {
            Ok(Packet::Nack(n)) if n.tag == 2 => {
                println!(
                    "after {:.1} ms: Nack {:?} from {}, {} hops: {}",
                    t0.elapsed().as_secs_f64() * 1e3,
                    n.code,
                    n.from,
                    n.hops,
                    n.detail
                );
                return;
            }
            Ok(Packet::ResolveResponse(r)) if r.tag == 2 => {
                println!("after {:.1} ms: resolved to {}", t0.elapsed().as_secs_f64() * 1e3, r.eid);
                return;
            }
            _ => {}
        }
    }
    println!("no answer within 3 s");
}
