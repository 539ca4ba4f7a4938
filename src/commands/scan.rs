//! Reading logs: files and standard input (the default mode), and `--follow`.

use super::progress::{Progress, ProgressReader};
use super::{scan_status, stdout_width, text_width, use_color, Sink};
use crate::cli::ScanArgs;
use anyhow::{bail, Context};
use oomwhy::follow::{Event, Follower};
use oomwhy::i18n::{Lang, Msg};
use oomwhy::render::{self, Format, RenderOptions};
use oomwhy::{Analysis, Stream, Summary};
use std::io::{self, IsTerminal, Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often `--follow` looks for new data.
const POLL: Duration = Duration::from_millis(250);
/// How long a followed file must be quiet before its findings are reported:
/// copies of a crash from other ranks arrive together, within this time.
const SETTLE: Duration = Duration::from_secs(1);

/// An opened input: its reader, its name and its progress bar, if any.
type Opened = (Box<dyn Read + Send>, String, Option<Arc<Progress>>);

fn open(path: &Path, quiet: bool, lang: Lang) -> Result<Opened, oomwhy::Error> {
    if path == Path::new("-") {
        let stdin = io::stdin();
        if stdin.is_terminal() && !quiet {
            warn!("oomwhy: {}", Msg::PastePrompt.text(lang));
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
    if summary.findings == 0 && summary.input_errors == 0 && !args.quiet {
        let lines = usize::try_from(summary.lines).unwrap_or(usize::MAX);
        let lines = oomwhy::i18n::count(lang, lines, Msg::LinesOne, Msg::LinesMany);
        warn!("{}", Msg::NothingFound.fill(lang, &[&lines]));
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
        let outcome = open(path, quiet, options.lang).and_then(|(reader, name, progress)| {
            let outcome = oomwhy::scan(reader, &name);
            if let Some(progress) = progress {
                progress.clear();
            }
            outcome
        });
        match outcome {
            Ok(outcome) => analysis.add(outcome),
            Err(err) => {
                warn!("oomwhy: {}", err.localized(options.lang));
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
        let (reader, name, progress) = match open(path, quiet, options.lang) {
            Ok(opened) => opened,
            Err(err) => {
                warn!("oomwhy: {}", err.localized(options.lang));
                sink.live.add_error();
                continue;
            }
        };
        sink.progress = progress.clone();
        let outcome = oomwhy::scan_streaming(reader, &name, &mut |f| sink.emit(f));
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

/// `--follow FILE`: reads the file as it grows until interrupted.
pub fn follow(args: &ScanArgs, lang: Lang) -> anyhow::Result<i32> {
    let [path] = args.files.as_slice() else {
        bail!("--follow reads exactly one file");
    };
    if path.as_os_str() == "-" {
        bail!("--follow needs a file, not standard input (a pipe already streams: `tail -f log | oomwhy --format ndjson`)");
    }
    let format = Format::from(args.format);
    if !format.streams() {
        bail!("--follow reports each crash as it appears: use --format text, ndjson, markdown or github");
    }
    let name = path.display().to_string();
    let mut follower = Follower::open(path).map_err(|source| oomwhy::Error::Read {
        input: name.clone(),
        source,
    })?;
    let color = use_color(args.color, io::stdout().is_terminal());
    colored::control::set_override(color);
    let out = Box::new(io::stdout().lock());
    let options = RenderOptions {
        color,
        width: text_width(stdout_width()),
        brief: args.brief,
        lang,
    };
    let mut sink = Sink::new(format, options, out, true, args.quiet);
    if !args.quiet && io::stderr().is_terminal() {
        warn!("oomwhy: following {name}; press Ctrl-C to stop");
    }
    sink.live.begin_input();
    let mut stream = Stream::new(&name);
    let mut buf = vec![0u8; 256 * 1024];
    let mut last_data = Instant::now();
    let mut settled = true;
    loop {
        let event = follower
            .poll(&mut buf)
            .map_err(|source| oomwhy::Error::Read {
                input: name.clone(),
                source,
            })?;
        match event {
            Event::Data(n) => {
                stream.feed(&buf[..n], &mut |f| sink.emit(f));
                last_data = Instant::now();
                settled = false;
            }
            Event::Truncated | Event::Rotated => {
                if !args.quiet {
                    let what = if event == Event::Truncated {
                        "was truncated"
                    } else {
                        "was replaced (log rotation)"
                    };
                    warn!("oomwhy: {name} {what}; reading it from the start");
                }
                let old = std::mem::replace(&mut stream, Stream::new(&name));
                let outcome = old.finish(&mut |f| sink.emit(f));
                sink.live.end_input(&outcome);
                settled = true;
            }
            Event::Idle => {
                if !settled && last_data.elapsed() >= SETTLE {
                    stream.flush(&mut |f| sink.emit(f));
                    settled = true;
                }
                std::thread::sleep(POLL);
            }
        }
        sink.check().context("cannot write the output")?;
    }
}
