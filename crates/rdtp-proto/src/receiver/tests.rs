//! Receiver ↔ server through a scripted, lossless-by-default pipe with a fixed delay.
//! (The network harness with bottlenecks and impairments is the `rdtp-harness` crate.)

use core::time::Duration;

use super::*;
use crate::cc::CcConfig;
use crate::cc::registry::{CONTROLLERS, Entry};
use crate::recovery::BbrCdLoss;
use crate::server::{Catalog, MemoryCatalog, Server};

/// The receiver's address as the server sees it.
fn client() -> std::net::SocketAddr {
    "192.0.2.1:5000".parse().unwrap()
}

/// The server's address: the receiver's peer, and the source of every answer (forged ones
/// too: an attacker spoofs it).
fn server_addr() -> std::net::SocketAddr {
    "192.0.2.2:6000".parse().unwrap()
}

/// Answers forged for one datagram the receiver sent.
type Attacker = Box<dyn FnMut(&[u8]) -> Vec<Vec<u8>>>;

/// Moves datagrams between one receiver and a server with `delay` each way, and lets a
/// filter drop Data packets by unit index (first transmission only, if `once`).
struct Pipe {
    rx: Receiver,
    server: Server,
    catalog: MemoryCatalog,
    now: Time,
    delay: Duration,
    /// Datagrams in flight: (arrival time, to_server, bytes).
    wire: Vec<(Time, bool, Vec<u8>)>,
    drop_units: Vec<u64>,
    dropped: Vec<u64>,
    /// Probability of losing any datagram, either way.
    loss: f64,
    rng: rand_pcg::Pcg32,
    /// Sees every datagram the receiver sends and may forge answers, which reach the
    /// receiver before the genuine ones (the attacker is nearer).
    attacker: Option<Attacker>,
    /// From then on the server is replaced by one with a new secret (a restart).
    restart_at: Option<Time>,
    /// From then on nothing reaches the server (it died).
    dead_at: Option<Time>,
    /// Units whose next Data has a byte flipped on the way (a corrupt cache), once each.
    corrupt_units: Vec<u64>,
    /// Blocks whose next Proof is lost, once each.
    drop_proofs: Vec<u64>,
    /// Data answering requests with these tags is lost (an attacker on the path that
    /// drops the genuine answers to the requests it forged answers to).
    drop_answers_to: std::rc::Rc<std::cell::RefCell<Vec<u32>>>,
    /// From then on the server serves this catalogue instead (the object changed).
    swap_catalog_at: Option<(Time, MemoryCatalog)>,
    /// Probability that a Data packet has one byte of its payload flipped on the way.
    corrupt_fraction: f64,
    /// Units whose every Data has the same byte flipped (a source serving wrong bytes).
    always_corrupt: Vec<u64>,
    /// Mark every Data `COALESCED`, as a router does for a request that joined another's.
    coalesced: bool,
    /// The driver calls `handle_timeout` this long after each deadline (a loaded machine).
    timer_lateness: Duration,
}

impl Pipe {
    fn new(content: Vec<u8>, target: impl FnOnce(&MemoryCatalog) -> Target, cfg: ReceiverConfig) -> Pipe {
        let catalog = MemoryCatalog::new([("file".to_string(), content)]);
        let now = Time::from_millis(1);
        let rx = Receiver::new(cfg, server_addr(), target(&catalog), now);
        Pipe {
            rx,
            server: Server::default(),
            catalog,
            now,
            delay: Duration::from_millis(5),
            wire: vec![],
            drop_units: vec![],
            dropped: vec![],
            loss: 0.0,
            rng: rand_core::SeedableRng::seed_from_u64(1),
            attacker: None,
            restart_at: None,
            dead_at: None,
            corrupt_units: vec![],
            drop_proofs: vec![],
            drop_answers_to: Default::default(),
            swap_catalog_at: None,
            corrupt_fraction: 0.0,
            always_corrupt: vec![],
            coalesced: false,
            timer_lateness: Duration::ZERO,
        }
    }

    /// Run for `ms` milliseconds without reading: the server answers each request at once
    /// (no delay, no loss), and the receiver's timers are handled every millisecond.
    fn run_unread(&mut self, ms: u64) {
        let mut buf = vec![0u8; 65536];
        for _ in 0..ms {
            while let Some(t) = self.rx.poll_transmit(self.now, &mut buf) {
                let req = buf[..t.len].to_vec();
                let mut reply = self.server.handle(self.now, client(), &self.catalog, &req);
                let mut out = vec![];
                let mut b2 = vec![0u8; 65536];
                while let Some(m) = reply.next_datagram(&mut b2) {
                    out.push(b2[..m].to_vec());
                }
                for d in out {
                    self.rx.handle_datagram(self.now, server_addr(), &d);
                }
            }
            self.now += Duration::from_millis(1);
            self.rx.handle_timeout(self.now);
        }
    }

