//! Compiles the ns-3 applications and the scenario runner in `cpp/` (-O2) and links the
//! ns-3 shared libraries. Without ns-3 (no `ns3/core-module.h`) nothing is compiled and the
//! `rdtp_ns3` cfg stays unset, so `rdtp-sim` builds everywhere and explains at run time.
//!
//! Which ns-3, first found wins:
//! 1. `RDTP_NS3_PREFIX`, default `<workspace>/.venv-ns3`: ns-3 3.44 from the PyPI `ns3` wheel,
//!    which `tools/setup.sh` installs into that virtual environment. The prefix may be the
//!    environment (its `lib/python3*/site-packages/ns3` is used) or any directory holding
//!    `include/ns3/` and `lib64/` or `lib/`. The programs get an rpath to its libraries.
//! 2. `NS3_INCLUDE_DIR` (the directory holding `ns3/`; default `/usr/include`) and
//!    `NS3_LIB_DIR` (default: the system library directories): e.g. Debian's libns3-dev 3.37.
//!
//! ns-3 3.37 wants C++17 (its headers do not compile as C++20), 3.44 wants C++20; both are
//! tested. The version found (`version-defines.h`, else the `ns3-core.pc` file, else the
//! libraries' names) reaches the C++ as `RDTP_NS3_VERSION` (each run's `run.toml`) and
//! the Rust as the `RDTP_NS3_VERSION` environment variable (the banner, `sweep.toml`).
//! `RDTP_NS3_DISABLE=1` builds without ns-3 even if it is installed.

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

/// Where an ns-3 installation is: its include directory (holding `ns3/`) and, if known, the
/// directory of its libraries.
struct Ns3 {
    include: PathBuf,
    lib_dirs: Vec<PathBuf>,
}

/// ns-3 under `prefix` (`RDTP_NS3_PREFIX` or the workspace's `.venv-ns3`): the prefix itself,
/// or the `ns3` package of a Python environment there (the PyPI wheel's layout).
fn prefix_ns3(prefix: &Path) -> Option<Ns3> {
    let mut roots = vec![prefix.to_path_buf()];
    for lib in ["lib", "lib64"] {
        let Ok(entries) = std::fs::read_dir(prefix.join(lib)) else { continue };
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("python3")))
            .collect();
        pythons.sort();
        roots.extend(pythons.into_iter().map(|p| p.join("site-packages/ns3")));
    }
    let root = roots.into_iter().find(|r| r.join("include/ns3/core-module.h").exists())?;
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    Some(Ns3 { include: root.join("include"), lib_dirs: vec![root.join("lib64"), root.join("lib")] })
}

/// The ns-3 version: `version-defines.h` (Debian's 3.37: `3.37.0`), else the `Version:` of
/// `pkgconfig/ns3-core.pc` beside the libraries (the wheel's 3.44: `3.44`), else the
/// version in the libraries' names.
fn version(include: &Path, lib_dir: &Path, prefix: &str) -> String {
    if let Ok(text) = std::fs::read_to_string(include.join("ns3/version-defines.h")) {
        let field = |name: &str| {
            text.lines().find_map(|l| l.strip_prefix("#define ")?.strip_prefix(name)?.trim().parse::<u32>().ok())
        };
        if let (Some(a), Some(b), Some(c)) =
            (field("NS3_VERSION_MAJOR"), field("NS3_VERSION_MINOR"), field("NS3_VERSION_PATCH"))
        {
            return format!("{a}.{b}.{c}");
        }
    }
    if let Ok(text) = std::fs::read_to_string(lib_dir.join("pkgconfig/ns3-core.pc"))
        && let Some(v) = text.lines().find_map(|l| l.strip_prefix("Version:"))
    {
        return v.trim().to_string();
    }
    prefix.strip_prefix("ns3.").and_then(|v| v.strip_suffix('-')).unwrap_or("unknown").to_string()
}

