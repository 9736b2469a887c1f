//! Issue 23, item 12: bad names say what is wrong. `rdtp fetch ADDR ""` or a 5 000-byte name
//! waited 10 s and reported "server unreachable" (exit 6) from a running server that had
//! dropped the request as malformed. Now the CLI refuses them before sending anything
//! (exit 2, naming the limit), and a server answers a malformed request it can attribute
//! with a Nack carrying its tag, so a library fetch of such a name fails with the server's
//! reason instead of a timeout.

use std::process::{Command, Stdio};
use std::sync::Arc;

use rdtp::server::{ServeOptions, spawn};
use rdtp::{Error, Fetch};
use rdtp_proto::receiver::FetchError;
use rdtp_proto::server::MemoryCatalog;
use rdtp_proto::wire::NackCode;

mod common;
use common::RDTP;

fn serve() -> rdtp::server::ServerHandle {
    let opts = ServeOptions { listen: Some("127.0.0.1:0".parse().unwrap()), ..Default::default() };
    spawn(Arc::new(MemoryCatalog::new([("a".to_string(), b"hello".to_vec())])), opts).unwrap()
}

#[test]
fn bad_names_are_refused_before_anything_is_sent() {
    let server = serve();
    let addr = server.local_addr().to_string();
    let long = "a".repeat(5000);
    for (name, says) in [("", "empty name"), (long.as_str(), "a name of 5000 bytes")] {
        let o = Command::new(RDTP)
            .args(["fetch", &addr, name, "-o", "/dev/null"])
            .stdin(Stdio::null())
            .output()
            .expect("run rdtp fetch");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says) && err.contains("1 to 1024 bytes"), "{err}");
    }
    let stats = server.stop().unwrap();
    assert_eq!(stats.datagrams_in, 0, "nothing was sent");
}

/// Through the library, which sends what it is given: the server's tagged Nack ends the
/// fetch with its reason (after one Retry: no Nack fits three times a 14-byte request).
#[test]
fn a_server_says_why_it_refuses_an_empty_name() {
    let server = serve();
    let err = match Fetch::by_name(server.local_addr(), "").start().and_then(|r| r.wait_resolved()) {
        Err(e) => e,
        Ok(r) => panic!("an empty name resolved to {r:?}"),
    };
    match &err {
        Error::Fetch(FetchError::Refused { code: NackCode::Malformed, detail, .. }) => {
            assert_eq!(detail, "empty name")
        }
        other => panic!("expected the server's Malformed Nack, got {other:?}"),
    }
    let stats = server.stop().unwrap();
    assert_eq!((stats.core.malformed, stats.core.retries, stats.core.nacks), (2, 1, 1));
}