    /// Run until the receiver finishes or fails, or `limit` passes. Returns all bytes read.
    fn run(&mut self, limit: Duration) -> Vec<u8> {
        let end = self.now + limit;
        let mut out = vec![];
        let mut buf = vec![0u8; 65536];
        let mut rbuf = vec![0u8; 100_000];
        while self.now < end {
            while let Some(n) = self.rx.poll_transmit(self.now, &mut buf).map(|t| t.len) {
                if let Some(a) = self.attacker.as_mut() {
                    for forged in a(&buf[..n]) {
                        self.wire.push((self.now + self.delay / 2, false, forged));
                    }
                }
                self.wire.push((self.now + self.delay, true, buf[..n].to_vec()));
            }
            // Seed 000 §3.3: the retransmission timer runs whenever units are outstanding.
            assert!(
                self.rx.inflight() == 0 || self.rx.path().loss_deadline().is_some(),
                "{} units in flight at {:?} but no retransmission timer",
                self.rx.inflight(),
                self.now
            );
            loop {
                let n = self.rx.read(&mut rbuf);
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&rbuf[..n]);
            }
            if self.rx.is_finished() || self.rx.error().is_some() {
                break;
            }
            // Next thing to happen.
            let next_wire = self.wire.iter().map(|w| w.0).min();
            let next_timer = self.rx.poll_timeout().map(|t| t + self.timer_lateness);
            let Some(t) = [next_wire, next_timer].into_iter().flatten().min() else { break };
            self.now = self.now.max(t);
            if next_wire.is_some_and(|w| w <= self.now) {
                let i = self.wire.iter().position(|w| w.0 <= self.now).unwrap();
                let (_, to_server, bytes) = self.wire.remove(i);
                if self.loss > 0.0
                    && f64::from(rand_core::Rng::next_u32(&mut self.rng)) < self.loss * f64::from(u32::MAX)
                {
                    continue;
                }
                if to_server && self.dead_at.is_some_and(|t| self.now >= t) {
                    continue;
                }
                if to_server && self.swap_catalog_at.as_ref().is_some_and(|(t, _)| self.now >= *t) {
                    self.catalog = self.swap_catalog_at.take().unwrap().1;
                }
                if to_server && self.restart_at.is_some_and(|t| self.now >= t) {
                    self.restart_at = None;
                    let mut config = crate::server::ServerConfig::default();
                    config.validation.secret = [9; 32];
                    self.server = Server::new(config);
                }
                if to_server {
                    let mut reply = self.server.handle(self.now, client(), &self.catalog, &bytes);
                    while let Some(n) = reply.next_datagram(&mut buf) {
                        self.wire.push((self.now + self.delay, false, buf[..n].to_vec()));
                    }
                } else {
                    let mut bytes = bytes;
                    if let Ok(Packet::Proof(pr)) = Packet::decode(&bytes)
                        && let Some(i) = self.drop_proofs.iter().position(|&b| b == pr.block)
                    {
                        self.drop_proofs.remove(i);
                        continue;
                    }
                    if let Ok(Packet::Data(d)) = Packet::decode(&bytes) {
                        if self.drop_answers_to.borrow().contains(&d.tag) {
                            continue;
                        }
                        let u = d.offset / u64::from(self.rx.config().unit);
                        if let Some(i) = self.drop_units.iter().position(|&x| x == u) {
                            self.drop_units.remove(i);
                            self.dropped.push(u);
                            continue;
                        }
                        let payload = d.payload.len();
                        if let Some(i) = self.corrupt_units.iter().position(|&x| x == u) {
                            self.corrupt_units.remove(i);
                            let last = bytes.len() - 1;
                            bytes[last] ^= 0x5a;
                        }
                        if self.always_corrupt.contains(&u) {
                            let last = bytes.len() - 1;
                            bytes[last] ^= 0x3c;
                        }
                        if self.corrupt_fraction > 0.0
                            && f64::from(rand_core::Rng::next_u32(&mut self.rng))
                                < self.corrupt_fraction * f64::from(u32::MAX)
                        {
                            let at = rand_core::Rng::next_u32(&mut self.rng) as usize % payload;
                            let i = bytes.len() - payload + at;
                            bytes[i] ^= 1 << (at % 8);
                        }
                        if self.coalesced {
                            crate::wire::set_data_flags(&mut bytes, crate::wire::DataFlags::COALESCED);
                        }
                    }
                    self.rx.handle_datagram(self.now, server_addr(), &bytes);
                }
            } else {
                self.rx.handle_timeout(self.now);
            }
        }
        out
    }
}

fn content(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 % 253) as u8).collect()
}

fn cfg(cc: &str) -> ReceiverConfig {
    ReceiverConfig { cc: CcConfig::from_name(cc).unwrap(), unit: 1000, ..ReceiverConfig::default() }
}

#[test]
fn fetch_by_name_eid_and_known() {
    let data = content(123_456);
    let eid = Eid::of(&data);
    for target in [Target::Name("file".into()), Target::Eid(eid), Target::Known { eid, size: data.len() as u64 }] {
        let mut p = Pipe::new(data.clone(), |_| target.clone(), cfg("bbr"));
        let got = p.run(Duration::from_secs(10));
        assert!(p.rx.is_finished(), "{target:?}: {:?}", p.rx.error());
        assert_eq!(got, data);
        assert_eq!(p.rx.size(), Some(data.len() as u64));
        let s = p.rx.stats();
        assert_eq!(s.units_received, 124);
        assert_eq!(s.units_rerequested, 0);
        assert_eq!(s.duplicates, 0);
    }
}

#[test]
fn every_controller_repairs_scripted_losses() {
    let data = content(300_000);
    for cc in CcConfig::NAMES {
        let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), cfg(cc));
        // Lose the first unit (only a timeout can repair it while little is in flight),
        // a unit in mid-transfer (fast re-request), and the last unit.
        p.drop_units = vec![0, 150, 150, 299];
        let got = p.run(Duration::from_secs(30));
        assert!(p.rx.is_finished(), "{cc}: {:?}", p.rx.error());
        assert_eq!(got, data, "{cc}");
        let s = p.rx.stats();
        p.dropped.sort();
        assert_eq!(p.dropped, vec![0, 150, 150, 299], "{cc}");
        assert!(s.units_rerequested >= 4, "{cc}: {s:?}");
        assert!(s.timeouts >= 1, "{cc}: {s:?}");
    }
}

#[test]
fn fast_rerequest_repairs_without_timeout() {
    let data = content(2_000_000);
    let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), cfg("fixed"));
    p.drop_units = vec![500];
    let got = p.run(Duration::from_secs(30));
    assert_eq!(got, data);
    let s = p.rx.stats();
    assert_eq!((s.timeouts, s.fast_recoveries, s.units_rerequested), (0, 1, 1), "{s:?}");
}

/// Issue 23 item 11: a Data a router marked `COALESCED` left for another receiver's earlier
/// request; its time since this receiver's request is no round trip, so no RTT sample comes
/// from it (BBR sized its window on such samples' min RTT). It is delivered all the same.
#[test]
fn data_marked_coalesced_gives_no_rtt_sample() {
    let data = content(60_000);
    for coalesced in [false, true] {
        let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), cfg("bbr"));
        p.coalesced = coalesced;
        assert_eq!(p.run(Duration::from_secs(10)), data);
        let s = p.rx.stats();
        if coalesced {
            assert_eq!((s.rtt_samples, s.rtt_min), (0, None), "{s:?}");
        } else {
            assert!(s.rtt_samples > 0 && s.rtt_min >= Some(Duration::from_millis(10)), "{s:?}");
        }
    }
}

#[test]
fn unknown_name_fails_with_not_found() {
    let mut p = Pipe::new(content(10), |_| Target::Name("missing".into()), cfg("bbr"));
    p.run(Duration::from_secs(5));
    // Named with the node that said so (a resolve is refused at once, not confirmed).
    assert_eq!(p.rx.error(), Some(&FetchError::NotFound("missing, says the origin (1 hop away)".into())));
    assert!(p.rx.poll_event().is_some_and(|e| matches!(e, Event::Failed(FetchError::NotFound(_)))));
}

#[test]
fn silent_server_times_out() {
    let mut p = Pipe::new(
        content(10),
        |_| Target::Name("file".into()),
        ReceiverConfig { idle_timeout: Duration::from_secs(3), ..cfg("bbr") },
    );
    p.delay = Duration::from_secs(3600); // nothing ever comes back
    p.run(Duration::from_secs(60));
    assert_eq!(p.rx.error(), Some(&FetchError::Timeout(Duration::from_secs(3))));
}

