//! A progress bar on standard error for long inputs: only when standard
//! error is a terminal and the input is a regular file larger than
//! [`THRESHOLD`]. Redrawn in place with `\r` at most ten times a second and
//! cleared when the input is done; never written to standard output.

use oomwhy::units::format_size;
use std::io::{self, IsTerminal, Read, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Inputs smaller than this are read too fast to need a bar.
pub const THRESHOLD: u64 = 64 << 20;
const REDRAW: Duration = Duration::from_millis(100);
const BAR: usize = 20;

/// The state of one input's bar.
pub struct Progress {
    name: String,
    total: u64,
    state: Mutex<State>,
}

struct State {
    done: u64,
    started: Instant,
    last_draw: Option<Instant>,
    drawn: bool,
}

impl Progress {
    /// A bar for an input of `total` bytes, if one should be shown.
    pub fn for_input(name: &str, total: u64) -> Option<Progress> {
        (total > THRESHOLD && io::stderr().is_terminal()).then(|| Progress {
            name: name.to_string(),
            total,
            state: Mutex::new(State {
                done: 0,
                started: Instant::now(),
                last_draw: None,
                drawn: false,
            }),
        })
    }

    /// Counts `n` more bytes read and redraws if it is time.
    fn advance(&self, n: usize) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.done += n as u64;
        let now = Instant::now();
        if state
            .last_draw
            .is_some_and(|last| now.duration_since(last) < REDRAW)
        {
            return;
        }
        state.last_draw = Some(now);
        let line = render_line(
            &self.name,
            state.done,
            self.total,
            now.duration_since(state.started),
        );
        // A progress bar that cannot be drawn is not worth an error.
        let _ = io::stderr().write_all(format!("\r{line}\x1b[K").as_bytes());
        state.drawn = true;
    }

    /// Erases the bar (before other output, and when the input is done).
    pub fn clear(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.drawn {
            let _ = io::stderr().write_all(b"\r\x1b[K");
            state.drawn = false;
            // Draw again on the next read rather than waiting a full period.
            state.last_draw = None;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

/// `train.log  42% [########            ] 1.10 GiB / 2.60 GiB  310.00 MiB/s  ETA 0:05`
fn render_line(name: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let done = done.min(total);
    let fraction = if total == 0 {
        1.0
    } else {
        done as f64 / total as f64
    };
    let filled = ((fraction * BAR as f64) as usize).min(BAR);
    let seconds = elapsed.as_secs_f64();
    let rate = if seconds > 0.0 {
        done as f64 / seconds
    } else {
        0.0
    };
    let eta = if rate > 0.0 {
        let left = ((total - done) as f64 / rate).round() as u64;
        format!("ETA {}:{:02}", left / 60, left % 60)
    } else {
        "ETA --:--".to_string()
    };
    let chars: Vec<char> = name.chars().collect();
    let short: String = if chars.len() > 30 {
        std::iter::once('…')
            .chain(chars[chars.len() - 29..].iter().copied())
            .collect()
    } else {
        name.to_string()
    };
    format!(
        "{short} {:>3}% [{}{}] {} / {}  {}/s  {eta}",
        (fraction * 100.0) as u32,
        "#".repeat(filled),
        " ".repeat(BAR - filled),
        format_size(done),
        format_size(total),
        format_size(rate as u64),
    )
}

/// Counts the bytes read through it into a [`Progress`].
pub struct ProgressReader<R> {
    inner: R,
    progress: Arc<Progress>,
}

impl<R> ProgressReader<R> {
    /// Wraps `inner`.
    pub fn new(inner: R, progress: Arc<Progress>) -> Self {
        ProgressReader { inner, progress }
    }
}

impl<R: Read> Read for ProgressReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.advance(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_shows_share_rate_and_eta() {
        let line = render_line("train.log", 1 << 30, 4 << 30, Duration::from_secs(2));
        assert_eq!(
            line,
            "train.log  25% [#####               ] 1024.00 MiB / 4.00 GiB  512.00 MiB/s  ETA 0:06"
        );
        let long = render_line(&"x".repeat(50), 0, 100, Duration::ZERO);
        assert!(long.starts_with('…'), "{long}");
        assert!(long.ends_with("ETA --:--"), "{long}");
    }

    #[test]
    fn never_for_small_inputs() {
        assert!(Progress::for_input("small.log", THRESHOLD).is_none());
    }
}
