//! rdtp-sim's one error type (crate-internal): each variant says which kind of problem
//! stopped a sweep, and prints the message users have always read. Everything here ends as
//! `rdtp-sim: MESSAGE` and exit status 2.

use std::path::{Path, PathBuf};

/// Why a sweep (or a merge) could not go on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The scenario does not expand or validate (crate `rdtp-scenario`'s error).
    #[error(transparent)]
    Scenario(#[from] rdtp_scenario::Error),
    /// One expanded run whose ns-3 arguments cannot be written.
    #[error("run {run}: {source}")]
    Run { run: String, source: rdtp_scenario::Error },
    /// A file or directory that cannot be read, written or parsed.
    #[error("{}: {source}", path.display())]
    File { path: PathBuf, source: Box<dyn std::error::Error + Send + Sync> },
    /// An I/O error with no one file to name.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Command-line options that are missing or do not go together.
    #[error("{0}")]
    Usage(String),
    /// `--shard`, `--merge` or `--resume` given directories or values that do not fit
    /// together.
    #[error("{0}")]
    Shards(String),
    /// A simulation (a child `rdtp-sim --run-one`) that could not start or failed.
    #[error("{0}")]
    Child(String),
}

impl Error {
    /// A problem with the file or directory at `path`.
    pub fn file(path: &Path, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::File { path: path.to_path_buf(), source: source.into() }
    }
}