#[test]
fn tampered_content_fails_validation() {
    let data = content(50_000);
    let wrong = Eid::of(b"something else");
    let mut p = Pipe::new(data.clone(), |_| Target::Known { eid: wrong, size: data.len() as u64 }, cfg("bbr"));
    // The server knows the object under its real EID: make the receiver's EID resolvable
    // by serving the same bytes under `wrong`.
    struct Lying(MemoryCatalog, Eid, Eid);
    impl Catalog for Lying {
        fn size_of(&self, e: &Eid) -> Option<u64> {
            self.0.size_of(if *e == self.1 { &self.2 } else { e })
        }
        fn read_at(&self, e: &Eid, o: u64, b: &mut [u8]) -> Result<(), crate::server::ReadError> {
            self.0.read_at(if *e == self.1 { &self.2 } else { e }, o, b)
        }
        fn resolve(&self, n: &str) -> Option<(Eid, u64)> {
            self.0.resolve(n)
        }
        fn name_of(&self, e: &Eid) -> Option<&str> {
            self.0.name_of(e)
        }
        fn len(&self) -> usize {
            self.0.len()
        }
        fn entry(&self, i: usize) -> Option<crate::wire::ListEntry<'_>> {
            self.0.entry(i)
        }
        fn outboard(&self, e: &Eid) -> Option<&crate::tree::Outboard> {
            self.0.outboard(if *e == self.1 { &self.2 } else { e })
        }
    }
    let lying = Lying(p.catalog.clone(), wrong, Eid::of(&data));
    // Drive by hand with the lying catalogue.
    let mut buf = vec![0u8; 65536];
    let mut now = p.now;
    for _ in 0..10_000 {
        let mut sent = vec![];
        while let Some(t) = p.rx.poll_transmit(now, &mut buf) {
            sent.push(buf[..t.len].to_vec());
        }
        for req in sent {
            let mut reply = p.server.handle(now, client(), &lying, &req);
            let mut out = vec![];
            while let Some(n) = reply.next_datagram(&mut buf) {
                out.push(buf[..n].to_vec());
            }
            for d in out {
                p.rx.handle_datagram(now, server_addr(), &d);
            }
        }
        if p.rx.error().is_some() || p.rx.is_finished() {
            break;
        }
        now = p.rx.poll_timeout().unwrap_or(now).max(now + Duration::from_micros(10));
        p.rx.handle_timeout(now);
    }
    // Block 0 never verifies: the fetch fails after its tries, and not one byte of the
    // wrong content was readable.
    assert_eq!(p.rx.error(), Some(&FetchError::BadBlock { block: 0, offset: 0 }));
    assert_eq!(p.rx.delivered_bytes(), 0);
    // Every block of the (one-group) object fails alone too; block 0 fails a third time first.
    assert!(p.rx.stats().bad_blocks >= u64::from(MAX_BAD_BLOCK_TRIES), "{:?}", p.rx.stats());
}

#[test]
fn empty_object_finishes_at_once() {
    let mut p = Pipe::new(vec![], |_| Target::Name("file".into()), cfg("aimd"));
    let got = p.run(Duration::from_secs(5));
    assert!(p.rx.is_finished());
    assert!(got.is_empty());
}

#[test]
fn slow_reader_limits_requests_to_the_receive_window() {
    let data = content(500_000);
    let mut p = Pipe::new(
        data.clone(),
        |_| Target::Name("file".into()),
        ReceiverConfig { recv_window: 50_000, ..cfg("fixed") },
    );
    // Run without reading: at most 50 units may ever be requested.
    p.run_unread(200);
    assert_eq!(p.rx.stats().units_requested, 50);
    // Only whole verified blocks are readable: 3 × 16 KiB of the 50 000 bytes.
    assert_eq!(p.rx.readable(), 49_152);
    // Reading frees the window and the rest follows.
    let mut rest = vec![0u8; 50_000];
    assert_eq!(p.rx.read(&mut rest), 49_152);
    rest.truncate(49_152);
    let mut got = rest;
    got.extend(p.run(Duration::from_secs(10)));
    assert_eq!(got, data);
}

#[test]
fn heavy_loss_both_ways_every_controller_keeps_its_timer_and_finishes() {
    // 10 % of all datagrams lost in each direction. The Pipe asserts after every step that
    // the retransmission timer is armed whenever units are in flight (this once failed for
    // aimd: an expiry that left a full window of recent requests disarmed the timer).
    let data = content(1_000_000);
    for cc in CcConfig::NAMES {
        for seed in 1..4 {
            let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), cfg(cc));
            p.loss = 0.10;
            p.rng = rand_core::SeedableRng::seed_from_u64(seed);
            let got = p.run(Duration::from_secs(600));
            assert!(p.rx.is_finished(), "{cc} seed {seed}: {:?}", p.rx.error());
            assert_eq!(got, data, "{cc} seed {seed}");
        }
    }
}

/// Lost proofs are asked for again together, soon after later proofs arrive — not one
/// per RTO as the verifier reaches each block (at 100 Mbit/s / 100 ms that stalled `bbr`
/// for seconds behind a full receive window after Startup's losses).
#[test]
fn lost_proofs_are_asked_again_together_not_one_rto_each() {
    let data = content(4_000_000);
    let finish = |drop: Vec<u64>| {
        // A receive window of 64 blocks: a verifier that waits soon stops the transfer.
        let c = ReceiverConfig { recv_window: 1 << 20, ..cfg("fixed") };
        let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), c);
        p.drop_proofs = drop;
        let got = p.run(Duration::from_secs(60));
        assert!(p.rx.is_finished(), "{:?}", p.rx.error());
        assert_eq!(got, data);
        assert!(p.drop_proofs.is_empty(), "every scripted loss happened");
        (p.now, p.rx.stats().proof_requests, p.rx.stats().proofs_received)
    };
    let (clean, asked, got) = finish(vec![]);
    assert_eq!(asked, got);
    // Scattered losses (as a queue overflowing in Startup makes them), later units arriving.
    // Groups of 16 blocks: proofs are asked for blocks 0, 32, 64, … (the others need none).
    let lost: Vec<u64> = (32..245).step_by(64).collect();
    let (late, asked_again, _) = finish(lost.clone());
    assert_eq!(asked_again, asked + lost.len() as u64, "each lost proof asked for once more");
    // One RTT is 10 ms here. Asking again only when the verifier reached each block cost
    // 40 ms (an RTT per lost proof once the window filled); asked together as soon as later
    // proofs arrive, the losses are repaired before the verifier gets there.
    assert!(late - clean < Duration::from_millis(20), "{:?} later", late - clean);
}

#[test]
fn a_too_small_buffer_sends_nothing_and_loses_nothing() {
    let data = content(100_000);
    let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), cfg("bbr"));
    p.drop_units = vec![3, 4, 5];
    // Run a little, then poll with a small buffer while units are lost: nothing may go out
    // and nothing may be forgotten.
    let mut got = p.run(Duration::from_millis(30));
    let mut small = [0u8; 100];
    for _ in 0..10 {
        assert_eq!(p.rx.poll_transmit(p.now + Duration::from_secs(2), &mut small), None);
    }
    got.extend(p.run(Duration::from_secs(30)));
    assert!(p.rx.is_finished(), "{:?}", p.rx.error());
    assert_eq!(got, data);
}

