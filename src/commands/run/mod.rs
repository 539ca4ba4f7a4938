//! `oomwhy run -- CMD ARGS...`: runs a command, passes its output through
//! byte for byte as it comes, scans it, and reports what went wrong when it
//! ends. The contract a job runner relies on (README, "oomwhy run"):
//!
//! * signals sent to oomwhy are passed on to the command, and oomwhy keeps
//!   running until the command has exited, then exits as it did;
//! * when the reader of oomwhy's stdout (or stderr) goes away, the
//!   command's pipe to it is closed at once, even while the command writes
//!   nothing, so that its next write there fails (SIGPIPE, EPIPE) as it
//!   would without oomwhy. The command is not stopped: as a shell waits for
//!   `cmd | head`, oomwhy keeps passing its other stream on, forwarding
//!   signals and waiting for it, and exits with its status (a death by
//!   SIGPIPE is not reported). Exiting at once instead would leave the
//!   command running unwatched, with its stderr (progress bars, the
//!   traceback) failing too and signals no longer passed on;
//! * oomwhy returns when the command exits, after a short grace period for
//!   its last output, even if processes it started keep the pipes open;
//! * stdout and stderr stay apart unless they are one file for oomwhy, in
//!   which case the command gets one pipe for both and their order is kept;
//!   both are scanned as one log.

mod merge;
#[cfg(unix)]
mod unix;

#[cfg(unix)]
pub(super) use unix::signal_is_ignored;

#[cfg(unix)]
use super::output_watch::Ready;
use super::output_watch::{Output, OutputWatch};
use super::{stderr_width, text_width, use_color, Sink};
use crate::cli::{RunArgs, ScanArgs};
use anyhow::{bail, Context};
use merge::Merge;
use oomwhy::exit::{self, Ending};
use oomwhy::i18n::{Lang, Msg};
use oomwhy::record::fact;
use oomwhy::render::{Format, RenderOptions};
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The input name of the command's output in findings.
const OUTPUT_INPUT: &str = "<output>";
/// After the command exits, how long to wait for output still in the pipes
/// (a quiet period: more output extends it, up to [`GRACE_MAX`]).
const GRACE: Duration = Duration::from_millis(500);
/// The longest wait for the pipes after the command exited: a process it
/// left running may keep them open and writing for ever.
const GRACE_MAX: Duration = Duration::from_secs(3);
/// Chunks of output (up to 64 KiB each) waiting to be scanned.
const QUEUED_CHUNKS: usize = 64;
/// How often findings are settled for a report written as they come (NDJSON).
const SETTLE_EVERY: Duration = Duration::from_millis(500);

/// What the other threads tell the main thread.
enum Event {
    /// Bytes from pipe `usize` (already passed through).
    Data(usize, Vec<u8>),
    /// Pipe `usize` reached its end (or was closed after our output was).
    Eof(usize),
    /// Pipe `usize` could not be read.
    ReadError(usize, io::Error),
    /// The reader of our output has gone; the command's pipe to it was
    /// closed in turn (an [`Event::Eof`] follows).
    OutputClosed,
    /// Passing output through failed otherwise (a full disk).
    WriteError(io::Error),
    /// The command exited.
    Exited(io::Result<ExitStatus>),
}

/// Which of our streams a pipe passes through to.
#[derive(Clone, Copy)]
enum Passthrough {
    Stdout,
    Stderr,
}

