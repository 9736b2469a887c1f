//! Generates the C header from the crate's `extern "C"` items into `OUT_DIR/include/rdtp.h`,
//! never into the source tree. The committed `include/rdtp.h` (for C users without Rust
//! tooling, and for review) is checked against it by `tests/header.rs`, which says how to
//! refresh it. Crates that compile C or C++ against this ABI (`rdtp-ns3`) find the generated
//! directory in `DEP_RDTP_FFI_INCLUDE` (this package `links = "rdtp_ffi"`).

use std::path::PathBuf;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("include");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    std::fs::create_dir_all(&out).expect("create OUT_DIR/include");
    let header = out.join("rdtp.h");
    let config = cbindgen::Config::from_file(format!("{dir}/cbindgen.toml")).expect("cbindgen.toml");
    match cbindgen::Builder::new().with_crate(&dir).with_config(config).generate() {
        Ok(bindings) => {
            // Rewrites the file only when its text changes, so dependents rebuild only then.
            bindings.write_to_file(&header);
        }
        // Fall back to the committed header (e.g. while a syntax error is being fixed).
        Err(e) => {
            println!("cargo:warning=cbindgen could not generate rdtp.h ({e}); using the committed include/rdtp.h");
            std::fs::copy(format!("{dir}/include/rdtp.h"), &header).expect("copy include/rdtp.h");
        }
    }
    println!("cargo:include={}", out.display());
}