#[test]
fn after_a_timeout_every_controller_rerequests_from_a_window_of_inflight_plus_one() {
    // A whole window is lost (an outage): nothing arrives, the timer expires and seed 000 §3.3
    // declares every outstanding unit lost. The re-requests must not leave in one burst of the
    // controller's window (64 for `fixed`, half of it for `aimd`) but start from in-flight + 1
    // (RFC 5681 §3.1, Linux tcp_enter_loss) and grow with arrivals.
    let data = content(1_000_000);
    // BBR-CD's own loss detector (S1 §III) declares units lost one by one at T + RTprop +
    // α·δ: there is no RFC 6298 expiry declaring a whole window lost at once. Seed 003's
    // `cctcp`, `cctcp-single` and `icp` are their own loss detectors too, with one timer per
    // unit, and each loss doubles their RTO (S3 §II-B; ICP's backoff) while Karn's rule
    // takes no sample from a unit asked for again: here, where each of 200 new units is
    // lost once, the timer backs off past the 10 s idle timeout before the losses end.
    // `seed003_controllers_rerequest_one_unit_at_a_time_after_expiries` is their test.
    let per_unit = |e: &&Entry| e.owns_loss_detection() || e.loss_detector() == BbrCdLoss::NAME;
    for cc in CONTROLLERS.iter().filter(|e| !per_unit(e)).map(|e| e.name) {
        let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), ReceiverConfig { trace: true, ..cfg(cc) });
        // Let the window open, then lose everything outstanding once.
        let mut got = p.run(Duration::from_millis(60));
        let (una, next) = {
            let units: Vec<u64> = std::iter::from_fn(|| p.rx.poll_event())
                .filter_map(|e| match e {
                    Event::Requested { units, .. } => Some(units),
                    _ => None,
                })
                .flatten()
                .collect();
            (p.rx.delivered_bytes() / 1000, units.iter().max().map_or(0, |m| m + 1))
        };
        let outstanding = p.rx.inflight();
        assert!(outstanding >= 4, "{cc}: only {outstanding} in flight");
        p.drop_units = (una..next + 200).collect();
        got.extend(p.run(Duration::from_secs(30)));
        assert!(p.rx.is_finished(), "{cc}: {:?}", p.rx.error());
        assert_eq!(got, data, "{cc}");
        assert!(p.rx.stats().timeouts >= 1, "{cc}");
        // The first re-requests after the expiry, all at one instant: at most in-flight + 1.
        let mut first: Option<(Time, u64)> = None;
        while let Some(e) = p.rx.poll_event() {
            if let Event::Requested { time, units, retransmission: true } = e {
                match first {
                    None => first = Some((time, units.len() as u64)),
                    Some((t, n)) if t == time => first = Some((t, n + units.len() as u64)),
                    Some(_) => {}
                }
            }
        }
        let (_, burst) = first.expect("re-requests after the timeout");
        assert!(burst <= 1, "{cc}: {burst} units re-requested at once after the timeout");
    }
}

/// The previous test for seed 003's controllers, with per-unit timers: a window lost (and
/// the next three units too, so that nothing is left in flight when the timers run out).
/// They finish, and re-request one unit at a time — each as its source's window and pacing
/// admit it (CCTCP, S3 §II-B, eq. 4) or from the receiver's loss window (ICP).
#[test]
fn seed003_controllers_rerequest_one_unit_at_a_time_after_expiries() {
    let data = content(1_000_000);
    for cc in CONTROLLERS.iter().filter(|e| e.owns_loss_detection()).map(|e| e.name) {
        let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), ReceiverConfig { trace: true, ..cfg(cc) });
        let mut got = p.run(Duration::from_millis(60));
        let requested: Vec<u64> = std::iter::from_fn(|| p.rx.poll_event())
            .filter_map(|e| match e {
                Event::Requested { units, .. } => Some(units),
                _ => None,
            })
            .flatten()
            .collect();
        let (una, next) = (p.rx.delivered_bytes() / 1000, requested.iter().max().map_or(0, |m| m + 1));
        assert!(p.rx.inflight() >= 2, "{cc}: only {} in flight", p.rx.inflight());
        p.drop_units = (una..next + 3).collect();
        got.extend(p.run(Duration::from_secs(30)));
        assert!(p.rx.is_finished(), "{cc}: {:?}", p.rx.error());
        assert_eq!(got, data, "{cc}");
        assert!(p.rx.stats().timeouts >= 1, "{cc}");
        let mut first: Option<(Time, u64)> = None;
        while let Some(e) = p.rx.poll_event() {
            if let Event::Requested { time, units, retransmission: true } = e {
                match first {
                    None => first = Some((time, units.len() as u64)),
                    Some((t, n)) if t == time => first = Some((t, n + units.len() as u64)),
                    Some(_) => {}
                }
            }
        }
        let (_, burst) = first.expect("re-requests after the timeout");
        assert!(burst <= 1, "{cc}: {burst} units re-requested at once after the timeout");
    }
}

/// Seed 001 §IV-D: BBR-CD asks for every new unit before it re-requests a lost one; the
/// other controllers re-request first (seed 000 §3.1).
#[test]
fn rerequests_wait_for_new_units_only_when_the_controller_says_so() {
    let data = content(300_000);
    for (cc, new_first) in [("bbr-cd", true), ("bbr-cd:new_first=false", false), ("bbr", false)] {
        let config = ReceiverConfig { trace: true, cc: cc.parse().unwrap(), ..cfg("bbr") };
        let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), config);
        p.drop_units = vec![20];
        let got = p.run(Duration::from_secs(30));
        assert_eq!(got, data, "{cc}");
        let mut requested = vec![];
        while let Some(e) = p.rx.poll_event() {
            if let Event::Requested { units, retransmission, .. } = e {
                requested.push((units, retransmission));
            }
        }
        let rerequest = requested.iter().position(|(u, r)| *r && u.contains(&20)).expect("unit 20 re-requested");
        let last_new = requested.iter().rposition(|(_, r)| !r).unwrap();
        assert_eq!(rerequest > last_new, new_first, "{cc}: re-request at {rerequest}, last new request at {last_new}");
    }
}

// ---- Forged answers (issue 11). The attacker knows everything public: the name, the EID,
// the size, the server's address. Off the path it must guess tags (random, 32 bits).

/// The tag of a request or resolve the receiver sent.
fn tag_of(d: &[u8]) -> Option<u32> {
    match Packet::decode(d).ok()? {
        Packet::Request(r) => Some(r.tag),
        Packet::ResolveRequest(r) => Some(r.tag),
        _ => None,
    }
}

fn encode(f: impl FnOnce(&mut [u8]) -> usize) -> Vec<u8> {
    let mut b = vec![0u8; 2048];
    let n = f(&mut b);
    b.truncate(n);
    b
}

fn forged_nack(code: NackCode, tag: u32, eid: Eid, offset: u64, length: u32) -> Vec<u8> {
    let n = Nack { code, hops: 0, tag, eid, offset, length, from: crate::NodeId::ORIGIN, detail: "" };
    encode(|b| n.encode(b).unwrap())
}

/// An attacker on the path: while `active()`, it sees each request and answers it with a
/// Busy carrying the right tag.
fn busy_to_every_request(eid: Eid, active: impl Fn() -> bool + 'static) -> Attacker {
    Box::new(move |seen| match Packet::decode(seen) {
        Ok(Packet::Request(r)) if active() => {
            vec![forged_nack(NackCode::Busy, r.tag, eid, r.range.offset, r.range.length)]
        }
        _ => vec![],
    })
}

