//! Network namespaces with one persistent tap each, configured with iproute2 and ethtool.
//!
//! Each host (the server, every client namespace) is `ip netns add NAME`, loopback up, IPv6
//! off (no router solicitations or MLD reports through the emulator), the TCP buffer limits,
//! and a persistent `tap0` (`ip tuntap add … mode tap`) with the host address, MTU, a default
//! route via the emulator's gateway address, and `ethtool -K tap0 tx off` (the tap cannot
//! offload checksums to the emulator, so the kernel must compute them). The emulator opens
//! the taps; deleting a namespace deletes its tap.

use anyhow::{Context as _, Result, anyhow};
use std::fs;
use std::io::Write;
use std::net::Ipv4Addr;
use std::process::{Command, Stdio};

use rdtp_scenario::network::PREFIX_LEN;

use crate::procs::output;

/// Where `ip netns` keeps its namespaces.
pub const NETNS_DIR: &str = "/var/run/netns";
/// The tap inside every namespace.
pub const TAP: &str = "tap0";

/// Create and configure namespace `ns` with `tap0` (`host` in the plan's subnet, default
/// route via `gw`; see `rdtp_scenario::network::subnet`).
pub fn create(ns: &str, host: Ipv4Addr, gw: Ipv4Addr, mtu: u32, tcp_buffer: u64) -> Result<()> {
    output("ip", &["netns", "add", ns])?;
    let sysctls = [
        "net.ipv6.conf.all.disable_ipv6=1".to_string(),
        "net.ipv6.conf.default.disable_ipv6=1".to_string(),
        format!("net.ipv4.tcp_rmem=4096 131072 {tcp_buffer}"),
        format!("net.ipv4.tcp_wmem=4096 16384 {tcp_buffer}"),
        "net.ipv4.tcp_no_metrics_save=1".to_string(),
    ];
    let mut args = vec!["netns", "exec", ns, "sysctl", "-qw"];
    args.extend(sysctls.iter().map(String::as_str));
    output("ip", &args)?;
    let batch = format!(
        "link set lo up\n\
         tuntap add dev {TAP} mode tap\n\
         link set {TAP} mtu {mtu}\n\
         link set {TAP} up\n\
         addr add {host}/{PREFIX_LEN} dev {TAP}\n\
         route add default via {gw} dev {TAP} onlink\n"
    );
    ip_batch(ns, &batch)?;
    output("ip", &["netns", "exec", ns, "ethtool", "-K", TAP, "tx", "off"]).map(|_| ())
}

fn ip_batch(ns: &str, commands: &str) -> Result<()> {
    let mut child = Command::new("ip")
        .args(["-n", ns, "-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run ip")?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(commands.as_bytes()).context("ip -batch")?;
    }
    let o = child.wait_with_output().context("ip -batch")?;
    if o.status.success() {
        Ok(())
    } else {
        Err(anyhow!("configuring {ns} failed: {}", String::from_utf8_lossy(&o.stderr).trim()))
    }
}

/// Steer the receive processing of `tap0` in `ns` to `cpus` (RPS): packets the emulator
/// writes into the tap are then handled in softirq on those CPUs, not on the emulator's.
pub fn set_rps(ns: &str, cpus: &[usize]) -> Result<()> {
    // The kernel's format: hex words of 32 CPUs, most significant first, comma-separated.
    let words = cpus.iter().max().map_or(1, |m| m / 32 + 1);
    let mut mask = vec![0u32; words];
    for &c in cpus {
        mask[words - 1 - c / 32] |= 1 << (c % 32);
    }
    let text = mask.iter().map(|w| format!("{w:08x}")).collect::<Vec<_>>().join(",");
    let path = format!("/sys/class/net/{TAP}/queues/rx-0/rps_cpus");
    let mut child = Command::new("ip")
        .args(["netns", "exec", ns, "tee", &path])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run ip")?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(format!("{text}\n").as_bytes()).context("rps_cpus")?;
    }
    let o = child.wait_with_output().context("rps_cpus")?;
    if o.status.success() {
        Ok(())
    } else {
        Err(anyhow!("cannot set {path} in {ns}: {}", String::from_utf8_lossy(&o.stderr).trim()))
    }
}

