//! `rdtp bench loopback` (issue 12): rdtp and the kernel-TCP baseline fetch the same file in
//! one run, and the JSON rows say what the table says. Not a timed test: nothing here
//! asserts a speed.

use std::process::Command;

#[test]
fn loopback_bench_runs_rdtp_beside_kernel_tcp_and_writes_json() {
    let dir = std::env::temp_dir().join(format!("rdtp-bench-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("rows.json");
    let out = Command::new(env!("CARGO_BIN_EXE_rdtp"))
        .args(["bench", "loopback", "--size", "3MiB", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("rdtp bbr") && table.contains("kernel TCP bbr"), "{table}");
    let rows: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert_eq!(r["bytes"], 3 << 20);
        assert!(r["goodput_mbps"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["client_cpu_s_per_gib"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert!(rows[0]["vs_tcp"].as_f64().unwrap() > 0.0);
    assert!(rows[1]["vs_tcp"].is_null());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn loopback_bench_refuses_a_missing_file() {
    let out = Command::new(env!("CARGO_BIN_EXE_rdtp"))
        .args(["bench", "loopback", "--file", "/nonexistent/rdtp-bench-file", "--no-tcp"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--file"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn workers_bench_compares_worker_counts_for_the_server_and_a_warm_router() {
    let dir = tempfile::tempdir().unwrap();
    for (router, objects) in [(false, 1), (true, 3)] {
        let json = dir.path().join(format!("w-{router}.json"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rdtp"));
        cmd.args(["bench", "workers", "--size", "1MiB", "--fetches", "3", "--workers", "1,2", "--json"]).arg(&json);
        if router {
            cmd.arg("--router");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let rows: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let rows = rows.as_array().unwrap();
        assert_eq!(rows.len(), 2);
        for (r, w) in rows.iter().zip([1, 2]) {
            assert_eq!(r["workers"], w);
            assert_eq!(r["daemon"], if router { "route" } else { "serve" });
            assert_eq!(r["objects"], objects);
            assert_eq!(r["bytes"], 3 << 20);
            assert!(r["goodput_mbps"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["daemon_cpu_s_per_gib"].as_f64().unwrap() >= 0.0, "{r}");
        }
        assert_eq!(rows[0]["vs_first"], 1.0);
    }
    let out = Command::new(env!("CARGO_BIN_EXE_rdtp")).args(["bench", "workers", "--workers", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
