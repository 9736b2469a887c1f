//! What the tests reading docs/PROTOCOL.md share: its test vectors, as the document gives
//! them (vectors.rs checks their meaning, dissector.rs the Wireshark dissector on them).
#![allow(dead_code)] // each test crate uses its part

pub const PROTOCOL_MD: &str = include_str!("../../../../docs/PROTOCOL.md");

/// Every vector of the document, in order: its name (the line "Vector `name`") and the bytes
/// of the ```hex block after it (`#` comments and whitespace dropped).
pub fn vectors() -> Vec<(String, Vec<u8>)> {
    marked("Vector `")
}

/// The NDN vectors of the section "NDN (v0.3) packets" (lines "NDN vector `name`"), the
/// same way.
pub fn ndn_vectors() -> Vec<(String, Vec<u8>)> {
    marked("NDN vector `")
}

/// The vectors introduced by `marker` (which ends in a backquote before the name).
fn marked(marker: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut rest = PROTOCOL_MD;
    while let Some(at) = rest.find(marker) {
        rest = &rest[at + marker.len()..];
        let name = rest[..rest.find('`').expect("closing backquote")].to_string();
        let start = rest.find("```hex").expect("hex block") + "```hex".len();
        let end = start + rest[start..].find("```").expect("end of block");
        let hex: String = rest[start..end]
            .lines()
            .map(|l| l.split('#').next().unwrap_or(""))
            .flat_map(|l| l.chars().filter(|c| !c.is_whitespace()))
            .collect();
        let bytes = hex::decode(&hex).unwrap_or_else(|e| panic!("vector {name}: bad hex: {e}"));
        out.push((name, bytes));
        rest = &rest[end..];
    }
    out
}

/// The bytes of vector `name`.
pub fn vector(name: &str) -> Vec<u8> {
    vectors()
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, b)| b)
        .unwrap_or_else(|| panic!("vector {name} missing from PROTOCOL.md"))
}
