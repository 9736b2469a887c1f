//! Compiles the C programs in `tests/` against `include/rdtp.h` and the static library and
//! runs them: the header is valid C and the ABI works from C.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn c_program_fetches_through_the_abi() {
    let stdout = compile_and_run("smoke.c");
    assert!(stdout.contains("finished=1 read=3000000"));
}

#[test]
fn c_program_fetches_through_a_router_twice() {
    let stdout = compile_and_run("router_smoke.c");
    assert!(stdout.contains("first=1000000 second=1000000 forwarded=714 hits=714 cs_entries=714"), "{stdout}");
    // The first fetch came from the origin one router away, the second from the router's store.
    assert!(
        stdout.contains(
            "source origin cached=0 hops=1 units=714 bytes=1000000\nsource ap cached=1 hops=0 units=714 bytes=1000000\n"
        ),
        "{stdout}"
    );
}

/// Compile `tests/<file>` with the static library, run it, return its stdout (it must exit 0).
fn compile_and_run(file: &str) -> String {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let lib = static_library();
    let Ok(cc) = which_cc() else {
        panic!("no C compiler (cc/gcc) on PATH: this test needs one");
    };
    let out = std::env::temp_dir().join(format!("rdtp-ffi-{file}-{}", std::process::id()));
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Werror", "-O1"])
        .arg(crate_dir.join("tests").join(file))
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm"])
        .arg("-o")
        .arg(&out)
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compiling {file} failed");
    let run = Command::new(&out).output().expect("run the program");
    let _ = std::fs::remove_file(&out);
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    eprintln!("{stdout}");
    assert!(run.status.success(), "{file} exited with {:?}: {stdout}", run.status.code());
    stdout
}

/// The static library cargo built for this test run. The test binary lives in
/// `target/<profile>/deps`; `cargo build` copies the library to `target/<profile>/`, while
/// `cargo test` leaves it in `deps/` under a hashed name: take the newest of those.
fn static_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&deps)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("librdtp_ffi-") && n.ends_with(".a"))
        })
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .collect();
    found.sort();
    match found.pop() {
        Some((_, p)) => p,
        None => {
            let uplifted = deps.parent().unwrap().join("librdtp_ffi.a");
            assert!(uplifted.exists(), "no librdtp_ffi static library in {} or its parent", deps.display());
            uplifted
        }
    }
}

fn which_cc() -> Result<String, ()> {
    for cc in ["cc", "gcc", "clang"] {
        if Command::new(cc).arg("--version").output().is_ok_and(|o| o.status.success()) {
            return Ok(cc.to_string());
        }
    }
    Err(())
}