/// Kill whatever still runs in `ns`, then delete it (and its tap). Missing is fine.
pub fn delete(ns: &str) -> Result<()> {
    if !exists(ns) {
        return Ok(());
    }
    if let Ok(pids) = output("ip", &["netns", "pids", ns]) {
        for pid in pids.split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
            // These processes live in a namespace this testbed created.
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        }
    }
    match output("ip", &["netns", "del", ns]) {
        Ok(_) => Ok(()),
        Err(_) if !exists(ns) => Ok(()),
        Err(e) => Err(e),
    }
}

pub fn exists(ns: &str) -> bool {
    std::path::Path::new(NETNS_DIR).join(ns).exists()
}

/// Namespaces whose name starts with `prefix`.
pub fn list(prefix: &str) -> Vec<String> {
    let Ok(entries) = fs::read_dir(NETNS_DIR) else { return Vec::new() };
    let mut v: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect();
    v.sort();
    v
}

/// The pid in a testbed namespace name `rdtp-<pid>-…`.
pub fn owner_pid(name: &str) -> Option<i32> {
    name.strip_prefix("rdtp-")?.split('-').next()?.parse().ok()
}

/// Whether a process with this pid runs (any process: a conservative "still in use").
pub fn pid_alive(pid: i32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Kernel counters of `tap0` in `ns`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TapStats {
    pub rx_packets: u64,
    pub rx_dropped: u64,
    pub tx_packets: u64,
    pub tx_dropped: u64,
}

impl TapStats {
    pub fn since(&self, before: &TapStats) -> TapStats {
        TapStats {
            rx_packets: self.rx_packets.saturating_sub(before.rx_packets),
            rx_dropped: self.rx_dropped.saturating_sub(before.rx_dropped),
            tx_packets: self.tx_packets.saturating_sub(before.tx_packets),
            tx_dropped: self.tx_dropped.saturating_sub(before.tx_dropped),
        }
    }
}

pub fn tap_stats(ns: &str) -> Result<TapStats> {
    let text = output("ip", &["-n", ns, "-s", "-j", "link", "show", "dev", TAP])?;
    let v: serde_json::Value = serde_json::from_str(&text).context("ip -j link")?;
    let s = &v[0]["stats64"];
    let n = |dir: &str, k: &str| s[dir][k].as_u64().unwrap_or(0);
    Ok(TapStats {
        rx_packets: n("rx", "packets"),
        rx_dropped: n("rx", "dropped"),
        tx_packets: n("tx", "packets"),
        tx_dropped: n("tx", "dropped"),
    })
}

/// What `ss -tmn` reports for the TCP sockets in `ns`: socket count and the sums of
/// skmem rmem_alloc (r), wmem_queued (w) and sndbuf (tb), bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SocketMem {
    pub sockets: u64,
    pub rmem_alloc: u64,
    pub wmem_queued: u64,
    pub sndbuf: u64,
}

pub fn tcp_socket_memory(ns: &str) -> Result<SocketMem> {
    let text = output("ip", &["netns", "exec", ns, "ss", "-tmnH", "state", "established"])?;
    Ok(parse_ss(&text))
}

pub fn parse_ss(text: &str) -> SocketMem {
    let mut m = SocketMem::default();
    for part in text.split("skmem:(").skip(1) {
        let Some(inner) = part.split(')').next() else { continue };
        m.sockets += 1;
        for field in inner.split(',') {
            let num = |p: &str| field.strip_prefix(p).and_then(|v| v.parse::<u64>().ok());
            if let Some(v) = num("tb") {
                m.sndbuf += v;
            } else if let Some(v) = num("rb") {
                let _ = v;
            } else if let Some(v) = num("r") {
                m.rmem_alloc += v;
            } else if let Some(v) = num("w") {
                m.wmem_queued += v;
            }
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ss_skmem() {
        let text = "ESTAB 0 4128768 10.200.0.2:7447 10.201.0.2:40000\n\t skmem:(r0,rb131072,t0,tb4194304,f2816,w1252608,o0,bl0,d0)\n\
                    ESTAB 0 0 10.200.0.2:7447 10.201.1.2:40002\n\t skmem:(r512,rb131072,t0,tb87040,f0,w0,o0,bl0,d0)\n";
        let m = parse_ss(text);
        assert_eq!(m, SocketMem { sockets: 2, rmem_alloc: 512, wmem_queued: 1252608, sndbuf: 4281344 });
    }

    #[test]
    fn owners() {
        assert_eq!(owner_pid("rdtp-1234-c7"), Some(1234));
        assert_eq!(owner_pid("rdtp-1234-rt-r1"), Some(1234));
        assert_eq!(owner_pid("rdtp-man-srv"), None);
    }
}
