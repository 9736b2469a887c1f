//! Compiles the ns-3 applications and the scenario runner in `cpp/` (C++17, -O2) and links
//! the ns-3 shared libraries. Without ns-3 (no `ns3/core-module.h`) nothing is compiled and
//! the `rdtp_ns3` cfg stays unset, so `rdtp-sim` builds everywhere and explains at run time.
//!
//! Environment: `NS3_INCLUDE_DIR` (the directory holding `ns3/`; default `/usr/include`),
//! `NS3_LIB_DIR` (default: the system library directories), `RDTP_NS3_DISABLE=1` (build
//! without ns-3 even if it is installed).

use std::env;
use std::path::{Path, PathBuf};

/// The ns-3 modules rdtp-sim links, in dependency order (users before providers).
const MODULES: &[&str] = &[
    "flow-monitor",
    "fd-net-device",
    "wifi",
    "point-to-point",
    "applications",
    "internet",
    "bridge",
    "traffic-control",
    "mobility",
    "spectrum",
    "propagation",
    "antenna",
    "energy",
    "stats",
    "network",
    "core",
];

const LIB_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/lib",
    "/usr/local/lib64",
];

/// How the libraries are named: Debian's `libns3-core.so` or a source build's
/// `libns3.37-core-default.so` / `-optimized.so`.
fn library_names(dirs: &[PathBuf]) -> Option<(PathBuf, String, String)> {
    for dir in dirs {
        if dir.join("libns3-core.so").exists() {
            return Some((dir.clone(), "ns3-".into(), String::new()));
        }
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // libns3.<ver>-core-<profile>.so
            if let Some(rest) = name.strip_prefix("libns3.")
                && let Some(stem) = rest.strip_suffix(".so")
                && let Some((ver, tail)) = stem.split_once("-core")
            {
                return Some((dir.clone(), format!("ns3.{ver}-"), tail.to_string()));
            }
        }
    }
    None
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(rdtp_ns3)");
    println!("cargo:rerun-if-changed=cpp");
    // The C ABI's header as rdtp-ffi's build script generated it (its `links` metadata);
    // the committed copy if that is missing.
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let ffi_include =
        env::var_os("DEP_RDTP_FFI_INCLUDE").map_or_else(|| manifest.join("../rdtp-ffi/include"), PathBuf::from);
    println!("cargo:rerun-if-changed={}", ffi_include.join("rdtp.h").display());
    println!("cargo:rerun-if-env-changed=NS3_INCLUDE_DIR");
    println!("cargo:rerun-if-env-changed=NS3_LIB_DIR");
    println!("cargo:rerun-if-env-changed=RDTP_NS3_DISABLE");

    if env::var("RDTP_NS3_DISABLE").is_ok_and(|v| v == "1") {
        println!("cargo:warning=rdtp-ns3: RDTP_NS3_DISABLE=1, building rdtp-sim without ns-3");
        return;
    }
    let include = PathBuf::from(env::var("NS3_INCLUDE_DIR").unwrap_or_else(|_| "/usr/include".into()));
    if !include.join("ns3/core-module.h").exists() {
        println!(
            "cargo:warning=rdtp-ns3: ns-3 not found ({} missing); rdtp-sim is built without the simulator \
             (apt-get install libns3-dev libgsl-dev)",
            include.join("ns3/core-module.h").display()
        );
        return;
    }
    let lib_dirs: Vec<PathBuf> = match env::var("NS3_LIB_DIR") {
        Ok(d) => vec![PathBuf::from(d)],
        Err(_) => LIB_DIRS.iter().map(PathBuf::from).collect(),
    };
    let Some((lib_dir, prefix, suffix)) = library_names(&lib_dirs) else {
        println!("cargo:warning=rdtp-ns3: ns-3 headers found but no libns3 core library; building without ns-3");
        return;
    };

    let cpp = manifest.join("cpp");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&cpp)
        .expect("cpp/ exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cc"))
        .collect();
    sources.sort();

    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .opt_level(2)
        .debug(false)
        .include(&include)
        .include(&ffi_include)
        .include(&cpp)
        // rdtp-ffi's `experiments` functions (Cargo.toml turns the feature on).
        .define("RDTP_EXPERIMENTS", None)
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-deprecated-declarations")
        .files(&sources);
    build.compile("rdtp_ns3_cpp");

    if !is_system_dir(&lib_dir) {
        println!("cargo:rustc-link-search=native={}", lib_dir.display());
        println!("cargo:rustc-link-arg-bins=-Wl,-rpath,{}", lib_dir.display());
    }
    for m in MODULES {
        println!("cargo:rustc-link-lib=dylib={prefix}{m}{suffix}");
    }
    println!("cargo:rustc-cfg=rdtp_ns3");
}

fn is_system_dir(d: &Path) -> bool {
    ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib", "/usr/lib64"]
        .iter()
        .any(|s| d == Path::new(s))
}
