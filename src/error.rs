//! Errors of the library layers. Input errors name `file:line: field: why`
//! (or `file: why` for whole-file failures), as SPEC §1.4 asks.

use std::fmt;

/// Why a single record was rejected; the names are the `--lenient` skip
/// reasons of SPEC §1.4, written verbatim into `inputs.skipped`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    Syntax,
    Type,
    MissingField,
    ImpossibleValue,
    Duplicate,
}

impl SkipReason {
    pub const ALL: [SkipReason; 5] = [
        SkipReason::Syntax,
        SkipReason::Type,
        SkipReason::MissingField,
        SkipReason::ImpossibleValue,
        SkipReason::Duplicate,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SkipReason::Syntax => "syntax",
            SkipReason::Type => "type",
            SkipReason::MissingField => "missing_field",
            SkipReason::ImpossibleValue => "impossible_value",
            SkipReason::Duplicate => "duplicate",
        }
    }
}

/// One rejected record: what is wrong with which field.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordError {
    pub reason: SkipReason,
    /// Dotted field path, e.g. `steps[2].output_tokens`; empty for syntax errors.
    pub field: String,
    pub message: String,
}

impl RecordError {
    pub fn new(reason: SkipReason, field: impl Into<String>, message: impl Into<String>) -> Self {
        RecordError {
            reason,
            field: field.into(),
            message: message.into(),
        }
    }
    pub fn missing(field: &str) -> Self {
        Self::new(SkipReason::MissingField, field, "required field is missing")
    }
    pub fn impossible(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(SkipReason::ImpossibleValue, field, message)
    }
    pub fn wrong_type(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(SkipReason::Type, field, message)
    }
}

/// Errors that stop a load or an audit.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A bad record in strict mode: `file:line: field: why`.
    #[error("{file}:{line}: {}", record_text(.error))]
    Record {
        file: String,
        line: u64,
        error: RecordError,
    },
    /// A whole file cannot be read as a log: `file: why`.
    #[error("{file}: {message}")]
    File { file: String, message: String },
    /// Bad command-line usage or settings.
    #[error("{0}")]
    Usage(String),
    /// The output directory cannot be written.
    #[error("{path}: {message}")]
    Output { path: String, message: String },
    /// The work was superseded by a newer request (the workbench drops it).
    #[error("cancelled: a newer request replaced this one")]
    Cancelled,
    /// A bug: an invariant of our own code failed.
    #[error("internal error: {0} (this is a bug in rl-audit; please report it with the command you ran)")]
    Internal(String),
}

fn record_text(e: &RecordError) -> String {
    if e.field.is_empty() {
        e.message.clone()
    } else {
        format!("{}: {}", e.field, e.message)
    }
}

impl Error {
    /// Exit code of SPEC §3: 2 for input/usage/output problems, 3 for bugs.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Internal(_) => 3,
            _ => 2,
        }
    }
    pub fn file(file: impl fmt::Display, message: impl Into<String>) -> Self {
        Error::File {
            file: file.to_string(),
            message: message.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// An I/O error as a message names it: plain words for the common cases.
pub fn io_text(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}
