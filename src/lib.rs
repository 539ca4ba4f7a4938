//! oomwhy's command line: arguments in, findings out, grep-style exit status.
//!
//! The `oomwhy` binary is a one-line `main` over [`main`], and the Python
//! wheel's `oomwhy` command calls [`run`]: both are this code, so they cannot
//! drift apart (the language of `--help` included).

/// Like `eprintln!`, but a closed or full stderr is ignored instead of
/// panicking: a diagnostic that cannot be shown is not worth a crash.
macro_rules! warn {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod cli;
mod commands;

use clap::{CommandFactory, FromArgMatches};
use cli::Cli;
use std::ffi::OsString;
use std::io;
use std::process::ExitCode;

/// Runs the command with these arguments (the program name first) and
/// returns the process's exit status.
pub fn main<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    exit_code(run(args))
}

/// Runs the command with these arguments (the program name first) and
/// returns its exit status as a number: 0 nothing found, 1 found, 2 error,
/// or what `oomwhy run`'s command returned. Never exits the process, so a
/// host (the Python interpreter) keeps control.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let chinese = match cli::lang_in_args(&args) {
        Some(lang) => lang == cli::LangArg::Zh,
        None => oomwhy::i18n::Lang::from_env() == oomwhy::i18n::Lang::Zh,
    };
    let mut command = Cli::command();
    if chinese {
        command = cli::chinese_help(command);
    }
    let cli = match command
        .try_get_matches_from(cli::lang_after_subcommand(args))
        .and_then(|matches| Cli::from_arg_matches(&matches))
    {
        Ok(cli) => cli,
        // --help and --version end here too, with status 0.
        Err(err) => {
            let _ = err.print();
            return err.exit_code();
        }
    };
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => 0,
        Err(err) => {
            warn!("oomwhy: {err:#}");
            2
        }
    }
}

/// A closed pipe (`oomwhy log | head`) is a normal way to stop reading.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|e| e.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

/// Exit statuses beyond 0–255 only come from `oomwhy run` passing on a
/// Windows NTSTATUS (e.g. 0xC0000409), which `ExitCode` cannot hold.
fn exit_code(code: i32) -> ExitCode {
    match u8::try_from(code) {
        Ok(code) => ExitCode::from(code),
        Err(_) => std::process::exit(code),
    }
}
