//! The `oomwhy` binary: arguments in, findings out, grep-style exit status.

mod cli;

use anyhow::Context;
use clap::Parser;
use cli::{Cli, ColorArg, FormatArg};
use oomwhy::render::{self, Format, RenderOptions};
use oomwhy::Analysis;
use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("oomwhy: {err:#}");
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

fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    let mut analysis = Analysis::new();
    let mut errored = false;
    let stdin_only = cli.files.is_empty();
    let inputs: Vec<&Path> = if stdin_only {
        vec![Path::new("-")]
    } else {
        cli.files.iter().map(|p| p.as_path()).collect()
    };
    for path in inputs {
        let outcome = if path == Path::new("-") {
            let stdin = io::stdin();
            if stdin.is_terminal() && !cli.quiet {
                eprintln!("oomwhy: paste the error or log, then press Ctrl-D (Ctrl-Z then Enter on Windows)");
            }
            oomwhy::scan(stdin, "<stdin>")
        } else {
            let name = path.display().to_string();
            match std::fs::File::open(path) {
                Ok(file) if file.metadata().is_ok_and(|m| m.is_dir()) => Err(oomwhy::Error::Read {
                    input: name,
                    source: io::Error::other("is a directory"),
                }),
                Ok(file) => oomwhy::scan(file, &name),
                Err(source) => Err(oomwhy::Error::Read {
                    input: name,
                    source,
                }),
            }
        };
        match outcome {
            Ok(outcome) => analysis.add(outcome),
            Err(err) => {
                eprintln!("oomwhy: {err}");
                analysis.add_error();
                errored = true;
            }
        }
    }
    let (findings, summary) = analysis.finish();
    if !cli.quiet {
        let format = match cli.format {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
        };
        let color = match cli.color {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => {
                io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::env::var("TERM").map_or(true, |t| t != "dumb")
            }
        };
        colored::control::set_override(color);
        let show = format != Format::Text || !findings.is_empty();
        if show {
            let mut out = io::BufWriter::new(io::stdout().lock());
            render::render(
                format,
                &findings,
                &summary,
                RenderOptions { color },
                &mut out,
            )
            .and_then(|()| out.flush())
            .context("cannot write the output")?;
        }
        if findings.is_empty() && !errored {
            eprintln!(
                "oomwhy: no out-of-memory error or GPU crash found ({} lines read)",
                summary.lines
            );
        }
    }
    Ok(if errored {
        ExitCode::from(2)
    } else if findings.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
