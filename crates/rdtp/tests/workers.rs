//! Servers with several workers (issue 12): sockets sharing one address with
//! `SO_REUSEPORT`, one thread and one stateless core each.

use std::io::Read;
use std::sync::Arc;

use rdtp::Fetch;
use rdtp::server::{ServeOptions, spawn};
use rdtp_proto::server::MemoryCatalog;

mod common;
use common::content;

fn serve(objects: Vec<(String, Vec<u8>)>, workers: usize) -> rdtp::server::ServerHandle {
    let opts = ServeOptions { listen: Some("127.0.0.1:0".parse().unwrap()), workers, ..Default::default() };
    spawn(Arc::new(MemoryCatalog::new(objects)), opts).unwrap()
}

/// `n` fetches of "obj" from `addr` at once, each on its own thread and socket: what each got.
fn fetch_at_once(addr: std::net::SocketAddr, n: usize) -> Vec<Vec<u8>> {
    let fetches: Vec<_> = (0..n)
        .map(|_| {
            std::thread::spawn(move || {
                let mut got = Vec::new();
                Fetch::by_name(addr, "obj").start().unwrap().read_to_end(&mut got).unwrap();
                got
            })
        })
        .collect();
    fetches.into_iter().map(|f| f.join().unwrap()).collect()
}

