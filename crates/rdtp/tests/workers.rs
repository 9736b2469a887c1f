//! Servers with several workers (issue 12): sockets sharing one address with
//! `SO_REUSEPORT`, one thread and one stateless core each.

use std::io::Read;
use std::sync::Arc;

use rdtp::Fetch;
use rdtp::server::{ServeOptions, spawn};
use rdtp_proto::server::MemoryCatalog;

fn content(len: usize, seed: u8) -> Vec<u8> {
    let mut x = 0x2545_f491u32 ^ u32::from(seed);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

fn serve(objects: Vec<(String, Vec<u8>)>, workers: usize) -> rdtp::server::ServerHandle {
    let opts = ServeOptions { listen: Some("127.0.0.1:0".parse().unwrap()), workers, ..Default::default() };
    spawn(Arc::new(MemoryCatalog::new(objects)), opts).unwrap()
}

#[test]
fn concurrent_fetches_spread_over_the_workers_byte_exact_with_one_retry() {
    let data = content(600_000, 1);
    let server = serve(vec![("obj".into(), data.clone())], 2);
    let addr = server.local_addr();
    // The first fetch gets a token; the others, each from its own socket (port), reuse it
    // whatever worker the kernel hands them to: the workers share the token secret.
    let mut first = Vec::new();
    Fetch::by_name(addr, "obj").start().unwrap().read_to_end(&mut first).unwrap();
    assert!(first == data);
    let fetches: Vec<_> = (0..16)
        .map(|_| {
            std::thread::spawn(move || {
                let mut got = Vec::new();
                Fetch::by_name(addr, "obj").start().unwrap().read_to_end(&mut got).unwrap();
                got
            })
        })
        .collect();
    for f in fetches {
        assert!(f.join().unwrap() == data, "a fetch was not byte-exact");
    }
    let stats = server.stop().unwrap();
    assert_eq!(stats.datagrams_per_worker.len(), 2);
    assert_eq!(stats.datagrams_per_worker.iter().sum::<u64>(), stats.datagrams_in);
    // 17 sockets hashed over two workers: each gets some (all on one: chance 2^-16).
    assert!(stats.datagrams_per_worker.iter().all(|&n| n > 0), "{:?}", stats.datagrams_per_worker);
    assert_eq!(stats.core.retries, 1, "only the very first request pays a Retry");
}

#[test]
fn a_port_a_multi_worker_server_holds_is_refused_to_another() {
    let server = serve(vec![("a".into(), b"x".to_vec())], 3);
    let taken = ServeOptions { listen: Some(server.local_addr()), workers: 2, ..Default::default() };
    let err = spawn(Arc::new(MemoryCatalog::new(vec![("b".to_string(), b"y".to_vec())])), taken)
        .err()
        .expect("a second server must not share the port");
    assert!(err.to_string().contains("cannot listen"), "{err}");
    // The first still serves, with its object.
    let mut got = Vec::new();
    Fetch::by_name(server.local_addr(), "a").start().unwrap().read_to_end(&mut got).unwrap();
    assert_eq!(got, b"x");
    assert_eq!(server.stop().unwrap().datagrams_per_worker.len(), 3);
}

mod common;

mod cli {
    use std::process::Command;

    use super::common::{RDTP, Server};

    #[test]
    fn rdtp_serve_workers_serves_every_fetch_and_refuses_zero() {
        let dir = tempfile::tempdir().unwrap();
        let data = super::content(300_000, 7);
        std::fs::write(dir.path().join("f"), &data).unwrap();
        let server = Server::start(dir.path(), &["--workers", "2"]);
        assert!(server.line.contains("with 2 workers on "), "{}", server.line);
        for _ in 0..4 {
            let out = Command::new(RDTP).args(["fetch", &server.addr, "f"]).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            assert!(out.stdout == data);
        }
        let out = Command::new(RDTP).args(["serve", "--workers", "0"]).arg(dir.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("--workers must be at least 1"));
    }
}
