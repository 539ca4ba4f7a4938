//! The `oomwhy` binary: arguments in, findings out, grep-style exit status.

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
use std::io;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
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
        Err(err) => err.exit(),
    };
    match commands::dispatch(cli) {
        Ok(code) => exit_code(code),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            warn!("oomwhy: {err:#}");
            ExitCode::from(2)
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
