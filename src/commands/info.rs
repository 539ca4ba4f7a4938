//! Subcommands that print built-in information: `explain`, `schema`,
//! `completions`, `man`.

use super::use_color;
use crate::cli::{Cli, ColorArg, CompletionsArgs, ExplainArgs, SchemaArgs};
use anyhow::Context;
use clap::CommandFactory;
use colored::Colorize;
use oomwhy::explain::docs;
use std::io::{self, IsTerminal, Write};

/// `oomwhy explain CODE` and `oomwhy explain --list`.
pub fn explain(args: &ExplainArgs, color: ColorArg) -> anyhow::Result<i32> {
    let color = use_color(color, io::stdout().is_terminal());
    let mut out = io::stdout().lock();
    if args.list {
        let list = docs::list();
        let width = list.iter().map(|(code, _)| code.len()).max().unwrap_or(0);
        for (code, title) in list {
            let code = format!("{code:<width$}");
            let code = if color { code.bold().to_string() } else { code };
            writeln!(out, "{code}  {title}")?;
        }
        return Ok(0);
    }
    let wanted = args.code.as_deref().unwrap_or_default();
    let text = match docs::lookup(wanted) {
        Ok((_, text)) => text,
        Err(err) => {
            warn!("oomwhy: {err}");
            return Ok(2);
        }
    };
    for line in text.lines() {
        let line = if !color {
            line.to_string()
        } else if let Some(heading) = line.strip_prefix("## ") {
            heading.bold().cyan().to_string()
        } else if let Some(title) = line.strip_prefix("# ") {
            title.bold().to_string()
        } else {
            line.to_string()
        };
        writeln!(out, "{line}")?;
    }
    out.flush().context("cannot write the output")?;
    Ok(0)
}

/// `oomwhy schema [--ndjson | --summary]`.
pub fn schema(args: &SchemaArgs) -> anyhow::Result<i32> {
    let schema = if args.ndjson {
        oomwhy::schema::NDJSON
    } else if args.summary {
        oomwhy::schema::SUMMARY
    } else {
        oomwhy::schema::REPORT
    };
    io::stdout().lock().write_all(schema.as_bytes())?;
    Ok(0)
}

/// `oomwhy completions SHELL`.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<i32> {
    // clap_complete panics on a write error: generate into memory, then
    // write with an error that can be reported.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "oomwhy", &mut script);
    let mut out = io::stdout().lock();
    out.write_all(&script)
        .and_then(|()| out.flush())
        .context("cannot write the output")?;
    Ok(0)
}

/// `oomwhy man`.
pub fn man() -> anyhow::Result<i32> {
    let mut out = io::stdout().lock();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    out.flush()?;
    Ok(0)
}
