//! The bodies of the fuzz targets (`fuzz/fuzz_targets/*.rs`, cargo-fuzz on nightly), here so
//! that stable `cargo test` runs them too: the tests below replay the corpus (`fuzz/seeds`,
//! `fuzz/seeds-ndn` for the NDN codec's target, and `fuzz/corpus/<target>` and
//! `fuzz/artifacts/<target>` when a fuzzing run left them) through every target and add a
//! few thousand inputs generated from a fixed seed.
//!
//! Compiled only for tests and with the feature `fuzzing` (which the fuzz crate turns on). It
//! drives the core through its public API only: no protocol logic lives here.

use std::sync::OnceLock;

use crate::receiver::{MAX_DATAGRAM, Receiver, ReceiverConfig, Target};
use crate::router::fib::Fib;
use crate::router::{Router, RouterConfig};
use crate::server::{Catalog, PatternCatalog, Server};
use crate::wire::Packet;
use crate::{Eid, Time};

/// Any bytes: decoding never panics, and a packet that decodes encodes to bytes that decode
/// to the same packet (reserved fields are ignored on receipt, so the bytes themselves may
/// differ there: PROTOCOL.md, Conventions).
pub fn decode(data: &[u8]) {
    if let Ok(p) = Packet::decode(data) {
        let mut out = vec![0u8; data.len() + 64];
        let n = p.encode(&mut out).expect("a decoded packet encodes");
        assert_eq!(n, data.len(), "{p:?} re-encodes to another length");
        assert_eq!(Packet::decode(&out[..n]).as_ref(), Ok(&p), "{p:?} does not survive a round trip");
    }
}

fn catalog() -> &'static PatternCatalog {
    static C: OnceLock<PatternCatalog> = OnceLock::new();
    C.get_or_init(|| PatternCatalog::new([("a".to_string(), 100_000, 1), ("b".to_string(), 5, 2)]))
}

/// Any datagram from an address the server never validated: no panic, and never more than
/// 3× its size back (RFC 9000 §8). The first byte picks a catalogue object's EID to splice
/// in at offset 12 so the fuzzer reaches the Data-sending path.
pub fn server(input: &[u8]) {
    let Some((&pick, rest)) = input.split_first() else { return };
    let mut d = rest.to_vec();
    if pick & 1 == 1 && d.len() >= 44 {
        let name = if pick & 2 == 0 { "a" } else { "b" };
        let eid = catalog().resolve(name).unwrap().0;
        d[12..44].copy_from_slice(&eid.0);
    }
    let mut server = Server::default();
    let mut reply = server.handle(Time::ZERO, "192.0.2.1:9".parse().unwrap(), catalog(), &d);
    let mut buf = vec![0u8; 70_000];
    let mut sent = 0;
    while let Some(n) = reply.next_datagram(&mut buf) {
        sent += n;
    }
    assert!(sent <= 3 * d.len(), "{sent} bytes for a {}-byte datagram", d.len());
}

/// Datagrams from a downstream, the upstream or a stranger (the first byte of each record
/// picks which), in sequence, through one router: no panic, and its queue always drains.
/// Records: `[peer selector, length, bytes…]`.
pub fn router(input: &[u8]) {
    let up = "10.0.0.9:7447".parse().unwrap();
    let peers = [up, "10.0.0.1:5000".parse().unwrap(), "198.51.100.3:1".parse().unwrap()];
    let mut r = Router::new(RouterConfig { fib: Fib::new(Some(up)), ..RouterConfig::default() });
    let mut buf = vec![0u8; 70_000];
    let mut rest = input;
    let mut now = Time::ZERO;
    while rest.len() >= 2 {
        let from = peers[usize::from(rest[0]) % peers.len()];
        let len = usize::from(rest[1]).min(rest.len() - 2);
        r.handle_datagram(now, from, &rest[2..2 + len]);
        rest = &rest[2 + len..];
        let mut n = 0;
        while r.poll_transmit(now, &mut buf).is_some() {
            n += 1;
            assert!(n < 100_000, "the router's queue does not drain");
        }
        now += core::time::Duration::from_millis(3);
        r.handle_timeout(now);
    }
}

