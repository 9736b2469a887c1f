//! `rdtp-testbed check` names every missing prerequisite at once, not only the first one it
//! meets (a newcomer then installs them in one go). Runs anywhere: with `PATH` pointing
//! nowhere, `ip`, `ss`, `ethtool` and `ping` are all missing, root or not.

use std::process::Command;

#[test]
fn check_names_every_missing_tool_at_once() {
    let o = Command::new(env!("CARGO_BIN_EXE_rdtp-testbed"))
        .arg("check")
        .env("PATH", "/nonexistent-rdtp-check-path")
        .env_remove("RDTP_TESTBED_RDTP")
        .env_remove("RDTP_TESTBED_SIM")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "exit code 3: a prerequisite is missing\n{stderr}");
    for tool in ["ip (apt-get install iproute2)", "ss (apt-get install iproute2)", "ethtool (apt-get install ethtool)"]
    {
        assert!(stderr.contains(tool), "{tool:?} not named:\n{stderr}");
    }
    assert!(stderr.contains("ping (apt-get install iputils-ping"), "ping not named:\n{stderr}");
    assert!(stderr.contains("apt-get install iproute2 ethtool iputils-ping"), "one install line:\n{stderr}");
}
