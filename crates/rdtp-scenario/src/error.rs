//! The crate's one error type: what is wrong with a scenario or experiment file, a `--set`
//! override, a sweep or a graph's routes. Each variant keeps the message users read (the
//! place in the file, then the problem); the variant says which kind of problem it is, so
//! callers (rdtp-sim, the testbed) can tell a file that is not TOML from a value the schema
//! refuses without matching on text.
//!
//! It holds no checks of its own: those stay next to the schema they check.

/// What is wrong with a scenario.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The text is not TOML, or a table does not fit the schema (unknown key, wrong type).
    #[error("{context}: {source}")]
    Toml {
        /// What was being read: "scenario TOML", "experiment TOML", "scenario".
        context: String,
        source: Box<toml::de::Error>,
    },
    /// A `--set KEY=VALUE` override that cannot be applied (bad path, index out of range).
    #[error("{0}")]
    Set(String),
    /// A `[sweep]` table that cannot be expanded.
    #[error("{0}")]
    Sweep(String),
    /// A value the schema refuses: out of range, an unknown kind, fields that do not go
    /// together, a quantity that does not parse.
    #[error("{0}")]
    Invalid(String),
    /// A graph without a route a flow needs (no such server or client, unreachable).
    #[error("{0}")]
    Route(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
