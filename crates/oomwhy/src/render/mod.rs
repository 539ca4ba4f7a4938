//! Writes findings in the format the user asked for. Renderers only lay out
//! what the record and the explainer already say; they never match text.

pub mod github;
mod json;
pub mod localize;
mod markdown;
mod ndjson;
mod text;

pub use crate::escape::sanitize;
pub use crate::i18n::Lang;
pub use localize::localize;
pub use text::{summary_line, summary_line_in};

use crate::record::{Finding, Summary};
use std::io::{self, Write};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Human-readable explanation (default).
    Text,
    /// One JSON document: `{"schema_version", "findings", "summary"}`.
    Json,
    /// JSON Lines: a `finding` line per finding, then a `summary` line.
    Ndjson,
    /// A compact Markdown report for an issue or a chat.
    Markdown,
    /// GitHub Actions workflow commands (`::error file=...,line=...::...`).
    Github,
}

impl Format {
    /// True if findings can be written one by one as they are found
    /// ([`render_finding`], then [`render_end`]); false for the JSON
    /// document, which needs them all.
    pub fn streams(self) -> bool {
        self != Format::Json
    }
}

/// The narrowest text layout; narrower terminals get lines of this width.
pub const MIN_WIDTH: usize = 40;

/// The text width when the output is not a terminal and `COLUMNS` is unset.
pub const DEFAULT_WIDTH: usize = 100;

/// How to render.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    /// Use ANSI colours (text only).
    pub color: bool,
    /// Wrap text to this many display columns (text only; at least [`MIN_WIDTH`]).
    pub width: usize,
    /// Print only each finding's answer (headline, main reason, first fix)
    /// and the closing count (text only).
    pub brief: bool,
    /// The language of the sentences (every format; JSON keys and codes never change).
    pub lang: Lang,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            color: false,
            width: DEFAULT_WIDTH,
            brief: false,
            lang: Lang::En,
        }
    }
}

/// Renders all findings and the summary to `out`.
pub fn render(
    format: Format,
    findings: &[Finding],
    summary: &Summary,
    options: RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    if format == Format::Json {
        let findings: Vec<Finding> = findings
            .iter()
            .map(|f| localize(f, options.lang).into_owned())
            .collect();
        return json::render(&findings, summary, out);
    }
    for f in findings {
        render_finding(format, f, options, out)?;
    }
    render_end(format, summary, options, out)
}

/// Writes one finding in a format that [streams](Format::streams). For
/// [`Format::Json`] it fails with [`io::ErrorKind::InvalidInput`]: use [`render`].
pub fn render_finding(
    format: Format,
    finding: &Finding,
    options: RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Text => text::finding(finding, options, out),
        Format::Ndjson => ndjson::finding(&localize(finding, options.lang), out),
        Format::Markdown => markdown::finding(finding, options.lang, out),
        Format::Github => github::finding(&localize(finding, options.lang), options.lang, out),
        Format::Json => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the JSON document cannot be written one finding at a time",
        )),
    }
}

/// Ends a streamed output with the summary (GitHub annotations have none).
pub fn render_end(
    format: Format,
    summary: &Summary,
    options: RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Text => text::summary(summary, options, out),
        Format::Ndjson => ndjson::summary(summary, out),
        Format::Markdown => markdown::summary(summary, options.lang, out),
        Format::Github => Ok(()),
        Format::Json => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the JSON document cannot be written one finding at a time",
        )),
    }
}