/// A Data of `cfg`'s unit size (1000 bytes), all bytes 0xEE.
fn forged_data(tag: u32, eid: Eid, offset: u64, total_size: u64) -> Vec<u8> {
    let unit = 1000;
    let payload = vec![0xEE; unit.min(total_size - offset) as usize];
    let d = Data {
        flags: DataFlags(0),
        hops: 0,
        tag,
        eid,
        offset,
        total_size,
        served_by: crate::NodeId::ORIGIN,
        options: crate::wire::Options::EMPTY,
        payload: &payload,
    };
    encode(|b| d.encode(b).unwrap())
}

#[test]
fn forged_answers_from_off_the_path_do_not_change_the_outcome() {
    let data = content(400_000);
    let eid = Eid::of(&data);
    let size = data.len() as u64;
    let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), cfg("bbr"));
    let mut guess = 0x1234_5678u32;
    p.attacker = Some(Box::new(move |_seen| {
        // A few guesses per datagram the receiver sends: every kind of answer it takes.
        let mut out = vec![];
        for _ in 0..4 {
            guess = guess.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            out.push(forged_nack(NackCode::UnknownContent, guess, eid, 0, 0));
            out.push(forged_nack(NackCode::UnknownContent, guess, Eid([0; 32]), 0, 0));
            out.push(forged_nack(NackCode::UnknownContent, 0, eid, 0, 0));
            out.push(forged_nack(NackCode::Busy, guess, eid, 0, 64 * 1402));
            out.push(forged_data(guess, eid, 0, size));
            out.push(forged_data(0, eid, 1000, size));
            let other = Eid([7; 32]);
            let rr = ResolveResponse { tag: guess, eid: other, size: 6, name: "file" };
            out.push(encode(|b| rr.encode(b).unwrap()));
            let retry = Retry { tag: guess, token: &[1; 20] };
            out.push(encode(|b| retry.encode(b).unwrap()));
        }
        out
    }));
    let got = p.run(Duration::from_secs(30));
    assert!(p.rx.error().is_none(), "{:?}", p.rx.error());
    assert!(p.rx.is_finished());
    assert_eq!(got, data, "forged bytes reached the application");
    assert!(p.rx.stats().invalid > 100, "forgeries were not even seen: {}", p.rx.stats().invalid);
    assert_eq!(p.rx.stats().units_lost, 0, "a forged Busy was taken for congestion");
}

#[test]
fn forged_busy_from_on_the_path_does_not_keep_a_dead_fetch_alive() {
    let data = content(4_000_000);
    let mut c = cfg("bbr");
    c.idle_timeout = Duration::from_secs(2);
    let mut p = Pipe::new(data, |_| Target::Name("file".into()), c);
    p.dead_at = Some(p.now + Duration::from_millis(100));
    let eid = Eid::of(&content(4_000_000));
    p.attacker = Some(busy_to_every_request(eid, || true));
    let start = p.now;
    p.run(Duration::from_secs(60));
    assert!(matches!(p.rx.error(), Some(FetchError::Timeout(_))), "{:?}", p.rx.error());
    // Simulated time: it gave up one idle timeout (plus a timer's granularity) after the
    // server's last answer, not never.
    assert!(p.now - start < Duration::from_secs(4), "gave up only at {:?}", p.now - start);
}

// ---- The idle timeout counts the server's silence, not the receiver's own ----------------

/// A receiver holding back after Busy (units lost, nothing in flight) whose driver does not
/// run it for three idle timeouts (a process stopped, or descheduled on an overloaded
/// machine) asks again when it runs again, instead of failing at once; if the server stays
/// silent it fails one idle timeout of its own running later (less the silence it had
/// already waited before it stopped). An attacker on the path answers every request with
/// Busy throughout: that does not keep the fetch alive either.
#[test]
fn a_receiver_not_run_past_its_idle_timeout_asks_again_before_it_gives_up() {
    let data = content(400_000);
    let eid = Eid::of(&data);
    let idle = Duration::from_secs(2);
    let c = ReceiverConfig { idle_timeout: idle, ..cfg("bbr") };
    let mut p = Pipe::new(data.clone(), |_| Target::Known { eid, size: 400_000 }, c);
    let busy = std::rc::Rc::new(std::cell::Cell::new(false));
    let on = busy.clone();
    p.attacker = Some(busy_to_every_request(eid, move || on.get()));
    p.run(Duration::from_millis(50));
    assert!(p.rx.stats().units_received > 0 && !p.rx.is_finished());
    // The server dies; every request from now on gets a Busy.
    p.dead_at = Some(p.now);
    busy.set(true);
    let mut last_answer = p.now;
    let held = |rx: &Receiver| rx.inflight() == 0 && rx.transfer.as_ref().is_some_and(|t| t.window.has_lost());
    let answers = |rx: &Receiver| rx.stats().units_received + rx.stats().proofs_received;
    while !held(&p.rx) {
        let before = answers(&p.rx);
        p.run(Duration::from_nanos(1));
        if answers(&p.rx) > before {
            last_answer = p.now;
        }
        assert!(p.rx.error().is_none(), "{:?}", p.rx.error());
    }
    // Stopped in the Busy hold, nothing of its own outstanding, for three idle timeouts;
    // whatever was on its way to it is lost. (The hold, up to 20 ms, and pacing's wait
    // after it still count as silence: they were not the receiver's lateness.)
    let stopped = p.now;
    p.wire.retain(|w| w.1);
    let woke = stopped + 3 * idle;
    p.now = woke;
    p.rx.handle_timeout(woke);
    assert!(p.rx.error().is_none(), "gave up on waking: {:?}", p.rx.error());
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let t = p.rx.poll_transmit(woke, &mut buf).expect("asks again on waking");
    assert!(matches!(Packet::decode(&buf[..t.len]), Ok(Packet::Request(_))));
    p.wire.push((woke + p.delay, true, buf[..t.len].to_vec()));
    p.run(Duration::from_secs(60));
    assert!(matches!(p.rx.error(), Some(FetchError::Timeout(_))), "{:?}", p.rx.error());
    let waited = p.now - woke;
    let before = stopped - last_answer;
    assert!(
        waited + before >= idle - Duration::from_millis(50) && waited + before <= idle,
        "gave up {waited:?} after waking, {before:?} after the last answer before it stopped"
    );
}

/// Stopped with requests in flight whose answers are lost meanwhile, for three idle
/// timeouts: on waking its retransmission timer is overdue, so it asks again (and finishes)
/// instead of taking its own absence for the server's silence.
#[test]
fn a_receiver_not_run_with_requests_in_flight_asks_again_on_waking() {
    let data = content(400_000);
    let idle = Duration::from_secs(2);
    let mut p =
        Pipe::new(data.clone(), |_| Target::Name("file".into()), ReceiverConfig { idle_timeout: idle, ..cfg("bbr") });
    let mut got = p.run(Duration::from_millis(50));
    assert!(p.rx.inflight() > 0 && !p.rx.is_finished());
    // Nothing reaches it while it is stopped: its answers are lost (its requests reach the server).
    p.wire.retain(|w| w.1);
    p.now += 3 * idle;
    p.rx.handle_timeout(p.now);
    assert!(p.rx.error().is_none(), "gave up on waking: {:?}", p.rx.error());
    got.extend(p.run(Duration::from_secs(30)));
    assert!(p.rx.is_finished(), "{:?}", p.rx.error());
    assert_eq!(got, data);
}

