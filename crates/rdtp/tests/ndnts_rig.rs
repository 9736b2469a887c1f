//! The NDNts rig works: its producer serves a file on a loopback UDP face and its consumer
//! fetches it byte-exact. This is the independent NDN implementation rdtp's NDN consumer and
//! producer are tested against (issue 25), so it is checked on its own first. Skips
//! (`SKIPPED: <reason>`) without node or the pinned npm packages (tools/setup.sh installs them).

mod common;

use common::ndnts;

fn fetch_and_compare(extra_producer: &[&str], name: &str, extra_consumer: &[&str]) {
    let Some(rig) = ndnts::rig() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let original = tmp.path().join("object.bin");
    let fetched = tmp.path().join("fetched.bin");
    let content = common::content(2 << 20, 25);
    std::fs::write(&original, &content).expect("write the object");

    let producer = ndnts::Producer::start(&rig, "/rdtp/rig", &original, extra_producer);
    let mut args = vec!["-o", fetched.to_str().expect("UTF-8 path")];
    args.extend_from_slice(extra_consumer);
    let out = ndnts::consume(&rig, &producer.addr, name, &args);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "consumer.mjs failed ({}), producer {:?}:\n{summary}{}",
        out.status,
        producer.line,
        String::from_utf8_lossy(&out.stderr)
    );
    let got = std::fs::read(&fetched).expect("read the fetched object");
    assert!(got == content, "fetched {} bytes, not the {} served: {summary}", got.len(), content.len());
    assert!(summary.contains(&format!("{} bytes", content.len())), "summary: {summary}");
}

/// ndnputchunks's defaults: versioned, 8000-byte segments, DigestSha256, RDR metadata; the
/// consumer discovers the version by RDR.
#[test]
fn ndnts_consumer_fetches_from_ndnts_producer_by_rdr() {
    fetch_and_compare(&[], "/rdtp/rig", &[]);
}

/// Hu et al.'s 8600-byte segments signed with Ed25519, NDNLPv2-fragmented to 1472-byte UDP
/// payloads (a 1500-byte path), no metadata: the consumer fetches the versioned name as given
/// and verifies every segment against the producer's certificate.
#[test]
fn ndnts_fetch_by_name_ed25519_fragmented() {
    let Some(_) = ndnts::rig() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let cert = tmp.path().join("producer.cert");
    let cert = cert.to_str().expect("UTF-8 path");
    let producer_args =
        ["--segment-size", "8600", "--version", "7", "--no-metadata", "--mtu", "1472", "--ed25519", cert];
    fetch_and_compare(&producer_args, "/rdtp/rig/v=7", &["--discover", "none", "--trust", cert]);
}