impl Passthrough {
    fn output(self) -> Output {
        match self {
            Passthrough::Stdout => Output::Stdout,
            Passthrough::Stderr => Output::Stderr,
        }
    }

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

/// The read end of one of the command's pipes.
#[cfg(unix)]
type PipeEnd = File;
#[cfg(not(unix))]
type PipeEnd = Box<dyn Read + Send>;

#[cfg(unix)]
fn pipe_end(pipe: impl Into<std::os::fd::OwnedFd>) -> PipeEnd {
    File::from(pipe.into())
}

#[cfg(not(unix))]
fn pipe_end(pipe: impl Read + Send + 'static) -> PipeEnd {
    Box::new(pipe)
}

/// Nobody reads our output any more: the command's pipe is dropped (by
/// the caller returning), so that its next write fails as it would have
/// without oomwhy in between (SIGPIPE, Python's BrokenPipeError).
fn output_closed(index: usize, tx: &mpsc::SyncSender<Event>) {
    let _ = tx.send(Event::OutputClosed);
    let _ = tx.send(Event::Eof(index));
}

/// Copies pipe `index` to `to` as it arrives and sends a copy to be scanned.
fn pump(mut from: PipeEnd, index: usize, to: Passthrough, tx: &mpsc::SyncSender<Event>) {
    #[cfg(unix)]
    let watch = OutputWatch::new(to.output());
    #[cfg(not(unix))]
    let _ = OutputWatch::new(to.output());
    let mut buf = vec![0u8; 64 * 1024];
    let mut passing = true;
    loop {
        // Waiting for the command's output, also notice our reader going
        // away: a command quiet for hours must not keep a pipe nobody reads.
        #[cfg(unix)]
        if passing && watch.wait_for_input(std::os::fd::AsFd::as_fd(&from)) == Ready::OutputClosed {
            output_closed(index, tx);
            return;
        }
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => {
                let _ = tx.send(Event::ReadError(index, error));
                return;
            }
        };
        if passing {
            if let Err(error) = to.write(&buf[..n]) {
                passing = false;
                if error.kind() == io::ErrorKind::BrokenPipe {
                    output_closed(index, tx);
                    return;
                }
                // Another failure (a full disk): keep draining so that the
                // command does not block, and keep scanning.
                let _ = tx.send(Event::WriteError(error));
            }
        }
        if tx.send(Event::Data(index, buf[..n].to_vec())).is_err() {
            return;
        }
    }
    let _ = tx.send(Event::Eof(index));
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

/// The command's pipes: one shared by stdout and stderr, or one each.
type Pipes = Vec<(PipeEnd, Passthrough)>;

/// How the command's stdout and stderr reach oomwhy.
enum Connection {
    /// One pipe for both (its read end).
    #[cfg_attr(not(unix), allow(dead_code))]
    Shared(File),
    /// A pipe each, taken from the started command.
    Separate,
}

impl Connection {
    /// Gives the command one pipe for stdout and stderr when they are one
    /// file for oomwhy (`> log 2>&1`, a terminal), so that their order is
    /// kept; otherwise a pipe each.
    fn set_up(command: &mut Command) -> anyhow::Result<Connection> {
        #[cfg(unix)]
        if unix::stdout_is_stderr() {
            let (reader, writer) = unix::pipe().context("cannot create a pipe")?;
            let second = writer.try_clone().context("cannot create a pipe")?;
            command
                .stdout(Stdio::from(writer))
                .stderr(Stdio::from(second));
            return Ok(Connection::Shared(reader));
        }
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        Ok(Connection::Separate)
    }