/// A driver always late by a little less than [`OVERDUE`] is on time: a forged Busy stream
/// against a dead server ends the fetch one idle timeout after the last answer, as for a
/// driver exactly on time.
#[test]
fn a_driver_late_by_less_than_overdue_gets_no_more_time_from_forged_busy() {
    let data = content(4_000_000);
    let eid = Eid::of(&data);
    let idle = Duration::from_secs(2);
    let c = ReceiverConfig { idle_timeout: idle, ..cfg("bbr") };
    let mut p = Pipe::new(data, |_| Target::Name("file".into()), c);
    p.timer_lateness = OVERDUE - Duration::from_millis(1);
    p.dead_at = Some(p.now + Duration::from_millis(100));
    p.attacker = Some(busy_to_every_request(eid, || true));
    let start = p.now;
    p.run(Duration::from_secs(60));
    assert!(matches!(p.rx.error(), Some(FetchError::Timeout(_))), "{:?}", p.rx.error());
    assert!(p.now - start < idle + Duration::from_millis(500), "gave up only at {:?}", p.now - start);
}

/// An application that stops reading for three idle timeouts (the receive window full,
/// nothing asked of the server) while its driver keeps calling the receiver: when it reads
/// again the fetch goes on. The time nothing was asked is not the server's silence.
#[test]
fn an_application_that_stops_reading_past_the_idle_timeout_does_not_end_the_fetch() {
    let data = content(500_000);
    let idle = Duration::from_secs(2);
    let c = ReceiverConfig { recv_window: 50_000, idle_timeout: idle, ..cfg("fixed") };
    let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), c);
    let mut got = p.run(Duration::from_millis(10)); // resolved, some read
    // Answers come at once; the driver runs every millisecond; nothing is read.
    p.run_unread(3 * idle.as_millis() as u64);
    assert_eq!(p.rx.inflight(), 0, "the receive window is full");
    assert!(p.rx.error().is_none(), "{:?}", p.rx.error());
    p.wire.clear();
    got.extend(p.run(Duration::from_secs(10)));
    assert!(p.rx.is_finished(), "{:?}", p.rx.error());
    assert_eq!(got, data);
}

#[test]
fn a_server_restart_mid_fetch_costs_a_retry_not_the_fetch() {
    let data = content(3_000_000);
    let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), cfg("bbr"));
    // After the first token was issued and part of the object arrived.
    p.restart_at = Some(p.now + Duration::from_millis(60));
    let got = p.run(Duration::from_secs(30));
    assert!(p.rx.error().is_none(), "{:?}", p.rx.error());
    assert_eq!(got, data);
    // One Retry for the first request, at least one more after the restart (the old
    // token's MAC does not verify under the new secret).
    assert!(p.rx.stats().retries >= 2, "retries {}", p.rx.stats().retries);
    assert!(p.server.stats().retries >= 1, "the new server never refused the old token");
}

#[test]
fn a_hop_that_never_accepts_its_tokens_ends_in_address_not_validated() {
    let mut c = cfg("bbr");
    c.idle_timeout = Duration::from_secs(2);
    let mut p = Pipe::new(content(100_000), |_| Target::Name("file".into()), c);
    p.dead_at = Some(Time::ZERO);
    // A first hop that answers every resolve with a Retry and a new token each time.
    let mut n = 0u8;
    p.attacker = Some(Box::new(move |seen| {
        let Some(tag) = tag_of(seen) else { return vec![] };
        n = n.wrapping_add(1);
        let token = [n; 20];
        vec![encode(|b| Retry { tag, token: &token }.encode(b).unwrap())]
    }));
    p.run(Duration::from_secs(60));
    assert_eq!(p.rx.error(), Some(&FetchError::AddressNotValidated));
    assert!(p.rx.stats().retries <= u64::from(MAX_RETRIES_IN_A_ROW) + 1, "obeyed {} Retries", p.rx.stats().retries);
}

#[test]
fn a_corrupted_block_is_fetched_again_from_the_origin() {
    let data = content(600_000);
    let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), cfg("bbr"));
    // Units (1000 bytes) in block 0 (a group of its own: the first groups ramp up, 0, 1,
    // 2–3, 4–7, 8–15) and in the groups of blocks 16–31 and 32–36; unit 262 straddles
    // blocks 15 and 16, and its last byte, the one corrupted, is in block 16.
    p.corrupt_units = vec![3, 262, 560];
    let origin_requests = std::rc::Rc::new(std::cell::Cell::new(0));
    let seen = origin_requests.clone();
    p.attacker = Some(Box::new(move |d| {
        let origin = match Packet::decode(d) {
            Ok(Packet::Request(r)) => r.flags.contains(RequestFlags::ORIGIN),
            Ok(Packet::ProofRequest(r)) => r.flags.contains(RequestFlags::ORIGIN),
            _ => false,
        };
        seen.set(seen.get() + usize::from(origin));
        vec![]
    }));
    let got = p.run(Duration::from_secs(30));
    assert!(p.rx.error().is_none(), "{:?}", p.rx.error());
    assert_eq!(got, data);
    assert!(p.corrupt_units.is_empty(), "every corruption was sent");
    // Block 0 failed as the block it is; the two other groups failed once each and were
    // narrowed to their one bad 16 KiB block (16, 34); only the units overlapping the three
    // bad blocks were asked for again (17 or 18 units each).
    let s = p.rx.stats();
    assert_eq!((s.bad_groups, s.bad_blocks), (2, 3), "{s:?}");
    assert!(s.units_rerequested <= 3 * 18, "{} units asked for again", s.units_rerequested);
    assert!(origin_requests.get() >= 3, "re-requests bypass caches: {}", origin_requests.get());
    // Proofs: one for group 0 (the others need none), one per block of each failed group
    // (37 blocks), and one more per bad block.
    assert!(s.proofs_received <= 1 + 37 + 3, "{} proofs", s.proofs_received);
}