#[test]
fn concurrent_fetches_spread_over_the_workers_byte_exact_with_a_retry_each_at_most() {
    let data = content(600_000, 1);
    let server = serve(vec![("obj".into(), data.clone())], 2);
    let addr = server.local_addr();
    // The first fetch gets a token. The others run at once, each from its own socket: a
    // token names a port (issue 23), so each pays at most one Retry, to whichever worker
    // the kernel hands it (one of them may reuse the first fetch's port and token).
    let mut first = Vec::new();
    Fetch::by_name(addr, "obj").start().unwrap().read_to_end(&mut first).unwrap();
    assert!(first == data);
    for got in fetch_at_once(addr, 16) {
        assert!(got == data, "a fetch was not byte-exact");
    }
    let stats = server.stop().unwrap();
    assert_eq!(stats.datagrams_per_worker.len(), 2);
    assert_eq!(stats.datagrams_per_worker.iter().sum::<u64>(), stats.datagrams_in);
    // 17 sockets hashed over two workers: each gets some (all on one: chance 2^-16).
    assert!(stats.datagrams_per_worker.iter().all(|&n| n > 0), "{:?}", stats.datagrams_per_worker);
    assert!((1..=17).contains(&stats.core.retries), "at most one Retry per fetch: {}", stats.core.retries);
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

/// `reader` to its end, then its summary's "served by" (e.g. `router r1 100.0 %`).
fn read_all(mut reader: rdtp::FetchReader) -> (Vec<u8>, String) {
    let mut got = Vec::new();
    reader.read_to_end(&mut got).unwrap();
    let summary = reader.finish().unwrap();
    (got, summary.served_by)
}

fn router(upstream: Option<std::net::SocketAddr>, routes: &[String], workers: usize) -> rdtp::router::RouterHandle {
    use rdtp_proto::router::RouterConfig;
    use rdtp_proto::router::fib::Fib;
    let mut fib = Fib::new(upstream);
    for r in routes {
        fib.add(r.parse().unwrap());
    }
    let config = RouterConfig { id: rdtp_proto::NodeId::label("r1").unwrap(), fib, ..RouterConfig::default() };
    let opts = rdtp::router::RouteOptions { listen: Some("127.0.0.1:0".parse().unwrap()), config, workers };
    rdtp::router::spawn(opts).unwrap()
}

#[test]
fn router_workers_steer_by_content_so_every_receiver_hits_one_copy() {
    // 5 MiB: six 1 MiB parts, spread over the workers by the steering program.
    let data = content(5 << 20, 3);
    let server = serve(vec![("obj".into(), data.clone())], 1);
    let r1 = router(Some(server.local_addr()), &[], 2);
    let (got, by) = read_all(Fetch::by_name(r1.local_addr(), "obj").start().unwrap());
    assert!(got == data);
    assert!(by.starts_with("origin"), "{by}");
    // Blocks enter the store once their proofs are back.
    std::thread::sleep(std::time::Duration::from_millis(300));
    // Each later fetch comes from a new socket, which the kernel's address hash would send
    // to either worker; steered by content, every unit is a hit wherever it is asked from.
    for _ in 0..6 {
        let (got, by) = read_all(Fetch::by_name(r1.local_addr(), "obj").start().unwrap());
        assert!(got == data);
        assert_eq!(by, "router r1 100.0 %");
    }
    let s = r1.stop().unwrap();
    let units = (data.len() as u64).div_ceil(1402);
    assert_eq!(s.cs_entries as u64, units, "each unit stored once over both workers");
    assert_eq!(s.router.forwarded_units, units, "nothing fetched upstream twice");
    server.stop().unwrap();
}

#[test]
fn router_workers_share_the_routes_they_learn_from_resolves() {
    // No default route: a request for the EID can only be forwarded by a worker that knows
    // the route the resolve taught, whichever worker the resolve reached.
    let data = content(3 << 20, 4);
    let server = serve(vec![("videos/obj".into(), data.clone())], 1);
    let r1 = router(None, &[format!("videos={}", server.local_addr())], 2);
    for _ in 0..8 {
        let (got, _) = read_all(Fetch::by_name(r1.local_addr(), "videos/obj").start().unwrap());
        assert!(got == data);
    }
    let s = r1.stop().unwrap();
    assert_eq!(s.router.no_route, 0, "{:?}", s.router);
    server.stop().unwrap();
}

mod cli {
    use std::process::Command;

    use super::common::{RDTP, Server, content};

    #[test]
    fn rdtp_serve_workers_serves_every_fetch_and_refuses_zero() {
        let dir = tempfile::tempdir().unwrap();
        let data = content(300_000, 7);
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

    #[test]
    fn rdtp_route_workers_reports_each_worker_and_refuses_zero() {
        let dir = tempfile::tempdir().unwrap();
        let data = content(200_000, 9);
        std::fs::write(dir.path().join("f"), &data).unwrap();
        let server = Server::start(dir.path(), &["--workers", "1"]);
        let json = dir.path().join("r.json");
        let mut r1 =
            Server::route(&["--upstream", &server.addr, "--workers", "3", "--stats-json", json.to_str().unwrap()]);
        assert!(r1.line.contains(", 3 workers)"), "{}", r1.line);
        for _ in 0..3 {
            let out = Command::new(RDTP).args(["fetch", &r1.addr, "f"]).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            assert!(out.stdout == data);
        }
        // SAFETY: signalling our own child.
        unsafe { libc::kill(r1.child.id() as libc::pid_t, libc::SIGTERM) };
        assert_eq!(r1.child.wait().unwrap().code(), Some(0));
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let per = v["totals"]["socket"]["datagrams_per_worker"].as_array().unwrap().clone();
        assert_eq!(per.len(), 3);
        let sum: u64 = per.iter().map(|x| x.as_u64().unwrap()).sum();
        assert_eq!(sum, v["totals"]["socket"]["datagrams_in"].as_u64().unwrap());
        assert!(v["totals"]["router"]["cs_hits"].as_u64().unwrap() > 0, "{v}");
        let out = Command::new(RDTP).args(["route", "--upstream", &server.addr, "--workers", "0"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("--workers must be at least 1"));
    }
}

/// Wake-up coalescing (`ServeOptions::coalesce`): concurrent fetches are served byte-exact,
/// the worker sleeps between batches instead of waiting in `poll` for each request, and
/// without it no sleep is taken. (How often it waits in `poll` depends on the scheduling of
/// the fetches' threads: a busy socket may never be empty, so that count is not asserted.)
#[test]
fn coalescing_sleeps_between_batches_and_serves_the_same_bytes() {
    let data = content(400_000, 7);
    for (coalesce, label) in [(std::time::Duration::from_micros(500), "on"), (std::time::Duration::ZERO, "off")] {
        let opts =
            ServeOptions { listen: Some("127.0.0.1:0".parse().unwrap()), workers: 1, coalesce, ..Default::default() };
        let server = spawn(Arc::new(MemoryCatalog::new(vec![("obj".into(), data.clone())])), opts).unwrap();
        let addr = server.local_addr();
        for got in fetch_at_once(addr, 4) {
            assert!(got == data, "coalescing {label}: a fetch was not byte-exact");
        }
        let stats = server.stop().unwrap();
        if coalesce.is_zero() {
            assert_eq!(stats.coalesced_sleeps, 0, "{stats}");
        } else {
            assert!(stats.coalesced_sleeps > 0, "coalescing on: no sleep taken: {stats}");
        }
    }
}
