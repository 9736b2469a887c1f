//! Compiles `tests/smoke.c` against `include/rdtp.h` and the static library, runs it: the
//! header is valid C and the ABI works from C.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn c_program_fetches_through_the_abi() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // The test binary lives in target/<profile>/deps; the static library one level up.
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|d| d.parent()).unwrap().to_path_buf();
    let lib = profile_dir.join("librdtp_ffi.a");
    if !lib.exists() {
        panic!("{} missing: build the crate first (cargo build -p rdtp-ffi)", lib.display());
    }
    let Ok(cc) = which_cc() else {
        panic!("no C compiler (cc/gcc) on PATH: this test needs one");
    };
    let out = std::env::temp_dir().join(format!("rdtp-ffi-smoke-{}", std::process::id()));
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Werror", "-O1"])
        .arg(crate_dir.join("tests/smoke.c"))
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm"])
        .arg("-o")
        .arg(&out)
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compiling smoke.c failed");
    let run = Command::new(&out).output().expect("run smoke");
    let _ = std::fs::remove_file(&out);
    let stdout = String::from_utf8_lossy(&run.stdout);
    eprintln!("{stdout}");
    assert!(run.status.success(), "smoke exited with {:?}: {stdout}", run.status.code());
    assert!(stdout.contains("finished=1 read=3000000"));
}

fn which_cc() -> Result<String, ()> {
    for cc in ["cc", "gcc", "clang"] {
        if Command::new(cc).arg("--version").output().is_ok_and(|o| o.status.success()) {
            return Ok(cc.to_string());
        }
    }
    Err(())
}
