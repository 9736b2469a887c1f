//! The `rdtp` binary end to end over 127.0.0.1: `serve` a temp directory, `fetch` by name
//! and by EID, `ls`, and the exit codes for not found, unreachable, I/O errors.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{RDTP, Server};

struct Fixture {
    dir: tempfile::TempDir,
    big: Vec<u8>,
    small: Vec<u8>,
}

const BIG: &str = "data/big.bin";
const SMALL: &str = "small.txt";

/// A temp directory (removed on drop) with a random `data/big.bin` of `big_len` bytes and
/// a small text file.
fn fixture(big_len: usize) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut big = vec![0u8; big_len];
    rand::fill(&mut big[..]);
    let small = b"a small second file\n".to_vec();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join(BIG), &big).unwrap();
    std::fs::write(dir.path().join(SMALL), &small).unwrap();
    Fixture { dir, big, small }
}

fn rdtp(args: &[&str]) -> Output {
    Command::new(RDTP).args(args).stdin(Stdio::null()).output().expect("run rdtp")
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

#[test]
fn fetch_by_name_and_eid_and_list() {
    let f = fixture(64 << 20);
    let server = Server::start(f.dir.path(), &[]);
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out.bin");
    let out_s = out.to_str().unwrap();

    let t0 = Instant::now();
    let o = rdtp(&["fetch", &server.addr, BIG, "-o", out_s, "-q"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    eprintln!("64 MiB by name in {:?}", t0.elapsed());
    assert!(o.stderr.is_empty() && o.stdout.is_empty(), "-q must be quiet");
    let got = std::fs::read(&out).unwrap();
    assert!(blake3::hash(&got) == blake3::hash(&f.big), "content differs");

    // By EID, with --json: the object goes to the file, the JSON to stdout.
    let eid = blake3::hash(&f.big).to_hex().to_string();
    std::fs::remove_file(&out).unwrap();
    let o = rdtp(&["fetch", &server.addr, &eid, "-o", out_s, "--json", "--cc", "aimd"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(blake3::hash(&std::fs::read(&out).unwrap()) == blake3::hash(&f.big));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["completed"], true);
    assert_eq!(v["eid"], eid.as_str());
    assert_eq!(v["name"], BIG);
    assert_eq!(v["cc"], "aimd");
    assert_eq!(v["size"], f.big.len() as u64);

    // The small file to stdout, with the ndnget summary on stderr.
    let o = rdtp(&["fetch", &server.addr, SMALL]);
    assert_eq!(code(&o), 0);
    assert_eq!(o.stdout, f.small);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("All segments have been received.\nTime elapsed: "), "{err}");
    assert!(err.contains("\nGoodput: ") && err.contains("\nRTT min/avg/max = "), "{err}");

    // ls lists both.
    let o = rdtp(&["ls", &server.addr]);
    assert_eq!(code(&o), 0);
    let listing = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<Vec<&str>> = listing.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(lines.len(), 2, "{listing}");
    assert_eq!(lines[0], [&f.big.len().to_string(), eid.as_str(), BIG]);
    assert_eq!(lines[1][0], f.small.len().to_string());
    assert_eq!(lines[1][2], SMALL);
}

#[test]
fn exit_codes() {
    // Big enough to overflow the pipe in the EPIPE case.
    let f = fixture(8 << 20);
    let server = Server::start(f.dir.path(), &[]);

    // Unknown name: 3, and no output file left behind.
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("x");
    let o = rdtp(&["fetch", &server.addr, "no/such/name", "-o", out.to_str().unwrap()]);
    assert_eq!(code(&o), 3, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!out.exists());

    // A log file that cannot be created: 4.
    let o = rdtp(&["fetch", &server.addr, SMALL, "--log-cwnd", "/nonexistent-dir/cwnd.tsv", "-q"]);
    assert_eq!(code(&o), 4);

    // Output pipe closed early (EPIPE): 4, not a panic.
    let mut child = Command::new(RDTP)
        .args(["fetch", &server.addr, BIG, "-q"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 1];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 4, "{}", String::from_utf8_lossy(&o.stderr));

    // Usage error: 2.
    assert_eq!(code(&rdtp(&["fetch", &server.addr, SMALL, "--cc", "nope"])), 2);
    // `--window` alone selects fixed (issue 23); with another controller named it is refused.
    assert_eq!(code(&rdtp(&["fetch", &server.addr, SMALL, "--cc", "bbr", "--window", "4"])), 2);
    assert_eq!(code(&rdtp(&["fetch", &server.addr, SMALL, "--window", "4", "--cubic-beta", "0.8"])), 2);

    // Nothing listens: ICMP port unreachable → 6. ICMP errors can be forged, so
    // they end a fetch only at its idle timeout, reported as the ICMP error.
    let port = {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    };
    let o = rdtp(&["fetch", &format!("127.0.0.1:{port}"), SMALL, "--timeout", "1"]);
    assert_eq!(code(&o), 6, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("refused"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = rdtp(&["ls", &format!("127.0.0.1:{port}"), "--timeout", "1"]);
    assert_eq!(code(&o), 6, "{}", String::from_utf8_lossy(&o.stderr));

    // Serving a missing directory: 4.
    assert_eq!(code(&rdtp(&["serve", "/nonexistent-dir/rdtp", "--listen", "127.0.0.1:0"])), 4);
}

#[test]
fn server_stops_on_sigterm_with_stats() {
    let f = fixture(1000);
    let mut server = Server::start(f.dir.path(), &[]);
    let o = rdtp(&["fetch", &server.addr, SMALL, "-q"]);
    assert_eq!(code(&o), 0);
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(server.child.id() as libc::pid_t, libc::SIGTERM);
    }
    let t0 = Instant::now();
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert_eq!(status.code(), Some(0));
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(5), "server ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn content_changed_under_the_server_is_served_under_its_new_eid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mutable.bin");
    std::fs::write(&path, vec![1u8; 300_000]).unwrap();
    let server = Server::start(dir.path(), &[]);
    let old_eid = blake3::hash(&[1u8; 300_000]).to_hex().to_string();
    // Same size, other bytes, same inode. Before issue 11's fix the server kept announcing
    // the old EID and served the new bytes under it (a validation failure, exit 5).
    std::fs::write(&path, vec![2u8; 300_000]).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out");
    let o = rdtp(&["fetch", &server.addr, "mutable.bin", "-o", out.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&out).unwrap(), vec![2u8; 300_000]);
    // The old EID is gone: not found, and nothing written.
    std::fs::remove_file(&out).unwrap();
    let o = rdtp(&["fetch", &server.addr, &old_eid, "-o", out.to_str().unwrap()]);
    assert_eq!(code(&o), 3, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!out.exists());
}

/// The JSON lines of `rdtp fetch --interval --json -o FILE` (stdout): the intervals, then
/// the summary.
fn interval_lines(stdout: &[u8]) -> (Vec<serde_json::Value>, serde_json::Value) {
    let mut lines: Vec<serde_json::Value> = String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let summary = lines.pop().expect("a summary line");
    assert!(lines.iter().all(|l| l["event"] == "interval"), "{lines:?}");
    assert!(summary.get("event").is_none(), "the summary comes last: {summary}");
    (lines, summary)
}

#[test]
fn interval_reports_cover_the_fetch_and_add_up_to_the_summary() {
    let f = fixture(24 << 20);
    let server = Server::start(f.dir.path(), &[]);
    let router = Server::route(&["--upstream", &server.addr, "--id", "r1"]);
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out.bin");
    let out_s = out.to_str().unwrap();
    for (round, cached) in [(1, 0), (2, f.big.len() as u64)] {
        let o = rdtp(&["fetch", &router.addr, BIG, "-o", out_s, "--json", "--interval", "0.02"]);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        let (intervals, summary) = interval_lines(&o.stdout);
        assert!(!intervals.is_empty(), "round {round}: no interval line");
        // Back to back from 0 to the last unit; the counters' differences add up to the totals.
        assert_eq!(intervals[0]["start_s"], 0.0);
        for w in intervals.windows(2) {
            assert_eq!(w[0]["end_s"], w[1]["start_s"], "{w:?}");
            assert!(w[0]["end_s"].as_f64() > w[0]["start_s"].as_f64(), "{w:?}");
        }
        assert_eq!(intervals.last().unwrap()["end_s"], summary["elapsed_s"]);
        let sum = |k: &str| intervals.iter().map(|i| i[k].as_u64().unwrap()).sum::<u64>();
        assert_eq!(sum("bytes"), f.big.len() as u64, "round {round}");
        assert_eq!(sum("retransmits"), summary["units_rerequested"].as_u64().unwrap());
        assert_eq!(sum("rtt_samples"), summary["rtt_samples"].as_u64().unwrap());
        // The second fetch comes entirely from r1's content store.
        assert_eq!(sum("cached_bytes"), cached, "round {round}");
        assert!(intervals.iter().all(|i| i["cwnd"].as_u64().unwrap() > 0));
    }

    // Text lines on stderr under hiperf's header, then ndnget's summary.
    let o = rdtp(&["fetch", &router.addr, BIG, "-o", out_s, "--interval", "0.05"]);
    assert_eq!(code(&o), 0);
    let err = String::from_utf8_lossy(&o.stderr);
    let mut lines = err.lines();
    let header = lines.next().unwrap();
    assert!(header.contains("Interval[ms]") && header.contains("Bandwidth[Mbps]") && header.contains("Cached[%]"));
    let rows: Vec<&str> = lines.by_ref().take_while(|l| !l.starts_with("All segments")).collect();
    assert!(!rows.is_empty(), "{err}");
    let mb: f64 = rows.iter().map(|r| r.split_whitespace().nth(1).unwrap().parse::<f64>().unwrap()).sum();
    assert!((mb - f.big.len() as f64 / 1e6).abs() < 0.001 * rows.len() as f64, "{mb} MB in {err}");
    let moved = rows.iter().filter(|r| r.split_whitespace().nth(1) != Some("0.000"));
    assert!(moved.clone().count() > 0 && moved.clone().all(|r| r.ends_with("100.0")), "all from r1's store\n{err}");
    assert!(err.contains("Served by: router r1 (1 hop away) 100.0 %"), "{err}");
}

/// The share of a fetch served by the router with id `r1`, from its summary (0 if none).
fn r1_share(summary: &str) -> f64 {
    let line = summary.lines().find_map(|l| l.strip_prefix("Served by: ")).expect("a Served by line");
    line.split(", ")
        .find_map(|part| part.strip_prefix("router r1 (1 hop away) "))
        .map_or(0.0, |p| p.trim_end_matches(" %").parse().expect("a percentage"))
}

/// An object three times larger than `rdtp route`'s store, fetched twice in order: with plain
/// LRU (`--cs-insert always`) each unit is evicted just before it is asked for again and the
/// second fetch gets nothing from the store; the default insertion (`full:0.125`) keeps most
/// of what the first fetch stored.
#[test]
fn a_default_router_serves_part_of_an_object_larger_than_its_store() {
    let f = fixture(24 << 20);
    let server = Server::start(f.dir.path(), &[]);
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out.bin");
    let out_s = out.to_str().unwrap();
    let mut second = Vec::new();
    for extra in [&[][..], &["--cs-insert", "always"][..]] {
        let mut args = vec!["--upstream", &server.addr, "--id", "r1", "--cs-bytes", "8MiB"];
        args.extend_from_slice(extra);
        let router = Server::route(&args);
        for round in 1..=2 {
            let o = rdtp(&["fetch", &router.addr, BIG, "-o", out_s]);
            let summary = String::from_utf8_lossy(&o.stderr);
            assert_eq!(code(&o), 0, "{summary}");
            assert!(std::fs::read(&out).unwrap() == f.big, "{extra:?} round {round}: not byte-exact");
            if round == 2 {
                second.push(r1_share(&summary));
            }
        }
    }
    // 8 MiB hold ≈ 5 300 units of 1 402 bytes, 7.4 MB of the 25 MB: ≈ 22 % by the store
    // model of `full_p_admission_keeps_an_object_larger_than_the_store`.
    assert!(second[0] >= 10.0, "default: {}% from r1 on the second fetch", second[0]);
    assert!(second[1] < 1.0, "--cs-insert always: {}% from r1 on the second fetch", second[1]);
}
