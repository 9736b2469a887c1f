//! The Wireshark dissector (`tools/wireshark/rdtp.lua`) decodes what this crate encodes:
//!
//! * every test vector of docs/PROTOCOL.md, wrapped in IPv4/UDP on ports the dissector is
//!   not registered on (so its heuristic finds them), field by field against this crate's
//!   own decoding of the same bytes — the dissector, the spec and the code cannot drift;
//! * `tools/wireshark/fetch-via-router.pcap`, a capture of real `rdtp serve`, `rdtp route`
//!   and `rdtp ls`/`fetch` processes on loopback (`tools/wireshark/capture.sh`), against what
//!   that exchange must show: the object's EID and sizes, every unit's offset, tags echoed
//!   by the answers, tokens from Retries sent back, Nacks and who sent them, served-by.
//!
//! Needs `tshark` (Debian package `tshark`; `.ci/run` installs it); without it the tests say
//! so and skip.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use rdtp_proto::Eid;
use rdtp_proto::wire::{Packet, Query};

mod common;
use common::vectors;

const LUA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tools/wireshark/rdtp.lua");
const CAPTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tools/wireshark/fetch-via-router.pcap");

/// Whether tshark runs here; if not, say why the test is skipped.
fn have_tshark() -> bool {
    let ok = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        // Straight to stderr, past the test harness's capture, so a passing run shows it.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: tshark is not installed (apt-get install tshark): the Wireshark dissector is not checked"
        );
    }
    ok
}

/// `tshark -r PCAP` with the dissector: one row per frame, one cell per field, a field's
/// occurrences (several rdtp datagrams in one frame, repeated fields) joined by ';'.
fn dissect(pcap: &Path, filter: Option<&str>, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(pcap).arg("-X").arg(format!("lua_script:{LUA}"));
    if let Some(f) = filter {
        cmd.args(["-Y", f]);
    }
    cmd.args(["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=;"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tshark failed: {stderr}");
    // tshark reports Lua errors (a dissector that does not load or throws) on stderr only.
    assert!(!stderr.contains("Lua") && !stderr.contains("rdtp.lua"), "{stderr}");
    String::from_utf8(out.stdout).unwrap().lines().map(|l| l.split('\t').map(str::to_string).collect()).collect()
}

/// A pcap file (LINKTYPE_RAW: bare IPv4) of one UDP datagram per payload, 10.1.1.1:40000 →
/// 10.2.2.2:40001.
fn pcap(path: &Path, payloads: &[Vec<u8>]) {
    let mut f = Vec::new();
    for v in [0xa1b2_c3d4u32.to_le_bytes().as_slice(), &2u16.to_le_bytes(), &4u16.to_le_bytes()] {
        f.extend_from_slice(v);
    }
    for v in [0u32, 0, 65535, 101] {
        f.extend_from_slice(&v.to_le_bytes());
    }
    for (i, p) in payloads.iter().enumerate() {
        let len = 20 + 8 + p.len();
        for v in [i as u32, 0, len as u32, len as u32] {
            f.extend_from_slice(&v.to_le_bytes());
        }
        let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 1, 1, 1, 10, 2, 2, 2];
        ip[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        let sum = ip.chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]]) as u32).sum::<u32>();
        let sum = !(((sum & 0xffff) + (sum >> 16)) as u16);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(&40000u16.to_be_bytes());
        f.extend_from_slice(&40001u16.to_be_bytes());
        f.extend_from_slice(&((8 + p.len()) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(p);
    }
    std::fs::write(path, f).unwrap();
}

fn temp_pcap(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("rdtp-dissector-{}-{name}.pcap", std::process::id()))
}

/// The fields the vectors are checked on, as tshark prints them.
const VECTOR_FIELDS: &[&str] = &[
    "rdtp.version",
    "rdtp.type",
    "rdtp.tag",
    "rdtp.eid",
    "rdtp.offset",
    "rdtp.length",
    "rdtp.unit",
    "rdtp.hop_limit",
    "rdtp.hops",
    "rdtp.nonce",
    "rdtp.request.flags",
    "rdtp.data.flags",
    "rdtp.range.offset",
    "rdtp.range.length",
    "rdtp.token",
    "rdtp.served_by",
    "rdtp.total_size",
    "rdtp.payload_length",
    "rdtp.payload",
    "rdtp.nack.code",
    "rdtp.nack.from",
    "rdtp.nack.detail",
    "rdtp.resolve.query_type",
    "rdtp.name",
    "rdtp.size",
    "rdtp.list.cursor",
    "rdtp.list.total",
    "rdtp.list.count",
    "rdtp.list.flags.more",
    "rdtp.units",
    "rdtp.proof.block",
    "rdtp.proof.depth",
    "rdtp.proof.count",
    "rdtp.proof.sibling",
    "rdtp.anticipated.offset",
    "rdtp.anticipated.length",
    "rdtp.request_nonce",
    "rdtp.annotation.node",
    "rdtp.annotation.time",
    "rdtp.annotation.held",
    "rdtp.annotation.hops",
    "rdtp.annotation.returned",
];

