//! Command-line arguments. No logic here: `commands/` turns these into library calls.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  python train.py 2>&1 | oomwhy            explain a crash in a run's output
  oomwhy train.log                         read a log file
  oomwhy                                   then paste the error and press Ctrl-D
  oomwhy run -- python train.py            run a command, explain it if it crashes
  oomwhy --follow train.log                watch a log while it is written
  oomwhy --format json rank*.log > report.json
  oomwhy --format markdown train.log       a report to paste into an issue
  oomwhy explain fragmentation             the long explanation of a code
  oomwhy explain --list                    every code
  oomwhy --brief train.log                 only the answer: what failed, why, first fix
  oomwhy --lang zh train.log               explain in Simplified Chinese (用中文解释)

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
    args_conflicts_with_subcommands = true,
    after_help = EXAMPLES
)]
pub struct Cli {
    /// What to do; without one, read logs.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Reading logs (the default).
    #[command(flatten)]
    pub scan: ScanArgs,

    /// Language of the explanation (default: from LC_ALL, LC_MESSAGES, LANG).
    /// JSON keys and codes never change.
    #[arg(long, value_enum, global = true, value_name = "LANG")]
    pub lang: Option<LangArg>,
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
    /// live; both are scanned as they stream. When the command ends, what was
    /// found is reported on standard error (or in `--report PATH`), and
    /// oomwhy exits with the command's own exit status (128 + N for a signal).
    #[command(
        after_help = "Examples:\n  oomwhy run -- python train.py --batch-size 64\n  oomwhy run --format json --report oom.json -- torchrun --nproc-per-node 8 train.py"
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

    /// Print only each finding's answer (what failed, the main reason, the
    /// first fix) and the closing count.
    #[arg(short, long)]
    pub brief: bool,

    /// Keep reading FILE as it grows, like `tail -f`, and report each crash
    /// as it appears (text, ndjson, markdown or github); survives truncation
    /// and log rotation. Stop with Ctrl-C.
    #[arg(short, long)]
    pub follow: bool,
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

    /// When to colour headings.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    pub color: ColorArg,
}

/// `oomwhy schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The schema of one `--format ndjson` line instead of the JSON document.
    #[arg(long)]
    pub ndjson: bool,
}

/// `oomwhy run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Format of the report.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// Write the report to PATH instead of standard error.
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,

    /// When to colour the text report.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    pub color: ColorArg,

    /// Report nothing; only pass the output through and exit with the command's status.
    #[arg(short, long)]
    pub quiet: bool,

    /// Report only each finding's answer (what failed, the main reason, the first fix).
    #[arg(short, long)]
    pub brief: bool,

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

/// Moves a leading `--lang X` after the subcommand it precedes
/// (`oomwhy --lang zh explain frag` → `oomwhy explain --lang zh frag`):
/// log-reading options conflict with subcommands, and clap counts the
/// global `--lang` among them.
pub fn lang_after_subcommand(mut args: Vec<OsString>) -> Vec<OsString> {
    const SUBCOMMANDS: &[&str] = &["explain", "schema", "run", "completions", "man", "help"];
    let mut end = 1;
    while let Some(arg) = args.get(end).and_then(|a| a.to_str()) {
        if arg == "--lang" {
            end += 2;
        } else if arg.starts_with("--lang=") {
            end += 1;
        } else {
            break;
        }
    }
    let is_subcommand = args
        .get(end)
        .and_then(|a| a.to_str())
        .is_some_and(|a| SUBCOMMANDS.contains(&a));
    if end > 1 && end < args.len() && is_subcommand {
        let lang: Vec<OsString> = args.drain(1..end).collect();
        let at = 2;
        args.splice(at..at, lang);
    }
    args
}

/// `--lang`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LangArg {
    /// English.
    En,
    /// Simplified Chinese (简体中文).
    Zh,
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
    fn lang_may_come_before_a_subcommand() {
        let args = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
        let moved = lang_after_subcommand(args(&["oomwhy", "--lang", "zh", "explain", "frag"]));
        assert_eq!(moved, args(&["oomwhy", "explain", "--lang", "zh", "frag"]));
        let cli = Cli::try_parse_from(moved).unwrap();
        assert_eq!(cli.lang, Some(LangArg::Zh));
        assert!(matches!(cli.command, Some(Command::Explain(_))));
        let files = args(&["oomwhy", "--lang", "zh", "train.log"]);
        assert_eq!(lang_after_subcommand(files.clone()), files);
        let short = args(&["oomwhy", "--lang"]);
        assert_eq!(lang_after_subcommand(short.clone()), short);
    }

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
}
