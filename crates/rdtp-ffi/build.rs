//! Generates `include/rdtp.h` from the crate's `extern "C"` items.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed=src/router.rs");
    println!("cargo:rerun-if-changed=src/sources.rs");
    println!("cargo:rerun-if-changed=src/wifi.rs");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let config = cbindgen::Config::from_file(format!("{dir}/cbindgen.toml")).expect("cbindgen.toml");
    match cbindgen::Builder::new().with_crate(&dir).with_config(config).generate() {
        Ok(bindings) => {
            bindings.write_to_file(format!("{dir}/include/rdtp.h"));
        }
        // Keep the committed header if generation fails (e.g. a syntax error being fixed).
        Err(e) => println!("cargo:warning=cbindgen could not generate rdtp.h: {e}"),
    }
}