/// Major and minor of a version string such as `3.44` or `3.37.0`.
fn major_minor(version: &str) -> (u32, u32) {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
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
    println!("cargo:rerun-if-env-changed=RDTP_NS3_PREFIX");
    println!("cargo:rerun-if-env-changed=NS3_INCLUDE_DIR");
    println!("cargo:rerun-if-env-changed=NS3_LIB_DIR");
    println!("cargo:rerun-if-env-changed=RDTP_NS3_DISABLE");

    if env::var("RDTP_NS3_DISABLE").is_ok_and(|v| v == "1") {
        println!("cargo:warning=rdtp-ns3: RDTP_NS3_DISABLE=1, building rdtp-sim without ns-3");
        return;
    }
    // A prefix that is not there yet (tools/setup.sh not run) is not watched: cargo would
    // rerun this script on every build. tools/setup.sh touches this file after installing.
    let prefix = env::var_os("RDTP_NS3_PREFIX").map_or_else(|| manifest.join("../../.venv-ns3"), PathBuf::from);
    let ns3 = match prefix_ns3(&prefix) {
        Some(found) => found,
        None => {
            if env::var_os("RDTP_NS3_PREFIX").is_some() {
                println!(
                    "cargo:warning=rdtp-ns3: RDTP_NS3_PREFIX={} holds no ns-3 (include/ns3/core-module.h)",
                    prefix.display()
                );
            }
            Ns3 {
                include: PathBuf::from(env::var("NS3_INCLUDE_DIR").unwrap_or_else(|_| "/usr/include".into())),
                lib_dirs: match env::var("NS3_LIB_DIR") {
                    Ok(d) => vec![PathBuf::from(d)],
                    Err(_) => LIB_DIRS.iter().map(PathBuf::from).collect(),
                },
            }
        }
    };
    let include = ns3.include;
    if !include.join("ns3/core-module.h").exists() {
        println!(
            "cargo:warning=rdtp-ns3: ns-3 not found (no {} and no {}); rdtp-sim is built without the simulator \
             (tools/setup.sh installs ns-3 3.44)",
            prefix.display(),
            include.join("ns3/core-module.h").display()
        );
        return;
    }
    let Some((lib_dir, lib_prefix, suffix)) = library_names(&ns3.lib_dirs) else {
        println!("cargo:warning=rdtp-ns3: ns-3 headers found but no libns3 core library; building without ns-3");
        return;
    };
    let version = version(&include, &lib_dir, &lib_prefix);
    let core_pc = lib_dir.join("pkgconfig/ns3-core.pc");
    if core_pc.exists() {
        println!("cargo:rerun-if-changed={}", core_pc.display());
    }

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
        .std(if major_minor(&version) >= (3, 41) { "c++20" } else { "c++17" })
        .opt_level(2)
        .debug(false)
        .include(&include)
        .include(&ffi_include)
        .include(&cpp)
        // rdtp-ffi's `experiments` functions (Cargo.toml turns the feature on).
        .define("RDTP_EXPERIMENTS", None)
        .define("RDTP_NS3_VERSION", format!("\"{version}\"").as_str())
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-deprecated-declarations")
        .files(&sources);
    build.compile("rdtp_ns3_cpp");

    if !is_system_dir(&lib_dir) {
        println!("cargo:rustc-link-search=native={}", lib_dir.display());
        // Every target (rdtp-sim, and the tests should they link it) finds the libraries
        // without LD_LIBRARY_PATH; the wheel's libraries find their own (GSL) by $ORIGIN.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib_dir.display());
    }
    for m in MODULES {
        println!("cargo:rustc-link-lib=dylib={lib_prefix}{m}{suffix}");
    }
    println!("cargo:rustc-env=RDTP_NS3_VERSION={version}");
    println!("cargo:rustc-cfg=rdtp_ns3");
}

fn is_system_dir(d: &Path) -> bool {
    ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib", "/usr/lib64"]
        .iter()
        .any(|s| d == Path::new(s))
}
