//! Command-line arguments. No logic here: `commands/` turns these into library calls.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  python train.py 2>&1 | oomwhy            explain a crash in a run's output
  oomwhy train.log                         read a log file
  oomwhy logs/                             every log under logs/, compressed or not
  oomwhy                                   then paste the error and press Ctrl-D
  oomwhy run -- python train.py            run a command, explain it if it crashes
  oomwhy --follow train.log                watch a log while it is written
  oomwhy --follow --from-end train.log     only crashes written from now on
  oomwhy --format json rank*.log > report.json
  oomwhy --format markdown train.log       a report to paste into an issue
  oomwhy --summary logs/*.log              one report over many jobs' logs
  oomwhy explain fragmentation             the long explanation of a code
  oomwhy explain --list                    every code

A file named like a subcommand (explain, schema, run, completions, man, help)
needs a path: oomwhy ./explain

Exit status: 0 if something was found, 1 if nothing was found, 2 on an error;
`oomwhy run` exits with the command's own status.";

/// Explain why your GPU ran out of memory.
///
/// Reads training logs or a pasted error, finds every out-of-memory error and
/// related CUDA crash, and explains each: what the numbers mean, why it
/// happened, what to change.
#[derive(Debug, Parser)]
#[command(
    name = "oomwhy",
    version,
    after_help = EXAMPLES
)]
pub struct Cli {
    /// What to do; without one, read logs.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Reading logs (the default).
    #[command(flatten)]
    pub scan: ScanArgs,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the long explanation of a code from a finding's "More:" line.
    Explain(ExplainArgs),
    /// Print the JSON Schema of `--format json` (or of one `--format ndjson` line).
    Schema(SchemaArgs),
    /// Run a command, pass its output through, and explain its crash.
    ///
    /// The command's standard output and error pass through unchanged and
    /// live (one pipe for both when they are one file for oomwhy, so their
    /// order is kept); both are scanned as one log. When the command ends,
    /// what was found is reported on standard error (or in `--report PATH`),
    /// and oomwhy exits with the command's own exit status (128 + N for a
    /// signal). SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are
    /// passed on to the command (its process group outside a terminal) and
    /// oomwhy waits for it; a second Ctrl-C within 2 s kills it.
    #[command(
        after_help = "Examples:\n  oomwhy run -- python train.py --batch-size 64\n  oomwhy --format json run --report oom.json -- torchrun --nproc-per-node 8 train.py"
    )]
    Run(RunArgs),
    /// Print a shell completion script (e.g. `oomwhy completions bash > /etc/bash_completion.d/oomwhy`).
    Completions(CompletionsArgs),
    /// Print the manual page in roff (e.g. `oomwhy man > oomwhy.1`).
    Man,
}

/// Reading logs.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Log files or directories to read (gzip, zstd, xz and bzip2 are
    /// decompressed; directories are read recursively); none or `-` reads
    /// standard input.
    #[arg(value_name = "PATH")]
    pub files: Vec<PathBuf>,

    /// Output format (for `run`: of the report; json and ndjson need `--report`).
    #[arg(long, value_enum, default_value_t = FormatArg::Text, global = true)]
    pub format: FormatArg,

    /// When to colour the output.
    #[arg(
        long,
        value_enum,
        default_value_t = ColorArg::Auto,
        value_name = "WHEN",
        global = true
    )]
    pub color: ColorArg,

    /// Print nothing; only set the exit status (`run`: only pass the output through).
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Keep reading FILE as it grows, like `tail -F`, and report each crash
    /// about a second after it is complete (text, ndjson, markdown or
    /// github); waits for FILE to appear, survives truncation and log
    /// rotation. Stop with Ctrl-C.
    #[arg(short, long)]
    pub follow: bool,

    /// With `--follow`: start at the end of FILE, so that crashes already in
    /// it are not reported again (line numbers then count from there).
    #[arg(long, requires = "follow")]
    pub from_end: bool,

    /// One report over all FILEs instead of each finding: how many inputs
    /// had findings, counts by kind, verdict and first fix with the inputs
    /// behind each, and the largest shortfalls (text or json).
    #[arg(long, conflicts_with = "follow")]
    pub summary: bool,
}

/// `oomwhy explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The code, e.g. `fragmentation`; case, `-` for `_` and a unique prefix are fine.
    #[arg(required_unless_present = "list", conflicts_with = "list")]
    pub code: Option<String>,

    /// List every code with its title.
    #[arg(long)]
    pub list: bool,
}

/// `oomwhy schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The schema of one `--format ndjson` line instead of the JSON document.
    #[arg(long, conflicts_with = "summary")]
    pub ndjson: bool,

    /// The schema of the `--summary --format json` document.
    #[arg(long)]
    pub summary: bool,
}

/// `oomwhy run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Write the report to PATH instead of standard error (needed for
    /// `--format json` and `ndjson`, which are never mixed into the
    /// command's own output).
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,

    /// The command and its arguments (put `--` before them).
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// `oomwhy completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Human-readable explanation.
    Text,
    /// One JSON document (schema_version 1; `oomwhy schema`).
    Json,
    /// One JSON object per line, each finding as soon as it is complete, then a summary.
    Ndjson,
    /// A compact Markdown report for an issue or a chat.
    Markdown,
    /// GitHub Actions annotations (`::error file=...,line=...::...`).
    Github,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// Colour when the output is a terminal and NO_COLOR is not set.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn files_and_subcommands_coexist() {
        let cli = Cli::try_parse_from(["oomwhy", "train.log"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.scan.files, [PathBuf::from("train.log")]);
        let cli = Cli::try_parse_from(["oomwhy", "./explain"]).unwrap();
        assert!(cli.command.is_none());
        let cli = Cli::try_parse_from(["oomwhy", "explain", "frag"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Explain(_))));
        let cli = Cli::try_parse_from(["oomwhy", "run", "--", "sh", "-c", "exit 3"]).unwrap();
        let Some(Command::Run(run)) = cli.command else {
            panic!("not run")
        };
        assert_eq!(run.command, ["sh", "-c", "exit 3"]);
        let cli =
            Cli::try_parse_from(["oomwhy", "run", "python", "train.py", "--lr", "1"]).unwrap();
        let Some(Command::Run(run)) = cli.command else {
            panic!("not run")
        };
        assert_eq!(run.command, ["python", "train.py", "--lr", "1"]);
    }

    #[test]
    fn summary_takes_files_and_not_follow() {
        let cli = Cli::try_parse_from(["oomwhy", "--summary", "a.log", "b.log"]).unwrap();
        assert!(cli.scan.summary);
        assert_eq!(cli.scan.files.len(), 2);
        assert!(Cli::try_parse_from(["oomwhy", "--summary", "--follow", "a.log"]).is_err());
    }
}