fn object() -> &'static (Vec<u8>, Eid) {
    static O: OnceLock<(Vec<u8>, Eid)> = OnceLock::new();
    O.get_or_init(|| {
        let v: Vec<u8> = (0..40_000u32).map(|i| (i % 253) as u8).collect();
        let e = Eid::of(&v);
        (v, e)
    })
}

/// A receiver mid-fetch fed hostile datagrams between its own requests: no panic, and
/// whatever it delivers is a prefix of the real object (nothing unverified is readable).
/// Records: `[length (2 bytes, big-endian), bytes…]`.
pub fn receiver(input: &[u8]) {
    let (content, eid) = object();
    let target = Target::Known { eid: *eid, size: content.len() as u64 };
    let peer = "192.0.2.2:6000".parse().unwrap();
    let mut rx = Receiver::new(ReceiverConfig::default(), peer, target, Time::ZERO);
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut now = Time::ZERO;
    let mut got = Vec::new();
    let mut rest = input;
    while rest.len() >= 2 {
        while rx.poll_transmit(now, &mut buf).is_some() {}
        let len = (usize::from(rest[0]) << 8 | usize::from(rest[1])).min(rest.len() - 2);
        rx.handle_datagram(now, peer, &rest[2..2 + len]);
        rest = &rest[2 + len..];
        let mut out = [0u8; 4096];
        loop {
            let n = rx.read(&mut out);
            if n == 0 {
                break;
            }
            got.extend_from_slice(&out[..n]);
        }
        now += core::time::Duration::from_millis(7);
        rx.handle_timeout(now);
    }
    assert_eq!(&got[..], &content[..got.len()], "a byte that is not the object's was delivered");
}