    /// The read ends, once the command has started.
    fn pipes(self, child: &mut std::process::Child) -> Pipes {
        let mut pipes: Pipes = Vec::new();
        match self {
            Connection::Shared(reader) => pipes.push((pipe_end(reader), Passthrough::Stdout)),
            Connection::Separate => {
                if let Some(out) = child.stdout.take() {
                    pipes.push((pipe_end(out), Passthrough::Stdout));
                }
                if let Some(err) = child.stderr.take() {
                    pipes.push((pipe_end(err), Passthrough::Stderr));
                }
            }
        }
        pipes
    }
}

/// Runs the command and returns the exit status to exit with.
pub fn run(args: &RunArgs, output: &ScanArgs, lang: Lang) -> anyhow::Result<i32> {
    let Some((program, rest)) = args.command.split_first() else {
        bail!("no command to run");
    };
    let format = Format::from(output.format);
    let quiet = output.quiet;
    if !quiet && args.report.is_none() && matches!(format, Format::Json | Format::Ndjson) {
        bail!(
            "--format {} needs --report PATH: a machine-readable report is never mixed into the command's own output",
            if format == Format::Json { "json" } else { "ndjson" }
        );
    }
    // Open the report before starting the command: a bad path fails early.
    let (out, is_terminal): (Box<dyn Write>, bool) = match &args.report {
        Some(path) => {
            let file = File::create(path)
                .with_context(|| format!("cannot create the report {}", path.display()))?;
            (Box::new(io::BufWriter::new(file)), false)
        }
        None => (Box::new(io::stderr()), io::stderr().is_terminal()),
    };
    let color = use_color(output.color, is_terminal);
    colored::control::set_override(color);

    let mut command = Command::new(program);
    command.args(rest).stdin(Stdio::inherit());
    if std::env::var_os("PYTHONUNBUFFERED").is_none() {
        // Python block-buffers a pipe: nothing would show until it exits.
        command.env("PYTHONUNBUFFERED", "1");
    }
    let connection = Connection::set_up(&mut command)?;
    #[cfg(unix)]
    let signals = unix::Forwarder::prepare(&mut command).context("cannot handle signals")?;

    let spawned = command.spawn();
    // Our copies of the pipes' write ends go with the command: a pipe must
    // only stay open while the command (and what it starts) holds it.
    drop(command);
    let mut child = match spawned {
        Ok(child) => child,
        Err(err) => {
            let (why, code) = match err.kind() {
                io::ErrorKind::NotFound => (Msg::CommandNotFound.text(lang).to_string(), 127),
                io::ErrorKind::PermissionDenied => {
                    (Msg::PermissionDenied.text(lang).to_string(), 126)
                }
                _ => (err.to_string(), 126),
            };
            let program = program.to_string_lossy();
            warn!("oomwhy: {}", Msg::CannotRun.fill(lang, &[&program, &why]));
            return Ok(code);
        }
    };
    let pid = child.id();
    #[cfg(unix)]
    let forwarding = signals.start(pid, lang);

    // Bounded: a command that prints faster than it can be scanned waits,
    // as it would for a slow terminal, instead of filling memory.
    let (tx, rx) = mpsc::sync_channel(QUEUED_CHUNKS);
    let pipes = connection.pipes(&mut child);
    let count = pipes.len();
    for (index, (pipe, to)) in pipes.into_iter().enumerate() {
        let tx = tx.clone();
        thread::Builder::new()
            .name(format!("pipe {index}"))
            .spawn(move || pump(pipe, index, to, &tx))
            .context("cannot start a reading thread")?;
    }
    {
        let tx = tx.clone();
        thread::Builder::new()
            .name("wait".into())
            .spawn(move || {
                let _ = tx.send(Event::Exited(child.wait()));
            })
            .context("cannot start a waiting thread")?;
    }
    drop(tx);

    let options = RenderOptions {
        color,
        width: text_width(if args.report.is_none() {
            stderr_width()
        } else {
            None
        }),
        brief: output.brief,
        lang,
    };
    let mut sink = Sink::new(format, options, out, format == Format::Ndjson, quiet);
    sink.live.begin_input();
    let live = sink.write_now;
    let mut merge = Merge::new(OUTPUT_INPUT, count);
    let mut open = count;
    let mut exited: Option<(ExitStatus, Instant)> = None;
    let mut last_data = Instant::now();
    let mut last_settle = Instant::now();
    let mut output_closed = false;
    let mut write_error: Option<io::Error> = None;
    loop {
        let wait = match exited {
            Some((_, at)) => {
                if open == 0 {
                    break;
                }
                let quiet_until = last_data.max(at) + GRACE;
                let deadline = quiet_until.min(at + GRACE_MAX);
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    if !quiet {
                        warn!("oomwhy: {}", Msg::NotWaiting.text(lang));
                    }
                    break;
                }
                left
            }
            None => SETTLE_EVERY,
        };
        match rx.recv_timeout(wait.min(SETTLE_EVERY)) {
            Ok(Event::Data(index, bytes)) => {
                last_data = Instant::now();
                merge.feed(index, &bytes, &mut |f| sink.emit(f));
            }
            Ok(Event::Eof(index)) => {
                open -= 1;
                merge.end(index, &mut |f| sink.emit(f));
            }
            Ok(Event::ReadError(index, error)) => {
                open -= 1;
                merge.end(index, &mut |f| sink.emit(f));
                warn!("oomwhy: {}", Msg::CannotReadOutput.fill(lang, &[&error]));
            }
            Ok(Event::OutputClosed) => output_closed = true,
            Ok(Event::WriteError(error)) => {
                if write_error.is_none() {
                    write_error = Some(error);
                }
            }
            Ok(Event::Exited(status)) => {
                let status = status.context("cannot wait for the command")?;
                exited = Some((status, Instant::now()));
                #[cfg(unix)]
                forwarding.exited();
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if live && last_settle.elapsed() >= SETTLE_EVERY {
            merge.settle(&mut |f| sink.emit(f));
            last_settle = Instant::now();
        }
    }
    let Some((status, _)) = exited else {
        bail!("lost track of the command");
    };
    let outcome = merge.finish(&mut |f| sink.emit(f));
    sink.live.end_input(&outcome);
    if let Some(error) = &write_error {
        warn!("oomwhy: {}", Msg::CannotPassOutput.fill(lang, &[&error]));
    }

    let ending = ending(status);
    let mut decoded = exit::decode(ending);
    decoded.note = exit::note(ending, lang);
    #[cfg(unix)]
    let escalated = forwarding.escalated();
    #[cfg(not(unix))]
    let escalated = false;
    if escalated && ending == Ending::Signal(9) {
        // oomwhy sent that SIGKILL: it says nothing about memory.
        decoded.finding = None;
        decoded.note = Some(Msg::KilledAfterInterrupts.text(lang).into());
    }
    // `oomwhy run -- CMD | head`: the command ending of the closed pipe is
    // the expected way to stop, not worth a report.
    let stopped_by_pipe = output_closed && ending == Ending::Signal(13);
    if let Some(mut finding) = decoded.finding {
        finding.facts.insert(fact::PID.into(), pid.to_string());
        finding
            .facts
            .insert(fact::PROCESS.into(), program_name(program));
        sink.emit(finding);
    }
    let failed = !status.success();
    let text = format == Format::Text;
    let found = sink.live.summary().findings > 0;
    let say = !quiet && text && !stopped_by_pipe;
    if say && (failed || found) {
        warn!();
        warn!(
            "oomwhy: {}",
            Msg::CommandExited.fill(lang, &[&decoded.shell_code])
        );
    }
    if let Some(note) = &decoded.note {
        if !quiet && !stopped_by_pipe && (text || args.report.is_some()) {
            warn!("oomwhy: {note}");
        }
    }
    if text && !found {
        // Nothing to report: no text summary after a clean run.
        sink.quiet = true;
    }
    let code = i32::try_from(decoded.shell_code).unwrap_or(i32::MAX);
    let summary = match sink.finish() {
        Ok(summary) => summary,
        Err(err) => {
            // The command's status matters more to whoever runs the job;
            // a clean run with a lost report is still an error.
            warn!("oomwhy: {}", Msg::CannotWriteReport.fill(lang, &[&err]));
            return Ok(if code == 0 { 2 } else { code });
        }
    };
    if say && failed && summary.findings == 0 {
        let lines = usize::try_from(summary.lines).unwrap_or(usize::MAX);
        let lines = oomwhy::i18n::count(lang, lines, Msg::LinesOne, Msg::LinesMany);
        warn!("oomwhy: {}", Msg::NothingInOutput.fill(lang, &[&lines]));
    }
    // Output lost on the way (a full disk) is an error too, reported above.
    Ok(if code == 0 && write_error.is_some() {
        2
    } else {
        code
    })
}

/// The command's file name, for the `process` fact of an exit finding.
fn program_name(program: &std::ffi::OsStr) -> String {
    std::path::Path::new(program)
        .file_name()
        .unwrap_or(program)
        .to_string_lossy()
        .into_owned()
}
