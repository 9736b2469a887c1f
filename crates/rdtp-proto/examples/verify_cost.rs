//! Per-byte cost of checking content against its EID, side by side in one run (issue 11):
//! the old receiver's hash (BLAKE3 fed one 1402-byte payload at a time, checked at the
//! end) against verified streaming (each 16 KiB block hashed whole and checked with its
//! proof, `rdtp_proto::tree`), and BLAKE3 over the whole buffer at once as the floor.
//!
//! `cargo run --release -p rdtp-proto --example verify_cost [MiB]`

use std::time::Instant;

use rdtp_proto::Eid;
use rdtp_proto::tree::{BLOCK_LEN, Outboard, Verifier, blocks, proof_depth};

fn main() {
    let mib: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(256);
    let size = mib << 20;
    let data: Vec<u8> = (0..size).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[1]).collect();
    let outboard = Outboard::of(&data);
    let eid = outboard.root();
    // The proofs a receiver asks for, prepared outside the timed part.
    let proofs: Vec<_> = (0..blocks(size as u64))
        .map(|b| {
            let d = proof_depth(size as u64, b);
            if d == 0 { Vec::new() } else { outboard.proof(b, d).unwrap() }
        })
        .collect();
    let proof_bytes: usize = proofs.iter().map(|p| p.len() * 32).sum();

    let mut rows = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let mut h = blake3::Hasher::new();
        for piece in data.chunks(1402) {
            h.update(piece);
        }
        assert_eq!(Eid::from_hasher(&h), eid);
        let per_packet = t.elapsed();

        let t = Instant::now();
        let mut v = Verifier::new(eid, size as u64);
        for (b, p) in proofs.iter().enumerate() {
            let s = b * BLOCK_LEN as usize;
            let e = (s + BLOCK_LEN as usize).min(size);
            v.verify(b as u64, &data[s..e], p).unwrap();
        }
        let per_block = t.elapsed();

        let t = Instant::now();
        assert_eq!(Eid::of(&data), eid);
        let whole = t.elapsed();
        rows.push((per_packet, per_block, whole));
    }
    let best = |f: fn(&(std::time::Duration, std::time::Duration, std::time::Duration)) -> std::time::Duration| {
        rows.iter().map(f).min().unwrap()
    };
    let gbps = |d: std::time::Duration| size as f64 / d.as_secs_f64() / 1e9;
    let ns_per_byte = |d: std::time::Duration| d.as_secs_f64() * 1e9 / size as f64;
    println!("{mib} MiB, best of 3, one thread");
    println!("| method | GB/s | ns/byte |");
    println!("|---|---:|---:|");
    for (name, d) in [
        ("BLAKE3 fed 1402-byte payloads, checked at the end (before)", best(|r| r.0)),
        ("verified streaming: 16 KiB blocks + proofs (after)", best(|r| r.1)),
        ("BLAKE3 of the whole buffer at once (floor)", best(|r| r.2)),
    ] {
        println!("| {name} | {:.2} | {:.3} |", gbps(d), ns_per_byte(d));
    }
    println!(
        "proof bytes a receiver fetches: {proof_bytes} ({:.3} % of the content), server outboard: {} bytes",
        100.0 * proof_bytes as f64 / size as f64,
        outboard.heap_bytes()
    );
}