/// Datagrams from NDN faces (the first byte of each record picks one of three peers), in
/// sequence: decoding never panics; whatever decodes (LpPacket, and the Interest or Data in
/// a Fragment) re-encodes to bytes that decode to the same (skipped non-critical elements
/// are not kept, so the bytes may differ); and a reassembler with small limits fed every
/// LpPacket never holds more than them. Records: `[peer selector, length (2 bytes,
/// big-endian), bytes…]`.
pub fn ndn(input: &[u8]) {
    use crate::ndn::lp::{LpPacket, Reassembler, ReassemblerLimits};
    use crate::ndn::{Data, Interest};

    fn network_packet(wire: &[u8]) {
        if let Ok(i) = Interest::decode(wire) {
            assert_eq!(Interest::decode(&i.encode()).as_ref(), Ok(&i), "{i:?} does not survive a round trip");
        }
        if let Ok((d, _)) = Data::decode_verified(wire) {
            assert_eq!(Data::decode(&d.encode()).as_ref(), Ok(&d), "{d:?} does not survive a round trip");
        }
    }

    let limits = ReassemblerLimits {
        max_fragments: 16,
        max_partials: 4,
        max_bytes: 4096,
        timeout: core::time::Duration::from_millis(50),
    };
    let mut r = Reassembler::new(limits);
    // The producer `rdtp serve --ndn-listen` runs, over a small catalogue: every datagram is
    // also an Interest to it, from an allowed address, and what it answers must decode.
    let catalog = crate::server::MemoryCatalog::new([("a".to_string(), vec![7u8; 20_000])]);
    let mut producer = crate::ndn::producer::Producer::new(crate::ndn::producer::ProducerConfig {
        mtu: 1200,
        ..crate::ndn::producer::ProducerConfig::new(crate::ndn::Name::new())
    });
    let from: std::net::SocketAddr = ([127, 0, 0, 1], 6363).into();
    let mut answers = Vec::new();
    let mut now = Time::ZERO;
    let mut rest = input;
    while rest.len() >= 3 {
        let peer = rest[0] % 3;
        let len = (usize::from(rest[1]) << 8 | usize::from(rest[2])).min(rest.len() - 3);
        let datagram = &rest[3..3 + len];
        rest = &rest[3 + len..];
        network_packet(datagram);
        answers.clear();
        producer.handle(now, from, &catalog, datagram, &mut answers);
        for a in &answers {
            assert!(a.len() <= 1200, "an answer of {} bytes over the 1200-byte MTU", a.len());
            LpPacket::decode(a).expect("the producer's answers decode");
        }
        if let Ok(p) = LpPacket::decode(datagram) {
            assert_eq!(LpPacket::decode(&p.encode()).as_ref(), Ok(&p), "{p:?} does not survive a round trip");
            if let Ok(Some(whole)) = r.receive(now, peer, p) {
                network_packet(whole.fragment.as_deref().unwrap_or_default());
            }
        }
        assert!(r.bytes_held() <= limits.max_bytes && r.partials() <= limits.max_partials);
        now += core::time::Duration::from_millis(7);
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use rand_core::{Rng, SeedableRng};
    use rand_pcg::Pcg32;

    use super::*;

    /// Generated inputs per target, on top of the corpus.
    const GENERATED: usize = 2000;

    fn fuzz_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
    }

    /// The files of `dirs` under `fuzz/`, in name order (missing directories are empty).
    fn files(dirs: &[PathBuf]) -> Vec<Vec<u8>> {
        let mut files: Vec<PathBuf> = Vec::new();
        for d in dirs {
            if let Ok(entries) = std::fs::read_dir(fuzz_dir().join(d)) {
                let mut here: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect();
                here.sort();
                files.extend(here);
            }
        }
        files.iter().map(|f| std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()))).collect()
    }

    /// `fuzz/seeds`: one datagram of every kind, the corpus every target starts from.
    fn seeds() -> Vec<Vec<u8>> {
        let seeds = files(&["seeds".into()]);
        assert!(seeds.len() >= 14, "fuzz/seeds is missing ({} files)", seeds.len());
        seeds
    }

    /// What a fuzzing run of `target` left: its corpus and crash artifacts, in its own
    /// input format (none in a clean checkout).
    fn left_by_fuzzing(target: &str) -> Vec<Vec<u8>> {
        files(&[PathBuf::from("corpus").join(target), PathBuf::from("artifacts").join(target)])
    }

    /// A seed datagram changed at random: bytes flipped, cut short, or grown with noise.
    fn mutate(rng: &mut Pcg32, seed: &[u8]) -> Vec<u8> {
        let mut d = seed.to_vec();
        match rng.next_u32() % 4 {
            0 if !d.is_empty() => {
                for _ in 0..=rng.next_u32() % 4 {
                    let i = rng.next_u32() as usize % d.len();
                    d[i] ^= 1 << (rng.next_u32() % 8);
                }
            }
            1 if !d.is_empty() => {
                let i = rng.next_u32() as usize % d.len();
                d[i] = rng.next_u32() as u8;
            }
            2 => d.truncate(rng.next_u32() as usize % (d.len() + 1)),
            _ => d.extend((0..rng.next_u32() % 64).map(|_| rng.next_u32() as u8)),
        }
        d
    }

    /// `GENERATED` datagrams: mutated seeds, and now and then plain noise.
    fn generated(seeds: &[Vec<u8>], seed: u64) -> Vec<Vec<u8>> {
        let mut rng = Pcg32::seed_from_u64(seed);
        (0..GENERATED)
            .map(|_| {
                if rng.next_u32() % 8 == 0 || seeds.is_empty() {
                    (0..rng.next_u32() % 300).map(|_| rng.next_u32() as u8).collect()
                } else {
                    let s = &seeds[rng.next_u32() as usize % seeds.len()];
                    mutate(&mut rng, s)
                }
            })
            .collect()
    }

    /// Seeds as records of a sequence target: `header(datagram)` before each datagram,
    /// a few datagrams per input.
    fn sequences(datagrams: &[Vec<u8>], header: impl Fn(usize, &[u8]) -> Vec<u8>) -> Vec<Vec<u8>> {
        datagrams
            .chunks(3)
            .map(|group| {
                let mut input = Vec::new();
                for (i, d) in group.iter().enumerate() {
                    input.extend(header(i, d));
                    input.extend_from_slice(d);
                }
                input
            })
            .collect()
    }

    #[test]
    fn decode_replays_its_corpus_and_generated_inputs() {
        let seeds = seeds();
        let generated = generated(&seeds, 1);
        for input in seeds.iter().chain(&generated).chain(&left_by_fuzzing("decode")) {
            decode(input);
        }
        // The mutations reach both sides of the decoder: packets it takes and ones it refuses.
        let decoded = generated.iter().filter(|d| Packet::decode(d).is_ok()).count();
        assert!(decoded > GENERATED / 10 && decoded < GENERATED, "{decoded} of {GENERATED} generated inputs decode");
    }

    #[test]
    fn server_replays_its_corpus_and_generated_inputs() {
        let seeds = seeds();
        for (i, d) in seeds.iter().chain(&generated(&seeds, 2)).enumerate() {
            // Every pick: no splice, a splice of "a" (100 kB), a splice of "b" (5 bytes).
            let pick = [0u8, 1, 3][i % 3];
            server(&[&[pick][..], d].concat());
        }
        left_by_fuzzing("server").iter().for_each(|input| server(input));
    }

    #[test]
    fn router_replays_its_corpus_and_generated_inputs() {
        let seeds = seeds();
        let datagrams: Vec<Vec<u8>> =
            seeds.iter().chain(&generated(&seeds, 3)).map(|d| d[..d.len().min(255)].to_vec()).collect();
        for input in sequences(&datagrams, |i, d| vec![i as u8, d.len() as u8]) {
            router(&input);
        }
        left_by_fuzzing("router").iter().for_each(|input| router(input));
    }

    /// `fuzz/seeds-ndn`: NDN packets of every kind (Interest, Data, LpPacket with Nack,
    /// fragments), the corpus of the `ndn` target.
    #[test]
    fn ndn_replays_its_corpus_and_generated_inputs() {
        let seeds = files(&["seeds-ndn".into()]);
        assert!(seeds.len() >= 9, "fuzz/seeds-ndn is missing ({} files)", seeds.len());
        let generated = generated(&seeds, 5);
        let datagrams: Vec<Vec<u8>> = seeds.iter().chain(&generated).cloned().collect();
        let header = |i: usize, d: &[u8]| [&[i as u8][..], &(d.len() as u16).to_be_bytes()].concat();
        // One record per input, then a few per input (a fragment's sibling may follow).
        for d in &datagrams {
            ndn(&[header(0, d), d.clone()].concat());
        }
        for input in sequences(&datagrams, header) {
            ndn(&input);
        }
        // The seeds' two fragments, in one input, make a whole Data.
        let frag = |n: &str| std::fs::read(fuzz_dir().join("seeds-ndn").join(n)).unwrap();
        let (f0, f1) = (frag("lp-frag0"), frag("lp-frag1"));
        ndn(&[header(1, &f1), f1.clone(), header(1, &f0), f0.clone()].concat());
        let mut r = crate::ndn::Reassembler::new(Default::default());
        let p1 = crate::ndn::LpPacket::decode(&f1).unwrap();
        assert_eq!(r.receive(Time::ZERO, (), p1), Ok(None));
        let whole = r.receive(Time::ZERO, (), crate::ndn::LpPacket::decode(&f0).unwrap()).unwrap().unwrap();
        assert_eq!(whole.fragment, Some(frag("data-digest")));
        left_by_fuzzing("ndn").iter().for_each(|input| ndn(input));
        // The mutations reach both sides of the decoder.
        let decoded = generated.iter().filter(|d| crate::ndn::LpPacket::decode(d).is_ok()).count();
        assert!(decoded > GENERATED / 10 && decoded < GENERATED, "{decoded} of {GENERATED} generated inputs decode");
    }

    #[test]
    fn receiver_replays_its_corpus_and_generated_inputs() {
        let seeds = seeds();
        let datagrams: Vec<Vec<u8>> = seeds.iter().chain(&generated(&seeds, 4)).cloned().collect();
        for input in sequences(&datagrams, |_, d| (d.len() as u16).to_be_bytes().to_vec()) {
            receiver(&input);
        }
        left_by_fuzzing("receiver").iter().for_each(|input| receiver(input));
    }
}
