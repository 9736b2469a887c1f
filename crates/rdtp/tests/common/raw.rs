//! Raw request datagrams for the tests and examples that play a hostile or hand-driven
//! client (floods, token checks): one place that builds them, and the address-token
//! handshake they start with.

// Each user compiles this module and uses a part of it.
#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use rdtp_proto::Eid;
use rdtp_proto::wire::tlv::write_address_token;
use rdtp_proto::wire::{ByteRange, DEFAULT_HOP_LIMIT, Options, Packet, Request, RequestFlags};

/// A request for `range` of `eid` in units of `unit` bytes, tagged `tag` (its nonce derived
/// from the tag), carrying the address `token` if any.
pub fn request(eid: Eid, tag: u32, range: ByteRange, unit: u16, token: Option<&[u8]>) -> Vec<u8> {
    let mut opts = [0u8; 80];
    let n = write_address_token(&mut opts, token);
    let r = Request {
        flags: RequestFlags(0),
        hop_limit: DEFAULT_HOP_LIMIT,
        unit,
        tag,
        nonce: u64::from(tag) << 20 | 0x5eed,
        eid,
        range,
        options: Options::parse(&opts[..n]).expect("an address token is a valid option"),
    };
    let mut b = vec![0u8; r.encoded_len()];
    r.encode(&mut b).expect("a buffer of encoded_len");
    b
}

/// The address token `to` hands `sock`: sends `first` (a request without a token) every
/// 300 ms until a Retry brings one (`sock` needs a read timeout). `None` if `give_up` says
/// so first or after 5 s.
pub fn fetch_token(sock: &UdpSocket, to: SocketAddr, first: &[u8], give_up: impl Fn() -> bool) -> Option<Vec<u8>> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut buf = vec![0u8; 65_536];
    while Instant::now() < deadline && !give_up() {
        sock.send_to(first, to).expect("send");
        let until = Instant::now() + Duration::from_millis(300);
        while Instant::now() < until {
            if let Ok(n) = sock.recv(&mut buf)
                && let Ok(Packet::Retry(r)) = Packet::decode(&buf[..n])
            {
                return Some(r.token.to_vec());
            }
        }
    }
    None
}
