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

/// Through the library: the receiver core checks the name too, so a program gets the
/// reason at once and nothing is sent (0036bef's library sent what it was given; for a
/// name over 1024 bytes its encoder failed and the fetch spun at full CPU until the idle
/// timeout).
#[test]
fn the_library_refuses_bad_names_at_once() {
    let server = serve();
    let long = "b".repeat(5000);
    for (name, why) in [("", "empty name"), (long.as_str(), "name longer than 1024 bytes")] {
        let err = match Fetch::by_name(server.local_addr(), name).start().and_then(|r| r.wait_resolved()) {
            Err(e) => e,
            Ok(r) => panic!("a bad name resolved to {r:?}"),
        };
        match &err {
            Error::Fetch(FetchError::BadName { why: w, .. }) => assert_eq!(*w, why),
            other => panic!("expected BadName, got {other:?}"),
        }
        assert_eq!(err.exit_code(), 2, "{err}");
    }
    let stats = server.stop().unwrap();
    assert_eq!(stats.datagrams_in, 0, "nothing was sent");
}

/// A server answers a resolve it cannot read but can attribute (its tag) with a Nack
/// `Malformed` carrying that tag — after a Retry, since no Nack fits three times a 14-byte
/// datagram from an unvalidated address — instead of dropping it (0036bef: silence, and
/// the sender timed out). Sent as raw datagrams: the library refuses such names itself.
#[test]
fn a_server_says_why_it_refuses_an_empty_name() {
    use rdtp_proto::wire::tlv::write_address_token;
    use rdtp_proto::wire::{Options, Packet, Query, ResolveRequest};
    let server = serve();
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
    sock.connect(server.local_addr()).unwrap();
    let mut token: Option<Vec<u8>> = None;
    let mut answer = [0u8; 2048];
    for tag in [7u32, 8] {
        let mut opts = [0u8; 80];
        let n = write_address_token(&mut opts, token.as_deref());
        let r =
            ResolveRequest { hop_limit: 8, tag, query: Query::Name(""), options: Options::parse(&opts[..n]).unwrap() };
        let mut b = [0u8; 128];
        let len = r.encode(&mut b).unwrap();
        sock.send(&b[..len]).unwrap();
        let got = sock.recv(&mut answer).expect("an answer, not silence");
        match Packet::decode(&answer[..got]).unwrap() {
            Packet::Retry(r) if token.is_none() => {
                assert_eq!(r.tag, tag);
                token = Some(r.token.to_vec());
            }
            Packet::Nack(n) if token.is_some() => {
                assert_eq!((n.code, n.tag, n.detail), (NackCode::Malformed, tag, "empty name"));
            }
            other => panic!("unexpected answer {other:?}"),
        }
    }
    let stats = server.stop().unwrap();
    assert_eq!((stats.core.malformed, stats.core.retries, stats.core.nacks), (2, 1, 1));
}
