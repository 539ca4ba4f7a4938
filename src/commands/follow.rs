//! Input that arrives over time: `--follow FILE` and a standard input that
//! stays open (`tail -f log | oomwhy --format ndjson`). A finding is
//! reported about a second after its message is complete, even while other
//! lines keep arriving ([`oomwhy::Stream::settle`]). Like `tail -f`, both
//! end soon after the reader of their output goes away
//! (`oomwhy --follow log | head -1`), even while there is nothing to write.

use super::output_watch::{reader_gone, Output, OutputWatch};
use super::{stdout_width, text_width, use_color, Sink};
use crate::cli::ScanArgs;
use anyhow::{bail, Context};
use oomwhy::follow::{Event, Follower};
use oomwhy::i18n::{Lang, Msg};
use oomwhy::render::{Format, RenderOptions};
use oomwhy::{ScanOutcome, Stream};
use std::io::{self, IsTerminal, Read};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often `--follow` looks for new data (and for a file not there yet).
const POLL: Duration = Duration::from_millis(250);
/// How often complete findings are handed out. Copies of a crash printed by
/// other ranks within this time fold into one finding; later ones are new.
const SETTLE_EVERY: Duration = Duration::from_millis(500);

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
    let read_error = |source| oomwhy::Error::Read {
        input: name.clone(),
        source,
    };
    let announce = !args.quiet && io::stderr().is_terminal();
    let watch = OutputWatch::new(Output::Stdout);
    let gone = || anyhow::Error::from(reader_gone()).context("cannot write the output");
    // Like `tail -F`: a log the job has not created yet is waited for.
    let mut waited = false;
    let mut follower = loop {
        match Follower::open(path) {
            Ok(follower) => break follower,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                if !waited && !args.quiet {
                    warn!("oomwhy: {}", Msg::FollowWaiting.fill(lang, &[&name]));
                }
                waited = true;
                if watch.sleep(POLL) {
                    return Err(gone());
                }
            }
            Err(err) => return Err(read_error(err).into()),
        }
    };
    // A file that appeared while waiting is new: read all of it.
    if args.from_end && !waited {
        follower.skip_to_end().map_err(read_error)?;
    }
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
    if announce {
        warn!("oomwhy: {}", Msg::Following.fill(lang, &[&name]));
    }
    sink.live.begin_input();
    let mut stream = Stream::new(&name);
    let mut buf = vec![0u8; 256 * 1024];
    let mut last_settle = Instant::now();
    loop {
        match follower.poll(&mut buf).map_err(read_error)? {
            Event::Data(n) => stream.feed(&buf[..n], &mut |f| sink.emit(f)),
            event @ (Event::Truncated | Event::Rotated) => {
                if !args.quiet {
                    let what = if event == Event::Truncated {
                        Msg::FollowTruncated
                    } else {
                        Msg::FollowRotated
                    };
                    warn!("oomwhy: {}", what.fill(lang, &[&name]));
                }
                let old = std::mem::replace(&mut stream, Stream::new(&name));
                let outcome = old.finish(&mut |f| sink.emit(f));
                sink.live.end_input(&outcome);
                last_settle = Instant::now();
            }
            Event::Idle => {
                if watch.sleep(POLL) {
                    return Err(gone());
                }
            }
        }
        if last_settle.elapsed() >= SETTLE_EVERY {
            stream.settle(&mut |f| sink.emit(f));
            last_settle = Instant::now();
            // A log that keeps growing never lets the loop sleep.
            if watch.is_closed() {
                return Err(gone());
            }
        }
        sink.check().context("cannot write the output")?;
    }
}

/// Whether standard input can stay open without ending (a pipe, a
/// terminal, a socket) rather than being a file read to its end.
pub fn stdin_is_live() -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let Ok(fd) = io::stdin().as_fd().try_clone_to_owned() else {
            return false;
        };
        std::fs::File::from(fd)
            .metadata()
            .is_ok_and(|meta| !meta.is_file())
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// Scans `reader` to its end, handing out each finding about a second after
/// its message is complete however long the input stays open.
pub fn scan_live(
    reader: Box<dyn Read + Send>,
    name: &str,
    sink: &mut Sink<'_>,
) -> oomwhy::Result<ScanOutcome> {
    let (tx, rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(4);
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let mut reader = reader;
            loop {
                let mut buf = vec![0u8; 256 * 1024];
                let read = match reader.read(&mut buf) {
                    Ok(n) => {
                        buf.truncate(n);
                        Ok(buf)
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => Err(e),
                };
                let end = !matches!(&read, Ok(buf) if !buf.is_empty());
                if tx.send(read).is_err() || end {
                    return;
                }
            }
        })
        .map_err(|source| oomwhy::Error::Read {
            input: name.to_string(),
            source,
        })?;
    let watch = OutputWatch::new(Output::Stdout);
    let mut stream = Stream::new(name);
    let mut last_settle = Instant::now();
    loop {
        let wait = SETTLE_EVERY.saturating_sub(last_settle.elapsed());
        match rx.recv_timeout(wait) {
            Ok(Ok(bytes)) if bytes.is_empty() => break,
            Ok(Ok(bytes)) => stream.feed(&bytes, &mut |f| sink.emit(f)),
            Ok(Err(source)) => {
                // What was read is still reported.
                stream.finish(&mut |f| sink.emit(f));
                return Err(oomwhy::Error::Read {
                    input: name.to_string(),
                    source,
                });
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if last_settle.elapsed() >= SETTLE_EVERY {
            stream.settle(&mut |f| sink.emit(f));
            last_settle = Instant::now();
        }
        if sink.error.is_none() && watch.is_closed() {
            // Noticed without writing, on a quiet input too.
            sink.error = Some(reader_gone());
        }
        if sink.error.is_some() {
            // Our output is gone: stop reading.
            break;
        }
    }
    Ok(stream.finish(&mut |f| sink.emit(f)))
}
