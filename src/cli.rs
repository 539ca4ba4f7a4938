//! Command-line arguments. No logic here: `main.rs` turns these into library calls.

use clap::{Parser, ValueEnum};
use std::path::PathBuf;

/// Explain why your GPU ran out of memory.
///
/// Reads training logs or a pasted error, finds every out-of-memory error and
/// related CUDA crash, and explains each: what the numbers mean, why it
/// happened, what to change.
#[derive(Debug, Parser)]
#[command(
    name = "oomwhy",
    version,
    after_help = "Examples:\n  python train.py 2>&1 | oomwhy\n  oomwhy train.log\n  oomwhy --format json rank*.log > report.json\n  oomwhy            (then paste the error and press Ctrl-D)\n\nExit status: 0 if something was found, 1 if nothing was found, 2 on an error."
)]
pub struct Cli {
    /// Log files to read; none or `-` reads standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// When to colour the output.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    pub color: ColorArg,

    /// Print nothing; only set the exit status.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Human-readable explanation.
    Text,
    /// One JSON document (schema_version 1).
    Json,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// Colour when stdout is a terminal and NO_COLOR is not set.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}
