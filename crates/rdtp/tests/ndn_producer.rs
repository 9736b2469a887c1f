//! `rdtp serve --ndn-listen`: NDNts's consumer (an NDN stack nobody here wrote, tests/ndnts/)
//! fetches files from rdtp's NDN producer byte-exact, discovering the version by RDR and by
//! CanBePrefix, and through NDNLPv2 fragments when the producer's MTU is small. Skips
//! (`SKIPPED: <reason>`) without node or the pinned npm packages (tools/setup.sh installs them).

mod common;

use common::{Server, ndnts};

/// Serve a 3 MB file in a subdirectory with `extra` producer options, fetch it with NDNts's
/// consumer (`consumer` options), and compare.
fn fetch_from_rdtp(extra: &[&str], consumer: &[&str]) {
    let Some(rig) = ndnts::rig() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let content = common::content(3 << 20, 41);
    std::fs::create_dir(tmp.path().join("films")).unwrap();
    std::fs::write(tmp.path().join("films/a.bin"), &content).unwrap();
    let out_dir = tempfile::tempdir().expect("tempdir");
    let fetched = out_dir.path().join("fetched.bin");

    let server = Server::start_ndn(tmp.path(), extra);
    let mut args = vec!["-o", fetched.to_str().expect("UTF-8 path")];
    args.extend_from_slice(consumer);
    let out = ndnts::consume(&rig, &server.addr, "/rdtp/films/a.bin", &args);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "consumer.mjs failed ({}):\n{summary}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let got = std::fs::read(&fetched).expect("read the fetched object");
    assert!(got == content, "fetched {} bytes, not the {} served: {summary}", got.len(), content.len());
    assert!(summary.contains(&format!("{} bytes", content.len())), "summary: {summary}");
    // The versioned name NDNts fetched: /rdtp/films/a.bin/v=<version>.
    assert!(summary.contains("/rdtp/films/a.bin/v="), "summary: {summary}");
}

#[test]
fn ndnts_consumer_fetches_from_rdtp_serve_by_rdr() {
    fetch_from_rdtp(&[], &[]);
}

#[test]
fn ndnts_consumer_fetches_from_rdtp_serve_by_can_be_prefix() {
    fetch_from_rdtp(&[], &["--discover", "cbp"]);
}

/// Hu et al.'s 8600-byte segments through a 1500-byte path: every Data in NDNLPv2 fragments
/// that NDNts reassembles.
#[test]
fn ndnts_consumer_reassembles_rdtp_serves_fragments() {
    fetch_from_rdtp(&["--ndn-segment-size", "8600", "--ndn-mtu", "1472"], &[]);
}

/// Bad NDN options are usage errors (exit 2) naming the option, before anything is bound.
#[test]
fn bad_ndn_options_are_usage_errors() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().to_str().unwrap();
    for (args, says) in [
        (&["--ndn-listen", "127.0.0.1:0", "--ndn-allow", "everyone"][..], "--ndn-allow"),
        (&["--ndn-listen", "127.0.0.1:0", "--ndn-mtu", "100"][..], "--ndn-mtu"),
        (&["--ndn-listen", "127.0.0.1:0", "--ndn-segment-size", "0"][..], "--ndn-segment-size"),
        (&["--ndn-listen", "127.0.0.1:0", "--ndn-prefix", "no-slash"][..], "--ndn-prefix"),
        (&["--ndn-listen", "127.0.0.1:0", "--ndn-max-rate", "0"][..], "--ndn-max-rate"),
        (&["--ndn-listen", "nowhere"][..], "--ndn-listen"),
        (&["--ndn-prefix", "/x"][..], "--ndn-listen"),
    ] {
        let o = std::process::Command::new(common::RDTP)
            .arg("serve")
            .args(args)
            .arg(dir)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run rdtp serve");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?} should name {says}: {err}");
    }
}

/// python-ndn (a second NDN implementation nobody here wrote, tests/python-ndn/) fetches from
/// `rdtp serve --ndn-listen` byte-exact with its own segment fetcher (CanBePrefix discovery,
/// then one Interest per segment). Skips without `.venv-pyndn/` (tools/setup.sh installs it).
#[test]
fn python_ndn_fetches_from_rdtp_serve() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join(".venv-pyndn/bin/python");
    if std::process::Command::new(&python).args(["-c", "import ndn"]).output().map_or(true, |o| !o.status.success()) {
        eprintln!("SKIPPED: python-ndn is not installed in .venv-pyndn (tools/setup.sh installs it)");
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let content = common::content(1 << 20, 43);
    std::fs::write(tmp.path().join("b.bin"), &content).unwrap();
    let out_dir = tempfile::tempdir().expect("tempdir");
    let fetched = out_dir.path().join("fetched.bin");
    let server = Server::start_ndn(tmp.path(), &["--ndn-prefix", "/test/py"]);
    let o = std::process::Command::new(&python)
        .arg(root.join("tests/python-ndn/fetch.py"))
        .args([&server.addr, "/test/py/b.bin", fetched.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run python-ndn's fetch.py");
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "fetch.py failed ({}): {said}", o.status);
    assert!(std::fs::read(&fetched).unwrap() == content, "not byte-exact: {said}");
    assert!(said.contains(&format!("{} bytes", content.len())), "{said}");
}

/// rdtp on both ends, over NDN only: `rdtp fetch --ndn` (the consumer translating its
/// receiver's requests into Interests) from `rdtp serve --ndn-listen`, byte-exact, with the
/// producer's budget low enough that some Interests get Nack "Congestion" (the consumer backs
/// off and asks again).
#[test]
fn rdtp_fetch_ndn_from_rdtp_serve_ndn_listen() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let content = common::content(4 << 20, 47);
    std::fs::write(tmp.path().join("c.bin"), &content).unwrap();
    let out_dir = tempfile::tempdir().expect("tempdir");
    let fetched = out_dir.path().join("fetched.bin");
    let server = Server::start_ndn(tmp.path(), &["--ndn-max-rate", "200Mbps"]);
    let o = std::process::Command::new(common::RDTP)
        .args(["fetch", "--ndn", &server.addr, "/rdtp/c.bin", "-o", fetched.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run rdtp fetch --ndn");
    let summary = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{summary}");
    assert!(std::fs::read(&fetched).unwrap() == content, "not byte-exact: {summary}");
    assert!(summary.contains("Integrity: DigestSha256 (every segment)"), "{summary}");
}