#[test]
fn forged_proofs_and_forged_data_with_the_right_tag_never_reach_the_application() {
    // An attacker on the path answers every request first: Data with the right tag, the
    // public EID and size, and wrong bytes; proofs with the right tag and wrong hashes.
    let data = content(300_000);
    let eid = Eid::of(&data);
    let size = data.len() as u64;
    let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), cfg("bbr"));
    // It forges the answers to the first requests, then stops: the fetch must complete
    // byte-exact. (An attacker on the path that never stops can make a fetch fail — as it
    // could by dropping packets — but never deliver a wrong byte.)
    let mut budget = 6;
    p.attacker = Some(Box::new(move |seen| {
        if budget == 0 {
            return vec![];
        }
        budget -= 1;
        match Packet::decode(seen) {
            Ok(Packet::Request(r)) => r.ranges().map(|rg| forged_data(r.tag, eid, rg.offset, size)).collect(),
            Ok(Packet::ProofRequest(q)) => {
                let sib = vec![0xAB; 32 * usize::from(q.depth)];
                let pr = Proof {
                    hops: 0,
                    tag: q.tag,
                    eid,
                    block: q.block,
                    served_by: crate::NodeId::ORIGIN,
                    siblings: &sib,
                };
                vec![encode(|b| pr.encode(b).unwrap())]
            }
            _ => vec![],
        }
    }));
    let mut delivered = Vec::new();
    let got = p.run(Duration::from_secs(60));
    delivered.extend_from_slice(&got);
    assert!(p.rx.error().is_none(), "{:?}", p.rx.error());
    assert_eq!(delivered, data, "a forged byte reached the application");
    assert!(p.rx.stats().bad_blocks > 0, "the forgeries were never even tried");
    assert!(p.rx.stats().bad_blocks < u64::from(MAX_BAD_BLOCK_TRIES) * 2);
}

// ---- Refusals: Busy (issue 23 item 3) ----------------------------------------------------

/// A server whose send budget (a fair share of `rate` bytes/s, `ShareConfig`) is the
/// bottleneck, on a loopback-like path (0.1 ms each way, no rate limit).
fn budgeted(data: Vec<u8>, rate: f64, cc: &str) -> Pipe {
    let mut p = Pipe::new(data, |_| Target::Name("file".into()), cfg(cc));
    let share = crate::server::ShareConfig { rate: Some(rate), ..Default::default() };
    p.server = Server::new(crate::server::ServerConfig { share, ..Default::default() });
    p.delay = Duration::from_micros(100);
    p
}

/// Issue 23 item 3: a lone receiver of a server whose budget is far below the link answered
/// every Busy with a re-request one RTT later — 10 019 requests and 9 981 Busy for a
/// 2 140-unit object, and the summary counted the refused units as retransmissions (99.63 %).
/// It must back off (requests ≤ 1.2 × units), still use the budget, and count Busy apart.
#[test]
fn busy_answers_make_the_receiver_back_off_and_are_not_retransmissions() {
    let data = content(2_140_000); // 2 140 units of 1000 bytes
    let units = 2140;
    let rate = 2.5e6; // 20 Mbit/s of Data
    for cc in ["bbr", "aimd", "cubic", "fixed"] {
        let mut p = budgeted(data.clone(), rate, cc);
        let start = p.now;
        let got = p.run(Duration::from_secs(60));
        assert!(p.rx.is_finished(), "{cc}: {:?}", p.rx.error());
        assert_eq!(got, data, "{cc}");
        let s = p.rx.stats();
        assert!(s.busy > 0, "{cc}: the budget never refused anything: {s:?}");
        assert!(
            s.requests_sent * 10 <= units * 12,
            "{cc}: {} requests, {} Busy for {units} units",
            s.requests_sent,
            s.busy
        );
        // Nothing was lost on this path: a refused unit asked for again is no retransmission.
        assert_eq!((s.units_rerequested, s.units_lost), (0, 0), "{cc}: {s:?}");
        assert!(s.units_refused > 0 && s.units_requested >= units + s.units_refused, "{cc}: {s:?}");
        // The budget is used: the transfer takes at most 1/0.85 of what the budget needs
        // (Data bytes, headers included, at `rate`), in virtual time.
        let need = (units * (1000 + DATA_HEADER_LEN as u64)) as f64 / rate;
        let took = (p.now - start).as_secs_f64();
        assert!(took <= need / 0.85, "{cc}: {took:.3} s for what the budget serves in {need:.3} s");
    }
}

/// Every controller backs off on Busy, on a loopback-like path and on a 40 ms one: the fetch
/// completes byte-exact with requests ≤ 1.2 × units (0036bef: up to 5.6 million requests
/// for 2 140 units).
#[test]
fn every_controller_backs_off_on_busy() {
    let data = content(2_140_000);
    let units = 2140;
    for cc in CcConfig::NAMES {
        for delay in [Duration::from_micros(100), Duration::from_millis(20)] {
            let mut p = budgeted(data.clone(), 2.5e6, cc);
            p.delay = delay;
            let got = p.run(Duration::from_secs(120));
            assert!(p.rx.is_finished(), "{cc} {delay:?}: {:?}", p.rx.error());
            assert_eq!(got, data, "{cc} {delay:?}");
            let s = p.rx.stats();
            assert!(
                s.requests_sent * 10 <= units * 12,
                "{cc} {delay:?}: {} requests, {} Busy",
                s.requests_sent,
                s.busy
            );
        }
    }
}

// ---- Terminal Nacks are hints until confirmed (issue 23 item 6) ---------------------------

/// A Nack as `node` (`hops` routers away) would send it, with the right tag and the detail
/// "forged".
fn nack_from(code: NackCode, r: &Request<'_>, from: crate::NodeId, hops: u8, detail: &str) -> Vec<u8> {
    let n = Nack { code, hops, tag: r.tag, eid: r.eid, offset: r.range.offset, length: r.range.length, from, detail };
    encode(|b| n.encode(b).unwrap())
}

/// 0036bef: one Nack with the right tag from an attacker on the path (nearer than the
/// server) ended the fetch within 0.09 s, its text printed as the server's. Now a forged
/// refusal of any of the four codes the issue names — alone, or with the genuine answer
/// to the refused request dropped — costs at most an RTO, and the fetch completes
/// byte-exact.
#[test]
fn one_forged_terminal_nack_mid_fetch_does_not_end_the_fetch() {
    let data = content(1_500_000);
    for code in [NackCode::UnknownContent, NackCode::Malformed, NackCode::TooLarge, NackCode::Internal] {
        for drop_genuine in [false, true] {
            let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), cfg("bbr"));
            let start = p.now;
            let dropped = p.drop_answers_to.clone();
            let mut fired = false;
            p.attacker = Some(Box::new(move |seen| match Packet::decode(seen) {
                // Mid-fetch: the first request for a unit past 500.
                Ok(Packet::Request(r)) if !fired && r.range.offset >= 500_000 => {
                    fired = true;
                    if drop_genuine {
                        dropped.borrow_mut().push(r.tag);
                    }
                    vec![nack_from(code, &r, crate::NodeId::ORIGIN, 0, "forged")]
                }
                _ => vec![],
            }));
            let got = p.run(Duration::from_secs(30));
            let what = format!("{code:?}, genuine answer dropped: {drop_genuine}");
            assert!(p.rx.is_finished(), "{what}: {:?}", p.rx.error());
            assert_eq!(got, data, "{what}");
            assert_eq!(p.rx.stats().nacks, 1, "{what}: the forged Nack was not even seen");
            // It cost at most one RTO (200 ms here) and a round trip: the clean fetch takes
            // well under a second in this pipe.
            assert!(p.now - start < Duration::from_millis(600), "{what}: took {:?}", p.now - start);
        }
    }
}

