//! The runtime's error type and the process exit codes it maps to.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | runtime error (socket failure, server refused the request, …) |
//! | 2 | usage error (bad arguments; clap's default) |
//! | 3 | content not found (the server has no such name or EID) |
//! | 4 | I/O error (output file, log file or served directory cannot be opened, read or written) |
//! | 5 | data validation failure (the content does not hash to its EID) |
//! | 6 | server unreachable (ICMP port unreachable, or no answer before the idle timeout) |
//! | 130, 143 | interrupted by SIGINT, SIGTERM (128 + the signal's number, as shells report it) |

use std::io;
use std::net::SocketAddr;

use rdtp_proto::receiver::FetchError;

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: runtime error.
pub const EXIT_RUNTIME: i32 = 1;
/// Exit code: usage error.
pub const EXIT_USAGE: i32 = 2;
/// Exit code: content not found.
pub const EXIT_NOT_FOUND: i32 = 3;
/// Exit code: I/O error on a local file.
pub const EXIT_IO: i32 = 4;
/// Exit code: data validation failure.
pub const EXIT_INTEGRITY: i32 = 5;
/// Exit code: server unreachable.
pub const EXIT_UNREACHABLE: i32 = 6;

/// Everything that can go wrong in the runtime.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad arguments or options.
    #[error("{0}")]
    Usage(String),
    /// The transfer failed in the protocol core (not found, timeout, integrity, refused).
    #[error("{}", fetch_message(.0))]
    Fetch(#[from] FetchError),
    /// The server cannot be reached: its port is closed (ICMP port unreachable →
    /// `ECONNREFUSED`) or there is no route to it.
    #[error("server unreachable: {addr}: {reason}")]
    Unreachable {
        /// The server's address.
        addr: SocketAddr,
        /// What the kernel reported.
        reason: String,
    },
    /// A local file or directory could not be opened, read or written (exit code 4).
    #[error("{context}: {source}")]
    Io {
        /// What was being done (and to which path).
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A socket or other system call failed (exit code 1).
    #[error("{context}: {source}")]
    Network {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// Anything else (exit code 1).
    #[error("{0}")]
    Runtime(String),
    /// Stopped by a signal (SIGINT, SIGTERM): exit code 128 + its number.
    #[error("interrupted by {}", signal_name(*.0))]
    Interrupted(i32),
}

impl Error {
    /// A local-file I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io { context: context.into(), source }
    }

    /// A socket error with what was being done.
    pub fn network(context: impl Into<String>, source: io::Error) -> Self {
        Error::Network { context: context.into(), source }
    }

    /// The process exit code for this error (see the module docs).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) | Error::Fetch(FetchError::BadName { .. }) => EXIT_USAGE,
            Error::Fetch(FetchError::NotFound(_)) => EXIT_NOT_FOUND,
            Error::Io { .. } => EXIT_IO,
            Error::Fetch(FetchError::Integrity { .. } | FetchError::BadBlock { .. }) => EXIT_INTEGRITY,
            Error::Unreachable { .. }
            | Error::Fetch(FetchError::Timeout(_))
            | Error::Fetch(FetchError::AddressNotValidated) => EXIT_UNREACHABLE,
            Error::Fetch(FetchError::Refused { .. }) | Error::Network { .. } | Error::Runtime(_) => EXIT_RUNTIME,
            Error::Interrupted(signal) => 128 + signal,
        }
    }

    /// The `io::ErrorKind` that best describes this error (used when it travels inside an
    /// `io::Error` out of [`std::io::Read::read`]).
    pub fn io_kind(&self) -> io::ErrorKind {
        match self {
            Error::Usage(_) | Error::Fetch(FetchError::BadName { .. }) => io::ErrorKind::InvalidInput,
            Error::Fetch(FetchError::NotFound(_)) => io::ErrorKind::NotFound,
            Error::Fetch(FetchError::Timeout(_)) => io::ErrorKind::TimedOut,
            Error::Fetch(FetchError::AddressNotValidated) => io::ErrorKind::ConnectionRefused,
            Error::Fetch(FetchError::Integrity { .. } | FetchError::BadBlock { .. }) => io::ErrorKind::InvalidData,
            Error::Fetch(FetchError::Refused { .. }) => io::ErrorKind::PermissionDenied,
            Error::Unreachable { .. } => io::ErrorKind::ConnectionRefused,
            Error::Io { source, .. } | Error::Network { source, .. } => source.kind(),
            // Not `Interrupted`: readers retry those.
            Error::Runtime(_) | Error::Interrupted(_) => io::ErrorKind::Other,
        }
    }

    /// Wrap into an `io::Error` (recover it with [`Error::from_io`]).
    pub fn into_io(self) -> io::Error {
        io::Error::new(self.io_kind(), self)
    }

    /// The `Error` inside an `io::Error` produced by [`Error::into_io`], if any.
    pub fn from_io(e: &io::Error) -> Option<&Error> {
        e.get_ref().and_then(|inner| inner.downcast_ref::<Error>())
    }
}

