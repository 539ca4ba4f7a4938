//! One function per mode of the binary; `main.rs` dispatches here.

mod follow;
mod info;
mod output_watch;
mod pager;
mod progress;
mod run;
mod scan;
mod summary;

use crate::cli::{Cli, ColorArg, Command, FormatArg, LangArg};
use oomwhy::i18n::Lang;
use oomwhy::render::{self, Format, RenderOptions};
use oomwhy::{Finding, LiveAnalysis, Summary};
use std::io::{self, Write};

/// Runs what the command line asks for; returns the exit status.
pub fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    if cli.command.is_some() && (cli.scan.follow || !cli.scan.files.is_empty()) {
        // `--format`, `--color` and `--quiet` go anywhere; these do not.
        anyhow::bail!("FILE and --follow cannot be used with a subcommand");
    }
    let lang = match cli.lang {
        Some(LangArg::En) => Lang::En,
        Some(LangArg::Zh) => Lang::Zh,
        None => Lang::from_env(),
    };
    match cli.command {
        None if cli.scan.follow => follow::follow(&cli.scan, lang),
        None if cli.scan.summary => summary::summary(&cli.scan, lang),
        None => scan::scan(&cli.scan, lang),
        Some(Command::Explain(args)) => info::explain(&args, cli.scan.color, lang),
        Some(Command::Schema(args)) => info::schema(&args),
        Some(Command::Run(args)) => run::run(&args, &cli.scan, lang),
        Some(Command::Completions(args)) => info::completions(&args),
        Some(Command::Man) => info::man(),
    }
}

impl From<FormatArg> for Format {
    fn from(format: FormatArg) -> Format {
        match format {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
            FormatArg::Ndjson => Format::Ndjson,
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Github => Format::Github,
        }
    }
}

/// The width to wrap text to: `COLUMNS` when set, else the terminal's
/// width when the output is one, else [`render::DEFAULT_WIDTH`]; never
/// under [`render::MIN_WIDTH`].
fn text_width(terminal: Option<usize>) -> usize {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    columns
        .or(terminal)
        .unwrap_or(render::DEFAULT_WIDTH)
        .max(render::MIN_WIDTH)
}

/// The width of the terminal behind standard output or error, if it is one.
fn stdout_width() -> Option<usize> {
    terminal_size::terminal_size_of(io::stdout()).map(|(w, _)| usize::from(w.0))
}

/// The width of the terminal behind standard error, if it is one.
fn stderr_width() -> Option<usize> {
    terminal_size::terminal_size_of(io::stderr()).map(|(w, _)| usize::from(w.0))
}

/// Whether to colour output that goes to a stream that is (or is not) a terminal.
fn use_color(choice: ColorArg, is_terminal: bool) -> bool {
    match choice {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            is_terminal
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var("TERM").map_or(true, |t| t != "dumb")
        }
    }
}

/// Where explained findings go as a streaming scan hands them out: written
/// at once (streaming formats) or kept for the end (the JSON document, or
/// a report that must wait until a wrapped command is done).
struct Sink<'a> {
    live: LiveAnalysis,
    format: Format,
    options: RenderOptions,
    out: Box<dyn Write + 'a>,
    write_now: bool,
    quiet: bool,
    kept: Vec<Finding>,
    /// The first write error; writing stops there.
    error: Option<io::Error>,
    /// A progress bar to clear before writing to a terminal.
    progress: Option<std::sync::Arc<progress::Progress>>,
}

impl<'a> Sink<'a> {
    fn new(
        format: Format,
        options: RenderOptions,
        out: Box<dyn Write + 'a>,
        write_now: bool,
        quiet: bool,
    ) -> Self {
        Sink {
            live: LiveAnalysis::new(),
            format,
            options,
            out,
            write_now: write_now && format.streams(),
            quiet,
            kept: Vec::new(),
            error: None,
            progress: None,
        }
    }

    /// Explains a finding and writes or keeps it.
    fn emit(&mut self, finding: Finding) {
        let finding = self.live.explain(finding);
        if self.quiet || self.error.is_some() {
            return;
        }
        if !self.write_now {
            self.kept.push(finding);
            return;
        }
        if let Some(progress) = &self.progress {
            progress.clear();
        }
        let written = render::render_finding(self.format, &finding, self.options, &mut self.out)
            .and_then(|()| self.out.flush());
        if let Err(err) = written {
            self.error = Some(err);
        }
    }

    /// Fails with the first write error, so that a closed pipe stops the work.
    fn check(&mut self) -> io::Result<()> {
        match self.error.take() {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    /// Writes the end of the output (or all of it) and returns the counts.
    fn finish(mut self) -> io::Result<Summary> {
        self.check()?;
        let summary = self.live.summary().clone();
        if self.quiet {
            return Ok(summary);
        }
        if self.write_now {
            render::render_end(self.format, &summary, self.options, &mut self.out)?;
        } else {
            render::render(
                self.format,
                &self.kept,
                &summary,
                self.options,
                &mut self.out,
            )?;
        }
        self.out.flush()?;
        Ok(summary)
    }
}

/// The exit status of a scan: 2 after an error, 1 if nothing but warnings
/// was found.
fn scan_status(summary: &Summary) -> i32 {
    if summary.input_errors > 0 {
        2
    } else if summary.findings == summary.warning {
        1
    } else {
        0
    }
}
