//! A router whose upstream is dead names it (issue 23, item 14): before, `rdtp fetch`
//! through it said "no answer from the server for 10s", as if the router were the server.
//! Now the router refuses what waits on a next hop that answered nothing for its upstream
//! timeout (2 s) with Nack `NoRoute`, naming itself and the hop, and the fetch says so.
//! The message is asserted, not the time.

use std::net::UdpSocket;
use std::process::{Command, Stdio};

mod common;
use common::{RDTP, Server};

fn fetch(router: &str, what: &str) -> (Option<i32>, String) {
    let out = Command::new(RDTP)
        .args(["fetch", router, what, "-o", "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("run rdtp fetch");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_fetch_through_a_router_with_a_dead_upstream_names_the_router_and_the_upstream() {
    // A silent upstream: bound (so no ICMP error comes back), never answering.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    // A closed port: ICMP "port unreachable", which proves nothing (anyone can forge it).
    let closed = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    for upstream in [silent.local_addr().unwrap(), closed] {
        let up = upstream.to_string();
        let r1 = Server::route(&["--upstream", &up, "--id", "r1"]);
        // By name (the resolve waits on the upstream) and by EID (the first units do).
        for what in ["movie.mkv", &"ab".repeat(32)] {
            let (code, stderr) = fetch(&r1.addr, what);
            assert_ne!(code, Some(0), "{up} {what}: {stderr}");
            assert!(
                stderr.contains("r1") && stderr.contains(&format!("upstream {up} did not answer within 2 s")),
                "{up} {what}: the message names the router and its upstream: {stderr}"
            );
            assert!(!stderr.contains("no answer from the server"), "{up} {what}: {stderr}");
        }
    }
    drop(silent);
}