fn signal_name(signal: i32) -> String {
    match nix::sys::signal::Signal::try_from(signal) {
        Ok(s) => s.as_str().to_string(),
        Err(_) => format!("signal {signal}"),
    }
}

fn fetch_message(e: &FetchError) -> String {
    match e {
        FetchError::Timeout(_) => format!("server unreachable: {e}"),
        _ => e.to_string(),
    }
}

fn clone_io(e: &io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None => io::Error::new(e.kind(), e.to_string()),
    }
}

impl Clone for Error {
    fn clone(&self) -> Self {
        match self {
            Error::Usage(s) => Error::Usage(s.clone()),
            Error::Fetch(f) => Error::Fetch(f.clone()),
            Error::Unreachable { addr, reason } => Error::Unreachable { addr: *addr, reason: reason.clone() },
            Error::Io { context, source } => Error::Io { context: context.clone(), source: clone_io(source) },
            Error::Network { context, source } => Error::Network { context: context.clone(), source: clone_io(source) },
            Error::Runtime(s) => Error::Runtime(s.clone()),
            Error::Interrupted(s) => Error::Interrupted(*s),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The error an ICMP-reported failure to reach `addr` stands for (`None` for other errors).
pub(crate) fn unreachable(addr: SocketAddr, e: &io::Error) -> Option<Error> {
    let reason = match e.raw_os_error()? {
        libc::ECONNREFUSED => "connection refused (nothing listens on that port)",
        libc::EHOSTUNREACH => "no route to host",
        libc::ENETUNREACH => "network unreachable",
        _ => return None,
    };
    Some(Error::Unreachable { addr, reason: reason.into() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdtp_proto::Eid;
    use rdtp_proto::wire::NackCode;
    use std::time::Duration;

    #[test]
    fn exit_codes() {
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let cases = [
            (Error::Usage("x".into()), 2),
            (Error::Fetch(FetchError::NotFound("x".into())), 3),
            (Error::io("writing out", io::Error::from(io::ErrorKind::BrokenPipe)), 4),
            (Error::Fetch(FetchError::Integrity { expected: Eid([1; 32]), actual: Eid([2; 32]) }), 5),
            (Error::Fetch(FetchError::BadBlock { block: 3, offset: 49_152 }), 5),
            (Error::Unreachable { addr, reason: "refused".into() }, 6),
            (Error::Fetch(FetchError::Timeout(Duration::from_secs(3))), 6),
            (
                Error::Fetch(FetchError::Refused {
                    code: NackCode::TooLarge,
                    by: rdtp_proto::NodeId::ORIGIN,
                    who: "the origin (1 hop away)".into(),
                    detail: "d".into(),
                }),
                1,
            ),
            (Error::network("recv", io::Error::from(io::ErrorKind::Other)), 1),
            (Error::Runtime("x".into()), 1),
            (Error::Interrupted(libc::SIGINT), 130),
            (Error::Interrupted(libc::SIGTERM), 143),
        ];
        for (e, code) in cases {
            assert_eq!(e.exit_code(), code, "{e}");
            assert_eq!(e.clone().exit_code(), code);
        }
    }

    #[test]
    fn survives_a_trip_through_io_error() {
        let e = Error::Fetch(FetchError::NotFound("nope".into())).into_io();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(Error::from_io(&e).map(Error::exit_code), Some(3));
        assert!(Error::from_io(&io::Error::from(io::ErrorKind::BrokenPipe)).is_none());
        // Readers retry `Interrupted` reads: an interruption must not look like one.
        let e = Error::Interrupted(libc::SIGINT).into_io();
        assert_ne!(e.kind(), io::ErrorKind::Interrupted);
        assert_eq!(Error::from_io(&e).map(Error::exit_code), Some(130));
        assert_eq!(Error::Interrupted(libc::SIGTERM).to_string(), "interrupted by SIGTERM");
    }
}
