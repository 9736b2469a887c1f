//! Probes a running `rdtp serve` the way issue 23's attacks did, for the before/after
//! figures of docs/SECURITY.md and docs/BENCHMARKS.md. It speaks the wire format only, so
//! it measures any build of the server. Loopback (or a network namespace of yours) only.
//!
//! ```text
//! rdtp serve --pattern 200M --listen 127.0.0.1:7500 &
//! cargo run --release -p rdtp --example attack_probe -- port 127.0.0.1:7500 pattern 100
//! cargo run --release -p rdtp --example attack_probe -- options 127.0.0.1:7500 pattern $SERVER_PID 200
//! ```
//!
//! * `port ADDR NAME [N]` (item 5): a host that shares the victim's IP address (a NAT, a
//!   multi-user machine) gets a token for its own port, then sends N requests of 16 units
//!   of the largest unit (≈ 1 MiB of Data each) carrying that token with the victim's port
//!   as source. Two sockets on one address stand in for the two hosts: the "victim"
//!   socket sends the requests (as the spoofer would, with its port) and counts what comes
//!   back to it. Prints bytes sent from the victim's port, bytes received there, the ratio.
//! * `options ADDR NAME PID [N]` (item 9): N validated requests of ≈ 63 kB, 20 000 empty
//!   options in front of 255 one-unit extra ranges, and as many plain requests for the
//!   same 256 units; prints the server's CPU time (all its threads, from
//!   `/proc/PID/stat`) per request of each kind.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use rdtp_proto::Eid;
use rdtp_proto::wire::tlv::{extra_ranges_len, write_address_token, write_extra_ranges};
use rdtp_proto::wire::{
    ByteRange, DATA_HEADER_LEN, DEFAULT_HOP_LIMIT, DEFAULT_MAX_REPLY_BYTES, MAX_UNIT, Options, Packet, Query, Request,
    RequestFlags, ResolveRequest,
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: attack_probe port ADDR NAME [N] | attack_probe options ADDR NAME PID [N]";
    let (Some(mode), Some(addr), Some(name)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let server: SocketAddr = addr.parse().expect("ADDR: ip:port");
    assert!(server.ip().is_loopback(), "loopback addresses only");
    match mode.as_str() {
        "port" => port(server, name, args.get(3).map_or(100, |n| n.parse().expect("N"))),
        "options" => {
            let pid: u32 = args.get(3).expect(usage).parse().expect("PID");
            options(server, name, pid, args.get(4).map_or(200, |n| n.parse().expect("N")))
        }
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}

fn socket() -> UdpSocket {
    let s = rdtp::socket::bind("127.0.0.1:0".parse().unwrap()).expect("bind 127.0.0.1");
    s.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    s
}

/// Every byte that arrives on `sock` until it has been quiet for 300 ms.
fn drain(sock: &UdpSocket) -> (u64, u64) {
    let mut buf = vec![0u8; 70_000];
    let (mut datagrams, mut bytes) = (0, 0);
    while let Ok((n, _)) = sock.recv_from(&mut buf) {
        datagrams += 1;
        bytes += n as u64;
    }
    (datagrams, bytes)
}

/// A token for `sock`'s address and the EID of `name`, as a receiver gets them.
fn validate(sock: &UdpSocket, server: SocketAddr, name: &str) -> (Vec<u8>, Eid) {
    let mut buf = vec![0u8; 70_000];
    let mut token: Option<Vec<u8>> = None;
    for _ in 0..4 {
        let mut opts = [0u8; 80];
        let n = write_address_token(&mut opts, token.as_deref());
        let r = ResolveRequest {
            hop_limit: DEFAULT_HOP_LIMIT,
            tag: 77,
            query: Query::Name(name),
            options: Options::parse(&opts[..n]).unwrap(),
        };
        let len = r.encode(&mut buf).expect("name fits");
        sock.send_to(&buf[..len], server).expect("send");
        let Ok((n, _)) = sock.recv_from(&mut buf) else { continue };
        match Packet::decode(&buf[..n]) {
            Ok(Packet::Retry(r)) => token = Some(r.token.to_vec()),
            Ok(Packet::ResolveResponse(r)) => return (token.expect("a Retry came first"), r.eid),
            other => panic!("unexpected answer to a resolve: {other:?}"),
        }
    }
    panic!("no answer from {server}");
}

fn request(eid: Eid, unit: u16, range: ByteRange, token: &[u8], extra: &[u8]) -> Vec<u8> {
    let mut opts = vec![0u8; 80];
    let n = write_address_token(&mut opts, Some(token));
    opts.truncate(n);
    opts.extend_from_slice(extra);
    let r = Request {
        flags: RequestFlags(0),
        hop_limit: DEFAULT_HOP_LIMIT,
        unit,
        tag: 5,
        nonce: 6,
        eid,
        range,
        options: Options::parse(&opts).expect("valid options"),
    };
    let mut b = vec![0u8; r.encoded_len()];
    r.encode(&mut b).expect("fits");
    b
}

fn port(server: SocketAddr, name: &str, n: u64) {
    let attacker = socket();
    let victim = socket();
    let (token, eid) = validate(&attacker, server, name);
    // As many units of the largest unit as one reply may carry (≈ 1 MiB).
    let units = (DEFAULT_MAX_REPLY_BYTES / (u64::from(MAX_UNIT) + DATA_HEADER_LEN as u64)) as u32;
    let (mut sent, mut got) = (0u64, 0u64);
    for i in 0..n {
        let span = units * u32::from(MAX_UNIT);
        let d = request(eid, MAX_UNIT, ByteRange::new(u64::from(span) * (i % 8), span), &token, &[]);
        victim.send_to(&d, server).expect("send");
        sent += d.len() as u64;
        got += drain(&victim).1;
    }
    println!(
        "token of {} used from {}: {n} requests, {sent} bytes sent from the victim's port, {got} bytes received there: {:.1}x",
        attacker.local_addr().unwrap(),
        victim.local_addr().unwrap(),
        got as f64 / sent as f64
    );
}

/// utime + stime of every thread of `pid`, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    // SAFETY: sysconf takes an integer and reads a constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks as f64 / hz
}

fn options(server: SocketAddr, name: &str, pid: u32, n: u64) {
    let sock = socket();
    let (token, eid) = validate(&sock, server, name);
    let unit = 64u16;
    let ranges: Vec<ByteRange> = (1..256u64).map(|i| ByteRange::new(i * 64, 64)).collect();
    let mut ranges_item = vec![0u8; extra_ranges_len(ranges.len())];
    write_extra_ranges(&mut ranges_item, &ranges);
    let mut padded = Vec::new();
    for _ in 0..20_000 {
        padded.extend_from_slice(&[0x22, 0, 0]); // an unknown, non-critical, empty option
    }
    padded.extend_from_slice(&ranges_item);
    let first = ByteRange::new(0, u32::from(unit));
    for (label, extra) in [("256 ranges, no padding", &ranges_item), ("256 ranges after 20 000 empty options", &padded)]
    {
        let d = request(eid, unit, first, &token, extra);
        let before = cpu_seconds(pid);
        let mut back = 0;
        for _ in 0..n {
            sock.send_to(&d, server).expect("send");
            back += drain_quick(&sock);
        }
        let cpu = cpu_seconds(pid) - before;
        println!(
            "{label}: {n} requests of {} bytes, {back} datagrams back, server CPU {:.3} s = {:.0} µs per request",
            d.len(),
            cpu,
            cpu * 1e6 / n as f64
        );
    }
}

/// The datagrams answering one request: its 256 Data, or what came before a 300 ms gap.
fn drain_quick(sock: &UdpSocket) -> u64 {
    let mut buf = vec![0u8; 70_000];
    let mut datagrams = 0;
    while datagrams < 256 && sock.recv_from(&mut buf).is_ok() {
        datagrams += 1;
    }
    datagrams
}
