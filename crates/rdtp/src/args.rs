//! Parsing what users type: server addresses (`host[:port]`), fetch targets (name or
//! EID) and sizes with unit suffixes.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use rdtp_proto::Eid;
use rdtp_proto::receiver::Target;
use rdtp_proto::wire::{RESOLVE_MAX_NAME, check_name};

use crate::error::{Error, Result};
use crate::socket::DEFAULT_PORT;

/// Resolve a server address: `host:port`, `host` (port 7447), `1.2.3.4[:port]`,
/// `[::1]:port`, `[::1]` or `::1`. Takes the first address the resolver returns.
pub fn parse_server(s: &str) -> Result<SocketAddr> {
    parse_addr(s, DEFAULT_PORT)
}

/// [`parse_server`] with another default port (`rdtp fetch --ndn`: NDN's 6363).
pub fn parse_addr(s: &str, default_port: u16) -> Result<SocketAddr> {
    let s = s.trim();
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, default_port));
    }
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let ip = inner.parse::<IpAddr>().map_err(|_| Error::Usage(format!("invalid address {s:?}")))?;
        return Ok(SocketAddr::new(ip, default_port));
    }
    let (host, port) = match s.rsplit_once(':') {
        Some((h, p)) => {
            let port = p.parse::<u16>().map_err(|_| Error::Usage(format!("invalid port in {s:?}")))?;
            (h, port)
        }
        None => (s, default_port),
    };
    if host.is_empty() {
        return Err(Error::Usage(format!("missing host in {s:?}")));
    }
    // A host that does not resolve is a mistyped argument as much as a bad port is: exit
    // code 2, like every other usage error.
    let mut addrs = (host, port).to_socket_addrs().map_err(|e| Error::Usage(format!("cannot resolve {host}: {e}")))?;
    addrs.next().ok_or_else(|| Error::Usage(format!("cannot resolve {host}: no addresses")))
}

/// A 64-digit hexadecimal string is an EID; anything else is a name.
pub fn parse_target(s: &str) -> Target {
    if s.len() == 64
        && let Ok(eid) = s.parse::<Eid>()
    {
        return Target::Eid(eid);
    }
    Target::Name(s.to_string())
}

/// [`parse_target`] for a fetch: a name no server can resolve — empty, or longer than
/// [`RESOLVE_MAX_NAME`] bytes ([`check_name`]) — is a usage error, refused before anything
/// is sent (issue 23: it used to wait for the idle timeout and report the server
/// unreachable).
pub fn parse_fetch_target(s: &str) -> Result<Target> {
    let target = parse_target(s);
    if let Target::Name(name) = &target
        && let Err(why) = check_name(name)
    {
        let shown = if name.len() > 64 { format!("a name of {} bytes", name.len()) } else { format!("name {name:?}") };
        return Err(Error::Usage(format!(
            "{shown} cannot be fetched: {why} (a name is 1 to {RESOLVE_MAX_NAME} bytes of UTF-8; an EID is 64 hex digits)"
        )));
    }
    Ok(target)
}

/// Parse a size: a number (fractions allowed) with an optional suffix — `K`, `M`, `G`,
/// `T` (powers of 1000, also `kB`, `MB`, …) or `KiB`, `MiB`, `GiB`, `TiB` (powers of
/// 1024); `B` or nothing means bytes. Case-insensitive. ([`rdtp_units::parse_size`], the
/// parser scenario and experiment files use too, as a usage error.)
pub fn parse_size(s: &str) -> Result<u64> {
    rdtp_units::parse_size(s)
        .map_err(|_| Error::Usage(format!("invalid size {s:?} (examples: 1048576, 64M, 64MiB, 1.5G)")))
}

/// `n` bytes in binary units with one decimal (`512 B`, `1.5 KiB`, `64.0 MiB`).
pub fn human_size(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.1} {}", UNITS[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1048576").unwrap(), 1 << 20);
        assert_eq!(parse_size("64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("64mib").unwrap(), 64 << 20);
        assert_eq!(parse_size("256M").unwrap(), 256_000_000);
        assert_eq!(parse_size("10K").unwrap(), 10_000);
        assert_eq!(parse_size("2KiB").unwrap(), 2048);
        assert_eq!(parse_size("1.5G").unwrap(), 1_500_000_000);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size(" 3 MB ").unwrap(), 3_000_000);
        assert_eq!(parse_size("0").unwrap(), 0);
        for bad in ["", "MiB", "12XB", "-1", "1.2.3M", "1e400"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_size("x").unwrap_err().exit_code(), 2);
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(64 << 20), "64.0 MiB");
    }

    #[test]
    fn eid_or_name() {
        let hex = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262";
        assert_eq!(parse_target(hex), Target::Eid(Eid::of(b"")));
        assert_eq!(parse_target(&hex.to_uppercase()), Target::Eid(Eid::of(b"")));
        // 64 characters that are not all hex, or 63 hex digits: names.
        let not_hex = format!("{}g", &hex[..63]);
        assert_eq!(parse_target(&not_hex), Target::Name(not_hex.clone()));
        assert_eq!(parse_target(&hex[..63]), Target::Name(hex[..63].to_string()));
        assert_eq!(parse_target("dir/file.bin"), Target::Name("dir/file.bin".into()));
        // A fetch refuses names no server can resolve, saying which limit they break.
        assert_eq!(parse_fetch_target("dir/file.bin").unwrap(), Target::Name("dir/file.bin".into()));
        assert_eq!(parse_fetch_target(hex).unwrap(), Target::Eid(Eid::of(b"")));
        let empty = parse_fetch_target("").unwrap_err().to_string();
        assert!(empty.contains("empty name") && empty.contains("1 to 1024 bytes"), "{empty}");
        assert!(parse_fetch_target(&"é".repeat(512)).is_ok(), "1024 bytes is the limit, included");
        let long = parse_fetch_target(&"a".repeat(5000)).unwrap_err();
        assert!(matches!(long, Error::Usage(_)));
        assert!(long.to_string().contains("a name of 5000 bytes") && long.to_string().contains("longer than 1024"));
    }

    #[test]
    fn server_addresses() {
        assert_eq!(parse_server("127.0.0.1:9000").unwrap(), "127.0.0.1:9000".parse().unwrap());
        assert_eq!(parse_server("127.0.0.1").unwrap(), "127.0.0.1:7447".parse().unwrap());
        assert_eq!(parse_server("[::1]:9000").unwrap(), "[::1]:9000".parse().unwrap());
        assert_eq!(parse_server("[::1]").unwrap(), "[::1]:7447".parse().unwrap());
        assert_eq!(parse_server("::1").unwrap(), "[::1]:7447".parse().unwrap());
        assert_eq!(parse_server("localhost:9000").unwrap().port(), 9000);
        assert!(parse_server("localhost").unwrap().ip().is_loopback());
        assert_eq!(parse_server("localhost").unwrap().port(), 7447);
        assert_eq!(parse_server("host:notaport").unwrap_err().exit_code(), 2);
        assert_eq!(parse_server(":80").unwrap_err().exit_code(), 2);
    }

    /// A host name that does not resolve is a usage error (exit 2), as a bad port is; it was
    /// a runtime error (exit 1). A NUL byte fails the lookup before any query leaves the
    /// machine, so the test sends nothing to a resolver.
    #[test]
    fn an_unresolvable_host_is_a_usage_error() {
        let e = parse_server("no\0such-host:9000").unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(e.to_string().contains("cannot resolve no\0such-host"), "{e}");
        assert_eq!(parse_server("no\0such-host").unwrap_err().exit_code(), 2);
    }
}