/// What the dissector must show for `bytes`, from this crate's decoding of them.
fn expected(bytes: &[u8]) -> BTreeMap<&'static str, String> {
    let p = Packet::decode(bytes).unwrap();
    let mut m = BTreeMap::new();
    let hex32 = |v: u32| format!("0x{v:08x}");
    let join = |v: Vec<String>| v.join(";");
    m.insert("rdtp.version", bytes[2].to_string());
    m.insert("rdtp.type", format!("0x{:02x}", bytes[3]));
    let token = |o: &rdtp_proto::wire::Options<'_>, m: &mut BTreeMap<_, _>| {
        if let Some(t) = o.address_token() {
            m.insert("rdtp.token", hex::encode(t));
        }
    };
    // Seed 003's anticipated interests and annotations (Request and Data).
    let annotations = |o: &rdtp_proto::wire::Options<'_>, m: &mut BTreeMap<_, _>| {
        let list: Vec<_> = o.anticipated().collect();
        if !list.is_empty() {
            m.insert("rdtp.anticipated.offset", join(list.iter().map(|x| x.offset.to_string()).collect()));
            m.insert("rdtp.anticipated.length", join(list.iter().map(|x| x.length.to_string()).collect()));
        }
        if let Some(n) = o.request_nonce() {
            m.insert("rdtp.request_nonce", format!("0x{n:016x}"));
        }
        let a: Vec<_> = o.annotations().collect();
        if !a.is_empty() {
            m.insert("rdtp.annotation.node", join(a.iter().map(|x| x.node.to_string()).collect()));
            m.insert("rdtp.annotation.time", join(a.iter().map(|x| x.time.to_string()).collect()));
            m.insert("rdtp.annotation.held", join(a.iter().map(|x| format!("0x{:016x}", x.held)).collect()));
            m.insert("rdtp.annotation.hops", join(a.iter().map(|x| x.hops.to_string()).collect()));
            m.insert(
                "rdtp.annotation.returned",
                join(a.iter().map(|x| u8::from(x.is_returned()).to_string()).collect()),
            );
        }
    };
    match &p {
        Packet::Request(r) => {
            m.insert("rdtp.request.flags", format!("0x{:02x}", r.flags.0));
            m.insert("rdtp.hop_limit", r.hop_limit.to_string());
            m.insert("rdtp.unit", r.unit.to_string());
            m.insert("rdtp.tag", hex32(r.tag));
            m.insert("rdtp.nonce", format!("0x{:016x}", r.nonce));
            m.insert("rdtp.eid", r.eid.to_hex());
            m.insert("rdtp.offset", r.range.offset.to_string());
            m.insert("rdtp.length", r.range.length.to_string());
            m.insert("rdtp.units", r.total_units().to_string());
            let extra: Vec<_> = r.options.extra_ranges().collect();
            if !extra.is_empty() {
                m.insert("rdtp.range.offset", join(extra.iter().map(|x| x.offset.to_string()).collect()));
                m.insert("rdtp.range.length", join(extra.iter().map(|x| x.length.to_string()).collect()));
            }
            token(&r.options, &mut m);
            annotations(&r.options, &mut m);
        }
        Packet::Data(d) => {
            m.insert("rdtp.data.flags", format!("0x{:02x}", d.flags.0));
            m.insert("rdtp.hops", d.hops.to_string());
            m.insert("rdtp.payload_length", d.payload.len().to_string());
            m.insert("rdtp.tag", hex32(d.tag));
            m.insert("rdtp.eid", d.eid.to_hex());
            m.insert("rdtp.offset", d.offset.to_string());
            m.insert("rdtp.total_size", d.total_size.to_string());
            m.insert("rdtp.served_by", d.served_by.to_string());
            m.insert("rdtp.payload", hex::encode(d.payload));
            annotations(&d.options, &mut m);
        }
        Packet::Nack(n) => {
            m.insert("rdtp.nack.code", n.code.to_u8().to_string());
            m.insert("rdtp.hops", n.hops.to_string());
            m.insert("rdtp.tag", hex32(n.tag));
            m.insert("rdtp.eid", n.eid.to_hex());
            m.insert("rdtp.offset", n.offset.to_string());
            m.insert("rdtp.length", n.length.to_string());
            m.insert("rdtp.nack.from", n.from.to_string());
            m.insert("rdtp.nack.detail", n.detail.to_string());
        }
        Packet::ResolveRequest(r) => {
            m.insert("rdtp.hop_limit", r.hop_limit.to_string());
            m.insert("rdtp.tag", hex32(r.tag));
            match r.query {
                Query::Name(n) => {
                    m.insert("rdtp.resolve.query_type", "1".into());
                    m.insert("rdtp.name", n.to_string());
                }
                Query::Eid(e) => {
                    m.insert("rdtp.resolve.query_type", "2".into());
                    m.insert("rdtp.eid", e.to_hex());
                }
            }
            token(&r.options, &mut m);
        }
        Packet::ResolveResponse(r) => {
            m.insert("rdtp.tag", hex32(r.tag));
            m.insert("rdtp.eid", r.eid.to_hex());
            m.insert("rdtp.size", r.size.to_string());
            m.insert("rdtp.name", r.name.to_string());
        }
        Packet::ListRequest(l) => {
            m.insert("rdtp.hop_limit", l.hop_limit.to_string());
            m.insert("rdtp.tag", hex32(l.tag));
            m.insert("rdtp.list.cursor", l.cursor.to_string());
            token(&l.options, &mut m);
        }
        Packet::ListResponse(l) => {
            m.insert("rdtp.list.flags.more", if l.more { "1" } else { "0" }.into());
            m.insert("rdtp.list.count", l.len().to_string());
            m.insert("rdtp.tag", hex32(l.tag));
            m.insert("rdtp.list.cursor", l.cursor.to_string());
            m.insert("rdtp.list.total", l.total.to_string());
            m.insert("rdtp.eid", join(l.entries().map(|e| e.eid.to_hex()).collect()));
            m.insert("rdtp.size", join(l.entries().map(|e| e.size.to_string()).collect()));
            m.insert("rdtp.name", join(l.entries().map(|e| e.name.to_string()).collect()));
        }
        Packet::Retry(r) => {
            m.insert("rdtp.tag", hex32(r.tag));
            m.insert("rdtp.token", hex::encode(r.token));
        }
        Packet::ProofRequest(r) => {
            m.insert("rdtp.request.flags", format!("0x{:02x}", r.flags.0));
            m.insert("rdtp.hop_limit", r.hop_limit.to_string());
            m.insert("rdtp.tag", hex32(r.tag));
            m.insert("rdtp.eid", r.eid.to_hex());
            m.insert("rdtp.proof.block", r.block.to_string());
            m.insert("rdtp.proof.depth", r.depth.to_string());
            token(&r.options, &mut m);
        }
        Packet::Proof(p) => {
            m.insert("rdtp.hops", p.hops.to_string());
            m.insert("rdtp.tag", hex32(p.tag));
            m.insert("rdtp.eid", p.eid.to_hex());
            m.insert("rdtp.proof.block", p.block.to_string());
            m.insert("rdtp.served_by", p.served_by.to_string());
            m.insert("rdtp.proof.count", (p.siblings.len() / 32).to_string());
            m.insert("rdtp.proof.sibling", join(p.siblings.chunks(32).map(hex::encode).collect()));
        }
    }
    m
}

