//! Typed errors of the library. The binary adds context with `anyhow`.

use std::fmt;
use std::io;

/// Everything that can go wrong in the library.
#[derive(Debug)]
pub enum Error {
    /// Reading an input failed.
    Read {
        /// The input's name as given by the user.
        input: String,
        /// The underlying error.
        source: io::Error,
    },
    /// An input started like a pickle but gave no memory snapshot.
    Snapshot {
        /// The input's name as given by the user.
        input: String,
        /// Why.
        source: crate::snapshot::SnapshotError,
    },
    /// `oomwhy explain` was given a code that does not exist.
    UnknownCode {
        /// The code as the user typed it.
        code: String,
        /// Every valid code, for the error message.
        valid: Vec<&'static str>,
    },
}

impl Error {
    /// The input the error is about, if it is about one.
    pub fn input(&self) -> Option<&str> {
        match self {
            Error::Read { input, .. } | Error::Snapshot { input, .. } => Some(input),
            Error::UnknownCode { .. } => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The name comes from the command line and can hold terminal
            // escapes: print it escaped, like every input-derived string.
            Error::Read { input, source } => write!(
                f,
                "{}: {}",
                crate::escape::sanitize(input),
                describe_io(source)
            ),
            Error::Snapshot { input, source } => {
                write!(f, "{}: {source}", crate::escape::sanitize(input))
            }
            Error::UnknownCode { code, valid } => write!(
                f,
                "unknown code `{code}`; valid codes are: {} (see `oomwhy explain --list`)",
                valid.join(", ")
            ),
        }
    }
}

impl Error {
    /// The message in `lang` (`Display` is English).
    pub fn localized(&self, lang: crate::i18n::Lang) -> String {
        use crate::i18n::{Lang, Msg};
        match (self, lang) {
            (Error::Read { input, source }, Lang::Zh) => {
                let why = match source.kind() {
                    io::ErrorKind::NotFound => "文件不存在".to_string(),
                    io::ErrorKind::PermissionDenied => "没有权限".to_string(),
                    _ => describe_io(source),
                };
                format!("{}：{why}", crate::escape::sanitize(input))
            }
            (Error::UnknownCode { code, .. }, Lang::Zh) => Msg::UnknownCode.fill(lang, &[code]),
            (Error::Snapshot { input, source }, Lang::Zh) => {
                Msg::NotSnapshot.fill(lang, &[&crate::escape::sanitize(input), source])
            }
            _ => self.to_string(),
        }
    }
}

/// A short, lowercase description of an I/O error.
fn describe_io(err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::NotFound => "no such file".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => {
            let text = err.to_string();
            // "Is a directory (os error 21)" -> "is a directory (os error 21)"
            let mut chars = text.chars();
            match chars.next() {
                Some(first) => first.to_lowercase().chain(chars).collect(),
                None => text,
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Read { source, .. } => Some(source),
            Error::Snapshot { source, .. } => Some(source),
            Error::UnknownCode { .. } => None,
        }
    }
}

/// Result with the library's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
