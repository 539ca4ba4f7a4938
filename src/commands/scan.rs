//! Reading logs: files and standard input (the default mode), and `--follow`.

use super::progress::{Progress, ProgressReader};
use super::{follow, scan_status, use_color, Sink};
use crate::cli::ScanArgs;
use anyhow::Context;
use oomwhy::render::{self, Format, RenderOptions};
use oomwhy::{Analysis, Summary};
use std::io::{self, IsTerminal, Read, Write};
use std::path::Path;
use std::sync::Arc;

/// An opened input: its reader, its name and its progress bar, if any.
type Opened = (Box<dyn Read + Send>, String, Option<Arc<Progress>>);

pub(super) fn open(path: &Path, quiet: bool) -> Result<Opened, oomwhy::Error> {
    if path == Path::new("-") {
        let stdin = io::stdin();
        if stdin.is_terminal() && !quiet {
            warn!(
                "oomwhy: paste the error or log, then press Ctrl-D (Ctrl-Z then Enter on Windows)"
            );
        }
        return Ok((Box::new(stdin), "<stdin>".to_string(), None));
    }
    let name = path.display().to_string();
    let read_error = |source| oomwhy::Error::Read {
        input: name.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let meta = file.metadata().map_err(read_error)?;
    if meta.is_dir() {
        return Err(read_error(io::Error::other("is a directory")));
    }
    let progress = if quiet || !meta.is_file() {
        None
    } else {
        Progress::for_input(&name, meta.len()).map(Arc::new)
    };
    let reader: Box<dyn Read + Send> = match &progress {
        Some(progress) => Box::new(ProgressReader::new(file, Arc::clone(progress))),
        None => Box::new(file),
    };
    Ok((reader, name, progress))
}

/// The default mode: reads every input to its end and reports.
pub fn scan(args: &ScanArgs) -> anyhow::Result<i32> {
    let format = Format::from(args.format);
    let color = use_color(args.color, io::stdout().is_terminal());
    colored::control::set_override(color);
    let options = RenderOptions { color };
    let stdin = [Path::new("-")];
    let inputs: Vec<&Path> = if args.files.is_empty() {
        stdin.to_vec()
    } else {
        args.files.iter().map(|p| p.as_path()).collect()
    };
    let summary = if format == Format::Ndjson {
        scan_streaming(&inputs, options, args.quiet)?
    } else {
        scan_batch(&inputs, format, options, args.quiet)?
    };
    if summary.findings == summary.warning && summary.input_errors == 0 && !args.quiet {
        warn!(
            "oomwhy: no out-of-memory error or GPU crash found ({} lines read)",
            summary.lines
        );
    }
    Ok(scan_status(&summary))
}

/// Reads all inputs, then explains and writes everything at once.
fn scan_batch(
    inputs: &[&Path],
    format: Format,
    options: RenderOptions,
    quiet: bool,
) -> anyhow::Result<Summary> {
    let mut analysis = Analysis::new();
    for path in inputs {
        let outcome = open(path, quiet).and_then(|(reader, name, progress)| {
            let outcome = oomwhy::scan(reader, &name);
            if let Some(progress) = progress {
                progress.clear();
            }
            outcome
        });
        match outcome {
            Ok(outcome) => analysis.add(outcome),
            Err(err) => {
                warn!("oomwhy: {err}");
                analysis.add_error();
            }
        }
    }
    let (findings, summary) = analysis.finish();
    let show = matches!(format, Format::Json | Format::Ndjson) || !findings.is_empty();
    if !quiet && show {
        let mut out = io::BufWriter::new(io::stdout().lock());
        render::render(format, &findings, &summary, options, &mut out)
            .and_then(|()| out.flush())
            .context("cannot write the output")?;
    }
    Ok(summary)
}

/// Writes each finding as soon as it is complete (NDJSON).
fn scan_streaming(
    inputs: &[&Path],
    options: RenderOptions,
    quiet: bool,
) -> anyhow::Result<Summary> {
    let out = Box::new(io::stdout().lock());
    let mut sink = Sink::new(Format::Ndjson, options, out, true, quiet);
    for path in inputs {
        sink.live.begin_input();
        let (reader, name, progress) = match open(path, quiet) {
            Ok(opened) => opened,
            Err(err) => {
                warn!("oomwhy: {err}");
                sink.live.add_error();
                continue;
            }
        };
        sink.progress = progress.clone();
        let outcome = if path == &Path::new("-") && follow::stdin_is_live() {
            // A pipe that may stay open (`tail -f log | oomwhy`): report
            // each finding as it completes, not at the end of the input.
            follow::scan_live(reader, &name, &mut sink)
        } else {
            oomwhy::scan_streaming(reader, &name, &mut |f| sink.emit(f))
        };
        if let Some(progress) = progress {
            progress.clear();
        }
        sink.progress = None;
        sink.check().context("cannot write the output")?;
        match outcome {
            Ok(outcome) => sink.live.end_input(&outcome),
            Err(err) => {
                warn!("oomwhy: {err}");
                sink.live.add_error();
            }
        }
    }
    sink.finish().context("cannot write the output")
}