#[test]
fn dissector_decodes_every_protocol_md_vector_as_the_codec_does() {
    if !have_tshark() {
        return;
    }
    let vectors = vectors();
    assert!(vectors.len() >= 15, "{} vectors", vectors.len());
    let types: BTreeSet<u8> = vectors.iter().map(|(_, b)| b[3]).collect();
    assert_eq!(types, (1..=10).collect(), "the vectors cover every message type");
    let path = temp_pcap("vectors");
    pcap(&path, &vectors.iter().map(|(_, b)| b.clone()).collect::<Vec<_>>());
    let rows = dissect(&path, None, VECTOR_FIELDS);
    let malformed = dissect(&path, Some("rdtp.malformed"), &["frame.number"]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(rows.len(), vectors.len(), "one frame per vector, all found by the heuristic");
    assert!(malformed.is_empty(), "vectors flagged malformed: {malformed:?}");
    for ((name, bytes), row) in vectors.iter().zip(&rows) {
        let want = expected(bytes);
        for (field, got) in VECTOR_FIELDS.iter().zip(row) {
            let want = want.get(field).map_or("", String::as_str);
            assert_eq!(got, want, "vector {name}: {field}");
        }
    }
}

#[test]
fn dissector_flags_malformed_datagrams() {
    if !have_tshark() {
        return;
    }
    let vectors: BTreeMap<String, Vec<u8>> = vectors().into_iter().collect();
    let request = &vectors["request-ranges"];
    let data = &vectors["data-cached"];
    let mut bad_option = request.clone();
    bad_option[66] = 0x80; // EXTRA_RANGES → an unknown critical option
    let cases = [
        request[..request.len() - 1].to_vec(),       // truncated inside an option
        [data.as_slice(), &[0]].concat(),            // one trailing byte
        bad_option,                                  // critical option
        vectors["retry"][..20].to_vec(),             // token cut short
        [data.as_slice(), data.as_slice()].concat(), // two back to back (a GSO buffer): fine
    ];
    let path = temp_pcap("malformed");
    pcap(&path, &cases);
    let flagged: Vec<String> =
        dissect(&path, Some("rdtp.malformed"), &["frame.number"]).into_iter().map(|r| r[0].clone()).collect();
    let rows = dissect(&path, None, &["rdtp.type", "rdtp.offset"]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(flagged, ["1", "2", "3", "4"]);
    assert_eq!(rows[4], ["0x02;0x02", "1402;1402"]);
}

/// One rdtp datagram of a capture: its frame, UDP ports, type and every `rdtp.*` field (in
/// option and flag subtrees too), repeated ones joined by ';', bytes as plain hex.
#[derive(Debug, Clone)]
struct Dgram {
    frame: usize,
    src: u16,
    dst: u16,
    ty: String,
    f: BTreeMap<String, String>,
}

/// The rdtp datagrams of `pcap` in order, from tshark's JSON (a frame holding a GSO buffer
/// yields several).
fn datagrams(pcap: &Path) -> Vec<Dgram> {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .arg("-X")
        .arg(format!("lua_script:{LUA}"))
        .args(["-T", "json", "--no-duplicate-keys"])
        .output()
        .expect("run tshark");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let frames: serde_json::Value = serde_json::from_slice(&out.stdout).expect("tshark JSON");
    fn flatten(v: &serde_json::Value, into: &mut BTreeMap<String, Vec<String>>) {
        if let serde_json::Value::Object(o) = v {
            for (k, v) in o {
                match v {
                    serde_json::Value::String(s) if k.starts_with("rdtp.") => {
                        // Bytes print as aa:bb:…; everything else never contains ':' here
                        // but the Nack detail, which the capture checks do not read.
                        let s = if k == "rdtp.nack.detail" { s.clone() } else { s.replace(':', "") };
                        into.entry(k.clone()).or_default().push(s);
                    }
                    serde_json::Value::Array(items) if k.starts_with("rdtp.") => {
                        for i in items {
                            match i {
                                serde_json::Value::String(s) => {
                                    into.entry(k.clone()).or_default().push(s.replace(':', ""))
                                }
                                other => flatten(other, into),
                            }
                        }
                    }
                    other => flatten(other, into),
                }
            }
        }
    }
    let mut all = Vec::new();
    for frame in frames.as_array().expect("frames") {
        let layers = &frame["_source"]["layers"];
        let port = |k: &str| layers["udp"][k].as_str().and_then(|p| p.parse().ok()).expect("UDP ports");
        let pdus = match &layers["rdtp"] {
            serde_json::Value::Array(a) => a.clone(),
            one => vec![one.clone()],
        };
        for pdu in &pdus {
            let mut fields = BTreeMap::new();
            flatten(pdu, &mut fields);
            let f: BTreeMap<String, String> = fields.into_iter().map(|(k, v)| (k, v.join(";"))).collect();
            all.push(Dgram {
                frame: layers["frame"]["frame.number"].as_str().unwrap().parse().unwrap(),
                src: port("udp.srcport"),
                dst: port("udp.dstport"),
                ty: f.get("rdtp.type").cloned().expect("rdtp.type"),
                f,
            });
        }
    }
    all
}

/// The object `capture.sh` serves: the first 40000 bytes of `yes "rdtp capture"`.
fn captured_object() -> Vec<u8> {
    b"rdtp capture\n".iter().copied().cycle().take(40_000).collect()
}

const UNIT: u64 = 1402;

#[test]
fn dissector_decodes_a_real_fetch_through_a_router() {
    if !have_tshark() {
        return;
    }
    let object = captured_object();
    let eid = Eid::of(&object).to_hex();
    let all = datagrams(Path::new(CAPTURE));
    assert!(all.len() > 100, "{} datagrams", all.len());
    assert!(dissect(Path::new(CAPTURE), Some("rdtp.malformed"), &["frame.number"]).is_empty());
    assert_eq!(dissect(Path::new(CAPTURE), Some("!rdtp"), &["frame.number"]), Vec::<Vec<String>>::new());
    let get = |d: &Dgram, k: &str| d.f.get(k).cloned().unwrap_or_default();
    const SERVER: u16 = 7447;
    const ROUTER: u16 = 7448;

    // The catalogue through r1.
    let lists: Vec<&Dgram> = all.iter().filter(|d| d.ty == "0x07").collect();
    assert_eq!(lists.len(), 2, "ListResponse upstream and downstream");
    for l in &lists {
        assert_eq!(get(l, "rdtp.name"), "obj.bin;small.txt");
        assert_eq!(get(l, "rdtp.size"), "40000;6");
        assert_eq!(get(l, "rdtp.eid"), format!("{eid};{}", Eid::of(b"hello\n").to_hex()));
    }
    // Names resolve to the object's EID and size (twice, two fetches).
    let resolved: Vec<&Dgram> = all.iter().filter(|d| d.ty == "0x05").collect();
    assert_eq!(resolved.len(), 4);
    assert!(resolved.iter().all(|d| get(d, "rdtp.eid") == eid && get(d, "rdtp.size") == "40000"));

    // Data: every unit of the object to each client, with its EID, size and lengths.
    let data: Vec<&Dgram> = all.iter().filter(|d| d.ty == "0x02").collect();
    assert!(data.iter().all(|d| get(d, "rdtp.eid") == eid && get(d, "rdtp.total_size") == "40000"));
    for d in &data {
        let offset: u64 = get(d, "rdtp.offset").parse().unwrap();
        assert_eq!(offset % UNIT, 0, "{d:?}");
        let want = (40_000 - offset).min(UNIT);
        assert_eq!(get(d, "rdtp.payload_length"), want.to_string(), "{d:?}");
    }
    let units: BTreeSet<u64> = (0..40_000u64.div_ceil(UNIT)).map(|u| u * UNIT).collect();
    let clients: BTreeSet<u16> = data.iter().filter(|d| d.src == ROUTER).map(|d| d.dst).collect();
    assert_eq!(clients.len(), 2, "two fetches");
    let mut sources = Vec::new();
    for c in &clients {
        let to: Vec<&&Dgram> = data.iter().filter(|d| d.dst == *c).collect();
        let offsets: BTreeSet<u64> = to.iter().map(|d| get(d, "rdtp.offset").parse().unwrap()).collect();
        assert_eq!(offsets, units, "client {c} got every unit");
        let by: BTreeSet<(String, String, String)> = to
            .iter()
            .map(|d| (get(d, "rdtp.served_by"), get(d, "rdtp.hops"), get(d, "rdtp.data.flags.cached")))
            .collect();
        assert_eq!(by.len(), 1, "client {c}: {by:?}");
        sources.push(by.into_iter().next().unwrap());
    }
    sources.sort();
    // The first fetch from the origin through r1 (one hop); the second from r1's store.
    let t = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
    assert_eq!(sources, [t("origin", "1", "0"), t("r1", "0", "1")]);
    let upstream: Vec<&&Dgram> = data.iter().filter(|d| d.src == SERVER).collect();
    assert!(!upstream.is_empty());
    assert!(upstream.iter().all(|d| get(d, "rdtp.served_by") == "origin" && get(d, "rdtp.hops") == "0"));

    // Every answer carries the tag of a request its receiver sent to its sender before.
    let is_request = |ty: &str| ["0x01", "0x04", "0x06", "0x09"].contains(&ty);
    for (i, d) in all.iter().enumerate().filter(|(_, d)| !is_request(&d.ty)) {
        let tag = get(d, "rdtp.tag");
        let asked =
            all[..i].iter().any(|r| is_request(&r.ty) && r.src == d.dst && r.dst == d.src && get(r, "rdtp.tag") == tag);
        assert!(asked, "frame {}: answer with tag {tag} nobody asked for", d.frame);
    }

    // Verified streaming: the object has 3 blocks of 16 KiB; each fetch asks for block 0's
    // proof (its 2 siblings), which r1 relays from the origin (it keeps no trees).
    let outboard = rdtp_proto::tree::Outboard::of(&object);
    let proofs: Vec<&Dgram> = all.iter().filter(|d| d.ty == "0x0a").collect();
    assert!(!proofs.is_empty(), "no Proof");
    for p in &proofs {
        assert_eq!(get(p, "rdtp.eid"), eid);
        assert_eq!(get(p, "rdtp.served_by"), "origin", "{p:?}");
        let hops = if p.src == SERVER { "0" } else { "1" };
        assert_eq!(get(p, "rdtp.hops"), hops, "{p:?}");
        // The siblings are those of the object's hash tree (what the server's outboard holds).
        let count: usize = get(p, "rdtp.proof.count").parse().unwrap();
        let block: u64 = get(p, "rdtp.proof.block").parse().unwrap();
        let want: Vec<String> = outboard.proof(block, count).unwrap().iter().map(hex::encode).collect();
        assert_eq!(get(p, "rdtp.proof.sibling"), want.join(";"), "{p:?}");
    }
    assert!(proofs.iter().any(|p| p.src == ROUTER), "relayed to a client");
    for q in all.iter().filter(|d| d.ty == "0x09") {
        assert_eq!(get(q, "rdtp.eid"), eid);
        assert!(!get(q, "rdtp.token").is_empty(), "frame {}: a ProofRequest without a token", q.frame);
    }

    // Retries: the refused request's tag; the next request on that path carries the token.
    let retries: Vec<usize> = (0..all.len()).filter(|&i| all[i].ty == "0x08").collect();
    assert!(retries.len() >= 5, "a Retry per new client address and one from the server: {}", retries.len());
    assert!(retries.iter().any(|&i| all[i].src == SERVER), "the server validates the router too");
    for &i in &retries {
        let r = &all[i];
        let token = get(r, "rdtp.token");
        assert_eq!(token.len(), 40, "20-byte token");
        let next = all[i + 1..].iter().find(|q| is_request(&q.ty) && q.src == r.dst && q.dst == r.src).unwrap();
        assert_eq!(
            get(next, "rdtp.token"),
            token,
            "frame {}: request after the Retry of frame {}",
            next.frame,
            r.frame
        );
    }

    // Nacks: Busy from r1 when more than 8 units are pending, each followed by a re-request
    // of the refused range; UnknownContent for missing.bin from the origin, through r1.
    let nacks: Vec<usize> = (0..all.len()).filter(|&i| all[i].ty == "0x03").collect();
    let busy: Vec<usize> = nacks.iter().copied().filter(|&i| get(&all[i], "rdtp.nack.code") == "4").collect();
    assert!(!busy.is_empty(), "no Nack Busy");
    for &i in &busy {
        let n = &all[i];
        assert_eq!((get(n, "rdtp.nack.from"), get(n, "rdtp.hops"), n.src), ("r1".to_string(), "0".to_string(), ROUTER));
        let again = all[i + 1..]
            .iter()
            .find(|q| q.ty == "0x01" && q.src == n.dst && get(q, "rdtp.request.flags.retransmission") == "1")
            .unwrap_or_else(|| panic!("frame {}: Busy never re-requested", n.frame));
        assert_eq!(get(again, "rdtp.offset"), get(n, "rdtp.offset"));
    }
    let unknown: Vec<(u16, String, String)> = nacks
        .iter()
        .map(|&i| &all[i])
        .filter(|n| get(n, "rdtp.nack.code") == "1")
        .map(|n| (n.src, get(n, "rdtp.nack.from"), get(n, "rdtp.hops")))
        .collect();
    assert_eq!(unknown, [(SERVER, "origin".into(), "0".into()), (ROUTER, "origin".into(), "1".into())]);
}
