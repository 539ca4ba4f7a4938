//! Reading logs: files, directories and standard input, compressed or not
//! (the default mode), and `--follow`.

use super::progress::{Progress, ProgressReader};
use super::{follow, pager, scan_status, stdout_width, text_width, use_color, Sink};
use crate::cli::ScanArgs;
use anyhow::Context;
use oomwhy::i18n::{Lang, Msg};
use oomwhy::input::{self, Archive, Content, Entry, Input, Scanned};
use oomwhy::render::sanitize;
use oomwhy::render::{self, Format, RenderOptions};
use oomwhy::{Notice, ScanOutcome, ScanReport, Summary};
use std::io::{self, IsTerminal, Read, Write};
use std::sync::Arc;

/// An opened input: its reader, its progress bar if any, and whether it is
/// a tar archive; `None` for a binary file found in a directory, which is
/// skipped.
type Opened = Option<(Box<dyn Read + Send>, Option<Arc<Progress>>, Option<Archive>)>;

/// Opens an input (decompressing it if its first bytes say so), with a
/// progress bar for a large file when standard error is a terminal.
fn open(input: &Input, quiet: bool, lang: Lang) -> Result<Opened, oomwhy::Error> {
    let Some(path) = &input.path else {
        let stdin = io::stdin();
        if stdin.is_terminal() && !quiet {
            warn!("oomwhy: {}", Msg::PastePrompt.text(lang));
        }
        let opened = input.open()?;
        return Ok(Some((opened.reader, None, opened.archive)));
    };
    let (file, meta) = input.open_file(path)?;
    let progress = if quiet || !meta.is_file() {
        None
    } else {
        Progress::for_input(&input.name, meta.len()).map(Arc::new)
    };
    let raw: Box<dyn Read + Send> = match &progress {
        Some(progress) => Box::new(ProgressReader::new(file, Arc::clone(progress))),
        None => Box::new(file),
    };
    let opened = input.open_raw(raw)?;
    if opened.content == Content::Binary && input.from_directory {
        return Ok(None);
    }
    Ok(Some((opened.reader, progress, opened.archive)))
}

/// Says that a symlink loop was not followed (not an error).
fn warn_loop(path: &str, ancestor: &str, quiet: bool, lang: Lang) {
    if !quiet {
        let text = Msg::SymlinkLoop.fill(lang, &[&sanitize(path), &sanitize(ancestor)]);
        warn!("oomwhy: {text}");
    }
}

/// The default mode: reads every input to its end and reports.
pub fn scan(args: &ScanArgs, lang: Lang) -> anyhow::Result<i32> {
    let format = Format::from(args.format);
    let color = use_color(args.color, io::stdout().is_terminal());
    colored::control::set_override(color);
    let options = RenderOptions {
        color,
        width: text_width(stdout_width()),
        brief: args.brief,
        lang,
    };
    let expanded = if args.files.is_empty() {
        vec![Entry::Input(Input::stdin())]
    } else {
        input::expand(&args.files)
    };
    let summary = if format == Format::Ndjson {
        scan_streaming(expanded, options, args.quiet)?
    } else {
        scan_batch(expanded, format, options, args.quiet, args.no_pager)?
    };
    if summary.findings == summary.warning && summary.input_errors == 0 && !args.quiet {
        let lines = usize::try_from(summary.lines).unwrap_or(usize::MAX);
        let lines = oomwhy::i18n::count(lang, lines, Msg::LinesOne, Msg::LinesMany);
        warn!("{}", Msg::NothingFound.fill(lang, &[&lines]));
    }
    Ok(scan_status(&summary))
}

/// Says what the command noticed about an input: an error always, a
/// binary file passed over or a symlink loop unless `quiet`.
fn warn_notice(notice: &Notice, quiet: bool, lang: Lang) {
    match notice {
        Notice::Error(err) => warn!("oomwhy: {}", err.localized(lang)),
        Notice::Binary(name) => {
            if !quiet {
                warn!(
                    "oomwhy: {}",
                    Msg::BinarySkipped.fill(lang, &[&sanitize(name)])
                );
            }
        }
        Notice::Loop { path, ancestor } => warn_loop(path, ancestor, quiet, lang),
    }
}

/// Reads all inputs (several side by side, one per core), folds the
/// per-rank files of a job, then explains and writes everything at once:
/// the library's [`oomwhy::scan_entries_with`], with a progress bar for a
/// single input and each warning written as it arises.
fn scan_batch(
    expanded: Vec<Entry>,
    format: Format,
    options: RenderOptions,
    quiet: bool,
    no_pager: bool,
) -> anyhow::Result<Summary> {
    let lang = options.lang;
    let scan = |inputs: &[Input]| {
        let scanned = match inputs {
            // One input: its own reader and worker threads, and a progress bar.
            [input] if !input.from_directory => vec![scan_one(input, quiet, lang)],
            _ => input::scan_inputs(inputs, input::default_threads()),
        };
        fresh_line_after_paste(inputs);
        scanned
    };
    let ScanReport {
        findings, summary, ..
    } = oomwhy::scan_entries_with(expanded, scan, |notice| warn_notice(notice, quiet, lang));
    let show = matches!(format, Format::Json | Format::Ndjson) || !findings.is_empty();
    if !quiet && show {
        let draw = |out: &mut dyn Write| render::render(format, &findings, &summary, options, out);
        if format == Format::Text {
            // Paged when taller than the terminal: the answer stays in view.
            pager::write_report(no_pager, draw)
        } else {
            let mut out = io::BufWriter::new(io::stdout().lock());
            draw(&mut out).and_then(|()| out.flush())
        }
        .context("cannot write the output")?;
    }
    Ok(summary)
}

