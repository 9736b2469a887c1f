//! The C ABI reports a controller's state under the name the controller gives it, for every
//! controller of the registry: the same sequence of names a receiver driven the same way
//! through the Rust API reports (ns-3's `timeseries.csv` writes them). A fixed table of names
//! in the ABI used to turn SIRC's `idg` and ICP's `aimd` into `other`.

use std::ffi::{CStr, CString};
use std::net::SocketAddr;
use std::ptr::null_mut;

use rdtp_ffi::node::{RdtpAddr, rdtp_addr_v4, rdtp_node_free, rdtp_node_handle_datagram, rdtp_node_handle_timeout};
use rdtp_ffi::node::{rdtp_node_poll_timeout, rdtp_node_poll_transmit};
use rdtp_ffi::*;
use rdtp_proto::Time;

use rdtp_proto::cc::CcConfig;
use rdtp_proto::cc::registry::CONTROLLERS;
use rdtp_proto::receiver::{Event, Receiver, ReceiverConfig, Target};
use rdtp_proto::server::{PatternCatalog, Server, ServerConfig};
use rdtp_proto::token::ValidationConfig;

const SIZE: u64 = 2_000_000;
const DELAY_NS: u64 = 2_000_000;

/// The state names of the Congestion events of a fetch through the C ABI.
fn states_through_the_abi(cc: &str) -> Vec<String> {
    let name = CString::new("object").unwrap();
    let names = [name.as_ptr()];
    let (sizes, seeds) = ([SIZE], [7u64]);
    let spec = CString::new(cc).unwrap();
    let mut out = Vec::new();
    unsafe {
        let srv = rdtp_server_new_pattern(names.as_ptr(), sizes.as_ptr(), seeds.as_ptr(), 1);
        let (from, server) = (rdtp_addr_v4(0xc000_0201, 5000), rdtp_addr_v4(0xc000_0202, 6000));
        let rx =
            rdtp_receiver_new_from_spec(spec.as_ptr(), c"trace=true".as_ptr(), name.as_ptr(), server, 0, null_mut(), 0);
        assert!(!srv.is_null() && !rx.is_null(), "{cc}");
        let mut to = RdtpAddr::default();
        let (mut req, mut dgram, mut buf) = (vec![0u8; RDTP_MAX_REQUEST], vec![0u8; RDTP_MAX_DATAGRAM], [0u8; 65536]);
        let mut now = 1_000_000u64;
        let mut finished = false;
        for _ in 0..1_000_000 {
            loop {
                let n = rdtp_node_poll_transmit(rx, now, req.as_mut_ptr(), req.len(), &mut to);
                if n == 0 {
                    break;
                }
                assert!(rdtp_node_handle_datagram(srv, now, from, req.as_ptr(), n));
                loop {
                    let m = rdtp_node_poll_transmit(srv, now, dgram.as_mut_ptr(), dgram.len(), &mut to);
                    if m == 0 {
                        break;
                    }
                    rdtp_node_handle_datagram(rx, now + DELAY_NS, server, dgram.as_ptr(), m);
                }
            }
            now += DELAY_NS;
            let mut ev = std::mem::zeroed::<RdtpEvent>();
            while rdtp_receiver_poll_event(rx, &mut ev) {
                match ev.kind {
                    RdtpEventKind::Congestion => out.push(CStr::from_ptr(ev.state).to_str().unwrap().to_string()),
                    RdtpEventKind::Finished => finished = true,
                    RdtpEventKind::Failed => panic!("{cc}: the fetch failed"),
                    _ => {}
                }
            }
            while rdtp_receiver_read(rx, buf.as_mut_ptr(), buf.len()) > 0 {}
            if finished {
                break;
            }
            let mut at = 0;
            if rdtp_node_poll_timeout(rx, &mut at) && at > now {
                now = at;
            }
            rdtp_node_handle_timeout(rx, now);
        }
        assert!(finished, "{cc}: did not finish");
        rdtp_node_free(rx);
        rdtp_node_free(srv);
    }
    out
}

/// The same fetch through the Rust API: the state names the controller reports.
fn states_of_the_controller(cc: &str) -> Vec<String> {
    let catalog = PatternCatalog::new(vec![("object".to_string(), SIZE, 7)]);
    let validation = ValidationConfig { enabled: false, ..ValidationConfig::default() };
    let mut server = Server::new(ServerConfig { validation, ..ServerConfig::default() });
    let cc: CcConfig = cc.parse().unwrap();
    // As the C ABI's defaults: the unit fits a 1500-byte MTU with the controller's options.
    let d = ReceiverConfig::default();
    let cfg = ReceiverConfig { unit: d.unit - cc.data_options_room(), cc, trace: true, ..d };
    let (from, server_addr): (SocketAddr, SocketAddr) =
        ("192.0.2.1:5000".parse().unwrap(), "192.0.2.2:6000".parse().unwrap());
    let mut rx = Receiver::new(cfg, server_addr, Target::Name("object".into()), Time::from_nanos(0));
    let (mut req, mut dgram, mut buf) = (vec![0u8; RDTP_MAX_REQUEST], vec![0u8; RDTP_MAX_DATAGRAM], [0u8; 65536]);
    let mut now = 1_000_000u64;
    let mut out = Vec::new();
    let mut finished = false;
    for _ in 0..1_000_000 {
        while let Some(t) = rx.poll_transmit(Time::from_nanos(now), &mut req) {
            let mut reply = server.handle(Time::from_nanos(now), from, &catalog, &req[..t.len]);
            let mut replies = Vec::new();
            while let Some(m) = reply.next_datagram(&mut dgram) {
                replies.push(dgram[..m].to_vec());
            }
            for r in replies {
                rx.handle_datagram(Time::from_nanos(now + DELAY_NS), server_addr, &r);
            }
        }
        now += DELAY_NS;
        while let Some(e) = rx.poll_event() {
            match e {
                Event::Congestion(c) => out.push(c.state.to_string()),
                Event::Finished => finished = true,
                _ => {}
            }
        }
        while rx.read(&mut buf) > 0 {}
        if finished {
            break;
        }
        if let Some(at) = rx.poll_timeout()
            && at.as_nanos() > now
        {
            now = at.as_nanos();
        }
        rx.handle_timeout(Time::from_nanos(now));
    }
    out
}

#[test]
fn every_controller_reports_its_own_state_names_through_the_abi() {
    for e in CONTROLLERS {
        let (abi, own) = (states_through_the_abi(e.name), states_of_the_controller(e.name));
        assert!(!abi.is_empty(), "{}: no state reported", e.name);
        let distinct = |v: &[String]| v.iter().cloned().collect::<std::collections::BTreeSet<String>>();
        assert!(abi == own, "{}: the ABI said {:?}, the controller {:?}", e.name, distinct(&abi), distinct(&own));
    }
    // The two the old table did not know.
    assert!(states_through_the_abi("sirc").iter().any(|s| s == "idg"));
    assert!(states_through_the_abi("icp").iter().any(|s| s == "aimd"));
}
