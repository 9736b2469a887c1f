//! Send one resolve (hop limit 255, the most a sender can set) to a node and print the
//! answer: the two-router loop figures of `docs/SECURITY.md` (issue 23, item 8).
//!
//! ```text
//! rdtp route --listen 127.0.0.1:7461 --upstream 127.0.0.1:7462 --id a &
//! rdtp route --listen 127.0.0.1:7462 --upstream 127.0.0.1:7461 --id b &
//! cargo run --release -p rdtp --example resolve_once -- 127.0.0.1:7461 videos/x
//! ```
//!
//! The first resolve gets a Retry (address validation); the example sends it again with
//! the token and prints what answers that, with the size of the resolve.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use rdtp_proto::wire::tlv::write_address_token;
use rdtp_proto::wire::{Options, Packet, Query, ResolveRequest};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [to, name] = &args[..] else {
        eprintln!("usage: resolve_once ADDR NAME");
        std::process::exit(2);
    };
    let to: SocketAddr = to.parse().expect("ADDR");
    let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
    sock.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    let mut token: Option<Vec<u8>> = None;
    let mut buf = vec![0u8; 65_536];
    let t0 = Instant::now();
    loop {
        let mut o = [0u8; 80];
        let n = write_address_token(&mut o, token.as_deref());
        let r = ResolveRequest {
            hop_limit: 255,
            tag: 7,
            query: Query::Name(name),
            options: Options::parse(&o[..n]).expect("options"),
        };
        let n = r.encode(&mut buf).expect("encode");
        sock.send_to(&buf[..n], to).expect("send");
        let Ok(m) = sock.recv(&mut buf) else {
            println!("no answer within 5 s");
            return;
        };
        match Packet::decode(&buf[..m]) {
            Ok(Packet::Retry(r)) if token.is_none() => token = Some(r.token.to_vec()),
            Ok(Packet::Nack(k)) => {
                println!(
                    "resolve of {n} bytes: Nack {:?} from {} after {} hops, in {:.1} ms ({})",
                    k.code,
                    k.from,
                    k.hops,
                    t0.elapsed().as_secs_f64() * 1e3,
                    k.detail
                );
                return;
            }
            Ok(p) => {
                println!("resolve of {n} bytes: {p:?}");
                return;
            }
            Err(e) => panic!("undecodable answer: {e}"),
        }
    }
}
