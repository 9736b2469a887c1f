//! The committed `include/rdtp.h` is the header build.rs generates from the crate (into
//! `OUT_DIR`), so C users who read or vendor the committed file see the ABI as it is.

#[test]
fn committed_header_is_the_generated_one() {
    let generated_path = concat!(env!("OUT_DIR"), "/include/rdtp.h");
    let committed_path = concat!(env!("CARGO_MANIFEST_DIR"), "/include/rdtp.h");
    let generated = std::fs::read_to_string(generated_path).expect("build.rs wrote the header");
    let committed = std::fs::read_to_string(committed_path).unwrap_or_default();
    assert!(
        generated == committed,
        "crates/rdtp-ffi/include/rdtp.h is not the header the C ABI generates (an extern \"C\" item \
         or cbindgen.toml changed). Refresh it with\n    cp {generated_path} {committed_path}\nand commit it."
    );
}