/// Scans one named input with the threaded scanner and a progress bar.
fn scan_one(input: &Input, quiet: bool, lang: Lang) -> Scanned {
    match open(input, quiet, lang) {
        Ok(None) => Scanned::Binary,
        Ok(Some((reader, progress, Some(archive)))) => {
            let scanned = read_archive(archive, reader, input);
            if let Some(progress) = progress {
                progress.clear();
            }
            scanned
        }
        Ok(Some((reader, progress, None))) => {
            let (outcome, error) = input::scan_opened(reader, &input.name);
            if let Some(progress) = progress {
                progress.clear();
            }
            match error {
                None => Scanned::Done(outcome),
                Some(err) => Scanned::Failed(outcome, err),
            }
        }
        Err(err) => Scanned::Failed(ScanOutcome::default(), err),
    }
}

/// Reads the files of an archive: a tar archive from the opened stream, a
/// zip archive from its file.
fn read_archive(archive: Archive, reader: Box<dyn Read + Send>, input: &Input) -> Scanned {
    match archive {
        Archive::Tar => Scanned::Archive(input::scan_archive(reader, &input.name)),
        Archive::Zip => {
            drop(reader);
            input::scan_zip(input)
        }
    }
}

/// Writes the findings of one file of an archive (NDJSON), numbered
/// within that file as a streamed input's are.
fn emit_member(sink: &mut Sink<'_>, name: &str, scanned: Scanned, quiet: bool, lang: Lang) {
    let (mut outcome, error) = match scanned {
        Scanned::Done(outcome) => (outcome, None),
        Scanned::Failed(outcome, err) => (outcome, Some(err)),
        Scanned::Binary | Scanned::Archive(_) => {
            if !quiet {
                warn!(
                    "oomwhy: {}",
                    Msg::BinarySkipped.fill(lang, &[&sanitize(name)])
                );
            }
            return;
        }
    };
    sink.live.begin_input();
    for (i, mut finding) in std::mem::take(&mut outcome.findings)
        .into_iter()
        .enumerate()
    {
        finding.id = i + 1;
        sink.emit(finding);
    }
    match error {
        None => sink.live.end_input(&outcome),
        Some(err) => {
            warn!("oomwhy: {}", err.localized(lang));
            sink.live.add_error();
        }
    }
}

/// Writes each finding as soon as it is complete (NDJSON). Inputs are read
/// one after the other; per-rank files are not folded.
fn scan_streaming(
    expanded: Vec<Entry>,
    options: RenderOptions,
    quiet: bool,
) -> anyhow::Result<Summary> {
    let out = Box::new(io::stdout().lock());
    let mut sink = Sink::new(Format::Ndjson, options, out, true, quiet);
    for entry in expanded {
        let entry = match entry {
            Entry::Input(input) => Ok(input),
            Entry::Loop { path, ancestor } => {
                warn_loop(&path, &ancestor, quiet, options.lang);
                continue;
            }
            Entry::Error(err) => Err(err),
        };
        let opened = entry.and_then(|input| Ok((open(&input, quiet, options.lang)?, input)));
        let (input, reader, progress) = match opened {
            Ok((Some((reader, progress, Some(archive))), input)) => {
                let scanned = read_archive(archive, reader, &input);
                if let Some(progress) = progress {
                    progress.clear();
                }
                for (name, scanned) in scanned.into_members(&input.name) {
                    emit_member(&mut sink, &name, scanned, quiet, options.lang);
                }
                sink.check().context("cannot write the output")?;
                continue;
            }
            Ok((Some((reader, progress, None)), input)) => {
                sink.live.begin_input();
                (input, reader, progress)
            }
            Ok((None, input)) => {
                if !quiet {
                    warn!(
                        "oomwhy: {}",
                        Msg::BinarySkipped.fill(options.lang, &[&sanitize(&input.name)])
                    );
                }
                continue;
            }
            Err(err) => {
                warn!("oomwhy: {}", err.localized(options.lang));
                sink.live.begin_input();
                sink.live.add_error();
                continue;
            }
        };
        sink.progress = progress.clone();
        let outcome = if input.path.is_none() && follow::stdin_is_live() {
            // A pipe that may stay open (`tail -f log | oomwhy`): report
            // each finding as it completes, not at the end of the input.
            follow::scan_live(reader, &input.name, &mut sink)
        } else {
            input::scan_opened_streaming(reader, &input.name, &mut |f| sink.emit(f))
        };
        if let Some(progress) = progress {
            progress.clear();
        }
        sink.progress = None;
        sink.check().context("cannot write the output")?;
        match outcome {
            Ok(outcome) => sink.live.end_input(&outcome),
            Err(err) => {
                warn!("oomwhy: {}", err.localized(options.lang));
                sink.live.add_error();
            }
        }
    }
    sink.finish().context("cannot write the output")
}

/// After a paste to a terminal whose last line got no newline (the user
/// pressed Ctrl-D twice at its end), starts what comes next, the report or
/// a warning, on a line of its own rather than after the pasted text.
fn fresh_line_after_paste(inputs: &[Input]) {
    let pasted = inputs.iter().any(|i| i.path.is_none()) && io::stdin().is_terminal();
    if !pasted || !input::stdin_ended_mid_line() {
        return;
    }
    if io::stdout().is_terminal() {
        let _ = io::stdout().write_all(b"\n");
    } else if io::stderr().is_terminal() {
        let _ = io::stderr().write_all(b"\n");
    }
}
