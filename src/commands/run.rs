//! `oomwhy run -- CMD ARGS...`: runs a command, passes its output through
//! byte for byte as it comes, scans both streams as they stream (one thread
//! each, bounded memory), and reports what went wrong when it ends.
//!
//! Known limit: Ctrl-C reaches both oomwhy and the command (one process
//! group); oomwhy then stops at once, without a report.

use super::{stderr_width, text_width, use_color, Sink};
use crate::cli::RunArgs;
use anyhow::Context;
use oomwhy::exit::{self, Ending};
use oomwhy::i18n::Lang;
use oomwhy::render::{Format, RenderOptions};
use oomwhy::{Finding, ScanOutcome, Stream};
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;

/// What the reading threads tell the main thread.
enum Message {
    Finding(Box<Finding>),
    Done(Result<ScanOutcome, oomwhy::Error>),
}

/// Which of our streams a child stream passes through to.
#[derive(Clone, Copy)]
enum Passthrough {
    Stdout,
    Stderr,
}

impl Passthrough {
    fn write(self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Passthrough::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()
            }
            Passthrough::Stderr => {
                let mut err = io::stderr().lock();
                err.write_all(bytes)?;
                err.flush()
            }
        }
    }
}

/// Copies `from` to `to` as it arrives and scans it; findings and the
/// outcome go to `tx`.
fn pump(mut from: impl Read, name: &str, to: Passthrough, tx: &mpsc::Sender<Message>) {
    let mut stream = Stream::new(name);
    let mut buf = vec![0u8; 64 * 1024];
    let mut passing = true;
    let mut send = |f: Finding| {
        // The receiver lives until both threads are done.
        let _ = tx.send(Message::Finding(Box::new(f)));
    };
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => {
                let _ = tx.send(Message::Done(Err(oomwhy::Error::Read {
                    input: name.to_string(),
                    source,
                })));
                return;
            }
        };
        // If our own output is closed, keep draining the command's so that it
        // does not block, and keep scanning.
        if passing && to.write(&buf[..n]).is_err() {
            passing = false;
        }
        stream.feed(&buf[..n], &mut send);
    }
    let outcome = stream.finish(&mut send);
    let _ = tx.send(Message::Done(Ok(outcome)));
}

#[cfg(unix)]
fn ending(status: ExitStatus) -> Ending {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Ending::Code(code.into()),
        (None, Some(signal)) => Ending::Signal(signal),
        (None, None) => Ending::Code(1),
    }
}

#[cfg(not(unix))]
fn ending(status: ExitStatus) -> Ending {
    Ending::Code(status.code().unwrap_or(1).into())
}

/// Runs the command and returns its exit status.
pub fn run(args: &RunArgs, lang: Lang) -> anyhow::Result<i32> {
    let Some((program, rest)) = args.command.split_first() else {
        anyhow::bail!("no command to run");
    };
    let format = Format::from(args.format);
    // Open the report before starting the command: a bad path fails early.
    let (out, is_terminal): (Box<dyn Write>, bool) = match &args.report {
        Some(path) => {
            let file = File::create(path)
                .with_context(|| format!("cannot create the report {}", path.display()))?;
            (Box::new(io::BufWriter::new(file)), false)
        }
        None => (Box::new(io::stderr()), io::stderr().is_terminal()),
    };
    let color = use_color(args.color, is_terminal);
    colored::control::set_override(color);

    let mut child = match Command::new(program)
        .args(rest)
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(err) => {
            let (why, code) = match err.kind() {
                io::ErrorKind::NotFound => ("command not found".to_string(), 127),
                io::ErrorKind::PermissionDenied => ("permission denied".to_string(), 126),
                _ => (err.to_string(), 126),
            };
            warn!("oomwhy: cannot run {}: {why}", program.to_string_lossy());
            return Ok(code);
        }
    };

    let (tx, rx) = mpsc::channel();
    let mut readers = Vec::new();
    let pipes = [
        (
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
            "<stdout>",
            Passthrough::Stdout,
        ),
        (
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
            "<stderr>",
            Passthrough::Stderr,
        ),
    ];
    let options = RenderOptions {
        color,
        width: text_width(if args.report.is_none() {
            stderr_width()
        } else {
            None
        }),
        brief: args.brief,
        lang,
    };
    let mut sink = Sink::new(format, options, out, format == Format::Ndjson, args.quiet);
    for (pipe, name, to) in pipes {
        let Some(pipe) = pipe else { continue };
        sink.live.begin_input();
        let tx = tx.clone();
        readers.push(
            thread::Builder::new()
                .name(name.to_string())
                .spawn(move || pump(pipe, name, to, &tx))
                .context("cannot start a reading thread")?,
        );
    }
    drop(tx);
    // Ends when both threads are done and have dropped their senders.
    for message in rx {
        match message {
            Message::Finding(f) => sink.emit(*f),
            Message::Done(Ok(outcome)) => sink.live.end_input(&outcome),
            Message::Done(Err(err)) => {
                warn!("oomwhy: {err}");
                sink.live.add_error();
            }
        }
    }
    for reader in readers {
        let _ = reader.join();
    }
    let status = child.wait().context("cannot wait for the command")?;
    let decoded = exit::decode(ending(status));
    if let Some(finding) = decoded.finding {
        sink.emit(finding);
    }

    let failed = !status.success();
    let text = format == Format::Text;
    let found = sink.live.summary().findings > 0;
    if !args.quiet && text && (failed || found) {
        warn!();
        warn!(
            "oomwhy: the command exited with status {}",
            decoded.shell_code
        );
    }
    if let Some(note) = &decoded.note {
        if !args.quiet && (text || args.report.is_some()) {
            warn!("oomwhy: {note}");
        }
    }
    let quiet_text = text && !found;
    if quiet_text {
        // Nothing to report: no text summary after a clean run.
        sink.quiet = true;
    }
    let summary = sink.finish().context("cannot write the report")?;
    if !args.quiet && text && failed && summary.findings == 0 {
        warn!(
            "oomwhy: no out-of-memory error or GPU crash found in its output ({} lines)",
            summary.lines
        );
    }
    Ok(i32::try_from(decoded.shell_code).unwrap_or(i32::MAX))
}