/// The object really went away mid-fetch (the server's file was rewritten): the refusal is
/// confirmed from the origin — every request after the first refusal carries ORIGIN — and
/// the fetch ends as "not found" naming the node, within a bounded time.
#[test]
fn a_genuine_refusal_mid_fetch_is_confirmed_from_the_origin_and_ends_the_fetch() {
    let data = content(3_000_000);
    let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), cfg("bbr"));
    let swap = p.now + Duration::from_millis(40);
    p.swap_catalog_at = Some((swap, MemoryCatalog::new([("file".to_string(), content(10))])));
    let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let seen = log.clone();
    p.attacker = Some(Box::new(move |d| {
        if let Ok(Packet::Request(r)) = Packet::decode(d) {
            seen.borrow_mut().push(r.flags.contains(RequestFlags::ORIGIN));
        }
        vec![]
    }));
    p.run(Duration::from_secs(30));
    let Some(FetchError::NotFound(what)) = p.rx.error() else { panic!("{:?}", p.rx.error()) };
    assert!(what.contains("gone during the transfer"), "{what}");
    assert!(what.contains("the origin (1 hop away)"), "the node is named: {what}");
    assert!(what.contains("refused 3 requests in a row"), "{what}");
    assert_eq!(p.rx.stats().nacks, u64::from(refusals::CONFIRMATIONS).max(p.rx.stats().nacks));
    // Bounded: three refusals an RTO apart (RTO = 200 ms here), and the last RTO.
    let took = p.now - swap;
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_millis(1000),
        "ended {took:?} after the change"
    );
    // Requests after the first refusal asked the origin.
    let flags = log.borrow();
    let first_origin = flags.iter().position(|&o| o).expect("the refusal was confirmed from the origin");
    assert!(flags[first_origin..].iter().all(|&o| o), "every request after the first refusal carries ORIGIN");
}

/// A router that cannot reach upstream refuses with `NoRoute` (issue 23 item 14): the user
/// learns which node said so and how far it is, once confirmed.
#[test]
fn a_refusing_router_is_named_in_the_error() {
    let data = content(2_000_000);
    let r1: crate::NodeId = "r1".parse().unwrap();
    let mut p = Pipe::new(data, |_| Target::Name("file".into()), cfg("bbr"));
    // The first hop, a router r1 whose upstream died, refuses every request past the first
    // MB (and forwards nothing: their answers are lost).
    let lost = p.drop_answers_to.clone();
    p.attacker = Some(Box::new(move |seen| match Packet::decode(seen) {
        Ok(Packet::Request(r)) if r.range.offset >= 1_000_000 || r.ranges().any(|g| g.offset >= 1_000_000) => {
            lost.borrow_mut().push(r.tag);
            vec![nack_from(NackCode::NoRoute, &r, r1, 0, "no answer from upstream")]
        }
        _ => vec![],
    }));
    p.run(Duration::from_secs(30));
    match p.rx.error() {
        Some(FetchError::Refused { code: NackCode::NoRoute, by, who, detail }) => {
            assert_eq!(*by, r1);
            assert_eq!(who, "node r1 (1 hop away)");
            assert!(detail.contains("no answer from upstream"), "{detail}");
            let e = p.rx.error().unwrap().to_string();
            assert!(e.starts_with("node r1 (1 hop away) refused the request (NoRoute)"), "{e}");
        }
        e => panic!("{e:?}"),
    }
}

// ---- Verification: groups narrowed to their bad blocks (issue 23 item 7) ---------------

/// 0036bef: one flipped byte in 5 % of Data packets failed a fetch in 0.04 s — a 256 KiB
/// group of ~260 units is then almost never clean, the whole group was fetched again, and
/// three failures of a group ended the fetch. Now a failed group is narrowed to its bad
/// 16 KiB blocks, only their units are fetched again, a block is repaired from its earlier
/// copies where they differ, and the fetch completes byte-exact.
#[test]
fn one_flipped_byte_in_five_percent_of_data_packets_costs_only_the_bad_blocks() {
    let data = content(3_000_000); // 184 blocks, 12 groups
    for seed in 1..4 {
        let mut p = Pipe::new(data.clone(), |_| Target::Name("file".into()), cfg("bbr"));
        p.corrupt_fraction = 0.05;
        p.rng = rand_core::SeedableRng::seed_from_u64(seed);
        let got = p.run(Duration::from_secs(60));
        assert!(p.rx.is_finished(), "seed {seed}: {:?} {:?}", p.rx.error(), p.rx.stats());
        assert_eq!(got, data, "seed {seed}");
        let s = p.rx.stats();
        assert!(s.bad_groups > 0 && s.bad_blocks > 0, "seed {seed}: nothing was corrupted? {s:?}");
        // Only the units of bad blocks were asked for again (a 16 KiB block overlaps at most
        // 18 units of 1000 bytes): a group's 263 units were, on 0036bef.
        assert!(
            s.units_rerequested <= 18 * s.bad_blocks,
            "seed {seed}: {} units asked for again for {} bad blocks",
            s.units_rerequested,
            s.bad_blocks
        );
        assert!(s.blocks_repaired > 0, "seed {seed}: no block was repaired from its copies: {s:?}");
    }
}

/// A unit whose every copy is corrupted the same way (its source serves wrong bytes) fails
/// the fetch after three failures of its block, and the error names that 16 KiB block, not
/// its group.
#[test]
fn a_block_always_corrupted_fails_the_fetch_after_three_failures_of_that_block() {
    let data = content(1_000_000);
    let mut p = Pipe::new(data, |_| Target::Name("file".into()), cfg("bbr"));
    // Unit 300 (bytes 300 000..301 000) lies in block 18, in the group of blocks 16–31.
    p.always_corrupt = vec![300];
    p.run(Duration::from_secs(60));
    assert_eq!(p.rx.error(), Some(&FetchError::BadBlock { block: 18, offset: 18 * 16384 }));
    let s = p.rx.stats();
    assert_eq!(s.bad_blocks, u64::from(MAX_BAD_BLOCK_TRIES), "{s:?}");
    // Every other block of its group was delivered: 18 blocks before it.
    assert_eq!(p.rx.delivered_bytes(), 16 * 16384);
}

#[test]
fn max_inflight_caps_what_the_window_would_allow() {
    let data = content(100_000);
    let known = Target::Known { eid: Eid::of(&data), size: data.len() as u64 };
    let mut cfg = cfg("fixed");
    cfg.apply_spec("max_inflight=5").unwrap();
    let mut p = Pipe::new(data.clone(), |_| known.clone(), cfg.clone());
    let mut buf = vec![0u8; MAX_DATAGRAM];
    while p.rx.poll_transmit(p.now, &mut buf).is_some() {}
    assert_eq!(p.rx.inflight(), 5, "the fixed window (64) is capped at 5");
    let mut p = Pipe::new(data.clone(), |_| known.clone(), cfg);
    assert_eq!(p.run(Duration::from_secs(10)), data);
    // Without the key, the window alone decides.
    let mut p = Pipe::new(data.clone(), |_| known, self::cfg("fixed"));
    while p.rx.poll_transmit(p.now, &mut buf).is_some() {}
    assert_eq!(p.rx.inflight(), 64);
}
